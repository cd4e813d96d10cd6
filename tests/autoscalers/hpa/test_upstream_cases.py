"""More upstream HPA cases, one sync at a time through skenario's pure calculators.

The cases restate upstream's data and expected values (kubernetes/kubernetes
pkg/controller/podautoscaler, horizontal_test.go and replica_calculator_test.go); no upstream code
is copied. Each test's docstring names the upstream test it restates.

horizontal_test.go drives the whole controller for one sync. Here that sync is the pure pipeline
skenario's controller runs: `compute_replicas_for_metrics` (every metric's proposal, the largest
wins, failed metrics block scale-downs) then `reconcile_desired_replicas` (scaling disabled at
zero, out-of-range counts brought into [min, max] without reading metrics, otherwise the legacy
normalisation: 5 min scale-down stabilisation, clamping to min/max and the scale-up limit).
Upstream's harness (`testCase`, `prepareTestClient`, `setupController`), restated:

- the controller runs with a 5 min downscale stabilisation window, a 0.1 tolerance, a 2 min CPU
  initialisation period and a 10 s initial readiness delay (production: 5 min and 30 s), and
  `init()` sets the legacy scale-up limit factor to 8 (production: 2);
- the scale's spec and status replicas are `specReplicas` and `statusReplicas`;
- the pod lister lists `len(reportedCPURequests)` pods when that slice is given (even empty),
  else `statusReplicas` pods; pod i is `test-pod-i`, Running and Ready unless
  `reportedPodPhase` / `reportedPodReadiness` say otherwise, started at `reportedPodStartTime[i]`
  (Go's zero time when not given) with its Ready condition last changed at that same time,
  deleted now when `reportedPodDeletionTimestamp[i]`; its CPU request (1.0 when not given) is
  split by integer halves over `container1` and `container2`;
- `reportedLevels` feed every metrics source: the metrics server reports `level / 2` (integer)
  per container, stamped now with a 1 min window (a Resource metric sums the two halves, a
  ContainerResource metric reads one); the custom metrics API reports `level` (milli-units) per
  pod for Pods metrics and `reportedLevels[0]` for an Object metric; the external metrics API one
  series per level;
- `CPUTarget > 0` puts a CPU Utilization metric first, then `metricsTarget`; no `behavior`, so
  the legacy normalisation applies;
- `recommendations: nil` leaves the controller's history empty, so the first sync records the
  current count (`recordInitialRecommendation`) and a scale-down waits out the window; an empty
  non-nil slice means a history without entries, so a scale-down happens at once;
- `expectedDesiredReplicas` is the count written to the scale (which is updated only if it differs
  from `specReplicas`) and to the status; `verifyCPUCurrent` checks the reported CPU utilisation,
  `CPUCurrent` or else `computeCPUCurrent` (100 x sum of levels / sum of requests, when there are
  as many levels as requests); `expectedConditions` defaults to `statusOk` (AbleToScale
  SucceededRescale, ScalingActive ValidMetricFound, ScalingLimited False DesiredWithinRange).

replica_calculator_test.go calls one calculator: each of a pod's two containers requests the
pod's request level and reports its metric level (so a pod's Resource metric is twice the level),
samples are stamped at Go's zero time with a 1 min window, and pods started at Go's zero time with
a Ready condition whose lastTransitionTime is unset (zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from skenario.autoscalers.hpa.config import HPAControllerConfig
from skenario.autoscalers.hpa.metrics import MetricsRecommendation, compute_replicas_for_metrics
from skenario.autoscalers.hpa.normalization import (
    DESIRED_WITHIN_RANGE,
    READY_FOR_NEW_SCALE,
    SCALE_DOWN_STABILIZED,
    TOO_FEW_REPLICAS,
    TOO_MANY_REPLICAS,
    TimestampedRecommendation,
)
from skenario.autoscalers.hpa.reconcile import HPAHistory, Reconciliation, reconcile_desired_replicas
from skenario.autoscalers.hpa.replicas import (
    get_external_metric_replicas,
    get_metric_replicas,
    get_resource_replicas,
    group_pods,
)
from skenario.autoscalers.hpa.types import (
    CPU,
    AverageValueTarget,
    ConditionStatus,
    ContainerResourceMetricSource,
    ExternalMetricSource,
    ListedContainer,
    ListedPod,
    MetricReading,
    MetricSpec,
    ObjectMetricSource,
    PodMetric,
    PodPhase,
    PodsMetricSource,
    ResourceMetricSource,
    Tolerances,
    UtilizationTarget,
    ValueTarget,
)
from skenario.core.time import HOUR, MINUTE, SECOND

NOW = 10 * HOUR
ZERO = 0  # Go's zero time, long before NOW
HOT = NOW  # hotCPUCreationTime(): started now
COOL = NOW - 3 * MINUTE  # coolCPUCreationTime(): started 3 min ago
T, F = ConditionStatus.TRUE, ConditionStatus.FALSE
RUN, FAILED = PodPhase.RUNNING, PodPhase.FAILED

# Upstream's test harness constants (defaultTesting* and init()); the product keeps the production defaults.
TEST_TOLERANCE = 0.1
TEST_CPU_INITIALIZATION_PERIOD = 2 * MINUTE
TEST_READINESS_DELAY = 10 * SECOND
TEST_DOWNSCALE_STABILIZATION = 5 * MINUTE
TEST_SCALE_UP_LIMIT_FACTOR = 8.0
TEST_CONFIG = HPAControllerConfig(
    tolerance=TEST_TOLERANCE,
    downscale_stabilization=TEST_DOWNSCALE_STABILIZATION,
    cpu_initialization_period=TEST_CPU_INITIALIZATION_PERIOD,
    initial_readiness_delay=TEST_READINESS_DELAY,
)

# Condition reasons the controller sets outside normalisation (horizontal.go).
SUCCEEDED_RESCALE = "SucceededRescale"  # AbleToScale, after the scale was updated
SUCCEEDED_GET_SCALE = "SucceededGetScale"  # AbleToScale, when the sync stopped before normalising
VALID_METRIC_FOUND = "ValidMetricFound"  # ScalingActive
INVALID_METRIC_SOURCE_TYPE = "InvalidMetricSourceType"  # ScalingActive False

R1 = 1000  # resource.MustParse("1.0"), in millicores
SCALE_DOWN_LEVELS = (100, 300, 500, 250, 250)


@dataclass(frozen=True)
class CheddarCheese:
    """A metric spec of a type the controller does not know: upstream's `{Type: "CheddarCheese"}`, nothing else set."""

    name: str = "CheddarCheese"
    target: None = None


