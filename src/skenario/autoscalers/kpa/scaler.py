"""The KPA reconciler's side of scaling: bounds, scale to zero, the PodAutoscaler's Active condition.

The decider (`kpa.decider.KPADecider`) may ask for 0 and knows nothing of min/max/initial scale or
grace periods; upstream applies those in the reconciler (`pkg/reconciler/autoscaling/kpa/scaler.go`
`scaler.scale` and `handleScaleToZero`), and so does this module. `reconcile_scale` turns the
decider's number into the replicas to set: min/max scale, initial scale until it is first reached,
and scale to zero. A desired 0 is held at 1 while the PodAutoscaler has been Active for less than a
stable window; after that the PA is marked Inactive (the caller's job, `compute_active_state`) and
only once the activator is in the path and the PA has been Inactive for
`max(scale-to-zero-grace-period, pod retention)` (or the SKS has proxied for the grace period) may
replicas go to 0. **The grace period is honoured here, by the caller of the decider, never by the
decider.** Times are integer nanoseconds.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Literal

from skenario.autoscalers.kpa.config import KPAConfig
from skenario.core.time import SECOND

ACTIVATION_TIMEOUT_BUFFER = 30 * SECOND
"""`activationTimeoutBuffer` (`kpa/scaler.go`), added to the progress deadline."""
SCALE_UNKNOWN = -1
"""`scaleUnknown`: no decision yet (the decider has no metrics)."""
PROXY_REQUEUE = 3 * SECOND
"""`handleScaleToZero` re-enqueues an idle Active PA after this when the SKS already proxies."""


class PAState(enum.Enum):
    """The PodAutoscaler's Active condition: Unknown, True or False."""

    ACTIVATING = "Activating"
    ACTIVE = "Active"
    INACTIVE = "Inactive"


@dataclass(frozen=True, slots=True)
class PAStatus:
    """What `scaler.scale` reads of the PodAutoscaler and its ServerlessService (SKS).

    `since` is when the Active condition last changed. `sks_proxy` says the SKS is in Proxy mode
    (activator in the path); `proxy_since` is when the activator's endpoints were populated
    (None: not yet, so the SKS has proxied for 0 s).
    """

    state: PAState
    since: int
    scale_target_initialized: bool = False
    sks_proxy: bool = False
    proxy_since: int | None = None


@dataclass(frozen=True, slots=True)
class ScaleDecision:
    """What `scaler.scale` returns and the side effects it asks for.

    `scale` is the PA's new desired scale (`want`); replicas are set to it only when `apply`
    (and differ). `requeue_after` asks to reconcile again after that long (upstream `enqueueCB`);
    `probe_activator` asks for an asynchronous probe of the activator path. `reason` (not
    compared) is the key, in `SCALER_RULES`, of the rule that changed or held the decider's count,
    or "" when it went through as it was.
    """

    scale: int
    apply: bool
    requeue_after: int | None = None
    probe_activator: bool = False
    reason: str = field(default="", compare=False)


SCALER_RULES: dict[str, str] = {
    "no-metrics": "the decider has no data (proposal -1) and the PA is not activating: nothing changes",
    "min-scale": "raised to min-scale",
    "initial-scale": "raised to initial-scale until the revision has first reached it",
    "max-scale": "lowered to max-scale",
    "scale-to-zero-disabled": "enable-scale-to-zero is false: 0 becomes 1",
    "activating": "the PA is activating: no scale to zero until activation succeeds or times out",
    "activation-timeout": "activation timed out (the progress deadline and a buffer): scaled to 0",
    "idle-hold": "idle, but Active for less than a stable window: held at 1 until then",
    "mark-inactive": "idle for a stable window: the PA is marked Inactive before replicas may go to 0",
    "probe-activator": "the activator is not yet in the request path: no scale to zero until it is",
    "pod-retention": "scale-to-zero-pod-retention-period: the last pod is kept for it",
    "grace-period": "scale-to-zero-grace-period: the activator must be in the path for it before 0",
    "scale-to-zero": "idle, Inactive and behind the activator for the grace period: scaled to 0",
}
"""The reconciler's rules (`scaler.Scale`, `handleScaleToZero` in kpa/scaler.go), by key."""


def scale_bounds(config: KPAConfig) -> tuple[int, int]:
    """`PodAutoscaler.ScaleBounds`: `(min, max)`; an unreachable revision has no minimum; max 0 is unbounded."""
    return (config.min_scale if config.reachable else 0), config.max_scale


def apply_bounds(min_scale: int, max_scale: int, x: int) -> int:
    """`applyBounds`: clamp into `[min, max]`, where max 0 means unbounded."""
    if x < min_scale:
        return min_scale
    if max_scale != 0 and x > max_scale:
        return max_scale
    return x


