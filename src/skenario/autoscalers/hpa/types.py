"""The Horizontal Pod Autoscaler's plain data: listed pods, metric samples, metric specs, answers.

What the caller hands the replica calculator (`hpa.replicas`) and the metric combination
(`hpa.metrics`), and what they hand back, restated from kubernetes/kubernetes
`pkg/apis/autoscaling/v2` (metric sources and targets, their defaults), `core/v1` (the few pod
fields the HPA reads) and `pkg/controller/podautoscaler` (`replica_calculator.go`'s results and
`Tolerances`); no upstream code is copied. The controller's flags are in `hpa.config`.

Quantities are integer milli-units, as upstream's `Quantity.MilliValue()` (CPU in millicores; a
Pods metric of 1.5 requests per second is 1500); times are integer nanoseconds
(`skenario.core.time`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from skenario.autoscalers.hpa.config import DEFAULT_TOLERANCE

MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1

# autoscaling/v2 API defaults (pkg/apis/autoscaling/v2/defaults.go).
DEFAULT_MIN_REPLICAS = 1
DEFAULT_CPU_UTILIZATION = 80

CPU = "cpu"
MEMORY = "memory"


class HPAMetricError(Exception):
    """A metric the controller could not turn into a replica count this sync (upstream returns an error)."""


@dataclass(frozen=True, slots=True)
class Tolerances:
    """Mirrors `Tolerances`: the usage-ratio band, per direction, inside which nothing changes."""

    scale_down: float = DEFAULT_TOLERANCE
    scale_up: float = DEFAULT_TOLERANCE

    def is_within(self, usage_ratio: float) -> bool:
        """Mirrors `Tolerances.isWithin`: both bounds inclusive (NaN is never within)."""
        return (1.0 - self.scale_down) <= usage_ratio <= (1.0 + self.scale_up)


DEFAULT_TOLERANCES = Tolerances()


class PodPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True)
class ListedContainer:
    """A container of a pod the HPA's pod lister returns (`ListedPod`): its resource requests.

    Requests are milli-units by resource name. Not a Deployment manifest's container: only what
    the HPA reads of one.

    `restart_policy_always` marks an init container that keeps running (a sidecar); upstream counts
    those requests, and ignores the other init containers.
    """

    name: str
    requests: Mapping[str, int] = field(default_factory=dict)
    restart_policy_always: bool = False


@dataclass(frozen=True, slots=True)
class ListedPod:
    """One pod the HPA's selector matches, as the HPA's pod lister returns it: the fields the HPA reads.

    Not the simulated pod (`scheduling.pods.Pod`): the controller (`hpa.controller`) lists one of
    these for each pod of its workload.

    `ready` is the status of the Ready condition (None: the pod has no Ready condition yet) and
    `ready_transition_time` its lastTransitionTime; `start_time` None means not started.
    `deletion_time` is set once the pod is being deleted. `requests` are pod-level requests
    (KEP-2837), which win over the containers' when set.
    """

    name: str
    phase: PodPhase = PodPhase.RUNNING
    ready: ConditionStatus | None = ConditionStatus.TRUE
    ready_transition_time: int = 0
    start_time: int | None = 0
    deletion_time: int | None = None
    containers: tuple[ListedContainer, ...] = ()
    init_containers: tuple[ListedContainer, ...] = ()
    requests: Mapping[str, int] | None = None


@dataclass(frozen=True, slots=True)
class PodMetric:
    """One pod's sample: `value` in milli-units, taken at `timestamp` over the `window` before it."""

    value: int
    timestamp: int = 0
    window: int = 0


@dataclass(frozen=True, slots=True)
class UtilizationTarget:
    """Average utilisation, in percent of the pods' requests (Resource and ContainerResource only)."""

    average_utilization: int


@dataclass(frozen=True, slots=True)
class AverageValueTarget:
    """Average value per pod, in milli-units."""

    average_value: int


@dataclass(frozen=True, slots=True)
class ValueTarget:
    """Total value, in milli-units (Object and External only)."""

    value: int


MetricTarget = UtilizationTarget | AverageValueTarget | ValueTarget


@dataclass(frozen=True, slots=True)
class ResourceMetricSource:
    """`type: Resource`: a resource (cpu, memory) summed over each pod's containers."""

    name: str
    target: MetricTarget


@dataclass(frozen=True, slots=True)
class ContainerResourceMetricSource:
    """`type: ContainerResource`: one named container's usage against that container's request."""

    name: str
    container: str
    target: MetricTarget


@dataclass(frozen=True, slots=True)
class PodsMetricSource:
    """`type: Pods`: a per-pod custom metric (in-flight requests, requests per second)."""

    name: str
    target: MetricTarget


@dataclass(frozen=True, slots=True)
class ObjectMetricSource:
    """`type: Object`: one value describing another object (an Ingress's requests per second)."""

    name: str
    target: MetricTarget
    described_object: str = ""


@dataclass(frozen=True, slots=True)
class ExternalMetricSource:
    """`type: External`: values from outside the cluster, summed over the series that match."""

    name: str
    target: MetricTarget


MetricSpec = (
    ResourceMetricSource | ContainerResourceMetricSource | PodsMetricSource | ObjectMetricSource | ExternalMetricSource
)

# What the API server fills in when an HPA lists no metrics: CPU at 80% of requests.
DEFAULT_METRICS: tuple[MetricSpec, ...] = (ResourceMetricSource(CPU, UtilizationTarget(DEFAULT_CPU_UTILIZATION)),)


@dataclass(frozen=True, slots=True)
class MetricReading:
    """What the metrics pipeline returned for one metric spec at one sync.

    `pod_metrics` by pod name for Resource, ContainerResource (that container's usage) and Pods;
    `value` for Object; `values` (every matching series) for External.
    """

    pod_metrics: Mapping[str, PodMetric] = field(default_factory=dict)
    value: int | None = None
    values: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ReplicaCalculation:
    """A calculator's answer: the proposal and the usage it reports in the HPA status.

    `usage` is the per-pod average (Resource, Pods), the object's or the summed external value
    (Value targets) or that value per current replica (AverageValue targets); `utilization` the
    percent of request for Utilization targets. `usage_ratio` is usage over target before any
    rebalancing of missing or unready pods. `unready` and `missing` count the pods left out of
    the average for being unready (or in their CPU initialisation) or for lacking a metric (pod
    metrics only; 0 for the others).
    """

    replicas: int
    usage: int
    usage_ratio: float
    utilization: int | None = None
    unready: int = 0
    missing: int = 0


@dataclass(frozen=True, slots=True)
class PodGroups:
    """Mirrors the result of `groupPods`."""

    ready_count: int
    unready: frozenset[str]
    missing: frozenset[str]
    ignored: frozenset[str]