@dataclass(frozen=True)
class ControllerCase:
    """One horizontal_test.go `testCase`, field by field (upstream's names, in snake case).

    `able_to_scale`, `scaling_active` and `scaling_limited` are the reasons of upstream's
    `expectedConditions`; None where upstream expects the condition not to be set.
    `metric_error` is upstream's reconciliation error label being Internal (some metric failed).
    """

    min_replicas: int
    max_replicas: int
    spec_replicas: int
    status_replicas: int
    expected_desired_replicas: int
    cpu_target: int = 0
    cpu_current: int = 0
    verify_cpu_current: bool = False
    reported_levels: tuple[int, ...] = ()
    reported_cpu_requests: tuple[int, ...] | None = None
    reported_pod_readiness: tuple[ConditionStatus, ...] | None = None
    reported_pod_start_time: tuple[int, ...] | None = None
    reported_pod_phase: tuple[PodPhase, ...] | None = None
    reported_pod_deletion_timestamp: tuple[bool, ...] | None = None
    metrics_target: tuple[object, ...] = ()
    recommendations: tuple[TimestampedRecommendation, ...] | None = None
    able_to_scale: str = SUCCEEDED_RESCALE
    scaling_active: str | None = VALID_METRIC_FOUND
    scaling_limited: str | None = DESIRED_WITHIN_RANGE
    metric_error: bool = False


