"""The KPA reconciler's scale-to-zero rules and bounds, case by case against upstream.

Cases restate the data of knative/serving's `pkg/reconciler/autoscaling/kpa/scaler_test.go`
(snapshot 98e5ef90aa70); no test code is copied. Where upstream uses `time.Now()`, these tests use
a fixed simulated time with the same gaps between calls.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.autoscalers.kpa.config import KPAConfig
from skenario.autoscalers.kpa.decider import KPADecider, make_decider_spec
from skenario.autoscalers.kpa.scaler import (
    ACTIVATION_TIMEOUT_BUFFER,
    SCALE_UNKNOWN,
    SCALER_RULES,
    PAState,
    PAStatus,
    ScaleDecision,
    active_threshold,
    apply_bounds,
    compute_active_state,
    reconcile_scale,
    scale_bounds,
    sks_mode,
)
from skenario.core.time import HOUR, MINUTE, SECOND
from tests.autoscalers.kpa.harness import FakeMetrics, observation

# --- reconciler/autoscaling/kpa/scaler_test.go ----------------------------------------------------

# The reconciler tests' ConfigMap (kpa_test.go `defaultConfigMapData`) and deployment settings.
GRACE = 60 * SECOND
STABLE = 5 * MINUTE
PA_STABLE = 45 * SECOND  # the window annotation of the "custom PA window" cases
PROGRESS_DEADLINE = 121 * SECOND
ACTIVATION_TIMEOUT = PROGRESS_DEADLINE + ACTIVATION_TIMEOUT_BUFFER
NOW = 2 * HOUR


def rconfig(**changes: object) -> KPAConfig:
    base = KPAConfig(
        max_scale_up_rate=12.0,
        container_concurrency_target_percentage=50,
        container_concurrency_target_default=10.0,
        stable_window=STABLE,
        scale_to_zero_grace_period=GRACE,
        target_burst_capacity=200,
        progress_deadline=PROGRESS_DEADLINE,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def active(ago: int, **kw: object) -> PAStatus:
    return PAStatus(PAState.ACTIVE, NOW - ago, **kw)  # type: ignore[arg-type]


def inactive(ago: int, **kw: object) -> PAStatus:
    return PAStatus(PAState.INACTIVE, NOW - ago, **kw)  # type: ignore[arg-type]


def activating(ago: int, **kw: object) -> PAStatus:
    return PAStatus(PAState.ACTIVATING, NOW - ago, **kw)  # type: ignore[arg-type]


def proxying(ago: int, proxy_for: int) -> PAStatus:
    return inactive(ago, sks_proxy=True, proxy_since=NOW - proxy_for)


# A new PA's Active condition is Unknown: activating.
NEW_PA = activating(0)


@pytest.mark.parametrize(
    ("label", "config", "scale_to", "status", "probe", "want"),
    [
        (
            "waits to scale to zero (just before idle period)",
            rconfig(),
            0,
            active(STABLE - SECOND),
            True,
            ScaleDecision(1, True, requeue_after=SECOND),  # replicas already 1: no patch
        ),
        (
            "waits to scale to zero (just before idle period), custom PA window",
            rconfig(stable_window=PA_STABLE),
            0,
            active(PA_STABLE - SECOND),
            True,
            ScaleDecision(1, True, requeue_after=SECOND),
        ),
        (
            "custom PA window, check for standard window, no probe",
            rconfig(stable_window=PA_STABLE),
            0,
            active(STABLE),
            True,
            ScaleDecision(0, False),
        ),
        (
            "scale to 1 waiting for idle expires",
            rconfig(),
            0,
            active(STABLE - SECOND),
            True,
            ScaleDecision(1, True, requeue_after=SECOND),  # from 10 replicas: patched to 1
        ),
        ("waits to scale to zero after idle period", rconfig(), 0, active(STABLE), True, ScaleDecision(0, False)),
        (
            "waits to scale to zero after idle period; sks in proxy mode",
            rconfig(),
            0,
            active(STABLE, sks_proxy=True),
            True,
            ScaleDecision(0, False, requeue_after=3 * SECOND),
        ),
        (
            "waits to scale to zero after idle period (custom PA window)",
            rconfig(stable_window=PA_STABLE),
            0,
            active(PA_STABLE),
            True,
            ScaleDecision(0, False),
        ),
        (
            "can scale to zero after grace period, but 0 PA retention",
            rconfig(scale_to_zero_pod_retention_period=0),  # the PA annotation 0 overrides the ConfigMap's 2 x grace
            0,
            inactive(GRACE),
            True,
            ScaleDecision(0, True),
        ),
        (
            "can't scale to zero after grace period, but before last pod retention",
            rconfig(scale_to_zero_pod_retention_period=2 * GRACE),
            0,
            inactive(GRACE),
            True,
            ScaleDecision(0, False, requeue_after=GRACE),
        ),
        (
            "scale to zero after grace period, and after last pod retention",
            rconfig(scale_to_zero_pod_retention_period=GRACE),
            0,
            inactive(GRACE),
            True,
            ScaleDecision(0, True),
        ),
        ("scale to zero after grace period", rconfig(), 0, inactive(GRACE), True, ScaleDecision(0, True)),
        (
            "waits to scale to zero (just before grace period)",
            rconfig(),
            0,
            inactive(GRACE - SECOND),
            True,
            ScaleDecision(0, False, requeue_after=GRACE),  # the SKS has not proxied at all yet
        ),
        (
            "waits to scale to zero (just before grace period, sks short)",
            rconfig(),
            0,
            proxying(GRACE - SECOND, GRACE - SECOND),
            True,
            ScaleDecision(0, False, requeue_after=SECOND),
        ),
        (
            "waits to scale to zero (just before grace period, sks in proxy long) and last pod timeout positive",
            rconfig(scale_to_zero_pod_retention_period=42 * SECOND),
            0,
            proxying(GRACE - SECOND, GRACE),
            True,
            ScaleDecision(0, True),
        ),
        (
            "waits to scale to zero (just before grace period, sks in proxy long)",
            rconfig(),
            0,
            proxying(GRACE - SECOND, GRACE),
            True,
            ScaleDecision(0, True),
        ),
        (
            "scale to zero with TBC=-1 (the probe is not consulted)",
            rconfig(target_burst_capacity=-1),
            0,
            inactive(GRACE),
            False,
            ScaleDecision(0, True),
        ),
        (
            "scale to zero after grace period, but fail prober",
            rconfig(),
            0,
            inactive(GRACE),
            False,
            ScaleDecision(0, False, probe_activator=True),
        ),
        (
            "waits to scale to zero while activating until after deadline exceeded",
            rconfig(),
            0,
            activating(ACTIVATION_TIMEOUT // 2),
            True,
            ScaleDecision(SCALE_UNKNOWN, False, requeue_after=ACTIVATION_TIMEOUT),
        ),
        (
            "still activating exactly at the deadline (CanFailActivation is strict)",
            rconfig(),
            0,
            activating(ACTIVATION_TIMEOUT),
            True,
            ScaleDecision(SCALE_UNKNOWN, False, requeue_after=ACTIVATION_TIMEOUT),
        ),
        (
            "scale to zero while activating after deadline exceeded",
            rconfig(),
            0,
            activating(ACTIVATION_TIMEOUT + SECOND),
            True,
            ScaleDecision(0, True),
        ),
        (
            "scale to zero while activating after revision deadline exceeded",
            rconfig(progress_deadline=5 * SECOND),
            0,
            activating(5 * SECOND + ACTIVATION_TIMEOUT_BUFFER + SECOND),
            True,
            ScaleDecision(0, True),
        ),
        (
            "scale down to minScale before grace period",
            rconfig(min_scale=2),
            0,
            inactive(GRACE - SECOND),
            True,
            ScaleDecision(2, True),
        ),
        (
            "scale down to minScale after grace period",
            rconfig(min_scale=2),
            0,
            inactive(GRACE),
            True,
            ScaleDecision(2, True),
        ),
        (
            "scale to zero ignore last pod retention if revision is unreachable",
            rconfig(scale_to_zero_pod_retention_period=10 * GRACE, reachable=False),
            0,
            inactive(GRACE),
            True,
            ScaleDecision(0, True),
        ),
        (
            "can't scale to zero if revision is unreachable, but before deadline",
            rconfig(scale_to_zero_pod_retention_period=10 * GRACE, reachable=False),
            0,
            inactive(GRACE - SECOND),
            True,
            ScaleDecision(0, False, requeue_after=GRACE),
        ),
        (
            "ignore minScale if unreachable",
            rconfig(min_scale=2, reachable=False),
            0,
            inactive(GRACE),
            True,
            ScaleDecision(0, True),
        ),
        (
            "observe minScale if reachability unknown",
            rconfig(min_scale=2),
            0,
            inactive(GRACE),
            True,
            ScaleDecision(2, True),
        ),
        ("scales up", rconfig(), 10, NEW_PA, True, ScaleDecision(10, True)),
        ("scales up to maxScale", rconfig(max_scale=8), 10, NEW_PA, True, ScaleDecision(8, True)),
        ("scale up inactive revision", rconfig(), 10, inactive(GRACE // 2), True, ScaleDecision(10, True)),
        ("does not scale up from zero with no metrics", rconfig(), -1, inactive(0), True, ScaleDecision(-1, False)),
        ("scales up from zero to desired one", rconfig(), 1, NEW_PA, True, ScaleDecision(1, True)),
        ("scales up from zero to desired high scale", rconfig(), 10, NEW_PA, True, ScaleDecision(10, True)),
        ("negative scale does not scale", rconfig(), -1, active(0), True, ScaleDecision(-1, False)),
        (
            "initial scale attained, but now time to scale down",
            rconfig(initial_scale=2),
            0,
            active(2 * MINUTE, scale_target_initialized=True),
            True,
            ScaleDecision(1, True, requeue_after=STABLE - 2 * MINUTE),  # first deactivate at 1
        ),
        (
            "haven't scaled to initial scale, override desired scale with initial scale",
            rconfig(initial_scale=2),
            1,
            activating(0),
            True,
            ScaleDecision(2, True),
        ),
        (
            "initial scale reached for the first time",
            rconfig(initial_scale=5),
            1,
            activating(0),
            True,
            ScaleDecision(5, True),  # replicas are already 5: no patch
        ),
        (
            "reaching initial scale zero",
            rconfig(initial_scale=0, allow_zero_initial_scale=True),
            0,
            inactive(0),
            True,
            ScaleDecision(0, False, requeue_after=GRACE),
        ),
        (
            "unreachable revision with initialScale > 1 can scale to 0",
            rconfig(initial_scale=2, reachable=False),
            0,
            active(2 * MINUTE),
            True,
            ScaleDecision(1, True, requeue_after=STABLE - 2 * MINUTE),
        ),
    ],
)
def test_scaler(
    label: str, config: KPAConfig, scale_to: int, status: PAStatus, probe: bool, want: ScaleDecision
) -> None:
    # TestScaler: the replicas to set (and whether), the re-enqueue (wantCBCount) and the async probe.
    assert reconcile_scale(config, scale_to, status, NOW, activator_probe=probe) == want, label


@pytest.mark.parametrize(
    ("min_scale", "scale_to", "want"),
    [
        # TestDisableScaleToZero: the PA is active (since now) and reachable.
        (0, 0, ScaleDecision(1, True)),
        (2, 0, ScaleDecision(2, True)),
        (0, -1, ScaleDecision(-1, False)),
    ],
)
def test_disable_scale_to_zero(min_scale: int, scale_to: int, want: ScaleDecision) -> None:
    config = rconfig(enable_scale_to_zero=False, min_scale=min_scale)
    assert reconcile_scale(config, scale_to, active(0), NOW) == want


def test_bounds_helpers() -> None:
    assert apply_bounds(2, 0, 1) == 2
    assert apply_bounds(0, 0, 1000) == 1000  # max 0 is unbounded
    assert apply_bounds(1, 5, 9) == 5
    assert scale_bounds(KPAConfig(min_scale=2, max_scale=7)) == (2, 7)
    assert scale_bounds(KPAConfig(min_scale=2, max_scale=7, reachable=False)) == (0, 7)
    assert active_threshold(KPAConfig(initial_scale=3), scale_target_initialized=False) == 3
    assert active_threshold(KPAConfig(initial_scale=3), scale_target_initialized=True) == 1
    assert active_threshold(KPAConfig(min_scale=2, max_scale=4), scale_target_initialized=True) == 2


@pytest.mark.parametrize(
    ("want", "ready", "min_ready", "state", "new"),
    [
        # The table in the doc comment of kpa.go `computeActiveCondition`.
        (0, 5, 1, PAState.ACTIVE, PAState.INACTIVE),
        (0, 0, 1, PAState.ACTIVATING, PAState.INACTIVE),
        (3, 0, 1, PAState.INACTIVE, PAState.ACTIVATING),
        (3, 1, 1, PAState.INACTIVE, PAState.ACTIVE),
        (-1, 0, 1, PAState.INACTIVE, PAState.INACTIVE),
        (-1, 0, 1, PAState.ACTIVATING, PAState.ACTIVATING),
        (-1, 0, 1, PAState.ACTIVE, PAState.ACTIVATING),
        (-1, 1, 1, PAState.INACTIVE, PAState.INACTIVE),
        (-1, 1, 0, PAState.ACTIVATING, PAState.INACTIVE),
        (-1, 1, 1, PAState.ACTIVATING, PAState.ACTIVE),
        (-1, 1, 1, PAState.ACTIVE, PAState.ACTIVE),
    ],
)
def test_compute_active_state(want: int, ready: int, min_ready: int, state: PAState, new: PAState) -> None:
    assert compute_active_state(state, want, ready, min_ready) is new


def test_sks_mode() -> None:
    # kpa.go ReconcileKind: Serve only with want > 0 and a non-negative EBC.
    assert sks_mode(3, 0, PAState.ACTIVE) == "Serve"
    assert sks_mode(3, -1, PAState.ACTIVE) == "Proxy"
    assert sks_mode(0, 50, PAState.ACTIVE) == "Proxy"
    assert sks_mode(SCALE_UNKNOWN, 50, PAState.INACTIVE) == "Proxy"


@pytest.mark.parametrize(
    ("config", "scale_to", "status", "probe", "reason"),
    [
        # The branch of scaler.go that decides each case, by its upstream log line or comment.
        (rconfig(), 10, NEW_PA, True, ""),  # applied as the decider asked
        (rconfig(), -1, active(0), True, "no-metrics"),  # "Metrics are not yet being collected."
        (rconfig(max_scale=8), 10, NEW_PA, True, "max-scale"),  # applyBounds lowers 10 to 8
        (rconfig(min_scale=2), 0, inactive(GRACE), True, "min-scale"),  # applyBounds raises 0 to 2
        (rconfig(initial_scale=5), 1, activating(0), True, "initial-scale"),  # initial scale not yet reached
        (rconfig(enable_scale_to_zero=False), 0, active(0), True, "scale-to-zero-disabled"),
        (rconfig(), 0, activating(ACTIVATION_TIMEOUT // 2), True, "activating"),
        (
            rconfig(),
            0,
            activating(ACTIVATION_TIMEOUT + SECOND),
            True,
            "activation-timeout",
        ),  # "Activation has timed out"
        (rconfig(), 0, active(STABLE - SECOND), True, "idle-hold"),  # "Sleeping additionally for ..."
        (rconfig(), 0, active(STABLE), True, "mark-inactive"),  # Active for a stable window: (0, false)
        (rconfig(), 0, inactive(GRACE), False, "probe-activator"),  # "PA is not yet backed by activator"
        (rconfig(scale_to_zero_pod_retention_period=2 * GRACE), 0, inactive(GRACE), True, "pod-retention"),
        (rconfig(), 0, inactive(GRACE - SECOND), True, "grace-period"),  # re-enqueued for the rest of it
        (rconfig(), 0, inactive(GRACE), True, "scale-to-zero"),  # CanScaleToZero
        (rconfig(), 0, proxying(GRACE - SECOND, GRACE), True, "scale-to-zero"),  # "Fast path scaling to 0"
    ],
)
def test_the_reconciler_names_the_rule_it_applied(
    config: KPAConfig, scale_to: int, status: PAStatus, probe: bool, reason: str
) -> None:
    assert reconcile_scale(config, scale_to, status, NOW, probe).reason == reason


# --- properties ------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    min_scale=st.integers(0, 5),
    extra=st.integers(0, 10),
    unbounded=st.booleans(),
    enable_scale_to_zero=st.booleans(),
    reachable=st.booleans(),
    initial_scale=st.integers(1, 8),
    initialized=st.booleans(),
    state=st.sampled_from(list(PAState)),
    ago=st.integers(0, 20 * MINUTE),
    probe=st.booleans(),
    steps=st.lists(observation, min_size=1, max_size=20),
)
def test_applied_scale_stays_within_bounds(
    min_scale: int,
    extra: int,
    unbounded: bool,
    enable_scale_to_zero: bool,
    reachable: bool,
    initial_scale: int,
    initialized: bool,
    state: PAState,
    ago: int,
    probe: bool,
    steps: list[tuple[int, int, float, float]],
) -> None:
    """What the reconciler applies lies in [min, max]; 0 only when the minimum is 0 and scale to zero is on.

    The decider alone knows no bounds (upstream's `Scale` neither); they are the reconciler's. No
    rule named means the decider's count went through as it was; a bound named moved it that way.
    """
    max_scale = 0 if unbounded else max(min_scale, 1) + extra
    config = KPAConfig(
        min_scale=min_scale,
        max_scale=max_scale,
        enable_scale_to_zero=enable_scale_to_zero,
        reachable=reachable,
        initial_scale=initial_scale,
    )
    lower = min_scale if reachable else 0
    if initial_scale > 1 and not initialized and reachable:
        lower = max(lower, initial_scale)
    a = KPADecider(make_decider_spec(config), FakeMetrics(), now=0, ready_pods=1)
    now = 0
    for dt, ready, stable, panic in steps:
        now += dt
        desired = a.scale_observed(now, ready, stable, panic).desired_pod_count
        status = PAStatus(state, now - ago, scale_target_initialized=initialized)
        decision = reconcile_scale(config, desired, status, now, activator_probe=probe)
        assert decision.reason == "" or decision.reason in SCALER_RULES
        if decision.reason == "":
            assert decision.scale == desired and decision.apply
        if decision.reason in ("min-scale", "initial-scale"):
            assert decision.scale > desired
        if decision.reason == "max-scale":
            assert decision.scale < desired
        if decision.apply:
            if decision.scale == 0:
                assert lower == 0 and enable_scale_to_zero
            elif max_scale == 0 or lower <= max_scale:
                assert lower <= decision.scale
                assert max_scale == 0 or decision.scale <= max_scale
            else:
                # An initial scale above max-scale is not rejected upstream and breaks `applyBounds`'
                # precondition (min <= max): a value below the minimum becomes the minimum, any other
                # becomes the maximum. So until the initial scale is reached the result lies between them.
                assert max_scale <= decision.scale <= lower
