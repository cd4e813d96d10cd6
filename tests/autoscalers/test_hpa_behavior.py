"""HPA normalisation and `behavior` against upstream's horizontal_test.go, case by case.

The cases restate upstream's data and expected values (kubernetes/kubernetes
pkg/controller/podautoscaler/horizontal_test.go). Upstream's harness, restated here:

- `generateScalingRules(pods, podsPeriod, percent, percentPeriod, window)` builds rules with
  selectPolicy Max and a Pods and/or a Percent policy (a zero value leaves that policy out);
- `generateEventsUniformDistribution(changes, period)` spreads the events over the last
  `period` seconds, each in the middle of its slice, the age truncated to whole seconds;
- `init()` sets the legacy scale-up limit factor to 8 (production: 2);
- the controller-level harness gives each pod two containers sharing its CPU request and its
  reported usage by integer halves, sets each pod's Ready transition to its start time, stamps
  samples now with a 1 min window, and runs the controller with a 2 min CPU initialisation
  period, a 10 s readiness delay, a 0.1 tolerance and a 5 min downscale stabilisation.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.autoscalers.hpa import (
    CPU,
    DEFAULT_TOLERANCE,
    AverageValueTarget,
    ConditionStatus,
    Container,
    ContainerResourceMetricSource,
    ExternalMetricSource,
    HPAControllerConfig,
    MetricReading,
    MetricSpec,
    ObjectMetricSource,
    Pod,
    PodMetric,
    PodPhase,
    PodsMetricSource,
    ResourceMetricSource,
    Tolerances,
    UtilizationTarget,
    ValueTarget,
    compute_replicas_for_metrics,
)
from skenario.autoscalers.hpa_behavior import (
    DEFAULT_SCALE_DOWN_RULES,
    DEFAULT_SCALE_UP_RULES,
    Behavior,
    PolicyType,
    ScalingPolicy,
    ScalingRules,
    SelectPolicy,
    generate_scale_down_rules,
    generate_scale_up_rules,
    maybe_init_scale_down_stabilization_window,
    set_defaults_behavior,
    tolerances_for_hpa,
)
from skenario.autoscalers.hpa_normalization import (
    SCALE_UP_LIMIT_FACTOR,
    ScaleEvent,
    TimestampedRecommendation,
    calculate_scale_down_limit_with_behaviors,
    calculate_scale_up_limit,
    calculate_scale_up_limit_with_scaling_rules,
    convert_desired_replicas_with_behavior_rate,
    convert_desired_replicas_with_rules,
    get_replicas_change_per_period,
    normalize_desired_replicas,
    normalize_desired_replicas_with_behaviors,
    stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
)
from skenario.autoscalers.hpa_reconcile import (
    HPAHistory,
    reconcile_desired_replicas,
    store_scale_event,
)
from skenario.core.time import HOUR, MINUTE, SECOND

NOW = 10 * HOUR
HARNESS_SCALE_UP_LIMIT_FACTOR = 8.0  # horizontal_test.go init()
TEST_CONFIG = HPAControllerConfig(cpu_initialization_period=2 * MINUTE, initial_readiness_delay=10 * SECOND)


def rules(pods: int, pods_period: int, percent: int, percent_period: int, window: int) -> ScalingRules:
    """generateScalingRules."""
    policies = []
    if pods:
        policies.append(ScalingPolicy(PolicyType.PODS, pods, pods_period))
    if percent:
        policies.append(ScalingPolicy(PolicyType.PERCENT, percent, percent_period))
    return ScalingRules(window, SelectPolicy.MAX, tuple(policies) if policies else None)


def uniform_events(changes: Sequence[int], period: int) -> tuple[ScaleEvent, ...]:
    """generateEventsUniformDistribution: event i aged period - slice*(i+1) + slice/2 seconds, truncated."""
    slice_ = period / len(changes)
    ages = [int(period - slice_ * (i + 1) + slice_ / 2) for i in range(len(changes))]
    return tuple(ScaleEvent(change, NOW - age * SECOND) for change, age in zip(changes, ages, strict=True))


def recs(*pairs: tuple[int, int]) -> tuple[TimestampedRecommendation, ...]:
    return tuple(TimestampedRecommendation(value, NOW - age) for value, age in pairs)


def test_uniform_events_match_upstream_comment() -> None:
    """Upstream's own picture: [1, 5, 9] over 120 s land 100, 60 and 20 s ago."""
    assert [NOW - e.timestamp for e in uniform_events([1, 5, 9], 120)] == [100 * SECOND, 60 * SECOND, 20 * SECOND]