def pod_name(i: int) -> str:
    return f"test-pod-{i}"


def list_pods(case: ControllerCase) -> list[ListedPod]:
    """The fake pod lister of `prepareTestClient`."""
    count = len(case.reported_cpu_requests) if case.reported_cpu_requests is not None else case.status_replicas
    pods = []
    for i in range(count):
        request = case.reported_cpu_requests[i] if case.reported_cpu_requests is not None else R1
        started = case.reported_pod_start_time[i] if case.reported_pod_start_time is not None else ZERO
        deleted = case.reported_pod_deletion_timestamp is not None and case.reported_pod_deletion_timestamp[i]
        pods.append(
            ListedPod(
                name=pod_name(i),
                phase=case.reported_pod_phase[i] if case.reported_pod_phase is not None else RUN,
                ready=case.reported_pod_readiness[i] if case.reported_pod_readiness is not None else T,
                ready_transition_time=started,
                start_time=started,
                deletion_time=NOW if deleted else None,
                containers=tuple(ListedContainer(name, {CPU: request // 2}) for name in ("container1", "container2")),
            )
        )
    return pods


def reading_for(spec: object, levels: Sequence[int]) -> MetricReading:
    """What upstream's fake metrics clients return for one metric spec."""
    if isinstance(spec, ResourceMetricSource):
        return MetricReading(
            pod_metrics={pod_name(i): PodMetric(2 * (level // 2), NOW, MINUTE) for i, level in enumerate(levels)}
        )
    if isinstance(spec, ContainerResourceMetricSource):
        return MetricReading(
            pod_metrics={pod_name(i): PodMetric(level // 2, NOW, MINUTE) for i, level in enumerate(levels)}
        )
    if isinstance(spec, PodsMetricSource):
        return MetricReading(pod_metrics={pod_name(i): PodMetric(level, NOW) for i, level in enumerate(levels)})
    if isinstance(spec, ObjectMetricSource):
        return MetricReading(value=levels[0])
    if isinstance(spec, ExternalMetricSource):
        return MetricReading(values=tuple(levels))
    return MetricReading()  # an unknown metric type: upstream queries nothing


def expected_cpu_current(case: ControllerCase) -> int:
    """`CPUCurrent`, or `computeCPUCurrent` when it is zero."""
    if case.cpu_current or case.reported_cpu_requests is None:
        return case.cpu_current
    if len(case.reported_levels) != len(case.reported_cpu_requests) or not case.reported_levels:
        return case.cpu_current
    return 100 * sum(case.reported_levels) // sum(case.reported_cpu_requests)


def sync(case: ControllerCase) -> tuple[MetricsRecommendation, Reconciliation]:
    """One reconcile of the test HPA: the metrics' recommendation, then the sync's decision."""
    specs: list[object] = [ResourceMetricSource(CPU, UtilizationTarget(case.cpu_target))] if case.cpu_target else []
    specs += case.metrics_target
    pods = list_pods(case)
    metrics = compute_replicas_for_metrics(
        cast("list[MetricSpec]", specs),
        [reading_for(spec, case.reported_levels) for spec in specs],
        spec_replicas=case.spec_replicas,
        status_replicas=case.status_replicas,
        pods=pods,
        now=NOW,
        config=TEST_CONFIG,
    )
    result = reconcile_desired_replicas(
        HPAHistory(recommendations=case.recommendations),
        current_replicas=case.spec_replicas,
        metric_desired_replicas=metrics.replicas,
        min_replicas=case.min_replicas,
        max_replicas=case.max_replicas,
        behavior=None,
        now=NOW,
        downscale_stabilization=TEST_DOWNSCALE_STABILIZATION,
        scale_up_limit_factor=TEST_SCALE_UP_LIMIT_FACTOR,
    )
    return metrics, result


def run_case(case: ControllerCase) -> None:
    """`runTest` and `verifyResults`: the desired count, whether the scale was written, the conditions."""
    metrics, result = sync(case)
    assert result.desired_replicas == case.expected_desired_replicas
    assert result.rescale == (case.spec_replicas != case.expected_desired_replicas)

    normalization = result.normalization
    if case.able_to_scale == SUCCEEDED_RESCALE:
        assert result.rescale
    elif case.able_to_scale == SUCCEEDED_GET_SCALE:
        assert not result.rescale
        assert normalization is None
    else:
        assert not result.rescale
        assert normalization is not None
        assert normalization.able_to_scale_reason == case.able_to_scale

    if case.scaling_limited is None:
        assert normalization is None
    else:
        assert normalization is not None
        assert normalization.limit_reason == case.scaling_limited
        assert normalization.scaling_limited == (case.scaling_limited != DESIRED_WITHIN_RANGE)

    if case.scaling_active == VALID_METRIC_FOUND:
        assert metrics.replicas is not None
        assert (metrics.error is not None) == case.metric_error
    elif case.scaling_active == INVALID_METRIC_SOURCE_TYPE:
        assert metrics.replicas is None
        assert metrics.error is not None and "unknown metric source type" in metrics.error

    if case.verify_cpu_current:
        [cpu] = [p for p in metrics.proposals if p is not None and isinstance(p.spec, ResourceMetricSource)]
        assert cpu.calculation.utilization == expected_cpu_current(case)


# Scale-downs (min 2, max 6, 5 replicas); `recommendations: []` so the window does not hold them.


def test_scale_down() -> None:
    """TestScaleDown: CPU at 28% of a 50% target over 5 pods scales 5 -> ceil(0.56 x 5) = 3."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=3,
            cpu_target=50,
            verify_cpu_current=True,
            reported_levels=SCALE_DOWN_LEVELS,
            reported_cpu_requests=(R1,) * 5,
            recommendations=(),
        )
    )


def test_scale_down_cm() -> None:
    """TestScaleDownCM: a Pods metric averaging 12 against 20 scales 5 -> 3."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=3,
            metrics_target=(PodsMetricSource("qps", AverageValueTarget(20000)),),
            reported_levels=(12000,) * 5,
            reported_cpu_requests=(R1,) * 5,
            recommendations=(),
        )
    )


def test_scale_down_cm_object() -> None:
    """TestScaleDownCMObject: an Object Value metric at 12 against 20, 5 ready pods: 5 -> ceil(0.6 x 5) = 3."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=3,
            metrics_target=(ObjectMetricSource("qps", ValueTarget(20000), "apps/v1/Deployment/some-deployment"),),
            reported_levels=(12000,),
            reported_cpu_requests=(R1,) * 5,
            recommendations=(),
        )
    )


def test_scale_down_per_pod_cm_object() -> None:
    """TestScaleDownPerPodCMObject: an Object AverageValue metric, 60 for 5 status replicas against 20 each: 3."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=3,
            metrics_target=(
                ObjectMetricSource("qps", AverageValueTarget(20000), "apps/v1/Deployment/some-deployment"),
            ),
            reported_levels=(60000,),
            reported_cpu_requests=(R1,) * 5,
            recommendations=(),
        )
    )


def test_scale_down_cm_external() -> None:
    """TestScaleDownCMExternal: an External Value metric, 8.6 against 14.4, 5 listed pods: ceil(2.99) = 3."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=3,
            metrics_target=(ExternalMetricSource("qps", ValueTarget(14400)),),
            reported_levels=(8600,),
            recommendations=(),
        )
    )


def test_scale_down_per_pod_cm_external() -> None:
    """TestScaleDownPerPodCMExternal: an External AverageValue metric, 8.6 against 3 per pod: ceil(2.87) = 3."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=3,
            metrics_target=(ExternalMetricSource("qps", AverageValueTarget(3000)),),
            reported_levels=(8600,),
            recommendations=(),
        )
    )


def test_scale_down_include_unready_pods() -> None:
    """TestScaleDownIncludeUnreadyPods: two never-ready pods are left out of the CPU average (30% of 3 pods): 2."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=2,
            cpu_target=50,
            cpu_current=30,
            verify_cpu_current=True,
            reported_levels=SCALE_DOWN_LEVELS,
            reported_cpu_requests=(R1,) * 5,
            reported_pod_readiness=(T, T, T, F, F),
            recommendations=(),
        )
    )


def test_scale_down_ignores_unready_pods() -> None:
    """TestScaleDownIgnoresUnreadyPods (the v2alpha1-era name of TestScaleDownIncludeUnreadyPods): 5 -> 2.

    Same data: 5 pods, the last two unready, CPU 30% of a 50% target over the 3 ready ones. That
    harness gave pods neither a start time nor a readiness transition time and had no stabilisation
    history; under today's `groupPods` a pod without a start time is unready for CPU, so the case is
    restated with today's harness (started at Go's zero time, Ready changed then) and an empty history.
    """
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=2,
            cpu_target=50,
            cpu_current=30,
            verify_cpu_current=True,
            reported_levels=SCALE_DOWN_LEVELS,
            reported_cpu_requests=(R1,) * 5,
            reported_pod_readiness=(T, T, T, F, F),
            recommendations=(),
        )
    )


def test_scale_down_ignore_hot_cpu_pods() -> None:
    """TestScaleDownIgnoreHotCpuPods: two pods started now (hot CPU) are left out of the average: 5 -> 2."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=2,
            cpu_target=50,
            cpu_current=30,
            verify_cpu_current=True,
            reported_levels=SCALE_DOWN_LEVELS,
            reported_cpu_requests=(R1,) * 5,
            reported_pod_start_time=(COOL, COOL, COOL, HOT, HOT),
            recommendations=(),
        )
    )


