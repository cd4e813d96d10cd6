"""kube-scheduler-simulator's exports read in, and skenario's results written out as its web UI shows them.

kube-scheduler-simulator (sigs.k8s.io/kube-scheduler-simulator, "ksim") is where many people try a
scheduler configuration by hand. Two bridges to it:

1. `read_export` reads what its Export button (`export.yml`, YAML) and `GET /api/v1/export` (JSON)
   write: `snapshot.ResourcesForSnap` (simulator/snapshot/snapshot.go), one list per kind under
   `pods`, `nodes`, `pvs`, `pvcs`, `storageClasses`, `priorityClasses`, `namespaces`, and the
   scheduler's `KubeSchedulerConfiguration` (v1) under `schedulerConfig`.
   `KsimExport.as_scenario` turns it into a KEP-140 Scenario that creates every object at time 0.
2. `ksim_annotations` writes the last scheduling attempt of one of skenario's KEP-140 PodResults
   as the annotations ksim's result store puts on the pod (`Store.GetStoredResult`,
   simulator/scheduler/plugin/resultstore/store.go), so the two can be diffed key by key.

Its recorder's files (`sched-recorder`) are read in `ksimrecord.py`, with the same object rules
(`for_creation`).

Invariant: an export's objects are kept as written (server fields and all), with `apiVersion` and
`kind` filled in: ksim lists them through client-go, whose list items carry no TypeMeta. Only
`as_scenario` strips what the API server populated.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skenario.errors import ScenarioError
from skenario.scenario.io import Documents, located, read_text, yaml_documents

# scenario/api/v1alpha1/groupversion_info.go: `GroupVersion`.
SCENARIO_API_VERSION = "simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1"
SCHEDULER_CONFIG_KEY = "schedulerConfig"
SCHEDULER_CONFIG_API_VERSION = (
    "kubescheduler.config.k8s.io/v1"  # ResourcesForSnap's *configv1.KubeSchedulerConfiguration
)
SCHEDULER_CONFIG_KIND = "KubeSchedulerConfiguration"

# simulator/scheduler/plugin/annotation/annotation.go
ANNOTATION_PREFIX = "kube-scheduler-simulator.sigs.k8s.io/"
FILTER_RESULT = ANNOTATION_PREFIX + "filter-result"
POSTFILTER_RESULT = ANNOTATION_PREFIX + "postfilter-result"
SCORE_RESULT = ANNOTATION_PREFIX + "score-result"
FINALSCORE_RESULT = ANNOTATION_PREFIX + "finalscore-result"
SELECTED_NODE = ANNOTATION_PREFIX + "selected-node"
# resultstore/store.go's messages, and skenario's only PostFilter plugin (scheduling/preemption.py).
PREEMPTION_VICTIM = "preemption victim"  # `PostFilterNominatedMessage`
POSTFILTER_PLUGIN = "DefaultPreemption"

# Server-populated metadata a created object must not carry: upstream's import drops the UID
# (`Service.apply` sets `UID = nil`) and server-side apply ignores the rest.
SERVER_METADATA = ("uid", "resourceVersion", "managedFields", "creationTimestamp", "generation", "selfLink")


@dataclass(frozen=True, slots=True)
class ExportedKind:
    """One list of the export: its key (the json tag in `ResourcesForSnap`) and the objects' type."""

    key: str
    attribute: str  # the KsimExport field holding the list
    api_version: str
    kind: str
    namespaced: bool


# In the order a scenario creates them: whatever an object refers to exists before it.
KINDS: tuple[ExportedKind, ...] = (
    ExportedKind("namespaces", "namespaces", "v1", "Namespace", False),
    ExportedKind("priorityClasses", "priority_classes", "scheduling.k8s.io/v1", "PriorityClass", False),
    ExportedKind("storageClasses", "storage_classes", "storage.k8s.io/v1", "StorageClass", False),
    ExportedKind("pvs", "pvs", "v1", "PersistentVolume", False),
    ExportedKind("pvcs", "pvcs", "v1", "PersistentVolumeClaim", True),
    ExportedKind("nodes", "nodes", "v1", "Node", False),
    ExportedKind("pods", "pods", "v1", "Pod", True),
)
KIND_BY_NAME = {kind.kind: kind for kind in KINDS}  # the recorder's `DefaultGVRs` are these seven kinds
# `ResourcesForSnap`'s fields in its order, as error messages name them.
_KEYS = ("pods", "nodes", "pvs", "pvcs", "storageClasses", "priorityClasses", SCHEDULER_CONFIG_KEY, "namespaces")

Manifest = dict[str, Any]