# TestNormalizeDesiredReplicas (legacy stabilisation, 5 min window): name, history, new, expected, log length.
LEGACY_STABILIZATION_CASES = [
    ("empty log", (), 5, 5, 1),
    ("stabilize", ((4, 2 * MINUTE), (5, 1 * MINUTE)), 3, 5, 3),
    ("no stabilize", ((1, 2 * MINUTE), (2, 1 * MINUTE)), 3, 3, 3),
    ("no stabilize - old recommendations", ((10, 10 * MINUTE), (9, 9 * MINUTE)), 3, 3, 2),
    (
        "stabilize - old recommendations",
        ((10, 10 * MINUTE), (4, 1 * MINUTE), (5, 2 * MINUTE), (9, 9 * MINUTE)),
        3,
        5,
        4,
    ),
]


@pytest.mark.parametrize(
    ("history", "new", "expected", "length"),
    [c[1:] for c in LEGACY_STABILIZATION_CASES],
    ids=[c[0] for c in LEGACY_STABILIZATION_CASES],
)
def test_stabilize_recommendation(history: tuple[tuple[int, int], ...], new: int, expected: int, length: int) -> None:
    got, stored = stabilize_recommendation(recs(*history), new, NOW, 5 * MINUTE)
    assert got == expected
    assert len(stored) == length
    assert TimestampedRecommendation(new, NOW) in stored


G = rules  # short alias for the table below