def test_scale_down_ignores_failed_pods() -> None:
    """TestScaleDownIgnoresFailedPods: 7 pods listed, 2 Failed are ignored; 28% over the 5 running: 3."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=3,
            cpu_target=50,
            cpu_current=28,
            verify_cpu_current=True,
            reported_levels=SCALE_DOWN_LEVELS,
            reported_cpu_requests=(R1,) * 7,
            reported_pod_readiness=(T, T, T, T, T, F, F),
            reported_pod_phase=(RUN,) * 5 + (FAILED,) * 2,
            recommendations=(),
        )
    )


def test_scale_down_ignores_deletion_pods() -> None:
    """TestScaleDownIgnoresDeletionPods: 7 running pods, 2 being deleted are ignored; 28% over 5: 3."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=3,
            cpu_target=50,
            cpu_current=28,
            verify_cpu_current=True,
            reported_levels=SCALE_DOWN_LEVELS,
            reported_cpu_requests=(R1,) * 7,
            reported_pod_readiness=(T, T, T, T, T, F, F),
            reported_pod_phase=(RUN,) * 7,
            reported_pod_deletion_timestamp=(False,) * 5 + (True,) * 2,
            recommendations=(),
        )
    )


def test_scale_down_container_resource() -> None:
    """TestScaleDownContainerResource: container2's CPU, 700m of its 2500m (28%) against 50%: 5 -> 3."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=3,
            metrics_target=(ContainerResourceMetricSource(CPU, "container2", UtilizationTarget(50)),),
            reported_levels=SCALE_DOWN_LEVELS,
            reported_cpu_requests=(R1,) * 5,
            recommendations=(),
        )
    )


def test_scale_down_stabilize_initial_size() -> None:
    """TestScaleDownStabilizeInitialSize: with no history, the first sync remembers 5, so the 5 min window holds 5."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=5,
            cpu_target=50,
            verify_cpu_current=True,
            reported_levels=SCALE_DOWN_LEVELS,
            reported_cpu_requests=(R1,) * 5,
            recommendations=None,
            able_to_scale=SCALE_DOWN_STABILIZED,
        )
    )
    metrics, result = sync(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            expected_desired_replicas=5,
            cpu_target=50,
            reported_levels=SCALE_DOWN_LEVELS,
            reported_cpu_requests=(R1,) * 5,
        )
    )
    # The metrics did ask for 3 (upstream's metric computation label is ScaleDown); the window held it.
    assert metrics.replicas == 3
    assert result.normalization is not None and result.normalization.stabilized_replicas == 5


