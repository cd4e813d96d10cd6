"""The KPA decider, its windows and the reconciler's scale-to-zero rules, case by case against upstream.

Cases restate the data of knative/serving's unit tests (snapshot 98e5ef90aa70); no test code is
copied. The upstream test files are named above each group. Where upstream uses `time.Now()`,
these tests use fixed simulated times with the same gaps between calls.

Upstream's decider tests build their spec with a harness of their own (`newTestAutoscaler`:
panic threshold 2, rates 10, stable window 60 s, total = target / 0.75, reachable); the
production defaults stay in the product and the harness lives here (`harness_spec`).
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from skenario.autoscalers.kpa import (
    ACTIVATION_TIMEOUT_BUFFER,
    INVALID_SCALE_RESULT,
    SCALE_UNKNOWN,
    DeciderSpec,
    KPAConfig,
    KPAConfigError,
    KPADecider,
    ScaleResult,
    initial_excess_burst_capacity,
    make_decider_spec,
    panic_window,
    resolve_metric_target,
)
from skenario.autoscalers.kpa_scaler import (
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
from skenario.autoscalers.kpa_windows import (
    MIN_EXPONENT,
    MaxTimeWindow,
    MetricCollection,
    TimedBuckets,
    WeightedBuckets,
    compute_smoothing_coeff,
    round_to_n_digits,
)
from skenario.core.time import HOUR, MILLISECOND, MINUTE, SECOND

# --- upstream test harness (pkg/autoscaler/scaling/autoscaler_test.go) -----------------------------

HARNESS_UTILIZATION = 0.75  # `targetUtilization` of the harness: total = target / 0.75
HARNESS_STABLE_WINDOW = 60 * SECOND
T0 = 10 * HOUR  # "time.Now()" of an upstream test; any instant works, the gaps matter


class FakeMetrics:
    """Upstream's fake `metricClient`: fixed stable and panic values, or no data."""

    def __init__(
        self,
        stable_concurrency: float = 0.0,
        panic_concurrency: float = 0.0,
        stable_rps: float = 0.0,
        panic_rps: float = 0.0,
    ) -> None:
        self.stable_concurrency = stable_concurrency
        self.panic_concurrency = panic_concurrency
        self.stable_rps = stable_rps
        self.panic_rps = panic_rps
        self.no_data = False

    def set_concurrency(self, stable: float, panic: float) -> None:
        self.stable_concurrency, self.panic_concurrency = stable, panic

    def stable_and_panic_concurrency(self, now: int) -> tuple[float, float] | None:
        return None if self.no_data else (self.stable_concurrency, self.panic_concurrency)

    def stable_and_panic_rps(self, now: int) -> tuple[float, float] | None:
        return None if self.no_data else (self.stable_rps, self.panic_rps)


def harness_spec(target: float, tbc: float, **changes: object) -> DeciderSpec:
    """`newTestAutoscalerWithScalingMetric`'s DeciderSpec."""
    spec = DeciderSpec(
        target_value=target,
        total_value=target / HARNESS_UTILIZATION,
        target_burst_capacity=tbc,
        panic_threshold=2.0,
        max_scale_up_rate=10.0,
        max_scale_down_rate=10.0,
        activator_capacity=150.0,
        stable_window=HARNESS_STABLE_WINDOW,
        reachable=True,
    )
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


def harness(target: float, tbc: float, metrics: FakeMetrics, **changes: object) -> KPADecider[FakeMetrics]:
    """A decider created (at T0) while one pod is ready, as `newTestAutoscaler` does."""
    return KPADecider(harness_spec(target, tbc, **changes), metrics, now=T0, ready_pods=1)


def expected_ebc(target: float, tbc: float, panic: float, pods: int) -> int:
    """`expectedEBC`: total capacity (target / 0.75 per pod) minus the TBC minus the panic value, floored."""
    return math.floor(target / HARNESS_UTILIZATION * pods - tbc - panic)


def sr(desired: int, ebc: int) -> ScaleResult:
    return ScaleResult(desired, ebc, True)


# --- defaults and resolution (config.go, target.go / target_test.go, metric.go / metric_test.go) ---