# TestScalingWithRules: name, up events, down events, min, max, up rules, down rules, current, desired,
# expected replicas, expected reason.
SCALING_WITH_RULES_CASES = [
    ("prenormalized desired replicas within range", (), (), 3, 8, None, None, 5, 7, 7, "DesiredWithinRange"),
    ("prenormalized desired replicas < minReplicas", (), (), 2, 8, None, None, 3, 1, 2, "TooFewReplicas"),
    (
        "prenormalized desired replicas within range when minReplicas is 0",
        (),
        (),
        0,
        10,
        None,
        None,
        1,
        0,
        0,
        "DesiredWithinRange",
    ),
    (
        "maxReplicas is the limit because maxReplicas < scaleUpLimit",
        (),
        (),
        1,
        10,
        None,
        None,
        20,
        1000,
        10,
        "TooManyReplicas",
    ),
    (
        "desired replica count is more than the maximum replica count",
        (),
        (),
        100,
        150,
        None,
        None,
        100,
        1000,
        150,
        "TooManyReplicas",
    ),
    (
        "scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies",
        (),
        (),
        1,
        2000,
        G(0, 0, 1, 60, 0),
        None,
        3,
        1000,
        4,
        "ScaleUpLimit",
    ),
    # Skipped upstream (testThis); expected value by hand: 1000 - 20 pods per 60 s = 980.
    (
        "scaleDownLimit is the limit because scaleDownLimit > minReplicas with user defined policies",
        (),
        (),
        3,
        2000,
        None,
        G(20, 60, 0, 0, 0),
        1000,
        3,
        980,
        "ScaleDownLimit",
    ),
    ("scaleUp with default behavior", (), (), 1, 1000, None, None, 10, 50, 20, "ScaleUpLimit"),
    (
        "scaleUp with pods policy larger than percent policy",
        (),
        (),
        1,
        1000,
        G(100, 60, 100, 60, 0),
        None,
        10,
        500,
        110,
        "ScaleUpLimit",
    ),
    (
        "scaleUp with percent policy larger than pods policy",
        (),
        (),
        1,
        1000,
        G(2, 60, 100, 60, 0),
        None,
        10,
        500,
        20,
        "ScaleUpLimit",
    ),
    (
        "scaleUp with spec MaxReplicas limitation with large pod policy",
        (),
        (),
        1,
        1000,
        G(100, 60, 0, 0, 0),
        None,
        10,
        50,
        50,
        "DesiredWithinRange",
    ),
    (
        "scaleUp with spec MaxReplicas limitation with large percent policy",
        (),
        (),
        1,
        1000,
        G(10000, 60, 0, 0, 0),
        None,
        10,
        50,
        50,
        "DesiredWithinRange",
    ),
    ("scaleUp with pod policy limitation", (), (), 1, 1000, G(30, 60, 0, 0, 0), None, 10, 50, 40, "ScaleUpLimit"),
    ("scaleUp with percent policy limitation", (), (), 1, 1000, G(0, 0, 200, 60, 0), None, 10, 50, 30, "ScaleUpLimit"),
    (
        "scaleDown with percent policy larger than pod policy",
        (),
        (),
        1,
        1000,
        None,
        G(20, 60, 1, 60, 300),
        100,
        2,
        80,
        "ScaleDownLimit",
    ),
    (
        "scaleDown with pod policy larger than percent policy",
        (),
        (),
        1,
        1000,
        None,
        G(2, 60, 1, 60, 300),
        100,
        2,
        98,
        "ScaleDownLimit",
    ),
    (
        "scaleDown with spec MinReplicas=nil limitation with large pod policy",
        (),
        (),
        1,
        1000,
        None,
        G(100, 60, 0, 0, 300),
        10,
        0,
        1,
        "TooFewReplicas",
    ),
    (
        "scaleDown with spec MinReplicas limitation with large pod policy",
        (),
        (),
        1,
        1000,
        None,
        G(100, 60, 0, 0, 300),
        10,
        0,
        1,
        "TooFewReplicas",
    ),
    (
        "scaleDown with spec MinReplicas limitation with large percent policy",
        (),
        (),
        5,
        1000,
        None,
        G(0, 0, 100, 60, 300),
        10,
        2,
        5,
        "TooFewReplicas",
    ),
    ("scaleDown with pod policy limitation", (), (), 1, 1000, None, G(5, 60, 0, 0, 300), 10, 2, 5, "ScaleDownLimit"),
    (
        "scaleDown with percent policy limitation",
        (),
        (),
        1,
        1000,
        None,
        G(0, 0, 50, 60, 300),
        10,
        5,
        5,
        "DesiredWithinRange",
    ),
    (
        "scaleUp with spec MaxReplicas limitation with large pod policy and events",
        uniform_events([1, 5, 9], 120),
        (),
        1,
        200,
        G(300, 60, 0, 0, 0),
        None,
        100,
        500,
        200,
        "TooManyReplicas",
    ),
    (
        "scaleUp with spec MaxReplicas limitation with large percent policy and events",
        uniform_events([1, 5, 9], 120),
        (),
        1,
        200,
        G(0, 0, 10000, 60, 0),
        None,
        100,
        500,
        200,
        "TooManyReplicas",
    ),
    (
        "scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events",
        uniform_events([1, 5, 9], 120),
        (),
        1,
        1000,
        G(5, 120, 0, 0, 0),
        None,
        100,
        500,
        100,
        "ScaleUpLimit",
    ),
    (
        "scaleUp with pod policy and previous scale up events",
        uniform_events([1, 5, 9], 120),
        (),
        1,
        1000,
        G(150, 120, 0, 0, 0),
        None,
        100,
        500,
        235,
        "ScaleUpLimit",
    ),
    (
        "scaleUp with percent policy and previous scale up events",
        uniform_events([1, 5, 9], 120),
        (),
        1,
        1000,
        G(0, 0, 200, 120, 0),
        None,
        100,
        500,
        255,
        "ScaleUpLimit",
    ),
    (
        "scaleUp with percent policy and previous scale up and down events",
        uniform_events([4], 120),
        uniform_events([2], 120),
        1,
        1000,
        G(0, 0, 300, 300, 0),
        None,
        6,
        24,
        16,
        "ScaleUpLimit",
    ),
    (
        "scaleDown with default policy and previous events",
        (),
        uniform_events([1, 5, 9], 120),
        1,
        1000,
        None,
        None,
        10,
        5,
        5,
        "DesiredWithinRange",
    ),
    (
        "scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events",
        (),
        uniform_events([1, 5, 9], 120),
        1,
        1000,
        None,
        G(115, 120, 0, 0, 300),
        100,
        0,
        1,
        "TooFewReplicas",
    ),
    (
        "scaleDown with spec MinReplicas limitation with large pod policy and previous events",
        (),
        uniform_events([1, 5, 9], 120),
        5,
        1000,
        None,
        G(130, 120, 0, 0, 300),
        100,
        0,
        5,
        "TooFewReplicas",
    ),
    (
        "scaleDown with spec MinReplicas limitation with large percent policy and previous events",
        (),
        uniform_events([1, 5, 9], 120),
        5,
        1000,
        None,
        G(0, 0, 100, 120, 300),
        100,
        2,
        5,
        "TooFewReplicas",
    ),
    (
        "scaleDown with pod policy limitation and previous events",
        (),
        uniform_events([1, 5, 9], 120),
        1,
        1000,
        None,
        G(5, 120, 0, 0, 300),
        100,
        2,
        100,
        "ScaleDownLimit",
    ),
    (
        "scaleDown with percent policy limitation and previous events",
        (),
        uniform_events([2, 4, 6], 120),
        1,
        1000,
        None,
        G(0, 0, 50, 120, 300),
        100,
        0,
        56,
        "ScaleDownLimit",
    ),
    (
        "scaleDown with percent policy and previous scale up and down events",
        uniform_events([2], 120),
        uniform_events([4], 120),
        1,
        1000,
        None,
        G(0, 0, 50, 180, 0),
        10,
        1,
        6,
        "ScaleDownLimit",
    ),
    (
        "scaleDown with previous events preventing further scale down",
        (),
        uniform_events([10, 10, 10], 120),
        1,
        1000,
        None,
        G(0, 0, 10, 120, 300),
        100,
        0,
        100,
        "ScaleDownLimit",
    ),
    (
        "scaleDown with with previous events still allowing more scale down",
        (),
        uniform_events([10, 10, 10], 120),
        1,
        1000,
        None,
        G(0, 0, 1000, 120, 300),
        10,
        5,
        5,
        "DesiredWithinRange",
    ),
    (
        "check 'outdated' flag for events for one behavior for up",
        uniform_events([8, 12, 9, 11], 120),
        (),
        1,
        1000,
        G(1000, 60, 0, 0, 0),
        None,
        100,
        200,
        200,
        "DesiredWithinRange",
    ),
    (
        "check that events were not marked 'outdated' for two different policies in the behavior for up",
        uniform_events([8, 12, 9, 11], 120),
        (),
        1,
        1000,
        G(1000, 120, 100, 60, 0),
        None,
        100,
        200,
        200,
        "DesiredWithinRange",
    ),
    (
        "check that events were marked 'outdated' for two different policies in the behavior for up",
        uniform_events([8, 12, 9, 11], 120),
        (),
        1,
        1000,
        G(1000, 30, 100, 60, 0),
        None,
        100,
        200,
        200,
        "DesiredWithinRange",
    ),
    (
        "check 'outdated' flag for events for one behavior for down",
        (),
        uniform_events([8, 12, 9, 11], 120),
        1,
        1000,
        None,
        G(1000, 60, 0, 0, 300),
        100,
        5,
        5,
        "DesiredWithinRange",
    ),
    (
        "check that events were not marked 'outdated' for two different policies in the behavior for down",
        (),
        uniform_events([8, 12, 9, 11], 120),
        1,
        1000,
        None,
        G(1000, 120, 100, 60, 300),
        100,
        5,
        5,
        "DesiredWithinRange",
    ),
    (
        "check that events were marked 'outdated' for two different policies in the behavior for down",
        (),
        uniform_events([8, 12, 9, 11], 120),
        1,
        1000,
        None,
        G(1000, 30, 100, 60, 300),
        100,
        5,
        5,
        "DesiredWithinRange",
    ),
]


