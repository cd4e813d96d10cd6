"""The HPA's `spec.behavior`: scaling rules and policies, their API defaults, per-HPA tolerances.

Restated from kubernetes/kubernetes `pkg/apis/autoscaling/v2/defaults.go` (the defaults) and
`pkg/controller/podautoscaler/horizontal.go` (`maybeInitScaleDownStabilizationWindow`,
`tolerancesForHpa`); no upstream code is copied. Each function's docstring names the upstream
function it mirrors. The windows and rate limits these rules set are applied in
`hpa.normalization`, the sync's decision is taken in `hpa.reconcile`. The API's windows and
periods are in seconds, as in a manifest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from skenario.autoscalers.hpa.config import DEFAULT_DOWNSCALE_STABILIZATION, DEFAULT_TOLERANCE
from skenario.autoscalers.hpa.types import Tolerances
from skenario.core.time import SECOND


class SelectPolicy(StrEnum):
    MAX = "Max"  # the policy allowing the most change
    MIN = "Min"  # the policy allowing the least change
    DISABLED = "Disabled"  # no change in this direction


class PolicyType(StrEnum):
    PODS = "Pods"
    PERCENT = "Percent"


@dataclass(frozen=True, slots=True)
class ScalingPolicy:
    """`HPAScalingPolicy`: change by at most `value` pods or percent per `period_seconds`."""

    type: PolicyType
    value: int
    period_seconds: int


@dataclass(frozen=True, slots=True)
class ScalingRules:
    """`HPAScalingRules` for one direction; None fields take the API defaults."""

    stabilization_window_seconds: int | None = None
    select_policy: SelectPolicy | None = None
    policies: tuple[ScalingPolicy, ...] | None = None
    tolerance: float | None = None


@dataclass(frozen=True, slots=True)
class Behavior:
    """`HorizontalPodAutoscalerBehavior`: `spec.behavior` of an autoscaling/v2 HPA."""

    scale_up: ScalingRules | None = None
    scale_down: ScalingRules | None = None


# defaults.go: scale up by the larger of 4 pods or 100% per 15 s, with no window; scale down by up
# to 100% per 15 s, the window left nil for the controller's --horizontal-pod-autoscaler-downscale-stabilization.
DEFAULT_SCALE_UP_RULES = ScalingRules(
    stabilization_window_seconds=0,
    select_policy=SelectPolicy.MAX,
    policies=(ScalingPolicy(PolicyType.PODS, 4, 15), ScalingPolicy(PolicyType.PERCENT, 100, 15)),
)
DEFAULT_SCALE_DOWN_RULES = ScalingRules(
    stabilization_window_seconds=None,
    select_policy=SelectPolicy.MAX,
    policies=(ScalingPolicy(PolicyType.PERCENT, 100, 15),),
)


def _copy_scaling_rules(source: ScalingRules | None, defaults: ScalingRules) -> ScalingRules:
    """Mirrors `copyHPAScalingRules`: every field the user set wins over the default."""
    if source is None:
        return defaults
    return ScalingRules(
        stabilization_window_seconds=(
            source.stabilization_window_seconds
            if source.stabilization_window_seconds is not None
            else defaults.stabilization_window_seconds
        ),
        select_policy=source.select_policy if source.select_policy is not None else defaults.select_policy,
        policies=source.policies if source.policies is not None else defaults.policies,
        tolerance=source.tolerance if source.tolerance is not None else defaults.tolerance,
    )


def generate_scale_up_rules(rules: ScalingRules | None) -> ScalingRules:
    """Mirrors `GenerateHPAScaleUpRules`: the user's scale-up rules over the API defaults."""
    return _copy_scaling_rules(rules, DEFAULT_SCALE_UP_RULES)


def generate_scale_down_rules(rules: ScalingRules | None) -> ScalingRules:
    """Mirrors `GenerateHPAScaleDownRules`; the window may stay None (the controller fills it)."""
    return _copy_scaling_rules(rules, DEFAULT_SCALE_DOWN_RULES)


def set_defaults_behavior(behavior: Behavior | None) -> Behavior | None:
    """Mirrors `SetDefaults_HorizontalPodAutoscalerBehavior`: defaults only when `behavior` is set."""
    if behavior is None:
        return None
    return Behavior(generate_scale_up_rules(behavior.scale_up), generate_scale_down_rules(behavior.scale_down))


def maybe_init_scale_down_stabilization_window(
    behavior: Behavior, downscale_stabilization: int = DEFAULT_DOWNSCALE_STABILIZATION
) -> Behavior:
    """Mirrors `maybeInitScaleDownStabilizationWindow`: a nil scale-down window takes the controller flag."""
    down = behavior.scale_down
    if down is not None and down.stabilization_window_seconds is None:
        window = int(downscale_stabilization // SECOND)
        return replace(behavior, scale_down=replace(down, stabilization_window_seconds=window))
    return behavior


def tolerances_for_hpa(
    behavior: Behavior | None, tolerance: float = DEFAULT_TOLERANCE, *, configurable_tolerance: bool = True
) -> Tolerances:
    """Mirrors `HorizontalController.tolerancesForHpa`: the flag, overridden per direction by `behavior`.

    `configurable_tolerance` is the HPAConfigurableTolerance gate (alpha in 1.33, beta and on by
    default later); when off, per-HPA tolerances are ignored.
    """
    result = Tolerances(tolerance, tolerance)
    if behavior is None or not configurable_tolerance:
        return result
    if behavior.scale_down is not None and behavior.scale_down.tolerance is not None:
        result = replace(result, scale_down=behavior.scale_down.tolerance)
    if behavior.scale_up is not None and behavior.scale_up.tolerance is not None:
        result = replace(result, scale_up=behavior.scale_up.tolerance)
    return result