# Tolerance: a usage ratio within 0.1 of 1 changes nothing (no history given, as upstream).


def test_tolerance() -> None:
    """TestTolerance: CPU 3060m of 3000m requested (102% of a 100% target) is within tolerance: stays 3."""
    run_case(
        ControllerCase(
            min_replicas=1,
            max_replicas=5,
            spec_replicas=3,
            status_replicas=3,
            expected_desired_replicas=3,
            cpu_target=100,
            reported_levels=(1010, 1030, 1020),
            reported_cpu_requests=(900, 1000, 1100),
            able_to_scale=READY_FOR_NEW_SCALE,
        )
    )


def test_tolerance_cm() -> None:
    """TestToleranceCM: a Pods metric averaging 20.333 against 20 is within tolerance: stays 3."""
    run_case(
        ControllerCase(
            min_replicas=1,
            max_replicas=5,
            spec_replicas=3,
            status_replicas=3,
            expected_desired_replicas=3,
            metrics_target=(PodsMetricSource("qps", AverageValueTarget(20000)),),
            reported_levels=(20000, 20001, 21000),
            reported_cpu_requests=(900, 1000, 1100),
            able_to_scale=READY_FOR_NEW_SCALE,
        )
    )


def test_tolerance_cm_object() -> None:
    """TestToleranceCMObject: an Object Value metric at 20.05 against 20 is within tolerance: stays 3."""
    run_case(
        ControllerCase(
            min_replicas=1,
            max_replicas=5,
            spec_replicas=3,
            status_replicas=3,
            expected_desired_replicas=3,
            metrics_target=(ObjectMetricSource("qps", ValueTarget(20000), "apps/v1/Deployment/some-deployment"),),
            reported_levels=(20050,),
            reported_cpu_requests=(900, 1000, 1100),
            able_to_scale=READY_FOR_NEW_SCALE,
        )
    )