@dataclass(frozen=True, slots=True)
class KsimExport:
    """The objects of one export, each a plain manifest dict as exported, and the scheduler configuration."""

    source: str
    namespaces: list[Manifest]
    priority_classes: list[Manifest]
    storage_classes: list[Manifest]
    pvs: list[Manifest]
    pvcs: list[Manifest]
    nodes: list[Manifest]
    pods: list[Manifest]
    scheduler_config: Manifest | None

    def objects(self, kind: ExportedKind) -> list[Manifest]:
        return getattr(self, kind.attribute)  # type: ignore[no-any-return]

    def as_scenario(self, name: str) -> dict[str, Any]:
        """A KEP-140 Scenario creating every object at fake time 0 in dependency order, then `Done` at 1.

        Events follow the KEP's first revision (`ScenarioSpec.Events`, each `ScenarioEvent` with
        an `ID`, an `Operation` and its `CreateOperation`), with skenario's fake `time` in place
        of the KEP's `Step`. Objects are created as upstream's import applies them
        (`snapshot.Service.apply`): without server-populated metadata, skipping the reserved
        `system-` PriorityClasses and the `default` and `kube-` Namespaces every cluster has; a
        PersistentVolume's `claimRef` loses the old claim's uid (upstream looks the new one up).
        Pods lose their `status` and ksim's result annotations (the earlier run's results); a pod
        with `spec.nodeName` keeps it: it is bound already.

        `spec.schedulerConfiguration` is a skenario extension: the export's KubeSchedulerConfiguration,
        for skenario's scenario reader to take as the scheduler's configuration.
        """
        events: list[dict[str, Any]] = []
        for kind in KINDS:
            for obj in self.objects(kind):
                if _reserved(kind, obj["metadata"]["name"]):
                    continue
                manifest = for_creation(kind, obj)
                events.append(
                    {
                        "id": _event_id(kind, manifest),
                        "time": 0,
                        "operation": "Create",
                        "createOperation": {"object": manifest},
                    }
                )
        events.append({"id": "done", "time": 1, "operation": "Done", "doneOperation": {}})
        spec: dict[str, Any] = {"events": events}
        if self.scheduler_config is not None:
            spec["schedulerConfiguration"] = copy.deepcopy(self.scheduler_config)
        return {"apiVersion": SCENARIO_API_VERSION, "kind": "Scenario", "metadata": {"name": name}, "spec": spec}

    def results(self) -> dict[str, dict[str, str]]:
        """ksim's result annotations on each exported pod that has some, keyed `namespace/name`.

        What its web UI showed for the pod, to diff with `ksim_annotations` of skenario's run.
        """
        out: dict[str, dict[str, str]] = {}
        for pod in self.pods:
            metadata = pod["metadata"]
            annotations = metadata.get("annotations") or {}
            found = {k: v for k, v in annotations.items() if isinstance(k, str) and k.startswith(ANNOTATION_PREFIX)}
            if found:
                out[f"{metadata['namespace']}/{metadata['name']}"] = found
        return out


def read_export(path: str | Path) -> KsimExport:
    """Read a ksim export (JSON or YAML); anything else is one ScenarioError naming the file and the field.

    Extra keys and fields are ignored; a missing or null list is empty (Go writes a nil slice as
    `null`, and exports before namespaces were added have no `namespaces`).
    """
    source = str(path)
    text = read_text(path)
    data = _parse(text, source)
    try:
        _check_top(data)
        objects = {kind.key: _objects(data, kind) for kind in KINDS}
        config = _scheduler_config(data.get(SCHEDULER_CONFIG_KEY))
    except ScenarioError as exc:
        raise located(exc, source, text) from None
    return KsimExport(
        source=source,
        namespaces=objects["namespaces"],
        priority_classes=objects["priorityClasses"],
        storage_classes=objects["storageClasses"],
        pvs=objects["pvs"],
        pvcs=objects["pvcs"],
        nodes=objects["nodes"],
        pods=objects["pods"],
        scheduler_config=config,
    )


