"""The HPA's normalisation of one sync's desired replicas: stabilisation windows and rate limits.

Restated from kubernetes/kubernetes `pkg/controller/podautoscaler/horizontal.go`
(`normalizeDesiredReplicas` for HPAs without `behavior`, `normalizeDesiredReplicasWithBehaviors`
for those with it, and the functions they call); no upstream code is copied. Each function's
docstring names the upstream function it mirrors.

Upstream reads the recent unstabilised recommendations and scale events it keeps per HPA in
memory; here they are passed in as tuples and the updated recommendations handed back, so every
function is pure. Times are integer nanoseconds; the API's windows and periods are in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skenario.autoscalers.hpa.behavior import (
    Behavior,
    PolicyType,
    ScalingRules,
    SelectPolicy,
    generate_scale_down_rules,
    generate_scale_up_rules,
)
from skenario.autoscalers.hpa.config import DEFAULT_DOWNSCALE_STABILIZATION
from skenario.autoscalers.hpa.types import MAX_INT32
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
