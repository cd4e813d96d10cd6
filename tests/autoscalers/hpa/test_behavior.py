"""The HPA's `spec.behavior`: its API defaults, the flag's scale-down window, per-HPA tolerances.

The cases restate upstream's data and expected values (kubernetes/kubernetes
pkg/controller/podautoscaler/horizontal_test.go); no test code is copied. Upstream's harness is
in `horizontal_harness`.
"""

from __future__ import annotations

from skenario.autoscalers.hpa.behavior import (
    DEFAULT_SCALE_DOWN_RULES,
    DEFAULT_SCALE_UP_RULES,
    Behavior,
    PolicyType,
    ScalingPolicy,
    ScalingRules,
    SelectPolicy,
    maybe_init_scale_down_stabilization_window,
    set_defaults_behavior,
    tolerances_for_hpa,
)
from skenario.autoscalers.hpa.config import DEFAULT_TOLERANCE
from skenario.autoscalers.hpa.normalization import normalize_desired_replicas_with_behaviors
from skenario.autoscalers.hpa.reconcile import HPAHistory, reconcile_desired_replicas
from skenario.autoscalers.hpa.types import Tolerances
from skenario.core.time import MINUTE, SECOND
from tests.autoscalers.hpa.horizontal_harness import NOW, recs


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