@pytest.mark.parametrize(
    (
        "up_events",
        "down_events",
        "min_r",
        "max_r",
        "up_rules",
        "down_rules",
        "current",
        "desired",
        "expected",
        "reason",
    ),
    [c[1:] for c in SCALING_WITH_RULES_CASES],
    ids=[c[0] for c in SCALING_WITH_RULES_CASES],
)
def test_scaling_with_rules(
    up_events: tuple[ScaleEvent, ...],
    down_events: tuple[ScaleEvent, ...],
    min_r: int,
    max_r: int,
    up_rules: ScalingRules | None,
    down_rules: ScalingRules | None,
    current: int,
    desired: int,
    expected: int,
    reason: str,
) -> None:
    got = convert_desired_replicas_with_behavior_rate(
        current,
        desired,
        min_r,
        max_r,
        generate_scale_up_rules(up_rules),
        generate_scale_down_rules(down_rules),
        up_events,
        down_events,
        NOW,
    )
    assert got == (expected, reason)


def ev(change: int, age_seconds: int, outdated: bool = False) -> ScaleEvent:
    return ScaleEvent(change, NOW - age_seconds * SECOND, outdated)


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


# TestNormalizeDesiredReplicasWithBehavior: name, history, current, desired, expected, stored values (None: not
# checked), up window s, down window s.
BEHAVIOR_STABILIZATION_CASES = [
    ("empty recommendations for scaling down", (), 100, 5, 5, [5], 0, 0),
    ("simple scale down stabilization", ((4, 2 * MINUTE), (5, MINUTE)), 100, 3, 5, [4, 5, 3], 0, 180),
    ("simple scale up stabilization", ((4, 2 * MINUTE), (5, MINUTE)), 1, 7, 4, [4, 5, 7], 300, 0),
    ("no scale down stabilization", ((1, 2 * MINUTE), (2, MINUTE)), 100, 3, 3, [1, 2, 3], 300, 0),
    ("no scale up stabilization", ((4, 2 * MINUTE), (5, MINUTE)), 1, 3, 3, [4, 5, 3], 0, 300),
    (
        "no scale down stabilization, reuse recommendation element",
        ((10, 10 * MINUTE), (9, 9 * MINUTE)),
        100,
        3,
        3,
        [10, 3],
        0,
        0,
    ),
    (
        "no scale up stabilization, reuse recommendation element",
        ((10, 10 * MINUTE), (9, 9 * MINUTE)),
        1,
        100,
        100,
        [10, 100],
        0,
        0,
    ),
    (
        "scale down stabilization, reuse one of obsolete recommendation element",
        ((10, 10 * MINUTE), (4, MINUTE), (5, 2 * MINUTE), (9, 9 * MINUTE)),
        100,
        3,
        5,
        [10, 4, 5, 3],
        0,
        180,
    ),
    (
        "scale up stabilization, reuse one of obsolete recommendation element",
        ((10, 100 * MINUTE), (6, MINUTE), (5, 2 * MINUTE), (9, 3 * MINUTE)),
        1,
        100,
        5,
        [100, 6, 5, 9],
        300,
        0,
    ),
    (
        "scale up and down stabilization, do not scale up when prenormalized rec goes down",
        ((2, 100 * MINUTE), (3, 3 * MINUTE)),
        2,
        1,
        2,
        None,
        300,
        300,
    ),
    (
        "scale up and down stabilization, do not scale down when prenormalized rec goes up",
        ((2, 100 * MINUTE), (1, 3 * MINUTE)),
        2,
        3,
        2,
        None,
        300,
        300,
    ),
]


