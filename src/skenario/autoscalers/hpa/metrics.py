"""The Horizontal Pod Autoscaler's metric combination: one proposal per metric, the largest wins.

Restated from kubernetes/kubernetes `pkg/controller/podautoscaler/horizontal.go`
(`computeReplicasForMetrics` and the `computeStatusFor*Metric` it calls); no upstream code is
copied. Each function's docstring names the upstream function it mirrors. The plain data lives in
`hpa.types`, the per-metric replica calculator (`replica_calculator.go`) in `hpa.replicas` and the
controller's flags in `hpa.config`. Stabilisation windows, `behavior` rate limits and the
reconcile step live in `hpa.behavior`, `hpa.normalization` and `hpa.reconcile`.

Plain data in, plain data out: the caller lists the pods the HPA's selector matches and the
samples the metrics pipeline holds, and passes `now`, so a user can unit-test an HPA setting
without a cluster or a simulation. Units are those of `hpa.types` (integer milli-units and
nanoseconds). The arithmetic is upstream's to the bit: integer percentages truncated, ratios in
float64, `ceil` on the float product.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skenario.autoscalers.hpa.config import DEFAULT_CONTROLLER_CONFIG, HPAControllerConfig
from skenario.autoscalers.hpa.replicas import (
    get_external_metric_replicas,
    get_external_per_pod_metric_replicas,
    get_metric_replicas,
    get_object_metric_replicas,
    get_object_per_pod_metric_replicas,
    get_raw_resource_replicas,
    get_resource_replicas,
)
from skenario.autoscalers.hpa.types import (
    AverageValueTarget,
    ContainerResourceMetricSource,
    ExternalMetricSource,
    HPAMetricError,
    ListedPod,
    MetricReading,
    MetricSpec,
    ObjectMetricSource,
    PodMetric,
    PodsMetricSource,
    ReplicaCalculation,
    ResourceMetricSource,
    Tolerances,
    UtilizationTarget,
    ValueTarget,
)


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
    pods: Sequence[ListedPod],
    now: int,
    tolerances: Tolerances | None = None,
    config: HPAControllerConfig = DEFAULT_CONTROLLER_CONFIG,
) -> MetricProposal:
    """Mirrors `HorizontalController.computeReplicasForMetric` and the `computeStatusFor*Metric` it calls.

    Resource, ContainerResource, Pods and Value targets start from the scale's spec replicas;
    Object and External AverageValue targets from its status replicas. A None reading is a
    metric the pipeline could not supply. `tolerances` default to the controller flag in `config`
    (see `hpa.behavior.tolerances_for_hpa` for per-HPA ones). Raises HPAMetricError when the
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
    pods: Sequence[ListedPod],
    now: int,
    tolerances: Tolerances | None = None,
    config: HPAControllerConfig = DEFAULT_CONTROLLER_CONFIG,
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
