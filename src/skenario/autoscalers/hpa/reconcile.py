"""The HPA's decision at one sync, and the history it keeps between syncs.

Restated from kubernetes/kubernetes `pkg/controller/podautoscaler/horizontal.go` (the decision
half of `reconcileAutoscaler`, with `recordInitialRecommendation` and `storeScaleEvent`); no
upstream code is copied. Each function's docstring names the upstream function it mirrors.

Upstream keeps, per HPA and in memory only, the recent unstabilised recommendations and the
recent scale events. Here that state is an immutable `HPAHistory` passed in and returned, so every
function is pure and a controller can run the same code on a simulated or a wall clock. Times
are integer nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from skenario.autoscalers.hpa.behavior import Behavior, ScalingRules, generate_scale_down_rules, generate_scale_up_rules
from skenario.autoscalers.hpa.config import DEFAULT_DOWNSCALE_STABILIZATION
from skenario.autoscalers.hpa.normalization import (
    SCALE_UP_LIMIT_FACTOR,
    SCALE_UP_LIMIT_MINIMUM,
    Normalization,
    ScaleEvent,
    TimestampedRecommendation,
    normalize_desired_replicas,
    normalize_desired_replicas_with_behaviors,
)
from skenario.core.time import SECOND


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