@pytest.mark.parametrize(
    ("history", "current", "desired", "expected", "stored", "up_window", "down_window"),
    [c[1:] for c in BEHAVIOR_STABILIZATION_CASES],
    ids=[c[0] for c in BEHAVIOR_STABILIZATION_CASES],
)
def test_stabilize_recommendation_with_behaviors(
    history: tuple[tuple[int, int], ...],
    current: int,
    desired: int,
    expected: int,
    stored: list[int] | None,
    up_window: int,
    down_window: int,
) -> None:
    got, _, new_history = stabilize_recommendation_with_behaviors(
        recs(*history), current, desired, up_window, down_window, NOW
    )
    assert got == expected
    if stored is not None:
        assert [r.recommendation for r in new_history] == stored


# TestConvertDesiredReplicasWithRules, with the harness's scale-up limit factor of 8.
CONVERT_WITH_RULES_CASES = [
    ("prenormalized desired replicas within range", 5, 7, 3, 8, 7, "DesiredWithinRange"),
    ("prenormalized desired replicas < minReplicas", 3, 1, 2, 8, 2, "TooFewReplicas"),
    ("prenormalized desired zeroed replicas within range", 1, 0, 0, 10, 0, "DesiredWithinRange"),
    ("maxReplicas is the limit because maxReplicas < scaleUpLimit", 20, 1000, 1, 10, 10, "TooManyReplicas"),
    ("scaleUpLimit is the limit because scaleUpLimit < maxReplicas", 3, 1000, 1, 2000, 24, "ScaleUpLimit"),
]


