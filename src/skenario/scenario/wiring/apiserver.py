"""Kubernetes objects on the clock: what the API server and the controllers that own pods do with them.

The `ObjectStore` keeps every object as its manifest stands and applies create, patch (a JSON merge
patch) and delete to the scheduler's world:
- Nodes join, change (labels, taints, `unschedulable`, allocatable) and leave. A node deleted is
  drained first, as `kubectl drain` does: cordoned, its pods evicted through the eviction API (a
  PodDisruptionBudget that allows no disruption holds the eviction back, and it is retried each
  time the scheduler has settled), then removed once empty.
- Pods are created from manifests (bound at once with `spec.nodeName`), patched (a pending pod
  takes its new spec, and joins the queue when its scheduling gates are gone; a bound pod its new
  labels) and deleted.
- A ReplicaSet (and a Deployment, through the ReplicaSet it owns) keeps `replicas` pods, making a
  new one whenever one of its pods is gone (deleted, evicted, preempted), as the ReplicaSet
  controller's `manageReplicas` does; a changed pod template replaces every pod (the Recreate
  strategy: rolling updates are not modelled). A Job keeps `parallelism` pods running until
  `completions` of them have succeeded.
- Namespaces (their labels, for namespaceSelector), PriorityClasses (the priority admission gives
  a pod), PodDisruptionBudgets, and PersistentVolumes, claims and StorageClasses.

A pod runs until deleted, or for the FakeTime steps its `skenario.dev/run-for` annotation names
(so that a Job's pods complete).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from skenario.core.environment import Environment
from skenario.errors import ScenarioError
from skenario.scenario.format.events import merge_patch
from skenario.scenario.format.manifests.kube import (
    DeploymentObject,
    JobManifest,
    NamespaceManifest,
    NodeManifest,
    PodDisruptionBudgetObject,
    PriorityClassManifest,
    ReplicaSetManifest,
)
from skenario.scenario.format.manifests.pod import DEFAULT_NAMESPACE, PodManifest, PodSpecManifest
from skenario.scenario.format.manifests.storage import (
    PersistentVolumeClaimManifest,
    PersistentVolumeManifest,
    StorageClassManifest,
)
from skenario.scenario.io import describe_problem
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.objects import LabelSelector, PodSpec
from skenario.scheduling.pods import Pod, PodEnd
from skenario.scheduling.volumes import VolumeCatalog

RUN_FOR = "skenario.dev/run-for"
_API = {
    "ReplicaSet": "apps/v1",
    "Deployment": "apps/v1",
    "Job": "batch/v1",
}  # annotation: FakeTime steps a pod runs once bound

# Kinds, by the models that read them; namespaced or not.
MODELS: dict[str, type[BaseModel]] = {
    "Node": NodeManifest,
    "Namespace": NamespaceManifest,
    "PriorityClass": PriorityClassManifest,
    "Pod": PodManifest,
    "ReplicaSet": ReplicaSetManifest,
    "Deployment": DeploymentObject,
    "Job": JobManifest,
    "PodDisruptionBudget": PodDisruptionBudgetObject,
    "PersistentVolume": PersistentVolumeManifest,
    "PersistentVolumeClaim": PersistentVolumeClaimManifest,
    "StorageClass": StorageClassManifest,
}
STORAGE = ("PersistentVolume", "PersistentVolumeClaim", "StorageClass")
CLUSTER_SCOPED = {"Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass"}

Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


def validated(model: type[BaseModel], data: Any, field: str) -> Any:
    """`data` read as `model`; a problem is one ScenarioError naming the field under `field` and the value."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        path, message, value = describe_problem(exc, data)
        raise ScenarioError(message, field=".".join([field, *map(str, path)]), value=value) from None


def parse_patch(patch: str | dict[str, Any], field: str) -> dict[str, Any]:
    """The KEP's patch string (JSON, or YAML) or a mapping, as a mapping."""
    if isinstance(patch, dict):
        return patch
    try:
        data = yaml.safe_load(patch)
    except yaml.YAMLError as exc:
        raise ScenarioError(f"the patch is not JSON or YAML: {str(exc).splitlines()[0]}", field=field) from None
    if not isinstance(data, dict):
        raise ScenarioError("a patch is a JSON object (a JSON merge patch)", field=field, value=patch)
    return data


def object_key(manifest: dict[str, Any]) -> Key:
    kind = str(manifest.get("kind", ""))
    meta = manifest.get("metadata") or {}
    namespace = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or DEFAULT_NAMESPACE)
    return kind, namespace, str(meta.get("name") or "")


