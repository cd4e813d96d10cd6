"""Kueue's manifests read as Kueue reads them: ResourceFlavors, ClusterQueues, LocalQueues, priority classes.

A YAML file (or several documents in one) of `kueue.x-k8s.io/v1beta1` (or `v1beta2`) objects:

* `ResourceFlavor`: `spec.nodeLabels` (injected into an admitted pod's nodeSelector) and
  `spec.nodeTaints` (a pod that does not tolerate them cannot use the flavor).
* `ClusterQueue`: `spec.cohort` (`cohortName` in v1beta2), `spec.resourceGroups[]` with
  `coveredResources` and `flavors[].resources[]` of `nominalQuota`, `borrowingLimit` and
  `lendingLimit`; `spec.queueingStrategy` (`BestEffortFIFO`, `StrictFIFO`); `spec.preemption`
  (`reclaimWithinCohort`, `withinClusterQueue`, `borrowWithinCohort`); `spec.namespaceSelector`
  (absent: no namespace; `{}`: every one; `matchLabels` on the namespace's name label).
* `LocalQueue`: `metadata.namespace` and `spec.clusterQueue`.
* `WorkloadPriorityClass`: `value`.

Quantities are Kubernetes quantities: `cpu` in millicores, `memory` in bytes, anything else
(`nvidia.com/gpu`, `pods`) a whole count. Every mistake is one `SkenarioError` naming the file, the
object and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skenario.errors import SkenarioError
from skenario.scheduling.taints import Taint, TaintEffect
from skenario.scheduling.traces.base import cpu_millicores, memory_bytes

GROUP = "kueue.x-k8s.io"
STRATEGIES = ("BestEffortFIFO", "StrictFIFO")
RECLAIM = ("Never", "LowerPriority", "Any")
WITHIN = ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
BORROW_WITHIN = ("Never", "LowerPriority")
KINDS = ("ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Cohort")


class KueueConfigError(SkenarioError):
    """A Kueue manifest is unreadable or says something Kueue's webhooks refuse."""


@dataclass(frozen=True)
class Flavor:
    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    node_taints: tuple[Taint, ...] = ()


@dataclass(frozen=True)
class Quota:
    """One resource of one flavor in a ClusterQueue, in the resource's units (millicores, bytes, count)."""

    nominal: int
    borrowing_limit: int | None = None  # None: no limit (given unused quota in the cohort)
    lending_limit: int | None = None  # None: all of the nominal quota may be lent

    @property
    def guaranteed(self) -> int:
        """What only this queue may use: the nominal quota it does not lend."""
        return 0 if self.lending_limit is None else self.nominal - self.lending_limit

    @property
    def lendable(self) -> int:
        return self.nominal if self.lending_limit is None else self.lending_limit


@dataclass(frozen=True)
class ResourceGroup:
    covered: tuple[str, ...]
    flavors: tuple[tuple[str, Mapping[str, Quota]], ...]  # in order: (flavor, resource: quota)


@dataclass(frozen=True)
class Preemption:
    reclaim_within_cohort: str = "Never"
    within_cluster_queue: str = "Never"
    borrow_within_cohort: str = "Never"
    max_priority_threshold: int | None = None


@dataclass(frozen=True)
class ClusterQueue:
    name: str
    groups: tuple[ResourceGroup, ...]
    cohort: str | None = None
    strategy: str = "BestEffortFIFO"
    preemption: Preemption = Preemption()
    namespaces: Mapping[str, str] | None = field(default_factory=dict)  # None: no namespace; {}: all

    def quota(self, flavor: str, resource: str) -> Quota | None:
        for group in self.groups:
            for name, quotas in group.flavors:
                if name == flavor and resource in quotas:
                    return quotas[resource]
        return None

    def group_of(self, resource: str) -> ResourceGroup | None:
        return next((g for g in self.groups if resource in g.covered), None)

    def admits_namespace(self, namespace: str) -> bool:
        if self.namespaces is None:
            return False
        return all(namespace == v for k, v in self.namespaces.items() if k == "kubernetes.io/metadata.name")


@dataclass(frozen=True)
class KueueConfig:
    flavors: Mapping[str, Flavor]
    cluster_queues: Mapping[str, ClusterQueue]
    local_queues: Mapping[tuple[str, str], str]  # (namespace, name): its ClusterQueue
    priority_classes: Mapping[str, int] = field(default_factory=dict)
    file: str = "kueue.yaml"