@pytest.mark.parametrize(
    ("current", "desired", "min_r", "max_r", "expected", "reason"),
    [c[1:] for c in CONVERT_WITH_RULES_CASES],
    ids=[c[0] for c in CONVERT_WITH_RULES_CASES],
)
def test_convert_desired_replicas_with_rules(
    current: int, desired: int, min_r: int, max_r: int, expected: int, reason: str
) -> None:
    got = convert_desired_replicas_with_rules(
        current, desired, min_r, max_r, scale_up_limit_factor=HARNESS_SCALE_UP_LIMIT_FACTOR
    )
    assert got == (expected, reason)


def test_legacy_scale_up_limit_in_production() -> None:
    """Production doubles, or reaches 4: from 3, at most 6; from 1, at most 4; from 10, at most 20."""
    assert SCALE_UP_LIMIT_FACTOR == 2.0
    assert calculate_scale_up_limit(3) == 6
    assert calculate_scale_up_limit(1) == 4
    assert calculate_scale_up_limit(0) == 4
    assert convert_desired_replicas_with_rules(3, 1000, 1, 2000) == (6, "ScaleUpLimit")
    assert convert_desired_replicas_with_rules(10, 1000, 1, 2000) == (20, "ScaleUpLimit")


MIN_POLICIES = ScalingRules(
    300, SelectPolicy.MIN, (ScalingPolicy(PolicyType.PODS, 2, 60), ScalingPolicy(PolicyType.PERCENT, 50, 60))
)


def test_calculate_scale_up_limit_with_scaling_rules() -> None:
    """TestCalculateScaleUpLimitWithScalingRules: Min of 1+2 and ceil(1 x 1.5)."""
    assert calculate_scale_up_limit_with_scaling_rules(1, (), (), MIN_POLICIES, NOW) == 2


def test_calculate_scale_down_limit_with_behaviors() -> None:
    """TestCalculateScaleDownLimitWithBehaviors: Min change of 5-2 and int(5 x 0.5)."""
    assert calculate_scale_down_limit_with_behaviors(5, (), (), MIN_POLICIES, NOW) == 3


def test_disabled_select_policy_holds() -> None:
    disabled = ScalingRules(0, SelectPolicy.DISABLED, DEFAULT_SCALE_UP_RULES.policies)
    assert calculate_scale_up_limit_with_scaling_rules(7, (), (), disabled, NOW) == 7
    assert calculate_scale_down_limit_with_behaviors(7, (), (), disabled, NOW) == 7
    assert convert_desired_replicas_with_behavior_rate(7, 50, 1, 100, disabled, disabled, (), (), NOW) == (
        7,
        "ScaleUpLimit",
    )
    assert convert_desired_replicas_with_behavior_rate(7, 1, 1, 100, disabled, disabled, (), (), NOW) == (
        7,
        "ScaleDownLimit",
    )


def test_percent_policy_float_rounding() -> None:
    """Upstream multiplies in float64, and so do we: 50 x (1 + 10/100) is 55.00000000000001, so the
    scale-up limit is 56 (55 exactly); 5 x (1 - 80/100) is 0.9999999999999998, truncated to 0 (1 exactly)."""
    ten_up = ScalingRules(0, SelectPolicy.MAX, (ScalingPolicy(PolicyType.PERCENT, 10, 60),))
    assert calculate_scale_up_limit_with_scaling_rules(50, (), (), ten_up, NOW) == 56
    eighty_down = ScalingRules(0, SelectPolicy.MAX, (ScalingPolicy(PolicyType.PERCENT, 80, 60),))
    assert calculate_scale_down_limit_with_behaviors(5, (), (), eighty_down, NOW) == 0