def pod_key(namespace: str, name: str) -> str:
    """A pod's name in the scheduler: its name in the default namespace, else `namespace/name`."""
    return name if namespace == DEFAULT_NAMESPACE else f"{namespace}/{name}"


@dataclass
class Owner:
    """A ReplicaSet or Job: the pods it keeps, made from its template."""

    kind: str
    namespace: str
    name: str
    template: PodSpecManifest
    labels: dict[str, str]
    annotations: dict[str, str]
    replicas: int  # pods wanted at once (a Job's parallelism)
    completions: int | None = None  # a Job's; None for a ReplicaSet
    succeeded: int = 0
    pods: dict[str, Pod] = field(default_factory=dict)
    made: int = 0
    deleted: bool = False

    def wanted(self) -> int:
        if self.deleted:
            return 0
        if self.completions is None:
            return self.replicas
        return max(min(self.replicas, self.completions - self.succeeded), 0)


class ObjectStore:
    """Every object of the scenario as it stands, and what each operation does to the cluster."""

    def __init__(self, env: Environment, controller: SchedulingController, fake_step: int) -> None:
        self.env = env
        self.controller = controller
        self.snapshot = controller.snapshot
        self.fake_step = fake_step
        self.objects: dict[Key, dict[str, Any]] = {}
        self.owners: dict[Key, Owner] = {}
        self.priority_classes: dict[str, dict[str, Any]] = {}  # by name, as their manifests stand
        self.storage_classes: dict[str, Any] = {}  # StorageClass by name, for the volume catalog
        self.draining: dict[str, None] = {}
        self.evicted: list[tuple[int, str, str]] = []  # (time, pod, node) of each eviction a drain made
        self.removed: list[tuple[int, str]] = []  # (time, node) of each node a drain removed
        self.on_change: Callable[[], object] | None = None
        controller.on_gone = self._pod_gone
        self._retry_due = False

    # -- the operations ------------------------------------------------------------------------

    def create(self, manifest: dict[str, Any], where: str) -> str:
        kind, namespace, name = key = object_key(manifest)
        if key in self.objects:
            raise ScenarioError(f"{kind} {_shown(namespace, name)} exists already", field=where)
        model = self._model(kind, where)
        obj = validated(model, manifest, where)
        if not name:
            raise ScenarioError("the object needs metadata.name", field=f"{where}.metadata.name")
        self.objects[key] = copy.deepcopy(manifest)
        if kind == "PriorityClass":
            self.priority_classes[name] = self.objects[key]
        return self._created(kind, namespace, name, obj, where)

    def patch(self, kind: str, namespace: str, name: str, patch: dict[str, Any], where: str) -> tuple[str, Any]:
        key = self._existing(kind, namespace, name, where)
        before = self.objects[key]
        after = merge_patch(before, patch)
        if object_key(after) != key:
            raise ScenarioError("a patch cannot change an object's kind, name or namespace", field=where)
        obj = validated(self._model(kind, where), after, where)
        self.objects[key] = after
        if kind == "PriorityClass":
            self.priority_classes[name] = after
        return self._patched(key, obj, where), after

    def delete(self, kind: str, namespace: str, name: str, where: str) -> str:
        key = self._existing(kind, namespace, name, where)
        del self.objects[key]
        self.priority_classes.pop(name if kind == "PriorityClass" else "", None)
        return self._deleted(key)

    def holds(self, kind: str, namespace: str, name: str) -> bool:
        """Whether the object is here now."""
        namespace = "" if kind in CLUSTER_SCOPED else (namespace or DEFAULT_NAMESPACE)
        return (kind, namespace, name) in self.objects

    def _model(self, kind: str, where: str) -> type[BaseModel]:
        model = MODELS.get(kind)
        if model is None:
            kinds = ", ".join(sorted(MODELS))
            raise ScenarioError(f"skenario does not model kind {kind!r} (it models {kinds})", field=where)
        return model

    def _existing(self, kind: str, namespace: str, name: str, where: str) -> Key:
        namespace = "" if kind in CLUSTER_SCOPED else (namespace or DEFAULT_NAMESPACE)
        if not self.holds(kind, namespace, name):
            raise ScenarioError(f"there is no {kind} {_shown(namespace, name)} at this time", field=where)
        return (kind, namespace, name)

    # -- create ------------------------------------------------------------------------------------

    def _created(self, kind: str, namespace: str, name: str, obj: Any, where: str) -> str:
        if kind == "Node":
            self.controller.add_node(obj.build())
            return f"node {name} added"
        if kind == "Namespace":
            self.snapshot.namespaces[name] = dict(obj.metadata.labels)
            return f"namespace {name} created"
        if kind == "Pod":
            spec = self._pod_spec(obj.spec, namespace, name, obj.metadata.labels, where, controlled=False)
            self.controller.create(
                spec, duration=self._run_for(obj.metadata.annotations), node=obj.spec.node_name or None
            )
            return f"pod {pod_key(namespace, name)} created"
        if kind in STORAGE:
            self._storage_changed(key=(kind, namespace, name), built=obj.build(), where=where)
            return f"{kind} {_shown(namespace, name)} created"
        if kind in ("ReplicaSet", "Deployment", "Job"):
            owner = self._owner(kind, namespace, name, obj, where)
            self.owners[(kind, namespace, name)] = owner
            self._reconcile(owner)
            return f"{kind} {_shown(namespace, name)} created with {owner.wanted()} pod(s)"
        return f"{kind} {_shown(namespace, name)} created"

    def _owner(self, kind: str, namespace: str, name: str, obj: Any, where: str) -> Owner:
        template = obj.spec.template
        labels = dict(template.metadata.labels)
        self._pod_spec(template.spec, namespace, name, labels, f"{where}.spec.template", controlled=True)  # check it
        if kind == "Job":
            completions = obj.spec.completions if obj.spec.completions is not None else max(obj.spec.parallelism, 1)
            return Owner(
                kind, namespace, name, template.spec, labels, dict(template.metadata.annotations),
                obj.spec.parallelism, completions,
            )  # fmt: skip
        return Owner(
            kind, namespace, name, template.spec, labels, dict(template.metadata.annotations), obj.spec.replicas
        )

    def _pod_spec(
        self,
        spec: PodSpecManifest,
        namespace: str,
        name: str,
        labels: dict[str, str],
        where: str,
        *,
        controlled: bool,
    ) -> PodSpec:
        """The pod as admitted: its priority from its PriorityClass (or the global default), as the
        Priority admission plugin sets it."""
        priority, policy = 0, str(spec.preemption_policy or "PreemptLowerPriority")
        classes = self.priority_classes
        chosen: dict[str, Any] | None = None
        if spec.priority_class_name:
            chosen = classes.get(spec.priority_class_name)
            if chosen is None:
                raise ScenarioError(
                    f"no PriorityClass {spec.priority_class_name!r} at this time",
                    field=f"{where}.spec.priorityClassName",
                )
        else:
            chosen = next((c for c in classes.values() if c.get("globalDefault")), None)
        if chosen is not None:
            priority = int(chosen.get("value", 0))
            policy = spec.preemption_policy or str(chosen.get("preemptionPolicy") or "PreemptLowerPriority")
        elif spec.priority is not None:
            priority = spec.priority
        return spec.build(pod_key(namespace, name), namespace, labels, priority, policy, controlled=controlled)

    def _run_for(self, annotations: dict[str, str]) -> int | None:
        text = annotations.get(RUN_FOR)
        if text is None:
            return None
        try:
            steps = int(text)
        except ValueError:
            raise ScenarioError(f"{RUN_FOR} is a whole number of FakeTime steps", value=text) from None
        return max(steps, 1) * self.fake_step

    # -- patch ---------------------------------------------------------------------------------------

    def _patched(self, key: Key, obj: Any, where: str) -> str:
        kind, namespace, name = key
        if kind == "Node":
            self.controller.update_node(
                replace(obj.build(), unschedulable=obj.spec.unschedulable or name in self.draining)
            )
            return f"node {name} patched"
        if kind == "Namespace":
            self.snapshot.namespaces[name] = dict(obj.metadata.labels)
            return f"namespace {name} patched"
        if kind == "Pod":
            pod = self.controller.pods[pod_key(namespace, name)]
            spec = self._pod_spec(obj.spec, namespace, name, obj.metadata.labels, where, controlled=False)
            self.controller.update_pod(pod, spec)
            return f"pod {pod.name} patched"
        if kind in STORAGE:
            self._storage_changed(key=key, built=obj.build(), where=where)
            return f"{kind} {_shown(namespace, name)} patched"
        if kind in ("ReplicaSet", "Deployment", "Job"):
            owner = self.owners[key]
            fresh = self._owner(kind, namespace, name, obj, where)
            template_changed = (fresh.template, fresh.labels) != (owner.template, owner.labels)
            owner.template, owner.labels, owner.annotations = fresh.template, fresh.labels, fresh.annotations
            owner.replicas, owner.completions = fresh.replicas, fresh.completions
            if template_changed:
                for pod in list(owner.pods.values()):
                    self.controller.delete(pod, PodEnd.DELETED)
            self._reconcile(owner)
            return f"{kind} {_shown(namespace, name)} patched: {owner.wanted()} pod(s) wanted"
        return f"{kind} {_shown(namespace, name)} patched"

    # -- delete --------------------------------------------------------------------------------------

    def _deleted(self, key: Key) -> str:
        kind, namespace, name = key
        if kind == "Node":
            self.draining[name] = None
            node = self.snapshot.nodes[self.snapshot.index[name]]
            self.controller.update_node(replace(node, unschedulable=True))
            self._drain()
            return f"node {name} cordoned and draining"
        if kind == "Namespace":
            self.snapshot.namespaces.pop(name, None)
            return f"namespace {name} deleted"
        if kind == "Pod":
            pod = self.controller.pods[pod_key(namespace, name)]
            self.controller.delete(pod, PodEnd.DELETED)
            return f"pod {pod.name} deleted"
        if kind in STORAGE:
            self._storage_changed(key=key, built=None, where="")
            return f"{kind} {_shown(namespace, name)} deleted"
        if kind in ("ReplicaSet", "Deployment", "Job"):
            owner = self.owners.pop(key)
            owner.deleted = True
            for pod in list(owner.pods.values()):
                self.controller.delete(pod, PodEnd.DELETED)
            return f"{kind} {_shown(namespace, name)} deleted with its pods"
        return f"{kind} {_shown(namespace, name)} deleted"

    # -- storage -------------------------------------------------------------------------------------

    def _storage_changed(self, key: Key, built: Any, where: str) -> None:
        """The volume catalog with one volume, claim or class added, replaced (`built`) or removed (None).

        The catalog is made anew from what it holds now, so the bindings the scheduler has made
        (a claim bound to a volume, a volume provisioned) stay.
        """
        kind, namespace, name = key
        current = self.snapshot.volumes
        volumes = {v.name: v for v in current.volumes} if current is not None else {}
        claims = {(c.namespace, c.name): c for c in current.claims} if current is not None else {}
        if kind == "PersistentVolume":
            volumes.pop(name, None)
            if built is not None:
                volumes[name] = built
        elif kind == "PersistentVolumeClaim":
            claims.pop((namespace, name), None)
            if built is not None:
                claims[(namespace, name)] = built
        else:
            self.storage_classes.pop(name, None)
            if built is not None:
                self.storage_classes[name] = built
        try:
            self.snapshot.volumes = VolumeCatalog(volumes.values(), claims.values(), self.storage_classes.values())
        except ValueError as exc:
            raise ScenarioError(str(exc), field=where) from None
        self.controller.cluster_changed()  # a pod waiting for its claim may fit now

    # -- owners --------------------------------------------------------------------------------------

    def _reconcile(self, owner: Owner) -> None:
        """`manageReplicas`: make the missing pods, delete the extra ones, those least far along first
        (`controller.ActivePods`: unbound before bound, then the most recently bound and created)."""
        live = [p for p in owner.pods.values() if p.end is None]
        wanted = owner.wanted()
        extra = sorted(live, key=lambda p: (p.bound_at is not None, -(p.bound_at or 0), -p.created_at, p.name))
        for pod in extra[: max(len(live) - wanted, 0)]:
            self.controller.delete(pod, PodEnd.DELETED)
        for _ in range(wanted - len(live)):
            name = f"{owner.name}-{owner.made}"
            owner.made += 1
            spec = self._pod_spec(owner.template, owner.namespace, name, owner.labels, owner.kind, controlled=True)
            pod = self.controller.create(spec, duration=self._run_for(owner.annotations), owner=owner)
            owner.pods[pod.name] = pod
            self.objects[("Pod", owner.namespace, name)] = self._owned_manifest(owner, name)

    def _owned_manifest(self, owner: Owner, name: str) -> dict[str, Any]:
        """The pod an owner made, as the API server holds it: its template with a name and an owner reference."""
        template = self.objects[(owner.kind, owner.namespace, owner.name)]["spec"]["template"]
        metadata = {
            **copy.deepcopy(template.get("metadata") or {}),
            "name": name,
            "namespace": owner.namespace,
            "ownerReferences": [
                {"apiVersion": _API[owner.kind], "kind": owner.kind, "name": owner.name, "controller": True}
            ],
        }
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": copy.deepcopy(template["spec"])}

    def _pod_gone(self, pod: Pod) -> None:
        owner = pod.owner
        if isinstance(owner, Owner):
            owner.pods.pop(pod.name, None)
            if owner.completions is not None and pod.end is PodEnd.COMPLETED and pod.bound_at is not None:
                owner.succeeded += 1
            if not owner.deleted:
                self._reconcile(owner)
        self.objects.pop(("Pod", *_split(pod.name)), None)  # gone from the API, however it ended
        if self.draining:
            self._want_retry()

    # -- drains --------------------------------------------------------------------------------------

    def _want_retry(self) -> None:
        if not self._retry_due:
            self._retry_due = True
            self.env.call_when_settled(self._retry, order=1)  # after the scheduler's pass

    def _retry(self) -> None:
        self._retry_due = False
        self._drain()

    def _drain(self) -> None:
        """Evict what the budgets allow from every draining node; remove the nodes left empty."""
        snap = self.snapshot
        budgets = self._budgets()
        for name in list(self.draining):
            i = snap.index[name]
            for spec in sorted(snap.pods_on[i].values(), key=lambda s: s.name):
                pod = self.controller.pods[spec.name]
                if pod.end is not None:
                    continue  # already on its way out
                covering = [b for b in budgets if b.covers(pod)]
                if any(b.allowed <= 0 for b in covering):
                    continue  # the eviction API answers 429: retried later
                for b in covering:
                    b.allowed -= 1
                self.evicted.append((self.env.now(), pod.name, name))
                self.controller.delete(pod, PodEnd.EVICTED)
            if not snap.pods_on[i]:
                del self.draining[name]
                self.controller.remove_node(name)
                self.removed.append((self.env.now(), name))

    def _budgets(self) -> list[_Budget]:
        budgets = []
        for (kind, namespace, _), manifest in self.objects.items():
            if kind != "PodDisruptionBudget":
                continue
            pdb = PodDisruptionBudgetObject.model_validate(manifest)
            selector = pdb.spec.selector.build() if pdb.spec.selector is not None else LabelSelector()
            matching = [
                p for p in self.controller.pods.values()
                if p.spec.namespace == namespace and selector.matches(p.spec.labels) and p.end is None
            ]  # fmt: skip
            healthy = sum(1 for p in matching if p.bound_at is not None)
            expected = max(len(matching), self._expected(namespace, selector))
            budgets.append(_Budget(namespace, selector, _allowed(pdb, healthy, expected)))
        return budgets

    def _expected(self, namespace: str, selector: LabelSelector) -> int:
        """The pods the budget expects: the replicas of the owners whose pods it selects (`getExpectedScale`)."""
        return sum(o.wanted() for o in self.owners.values() if o.namespace == namespace and selector.matches(o.labels))

    def pending_drains(self) -> list[str]:
        return list(self.draining)

    def retry_drains(self) -> None:
        """Called at each FakeTime step: evictions a budget refused are tried again."""
        if self.draining:
            self._want_retry()