def test_tolerance_cm_external() -> None:
    """TestToleranceCMExternal: an External Value metric at 8.6 against 8.666 is within tolerance: stays 4."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=4,
            status_replicas=4,
            expected_desired_replicas=4,
            metrics_target=(ExternalMetricSource("qps", ValueTarget(8666)),),
            reported_levels=(8600,),
            able_to_scale=READY_FOR_NEW_SCALE,
        )
    )


# Bounds.


def test_min_replicas() -> None:
    """TestMinReplicas: CPU at 3% of a 90% target asks for 1; clamped to minReplicas 2 (TooFewReplicas)."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=5,
            spec_replicas=3,
            status_replicas=3,
            expected_desired_replicas=2,
            cpu_target=90,
            reported_levels=(10, 95, 10),
            reported_cpu_requests=(900, 1000, 1100),
            recommendations=(),
            scaling_limited=TOO_FEW_REPLICAS,
        )
    )


def test_max_replicas() -> None:
    """TestMaxReplicas: CPU at 616% of a 90% target asks for 21; clamped to maxReplicas 5 (TooManyReplicas)."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=5,
            spec_replicas=3,
            status_replicas=3,
            expected_desired_replicas=5,
            cpu_target=90,
            reported_levels=(8000, 9500, 1000),
            reported_cpu_requests=(900, 1000, 1100),
            scaling_limited=TOO_MANY_REPLICAS,
        )
    )


def test_too_few_replicas() -> None:
    """TestTooFewReplicas: 2 replicas under minReplicas 3 go to 3 without reading metrics (no pods listed)."""
    run_case(
        ControllerCase(
            min_replicas=3,
            max_replicas=5,
            spec_replicas=2,
            status_replicas=2,
            expected_desired_replicas=3,
            cpu_target=90,
            reported_levels=(),
            reported_cpu_requests=(),
            scaling_active=None,
            scaling_limited=None,
        )
    )


def test_too_many_replicas() -> None:
    """TestTooManyReplicas: 10 replicas over maxReplicas 5 go to 5 without reading metrics (no pods listed)."""
    run_case(
        ControllerCase(
            min_replicas=3,
            max_replicas=5,
            spec_replicas=10,
            status_replicas=10,
            expected_desired_replicas=5,
            cpu_target=90,
            reported_levels=(),
            reported_cpu_requests=(),
            scaling_active=None,
            scaling_limited=None,
        )
    )


def test_more_replicas_than_spec_no_scale() -> None:
    """TestMoreReplicasThanSpecNoScale: a 25% surge (5 pods, spec 4) at exactly the 50% target keeps spec 4."""
    run_case(
        ControllerCase(
            min_replicas=1,
            max_replicas=8,
            spec_replicas=4,
            status_replicas=5,
            expected_desired_replicas=4,
            cpu_target=50,
            reported_levels=(500,) * 5,
            reported_cpu_requests=(R1,) * 5,
            able_to_scale=READY_FOR_NEW_SCALE,
        )
    )


# Scale-ups (min 2, max 6).


def test_scale_up_one_metric_invalid() -> None:
    """TestScaleUpOneMetricInvalid: an unknown metric type fails, CPU (40% of 30%) asks for 4 > 3: scales to 4."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=3,
            status_replicas=3,
            expected_desired_replicas=4,
            cpu_target=30,
            verify_cpu_current=True,
            metrics_target=(CheddarCheese(),),
            reported_levels=(300, 400, 500),
            reported_cpu_requests=(R1,) * 3,
            metric_error=True,
        )
    )


