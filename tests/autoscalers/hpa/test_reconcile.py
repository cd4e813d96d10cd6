"""The HPA's decision at one sync and the history it keeps, against upstream's horizontal_test.go.

The cases restate upstream's data and expected values (kubernetes/kubernetes
pkg/controller/podautoscaler/horizontal_test.go); no test code is copied. Upstream's harness is
in `horizontal_harness`.

The controller-level cases run one sync through the pure functions in upstream's order.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.autoscalers.hpa.behavior import (
    Behavior,
    PolicyType,
    ScalingPolicy,
    ScalingRules,
    SelectPolicy,
    tolerances_for_hpa,
)
from skenario.autoscalers.hpa.metrics import compute_replicas_for_metrics
from skenario.autoscalers.hpa.normalization import ScaleEvent, TimestampedRecommendation, get_replicas_change_per_period
from skenario.autoscalers.hpa.reconcile import HPAHistory, reconcile_desired_replicas, store_scale_event
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
    UtilizationTarget,
    ValueTarget,
)
from skenario.core.time import MINUTE, SECOND
from tests.autoscalers.hpa.horizontal_harness import HARNESS_SCALE_UP_LIMIT_FACTOR, NOW, TEST_CONFIG, recs, rules


def ev(change: int, age_seconds: int, outdated: bool = False) -> ScaleEvent:
    return ScaleEvent(change, NOW - age_seconds * SECOND, outdated)


G = rules  # short alias for the table below

# TestStoreScaleEvents: name, stored events, rules (None: no behavior), expected (change, outdated) after,
# replicas changed in the last 60 s before storing.
STORE_SCALE_EVENTS_CASES = [
    ("empty entries with default behavior", (), None, [], 0),
    ("empty entries with two-policy-behavior", (), G(10, 60, 100, 60, 0), [(5, False)], 0),
    ("one outdated entry to be kept untouched without behavior", (ev(7, 61),), None, [(7, False)], 0),
    ("one outdated entry to be replaced with behavior", (ev(7, 61),), G(10, 60, 100, 60, 0), [(5, False)], 0),
    (
        "one actual entry to be not touched with behavior",
        (ev(7, 58),),
        G(10, 60, 100, 60, 0),
        [(7, False), (5, False)],
        7,
    ),
    (
        "two entries, one of them to be replaced",
        (ev(7, 61), ev(6, 59)),
        G(10, 60, 0, 0, 0),
        [(5, False), (6, False)],
        6,
    ),
    (
        "replace one entry, use policies with different periods",
        (ev(8, 29), ev(6, 59), ev(7, 61), ev(9, 61)),
        G(10, 60, 100, 30, 0),
        [(8, False), (6, False), (7, True), (5, False)],
        14,
    ),
    (
        "two entries, both actual",
        (ev(7, 58), ev(6, 59)),
        G(10, 120, 100, 30, 0),
        [(7, False), (6, False), (5, False)],
        13,
    ),
]


@pytest.mark.parametrize(
    ("stored", "scaling_rules", "expected", "change_before"),
    [c[1:] for c in STORE_SCALE_EVENTS_CASES],
    ids=[c[0] for c in STORE_SCALE_EVENTS_CASES],
)
def test_store_scale_events(
    stored: tuple[ScaleEvent, ...],
    scaling_rules: ScalingRules | None,
    expected: list[tuple[int, bool]],
    change_before: int,
) -> None:
    # Scale up from 10 by 5.
    assert get_replicas_change_per_period(60, stored, NOW) == change_before
    up = Behavior(scale_up=scaling_rules) if scaling_rules else None
    history = store_scale_event(up, HPAHistory(scale_up_events=stored), 10, 15, NOW)
    assert [(e.replica_change, e.outdated) for e in history.scale_up_events] == expected
    assert history.scale_down_events == ()
    # Scale down from 10 by 5.
    down = Behavior(scale_down=scaling_rules) if scaling_rules else None
    history = store_scale_event(down, HPAHistory(scale_down_events=stored), 10, 5, NOW)
    assert [(e.replica_change, e.outdated) for e in history.scale_down_events] == expected
    assert history.scale_up_events == ()


def test_new_hpa_cannot_scale_down_within_its_window() -> None:
    """recordInitialRecommendation: a first sync remembers the current count for the 5 min window."""
    first = reconcile_desired_replicas(
        HPAHistory(),
        current_replicas=10,
        metric_desired_replicas=2,
        min_replicas=1,
        max_replicas=20,
        behavior=None,
        now=NOW,
    )
    assert (first.desired_replicas, first.rescale) == (10, False)
    later = reconcile_desired_replicas(
        first.history,
        current_replicas=10,
        metric_desired_replicas=2,
        min_replicas=1,
        max_replicas=20,
        behavior=None,
        now=NOW + 5 * MINUTE + SECOND,
    )
    assert (later.desired_replicas, later.rescale) == (2, True)


def test_zero_replicas_disables_scaling() -> None:
    got = reconcile_desired_replicas(
        HPAHistory(),
        current_replicas=0,
        metric_desired_replicas=5,
        min_replicas=1,
        max_replicas=10,
        behavior=None,
        now=NOW,
    )
    assert (got.desired_replicas, got.rescale) == (0, False)


# The controller-level cases of horizontal_test.go, through the pure functions in upstream's order.
def controller_sync(
    *,
    min_replicas: int,
    max_replicas: int,
    spec_replicas: int,
    status_replicas: int,
    levels: Sequence[int],
    cpu_requests: Sequence[int] = (),
    cpu_target: int = 0,
    extra_specs: Sequence[MetricSpec] = (),
    extra_readings: Sequence[MetricReading | None] = (),
    readiness: Sequence[ConditionStatus] | None = None,
    start: Sequence[int] | None = None,
    up_rules: ScalingRules | None = None,
    down_rules: ScalingRules | None = None,
    recommendations: tuple[TimestampedRecommendation, ...] | None = None,
) -> int:
    count = len(cpu_requests) if cpu_requests else status_replicas
    pods = []
    for i in range(count):
        request = cpu_requests[i] if cpu_requests else 1000
        started = start[i] if start else 0
        halves = tuple(ListedContainer(f"container{j}", {CPU: request // 2}) for j in (1, 2))
        ready = readiness[i] if readiness else ConditionStatus.TRUE
        pods.append(ListedPod(f"test-pod-{i}", PodPhase.RUNNING, ready, started, started, containers=halves))
    samples = {f"test-pod-{i}": PodMetric(2 * (level // 2), NOW, MINUTE) for i, level in enumerate(levels)}
    specs: list[MetricSpec] = [ResourceMetricSource(CPU, UtilizationTarget(cpu_target))] if cpu_target else []
    readings: list[MetricReading | None] = [MetricReading(pod_metrics=samples)] if cpu_target else []
    specs += extra_specs
    readings += extra_readings
    behavior = Behavior(up_rules, down_rules) if up_rules or down_rules else None
    metrics = compute_replicas_for_metrics(
        specs,
        readings,
        spec_replicas=spec_replicas,
        status_replicas=status_replicas,
        pods=pods,
        now=NOW,
        tolerances=tolerances_for_hpa(behavior),
        config=TEST_CONFIG,
    )
    result = reconcile_desired_replicas(
        HPAHistory(recommendations=recommendations),
        current_replicas=spec_replicas,
        metric_desired_replicas=metrics.replicas,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
        behavior=behavior,
        now=NOW,
        downscale_stabilization=5 * MINUTE,
        scale_up_limit_factor=HARNESS_SCALE_UP_LIMIT_FACTOR,
    )
    return result.desired_replicas


HOT, COOL = NOW, NOW - 3 * MINUTE
T, F = ConditionStatus.TRUE, ConditionStatus.FALSE
QPS = PodsMetricSource("qps", AverageValueTarget(15000))
QPS_READINGS = [20000, 10000, 30000]


def qps(levels: Sequence[int]) -> list[MetricReading | None]:
    return [MetricReading(pod_metrics={f"test-pod-{i}": PodMetric(v, NOW) for i, v in enumerate(levels)})]


CONTROLLER_CASES: list[tuple[str, dict[str, object], int]] = [
    ("TestScaleUp", {"cpu_target": 30, "levels": [300, 500, 700], "cpu_requests": [1000] * 3}, 5),
    (
        "TestScaleUpContainer",
        {
            "levels": [300, 500, 700],
            "cpu_requests": [1000] * 3,
            "extra_specs": [ContainerResourceMetricSource(CPU, "container1", UtilizationTarget(30))],
            "extra_readings": [
                MetricReading(
                    pod_metrics={f"test-pod-{i}": PodMetric(v // 2, NOW, MINUTE) for i, v in enumerate([300, 500, 700])}
                )
            ],
        },
        5,
    ),
    ("TestScaleUpUnreadyLessScale", {"cpu_target": 30, "levels": [300, 500, 700], "readiness": [F, T, T]}, 4),
    ("TestScaleUpHotCpuLessScale", {"cpu_target": 30, "levels": [300, 500, 700], "start": [HOT, COOL, COOL]}, 4),
    ("TestScaleUpUnreadyNoScale", {"cpu_target": 30, "levels": [400, 500, 700], "readiness": [T, F, F]}, 3),
    (
        "TestScaleUpHotCpuNoScale",
        {"cpu_target": 30, "levels": [400, 500, 700], "readiness": [T, F, F], "start": [COOL, HOT, HOT]},
        3,
    ),
    ("TestScaleUpCM", {"levels": [], "extra_specs": [QPS], "extra_readings": qps(QPS_READINGS)}, 4),
    (
        "TestScaleUpCMUnreadyAndHotCpuNoLessScale",
        {
            "levels": [],
            "readiness": [T, T, F],
            "start": [COOL, COOL, HOT],
            "extra_specs": [QPS],
            "extra_readings": qps([50000, 10000, 30000]),
        },
        6,
    ),
    (
        "TestScaleUpCMUnreadyandCpuHot",
        {
            "levels": [],
            "readiness": [F, T, F],
            "start": [HOT, COOL, HOT],
            "extra_specs": [QPS],
            "extra_readings": qps([50000, 15000, 30000]),
        },
        6,
    ),
    (
        "TestScaleUpHotCpuNoScaleWouldScaleDown",
        {"levels": [], "start": [HOT, COOL, HOT], "extra_specs": [QPS], "extra_readings": qps([50000, 15000, 30000])},
        6,
    ),
    (
        "TestScaleUpCMObject",
        {
            "levels": [],
            "extra_specs": [ObjectMetricSource("qps", ValueTarget(15000), "Deployment/some-deployment")],
            "extra_readings": [MetricReading(value=20000)],
        },
        4,
    ),
    (
        "TestScaleUpPerPodCMObject",
        {
            "levels": [],
            "extra_specs": [ObjectMetricSource("qps", AverageValueTarget(10000), "Deployment/some-deployment")],
            "extra_readings": [MetricReading(value=40000)],
        },
        4,
    ),
    (
        "TestScaleUpOneMetricEmpty",
        {
            "cpu_target": 30,
            "levels": [300, 400, 500],
            "cpu_requests": [1000] * 3,
            "extra_specs": [ExternalMetricSource("qps", ValueTarget(100))],
            "extra_readings": [None],
        },
        4,
    ),
]


@pytest.mark.parametrize(
    ("overrides", "expected"), [c[1:] for c in CONTROLLER_CASES], ids=[c[0] for c in CONTROLLER_CASES]
)
def test_controller_scale_up_cases(overrides: dict[str, object], expected: int) -> None:
    """Scale-up cases with min 2, max 6 and 3 replicas (the harness's usual fixture)."""
    kwargs: dict[str, object] = {"min_replicas": 2, "max_replicas": 6, "spec_replicas": 3, "status_replicas": 3}
    kwargs.update(overrides)
    assert controller_sync(**kwargs) == expected  # type: ignore[arg-type]


DOWN_LEVELS = [100, 300, 500, 250, 250]


class CheddarCheese:
    """A metric source type the controller does not know (upstream's "CheddarCheese")."""

    name = "cheddar"
    target = ValueTarget(1)


def test_controller_no_scale_down_when_one_metric_is_invalid() -> None:
    """TestNoScaleDownOneMetricInvalid (unknown type) and TestNoScaleDownOneMetricEmpty (External
    metric unavailable, or no series): CPU alone would go 5 -> 3, so nothing changes."""
    cases: list[tuple[object, MetricReading | None]] = [
        (CheddarCheese(), MetricReading(value=20000)),
        (ExternalMetricSource("qps", ValueTarget(1000)), None),
        (ExternalMetricSource("qps", ValueTarget(1000)), MetricReading()),
    ]
    for spec, reading in cases:
        got = controller_sync(
            min_replicas=2,
            max_replicas=6,
            spec_replicas=5,
            status_replicas=5,
            cpu_target=50,
            levels=DOWN_LEVELS,
            cpu_requests=[1000] * 5,
            extra_specs=[spec],  # type: ignore[list-item]
            extra_readings=[reading],
            recommendations=(),
        )
        assert got == 5


def test_controller_stabilize_downscale() -> None:
    """TestStabilizeDownscale: metrics ask for 2; a 4 from 1 min ago holds the count at 4."""
    got = controller_sync(
        min_replicas=1,
        max_replicas=5,
        spec_replicas=4,
        status_replicas=4,
        cpu_target=100,
        levels=[50, 50, 50],
        cpu_requests=[100] * 3,
        recommendations=recs((10, 10 * MINUTE), (4, MINUTE)),
    )
    assert got == 4


def test_controller_scale_down_with_scaling_rules() -> None:
    """TestScaleDownWithScalingRules: scale-up rules only; scale-down takes the defaults; 5 -> 3."""
    got = controller_sync(
        min_replicas=2,
        max_replicas=6,
        spec_replicas=5,
        status_replicas=5,
        cpu_target=50,
        levels=DOWN_LEVELS,
        cpu_requests=[1000] * 5,
        up_rules=rules(0, 0, 100, 15, 30),
        recommendations=(),
    )
    assert got == 3


@pytest.mark.parametrize(
    ("max_replicas", "expected"), [(100, 24), (20, 20)], ids=["TestUpscaleCap", "TestUpscaleCapGreaterThanMaxReplicas"]
)
def test_controller_upscale_cap(max_replicas: int, expected: int) -> None:
    """CPU at 200% of a 10% target asks for 60; a 700% per 60 s policy allows 24 from 3."""
    got = controller_sync(
        min_replicas=1,
        max_replicas=max_replicas,
        spec_replicas=3,
        status_replicas=3,
        cpu_target=10,
        levels=[100, 200, 300],
        cpu_requests=[100] * 3,
        up_rules=rules(0, 0, 700, 60, 0),
    )
    assert got == expected


def test_controller_out_of_range_immediately() -> None:
    """TestScaleUpRCImmediately (1 < min 2) and TestScaleDownRCImmediately (6 > max 5): no metrics read."""
    assert controller_sync(min_replicas=2, max_replicas=6, spec_replicas=1, status_replicas=1, levels=[0] * 4) == 2
    got = controller_sync(
        min_replicas=2,
        max_replicas=5,
        spec_replicas=6,
        status_replicas=6,
        cpu_target=50,
        levels=[8000, 9500, 1000],
        cpu_requests=[900, 1000, 1100],
    )
    assert got == 5


def test_controller_computed_tolerance() -> None:
    """TestComputedToleranceAlgImplementation, controller level: halving makes requests 2998m for 1500m
    used (50%); target 56% scales 10 -> 9, target 55% (ratio 0.909) keeps 10."""
    requests = [400, 200, 310, 290, 302, 298, 301, 299, 300, 300]
    for target, expected in ((56, 9), (55, 10)):
        got = controller_sync(
            min_replicas=0,
            max_replicas=1000,
            spec_replicas=10,
            status_replicas=10,
            cpu_target=target,
            levels=[150] * 10,
            cpu_requests=requests,
            recommendations=(),
        )
        assert got == expected


# Properties.
POLICY_TYPES = st.sampled_from([PolicyType.PODS, PolicyType.PERCENT])
SELECTS = st.sampled_from([SelectPolicy.MAX, SelectPolicy.MIN, SelectPolicy.DISABLED, None])
POLICIES = st.lists(
    st.builds(ScalingPolicy, POLICY_TYPES, st.integers(1, 300), st.integers(1, 1800)), min_size=1, max_size=3
).map(tuple)
SCALING_RULES = st.builds(
    ScalingRules, st.one_of(st.none(), st.integers(0, 3600)), SELECTS, st.one_of(st.none(), POLICIES)
)
BEHAVIORS = st.one_of(
    st.none(), st.builds(Behavior, st.one_of(st.none(), SCALING_RULES), st.one_of(st.none(), SCALING_RULES))
)


@settings(max_examples=300)
@given(
    bounds=st.tuples(st.integers(0, 50), st.integers(0, 50)).map(sorted),
    behavior=BEHAVIORS,
    steps=st.lists(st.tuples(st.integers(1, 100), st.one_of(st.none(), st.integers(0, 500))), min_size=1, max_size=12),
    start=st.integers(1, 100),
)
def test_result_always_within_min_max(
    bounds: list[int], behavior: Behavior | None, steps: list[tuple[int, int | None]], start: int
) -> None:
    """Whatever the metrics say and whatever the history, a sync from a non-zero count lands in [min, max]."""
    min_r, max_r = bounds[0], max(bounds[1], 1)
    replicas, history, now = start, HPAHistory(), NOW
    for gap, desired in steps:
        now += gap * SECOND
        got = reconcile_desired_replicas(
            history,
            current_replicas=replicas,
            metric_desired_replicas=desired,
            min_replicas=min_r,
            max_replicas=max_r,
            behavior=behavior,
            now=now,
        )
        if desired is not None or not min_r <= replicas <= max_r:
            assert min_r <= got.desired_replicas <= max_r
        replicas, history = max(got.desired_replicas, 1), got.history


@settings(max_examples=200)
@given(
    policy=st.builds(ScalingPolicy, POLICY_TYPES, st.integers(1, 200), st.sampled_from([15, 30, 60, 120])),
    desired=st.lists(st.integers(1, 400), min_size=1, max_size=25),
    start=st.integers(1, 50),
)
def test_scale_up_never_faster_than_its_policy(policy: ScalingPolicy, desired: list[int], start: int) -> None:
    """Over any policy period, what was added never exceeds what the single scale-up policy allows
    from the count at the start of that period. Scale-down is disabled, syncs every 15 s."""
    behavior = Behavior(
        scale_up=ScalingRules(0, SelectPolicy.MAX, (policy,)),
        scale_down=ScalingRules(0, SelectPolicy.DISABLED),
    )
    replicas, history = start, HPAHistory()
    changes: list[tuple[int, int, int]] = []  # (time, replicas before, replicas after)
    for tick, want in enumerate(desired):
        now = NOW + tick * 15 * SECOND
        got = reconcile_desired_replicas(
            history,
            current_replicas=replicas,
            metric_desired_replicas=want,
            min_replicas=1,
            max_replicas=10_000,
            behavior=behavior,
            now=now,
        )
        assert got.desired_replicas >= replicas  # scale-down is disabled
        if got.desired_replicas > replicas:
            changes.append((now, replicas, got.desired_replicas))
        replicas, history = got.desired_replicas, got.history
    period = policy.period_seconds * SECOND
    for at, _, after in changes:
        in_window = [c for c in changes if at - period < c[0] <= at]
        added = sum(c[2] - c[1] for c in in_window)
        period_start = after - added
        if policy.type == PolicyType.PODS:
            assert added <= policy.value
        else:
            assert after <= -(-period_start * (100 + policy.value) // 100) + 1  # ceil, plus float slack


@settings(max_examples=200)
@given(
    pods=st.integers(1, 20),
    period=st.sampled_from([15, 30, 60, 120]),
    desired=st.lists(st.integers(0, 400), min_size=1, max_size=25),
    start=st.integers(1, 400),
)
def test_scale_down_never_faster_than_its_policy(pods: int, period: int, desired: list[int], start: int) -> None:
    """A Pods scale-down policy removes at most its value per period; scale-up is disabled."""
    behavior = Behavior(
        scale_up=ScalingRules(0, SelectPolicy.DISABLED),
        scale_down=ScalingRules(0, SelectPolicy.MAX, (ScalingPolicy(PolicyType.PODS, pods, period),)),
    )
    replicas, history = start, HPAHistory()
    removals: list[tuple[int, int]] = []
    for tick, want in enumerate(desired):
        now = NOW + tick * 15 * SECOND
        got = reconcile_desired_replicas(
            history,
            current_replicas=replicas,
            metric_desired_replicas=want,
            min_replicas=1,
            max_replicas=10_000,
            behavior=behavior,
            now=now,
        )
        assert got.desired_replicas <= replicas
        if got.desired_replicas < replicas:
            removals.append((now, replicas - got.desired_replicas))
        replicas, history = got.desired_replicas, got.history
    for at, _ in removals:
        assert sum(n for t, n in removals if at - period * SECOND < t <= at) <= pods