def test_defaults_are_upstreams() -> None:
    c = KPAConfig()
    assert c.stable_window == 60 * SECOND
    assert c.panic_window_percentage == 10.0
    assert c.panic_threshold_percentage == 200.0
    assert c.container_concurrency_target_percentage == 70.0
    assert c.container_concurrency_target_default == 100.0
    assert c.rps_target_default == 200.0
    assert c.target_burst_capacity == 211.0
    assert c.activator_capacity == 100.0
    assert c.max_scale_up_rate == 1000.0
    assert c.max_scale_down_rate == 2.0
    assert c.scale_to_zero_grace_period == 30 * SECOND
    assert c.scale_to_zero_pod_retention_period == 0
    assert c.scale_down_delay == 0
    assert c.enable_scale_to_zero is True
    assert c.initial_scale == 1
    assert (c.min_scale, c.max_scale) == (0, 0)
    assert c.activation_scale == 0
    assert c.tick_interval == 2 * SECOND
    assert panic_window(c) == 6 * SECOND
    spec = make_decider_spec(c)
    assert (spec.target_value, spec.total_value) == (70.0, 100.0)  # 70 concurrent requests per pod
    assert spec.panic_threshold == 2.0
    assert make_decider_spec(KPAConfig(scaling_metric="rps")).target_value == 140.0  # 140 RPS per pod


@pytest.mark.parametrize(
    ("config", "want_target", "want_total"),
    [
        # TestResolveMetricTarget; its config has a concurrency fraction of 1.0 and RPS 0.7.
        (KPAConfig(container_concurrency_target_percentage=100), 100, 100),
        (KPAConfig(container_concurrency_target_percentage=80), 80, 100),
        (KPAConfig(container_concurrency_target_percentage=30, container_concurrency_target_default=2), 0.6, 2),
        (
            KPAConfig(
                container_concurrency_target_percentage=80, container_concurrency=12, target_utilization_percentage=75
            ),
            9,
            12,
        ),
        (KPAConfig(container_concurrency_target_percentage=80, container_concurrency=10), 8, 10),
        (KPAConfig(container_concurrency_target_percentage=80, container_concurrency=1), 0.8, 1),
        (KPAConfig(container_concurrency_target_percentage=100, container_concurrency=1), 1, 1),
        (KPAConfig(container_concurrency_target_percentage=100, target=1), 1, 1),
        (KPAConfig(container_concurrency_target_percentage=0.1, target=1), 0.01, 1),  # TargetMin
        (KPAConfig(container_concurrency_target_percentage=75, target=1), 0.75, 1),
        (KPAConfig(container_concurrency_target_percentage=75, target=10), 7.5, 10),
        (KPAConfig(container_concurrency_target_percentage=100, container_concurrency=10, target=1), 1, 1),
        (KPAConfig(container_concurrency_target_percentage=100, target=500), 500, 500),
        (KPAConfig(container_concurrency_target_percentage=100, container_concurrency=1, target=10), 1, 1),
        (
            KPAConfig(container_concurrency_target_percentage=100, scaling_metric="rps", container_concurrency=1),
            140,
            200,
        ),
        (KPAConfig(container_concurrency_target_percentage=100, scaling_metric="rps", target=1), 0.7, 1),
        (
            KPAConfig(
                container_concurrency_target_percentage=100, scaling_metric="rps", target_utilization_percentage=75
            ),
            150,
            200,
        ),
        (KPAConfig(container_concurrency_target_percentage=100, scaling_metric="rps", target=300), 210, 300),
    ],
)
def test_resolve_metric_target(config: KPAConfig, want_target: float, want_total: float) -> None:
    target, total = resolve_metric_target(config)
    assert target == pytest.approx(want_target, rel=1e-12)
    assert total == want_total


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


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"scale_to_zero_grace_period": 0}, "scale-to-zero-grace-period"),
        ({"scale_down_delay": -SECOND}, "scale-down-delay"),
        ({"scale_down_delay": 1500 * MILLISECOND}, "scale-down-delay"),
        ({"scale_to_zero_pod_retention_period": -SECOND}, "scale-to-zero-pod-retention-period"),
        ({"target_burst_capacity": -2.0}, "target-burst-capacity"),
        ({"container_concurrency_target_percentage": 0.0}, "container-concurrency-target-percentage"),
        ({"container_concurrency_target_percentage": 101.0}, "container-concurrency-target-percentage"),
        ({"target_utilization_percentage": 0.5}, "target-utilization-percentage"),
        ({"container_concurrency_target_default": 0.001}, "container-concurrency-target-default"),
        ({"rps_target_default": 0.001}, "requests-per-second-target-default"),
        ({"activator_capacity": 0.5}, "activator-capacity"),
        ({"max_scale_up_rate": 1.0}, "max-scale-up-rate"),
        ({"max_scale_down_rate": 1.0}, "max-scale-down-rate"),
        ({"stable_window": 5 * SECOND}, "stable-window"),
        ({"stable_window": HOUR + SECOND}, "stable-window"),
        ({"stable_window": 6500 * MILLISECOND}, "stable-window"),
        ({"panic_window_percentage": 0.5}, "panic-window-percentage"),
        ({"panic_window_percentage": 101.0}, "panic-window-percentage"),
        ({"initial_scale": 0}, "initial-scale"),
        ({"min_scale": -1}, "min-scale"),
        ({"min_scale": 3, "max_scale": 2}, "max-scale"),
        ({"activation_scale": 1}, "activation-scale"),
        ({"activation_scale": 2, "min_scale": 3}, "activation-scale"),
        ({"activation_scale": 4, "max_scale": 3}, "activation-scale"),
        ({"target": 0.001}, "target"),
    ],
)
def test_invalid_settings_are_rejected_naming_the_key(changes: dict[str, object], field: str) -> None:
    with pytest.raises(KPAConfigError) as info:
        KPAConfig(**changes)  # type: ignore[arg-type]
    assert info.value.field == field