@dataclass
class _Budget:
    namespace: str
    selector: LabelSelector
    allowed: int

    def covers(self, pod: Pod) -> bool:
        return pod.spec.namespace == self.namespace and self.selector.matches(pod.spec.labels)


def _allowed(pdb: PodDisruptionBudgetObject, healthy: int, expected: int) -> int:
    """`disruptionsAllowed` as the disruption controller computes it (`getExpectedPodCount`)."""
    spec = pdb.spec
    if spec.max_unavailable is not None:
        unavailable = _scaled(spec.max_unavailable, expected, round_up=True)
        desired = max(expected - unavailable, 0)
    elif spec.min_available is not None:
        desired = _scaled(spec.min_available, expected, round_up=True)
    else:
        desired = expected  # no bound given: nothing may be disrupted
    return max(healthy - desired, 0)


def _scaled(value: int | str, total: int, *, round_up: bool) -> int:
    """`intstr.GetScaledValueFromIntOrPercent`."""
    if isinstance(value, int):
        return value
    text = value.strip()
    if text.endswith("%"):
        percent = int(text[:-1])
        return -(-percent * total // 100) if round_up else percent * total // 100
    return int(text)


def _split(pod_name: str) -> tuple[str, str]:
    namespace, _, name = pod_name.rpartition("/")
    return namespace or DEFAULT_NAMESPACE, name


def _shown(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
