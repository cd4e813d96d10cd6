"""The Horizontal Pod Autoscaler's replica calculator and metric combination, as pure functions.

Restated from kubernetes/kubernetes `pkg/controller/podautoscaler` (`replica_calculator.go`,
`metrics/utilization.go` and `computeReplicasForMetrics` in `horizontal.go`); no upstream code is
copied. Each function's docstring names the upstream function it mirrors. Stabilisation windows,
`behavior` rate limits and the reconcile step live in `hpa_behavior`.

Plain data in, plain data out: the caller lists the pods the HPA's selector matches and the
samples the metrics pipeline holds, and passes `now`, so a user can unit-test an HPA setting
without a cluster or a simulation. Quantities are integer milli-units, as upstream's
`Quantity.MilliValue()` (CPU in millicores; a Pods metric of 1.5 requests per second is 1500);
times are integer nanoseconds (`skenario.core.time`). The arithmetic is upstream's to the bit:
integer percentages truncated, ratios in float64, `ceil` on the float product.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from skenario.core.time import MINUTE, SECOND

MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1

# kube-controller-manager flags (config/v1alpha1/defaults.go, RecommendedDefaultHPAControllerConfiguration).
DEFAULT_SYNC_PERIOD = 15 * SECOND
DEFAULT_TOLERANCE = 0.1
DEFAULT_DOWNSCALE_STABILIZATION = 5 * MINUTE
DEFAULT_CPU_INITIALIZATION_PERIOD = 5 * MINUTE
DEFAULT_INITIAL_READINESS_DELAY = 30 * SECOND
# autoscaling/v2 API defaults (pkg/apis/autoscaling/v2/defaults.go).
DEFAULT_MIN_REPLICAS = 1
DEFAULT_CPU_UTILIZATION = 80

CPU = "cpu"
MEMORY = "memory"


class HPAMetricError(Exception):
    """A metric the controller could not turn into a replica count this sync (upstream returns an error)."""


@dataclass(frozen=True, slots=True)
class HPAControllerConfig:
    """The controller's flags, production defaults; upstream test harnesses use other values."""

    sync_period: int = DEFAULT_SYNC_PERIOD
    tolerance: float = DEFAULT_TOLERANCE
    downscale_stabilization: int = DEFAULT_DOWNSCALE_STABILIZATION
    cpu_initialization_period: int = DEFAULT_CPU_INITIALIZATION_PERIOD
    initial_readiness_delay: int = DEFAULT_INITIAL_READINESS_DELAY


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
class Container:
    """A container's resource requests (milli-units by resource name).

    `restart_policy_always` marks an init container that keeps running (a sidecar); upstream counts
    those requests, and ignores the other init containers.
    """

    name: str
    requests: Mapping[str, int] = field(default_factory=dict)
    restart_policy_always: bool = False


@dataclass(frozen=True, slots=True)
class Pod:
    """What the HPA reads of one pod its selector matches.

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
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
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
    rebalancing of missing or unready pods.
    """

    replicas: int
    usage: int
    usage_ratio: float
    utilization: int | None = None


@dataclass(frozen=True, slots=True)
class PodGroups:
    """Mirrors the result of `groupPods`."""

    ready_count: int
    unready: frozenset[str]
    missing: frozenset[str]
    ignored: frozenset[str]