def test_valid_edge_settings() -> None:
    # config_test.go "minimum" and "with -1 tbc"; a zero initial scale when the cluster allows it.
    KPAConfig(max_scale_up_rate=1.001, container_concurrency_target_percentage=50, target_burst_capacity=0)
    KPAConfig(panic_threshold_percentage=105)  # config.go's validate does not range-check the ConfigMap key
    KPAConfig(target_burst_capacity=-1)
    KPAConfig(initial_scale=0, allow_zero_initial_scale=True)
    KPAConfig(min_scale=2, max_scale=2, activation_scale=2)


# --- aggregation/bucketing_test.go -----------------------------------------------------------------


def test_compute_smoothing_coeff() -> None:
    # TestComputeDecayMultiplier (upstream compares within weightPrecision; we ask for 5 digits).
    assert compute_smoothing_coeff(100) == MIN_EXPONENT
    assert compute_smoothing_coeff(60) == MIN_EXPONENT
    assert compute_smoothing_coeff(40) == pytest.approx(0.20567, abs=1e-5)
    assert compute_smoothing_coeff(6) == pytest.approx(0.78456, abs=1e-5)


def test_round_to_n_digits_rounds_halves_away_from_zero() -> None:
    assert round_to_n_digits(0, 2.5) == 3.0  # Go's math.Round, not banker's rounding
    assert round_to_n_digits(0, -2.5) == -3.0
    assert round_to_n_digits(3, 5.8124) == 5.812


def test_window_average() -> None:
    # TestTimedFloat64BucketsWindowAverage: a 5 s window of 1 s buckets.
    now = T0 + 300 * MILLISECOND  # upstream's time.Now() is not on a bucket boundary
    b = TimedBuckets(5 * SECOND, SECOND)
    b.record(now, 1)
    assert b.window_average(now) == 1.0  # the partial window counts only the written bucket
    for i in range(1, 5):
        b.record(now + i * SECOND, i + 1)
    assert b.window_average(now + 4 * SECOND) == 15 / 5
    assert b.window_average(now + 3600 * MILLISECOND) == 15 / 5  # `now` lagging behind the last write
    assert b.window_average(now + 6 * SECOND) == (15 - 1 - 2) / (5 - 2)  # a short hole: 2 buckets fell out
    assert b.window_average(now + 10 * SECOND) == 0.0  # a whole window without data
    b.record(now + 6 * SECOND, 91)  # a write after a hole zeroes the skipped bucket
    assert b.window_average(now + 6 * SECOND) == (15 - 1 - 2 + 91) / 5

    now += MINUTE
    b.record(now, 1984)  # after a long silence, a fresh partial window
    assert b.window_average(now) == 1984.0
    b.record(now - 3 * SECOND, 4)  # an earlier time inside the window extends it backwards
    assert b.window_average(now) == (4 + 1984) / 4
    now += SECOND
    b.record(now, 5)
    assert b.window_average(now) == (4 + 1984 + 5) / 5
    b.record(now - 3 * SECOND, 10)
    assert b.window_average(now) == (4 + 10 + 1984 + 5) / 5
    b.record(now - 6 * SECOND, 10)  # older than the window: ignored
    assert b.window_average(now) == (4 + 10 + 1984 + 5) / 5
    b.record(now - 5 * SECOND, 10)  # exactly a window old: ignored
    assert b.window_average(now) == (4 + 10 + 1984 + 5) / 5
    b.record(now + 5 * SECOND, 10)  # exactly a window of silence: everything is reset
    assert b.window_average(now + 5 * SECOND) == 10.0


