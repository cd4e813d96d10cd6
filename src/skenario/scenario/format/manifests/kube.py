"""The Kubernetes objects a KEP-140 scenario puts on its timeline, besides Pods and volumes.

`v1` Node and Namespace, `scheduling.k8s.io/v1` PriorityClass, `apps/v1` Deployment and
ReplicaSet, `batch/v1` Job and `policy/v1` PodDisruptionBudget, each read for what the scheduler
and the controllers that own pods read, with any other field allowed and ignored.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from skenario.scenario.format.cluster import LabelSelectorSpec, TaintSpec
from skenario.scenario.format.manifests.pod import ObjectMeta, PodTemplate, _Open
from skenario.scenario.format.units import MilliQuantity
from skenario.scheduling.objects import DEFAULT_MAX_PODS, NodeSpec

# Before CSINode, the kubelet reported a CSI driver's volume limit as this allocatable resource.
ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-csi-"
# pkg/apis/scheduling/types.go: the highest priority a user's PriorityClass may have, and system-cluster-critical's.
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY


class NodeSpecManifest(_Open):
    taints: list[TaintSpec] = Field(default_factory=list)
    unschedulable: bool = False


class ContainerImage(_Open):
    names: list[str] = Field(default_factory=list)
    size_bytes: int = Field(0, ge=0)


class NodeStatus(_Open):
    capacity: dict[str, MilliQuantity] = Field(default_factory=dict)
    allocatable: dict[str, MilliQuantity] = Field(default_factory=dict)
    images: list[ContainerImage] = Field(default_factory=list)


class NodeManifest(_Open):
    """A whole `kind: Node`: allocatable (else capacity), labels, taints, `unschedulable`, images."""

    api_version: Literal["v1"]
    kind: Literal["Node"]
    metadata: ObjectMeta
    spec: NodeSpecManifest = Field(default_factory=lambda: NodeSpecManifest.model_validate({}))
    status: NodeStatus = Field(default_factory=lambda: NodeStatus.model_validate({}))

    def build(self) -> NodeSpec:
        resources = {**self.status.capacity, **self.status.allocatable}  # allocatable wins, as the scheduler reads it
        extended = {}
        limits = {}
        for name, milli in resources.items():
            whole = milli // 1000
            if name.startswith(ATTACHABLE_VOLUMES_PREFIX):
                limits[name.removeprefix(ATTACHABLE_VOLUMES_PREFIX)] = whole
            elif name not in ("cpu", "memory", "pods", "ephemeral-storage") and not name.startswith("hugepages-"):
                extended[name] = whole
        return NodeSpec(
            name=self.metadata.name,
            cpu=resources.get("cpu", 0),
            memory=resources.get("memory", 0) // 1000,
            pods=resources["pods"] // 1000 if "pods" in resources else DEFAULT_MAX_PODS,
            extended=extended,
            labels=dict(self.metadata.labels),
            taints=tuple(t.build() for t in self.spec.taints),
            unschedulable=self.spec.unschedulable,
            images={name: image.size_bytes for image in self.status.images for name in image.names},
            volume_limits=limits,
        )


class NamespaceManifest(_Open):
    api_version: Literal["v1"]
    kind: Literal["Namespace"]
    metadata: ObjectMeta


class PriorityClassManifest(_Open):
    """`scheduling.k8s.io/v1` PriorityClass: the priority a pod naming it gets."""

    api_version: Literal["scheduling.k8s.io/v1"]
    kind: Literal["PriorityClass"]
    metadata: ObjectMeta
    value: int = Field(ge=-(2**31), le=SYSTEM_CRITICAL_PRIORITY + 1000)
    global_default: bool = False
    preemption_policy: Literal["PreemptLowerPriority", "Never"] = "PreemptLowerPriority"

    @model_validator(mode="after")
    def _user_definable(self) -> PriorityClassManifest:
        # ValidatePriorityClass: above HighestUserDefinablePriority only the system- classes
        # (system-cluster-critical 2e9, system-node-critical 2e9 + 1000).
        if self.value > HIGHEST_USER_DEFINABLE_PRIORITY and not self.metadata.name.startswith("system-"):
            raise ValueError(
                f"value {self.value} is above {HIGHEST_USER_DEFINABLE_PRIORITY:,}, which only system- classes may be"
            )
        return self


class ReplicaSetSpec(_Open):
    replicas: int = Field(1, ge=0)
    selector: LabelSelectorSpec | None = None
    template: PodTemplate


class ReplicaSetManifest(_Open):
    api_version: Literal["apps/v1"]
    kind: Literal["ReplicaSet"]
    metadata: ObjectMeta
    spec: ReplicaSetSpec


class DeploymentManifestSpec(ReplicaSetSpec):
    strategy: dict[str, object] | None = None


class DeploymentObject(_Open):
    """An `apps/v1` Deployment as an object on the timeline (its ReplicaSet's pods)."""

    api_version: Literal["apps/v1"]
    kind: Literal["Deployment"]
    metadata: ObjectMeta
    spec: DeploymentManifestSpec


class JobSpec(_Open):
    parallelism: int = Field(1, ge=0)
    completions: int | None = Field(None, ge=0)
    template: PodTemplate


class JobManifest(_Open):
    api_version: Literal["batch/v1"]
    kind: Literal["Job"]
    metadata: ObjectMeta
    spec: JobSpec


class PodDisruptionBudgetObjectSpec(_Open):
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    selector: LabelSelectorSpec | None = None


class PodDisruptionBudgetObject(_Open):
    """A `policy/v1` PodDisruptionBudget as an object on the timeline: the pods its selector matches."""

    api_version: Literal["policy/v1"]
    kind: Literal["PodDisruptionBudget"]
    metadata: ObjectMeta
    spec: PodDisruptionBudgetObjectSpec = Field(
        default_factory=lambda: PodDisruptionBudgetObjectSpec.model_validate({})
    )