def read_kueue_config(path: str | Path) -> KueueConfig:
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise KueueConfigError(f"cannot open the Kueue manifests: {exc.strerror or exc}", file=file) from None
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise KueueConfigError(f"not valid YAML: {exc}", file=file, line=line) from None
    return _Reader(file).config(documents)


def quantity(resource: str, value: Any) -> int | None:
    """A quota in the resource's units: millicores for cpu, bytes for memory, a whole count otherwise."""
    text = str(value).strip()
    if resource == "cpu":
        return cpu_millicores(text)
    if resource == "memory":
        return memory_bytes(text)
    return int(text) if text.isdigit() else None


class _Reader:
    def __init__(self, file: str) -> None:
        self.file = file

    def error(self, where: str, field: str, value: Any, problem: str) -> KueueConfigError:
        return KueueConfigError(f"{where}: {problem}", file=self.file, field=field, value=value)

    def config(self, documents: list[Any]) -> KueueConfig:
        flavors: dict[str, Flavor] = {}
        queues: dict[str, ClusterQueue] = {}
        locals_: dict[tuple[str, str], str] = {}
        priorities: dict[str, int] = {}
        for k, doc in enumerate(documents):
            if not isinstance(doc, dict):
                raise KueueConfigError(f"document {k + 1} is not a mapping", file=self.file)
            kind, api = doc.get("kind"), str(doc.get("apiVersion", ""))
            if kind not in KINDS or not api.startswith(GROUP + "/"):
                raise KueueConfigError(
                    f"document {k + 1} is {api or 'no apiVersion'} {kind}: skenario reads Kueue's "
                    f"{', '.join(KINDS)} ({GROUP}/v1beta1 or v1beta2)",
                    file=self.file,
                    field="kind",
                    value=kind,
                )
            meta = doc.get("metadata") or {}
            name = meta.get("name")
            if not isinstance(name, str) or not name:
                raise KueueConfigError(f"document {k + 1} ({kind}) has no metadata.name", file=self.file)
            where = f"{kind} {name}"
            spec = doc.get("spec") or {}
            if kind == "ResourceFlavor":
                flavors[name] = self.flavor(name, spec, where)
            elif kind == "ClusterQueue":
                queues[name] = self.cluster_queue(name, spec, where)
            elif kind == "LocalQueue":
                target = spec.get("clusterQueue")
                if not isinstance(target, str) or not target:
                    raise self.error(where, "spec.clusterQueue", target, "a LocalQueue names its ClusterQueue")
                locals_[(str(meta.get("namespace") or "default"), name)] = target
            elif kind == "WorkloadPriorityClass":
                value = doc.get("value")
                if not isinstance(value, int) or isinstance(value, bool):
                    raise self.error(where, "value", value, "a WorkloadPriorityClass's value is a whole number")
                priorities[name] = value
        for (namespace, name), target in locals_.items():
            if target not in queues:
                raise self.error(
                    f"LocalQueue {namespace}/{name}", "spec.clusterQueue", target, f"no ClusterQueue {target!r}"
                )
        for queue in queues.values():
            for group in queue.groups:
                for flavor, _ in group.flavors:
                    if flavor not in flavors:
                        raise self.error(
                            f"ClusterQueue {queue.name}",
                            "spec.resourceGroups[].flavors[].name",
                            flavor,
                            f"no ResourceFlavor {flavor!r}",
                        )
        if not queues:
            raise KueueConfigError("the manifests define no ClusterQueue", file=self.file)
        return KueueConfig(flavors, queues, locals_, priorities, self.file)

    def flavor(self, name: str, spec: dict[str, Any], where: str) -> Flavor:
        labels = spec.get("nodeLabels") or {}
        if not isinstance(labels, dict):
            raise self.error(where, "spec.nodeLabels", labels, "nodeLabels is a mapping of label to value")
        taints = []
        for k, t in enumerate(spec.get("nodeTaints") or []):
            effect = t.get("effect") if isinstance(t, dict) else None
            if effect not in {e.value for e in TaintEffect}:
                raise self.error(where, f"spec.nodeTaints[{k}].effect", effect, "a taint's effect is NoSchedule, ...")
            taints.append(Taint(str(t.get("key", "")), TaintEffect(effect), str(t.get("value", ""))))
        return Flavor(name, {str(k): str(v) for k, v in labels.items()}, tuple(taints))

    def cluster_queue(self, name: str, spec: dict[str, Any], where: str) -> ClusterQueue:
        cohort = spec.get("cohort", spec.get("cohortName"))
        groups = []
        seen: set[str] = set()
        for g, group in enumerate(spec.get("resourceGroups") or []):
            covered = tuple(str(r) for r in group.get("coveredResources") or [])
            if not covered:
                raise self.error(where, f"spec.resourceGroups[{g}].coveredResources", None, "no coveredResources")
            if seen & set(covered):
                raise self.error(
                    where, f"spec.resourceGroups[{g}].coveredResources", covered, "a resource is in two resource groups"
                )
            seen |= set(covered)
            flavors = []
            for f, flavor in enumerate(group.get("flavors") or []):
                at = f"spec.resourceGroups[{g}].flavors[{f}]"
                quotas = {}
                for r, entry in enumerate(flavor.get("resources") or []):
                    resource = str(entry.get("name"))
                    if resource not in covered:
                        raise self.error(where, f"{at}.resources[{r}].name", resource, "not a covered resource")
                    quotas[resource] = self.quota(entry, resource, where, f"{at}.resources[{r}]", cohort)
                missing = [r for r in covered if r not in quotas]
                if missing:
                    raise self.error(
                        where, f"{at}.resources", missing, f"flavor {flavor.get('name')} lists no {missing[0]}"
                    )
                flavors.append((str(flavor.get("name")), quotas))
            if not flavors:
                raise self.error(where, f"spec.resourceGroups[{g}].flavors", None, "a resource group needs a flavor")
            groups.append(ResourceGroup(covered, tuple(flavors)))
        strategy = spec.get("queueingStrategy", "BestEffortFIFO")
        if strategy not in STRATEGIES:
            raise self.error(
                where, "spec.queueingStrategy", strategy, f"queueingStrategy is one of {', '.join(STRATEGIES)}"
            )
        preemption = self.preemption(spec.get("preemption") or {}, where)
        selector = spec.get("namespaceSelector")
        namespaces = (
            None if selector is None else {str(k): str(v) for k, v in (selector.get("matchLabels") or {}).items()}
        )
        return ClusterQueue(name, tuple(groups), cohort, strategy, preemption, namespaces)

    def quota(self, entry: dict[str, Any], resource: str, where: str, at: str, cohort: str | None) -> Quota:
        values = {}
        for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
            if key not in entry:
                continue
            amount = quantity(resource, entry[key])
            if amount is None or amount < 0:
                raise self.error(where, f"{at}.{key}", entry[key], f"{key} is not a quantity of {resource}")
            values[key] = amount
        if "nominalQuota" not in values:
            raise self.error(where, f"{at}.nominalQuota", None, "every resource of a flavor needs a nominalQuota")
        if cohort is None and ("borrowingLimit" in values or "lendingLimit" in values):
            key = "borrowingLimit" if "borrowingLimit" in values else "lendingLimit"
            raise self.error(where, f"{at}.{key}", entry[key], f"{key} needs a cohort")
        if values.get("lendingLimit", 0) > values["nominalQuota"]:
            raise self.error(where, f"{at}.lendingLimit", entry["lendingLimit"], "lendingLimit is above nominalQuota")
        return Quota(values["nominalQuota"], values.get("borrowingLimit"), values.get("lendingLimit"))

    def preemption(self, spec: dict[str, Any], where: str) -> Preemption:
        reclaim = spec.get("reclaimWithinCohort", "Never")
        within = spec.get("withinClusterQueue", "Never")
        borrow = spec.get("borrowWithinCohort") or {}
        policy = borrow.get("policy", "Never")
        for key, value, allowed in (
            ("reclaimWithinCohort", reclaim, RECLAIM),
            ("withinClusterQueue", within, WITHIN),
            ("borrowWithinCohort.policy", policy, BORROW_WITHIN),
        ):
            if value not in allowed:
                raise self.error(where, f"spec.preemption.{key}", value, f"{key} is one of {', '.join(allowed)}")
        if reclaim == "Never" and policy != "Never":
            raise self.error(
                where,
                "spec.preemption.borrowWithinCohort.policy",
                policy,
                "borrowWithinCohort needs reclaimWithinCohort",
            )
        threshold = borrow.get("maxPriorityThreshold")
        return Preemption(reclaim, within, policy, threshold if isinstance(threshold, int) else None)