def test_partial_window_after_the_last_write() -> None:
    # The WindowAverage doc comment: with data for less than a window and nothing recent, the average
    # is over the buckets from the first write to the last, not over the whole window.
    b = TimedBuckets(5 * SECOND, SECOND)
    b.record(T0, 1)
    b.record(T0 + SECOND, 2)
    assert b.window_average(T0 + 3 * SECOND) == (1 + 2) / 2
    assert b.window_average(T0 + 5 * SECOND) == 2 / 1  # the first bucket has left the window
    assert b.window_average(T0 + 6 * SECOND) == 0.0


def test_descending_record() -> None:
    # TestDescendingRecord: a 5 written every second from 8 s down to 0 s averages 5.
    now = T0 + 300 * MILLISECOND
    b = TimedBuckets(5 * SECOND, SECOND)
    for i in range(8, -1, -1):
        b.record(now + i * SECOND, 5)
    assert b.window_average(now + 5 * SECOND) == 5.0


def test_same_bucket_sums_and_holes() -> None:
    # TestTimedFloat64BucketsSimple: two writes in one second add up.
    b = TimedBuckets(2 * MINUTE, SECOND)
    assert b.is_empty(T0)
    b.record(T0, 1.0)
    b.record(T0 + 100 * MILLISECOND, 10.0)
    assert b.window_average(T0) == 11.0
    assert not b.is_empty(T0)
    # TestTimedFloat64BucketsHoles: 1..5 over 5 s, then a write at 8 s leaves [3] = 2 and [4] = 5 in the window.
    h = TimedBuckets(5 * SECOND, SECOND)
    for i in range(5):
        h.record(T0 + i * SECOND, i + 1)
    assert h.window_average(T0 + 4 * SECOND) == 15 / 5
    h.record(T0 + 8 * SECOND, 2.0)
    assert h.window_average(T0 + 8 * SECOND) == (5 + 0 + 0 + 0 + 2) / 5


def test_many_reps_with_non_monotonic_order() -> None:
    # TestTimedFloat64BucketsManyRepsWithNonMonotonicalOrder: buckets written out of order sum to 100.
    b = TimedBuckets(MINUTE, SECOND)
    for p, d in enumerate([0, 3, 2, 1, 4]):
        for t in range(5):
            b.record(T0 + d * SECOND, p + t)
    assert b.window_average(T0 + 4 * SECOND) == 100 / 5


def test_weighted_average() -> None:
    # TestTimedFloat64BucketsWeightedAverage: a 5 s weighted window.
    now = T0 + 300 * MILLISECOND
    b = WeightedBuckets(5 * SECOND, SECOND)
    m = b.smoothing_coeff
    b.record(now, 2)
    want = 2 * m
    assert b.window_average(now) == pytest.approx(want, rel=1e-12)
    want *= 1 - m  # one second later, no write
    assert b.window_average(now + SECOND) == pytest.approx(want, rel=1e-12)
    b.record(now + SECOND, 2)
    want += 2 * m
    assert b.window_average(now + SECOND) == pytest.approx(want, rel=1e-12)
    for i in range(5):
        b.record(now + (2 + i) * SECOND, i + 2)  # the window is now [2, 3, 4, 5, 6]
    want = 6 * m + 5 * m * (1 - m) + 4 * m * (1 - m) ** 2 + 3 * m * (1 - m) ** 3 + 2 * m * (1 - m) ** 4
    assert b.window_average(now + 6 * SECOND) == pytest.approx(want, rel=1e-12)
    assert b.window_average(now + 16 * SECOND) == 0.0


def test_resize_window() -> None:
    # TestTimedFloat64BucketsResizeWindow
    start = T0 + 300 * MILLISECOND
    b = TimedBuckets(5 * SECOND, SECOND)
    for i in range(6):
        b.record(start + i * SECOND, i + 1)  # 1 rolls out: [2, 3, 4, 5, 6]
    now = start + 5 * SECOND
    assert b.window_average(now) == 20 / 5
    b.resize_window(10 * SECOND, now)
    assert b.window == 10 * SECOND
    assert b.window_average(now) == 20 / 5  # at most 5 buckets were known
    now += SECOND
    b.record(now, 7)
    assert b.window_average(now) == round_to_n_digits(6, 27 / 6)
    b.resize_window(4 * SECOND, now)  # keep the newest 4: [4, 5, 6, 7]
    assert b.window_average(now) == 22 / 4

    # TestWeightedFloat64BucketsResizeWindow: 5.812 "computed a mano", and the coefficient follows the window.
    w = WeightedBuckets(5 * SECOND, SECOND)
    for i in range(6):
        w.record(start + i * SECOND, i + 1)
    assert round_to_n_digits(3, w.window_average(start + 5 * SECOND)) == 5.812
    w.resize_window(10 * SECOND, start + 5 * SECOND)
    assert w.smoothing_coeff == compute_smoothing_coeff(10)