def ksim_annotations(result: Mapping[str, Any]) -> dict[str, str]:
    """The annotations ksim's result store writes on a pod, from the last attempt of a KEP-140 PodResult.

    `result` is one PodResult as skenario writes it (`Pod.result()`, each attempt
    `Attempt.to_dict()`). Mirrors `Store.GetStoredResult` for what the attempt records:
    `filter-result` `{node: {plugin: "passed" | reason}}` (`wrappedPlugin.Filter`),
    `score-result` `{node: {plugin: "<raw>"}}` (`Score`), `finalscore-result`
    `{node: {plugin: "<normalized × weight>"}}` (`NormalizeScore`), `postfilter-result` (each
    node the filters rejected `{}`, the nominated one `{"DefaultPreemption": "preemption victim"}`;
    `{}` when the pod fitted, as PostFilter never ran) and `selected-node` (`""` when none).
    Values are JSON as Go's `json.Marshal` writes maps (`go_json_marshal`). A pod never attempted
    has none, as `GetStoredResult` returns nil. The store's other keys (prefilter, prescore,
    reserve, permit, prebind and bind results) are not recorded by skenario and are left out.
    """
    attempts = result.get("scheduleResult") or []
    if not attempts:
        return {}
    last = attempts[-1]
    plugin_results = last.get("pluginResults") or {}
    filters: dict[str, dict[str, str]] = plugin_results.get("filter") or {}
    scores: dict[str, dict[str, dict[str, int]]] = plugin_results.get("score") or {}
    selected = last.get("selectedNode")
    return {
        FILTER_RESULT: go_json_marshal(filters),
        POSTFILTER_RESULT: go_json_marshal(_postfilter(filters, selected, last.get("nominatedNode"))),
        SCORE_RESULT: go_json_marshal(_score_strings(scores, "raw")),
        FINALSCORE_RESULT: go_json_marshal(_score_strings(scores, "final")),
        SELECTED_NODE: selected or "",
    }


