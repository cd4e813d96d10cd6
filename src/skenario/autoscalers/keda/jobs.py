"""How many Jobs a ScaledJob creates at a poll: KEDA's queue-driven batch, as pure calculators.

Mirrors pkg/scaling/scaledjob/metrics.go (`CalculateQueueLengthAndMaxValue`, `IsScaledJobActive`) and
pkg/scaling/executor/scale_jobs.go (`RequestJobScale`, `getScalingDecision`, `createJobs` and the four
scaling strategies): each trigger's queue length over its target is the jobs it asks for, capped at
maxReplicaCount; the triggers are combined by `multipleScalersCalculation`; the strategy deducts what is
already running or pending; and as many jobs are created as the smaller of what is asked and what is left.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_MAX_REPLICAS = 100  # defaultScaledJobMaxReplicaCount
STRATEGIES = ("default", "custom", "accurate", "eager")
CALCULATIONS = ("max", "min", "avg", "sum")


@dataclass(frozen=True)
class ScalerMetrics:
    """One trigger at a poll: its queue length, the jobs it asks for (`max_value`) and whether it is active."""

    queue_length: float
    max_value: float
    active: bool


def scaler_metrics(value: float, target: float, max_replicas: int, active: bool) -> ScalerMetrics:
    """`CalculateQueueLengthAndMaxValue`: the queue over the target average value, at most maxReplicaCount."""
    max_value = min(value / target, float(max_replicas)) if target != 0 else 0.0
    return ScalerMetrics(value, max_value, active)


def scaled_job_active(
    metrics: Sequence[ScalerMetrics], calculation: str, min_replicas: int, max_replicas: int
) -> tuple[bool, int, int]:
    """`IsScaledJobActive`: (active, scaleTo, maxScale) over the active triggers by `calculation`."""
    queue_length = max_value = 0.0
    active = False
    live = [m for m in metrics if m.active]
    if calculation == "min":
        for m in metrics:
            if (queue_length == 0 or m.queue_length < queue_length) and m.active:
                queue_length, max_value, active = m.queue_length, m.max_value, True
    elif calculation == "avg":
        if live:
            queue_length = sum(m.queue_length for m in live) / len(live)
            max_value = sum(m.max_value for m in live) / len(live)
            active = True
    elif calculation == "sum":
        if live:
            queue_length = sum(m.queue_length for m in live)
            max_value = sum(m.max_value for m in live)
            active = True
    else:  # max
        for m in metrics:
            if m.queue_length > queue_length and m.active:
                queue_length, max_value, active = m.queue_length, m.max_value, True
    if min_replicas > 0:
        active = True
    max_value = min(max_value, float(max_replicas))
    return active, math.ceil(queue_length), math.ceil(max_value)


@dataclass(frozen=True)
class Strategy:
    """`scalingStrategy`: its name and the custom strategy's deduction and running-job percentage."""

    name: str = "default"
    deduction: int = 0  # customScalingQueueLengthDeduction
    running_percentage: float = 0.0  # customScalingRunningJobPercentage

    def effective_max_scale(
        self, max_scale: int, running: int, pending: int, max_replicas: int, scale_to: int
    ) -> tuple[int, int]:
        """`GetEffectiveMaxScale` of the strategy: (effectiveMaxScale, scaleTo)."""
        if self.name == "custom":
            result = max_scale - self.deduction - int(running * self.running_percentage)
            return min(result, max_replicas), scale_to
        if self.name == "accurate":
            if max_scale + running - pending > max_replicas:
                return max_replicas - running, scale_to
            return max_scale - pending, scale_to
        if self.name == "eager":
            return min(max_replicas - running - pending, max_scale), max_replicas
        return max_scale - running, scale_to


def scaling_decision(
    strategy: Strategy,
    *,
    running: int,
    scale_to: int,
    max_scale: int,
    pending: int,
    min_replicas: int,
    max_replicas: int,
) -> tuple[int, int]:
    """`getScalingDecision`: below minReplicaCount, the Jobs missing; else the strategy on the Jobs beyond it."""
    if running < min_replicas:
        missing = min_replicas - running
        return missing, missing
    return strategy.effective_max_scale(max_scale, running - min_replicas, pending, max_replicas, scale_to)


def jobs_to_create(
    strategy: Strategy,
    *,
    active: bool,
    scale_to: int,
    max_scale: int,
    running: int,
    pending: int,
    min_replicas: int,
    max_replicas: int,
) -> int:
    """`RequestJobScale` with `createJobs`: the Jobs to create now, none when inactive."""
    effective, scale_to = scaling_decision(
        strategy,
        running=running,
        scale_to=scale_to,
        max_scale=max_scale,
        pending=pending,
        min_replicas=min_replicas,
        max_replicas=max_replicas,
    )
    effective = max(effective, 0)
    if not active or effective <= 0:
        return 0
    return min(scale_to, effective)
