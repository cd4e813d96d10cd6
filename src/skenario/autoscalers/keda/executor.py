"""What KEDA's operator does with a ScaledObject's activity at each poll: the scale to and from zero (or idle).

Mirrors `scaleExecutor.RequestScale` (pkg/scaling/executor/scale_scaledobjects.go) with
`scaleFromZeroOrIdle`, `scaleToZeroOrIdle` and `getIdleOrMinimumReplicaCount`: between 1 and the maximum
the HPA KEDA made scales; the operator only moves the target to and from zero (or `idleReplicaCount`),
holds it at `minReplicaCount`, and keeps `lastActiveTime`, which `cooldownPeriod` counts from.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExecutorSpec:
    """The parts of a ScaledObject `RequestScale` reads (times in ns)."""

    min_replicas: int | None = None  # minReplicaCount (None: unset, 0)
    idle_replicas: int | None = None  # idleReplicaCount
    cooldown: int = 300_000_000_000  # cooldownPeriod, 300 s by default
    initial_cooldown: int = 0  # initialCooldownPeriod
    fallback_replicas: int | None = None  # fallback.replicas (None: no fallback)
    pause_scale_in: bool = False  # autoscaling.keda.sh/paused-scale-in
    pause_scale_out: bool = False  # autoscaling.keda.sh/paused-scale-out
    force_activation: bool = False  # autoscaling.keda.sh/force-activation


@dataclass(frozen=True)
class ScaleResult:
    """What one poll did: the replicas it set the target to (None: left alone), `lastActiveTime` after it
    (None: never active), which branch of `RequestScale` it took, and the Active condition's reason."""

    replicas: int | None
    last_active: int | None
    action: str
    reason: str


def request_scale(
    spec: ExecutorSpec,
    *,
    current: int,
    active: bool,
    error: bool,
    last_active: int | None,
    created: int,
    now: int,
) -> ScaleResult:
    """`RequestScale` for one poll: `active` and `error` are the ScaledObject's (any trigger active, any
    failing), `current` the target's replicas, `created` when the ScaledObject was created."""
    minimum = spec.min_replicas or 0
    idle = spec.idle_replicas
    if active or spec.force_activation:
        reason = "ScalerActive"
        if (idle is not None and current < minimum) or current == 0:
            if spec.pause_scale_out:
                return ScaleResult(None, last_active, "scale-out paused", reason)
            replicas = minimum if minimum > 0 else 1
            return ScaleResult(replicas, now, "activated", reason)  # scaleFromZeroOrIdle
        if error:
            return ScaleResult(None, last_active, "partial trigger error", reason)
        return ScaleResult(None, now, "active", reason)
    reason = "ScalerNotActive"
    if error and spec.fallback_replicas is not None and spec.fallback_replicas != 0:
        return ScaleResult(None, last_active, "left to the HPA's fallback", reason)
    if error and spec.fallback_replicas is None:
        return ScaleResult(None, last_active, "trigger error", reason)
    if (idle is not None and current > idle) or (current > 0 and minimum == 0):
        return _scale_to_zero_or_idle(spec, last_active, created, now)
    if idle is None and current < minimum:
        return ScaleResult(minimum, last_active, "raised to minReplicaCount", reason)
    return ScaleResult(None, last_active, "no change", reason)


def _scale_to_zero_or_idle(spec: ExecutorSpec, last_active: int | None, created: int, now: int) -> ScaleResult:
    """`scaleToZeroOrIdle`: once the cooldown has passed since the last activity (strictly, `Before(now)`), or
    the initial cooldown since creation when it was never active."""
    if spec.pause_scale_in:
        return ScaleResult(None, last_active, "scale-in paused", "ScalerNotActive")
    cooled_since = created + spec.initial_cooldown if last_active is None else last_active + spec.cooldown
    if not cooled_since < now:
        return ScaleResult(None, last_active, "cooling down", "ScalerCooldown")
    if spec.idle_replicas is not None:
        return ScaleResult(spec.idle_replicas, last_active, "to idleReplicaCount", "ScalerNotActive")
    return ScaleResult(spec.min_replicas or 0, last_active, "deactivated", "ScalerNotActive")
