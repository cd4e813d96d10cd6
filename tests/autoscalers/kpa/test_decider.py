"""The KPA decider, case by case against upstream, and properties of its decisions.

Cases restate the data of knative/serving's unit tests (snapshot 98e5ef90aa70:
`scaling/autoscaler_test.go`, `resources/metric_test.go`); no test code is copied. The harness
upstream's decider tests use is in `harness`.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from skenario.autoscalers.kpa.config import KPAConfig
from skenario.autoscalers.kpa.decider import (
    DECIDER_RULES,
    INVALID_SCALE_RESULT,
    DeciderSpec,
    KPADecider,
    ScaleResult,
    initial_excess_burst_capacity,
    panic_window,
)
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from tests.autoscalers.kpa.harness import (
    HARNESS_STABLE_WINDOW,
    HARNESS_UTILIZATION,
    T0,
    FakeMetrics,
    expected_ebc,
    harness,
    harness_spec,
    observation,
    sr,
)


@pytest.mark.parametrize(
    ("stable_window", "percentage", "want"),
    [
        # TestMakeMetric
        (60 * SECOND, 10.0, 6 * SECOND),
        (10 * SECOND, 10.0, SECOND),  # "too short panic window": at least one bucket
        (10 * MINUTE, 10.0, MINUTE),
        (60 * SECOND, 50.0, 30 * SECOND),
        (60 * SECOND, 51.0, 31 * SECOND),  # 30.6 s rounds to 31 s
    ],
)
def test_panic_window(stable_window: int, percentage: float, want: int) -> None:
    assert panic_window(KPAConfig(stable_window=stable_window, panic_window_percentage=percentage)) == want


# --- scaling/autoscaler_test.go -------------------------------------------------------------------


def test_scale_down_delay() -> None:
    # TestAutoscalerScaleDownDelay: target 10, rates 10, panic threshold 100, delay 5 min, no pods ready.
    metrics = FakeMetrics()
    spec = DeciderSpec(
        target_value=10,
        total_value=0.0,
        target_burst_capacity=0.0,
        max_scale_down_rate=10,
        max_scale_up_rate=10,
        panic_threshold=100,
        scale_down_delay=5 * MINUTE,
        reachable=True,
    )
    a = KPADecider(spec, metrics, now=0, ready_pods=0)
    # "simple"
    metrics.set_concurrency(40, 40)
    assert a.scale(2 * SECOND, 0).desired_pod_count == 4
    metrics.set_concurrency(0, 0)
    assert a.scale(5 * MINUTE, 0).desired_pod_count == 4  # less than the delay at reduced concurrency
    assert a.scale(5 * MINUTE + 2 * SECOND, 0).desired_pod_count == 0  # now it has passed
    # "gradual"
    metrics.set_concurrency(40, 40)
    assert a.scale(9 * MINUTE, 0).desired_pod_count == 4
    metrics.set_concurrency(30, 30)
    assert a.scale(10 * MINUTE, 0).desired_pod_count == 4  # 4 still dominates
    metrics.set_concurrency(0, 0)
    assert a.scale(11 * MINUTE, 0).desired_pod_count == 4
    assert a.scale(14 * MINUTE, 0).desired_pod_count == 3  # the 4 scrolls out
    assert a.scale(15 * MINUTE, 0).desired_pod_count == 0  # everything scrolled out


def test_scale_down_delay_not_reachable() -> None:
    # TestAutoscalerScaleDownDelayNotReachable: an unreachable revision skips the delay.
    metrics = FakeMetrics()
    spec = DeciderSpec(
        target_value=10,
        total_value=0.0,
        target_burst_capacity=0.0,
        max_scale_down_rate=10,
        max_scale_up_rate=10,
        panic_threshold=100,
        scale_down_delay=5 * MINUTE,
        reachable=True,
    )
    a = KPADecider(spec, metrics, now=0, ready_pods=0)
    metrics.set_concurrency(40, 40)
    assert a.scale(2 * SECOND, 0).desired_pod_count == 4
    metrics.set_concurrency(0, 0)
    assert a.scale(MINUTE, 0).desired_pod_count == 4
    a.update(dataclasses.replace(spec, reachable=False))
    assert a.scale(2 * SECOND, 0).desired_pod_count == 0


def test_scale_down_delay_zero() -> None:
    # TestAutoscalerScaleDownDelayZero: no delay window, so the scale-down is immediate.
    metrics = FakeMetrics(40, 40)
    spec = DeciderSpec(
        target_value=10,
        total_value=0.0,
        target_burst_capacity=0.0,
        max_scale_down_rate=10,
        max_scale_up_rate=10,
        panic_threshold=100,
        reachable=False,  # the upstream spec leaves Reachable unset
    )
    a = KPADecider(spec, metrics, now=0, ready_pods=0)
    assert a.scale(0, 0).desired_pod_count == 4
    metrics.set_concurrency(20, 20)
    assert a.scale(500 * MILLISECOND, 0).desired_pod_count == 2


def test_no_data_no_autoscale() -> None:
    # TestAutoscalerNoDataNoAutoscale
    metrics = FakeMetrics()
    metrics.no_data = True
    assert harness(10, 100, metrics).scale(T0, 1) == INVALID_SCALE_RESULT == ScaleResult(0, 0, False)


def test_metrics_cases() -> None:
    # TestAutoscalerMetrics and TestAutoscalerMetricsWithRPS (the scale results they check).
    a = harness(10, 100, FakeMetrics(50, 50))
    assert a.scale(T0, 1) == sr(5, expected_ebc(10, 100, 50, 1))
    rps = harness(10, 100, FakeMetrics(stable_rps=100, panic_rps=99), scaling_metric="rps")
    assert rps.scale(T0 + 61 * SECOND, 1) == sr(10, expected_ebc(10, 100, 99, 1))


def test_stable_mode_increase() -> None:
    # TestAutoscalerStableModeIncreaseWithConcurrencyDefault
    metrics = FakeMetrics(50, 10)
    a = harness(10, 101, metrics)
    assert a.scale(T0, 1) == sr(5, expected_ebc(10, 101, 10, 1))
    metrics.stable_concurrency = 100
    assert a.scale(T0, 1) == sr(10, expected_ebc(10, 101, 10, 1))
    # TestAutoscalerStableModeIncreaseWithRPS
    metrics = FakeMetrics(stable_rps=50, panic_rps=50)
    a = harness(10, 101, metrics, scaling_metric="rps")
    assert a.scale(T0, 1) == sr(5, expected_ebc(10, 101, 50, 1))
    metrics.stable_rps, metrics.panic_rps = 100, 99
    assert a.scale(T0, 1) == sr(10, expected_ebc(10, 101, 99, 1))


def test_unpanic_after_slow_increase() -> None:
    # TestAutoscalerUnpanicAfterSlowIncrease: jump from 10 to 25 pods, panic, then leave it.
    metrics = FakeMetrics(11, 25)
    a = harness(1, 98, metrics)
    tm = T0
    assert a.scale(tm, 10) == sr(25, expected_ebc(1, 98, 25, 10))
    assert a.panic_time == tm
    # Half a stable window later, +1 pod per tick: 40 ready.
    metrics.set_concurrency(30, 41)
    tm += HARNESS_STABLE_WINDOW // 2
    assert a.scale(tm, 25 + 15) == sr(41, expected_ebc(1, 98, 41, 40))
    assert a.panic_time == T0  # 41 / 40 is under the threshold: panic not extended
    # The end of the stable window and one tick more: panic ends, the stable value rules.
    metrics.set_concurrency(50, 56)
    tm += HARNESS_STABLE_WINDOW // 2 + 2 * SECOND
    assert a.scale(tm, 25 + 30) == sr(50, expected_ebc(1, 98, 56, 55))
    assert a.panic_time is None
    assert not a.in_panic


def test_extend_panic_window() -> None:
    # TestAutoscalerExtendPanicWindow: still surging half a window later extends the panic.
    metrics = FakeMetrics(11, 25)
    a = harness(1, 98, metrics)
    tm = T0
    assert a.scale(tm, 10) == sr(25, expected_ebc(1, 98, 25, 10))
    assert a.panic_time == tm
    metrics.set_concurrency(30, 80)
    tm += HARNESS_STABLE_WINDOW // 2
    assert a.scale(tm, 25 + 15) == sr(80, expected_ebc(1, 98, 80, 40))
    assert a.panic_time == tm


def test_stable_mode_decrease() -> None:
    # TestAutoscalerStableModeDecrease
    metrics = FakeMetrics(100, 100)
    a = harness(10, 98, metrics)
    assert a.scale(T0, 8) == sr(10, expected_ebc(10, 98, 100, 8))
    metrics.set_concurrency(50, 50)
    assert a.scale(T0, 8) == sr(5, expected_ebc(10, 98, 50, 8))


def test_stable_mode_no_traffic_scale_to_zero() -> None:
    # TestAutoscalerStableModeNoTrafficScaleToZero: the decider itself goes to 0.
    metrics = FakeMetrics(1, 0)
    a = harness(10, 75, metrics)
    assert a.scale(T0, 1) == sr(1, expected_ebc(10, 75, 0, 1))
    metrics.stable_concurrency = 0.0
    assert a.scale(T0, 1) == sr(0, expected_ebc(10, 75, 0, 1))


def test_activation_scale() -> None:
    # TestAutoscalerActivationScale: 0 stays 0; any non-zero demand is raised to the activation scale.
    metrics = FakeMetrics(0, 0)
    a = harness(10, 75, metrics, activation_scale=2)
    assert a.scale(T0, 1) == sr(0, expected_ebc(10, 75, 0, 1))
    metrics.stable_concurrency = 1.0
    assert a.scale(T0, 1) == sr(2, expected_ebc(10, 75, 0, 1))


def test_panic_mode_exponential_track_and_stabilize() -> None:
    # TestAutoscalerPanicModeExponentialTrackAndStabilize: load x6 per step until 1296.
    metrics = FakeMetrics(6, 6)
    a = harness(1, 101, metrics)
    assert a.scale(T0, 1) == sr(6, expected_ebc(1, 101, 6, 1))
    tm = T0 + MILLISECOND  # upstream takes a fresh time.Now() here
    metrics.set_concurrency(36, 36)
    assert a.scale(tm, 6) == sr(36, expected_ebc(1, 101, 36, 6))
    assert a.panic_time == tm
    metrics.set_concurrency(216, 216)
    tm += SECOND
    assert a.scale(tm, 36) == sr(216, expected_ebc(1, 101, 216, 36))
    assert a.panic_time == tm
    metrics.set_concurrency(1296, 1296)
    assert a.scale(tm, 216) == sr(1296, expected_ebc(1, 101, 1296, 216))
    assert a.panic_time == tm
    tm += SECOND
    assert a.scale(tm, 1296) == sr(1296, expected_ebc(1, 101, 1296, 1296))


@pytest.mark.parametrize(
    ("label", "target", "tbc", "stable", "panic", "ready", "changes", "prep_panic", "want_scale", "want_ebc"),
    [
        # TestAutoscalerScale
        ("NoDataAtZeroNoAutoscale", 10, 100, 0, 0, 1, {}, None, 0, expected_ebc(10, 100, 0, 1)),
        ("StableModeUnlimitedTBC", 181, -1, 21, 26, 1, {}, None, 1, -1),
        ("0TBC", 10, 0, 50, 49, 1, {}, None, 5, 0),
        ("StableModeNoChange", 10, 100, 50, 50, 1, {}, None, 5, expected_ebc(10, 100, 50, 1)),
        ("PanicStableLargerThanPanic", 1, 100, 50, 30, 5, {}, 5, 50, expected_ebc(1, 100, 30, 5)),
        ("PanicStableLessThanPanic", 1, 100, 20, 30, 5, {}, 5, 30, expected_ebc(1, 100, 30, 5)),
        ("StableModeNoChangeAlreadyScaled", 10, 100, 50, 50, 5, {}, None, 5, expected_ebc(10, 100, 50, 5)),
        (
            "StableModeIncreaseWithSmallScaleUpRate",
            1,
            1982,
            3,
            3.1,
            2,
            {"max_scale_up_rate": 1.1},
            None,
            3,
            expected_ebc(1, 1982, 3.1, 2),
        ),
        (
            "StableModeDecreaseWithSmallScaleDownRate",
            10,
            1982,
            1,
            1,
            100,
            {"max_scale_down_rate": 1.1},
            None,
            90,
            expected_ebc(10, 1982, 1, 100),
        ),
        (
            "StableModeDecreaseNonReachable",
            10,
            1982,
            1,
            1,
            100,
            {"max_scale_down_rate": 1.1, "reachable": False},
            None,
            1,
            expected_ebc(10, 1982, 1, 100),
        ),
        ("PanicModeDoublePodCount", 10, 84, 50, 100, 1, {}, None, 10, expected_ebc(10, 84, 100, 1)),
    ],
)
def test_autoscaler_scale_table(
    label: str,
    target: float,
    tbc: float,
    stable: float,
    panic: float,
    ready: int,
    changes: dict[str, object],
    prep_panic: int | None,
    want_scale: int,
    want_ebc: int,
) -> None:
    a = harness(target, tbc, FakeMetrics(stable, panic), **changes)
    if prep_panic is not None:  # panicking since 5 s ago with max panic pods set
        a.panic_time = T0 - 5 * SECOND
        a.max_panic_pods = prep_panic
    assert a.scale(T0, ready) == sr(want_scale, want_ebc), label


def test_panic_then_unpanic_scale_down() -> None:
    # TestAutoscalerPanicThenUnPanicScaleDown
    metrics = FakeMetrics(100, 100)
    a = harness(10, 93, metrics)
    assert a.scale(T0, 1) == sr(10, expected_ebc(10, 93, 100, 1))
    panic_time = T0 + MILLISECOND
    metrics.panic_concurrency = 1000
    assert a.scale(panic_time, 10) == sr(100, expected_ebc(10, 93, 1000, 10))
    metrics.set_concurrency(1, 1)  # traffic dropped off; the scale stays while panicking
    assert a.scale(panic_time + 30 * SECOND, 10) == sr(100, expected_ebc(10, 93, 1, 10))
    assert a.scale(panic_time + 61 * SECOND, 10) == sr(1, expected_ebc(10, 93, 1, 10))  # after the stable window


def test_rate_limits() -> None:
    # TestAutoscalerRateLimitScaleUp: 100 pods needed, but only x10 per tick.
    a = harness(10, 61, FakeMetrics(1000, 1001))
    assert a.scale(T0, 1) == sr(10, expected_ebc(10, 61, 1001, 1))
    assert a.scale(T0, 10) == sr(100, expected_ebc(10, 61, 1001, 10))
    # TestAutoscalerRateLimitScaleDown: 1 pod needed, but only /10 per tick.
    a = harness(10, 61, FakeMetrics(1, 1))
    assert a.scale(T0, 100) == sr(10, expected_ebc(10, 61, 1, 100))
    assert a.scale(T0, 10) == sr(1, expected_ebc(10, 61, 1, 10))


def test_zero_ready_pods_count_as_one() -> None:
    # TestAutoscalerUseOnePodAsMinimumIfEndpointsNotFound: the rate limit is x10 of one pod.
    a = harness(10, 81, FakeMetrics(1000, 888))
    assert a.scale(T0, 0) == sr(10, expected_ebc(10, 81, 888, 0))


def test_update_target() -> None:
    # TestAutoscalerUpdateTarget
    a = harness(10, 77, FakeMetrics(100, 101))
    assert a.scale(T0, 1) == sr(10, expected_ebc(10, 77, 101, 1))
    a.update(
        DeciderSpec(
            target_value=1,
            total_value=1 / HARNESS_UTILIZATION,
            activator_capacity=21,
            target_burst_capacity=71,
            panic_threshold=2,
            max_scale_down_rate=10,
            max_scale_up_rate=10,
            stable_window=HARNESS_STABLE_WINDOW,
            reachable=False,  # left unset upstream
        )
    )
    assert a.scale(T0, 10) == sr(100, expected_ebc(1, 71, 101, 10))


def test_start_in_panic_mode() -> None:
    # TestStartInPanicMode and TestNewFail (a failed pod count reads as 0).
    spec = DeciderSpec(
        target_value=100,
        total_value=120,
        target_burst_capacity=11,
        panic_threshold=220,
        max_scale_up_rate=10,
        max_scale_down_rate=10,
        stable_window=HARNESS_STABLE_WINDOW,
    )
    for ready in (0, 1):
        a = KPADecider(spec, FakeMetrics(10, 10), now=T0, ready_pods=ready)
        assert a.panic_time is None
        assert a.max_panic_pods == ready
    a = KPADecider(spec, FakeMetrics(10, 10), now=T0, ready_pods=2)
    assert a.panic_time == T0
    assert a.max_panic_pods == 2


def test_initial_excess_burst_capacity() -> None:
    # MultiScaler.createScaler: -1 and 0 pass through; otherwise initial scale x total - TBC.
    assert initial_excess_burst_capacity(harness_spec(10, -1)) == -1
    assert initial_excess_burst_capacity(harness_spec(10, 0)) == 0
    assert (
        initial_excess_burst_capacity(DeciderSpec(target_value=70, total_value=100, target_burst_capacity=211)) == -111
    )
    spec = DeciderSpec(target_value=70, total_value=100, target_burst_capacity=150, initial_scale=3)
    assert initial_excess_burst_capacity(spec) == 150


# --- the decider on its own windows, by hand (reference section 3.3) ------------------------------


def test_burst_panics_and_scales_back_down_on_real_windows() -> None:
    """Default settings: 70 per pod, 60 s stable and 6 s panic windows, rates 1000 up and 2 down."""
    a = KPADecider.from_config(KPAConfig(), now=0, ready_pods=1)
    metrics = a.metrics
    for t in range(60):
        metrics.record(t * SECOND, concurrency=140.0, rps=0.0)
    assert a.scale(59 * SECOND, 2) == sr(2, math.floor(2 * 100 - 211 - 140))  # 140 / 70
    for t in range(60, 66):
        metrics.record(t * SECOND, concurrency=700.0, rps=0.0)
    # stable (seconds 6..65): (54 x 140 + 6 x 700) / 60 = 196 -> 3 pods; panic: 700 -> 10 pods, 10 / 2 >= 2.
    result = a.scale(65 * SECOND, 2)
    assert result.desired_pod_count == 10
    assert a.panic_time == 65 * SECOND
    # Then no load at all. At 67 s the panic window (62..67) holds 4 x 700 / 6 = 466.67 -> 7 pods,
    # under 2 x 10 ready: panic holds and keeps 10. At 125 s, 65 s + 60 s is not yet past; at 127 s
    # the panic ends and, with no load, the decision at most halves per tick: 10 -> 5 -> 2 -> 1 -> 0.
    ticks = {67: (10, 10), 125: (10, 10), 127: (10, 5), 129: (5, 2), 131: (2, 1), 133: (1, 0)}
    for t in range(66, 134):
        metrics.record(t * SECOND, concurrency=0.0, rps=0.0)
        if t in ticks:
            ready, want = ticks[t]
            assert a.scale(t * SECOND, ready).desired_pod_count == want, t
            assert a.in_panic is (t < 127)


def test_decider_invalid_without_samples() -> None:
    a = KPADecider.from_config(KPAConfig(), now=0, ready_pods=0)
    assert a.scale(2 * SECOND, 0) == INVALID_SCALE_RESULT
    unlimited = KPADecider.from_config(KPAConfig(target_burst_capacity=-1), now=0, ready_pods=0)
    assert unlimited.scale(2 * SECOND, 0) == sr(0, -1)  # activator always in path: an empty window is 0


# --- properties ------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    target=st.floats(0.5, 200),
    up=st.floats(1.01, 20),
    down=st.floats(1.01, 10),
    threshold=st.floats(1.1, 10),
    activation=st.sampled_from([0, 2, 3]),
    ready_at_creation=st.integers(0, 20),
    steps=st.lists(observation, min_size=1, max_size=40),
)
def test_panic_mode_never_scales_down(
    target: float,
    up: float,
    down: float,
    threshold: float,
    activation: int,
    ready_at_creation: int,
    steps: list[tuple[int, int, float, float]],
) -> None:
    """Between two ticks that are both in panic mode the decision never decreases (no scale-down delay)."""
    spec = DeciderSpec(
        target_value=target,
        total_value=target / 0.7,
        panic_threshold=threshold,
        max_scale_up_rate=up,
        max_scale_down_rate=down,
        activation_scale=activation,
    )
    a = KPADecider(spec, FakeMetrics(), now=0, ready_pods=ready_at_creation)
    now = 0
    previous: int | None = None
    for dt, ready, stable, panic in steps:
        was_panicking = a.in_panic
        now += dt
        desired = a.scale_observed(now, ready, stable, panic).desired_pod_count
        if was_panicking and a.in_panic and previous is not None:
            assert desired >= previous
        if a.in_panic:
            assert desired == a.max_panic_pods
        previous = desired


@settings(max_examples=150, deadline=None)
@given(
    load=st.integers(0, 20000),
    per_pod=st.integers(1, 500),
    percent=st.integers(1, 100),
    metric=st.sampled_from(["concurrency", "rps"]),
    stable_seconds=st.integers(6, 90),
    data=st.data(),
)
def test_constant_load_gives_ceil_of_load_over_target(
    load: int, per_pod: int, percent: int, metric: str, stable_seconds: int, data: st.DataObject
) -> None:
    """Constant load L per second with per-pod target T at utilisation u settles at ceil(L / (T u)) pods.

    Ratios within 1e-9 of an integer are left out: there the float quotient (as upstream's) may
    land on either side of the integer, so the exact ceiling is not what either implementation
    computes.
    """
    exact = Fraction(load) / (Fraction(per_pod) * Fraction(percent, 100))
    assume(exact == 0 or abs(exact - round(exact)) > Fraction(1, 10**9))
    want = math.ceil(exact)
    # Any ready count that neither rate limit binds on nor panics: floor(R / 2) <= want < 2R.
    ready = data.draw(st.integers(want // 2 + 1, 2 * want + 1)) if want else data.draw(st.integers(0, 1))
    config = KPAConfig(
        scaling_metric="rps" if metric == "rps" else "concurrency",
        container_concurrency_target_default=float(per_pod),
        rps_target_default=float(per_pod),
        container_concurrency_target_percentage=float(percent),
        target_utilization_percentage=float(percent),
        stable_window=stable_seconds * SECOND,
    )
    a = KPADecider.from_config(config, now=0, ready_pods=ready)
    result = INVALID_SCALE_RESULT
    for t in range(stable_seconds + 5):
        a.metrics.record(t * SECOND, concurrency=float(load), rps=float(load))
        if t % 2 == 0:
            result = a.scale(t * SECOND, ready)
    assert result.scale_valid
    assert result.desired_pod_count == want
    assert not a.in_panic


# --- what a decision came from (ScaleInputs) -------------------------------------------------------
# The harness's rates are 10 both ways and its panic threshold 2; each case works `Scale` by hand.


def test_a_steady_load_is_decided_by_the_stable_window_and_says_so() -> None:
    """35 in flight at a target of 10 with 4 ready: ceil(35 / 10) = 4 pods, within the rate limits
    (ceil(10 x 4) = 40, floor(4 / 10) = 0), and 4 / 4 ready is below the panic threshold of 2."""
    result = harness(10, 0, FakeMetrics(35, 35)).scale(T0, 4)
    assert result.desired_pod_count == 4
    assert result.inputs is not None
    assert (result.inputs.observed_stable, result.inputs.observed_panic) == (35, 35)
    assert (result.inputs.stable_pods, result.inputs.panic_pods) == (4, 4)
    assert result.inputs.rule == "stable-window"


def test_the_rate_limits_are_named_when_they_bind() -> None:
    # 500 in flight at target 10 asks for 50; with 1 ready the most is ceil(10 x 1) = 10.
    up = harness(10, 0, FakeMetrics(500, 0)).scale(T0, 1)
    assert up.desired_pod_count == 10 and up.inputs is not None
    assert (up.inputs.stable_pods, up.inputs.rule) == (50, "max-scale-up-rate")
    # 10 in flight asks for 1; with 50 ready the least is floor(50 / 10) = 5.
    down = harness(10, 0, FakeMetrics(10, 10)).scale(T0, 50)
    assert down.desired_pod_count == 5 and down.inputs is not None
    assert (down.inputs.stable_pods, down.inputs.rule) == (1, "max-scale-down-rate")


def test_panic_mode_names_the_panic_window_then_the_hold() -> None:
    """With 2 ready, the panic window's 50 asks for 5 = 2.5 x 2 ready >= 2: panic, and 5 > the stable
    window's ceil(20 / 10) = 2. Two seconds later the panic window asks for 3 (1.5 x 2, below the
    threshold, but panic lasts a stable window): the hold keeps the 5."""
    metrics = FakeMetrics(20, 50)
    decider = harness(10, 0, metrics)
    first = decider.scale(T0, 2)
    assert first.desired_pod_count == 5 and first.inputs is not None and first.inputs.rule == "panic-window"
    assert decider.in_panic
    metrics.set_concurrency(20, 30)
    second = decider.scale(T0 + 2 * SECOND, 2)
    assert second.desired_pod_count == 5 and second.inputs is not None
    assert (second.inputs.stable_pods, second.inputs.panic_pods, second.inputs.rule) == (2, 3, "panic-hold")


def test_activation_scale_and_the_scale_down_delay_are_named() -> None:
    # 5 in flight at target 10 asks for 1; activation-scale 3 raises any demand to 3.
    raised = harness(10, 0, FakeMetrics(5, 5), activation_scale=3).scale(T0, 1)
    assert raised.desired_pod_count == 3 and raised.inputs is not None and raised.inputs.rule == "activation-scale"
    # 40 asks for 4, then 10 asks for 1, but a 1-minute delay keeps the 4 asked for 2 s before.
    metrics = FakeMetrics(40, 40)
    delayed = harness(10, 0, metrics, scale_down_delay=MINUTE)
    assert delayed.scale(T0, 4).desired_pod_count == 4
    metrics.set_concurrency(10, 10)
    held = delayed.scale(T0 + 2 * SECOND, 4)
    assert held.desired_pod_count == 4 and held.inputs is not None
    assert (held.inputs.stable_pods, held.inputs.rule) == (1, "scale-down-delay")


def test_no_data_has_no_inputs() -> None:
    metrics = FakeMetrics()
    metrics.no_data = True
    assert harness(10, 100, metrics).scale(T0, 1).inputs is None


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(observation, min_size=1, max_size=30), target=st.floats(0.5, 200))
def test_the_rule_named_is_the_one_that_gives_the_count(
    steps: list[tuple[int, int, float, float]], target: float
) -> None:
    """Whatever the decider sees, its rule is one it documents, and the count is what that rule's
    formula gives: ceil(average / target) for a window, the rate limits' ceil(10 x R) and floor(R / 10)
    (R the ready pods, at least 1), the panic mode's largest count so far for the hold."""
    decider = harness(target, 0, FakeMetrics())
    now = T0
    for dt, ready, stable, panic in steps:
        now += dt
        result = decider.scale_observed(now, ready, stable, panic)
        inputs = result.inputs
        assert inputs is not None and inputs.rule in DECIDER_RULES
        assert inputs.stable_pods == math.ceil(stable / target) and inputs.panic_pods == math.ceil(panic / target)
        r = max(1, ready)
        want = {
            "stable-window": inputs.stable_pods,
            "panic-window": inputs.panic_pods,
            "max-scale-up-rate": math.ceil(10 * r),
            "max-scale-down-rate": math.floor(r / 10),
            "panic-hold": decider.max_panic_pods,
        }[inputs.rule]
        assert result.desired_pod_count == want
