"""The Horizontal Pod Autoscaler's normalisation: stabilisation windows, rate limits, `behavior`.

Restated from kubernetes/kubernetes `pkg/controller/podautoscaler/horizontal.go` (the
normalisation half of `reconcileAutoscaler`) and `pkg/apis/autoscaling/v2/defaults.go`; no
upstream code is copied. Each function's docstring names the upstream function it mirrors.

Upstream keeps, per HPA and in memory only, the recent unstabilised recommendations and the
recent scale events. Here that state is an immutable `HPAHistory` passed in and returned, so every
function is pure and a controller can run the same code on a simulated or a wall clock. Times
are integer nanoseconds; the API's windows and periods are in seconds, as in a manifest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum

from skenario.autoscalers.hpa import DEFAULT_DOWNSCALE_STABILIZATION, DEFAULT_TOLERANCE, MAX_INT32, Tolerances
from skenario.core.time import SECOND

# horizontal.go: without `behavior`, a sync may at most double the replicas, or reach 4.
SCALE_UP_LIMIT_FACTOR = 2.0
SCALE_UP_LIMIT_MINIMUM = 4.0

# Condition reasons, as upstream reports them on the HPA.
READY_FOR_NEW_SCALE = "ReadyForNewScale"
SCALE_UP_STABILIZED = "ScaleUpStabilized"
SCALE_DOWN_STABILIZED = "ScaleDownStabilized"
DESIRED_WITHIN_RANGE = "DesiredWithinRange"
TOO_FEW_REPLICAS = "TooFewReplicas"
TOO_MANY_REPLICAS = "TooManyReplicas"
SCALE_UP_LIMIT = "ScaleUpLimit"
SCALE_DOWN_LIMIT = "ScaleDownLimit"


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


@dataclass(frozen=True, slots=True)
class TimestampedRecommendation:
    """An unstabilised recommendation and when it was made."""

    recommendation: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class ScaleEvent:
    """A rescale in one direction: by how many replicas (non-negative), when, and whether reusable."""

    replica_change: int
    timestamp: int
    outdated: bool = False


@dataclass(frozen=True, slots=True)
class HPAHistory:
    """What upstream keeps in memory per HPA. `recommendations` None: never synced."""

    recommendations: tuple[TimestampedRecommendation, ...] | None = None
    scale_up_events: tuple[ScaleEvent, ...] = ()
    scale_down_events: tuple[ScaleEvent, ...] = ()


def record_initial_recommendation(history: HPAHistory, current_replicas: int, now: int) -> HPAHistory:
    """Mirrors `recordInitialRecommendation`: a new HPA remembers the current count, so it cannot
    scale down within its first stabilisation window."""
    if history.recommendations is None:
        return replace(history, recommendations=(TimestampedRecommendation(current_replicas, now),))
    return history


def _store(
    recs: tuple[TimestampedRecommendation, ...], old_index: int | None, new: TimestampedRecommendation
) -> tuple[TimestampedRecommendation, ...]:
    if old_index is None:
        return (*recs, new)
    return (*recs[:old_index], new, *recs[old_index + 1 :])


def stabilize_recommendation(
    recommendations: tuple[TimestampedRecommendation, ...],
    prenormalized_desired_replicas: int,
    now: int,
    downscale_stabilization: int = DEFAULT_DOWNSCALE_STABILIZATION,
) -> tuple[int, tuple[TimestampedRecommendation, ...]]:
    """Mirrors `HorizontalController.stabilizeRecommendation` (no `behavior`).

    Returns the largest recommendation of the window (so scale-downs wait it out, scale-ups do
    not) and the history with the new recommendation in the last expired slot, or appended.
    """
    cutoff = now - downscale_stabilization
    best = prenormalized_desired_replicas
    old_index: int | None = None
    for i, rec in enumerate(recommendations):
        if rec.timestamp < cutoff:
            old_index = i
        elif rec.recommendation > best:
            best = rec.recommendation
    new = TimestampedRecommendation(prenormalized_desired_replicas, now)
    return best, _store(recommendations, old_index, new)


def calculate_scale_up_limit(
    current_replicas: int, *, factor: float = SCALE_UP_LIMIT_FACTOR, minimum: float = SCALE_UP_LIMIT_MINIMUM
) -> int:
    """Mirrors `calculateScaleUpLimit`: max(factor x current, minimum), truncated."""
    return int(max(factor * float(current_replicas), minimum))


def convert_desired_replicas_with_rules(
    current_replicas: int,
    desired_replicas: int,
    min_replicas: int,
    max_replicas: int,
    *,
    scale_up_limit_factor: float = SCALE_UP_LIMIT_FACTOR,
    scale_up_limit_minimum: float = SCALE_UP_LIMIT_MINIMUM,
) -> tuple[int, str]:
    """Mirrors `convertDesiredReplicasWithRules`: clamp to [min, min(max, scale-up limit)], with the reason."""
    scale_up_limit = calculate_scale_up_limit(
        current_replicas, factor=scale_up_limit_factor, minimum=scale_up_limit_minimum
    )
    if max_replicas > scale_up_limit:
        maximum, reason = scale_up_limit, SCALE_UP_LIMIT
    else:
        maximum, reason = max_replicas, TOO_MANY_REPLICAS
    if desired_replicas < min_replicas:
        return min_replicas, TOO_FEW_REPLICAS
    if desired_replicas > maximum:
        return maximum, reason
    return desired_replicas, DESIRED_WITHIN_RANGE


@dataclass(frozen=True, slots=True)
class Normalization:
    """The outcome of normalising a sync's desired replicas, with the conditions upstream sets.

    `able_to_scale_reason` is ReadyForNewScale or Scale{Up,Down}Stabilized; `limit_reason`
    explains the ScalingLimited condition, true when `scaling_limited`.
    """

    desired_replicas: int
    stabilized_replicas: int
    able_to_scale_reason: str
    limit_reason: str
    scaling_limited: bool
    recommendations: tuple[TimestampedRecommendation, ...]


def normalize_desired_replicas(
    recommendations: tuple[TimestampedRecommendation, ...],
    current_replicas: int,
    prenormalized_desired_replicas: int,
    min_replicas: int,
    max_replicas: int,
    now: int,
    *,
    downscale_stabilization: int = DEFAULT_DOWNSCALE_STABILIZATION,
    scale_up_limit_factor: float = SCALE_UP_LIMIT_FACTOR,
    scale_up_limit_minimum: float = SCALE_UP_LIMIT_MINIMUM,
) -> Normalization:
    """Mirrors `HorizontalController.normalizeDesiredReplicas`: the legacy path, for HPAs without `behavior`.

    A 5 min (flag) scale-down window, no scale-up window, no scale-down rate limit, and a
    scale-up limit of max(2 x current, 4) per sync.
    """
    stabilized, recs = stabilize_recommendation(
        recommendations, prenormalized_desired_replicas, now, downscale_stabilization
    )
    able = SCALE_DOWN_STABILIZED if stabilized != prenormalized_desired_replicas else READY_FOR_NEW_SCALE
    desired, reason = convert_desired_replicas_with_rules(
        current_replicas,
        stabilized,
        min_replicas,
        max_replicas,
        scale_up_limit_factor=scale_up_limit_factor,
        scale_up_limit_minimum=scale_up_limit_minimum,
    )
    return Normalization(desired, stabilized, able, reason, desired != stabilized, recs)


def stabilize_recommendation_with_behaviors(
    recommendations: tuple[TimestampedRecommendation, ...],
    current_replicas: int,
    desired_replicas: int,
    scale_up_window_seconds: int,
    scale_down_window_seconds: int,
    now: int,
) -> tuple[int, str, tuple[TimestampedRecommendation, ...]]:
    """Mirrors `HorizontalController.stabilizeRecommendationWithBehaviors`.

    Moves the current count toward the recommendation but never past the lowest recommendation
    of the scale-up window nor the highest of the scale-down window (a recommendation counts if
    strictly younger than the window). Stores the unstabilised recommendation in the last slot
    older than both windows, or appends it. Returns (replicas, reason, history).
    """
    up_cutoff = now - scale_up_window_seconds * SECOND
    down_cutoff = now - scale_down_window_seconds * SECOND
    up = desired_replicas
    down = desired_replicas
    old_index: int | None = None
    for i, rec in enumerate(recommendations):
        if rec.timestamp > up_cutoff:
            up = min(rec.recommendation, up)
        if rec.timestamp > down_cutoff:
            down = max(rec.recommendation, down)
        if rec.timestamp < up_cutoff and rec.timestamp < down_cutoff:
            old_index = i
    recommendation = max(current_replicas, up)
    recommendation = min(recommendation, down)
    recs = _store(recommendations, old_index, TimestampedRecommendation(desired_replicas, now))
    reason = SCALE_UP_STABILIZED if desired_replicas >= current_replicas else SCALE_DOWN_STABILIZED
    return recommendation, reason, recs


def get_replicas_change_per_period(period_seconds: int, scale_events: tuple[ScaleEvent, ...], now: int) -> int:
    """Mirrors `getReplicasChangePerPeriod`: replicas changed by events strictly younger than the period."""
    cutoff = now - period_seconds * SECOND
    return sum(e.replica_change for e in scale_events if e.timestamp > cutoff)


def _policy_proposals(
    current_replicas: int,
    scale_up_events: tuple[ScaleEvent, ...],
    scale_down_events: tuple[ScaleEvent, ...],
    rules: ScalingRules,
    now: int,
    up: bool,
) -> list[int]:
    proposals = []
    for policy in rules.policies or ():
        added = get_replicas_change_per_period(policy.period_seconds, scale_up_events, now)
        removed = get_replicas_change_per_period(policy.period_seconds, scale_down_events, now)
        period_start = current_replicas - added + removed
        if policy.type == PolicyType.PODS:
            proposals.append(period_start + policy.value if up else period_start - policy.value)
        elif up:
            # Rounded up, or a small percentage of a small count would never add a replica.
            proposals.append(math.ceil(float(period_start) * (1 + float(policy.value) / 100)))
        else:
            proposals.append(int(float(period_start) * (1 - float(policy.value) / 100)))
    return proposals


def calculate_scale_up_limit_with_scaling_rules(
    current_replicas: int,
    scale_up_events: tuple[ScaleEvent, ...],
    scale_down_events: tuple[ScaleEvent, ...],
    rules: ScalingRules,
    now: int,
) -> int:
    """Mirrors `calculateScaleUpLimitWithScalingRules`: the most replicas the policies allow now.

    Each policy starts from the count at the start of its period (current minus what was added
    plus what was removed since); Max takes the largest proposal, Min the smallest.
    """
    if rules.select_policy == SelectPolicy.DISABLED:
        return current_replicas
    proposals = _policy_proposals(current_replicas, scale_up_events, scale_down_events, rules, now, up=True)
    if rules.select_policy == SelectPolicy.MIN:
        return min(proposals, default=MAX_INT32)
    return max(proposals, default=-(2**31))


def calculate_scale_down_limit_with_behaviors(
    current_replicas: int,
    scale_up_events: tuple[ScaleEvent, ...],
    scale_down_events: tuple[ScaleEvent, ...],
    rules: ScalingRules,
    now: int,
) -> int:
    """Mirrors `calculateScaleDownLimitWithBehaviors`: the fewest replicas the policies allow now.

    Percent proposals truncate toward zero and may go negative; Max takes the smallest, Min the largest.
    """
    if rules.select_policy == SelectPolicy.DISABLED:
        return current_replicas
    proposals = _policy_proposals(current_replicas, scale_up_events, scale_down_events, rules, now, up=False)
    if rules.select_policy == SelectPolicy.MIN:
        return max(proposals, default=-(2**31))
    return min(proposals, default=MAX_INT32)


def convert_desired_replicas_with_behavior_rate(
    current_replicas: int,
    desired_replicas: int,
    min_replicas: int,
    max_replicas: int,
    scale_up_rules: ScalingRules,
    scale_down_rules: ScalingRules,
    scale_up_events: tuple[ScaleEvent, ...],
    scale_down_events: tuple[ScaleEvent, ...],
    now: int,
) -> tuple[int, str]:
    """Mirrors `HorizontalController.convertDesiredReplicasWithBehaviorRate`: rate limits and min/max.

    A limit that recent events have pushed past the current count holds it (never reverses it).
    """
    if desired_replicas > current_replicas:
        limit = calculate_scale_up_limit_with_scaling_rules(
            current_replicas, scale_up_events, scale_down_events, scale_up_rules, now
        )
        limit = max(limit, current_replicas)
        if max_replicas > limit:
            maximum, reason = limit, SCALE_UP_LIMIT
        else:
            maximum, reason = max_replicas, TOO_MANY_REPLICAS
        if desired_replicas > maximum:
            return maximum, reason
    elif desired_replicas < current_replicas:
        limit = calculate_scale_down_limit_with_behaviors(
            current_replicas, scale_up_events, scale_down_events, scale_down_rules, now
        )
        limit = min(limit, current_replicas)
        if min_replicas < limit:
            minimum, reason = limit, SCALE_DOWN_LIMIT
        else:
            minimum, reason = min_replicas, TOO_FEW_REPLICAS
        if desired_replicas < minimum:
            return minimum, reason
    return desired_replicas, DESIRED_WITHIN_RANGE


def normalize_desired_replicas_with_behaviors(
    recommendations: tuple[TimestampedRecommendation, ...],
    scale_up_events: tuple[ScaleEvent, ...],
    scale_down_events: tuple[ScaleEvent, ...],
    behavior: Behavior,
    current_replicas: int,
    prenormalized_desired_replicas: int,
    min_replicas: int,
    max_replicas: int,
    now: int,
    *,
    downscale_stabilization: int = DEFAULT_DOWNSCALE_STABILIZATION,
) -> Normalization:
    """Mirrors `HorizontalController.normalizeDesiredReplicasWithBehaviors`: windows, then rate limits.

    `behavior` is defaulted as the API server would, and a nil scale-down window takes the flag.
    """
    up_rules = generate_scale_up_rules(behavior.scale_up)
    down_rules = generate_scale_down_rules(behavior.scale_down)
    down_window = down_rules.stabilization_window_seconds
    if down_window is None:  # maybeInitScaleDownStabilizationWindow
        down_window = int(downscale_stabilization // SECOND)
    stabilized, reason, recs = stabilize_recommendation_with_behaviors(
        recommendations,
        current_replicas,
        prenormalized_desired_replicas,
        up_rules.stabilization_window_seconds or 0,
        down_window,
        now,
    )
    able = reason if stabilized != prenormalized_desired_replicas else READY_FOR_NEW_SCALE
    desired, limit_reason = convert_desired_replicas_with_behavior_rate(
        current_replicas,
        stabilized,
        min_replicas,
        max_replicas,
        up_rules,
        down_rules,
        scale_up_events,
        scale_down_events,
        now,
    )
    return Normalization(desired, stabilized, able, limit_reason, desired != stabilized, recs)


def get_longest_policy_period(rules: ScalingRules) -> int:
    """Mirrors `getLongestPolicyPeriod`, in seconds."""
    return max((p.period_seconds for p in rules.policies or ()), default=0)


def mark_scale_events_outdated(
    scale_events: tuple[ScaleEvent, ...], longest_policy_period: int, now: int
) -> tuple[ScaleEvent, ...]:
    """Mirrors `markScaleEventsOutdated`: events older than every policy period may be reused."""
    cutoff = now - longest_policy_period * SECOND
    return tuple(replace(e, outdated=True) if e.timestamp < cutoff else e for e in scale_events)


def _store_event(events: tuple[ScaleEvent, ...], rules: ScalingRules, change: int, now: int) -> tuple[ScaleEvent, ...]:
    events = mark_scale_events_outdated(events, get_longest_policy_period(rules), now)
    old_index = None
    for i, e in enumerate(events):
        if e.outdated:
            old_index = i
    new = ScaleEvent(change, now)
    if old_index is None:
        return (*events, new)
    return (*events[:old_index], new, *events[old_index + 1 :])


def store_scale_event(
    behavior: Behavior | None, history: HPAHistory, prev_replicas: int, new_replicas: int, now: int
) -> HPAHistory:
    """Mirrors `HorizontalController.storeScaleEvent`: record a rescale, only for HPAs with `behavior`.

    The event replaces the last outdated event of its direction, or is appended.
    """
    if behavior is None:
        return history
    if new_replicas > prev_replicas:
        rules = generate_scale_up_rules(behavior.scale_up)
        events = _store_event(history.scale_up_events, rules, new_replicas - prev_replicas, now)
        return replace(history, scale_up_events=events)
    rules = generate_scale_down_rules(behavior.scale_down)
    events = _store_event(history.scale_down_events, rules, prev_replicas - new_replicas, now)
    return replace(history, scale_down_events=events)


@dataclass(frozen=True, slots=True)
class Reconciliation:
    """One sync's decision: the replicas to set, whether that is a rescale, why, and the new history.

    `normalization` is None when the metrics were not consulted (scaling disabled at zero
    replicas, or the count outside [min, max]) or could not be used.
    """

    desired_replicas: int
    rescale: bool
    reason: str
    normalization: Normalization | None
    history: HPAHistory


def reconcile_desired_replicas(
    history: HPAHistory,
    *,
    current_replicas: int,
    metric_desired_replicas: int | None,
    min_replicas: int,
    max_replicas: int,
    behavior: Behavior | None,
    now: int,
    downscale_stabilization: int = DEFAULT_DOWNSCALE_STABILIZATION,
    scale_up_limit_factor: float = SCALE_UP_LIMIT_FACTOR,
    scale_up_limit_minimum: float = SCALE_UP_LIMIT_MINIMUM,
) -> Reconciliation:
    """Mirrors the decision half of `HorizontalController.reconcileAutoscaler`.

    `current_replicas` is the scale's spec replicas; `metric_desired_replicas` what
    `compute_replicas_for_metrics` recommended (None: no scaling this sync). At zero replicas
    scaling is disabled (the alpha HPAScaleToZero gate is not modelled); a count outside
    [min, max] is brought inside without reading metrics; otherwise the recommendation is
    normalised, with `behavior` or the legacy rules. A rescale is recorded as a scale event.
    """
    history = record_initial_recommendation(history, current_replicas, now)
    normalization: Normalization | None = None
    if current_replicas == 0:
        return Reconciliation(
            0, False, "scaling is disabled since the replica count of the target is zero", None, history
        )
    if current_replicas > max_replicas:
        desired, reason = max_replicas, "Current number of replicas above Spec.MaxReplicas"
    elif current_replicas < min_replicas:
        desired, reason = min_replicas, "Current number of replicas below Spec.MinReplicas"
    elif metric_desired_replicas is None:
        return Reconciliation(current_replicas, False, "failed to compute desired number of replicas", None, history)
    else:
        prenormalized = max(metric_desired_replicas, 0)
        reason = "All metrics below target" if prenormalized < current_replicas else "metrics above target"
        recs = history.recommendations or ()
        if behavior is None:
            normalization = normalize_desired_replicas(
                recs,
                current_replicas,
                prenormalized,
                min_replicas,
                max_replicas,
                now,
                downscale_stabilization=downscale_stabilization,
                scale_up_limit_factor=scale_up_limit_factor,
                scale_up_limit_minimum=scale_up_limit_minimum,
            )
        else:
            normalization = normalize_desired_replicas_with_behaviors(
                recs,
                history.scale_up_events,
                history.scale_down_events,
                behavior,
                current_replicas,
                prenormalized,
                min_replicas,
                max_replicas,
                now,
                downscale_stabilization=downscale_stabilization,
            )
        desired = normalization.desired_replicas
        history = replace(history, recommendations=normalization.recommendations)
    rescale = desired != current_replicas
    if rescale:
        history = store_scale_event(behavior, history, current_replicas, desired, now)
    else:
        reason = "the desired replica count is the current one"
    return Reconciliation(desired, rescale, reason, normalization, history)
