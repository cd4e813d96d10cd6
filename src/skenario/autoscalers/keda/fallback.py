"""`fallback`: what KEDA serves the HPA for a trigger whose scaler keeps failing.

Mirrors pkg/fallback/fallback.go: every failed fetch of a metric adds one to its `numberOfFailures` and a
success sets it back to 0 (`GetMetricsWithFallback`); past `failureThreshold` failures (strictly more) the
metric is replaced by `doFallback`'s value, the target times the fallback's replicas, so that the HPA,
dividing by the target, asks for exactly those replicas.
"""

from __future__ import annotations

from dataclasses import dataclass

STATIC = "static"
CURRENT_REPLICAS = "currentReplicas"
CURRENT_REPLICAS_IF_HIGHER = "currentReplicasIfHigher"
CURRENT_REPLICAS_IF_LOWER = "currentReplicasIfLower"
SCALING_MODIFIERS = "scalingModifiers"
BEHAVIORS = (STATIC, CURRENT_REPLICAS, CURRENT_REPLICAS_IF_HIGHER, CURRENT_REPLICAS_IF_LOWER, SCALING_MODIFIERS)


@dataclass(frozen=True)
class Fallback:
    """`spec.fallback`."""

    failure_threshold: int
    replicas: int
    behavior: str = STATIC


def fallback_replicas(fallback: Fallback, current: int) -> int:
    """The replicas `doFallback` stands for, by its behavior."""
    if fallback.behavior == CURRENT_REPLICAS:
        return current
    if fallback.behavior == CURRENT_REPLICAS_IF_HIGHER:
        return max(current, fallback.replicas)
    if fallback.behavior == CURRENT_REPLICAS_IF_LOWER:
        return min(current, fallback.replicas)
    return fallback.replicas


def fallback_value(fallback: Fallback, target: float, current: int, ready: int | None = None) -> int | None:
    """`doFallback`'s metric, in milli-units: the target (its AverageValue or Value) times the replicas; for a
    Value target divided by the ready pods (`ready`; None: an AverageValue target). None when there is no
    value to give: `scalingModifiers` behavior, or a Value target with no pod ready."""
    if fallback.behavior == SCALING_MODIFIERS:
        return None
    replicas = float(fallback_replicas(fallback, current))
    if ready is not None:
        if ready == 0:
            return None
        replicas /= ready
    return int(target * 1000 * replicas)


def exceeded(fallback: Fallback | None, failures: int) -> bool:
    """Whether a metric that failed `failures` times in a row is past the threshold (strictly)."""
    return fallback is not None and failures > fallback.failure_threshold