def test_api_defaults() -> None:
    """defaults.go: scale up Max(4 pods, 100%) per 15 s, no window; scale down 100% per 15 s, window from the flag."""
    assert (
        ScalingRules(
            0, SelectPolicy.MAX, (ScalingPolicy(PolicyType.PODS, 4, 15), ScalingPolicy(PolicyType.PERCENT, 100, 15))
        )
        == DEFAULT_SCALE_UP_RULES
    )
    assert (
        ScalingRules(None, SelectPolicy.MAX, (ScalingPolicy(PolicyType.PERCENT, 100, 15),)) == DEFAULT_SCALE_DOWN_RULES
    )
    assert set_defaults_behavior(None) is None
    partial = set_defaults_behavior(Behavior(scale_down=ScalingRules(select_policy=SelectPolicy.DISABLED)))
    assert partial == Behavior(
        DEFAULT_SCALE_UP_RULES, ScalingRules(None, SelectPolicy.DISABLED, DEFAULT_SCALE_DOWN_RULES.policies)
    )
    # The worked example of the reference notes: from 3 toward 40, one sync every 15 s: 7, 14, 28, 40.
    history = HPAHistory(recommendations=())
    replicas, seen = 3, []
    for tick in range(4):
        result = reconcile_desired_replicas(
            history,
            current_replicas=replicas,
            metric_desired_replicas=40,
            min_replicas=1,
            max_replicas=100,
            behavior=Behavior(),
            now=NOW + tick * 15 * SECOND,
        )
        replicas, history = result.desired_replicas, result.history
        seen.append(replicas)
    assert seen == [7, 14, 28, 40]


def test_scale_down_window_from_the_flag() -> None:
    """maybeInitScaleDownStabilizationWindow: only a nil scale-down window takes the flag (in seconds)."""
    defaulted = set_defaults_behavior(Behavior())
    assert defaulted is not None
    filled = maybe_init_scale_down_stabilization_window(defaulted, 5 * MINUTE)
    assert filled.scale_down is not None and filled.scale_down.stabilization_window_seconds == 300
    own = Behavior(scale_down=ScalingRules(stabilization_window_seconds=60))
    assert maybe_init_scale_down_stabilization_window(own, 5 * MINUTE) == own
    # Through normalisation: a recommendation of 9 from 4 min ago holds a scale-down to 3 with the default
    # window, not with a 3 min one.
    history = recs((9, 4 * MINUTE))
    got = normalize_desired_replicas_with_behaviors(history, (), (), Behavior(), 10, 3, 1, 20, NOW)
    assert got.desired_replicas == 9
    short = Behavior(scale_down=ScalingRules(stabilization_window_seconds=180))
    assert normalize_desired_replicas_with_behaviors(history, (), (), short, 10, 3, 1, 20, NOW).desired_replicas == 3


def test_tolerances_for_hpa() -> None:
    """tolerancesForHpa: the flag for both directions, each overridden by behavior when the gate is on."""
    behavior = Behavior(scale_up=ScalingRules(tolerance=0.02), scale_down=ScalingRules(tolerance=0.2))
    assert tolerances_for_hpa(None) == Tolerances(DEFAULT_TOLERANCE, DEFAULT_TOLERANCE)
    assert tolerances_for_hpa(behavior) == Tolerances(scale_down=0.2, scale_up=0.02)
    assert tolerances_for_hpa(behavior, configurable_tolerance=False) == Tolerances(0.1, 0.1)
    assert tolerances_for_hpa(Behavior(scale_up=ScalingRules(tolerance=0.0)), 0.05) == Tolerances(0.05, 0.0)


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
        halves = tuple(Container(f"container{j}", {CPU: request // 2}) for j in (1, 2))
        ready = readiness[i] if readiness else ConditionStatus.TRUE
        pods.append(Pod(f"test-pod-{i}", PodPhase.RUNNING, ready, started, started, containers=halves))
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


@given(current=st.integers(1, 1000), desired=st.integers(0, 100_000))
def test_legacy_scale_up_at_most_double_or_four(current: int, desired: int) -> None:
    """Without behavior a single sync never more than doubles the count (or goes past 4)."""
    got = normalize_desired_replicas((), current, desired, 1, 100_000, NOW)
    assert got.desired_replicas <= max(2 * current, 4)
    assert got.desired_replicas == min(max(desired, 1), max(2 * current, 4))