# --- aggregation/max: window_test.go and timewindow_test.go ---------------------------------------


@pytest.mark.parametrize(
    ("values", "indices", "expect"),
    [
        ([1], None, [1]),
        ([1, 2], None, [1, 2]),
        ([2, 1], None, [2, 2]),
        ([1, 2, 1], None, [1, 2, 2]),
        ([5, 6, 5, 5, 5, 5, 5], None, [5, 6, 6, 6, 6, 6, 5]),
        ([6, 5, 2, 1], [0, 1, 2, 6], [6, 6, 6, 2]),
        ([5, 6, 5, 7, 5, 5, 1], None, [5, 6, 6, 7, 7, 7, 7]),
        ([5, 8, 5, 7, 5, 5], None, [5, 8, 8, 8, 8, 8]),
        ([5, 8, 5, 7, 5, 5, 1], None, [5, 8, 8, 8, 8, 8, 7]),
        ([5, 8, 5, 7, 5, 5, 1, 4, 4, 4], None, [5, 8, 8, 8, 8, 8, 7, 7, 5, 5]),
        ([5, 8, 5, 7, 5, 5, 1, 4, 4, 4, 4], None, [5, 8, 8, 8, 8, 8, 7, 7, 5, 5, 4]),
        ([5, 8, 5, 7, 5, 5, 1, 4, 4, 4, 4, 9], None, [5, 8, 8, 8, 8, 8, 7, 7, 5, 5, 4, 9]),
        (
            [5, 8, 5, 7, 5, 5, 1, 4, 4, 4, 4, 9, 3, 4, 2, 1, 0],
            None,
            [5, 8, 8, 8, 8, 8, 7, 7, 5, 5, 4, 9, 9, 9, 9, 9, 4],
        ),
        ([1, 2, 3, 4, 5, 6, 7], [1] * 7, [1, 2, 3, 4, 5, 6, 7]),
        ([7, 6, 5, 4, 3, 2, 1], [1] * 7, [7, 7, 7, 7, 7, 7, 7]),
    ],
)
def test_window_max(values: list[int], indices: list[int] | None, expect: list[int]) -> None:
    # TestWindowMax: a window of 5 buckets.
    w = MaxTimeWindow(5 * SECOND, SECOND)
    got = []
    for i, v in enumerate(values):
        w.record((indices[i] if indices else i) * SECOND, v)
        got.append(w.current())
    assert got == expect


@pytest.mark.parametrize(
    ("entries", "expect"),
    [
        ([(0, 5)], 5),
        ([(0, 6), (500 * MILLISECOND, 5)], 6),
        ([(0, 5), (SECOND, 8)], 8),
        ([(0, 5), (6 * SECOND, 4)], 4),
    ],
)
def test_timed_window_max(entries: list[tuple[int, int]], expect: int) -> None:
    # TestTimedWindowMax: 5 s in 1 s buckets.
    w = MaxTimeWindow(5 * SECOND, SECOND)
    for at, value in entries:
        w.record(T0 + at, value)
    assert w.current() == expect


# --- the collection (metrics/collector.go) --------------------------------------------------------


def test_collection_no_data_and_activator_path() -> None:
    c = MetricCollection(60 * SECOND, 6 * SECOND)
    assert c.stable_and_panic_concurrency(T0) is None  # ErrNoData
    c.record(T0, concurrency=12.0, rps=30.0, proxied_concurrency=2.0, proxied_rps=10.0)
    assert c.stable_and_panic_concurrency(T0) == (10.0, 10.0)  # proxied requests are not counted twice
    assert c.stable_and_panic_rps(T0) == (20.0, 20.0)
    assert c.stable_and_panic_concurrency(T0 + 61 * SECOND) is None  # a window of silence: no data again
    # With TBC -1 there is no scrape target: an empty window reads as 0, not as "no data".
    direct = MetricCollection(60 * SECOND, 6 * SECOND, scrape_target=False)
    assert direct.stable_and_panic_concurrency(T0) == (0.0, 0.0)


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


# --- properties ------------------------------------------------------------------------------------

observation = st.tuples(
    st.integers(0, 10 * SECOND),  # time since the previous tick
    st.integers(0, 60),  # ready pods
    st.floats(0, 5000, allow_nan=False),  # stable average
    st.floats(0, 10000, allow_nan=False),  # panic average
)


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

    The decider alone knows no bounds (upstream's `Scale` neither); they are the reconciler's.
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