def test_scale_up_both_metrics_empty() -> None:
    """TestScaleUpBothMetricsEmpty: the only metric is of an unknown type: no scaling (InvalidMetricSourceType)."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=3,
            status_replicas=3,
            expected_desired_replicas=3,
            metrics_target=(CheddarCheese(),),
            reported_levels=(),
            reported_cpu_requests=(R1,) * 3,
            able_to_scale=SUCCEEDED_GET_SCALE,
            scaling_active=INVALID_METRIC_SOURCE_TYPE,
            scaling_limited=None,
        )
    )


def test_scale_up_cm_external() -> None:
    """TestScaleUpCMExternal: an External Value metric, 8.6 against 6.666, 3 ready pods: ceil(3.87) = 4."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=3,
            status_replicas=3,
            expected_desired_replicas=4,
            metrics_target=(ExternalMetricSource("qps", ValueTarget(6666)),),
            reported_levels=(8600,),
        )
    )


def test_scale_up_per_pod_cm_external() -> None:
    """TestScaleUpPerPodCMExternal: an External AverageValue metric, 8.6 against 2.222 per pod: ceil(3.87) = 4."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=3,
            status_replicas=3,
            expected_desired_replicas=4,
            metrics_target=(ExternalMetricSource("qps", AverageValueTarget(2222)),),
            reported_levels=(8600,),
        )
    )


def test_scale_up_ignores_failed_pods() -> None:
    """TestScaleUpIgnoresFailedPods: 4 pods listed, 2 Failed ignored; 60% of 30% over the 2 running: 2 -> 4."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=2,
            status_replicas=2,
            expected_desired_replicas=4,
            cpu_target=30,
            cpu_current=60,
            verify_cpu_current=True,
            reported_levels=(500, 700),
            reported_cpu_requests=(R1,) * 4,
            reported_pod_readiness=(T, T, F, F),
            reported_pod_phase=(RUN, RUN, FAILED, FAILED),
        )
    )