def handle_scale_to_zero(
    config: KPAConfig, desired: int, status: PAStatus, now: int, activator_probe: bool = True
) -> ScaleDecision:
    """`handleScaleToZero`: hold a desired 0 until the PA may really go to zero.

    `activator_probe` is the synchronous probe's answer (is the activator serving the revision?);
    it is not consulted when the target burst capacity is -1 (the activator is always in the path).
    """
    if desired != 0:
        return ScaleDecision(desired, True)
    if not config.enable_scale_to_zero:
        return ScaleDecision(1, True, reason="scale-to-zero-disabled")
    in_state_for = now - status.since
    if status.state is PAState.ACTIVATING:
        activation_timeout = config.progress_deadline + ACTIVATION_TIMEOUT_BUFFER
        if in_state_for > activation_timeout:  # could not activate: give up and scale to 0
            return ScaleDecision(desired, True, reason="activation-timeout")
        return ScaleDecision(SCALE_UNKNOWN, False, requeue_after=activation_timeout, reason="activating")
    if status.state is PAState.ACTIVE:
        if in_state_for >= config.stable_window:
            # Idle for a stable window: don't scale, let the PA be marked Inactive.
            requeue = PROXY_REQUEUE if status.sks_proxy else None
            return ScaleDecision(desired, False, requeue_after=requeue, reason="mark-inactive")
        return ScaleDecision(1, True, requeue_after=config.stable_window - in_state_for, reason="idle-hold")
    in_path = activator_probe if config.target_burst_capacity != -1 else True
    if not in_path:
        return ScaleDecision(desired, False, probe_activator=True, reason="probe-activator")
    last_pod_timeout = config.scale_to_zero_pod_retention_period if config.reachable else 0
    if in_state_for >= max(config.scale_to_zero_grace_period, last_pod_timeout):
        return ScaleDecision(desired, True, reason="scale-to-zero")
    if last_pod_timeout > 0 and in_state_for < last_pod_timeout:
        return ScaleDecision(desired, False, requeue_after=last_pod_timeout - in_state_for, reason="pod-retention")
    proxy_for = 0 if status.proxy_since is None else now - status.proxy_since
    remaining = config.scale_to_zero_grace_period - proxy_for
    if remaining <= 0:
        return ScaleDecision(desired, True, reason="scale-to-zero")
    return ScaleDecision(desired, False, requeue_after=remaining, reason="grace-period")


def reconcile_scale(
    config: KPAConfig, desired: int, status: PAStatus, now: int, activator_probe: bool = True
) -> ScaleDecision:
    """`scaler.scale`: the decider's desired scale to the replicas to set.

    No metrics yet (desired < 0) changes nothing unless the PA is activating; then min/max scale
    apply, with the initial scale as a minimum until the scale target has first been reached
    (ignored for an unreachable revision); then `handle_scale_to_zero`.
    """
    if desired < 0 and status.state is not PAState.ACTIVATING:
        return ScaleDecision(desired, False, reason="no-metrics")
    min_scale, max_scale = scale_bounds(config)
    lower = "min-scale"
    initializing = config.initial_scale > 1 and not status.scale_target_initialized and config.reachable
    if initializing and config.initial_scale > min_scale:
        min_scale, lower = config.initial_scale, "initial-scale"
    bounded = apply_bounds(min_scale, max_scale, desired)
    decision = handle_scale_to_zero(config, bounded, status, now, activator_probe)
    if decision.reason or bounded == desired:
        return decision
    return replace(decision, reason=lower if bounded > desired else "max-scale")


def active_threshold(config: KPAConfig, scale_target_initialized: bool) -> int:
    """`activeThreshold`: ready pods needed to call the PA Active (the initial scale until first reached)."""
    min_scale, _ = scale_bounds(config)
    if not scale_target_initialized:
        return max(min_scale, config.initial_scale)
    return max(min_scale, 1)


def compute_active_state(state: PAState, want: int, ready: int, min_ready: int) -> PAState:
    """`computeActiveCondition`: the PA's next Active condition from `want`, the ready pods and `min_ready`.

    want 0 (or min_ready 0) makes it Inactive; want > 0 makes it Activating below min_ready and
    Active at or above it; want -1 (no metrics) keeps an Inactive PA inactive and otherwise moves by
    the ready pods. (Upstream also marks the scale target initialized once `ready >= min_ready`.)
    The caller moves `PAStatus.since` only when the state actually changes, as a condition's
    last transition time does.
    """
    if want == 0 or min_ready == 0:
        return PAState.INACTIVE
    if ready < min_ready:
        return PAState.ACTIVATING if want > 0 or state is not PAState.INACTIVE else PAState.INACTIVE
    return PAState.ACTIVE if want > 0 or state is not PAState.INACTIVE else state


def sks_mode(want: int, excess_burst_capacity: int, state: PAState) -> Literal["Serve", "Proxy"]:
    """The SKS mode `ReconcileKind` picks: Serve (activator out of the path) only when want > 0 and EBC >= 0."""
    if want == SCALE_UNKNOWN and state is PAState.INACTIVE:
        return "Proxy"
    return "Serve" if want > 0 and excess_burst_capacity >= 0 else "Proxy"
