"""The HPA's replica calculator: one metric's readings in, a proposed replica count out.

Restated from kubernetes/kubernetes `pkg/controller/podautoscaler/replica_calculator.go`; no
upstream code is copied. Each function's docstring names the upstream function it mirrors;
`hpa.metrics` picks the calculator a metric spec needs and combines the proposals.

Plain data in, plain data out (`hpa.types`): the pods the selector matches, the samples the
metrics pipeline holds, and `now`. Ratios are float64 and proposals `ceil` of the float product,
as upstream.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from skenario.autoscalers.hpa.config import DEFAULT_CPU_INITIALIZATION_PERIOD, DEFAULT_INITIAL_READINESS_DELAY
from skenario.autoscalers.hpa.types import (
    CPU,
    DEFAULT_TOLERANCES,
    MAX_INT32,
    MAX_INT64,
    ConditionStatus,
    HPAMetricError,
    ListedPod,
    PodGroups,
    PodMetric,
    PodPhase,
    ReplicaCalculation,
    Tolerances,
)
from skenario.autoscalers.hpa.utilization import get_metric_usage_ratio, get_resource_utilization_ratio, go_fdiv, go_quo


def _ceil_int32_saturated(x: float) -> int:
    """`int32(math.Ceil(x))` where upstream caps the product at MaxInt32 first."""
    if x > MAX_INT32:
        return MAX_INT32
    return math.ceil(x)


def _cpu_unready(
    pod: ListedPod, metric: PodMetric, now: int, cpu_initialization_period: int, readiness_delay: int
) -> bool:
    if pod.ready is None or pod.start_time is None:
        return True
    if pod.start_time + cpu_initialization_period > now:
        # Within the initialisation period: ignore the sample if the pod is unready, or if one full
        # metric window has not passed since its readiness last changed.
        return pod.ready == ConditionStatus.FALSE or metric.timestamp < pod.ready_transition_time + metric.window
    # Afterwards: ignore it only if the pod is unready and has never been ready.
    return pod.ready == ConditionStatus.FALSE and pod.start_time + readiness_delay > pod.ready_transition_time


def group_pods(
    pods: Sequence[ListedPod],
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
    pods: Sequence[ListedPod], container: str, resource: str, *, pod_level_resources: bool = True
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


def _ready_values(
    pods: Sequence[ListedPod],
    metrics: Mapping[str, PodMetric],
    resource: str,
    now: int,
    cpu_initialization_period: int,
    initial_readiness_delay: int,
) -> tuple[PodGroups, dict[str, int]]:
    """The pods grouped as `groupPods` does, and the metrics of the ready ones (an error if none)."""
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
    return groups, values


def _rebalanced_replicas(
    ratio: float,
    values: dict[str, int],
    groups: PodGroups,
    current_replicas: int,
    tolerances: Tolerances,
    *,
    missing_at: Callable[[str], int],
    ratio_of: Callable[[dict[str, int]], float],
) -> int:
    """The replica count from a usage ratio, with upstream's rebalancing of missing and unready pods.

    The part `GetResourceReplicas` and `calcPlainMetricReplicas` share: with every pod ready and
    measured, ceil(ratio x ready) unless within tolerance. Otherwise missing pods count at
    `missing_at` on a scale-down and 0 on a scale-up, unready ones at 0 on a scale-up, and the
    recomputed ratio is ignored if within tolerance, if it reverses the direction, or if the new
    count moves against it.
    """
    scale_up_with_unready = bool(groups.unready) and ratio > 1.0
    if not scale_up_with_unready and not groups.missing:
        if tolerances.is_within(ratio):
            return current_replicas
        return math.ceil(ratio * float(groups.ready_count))
    if groups.missing:
        if ratio < 1.0:
            for name in groups.missing:
                values[name] = missing_at(name)
        elif ratio > 1.0:
            for name in groups.missing:
                values[name] = 0
    if scale_up_with_unready:
        for name in groups.unready:
            values[name] = 0
    new_ratio = ratio_of(values)
    if tolerances.is_within(new_ratio) or (ratio < 1.0 < new_ratio) or (ratio > 1.0 > new_ratio):
        return current_replicas
    new_replicas = math.ceil(new_ratio * float(len(values)))
    if (new_ratio < 1.0 and new_replicas > current_replicas) or (new_ratio > 1.0 and new_replicas < current_replicas):
        return current_replicas
    return new_replicas


def get_resource_replicas(
    current_replicas: int,
    target_utilization: int,
    resource: str,
    pods: Sequence[ListedPod],
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
    groups, values = _ready_values(pods, metrics, resource, now, cpu_initialization_period, initial_readiness_delay)
    requests = calculate_requests(pods, container, resource, pod_level_resources=pod_level_resources)
    ratio, utilization, raw = get_resource_utilization_ratio(values, requests, target_utilization)

    fallback = max(100, target_utilization)
    replicas = _rebalanced_replicas(
        ratio,
        values,
        groups,
        current_replicas,
        tolerances,
        missing_at=lambda name: go_quo(requests[name] * fallback, 100),
        ratio_of=lambda values: get_resource_utilization_ratio(values, requests, target_utilization)[0],
    )
    return ReplicaCalculation(replicas, raw, ratio, utilization, len(groups.unready), len(groups.missing))


def calc_plain_metric_replicas(
    metrics: Mapping[str, PodMetric],
    current_replicas: int,
    target_usage: int,
    pods: Sequence[ListedPod],
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
    groups, values = _ready_values(pods, metrics, resource, now, cpu_initialization_period, initial_readiness_delay)
    ratio, usage = get_metric_usage_ratio(values, target_usage)

    replicas = _rebalanced_replicas(
        ratio,
        values,
        groups,
        current_replicas,
        tolerances,
        missing_at=lambda name: target_usage,
        ratio_of=lambda values: get_metric_usage_ratio(values, target_usage)[0],
    )
    return ReplicaCalculation(replicas, usage, ratio, None, len(groups.unready), len(groups.missing))


def get_raw_resource_replicas(
    current_replicas: int,
    target_usage: int,
    resource: str,
    pods: Sequence[ListedPod],
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
    pods: Sequence[ListedPod],
    metrics: Mapping[str, PodMetric],
    now: int,
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetMetricReplicas`: a Pods metric; readiness is not consulted."""
    if not metrics:
        raise HPAMetricError(f"unable to get metric {metric_name}: no metrics returned from custom metrics API")
    return calc_plain_metric_replicas(metrics, current_replicas, target_usage, pods, "", now, tolerances=tolerances)