def _quo(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _fdiv(a: float, b: float) -> float:
    """Go's float64 division: IEEE infinities and NaN instead of ZeroDivisionError."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _ceil_int32_saturated(x: float) -> int:
    """`int32(math.Ceil(x))` where upstream caps the product at MaxInt32 first."""
    if x > MAX_INT32:
        return MAX_INT32
    return math.ceil(x)


def _cpu_unready(pod: Pod, metric: PodMetric, now: int, cpu_initialization_period: int, readiness_delay: int) -> bool:
    if pod.ready is None or pod.start_time is None:
        return True
    if pod.start_time + cpu_initialization_period > now:
        # Within the initialisation period: ignore the sample if the pod is unready, or if one full
        # metric window has not passed since its readiness last changed.
        return pod.ready == ConditionStatus.FALSE or metric.timestamp < pod.ready_transition_time + metric.window
    # Afterwards: ignore it only if the pod is unready and has never been ready.
    return pod.ready == ConditionStatus.FALSE and pod.start_time + readiness_delay > pod.ready_transition_time


def group_pods(
    pods: Sequence[Pod],
    metrics: Mapping[str, PodMetric],
    resource: str,
    now: int,
    *,
    cpu_initialization_period: int = DEFAULT_CPU_INITIALIZATION_PERIOD,
    initial_readiness_delay: int = DEFAULT_INITIAL_READINESS_DELAY,
) -> PodGroups:
    """Mirrors `groupPods`: sort pods into ready, unready, missing a metric, and ignored.

    Deleted and Failed pods are ignored; Pending pods are unready for every metric; readiness
    (with the CPU initialisation period and initial readiness delay) matters only for CPU.
    """
    ready = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    for pod in pods:
        if pod.deletion_time is not None or pod.phase == PodPhase.FAILED:
            ignored.add(pod.name)
            continue
        if pod.phase == PodPhase.PENDING:
            unready.add(pod.name)
            continue
        metric = metrics.get(pod.name)
        if metric is None:
            missing.add(pod.name)
            continue
        if resource == CPU and _cpu_unready(pod, metric, now, cpu_initialization_period, initial_readiness_delay):
            unready.add(pod.name)
            continue
        ready += 1
    return PodGroups(ready, frozenset(unready), frozenset(missing), frozenset(ignored))


def remove_metrics_for_pods(metrics: Mapping[str, int], pods: frozenset[str]) -> dict[str, int]:
    """Mirrors `removeMetricsForPods`, returning a new mapping instead of deleting in place."""
    return {name: value for name, value in metrics.items() if name not in pods}


def calculate_requests(
    pods: Sequence[Pod], container: str, resource: str, *, pod_level_resources: bool = True
) -> dict[str, int]:
    """Mirrors `calculateRequests`: each pod's request for `resource`, in milli-units.

    Pod-level requests when set (and the PodLevelResources gate is on) unless a container is
    named; else the named container's, or the sum over containers and sidecar init containers.
    A missing request is an error, for every listed pod, ignored ones included, as upstream.
    """
    requests: dict[str, int] = {}
    for pod in pods:
        if pod_level_resources and pod.requests and container == "":
            if resource not in pod.requests:
                raise HPAMetricError(f"missing pod-level request for {resource} in Pod {pod.name}")
            requests[pod.name] = pod.requests[resource]
            continue
        candidates = pod.containers + tuple(c for c in pod.init_containers if c.restart_policy_always)
        total = 0
        found = False
        for c in candidates:
            if container in ("", c.name):
                if resource not in c.requests:
                    raise HPAMetricError(f"missing request for {resource} in container {c.name} of Pod {pod.name}")
                total += c.requests[resource]
            if container == c.name:
                found = True
                break
        if container and not found:
            raise HPAMetricError(f"container {container} not found in Pod {pod.name}")
        requests[pod.name] = total
    return requests


def get_resource_utilization_ratio(
    metrics: Mapping[str, int], requests: Mapping[str, int], target_utilization: int
) -> tuple[float, int, int]:
    """Mirrors `metrics.GetResourceUtilizationRatio`: (usage ratio, utilisation %, raw average).

    Utilisation is the ratio of sums, truncated to an integer percent; metrics of pods without a
    request (not in the pod list) are skipped.
    """
    metrics_total = 0
    requests_total = 0
    entries = 0
    for name, value in metrics.items():
        if name not in requests:
            continue
        metrics_total += value
        requests_total += requests[name]
        entries += 1
    if requests_total == 0:
        raise HPAMetricError("no metrics returned matched known pods")
    utilization = _quo(metrics_total * 100, requests_total)
    if not -(2**31) <= utilization <= MAX_INT32:
        raise HPAMetricError(f"resource utilization {utilization} is outside the int32 range")
    return float(utilization) / float(target_utilization), utilization, _quo(metrics_total, entries)


def get_metric_usage_ratio(metrics: Mapping[str, int], target_usage: int) -> tuple[float, int]:
    """Mirrors `metrics.GetMetricUsageRatio`: (usage ratio, average truncated to an integer)."""
    usage = _quo(sum(metrics.values()), len(metrics))
    return _fdiv(float(usage), float(target_usage)), usage


def get_resource_replicas(
    current_replicas: int,
    target_utilization: int,
    resource: str,
    pods: Sequence[Pod],
    metrics: Mapping[str, PodMetric],
    now: int,
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
    container: str = "",
    cpu_initialization_period: int = DEFAULT_CPU_INITIALIZATION_PERIOD,
    initial_readiness_delay: int = DEFAULT_INITIAL_READINESS_DELAY,
    pod_level_resources: bool = True,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetResourceReplicas`: a Utilization target on a (container) resource.

    Unready pods are left out; then, if pods lack metrics or unready pods would join a scale-up,
    the ratio is recomputed with missing pods at max(100%, target) of their request on a
    scale-down and 0 on a scale-up, and unready pods at 0. If that recomputed ratio is within
    tolerance or reverses the direction, or the new count moves against it, nothing changes.
    """
    if not metrics:
        raise HPAMetricError(
            f"unable to get metrics for resource {resource}: no metrics returned from resource metrics API"
        )
    if not pods:
        raise HPAMetricError("no pods returned by selector while calculating replica count")
    groups = group_pods(
        pods,
        metrics,
        resource,
        now,
        cpu_initialization_period=cpu_initialization_period,
        initial_readiness_delay=initial_readiness_delay,
    )
    values = remove_metrics_for_pods({name: m.value for name, m in metrics.items()}, groups.ignored)
    values = remove_metrics_for_pods(values, groups.unready)
    if not values:
        raise HPAMetricError("did not receive metrics for targeted pods (pods might be unready)")
    requests = calculate_requests(pods, container, resource, pod_level_resources=pod_level_resources)
    ratio, utilization, raw = get_resource_utilization_ratio(values, requests, target_utilization)

    def result(replicas: int) -> ReplicaCalculation:
        return ReplicaCalculation(replicas, raw, ratio, utilization)

    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if tolerances.is_within(ratio):
            return result(current_replicas)
        return result(math.ceil(ratio * float(groups.ready_count)))

    if groups.missing:
        if ratio < 1.0:
            fallback = max(100, target_utilization)
            for name in groups.missing:
                values[name] = _quo(requests[name] * fallback, 100)
        elif ratio > 1.0:
            for name in groups.missing:
                values[name] = 0
    if scale_up_with_unready:
        for name in groups.unready:
            values[name] = 0

    new_ratio, _, _ = get_resource_utilization_ratio(values, requests, target_utilization)
    if tolerances.is_within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return result(current_replicas)
    new_replicas = math.ceil(new_ratio * float(len(values)))
    if (new_ratio < 1.0 and new_replicas > current_replicas) or (new_ratio > 1.0 and new_replicas < current_replicas):
        return result(current_replicas)
    return result(new_replicas)


def calc_plain_metric_replicas(
    metrics: Mapping[str, PodMetric],
    current_replicas: int,
    target_usage: int,
    pods: Sequence[Pod],
    resource: str,
    now: int,
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
    cpu_initialization_period: int = DEFAULT_CPU_INITIALIZATION_PERIOD,
    initial_readiness_delay: int = DEFAULT_INITIAL_READINESS_DELAY,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.calcPlainMetricReplicas`: an AverageValue target per pod.

    Same structure as `get_resource_replicas` on the mean value; missing pods count at exactly
    the target on a scale-down. Readiness matters only when `resource` is CPU.
    """
    if not pods:
        raise HPAMetricError("no pods returned by selector while calculating replica count")
    groups = group_pods(
        pods,
        metrics,
        resource,
        now,
        cpu_initialization_period=cpu_initialization_period,
        initial_readiness_delay=initial_readiness_delay,
    )
    values = remove_metrics_for_pods({name: m.value for name, m in metrics.items()}, groups.ignored)
    values = remove_metrics_for_pods(values, groups.unready)
    if not values:
        raise HPAMetricError("did not receive metrics for targeted pods (pods might be unready)")
    ratio, usage = get_metric_usage_ratio(values, target_usage)

    def result(replicas: int) -> ReplicaCalculation:
        return ReplicaCalculation(replicas, usage, ratio)

    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if tolerances.is_within(ratio):
            return result(current_replicas)
        return result(math.ceil(ratio * float(groups.ready_count)))

    if groups.missing:
        if ratio < 1.0:
            for name in groups.missing:
                values[name] = target_usage
        elif ratio > 1.0:
            for name in groups.missing:
                values[name] = 0
    if scale_up_with_unready:
        for name in groups.unready:
            values[name] = 0

    new_ratio, _ = get_metric_usage_ratio(values, target_usage)
    if tolerances.is_within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return result(current_replicas)
    new_replicas = math.ceil(new_ratio * float(len(values)))
    if (new_ratio < 1.0 and new_replicas > current_replicas) or (new_ratio > 1.0 and new_replicas < current_replicas):
        return result(current_replicas)
    return result(new_replicas)


def get_raw_resource_replicas(
    current_replicas: int,
    target_usage: int,
    resource: str,
    pods: Sequence[Pod],
    metrics: Mapping[str, PodMetric],
    now: int,
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
    cpu_initialization_period: int = DEFAULT_CPU_INITIALIZATION_PERIOD,
    initial_readiness_delay: int = DEFAULT_INITIAL_READINESS_DELAY,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetRawResourceReplicas`: an AverageValue target on a resource."""
    if not metrics:
        raise HPAMetricError(
            f"unable to get metrics for resource {resource}: no metrics returned from resource metrics API"
        )
    return calc_plain_metric_replicas(
        metrics,
        current_replicas,
        target_usage,
        pods,
        resource,
        now,
        tolerances=tolerances,
        cpu_initialization_period=cpu_initialization_period,
        initial_readiness_delay=initial_readiness_delay,
    )


def get_metric_replicas(
    current_replicas: int,
    target_usage: int,
    metric_name: str,
    pods: Sequence[Pod],
    metrics: Mapping[str, PodMetric],
    now: int,
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetMetricReplicas`: a Pods metric; readiness is not consulted."""
    if not metrics:
        raise HPAMetricError(f"unable to get metric {metric_name}: no metrics returned from custom metrics API")
    return calc_plain_metric_replicas(metrics, current_replicas, target_usage, pods, "", now, tolerances=tolerances)


def get_ready_pods_count(pods: Sequence[Pod]) -> int:
    """Mirrors `ReplicaCalculator.getReadyPodsCount`: Running pods whose Ready condition is True."""
    if not pods:
        raise HPAMetricError("no pods returned by selector while calculating replica count")
    return sum(1 for p in pods if p.phase == PodPhase.RUNNING and p.ready == ConditionStatus.TRUE)


def get_usage_ratio_replica_count(
    current_replicas: int, usage_ratio: float, pods: Sequence[Pod], *, tolerances: Tolerances = DEFAULT_TOLERANCES
) -> int:
    """Mirrors `ReplicaCalculator.getUsageRatioReplicaCount`: ratio times ready pods, capped at MaxInt32.

    From zero replicas (only reachable with the alpha HPAScaleToZero gate) it is ceil(ratio), with
    no tolerance.
    """
    if current_replicas == 0:
        return math.ceil(usage_ratio)
    if tolerances.is_within(usage_ratio):
        return current_replicas
    return _ceil_int32_saturated(usage_ratio * float(get_ready_pods_count(pods)))


def get_object_metric_replicas(
    current_replicas: int,
    target_usage: int,
    usage: int,
    pods: Sequence[Pod],
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetObjectMetricReplicas`: an Object metric with a Value target."""
    ratio = _fdiv(float(usage), float(target_usage))
    replicas = get_usage_ratio_replica_count(current_replicas, ratio, pods, tolerances=tolerances)
    return ReplicaCalculation(replicas, usage, ratio)


def _per_pod(status_replicas: int, target_average: int, usage: int, tolerances: Tolerances) -> ReplicaCalculation:
    ratio = _fdiv(float(usage), float(target_average) * float(status_replicas))
    replicas = status_replicas
    if not tolerances.is_within(ratio):
        replicas = _ceil_int32_saturated(_fdiv(float(usage), float(target_average)))
    if float(usage) >= float(MAX_INT64):
        average = MAX_INT64
    elif status_replicas == 0:
        average = usage  # Go converts +Inf to an undefined int64 here; report the total instead
    else:
        average = math.ceil(float(usage) / float(status_replicas))
    return ReplicaCalculation(replicas, average, ratio)


def get_object_per_pod_metric_replicas(
    status_replicas: int, target_average_usage: int, usage: int, *, tolerances: Tolerances = DEFAULT_TOLERANCES
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetObjectPerPodMetricReplicas`: an Object metric, AverageValue target.

    The ratio divides by the scale's status replicas; outside tolerance the proposal is
    ceil(value / target) regardless of readiness. The reported usage is ceil(value / replicas).
    """
    return _per_pod(status_replicas, target_average_usage, usage, tolerances)


def _saturating_sum(values: Sequence[int]) -> int:
    total = 0
    for v in values:
        total += v
        if total > MAX_INT64:
            return MAX_INT64
    return total


def get_external_metric_replicas(
    current_replicas: int,
    target_usage: int,
    values: Sequence[int],
    pods: Sequence[Pod],
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetExternalMetricReplicas`: the series are summed (saturating at MaxInt64)."""
    if not values:
        raise HPAMetricError("no metrics returned from external metrics API")
    usage = _saturating_sum(values)
    ratio = _fdiv(float(usage), float(target_usage))
    replicas = get_usage_ratio_replica_count(current_replicas, ratio, pods, tolerances=tolerances)
    return ReplicaCalculation(replicas, usage, ratio)


def get_external_per_pod_metric_replicas(
    status_replicas: int,
    target_usage_per_pod: int,
    values: Sequence[int],
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetExternalPerPodMetricReplicas`: summed series, AverageValue target."""
    if not values:
        raise HPAMetricError("no metrics returned from external metrics API")
    return _per_pod(status_replicas, target_usage_per_pod, _saturating_sum(values), tolerances)


@dataclass(frozen=True, slots=True)
class MetricProposal:
    """One metric's proposal at one sync, with the name upstream reports it under."""

    spec: MetricSpec
    metric: str
    calculation: ReplicaCalculation

    @property
    def replicas(self) -> int:
        return self.calculation.replicas


def _pod_metrics(spec: MetricSpec, reading: MetricReading | None) -> Mapping[str, PodMetric]:
    if reading is None:
        raise HPAMetricError(f"unable to get metric {spec.name}")
    return reading.pod_metrics


def compute_replicas_for_metric(
    spec: MetricSpec,
    reading: MetricReading | None,
    *,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[Pod],
    now: int,
    tolerances: Tolerances | None = None,
    config: HPAControllerConfig = HPAControllerConfig(),
) -> MetricProposal:
    """Mirrors `HorizontalController.computeReplicasForMetric` and the `computeStatusFor*Metric` it calls.

    Resource, ContainerResource, Pods and Value targets start from the scale's spec replicas;
    Object and External AverageValue targets from its status replicas. A None reading is a
    metric the pipeline could not supply. `tolerances` default to the controller flag in `config`
    (see `hpa_behavior.tolerances_for_hpa` for per-HPA ones). Raises HPAMetricError when the
    metric is unusable.
    """
    if tolerances is None:
        tolerances = Tolerances(config.tolerance, config.tolerance)
    init_period = config.cpu_initialization_period
    delay = config.initial_readiness_delay
    target = spec.target
    calc: ReplicaCalculation
    if isinstance(spec, ResourceMetricSource | ContainerResourceMetricSource):
        container = spec.container if isinstance(spec, ContainerResourceMetricSource) else ""
        kind = "container resource" if container else "resource"
        metrics = _pod_metrics(spec, reading)
        if isinstance(target, AverageValueTarget):
            calc = get_raw_resource_replicas(
                spec_replicas,
                target.average_value,
                spec.name,
                pods,
                metrics,
                now,
                tolerances=tolerances,
                cpu_initialization_period=init_period,
                initial_readiness_delay=delay,
            )
            return MetricProposal(spec, f"{spec.name} {kind}", calc)
        if not isinstance(target, UtilizationTarget):
            raise HPAMetricError(
                "invalid resource metric source: neither an average utilization target nor an average value "
                "(usage) target was set"
            )
        calc = get_resource_replicas(
            spec_replicas,
            target.average_utilization,
            spec.name,
            pods,
            metrics,
            now,
            tolerances=tolerances,
            container=container,
            cpu_initialization_period=init_period,
            initial_readiness_delay=delay,
        )
        return MetricProposal(spec, f"{spec.name} {kind} utilization (percentage of request)", calc)
    if isinstance(spec, PodsMetricSource):
        if not isinstance(target, AverageValueTarget):
            raise HPAMetricError("invalid pods metric source: an average value target is required")
        metrics = _pod_metrics(spec, reading)
        calc = get_metric_replicas(
            spec_replicas, target.average_value, spec.name, pods, metrics, now, tolerances=tolerances
        )
        return MetricProposal(spec, f"pods metric {spec.name}", calc)
    if reading is None:
        raise HPAMetricError(f"unable to get metric {spec.name}")
    if isinstance(spec, ObjectMetricSource):
        if reading.value is None:
            raise HPAMetricError(f"unable to get metric {spec.name}: no value for {spec.described_object}")
        if isinstance(target, ValueTarget):
            calc = get_object_metric_replicas(spec_replicas, target.value, reading.value, pods, tolerances=tolerances)
        elif isinstance(target, AverageValueTarget):
            calc = get_object_per_pod_metric_replicas(
                status_replicas, target.average_value, reading.value, tolerances=tolerances
            )
        else:
            raise HPAMetricError(
                "invalid object metric source: neither a value target nor an average value target was set"
            )
        return MetricProposal(spec, f"object metric {spec.name}", calc)
    if not isinstance(spec, ExternalMetricSource):
        raise HPAMetricError(f"unknown metric source type {type(spec).__name__!r}")
    if isinstance(target, AverageValueTarget):
        calc = get_external_per_pod_metric_replicas(
            status_replicas, target.average_value, reading.values, tolerances=tolerances
        )
    elif isinstance(target, ValueTarget):
        calc = get_external_metric_replicas(spec_replicas, target.value, reading.values, pods, tolerances=tolerances)
    else:
        raise HPAMetricError(
            "invalid external metric source: neither a value target nor an average value target was set"
        )
    return MetricProposal(spec, f"external metric {spec.name}", calc)


@dataclass(frozen=True, slots=True)
class MetricsRecommendation:
    """Mirrors what `computeReplicasForMetrics` returns.

    `replicas` is None when the controller will not scale this sync (upstream's -1): every
    metric failed, or some failed and the valid ones ask for fewer than the spec replicas.
    `error` describes the first failure, as upstream, even when the valid metrics are used.
    """

    replicas: int | None
    metric: str
    proposals: tuple[MetricProposal | None, ...]
    error: str | None


def compute_replicas_for_metrics(
    specs: Sequence[MetricSpec],
    readings: Sequence[MetricReading | None],
    *,
    spec_replicas: int,
    status_replicas: int,
    pods: Sequence[Pod],
    now: int,
    tolerances: Tolerances | None = None,
    config: HPAControllerConfig = HPAControllerConfig(),
) -> MetricsRecommendation:
    """Mirrors `HorizontalController.computeReplicasForMetrics`: the largest proposal over all metrics.

    A failed metric cannot block a scale-up the others ask for, but it does block a scale-down,
    since the failed one might have asked for more. Pass `DEFAULT_METRICS` when the HPA lists
    none, as the API server does.
    """
    if tolerances is None:
        tolerances = Tolerances(config.tolerance, config.tolerance)
    if len(readings) != len(specs):
        raise ValueError(f"{len(specs)} metric specs but {len(readings)} readings")
    replicas = 0
    metric = ""
    proposals: list[MetricProposal | None] = []
    invalid = 0
    first_error: str | None = None
    for spec, reading in zip(specs, readings, strict=True):
        try:
            proposal = compute_replicas_for_metric(
                spec,
                reading,
                spec_replicas=spec_replicas,
                status_replicas=status_replicas,
                pods=pods,
                now=now,
                tolerances=tolerances,
                config=config,
            )
        except HPAMetricError as err:
            if invalid == 0:
                first_error = str(err)
            invalid += 1
            proposals.append(None)
            continue
        proposals.append(proposal)
        if replicas == 0 or proposal.replicas > replicas:
            replicas = proposal.replicas
            metric = proposal.metric
    error = None
    if first_error is not None:
        error = f"invalid metrics ({invalid} invalid out of {len(specs)}), first error is: {first_error}"
    if invalid >= len(specs) or (invalid > 0 and replicas < spec_replicas):
        return MetricsRecommendation(None, "", tuple(proposals), error)
    return MetricsRecommendation(replicas, metric, tuple(proposals), error)
