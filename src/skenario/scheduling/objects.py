"""What the scheduler places and where: pod and node specs as plain, immutable data.

The subset of `v1.Pod` and `v1.Node` that kube-scheduler's default plugins read. CPU is in
millicores, memory in bytes, extended resources (such as `nvidia.com/gpu`) in whole units of
whatever the node advertises. A request of `None` means the container sets none, which the
scoring plugins count as the non-zero default (100m, 200 MiB) and the filter as 0. A pod read
from a manifest carries its request as kube-scheduler computes it (`resourcehelper.PodRequests`:
containers, init containers and sidecars, overhead) and, in `non_zero`, the same with the
defaults applied per container, as `framework.calculateResource` keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from skenario.scheduling.affinity import NodeAffinity, Requirement
from skenario.scheduling.taints import Taint, Toleration

DEFAULT_MAX_PODS = 110  # the kubelet's --max-pods default
HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"

PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
NEVER = "Never"


@dataclass(frozen=True)
class LabelSelector:
    """`matchLabels` and `matchExpressions`, ANDed. An empty selector matches every pod."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        return all(r.matches(labels) for r in self.match_expressions)


@dataclass(frozen=True)
class TopologySpreadConstraint:
    """One `topologySpreadConstraints` entry (v1.TopologySpreadConstraint)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str = DO_NOT_SCHEDULE  # DoNotSchedule | ScheduleAnyway
    label_selector: LabelSelector = field(default_factory=LabelSelector)
    min_domains: int | None = None
    node_affinity_policy: str = "Honor"  # Honor | Ignore
    node_taints_policy: str = "Ignore"  # Honor | Ignore


@dataclass(frozen=True)
class PodAffinityTerm:
    """One `v1.PodAffinityTerm`: the pods `label_selector` matches, in the namespaces the term names.

    The namespaces are `namespaces` together with those `namespace_selector` matches (by the
    namespace's labels; an empty selector matches every namespace); with neither, the pod's own
    namespace. A term with no `label_selector` matches no pod.
    """

    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None


@dataclass(frozen=True)
class WeightedPodAffinityTerm:
    """One `v1.WeightedPodAffinityTerm` (weight 1..100)."""

    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True)
class PodAffinity:
    """A pod's `podAffinity` or `podAntiAffinity`: required terms (all must hold) and weighted preferences."""

    required: tuple[PodAffinityTerm, ...] = ()
    preferred: tuple[WeightedPodAffinityTerm, ...] = ()


@dataclass(frozen=True)
class HostPort:
    """A container port with a `hostPort` (`v1.ContainerPort`); an empty hostIP is 0.0.0.0, as upstream."""

    port: int
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"


# Shared by every pod that has none (they are frozen): a trace of 150,000 pods makes no 450,000 of them.
NO_NODE_AFFINITY = NodeAffinity()
NO_POD_AFFINITY = PodAffinity()
# The same for a trace reader's pods without extended resources or labels (read as Mappings, never changed).
NO_EXTENDED: Mapping[str, int] = {}
NO_LABELS: Mapping[str, str] = {}


@dataclass(frozen=True, slots=True)
class PodSpec:
    """A pod as the scheduler sees it (slots: a large trace holds one per pod)."""

    name: str
    cpu: int | None = None  # millicores requested
    memory: int | None = None  # bytes requested
    extended: Mapping[str, int] = field(default_factory=dict)
    priority: int = 0
    preemption_policy: str = PREEMPT_LOWER_PRIORITY
    namespace: str = "default"
    labels: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    affinity: NodeAffinity = NO_NODE_AFFINITY
    spread: tuple[TopologySpreadConstraint, ...] = ()
    movable: bool = True  # False: the cluster autoscaler may not evict it to empty a node
    controlled: bool = False  # owned by a controller (a ReplicaSet): PodTopologySpread's system defaults apply
    pod_affinity: PodAffinity = NO_POD_AFFINITY
    pod_anti_affinity: PodAffinity = NO_POD_AFFINITY
    host_ports: tuple[HostPort, ...] = ()
    images: tuple[str, ...] = ()  # the images of its containers (init containers first), as written
    claims: tuple[str, ...] = ()  # names of the PersistentVolumeClaims its volumes use, in its namespace
    scheduling_gates: tuple[str, ...] = ()  # while any is left the pod is not scheduled (SchedulingGates)
    non_zero: tuple[int, int] | None = None  # cpu, memory as the scores count them; None: from cpu and memory

    @property
    def cpu_request(self) -> int:
        """What the NodeResourcesFit filter counts: an unset request is 0."""
        return self.cpu or 0

    @property
    def memory_request(self) -> int:
        return self.memory or 0


@dataclass(frozen=True)
class NodeSpec:
    """A node's allocatable resources, labels and taints.

    `labels` always gains `kubernetes.io/hostname: <name>`, as the kubelet sets it.
    """

    name: str
    cpu: int  # millicores allocatable
    memory: int  # bytes allocatable
    pods: int = DEFAULT_MAX_PODS
    extended: Mapping[str, int] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    images: Mapping[str, int] = field(default_factory=dict)  # each name of node.status.images: its sizeBytes
    volume_limits: Mapping[str, int] = field(default_factory=dict)  # CSINode: volumes each CSI driver may attach

    def __post_init__(self) -> None:
        if HOSTNAME_LABEL not in self.labels:
            object.__setattr__(self, "labels", {**self.labels, HOSTNAME_LABEL: self.name})
