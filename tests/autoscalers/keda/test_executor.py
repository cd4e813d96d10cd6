"""`request_scale` against KEDA's scale_scaledobjects_test.go, restated, and the cooldown worked by hand."""

from __future__ import annotations

from skenario.autoscalers.keda.executor import ExecutorSpec, ScaleResult, request_scale
from skenario.core.time import SECOND

LONG_AGO = 0  # a ScaledObject created long before the poll (upstream's zero creationTimestamp)
NOW = 10_000 * SECOND


def poll(
    spec: ExecutorSpec, current: int, active: bool, error: bool = False, last_active: int | None = None
) -> ScaleResult:
    return request_scale(
        spec, current=current, active=active, error=error, last_active=last_active, created=LONG_AGO, now=NOW
    )


def test_scale_to_min_replicas_when_not_active() -> None:
    # TestScaleToMinReplicasWhenNotActive: min 0, 10 replicas, inactive, never active -> 0.
    result = poll(ExecutorSpec(min_replicas=0), current=10, active=False)
    assert result.replicas == 0 and result.reason == "ScalerNotActive"


def test_scale_to_min_replicas_from_lower_initial_replica_count() -> None:
    # TestScaleToMinReplicasFromLowerInitialReplicaCount: min 5, 1 replica, inactive -> 5.
    assert poll(ExecutorSpec(min_replicas=5), current=1, active=False).replicas == 5


def test_scale_from_min_replicas_when_active() -> None:
    # TestScaleFromMinReplicasWhenActive: min 0, 0 replicas, active -> 1, lastActiveTime set.
    result = poll(ExecutorSpec(min_replicas=0), current=0, active=True)
    assert (result.replicas, result.last_active, result.reason) == (1, NOW, "ScalerActive")


def test_scale_to_idle_replicas_when_not_active() -> None:
    # TestScaleToIdleReplicasWhenNotActive: idle 0, min 5, 10 replicas, inactive -> 0.
    assert poll(ExecutorSpec(min_replicas=5, idle_replicas=0), current=10, active=False).replicas == 0


def test_scale_from_idle_to_min_replicas_when_active() -> None:
    # TestScaleFromIdleToMinReplicasWhenActive: idle 0, min 5, at idle, active -> 5.
    result = poll(ExecutorSpec(min_replicas=5, idle_replicas=0), current=0, active=True)
    assert (result.replicas, result.last_active) == (5, NOW)


def test_no_scale_in_when_paused_scale_in() -> None:
    # TestNoScaleToMinReplicasWhenNotActiveAndPauseScaleInAnnotationSet, and its idle variant: 10 stay.
    assert poll(ExecutorSpec(min_replicas=0, pause_scale_in=True), current=10, active=False).replicas is None
    assert (
        poll(ExecutorSpec(min_replicas=5, idle_replicas=0, pause_scale_in=True), current=10, active=False).replicas
        is None
    )


def test_scale_from_min_replicas_when_activation_forced() -> None:
    # TestScaleFromMinReplicasWhenActivationForced: inactive, but forced: 0 -> 1.
    result = poll(ExecutorSpec(min_replicas=0, force_activation=True), current=0, active=False)
    assert (result.replicas, result.reason) == (1, "ScalerActive")


def test_no_scale_out_when_paused_scale_out() -> None:
    # TestNoScaleFromMinReplicasWhenActiveAndPausedScaleOutAnnotationSet and the idle variant: stays at 0.
    assert poll(ExecutorSpec(min_replicas=0, pause_scale_out=True), current=0, active=True).replicas is None
    assert (
        poll(ExecutorSpec(min_replicas=5, idle_replicas=0, pause_scale_out=True), current=0, active=True).replicas
        is None
    )


def test_active_between_one_and_max_leaves_scaling_to_the_hpa() -> None:
    result = poll(ExecutorSpec(min_replicas=0), current=4, active=True, last_active=NOW - SECOND)
    assert (result.replicas, result.last_active, result.action) == (None, NOW, "active")


def test_the_cooldown_counts_from_the_last_activity_strictly() -> None:
    # scaleToZeroOrIdle: LastActiveTime + cooldownPeriod must be strictly before now.
    spec = ExecutorSpec(min_replicas=0, cooldown=300 * SECOND)
    assert poll(spec, current=2, active=False, last_active=NOW - 300 * SECOND).action == "cooling down"
    assert poll(spec, current=2, active=False, last_active=NOW - 300 * SECOND - 1).replicas == 0


def test_the_initial_cooldown_counts_from_creation_while_never_active() -> None:
    spec = ExecutorSpec(min_replicas=0, initial_cooldown=120 * SECOND)

    def at(now: int) -> ScaleResult:
        return request_scale(spec, current=3, active=False, error=False, last_active=None, created=0, now=now)

    assert at(120 * SECOND).action == "cooling down"
    assert at(150 * SECOND).replicas == 0


def test_errors_with_and_without_a_fallback() -> None:
    # Inactive with an error: with fallback replicas the HPA's fallback acts (no scale to zero); without one,
    # nothing moves either (Ready=False).
    assert poll(ExecutorSpec(min_replicas=0, fallback_replicas=4), current=3, active=False, error=True).replicas is None
    assert poll(ExecutorSpec(min_replicas=0), current=3, active=False, error=True).action == "trigger error"
    # Active with an error in another trigger: no change, the condition only.
    assert poll(ExecutorSpec(min_replicas=0), current=3, active=True, error=True).action == "partial trigger error"