def test_scale_up_ignores_deletion_pods() -> None:
    """TestScaleUpIgnoresDeletionPods: 4 running pods, 2 being deleted ignored; 60% of 30% over 2: 2 -> 4."""
    run_case(
        ControllerCase(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=2,
            status_replicas=2,
            expected_desired_replicas=4,
            cpu_target=30,
            cpu_current=60,
            verify_cpu_current=True,
            reported_levels=(500, 700),
            reported_cpu_requests=(R1,) * 4,
            reported_pod_readiness=(T, T, F, F),
            reported_pod_phase=(RUN,) * 4,
            reported_pod_deletion_timestamp=(False, False, True, True),
        )
    )


# replica_calculator_test.go.


def calculator_pods(readiness: Sequence[ConditionStatus], request: int) -> list[ListedPod]:
    """replica_calculator_test.go's pod lister: each of the two containers requests `request`."""
    return [
        ListedPod(
            name=pod_name(i),
            ready=ready,
            ready_transition_time=ZERO,
            start_time=ZERO,
            containers=tuple(ListedContainer(name, {CPU: request}) for name in ("container1", "container2")),
        )
        for i, ready in enumerate(readiness)
    ]


def test_replica_calc_missing_metrics_unready_no_change() -> None:
    """TestReplicaCalcMissingMetricsUnreadyNoChange (renamed ...UnreadyChange upstream, same data): no change.

    3 pods of 2 x 1.0 CPU at a 50% target; pod 0 is unready (never ready), pod 1 reports 450m per
    container, pod 2 reports nothing. The ready pod alone is at 45% (ratio 0.9, a scale-down);
    counting the missing pod at 100% of its request gives (900 + 2000) / 4000 = 72%, a scale-up,
    so the direction flips and the count stays 3. Reported: utilization 45%, raw average 900m.
    """
    pods = calculator_pods([F, T, T], R1)
    metrics = {pod_name(i): PodMetric(2 * level, timestamp=ZERO, window=MINUTE) for i, level in enumerate([100, 450])}
    groups = group_pods(
        pods,
        metrics,
        CPU,
        NOW,
        cpu_initialization_period=TEST_CPU_INITIALIZATION_PERIOD,
        initial_readiness_delay=TEST_READINESS_DELAY,
    )
    assert groups.ready_count == 1
    assert groups.unready == frozenset({"test-pod-0"})
    assert groups.missing == frozenset({"test-pod-2"})
    got = get_resource_replicas(
        3,
        50,
        CPU,
        pods,
        metrics,
        NOW,
        tolerances=Tolerances(TEST_TOLERANCE, TEST_TOLERANCE),
        cpu_initialization_period=TEST_CPU_INITIALIZATION_PERIOD,
        initial_readiness_delay=TEST_READINESS_DELAY,
    )
    assert (got.replicas, got.utilization, got.usage) == (3, 45, 900)
    assert got.usage_ratio == 0.9


def test_replica_calc_scale_up_cm_external() -> None:
    """TestReplicaCalcScaleUpCMExternal: 8.6 against a 4.4 target from 1 replica scales to 2, usage 8.6.

    Upstream's case sets `metricType: podMetric`, so despite its name it runs the Pods-metric
    calculator (GetMetricReplicas) on the one pod's sample; it is restated that way. The External
    Value calculator, with the one pod ready, gives the same answer.
    """
    pods = calculator_pods([T], R1)
    tolerances = Tolerances(TEST_TOLERANCE, TEST_TOLERANCE)
    got = get_metric_replicas(1, 4400, "qps", pods, {pod_name(0): PodMetric(8600, ZERO)}, NOW, tolerances=tolerances)
    assert (got.replicas, got.usage) == (2, 8600)
    external = get_external_metric_replicas(1, 4400, [8600], pods, tolerances=tolerances)
    assert (external.replicas, external.usage) == (2, 8600)
