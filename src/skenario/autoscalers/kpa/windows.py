"""The Knative Pod Autoscaler's time windows: bucketed averages, the scale-down-delay maximum, the collection.

Restated from knative/serving (snapshot 98e5ef90aa70) without copying code:

- `TimedBuckets` mirrors `pkg/autoscaler/aggregation/bucketing.go` `TimedFloat64Buckets`: a ring of
  fixed-width time buckets (1 s in production, `config.BucketSize`) whose `window_average` is the
  stable or panic value the decider scales on.
- `WeightedBuckets` mirrors `WeightedFloat64Buckets`, the optional weighted-exponential algorithm
  (annotation `autoscaling.knative.dev/metric-aggregation-algorithm: weighted-exponential`).
- `MaxTimeWindow` mirrors `pkg/autoscaler/aggregation/max` `TimeWindow`: the maximum of the values
  recorded in the last `duration`, in `granularity` buckets (the decider's scale-down delay).
- `MetricCollection` mirrors the per-revision `collection` of `pkg/autoscaler/metrics/collector.go`
  and its `MetricCollector.StableAndPanicConcurrency` / `StableAndPanicRPS`.

Times are integer nanoseconds from epoch 0 (`skenario.core.time`); a bucket's index is
`time // granularity`. Where upstream uses the zero `time.Time` as "never", these classes use None,
because 0 is a valid simulated time.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Literal

from skenario.core.time import SECOND

BUCKET_SIZE = SECOND
"""`config.BucketSize`: the width of one metric bucket."""

MIN_EXPONENT = 0.2
"""`minExponent`: the smallest smoothing coefficient of the weighted average."""
WEIGHT_PRECISION = 0.9999
"""`weightPrecision`: the weights of a full weighted window sum to at least this."""
PRECISION = 6
"""`precision`: decimal digits `TimedFloat64Buckets.WindowAverage` rounds to."""

AggregationAlgorithm = Literal["linear", "weighted-exponential", "weightedExponential"]


def _go_round(x: float) -> float:
    """Go's `math.Round`: to the nearest integer, halves away from zero (Python's `round` is to even)."""
    whole = float(math.trunc(x))
    if abs(x - whole) >= 0.5:
        whole += math.copysign(1.0, x)
    return whole


def round_to_n_digits(n: int, f: float) -> float:
    """`roundToNDigits`: `f` rounded to `n` decimal digits the way upstream does it."""
    p = 10.0**n
    return _go_round(f * p) / p


def compute_smoothing_coeff(num_buckets: float) -> float:
    """`computeSmoothingCoeff`: the decay per bucket so a full window carries `WEIGHT_PRECISION` of the weight."""
    return max(1 - math.pow(1 - WEIGHT_PRECISION, 1 / num_buckets), MIN_EXPONENT)


class TimedBuckets:
    """`TimedFloat64Buckets`: values summed into time buckets; `window_average` over the window.

    Missing buckets inside the window count as 0; before a full window has passed since the first
    write the average is over the buckets since then; a window with no write at all gives 0 (and
    the next write starts a fresh partial window).
    """

    __slots__ = ("_buckets", "_first_write", "_last_write", "_window_total", "granularity", "window")

    def __init__(self, window: int, granularity: int = BUCKET_SIZE) -> None:
        """`NewTimedFloat64Buckets`: `ceil(window / granularity)` buckets."""
        if window <= 0 or granularity <= 0:
            raise ValueError(f"window ({window}) and granularity ({granularity}) must be positive")
        self.window = window
        self.granularity = granularity
        self._buckets = [0.0] * -(-window // granularity)
        self._first_write: int | None = None
        self._last_write: int | None = None
        self._window_total = 0.0

    def _truncate(self, t: int) -> int:
        return t - t % self.granularity

    def _index(self, t: int) -> int:
        """`timeToIndex`."""
        return t // self.granularity

    def is_empty(self, now: int) -> bool:
        """`IsEmpty`: nothing was recorded in the window ending at `now`."""
        last = self._last_write
        return last is None or self._truncate(now) - last > self.window

    def record(self, now: int, value: float) -> None:
        """`Record`: add `value` to the bucket of `now`.

        Buckets skipped since the last write are zeroed; a write after a whole window of silence
        resets everything; a write older than the window is ignored; a write older than the last
        one but inside the window is added to its bucket.
        """
        bucket_time = self._truncate(now)
        write_idx = self._index(now)
        buckets = self._buckets
        last = self._last_write
        if last != bucket_time:
            if last is not None and bucket_time + self.window <= last:
                return  # older than a window before the last write: ignored
            if self._first_write is None or self._first_write > bucket_time:
                self._first_write = bucket_time
            if last is None or bucket_time > last:
                if last is None or bucket_time - last >= self.window:
                    self._first_write = bucket_time
                    for i in range(len(buckets)):
                        buckets[i] = 0.0
                    self._window_total = 0.0
                else:
                    for i in range(self._index(last) + 1, write_idx + 1):
                        idx = i % len(buckets)
                        self._window_total -= buckets[idx]
                        buckets[idx] = 0.0
                self._last_write = bucket_time
        buckets[write_idx % len(buckets)] += value
        self._window_total += value

    def _valid_span(self, last: int) -> int:
        """Buckets from the first write to the last, inclusive (a reset first write counts as long ago)."""
        first = self._first_write
        if first is None:  # upstream: the zero time.Time, so the span is enormous
            return len(self._buckets)
        return (last - first) // self.granularity + 1

    def window_average(self, now: int) -> float:
        """`TimedFloat64Buckets.WindowAverage`: the mean bucket value over the window ending at `now`.

        Rounded to `PRECISION` decimal digits, as upstream does.
        """
        now = self._truncate(now)
        last = self._last_write
        if last is None:
            return 0.0
        n = len(self._buckets)
        d = now - last
        if d <= 0:
            num_b = min(self._valid_span(last), n)
            return round_to_n_digits(PRECISION, self._window_total / num_b)
        if d < self.window:
            st_idx = self._index(last)
            e_idx = self._index(now)
            ret = self._window_total
            for i in range(st_idx + 1, e_idx + 1):
                ret -= self._buckets[i % n]
            num_b = min(self._valid_span(last), n - (e_idx - st_idx))
            return round_to_n_digits(PRECISION, ret / num_b)
        return 0.0

    def resize_window(self, window: int, now: int) -> None:
        """`TimedFloat64Buckets.ResizeWindow` (upstream reads the wall clock where this takes `now`).

        Keeps the newest buckets that fit when data was written within the old window.
        """
        if window == self.window:
            return
        num_buckets = -(-window // self.granularity)
        new_buckets = [0.0] * num_buckets
        new_total = 0.0
        last = self._last_write
        if last is not None and self._truncate(now) - last <= self.window:
            old = self._buckets
            old_n = len(old)
            t_idx = self._index(last)
            for _ in range(min(num_buckets, old_n)):
                value = old[t_idx % old_n]
                new_buckets[t_idx % num_buckets] = value
                new_total += value
                t_idx -= 1
            self._first_write = last - (old_n - 1) * self.granularity
        else:
            self._first_write = None
        self.window = window
        self._buckets = new_buckets
        self._window_total = new_total


class WeightedBuckets(TimedBuckets):
    """`WeightedFloat64Buckets`: the same buckets averaged with exponentially decaying weights, newest first.

    The newest bucket weighs `c`, the one before `c(1 - c)`, and so on, where `c` is
    `compute_smoothing_coeff(number of buckets)`; buckets after the last write count as zeros.
    """

    __slots__ = ("smoothing_coeff",)

    def __init__(self, window: int, granularity: int = BUCKET_SIZE) -> None:
        """`NewWeightedFloat64Buckets`."""
        super().__init__(window, granularity)
        self.smoothing_coeff = compute_smoothing_coeff(len(self._buckets))

    def window_average(self, now: int) -> float:
        """`WeightedFloat64Buckets.WindowAverage` (not rounded, as upstream)."""
        now = self._truncate(now)
        last = self._last_write
        if last is None or now - last > self.window:
            return 0.0
        total_b = len(self._buckets)
        num_b = total_b
        multiplier = self.smoothing_coeff
        if now > last:
            num_z = (now - last) // self.granularity
            multiplier *= math.pow(1 - self.smoothing_coeff, num_z)
            num_b -= num_z
        start_idx = self._index(last) + total_b
        ret = 0.0
        for i in range(num_b):
            ret += self._buckets[(start_idx - i) % total_b] * multiplier
            multiplier *= 1 - self.smoothing_coeff
        return ret

    def resize_window(self, window: int, now: int) -> None:
        """`WeightedFloat64Buckets.ResizeWindow`: resize, then recompute the smoothing coefficient."""
        super().resize_window(window, now)
        self.smoothing_coeff = compute_smoothing_coeff(-(-window // self.granularity))


def make_buckets(
    window: int, algorithm: AggregationAlgorithm = "linear", granularity: int = BUCKET_SIZE
) -> TimedBuckets:
    """The bucket constructor `newCollection` picks from the aggregation-algorithm annotation."""
    if algorithm in ("weighted-exponential", "weightedExponential"):
        return WeightedBuckets(window, granularity)
    return TimedBuckets(window, granularity)


class MaxTimeWindow:
    """`max.TimeWindow`: the maximum value recorded in the last `ceil(duration / granularity)` buckets.

    A monotonic queue of `(bucket index, value)`, as upstream's ring buffer of maxima: recording a
    value drops every older entry it dominates, entries a full window old fall off the front,
    and two records in one bucket keep the larger.
    """

    __slots__ = ("_maxima", "_size", "granularity")

    def __init__(self, duration: int, granularity: int) -> None:
        """`max.NewTimeWindow`."""
        if duration <= 0 or granularity <= 0:
            raise ValueError(f"duration ({duration}) and granularity ({granularity}) must be positive")
        self.granularity = granularity
        self._size = -(-duration // granularity)
        self._maxima: deque[tuple[int, int]] = deque()

    def record(self, now: int, value: int) -> None:
        """`TimeWindow.Record` / `window.Record`."""
        index = now // self.granularity
        maxima = self._maxima
        while maxima and value >= maxima[-1][1]:
            maxima.pop()
        while maxima and index - maxima[0][0] >= self._size:
            maxima.popleft()
        if maxima and maxima[-1][0] == index:
            value = max(value, maxima.pop()[1])
        maxima.append((index, value))

    def current(self) -> int:
        """`TimeWindow.Current`: the maximum in the window (0 before the first record)."""
        return self._maxima[0][1] if self._maxima else 0


class MetricCollection:
    """A revision's stable and panic windows of concurrency and RPS: upstream's `collection`.

    Record one sample per scrape (upstream scrapes every second while the revision has pods) with
    the revision-wide totals: summed over the pods, as the scraper extrapolates them, minus what
    the activator already reported (the activator's own reports are recorded the same way).
    `scrape_target` is False when upstream's `Metric.Spec.ScrapeTarget` is empty, i.e. when the
    target burst capacity is -1 (`resolveScrapeTarget`); then an empty window means 0, not "no data".
    """

    __slots__ = (
        "concurrency_buckets",
        "concurrency_panic_buckets",
        "rps_buckets",
        "rps_panic_buckets",
        "scrape_target",
    )

    def __init__(
        self,
        stable_window: int,
        panic_window: int,
        algorithm: AggregationAlgorithm = "linear",
        *,
        scrape_target: bool = True,
        granularity: int = BUCKET_SIZE,
    ) -> None:
        """`newCollection`: four bucket sets, stable and panic for concurrency and RPS."""
        self.concurrency_buckets = make_buckets(stable_window, algorithm, granularity)
        self.concurrency_panic_buckets = make_buckets(panic_window, algorithm, granularity)
        self.rps_buckets = make_buckets(stable_window, algorithm, granularity)
        self.rps_panic_buckets = make_buckets(panic_window, algorithm, granularity)
        self.scrape_target = scrape_target

    def record(
        self,
        now: int,
        concurrency: float,
        rps: float,
        proxied_concurrency: float = 0.0,
        proxied_rps: float = 0.0,
    ) -> None:
        """`collection.record`: one stat; proxied requests were counted at the activator, so subtract them."""
        concur = concurrency - proxied_concurrency
        self.concurrency_buckets.record(now, concur)
        self.concurrency_panic_buckets.record(now, concur)
        requests = rps - proxied_rps
        self.rps_buckets.record(now, requests)
        self.rps_panic_buckets.record(now, requests)

    def stable_and_panic_concurrency(self, now: int) -> tuple[float, float] | None:
        """`MetricCollector.StableAndPanicConcurrency`; None is upstream's `ErrNoData`."""
        if self.concurrency_buckets.is_empty(now) and self.scrape_target:
            return None
        return self.concurrency_buckets.window_average(now), self.concurrency_panic_buckets.window_average(now)

    def stable_and_panic_rps(self, now: int) -> tuple[float, float] | None:
        """`MetricCollector.StableAndPanicRPS`; None is upstream's `ErrNoData`."""
        if self.rps_buckets.is_empty(now) and self.scrape_target:
            return None
        return self.rps_buckets.window_average(now), self.rps_panic_buckets.window_average(now)

    def update_windows(self, stable_window: int, panic_window: int, now: int) -> None:
        """`collection.updateMetric`: resize the four bucket sets to new windows."""
        self.concurrency_buckets.resize_window(stable_window, now)
        self.concurrency_panic_buckets.resize_window(panic_window, now)
        self.rps_buckets.resize_window(stable_window, now)
        self.rps_panic_buckets.resize_window(panic_window, now)
