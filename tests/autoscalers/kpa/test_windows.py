"""The KPA's time windows against upstream: bucketed averages, the windowed maximum, the collection.

Cases restate the data of knative/serving's unit tests (snapshot 98e5ef90aa70); no test code is
copied. The upstream test files are named above each group.
"""

from __future__ import annotations

import pytest

from skenario.autoscalers.kpa.windows import (
    MIN_EXPONENT,
    MaxTimeWindow,
    MetricCollection,
    TimedBuckets,
    WeightedBuckets,
    compute_smoothing_coeff,
    round_to_n_digits,
)
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from tests.autoscalers.kpa.harness import T0

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
