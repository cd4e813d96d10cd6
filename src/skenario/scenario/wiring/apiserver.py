"""Kubernetes objects on the clock: the API server's front, over the controllers of `model/apiserver.py`.

The `ObjectStore` keeps every object as its manifest stands (read and checked here, a pod's priority
admitted here) and applies create, patch (a JSON merge patch) and delete to the scheduler's world
through the controllers that own pods:
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
from dataclasses import replace
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from skenario.core.environment import Environment
from skenario.errors import ScenarioError
from skenario.model.apiserver import ClusterControllers, DisruptionSpec, Key, Owner
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
    meta = manifest.get("metadata")
    meta = meta if isinstance(meta, dict) else {}  # not a mapping: the object's validation says so, at its field
    namespace = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or DEFAULT_NAMESPACE)
    return kind, namespace, str(meta.get("name") or "")


def pod_key(namespace: str, name: str) -> str:
    """A pod's name in the scheduler: its name in the default namespace, else `namespace/name`."""
    return name if namespace == DEFAULT_NAMESPACE else f"{namespace}/{name}"


class ObjectStore(ClusterControllers):
    """Every object of the scenario as it stands, and what each operation does to the cluster."""

    def __init__(self, env: Environment, controller: SchedulingController, fake_step: int) -> None:
        super().__init__(env, controller)
        self.fake_step = fake_step
        self.objects: dict[Key, dict[str, Any]] = {}
        self.priority_classes: dict[str, dict[str, Any]] = {}  # by name, as their manifests stand
        self.on_change: Callable[[], object] | None = None

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
            self.storage_changed((kind, namespace, name), obj.build(), where)
            return f"{kind} {_shown(namespace, name)} created"
        if kind in ("ReplicaSet", "Deployment", "Job"):
            owner = self._owner(kind, namespace, name, obj, where)
            self.add_owner((kind, namespace, name), owner)
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
            self.storage_changed(key, obj.build(), where)
            return f"{kind} {_shown(namespace, name)} patched"
        if kind in ("ReplicaSet", "Deployment", "Job"):
            self.update_owner(key, self._owner(kind, namespace, name, obj, where))
            owner = self.owners[key]
            return f"{kind} {_shown(namespace, name)} patched: {owner.wanted()} pod(s) wanted"
        return f"{kind} {_shown(namespace, name)} patched"

    # -- delete --------------------------------------------------------------------------------------

    def _deleted(self, key: Key) -> str:
        kind, namespace, name = key
        if kind == "Node":
            self.drain_node(name)
            return f"node {name} cordoned and draining"
        if kind == "Namespace":
            self.snapshot.namespaces.pop(name, None)
            return f"namespace {name} deleted"
        if kind == "Pod":
            pod = self.controller.pods[pod_key(namespace, name)]
            self.controller.delete(pod, PodEnd.DELETED)
            return f"pod {pod.name} deleted"
        if kind in STORAGE:
            self.storage_changed(key, None, "")
            return f"{kind} {_shown(namespace, name)} deleted"
        if kind in ("ReplicaSet", "Deployment", "Job"):
            self.delete_owner(key)
            return f"{kind} {_shown(namespace, name)} deleted with its pods"
        return f"{kind} {_shown(namespace, name)} deleted"

    # -- owners --------------------------------------------------------------------------------------

    def _owned_pod(self, owner: Owner, name: str) -> tuple[PodSpec, int | None]:
        spec = self._pod_spec(owner.template, owner.namespace, name, owner.labels, owner.kind, controlled=True)
        return spec, self._run_for(owner.annotations)

    def _pod_made(self, owner: Owner, name: str) -> None:
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

    def _pod_forgotten(self, pod: Pod) -> None:
        self.objects.pop(("Pod", *_split(pod.name)), None)  # gone from the API, however it ended

    def _disruption_specs(self) -> list[DisruptionSpec]:
        specs = []
        for (kind, namespace, _), manifest in self.objects.items():
            if kind != "PodDisruptionBudget":
                continue
            pdb = PodDisruptionBudgetObject.model_validate(manifest)
            selector = pdb.spec.selector.build() if pdb.spec.selector is not None else LabelSelector()
            specs.append(DisruptionSpec(namespace, selector, pdb.spec.min_available, pdb.spec.max_unavailable))
        return specs


def _split(pod_name: str) -> tuple[str, str]:
    namespace, _, name = pod_name.rpartition("/")
    return namespace or DEFAULT_NAMESPACE, name


def _shown(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