# Go's encoding/json escapes these for HTML (unless told not to) and as JavaScript line ends.
_GO_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def go_json_marshal(value: Any) -> str:
    """`json.Marshal` as Go writes it: compact, map keys sorted, UTF-8 kept, `<`, `>`, `&` escaped.

    Control characters come out alike (`\\n`, `\\b`, `\\u0001`: Go since 1.22, ksim builds with 1.24).
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).translate(_GO_ESCAPES)


def _postfilter(filters: dict[str, dict[str, str]], selected: str | None, nominated: str | None) -> dict[str, Any]:
    """`AddPostFilterResult`: the nodes with a filter status, `{}` each, the nominated one named."""
    if selected is not None or not filters:
        return {}  # PostFilter runs only when no node fits (and not at all without nodes)
    out: dict[str, dict[str, str]] = {node: {} for node in filters}
    if nominated in out:
        out[nominated] = {POSTFILTER_PLUGIN: PREEMPTION_VICTIM}
    return out


def _score_strings(scores: dict[str, dict[str, dict[str, int]]], which: str) -> dict[str, dict[str, str]]:
    """`{node: {plugin: score}}` with scores as decimal strings (`strconv.FormatInt`)."""
    return {node: {plugin: str(int(s[which])) for plugin, s in plugins.items()} for node, plugins in scores.items()}


# -- reading ----------------------------------------------------------------------------------------


def _parse(text: str, source: str) -> Any:
    """The file's one document. JSON goes through `json` first: PyYAML reads about 1 MB/s in pure
    Python, and an export of 10,000 pods is tens of MB; anything else (the Export button's YAML, or
    broken JSON, which YAML then reports with its line) goes through the YAML reader."""
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            pass
        except RecursionError:
            raise ScenarioError("not a kube-scheduler-simulator export: it nests too deeply", file=source) from None
    documents = yaml_documents(text, source)
    if len(documents) != 1:
        raise ScenarioError(f"a kube-scheduler-simulator export is one document, found {len(documents)}", file=source)
    return documents[0][0]


def _check_top(data: Any) -> None:
    if not isinstance(data, dict):
        raise ScenarioError(
            f"a kube-scheduler-simulator export is a mapping of {', '.join(_KEYS)}, not a {type(data).__name__}",
            field="(top level)",
        )
    if not any(key in data for key in _KEYS):
        kind = data.get("kind")
        what = f"a {kind} manifest" if isinstance(kind, str) else "a mapping"
        raise ScenarioError(
            f"not a kube-scheduler-simulator export: {what} with none of its keys ({', '.join(_KEYS)})",
            field="(top level)",
        )


def _objects(data: dict[str, Any], kind: ExportedKind) -> list[Manifest]:
    """The kind's list as manifests: each a mapping with a name, unique, of the list's kind."""
    items = data.get(kind.key)
    if items is None:
        return []
    if not isinstance(items, list):
        raise ScenarioError(f"should be a list of {kind.kind} objects, not a {type(items).__name__}", field=kind.key)
    out: list[Manifest] = []
    seen: set[tuple[str | None, str]] = set()
    for index, item in enumerate(items):
        where = f"{kind.key}.{index}"
        if not isinstance(item, dict):
            raise ScenarioError(f"should be a {kind.kind} object (a mapping), not a {type(item).__name__}", field=where)
        for field, expected in (("apiVersion", kind.api_version), ("kind", kind.kind)):
            written = item.get(field)
            if written is not None and written != expected:
                raise ScenarioError(
                    f"the {kind.key} list holds {kind.api_version} {kind.kind} objects, not {written!r}",
                    field=f"{where}.{field}",
                    value=written,
                )
        metadata = item.get("metadata")
        if not isinstance(metadata, dict):
            raise ScenarioError(f"a {kind.kind} needs metadata with a name", field=f"{where}.metadata")
        name = metadata.get("name")
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"a {kind.kind} needs a name", field=f"{where}.metadata.name", value=name)
        namespace: str | None = None
        if kind.namespaced:
            namespace = metadata.get("namespace") or "default"  # as the API server defaults it
            if not isinstance(namespace, str):
                raise ScenarioError("should be a namespace name", field=f"{where}.metadata.namespace", value=namespace)
            if metadata.get("namespace") != namespace:
                metadata = {**metadata, "namespace": namespace}
        if (namespace, name) in seen:
            shown = name if namespace is None else f"{namespace}/{name}"
            raise ScenarioError(f"{kind.kind} {shown} is listed twice", field=f"{where}.metadata.name", value=name)
        seen.add((namespace, name))
        out.append({"apiVersion": kind.api_version, "kind": kind.kind, **item, "metadata": metadata})
    return out


def _scheduler_config(config: Any) -> Manifest | None:
    """The KubeSchedulerConfiguration, with the apiVersion and kind its Go type implies when absent."""
    if config is None:
        return None  # an external scheduler: ksim exports no configuration
    if not isinstance(config, dict):
        raise ScenarioError(
            f"should be a KubeSchedulerConfiguration (a mapping) or null, not a {type(config).__name__}",
            field=SCHEDULER_CONFIG_KEY,
        )
    kind = config.get("kind")
    if kind is not None and kind != SCHEDULER_CONFIG_KIND:
        raise ScenarioError(
            f"should be a {SCHEDULER_CONFIG_KIND}, not {kind!r}", field=f"{SCHEDULER_CONFIG_KEY}.kind", value=kind
        )
    return {"apiVersion": SCHEDULER_CONFIG_API_VERSION, "kind": SCHEDULER_CONFIG_KIND, **config}


# -- writing the scenario ---------------------------------------------------------------------------


def _reserved(kind: ExportedKind, name: str) -> bool:
    """`isSystemPriorityClass` and `isIgnoreNamespace` (snapshot.go): objects every cluster has."""
    if kind.kind == "PriorityClass":
        return name.startswith("system-")
    if kind.kind == "Namespace":
        return name == "default" or name.startswith("kube-")
    return False


def for_creation(kind: ExportedKind, obj: Manifest) -> Manifest:
    """A copy of `obj` as upstream's import creates it: no server metadata; a pod without status or
    ksim's result annotations; a PV's claimRef without the old claim's uid."""
    manifest = copy.deepcopy(obj)
    metadata = manifest["metadata"]
    for field in SERVER_METADATA:
        metadata.pop(field, None)
    if kind.kind == "Pod":
        manifest.pop("status", None)
        annotations = metadata.get("annotations")
        if isinstance(annotations, dict):
            kept = {k: v for k, v in annotations.items() if not str(k).startswith(ANNOTATION_PREFIX)}
            if kept:
                metadata["annotations"] = kept
            else:
                metadata.pop("annotations")
    elif kind.kind == "PersistentVolume":
        claim = (manifest.get("spec") or {}).get("claimRef")
        if isinstance(claim, dict):
            claim.pop("uid", None)  # the old claim's; `applyPvs` puts the new claim's in
            claim.pop("resourceVersion", None)
    return manifest


def _event_id(kind: ExportedKind, manifest: Manifest) -> str:
    """`create/<kind>/[<namespace>/]<name>`: unique, as names hold no `/`."""
    metadata = manifest["metadata"]
    where = f"{metadata['namespace']}/{metadata['name']}" if kind.namespaced else metadata["name"]
    return f"create/{kind.kind.lower()}/{where}"


def is_export(text: str, source: str, *, documents: Documents | None = None) -> bool:
    """Whether the text is a kube-scheduler-simulator export (a mapping with its keys and no `kind`);
    `documents`: the text already read as YAML."""
    if documents is not None:
        if len(documents) != 1:
            return False
        data = documents[0][0]
    else:
        try:
            data = _parse(text, source)
        except ScenarioError:
            return False
    return isinstance(data, dict) and "kind" not in data and any(key in data for key in _KEYS)
