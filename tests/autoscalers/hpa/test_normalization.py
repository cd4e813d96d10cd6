"""HPA normalisation (stabilisation windows, `behavior` rate limits) against upstream's horizontal_test.go.

The cases restate upstream's data and expected values (kubernetes/kubernetes
pkg/controller/podautoscaler/horizontal_test.go); no test code is copied. Upstream's harness is
in `horizontal_harness`.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.autoscalers.hpa.behavior import (
    DEFAULT_SCALE_UP_RULES,
    PolicyType,
    ScalingPolicy,
    ScalingRules,
    SelectPolicy,
    generate_scale_down_rules,
    generate_scale_up_rules,
)
from skenario.autoscalers.hpa.normalization import (
    SCALE_UP_LIMIT_FACTOR,
    ScaleEvent,
    TimestampedRecommendation,
    calculate_scale_down_limit_with_behaviors,
    calculate_scale_up_limit,
    calculate_scale_up_limit_with_scaling_rules,
    convert_desired_replicas_with_behavior_rate,
    convert_desired_replicas_with_rules,
    normalize_desired_replicas,
    stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
)
from skenario.core.time import MINUTE, SECOND
from tests.autoscalers.hpa.horizontal_harness import HARNESS_SCALE_UP_LIMIT_FACTOR, NOW, recs, rules, uniform_events


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


# Properties.


@given(current=st.integers(1, 1000), desired=st.integers(0, 100_000))
def test_legacy_scale_up_at_most_double_or_four(current: int, desired: int) -> None:
    """Without behavior a single sync never more than doubles the count (or goes past 4)."""
    got = normalize_desired_replicas((), current, desired, 1, 100_000, NOW)
    assert got.desired_replicas <= max(2 * current, 4)
    assert got.desired_replicas == min(max(desired, 1), max(2 * current, 4))