def get_ready_pods_count(pods: Sequence[ListedPod]) -> int:
    """Mirrors `ReplicaCalculator.getReadyPodsCount`: Running pods whose Ready condition is True."""
    if not pods:
        raise HPAMetricError("no pods returned by selector while calculating replica count")
    return sum(1 for p in pods if p.phase == PodPhase.RUNNING and p.ready == ConditionStatus.TRUE)


def get_usage_ratio_replica_count(
    current_replicas: int, usage_ratio: float, pods: Sequence[ListedPod], *, tolerances: Tolerances = DEFAULT_TOLERANCES
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
    pods: Sequence[ListedPod],
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetObjectMetricReplicas`: an Object metric with a Value target."""
    ratio = go_fdiv(float(usage), float(target_usage))
    replicas = get_usage_ratio_replica_count(current_replicas, ratio, pods, tolerances=tolerances)
    return ReplicaCalculation(replicas, usage, ratio)


def _per_pod(status_replicas: int, target_average: int, usage: int, tolerances: Tolerances) -> ReplicaCalculation:
    ratio = go_fdiv(float(usage), float(target_average) * float(status_replicas))
    replicas = status_replicas
    if not tolerances.is_within(ratio):
        replicas = _ceil_int32_saturated(go_fdiv(float(usage), float(target_average)))
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
    pods: Sequence[ListedPod],
    *,
    tolerances: Tolerances = DEFAULT_TOLERANCES,
) -> ReplicaCalculation:
    """Mirrors `ReplicaCalculator.GetExternalMetricReplicas`: the series are summed (saturating at MaxInt64)."""
    if not values:
        raise HPAMetricError("no metrics returned from external metrics API")
    usage = _saturating_sum(values)
    ratio = go_fdiv(float(usage), float(target_usage))
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
