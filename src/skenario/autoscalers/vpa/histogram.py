"""The Vertical Pod Autoscaler's histograms: bucket schemes, a plain histogram and a decaying one.

Restated from kubernetes/autoscaler `vertical-pod-autoscaler/pkg/recommender/util`
(`histogram_options.go`, `histogram.go`, `decaying_histogram.go`); no upstream code is copied.

A histogram keeps one weight per bucket and answers percentiles with the upper boundary of the
bucket where the cumulative weight reaches the asked fraction: no interpolation inside a bucket.
The decaying histogram multiplies each sample's weight by `2^((t - reference) / halfLife)`, so a
sample one half-life older counts half as much. Only relative weights matter, so the reference
timestamp is moved forward (rescaling every weight) whenever the exponent would exceed 100.

Times are integer nanoseconds (`skenario.core.time`). CPU histograms here count millicores; the
bucket scheme is upstream's (first bucket 0.01 core, ratio 1.05, max 1000 cores) restated in
millicores, which gives the same 176 buckets and boundaries 1000 times larger.
"""

from __future__ import annotations

import math
from typing import Protocol

from skenario.core.time import DAY

# aggregations_config.go: minSampleWeight, epsilon = 0.001 * minSampleWeight (exact in Go constants).
MIN_SAMPLE_WEIGHT = 0.1
EPSILON = 1e-4
# DefaultHistogramBucketSizeGrowth: each bucket is 5% wider than the previous one.
BUCKET_SIZE_GROWTH = 0.05
# cpuHistogramOptions: first bucket 0.01 core, max 1000 cores; in millicores here.
CPU_FIRST_BUCKET_MILLICORES = 10.0
CPU_MAX_MILLICORES = 1_000_000.0
# DefaultCPUHistogramDecayHalfLife.
DEFAULT_HALF_LIFE = DAY
# decaying_histogram.go maxDecayExponent: renormalise once a factor would exceed 2^100.
MAX_DECAY_EXPONENT = 100


class HistogramOptions(Protocol):
    """A bucketing scheme; mirrors the `HistogramOptions` interface of `histogram_options.go`."""

    @property
    def num_buckets(self) -> int: ...

    @property
    def epsilon(self) -> float: ...

    def find_bucket(self, value: float) -> int: ...

    def bucket_start(self, bucket: int) -> float: ...


class LinearHistogramOptions:
    """Fixed-size buckets from 0; mirrors `NewLinearHistogramOptions` and `linearHistogramOptions`.

    There are `ceil(max_value / bucket_size) + 1` buckets, so the last one starts at or above
    `max_value`. Upstream's own histogram tests use this scheme.
    """

    __slots__ = ("_bucket_size", "_epsilon", "_num_buckets")

    def __init__(self, max_value: float, bucket_size: float, epsilon: float) -> None:
        if max_value <= 0.0 or bucket_size <= 0.0 or epsilon <= 0.0:
            raise ValueError("max_value, bucket_size and epsilon must all be positive")
        self._num_buckets = math.ceil(max_value / bucket_size) + 1
        self._bucket_size = bucket_size
        self._epsilon = epsilon

    @property
    def num_buckets(self) -> int:
        return self._num_buckets

    @property
    def epsilon(self) -> float:
        return self._epsilon

    def find_bucket(self, value: float) -> int:
        """Mirrors `linearHistogramOptions.FindBucket`: truncate, then clamp to the range."""
        bucket = math.trunc(value / self._bucket_size)
        return min(max(bucket, 0), self._num_buckets - 1)

    def bucket_start(self, bucket: int) -> float:
        """Mirrors `linearHistogramOptions.GetBucketStart`."""
        if not 0 <= bucket < self._num_buckets:
            raise IndexError(f"bucket {bucket} out of range [0..{self._num_buckets - 1}]")
        return bucket * self._bucket_size


class ExponentialHistogramOptions:
    """Exponentially growing buckets; mirrors `NewExponentialHistogramOptions`.

    Bucket 0 is `[0, first)`; bucket n >= 1 starts at `first * (ratio^n - 1) / (ratio - 1)`, so
    bucket n is `first * ratio^n` wide. There are `ceil(log_ratio(max * (ratio - 1) / first + 1)) + 1`
    buckets, the last starting at or above `max_value`.
    """

    __slots__ = ("_epsilon", "_first", "_num_buckets", "_ratio")

    def __init__(self, max_value: float, first_bucket_size: float, ratio: float, epsilon: float) -> None:
        if max_value <= 0.0 or first_bucket_size <= 0.0 or ratio <= 1.0 or epsilon <= 0.0:
            raise ValueError("max_value, first_bucket_size and epsilon must be > 0 and ratio must be > 1")
        self._num_buckets = math.ceil(_log(ratio, max_value * (ratio - 1) / first_bucket_size + 1)) + 1
        self._first = first_bucket_size
        self._ratio = ratio
        self._epsilon = epsilon

    @property
    def num_buckets(self) -> int:
        return self._num_buckets

    @property
    def epsilon(self) -> float:
        return self._epsilon

    def find_bucket(self, value: float) -> int:
        """Mirrors `exponentialHistogramOptions.FindBucket`: `floor(log_ratio(v (ratio-1) / first + 1))`."""
        if value < self._first:
            return 0
        bucket = math.trunc(_log(self._ratio, value * (self._ratio - 1) / self._first + 1))
        return min(bucket, self._num_buckets - 1)

    def bucket_start(self, bucket: int) -> float:
        """Mirrors `exponentialHistogramOptions.GetBucketStart`."""
        if not 0 <= bucket < self._num_buckets:
            raise IndexError(f"bucket {bucket} out of range [0..{self._num_buckets - 1}]")
        if bucket == 0:
            return 0.0
        return self._first * (math.pow(self._ratio, bucket) - 1) / (self._ratio - 1)


def _log(base: float, x: float) -> float:
    # histogram_options.go log(): natural logs divided, as upstream (not math.log(x, base)'s path).
    return math.log(x) / math.log(base)


def cpu_histogram_options() -> ExponentialHistogramOptions:
    """The CPU bucket scheme of `AggregationsConfig.cpuHistogramOptions`, in millicores."""
    return ExponentialHistogramOptions(
        CPU_MAX_MILLICORES, CPU_FIRST_BUCKET_MILLICORES, 1.0 + BUCKET_SIZE_GROWTH, EPSILON
    )


class Histogram:
    """Bucketed weights; mirrors upstream `histogram` (`NewHistogram`).

    A bucket whose weight is below `options.epsilon` counts as empty. `_min_bucket` is the first
    non-empty bucket (the last bucket when empty) and `_max_bucket` the last non-empty one (0 when
    empty), maintained exactly as upstream does.
    """

    __slots__ = ("_max_bucket", "_min_bucket", "_total_weight", "_weights", "options")

    def __init__(self, options: HistogramOptions) -> None:
        self.options = options
        self._weights = [0.0] * options.num_buckets
        self._total_weight = 0.0
        self._min_bucket = options.num_buckets - 1
        self._max_bucket = 0

    @property
    def total_weight(self) -> float:
        return self._total_weight

    def bucket_weight(self, bucket: int) -> float:
        """The weight held by one bucket (after any decay factor)."""
        return self._weights[bucket]

    def add_sample(self, value: float, weight: float, time: int = 0) -> None:
        """Mirrors `histogram.AddSample`; `time` is ignored by the plain histogram."""
        if weight < 0.0:
            raise ValueError("sample weight must be non-negative")
        self._add_weight(value, weight)

    def subtract_sample(self, value: float, weight: float, time: int = 0) -> None:
        """Mirrors `histogram.SubtractSample`: weights never go below zero (or below epsilon)."""
        if weight < 0.0:
            raise ValueError("sample weight must be non-negative")
        self._subtract_weight(value, weight)

    def _add_weight(self, value: float, weight: float) -> None:
        bucket = self.options.find_bucket(value)
        self._weights[bucket] += weight
        self._total_weight += weight
        epsilon = self.options.epsilon
        if bucket < self._min_bucket and self._weights[bucket] >= epsilon:
            self._min_bucket = bucket
        if bucket > self._max_bucket and self._weights[bucket] >= epsilon:
            self._max_bucket = bucket

    def _subtract_weight(self, value: float, weight: float) -> None:
        bucket = self.options.find_bucket(value)
        epsilon = self.options.epsilon
        self._total_weight = _safe_subtract(self._total_weight, weight, epsilon)
        self._weights[bucket] = _safe_subtract(self._weights[bucket], weight, epsilon)
        self._update_min_and_max_bucket()

    def percentile(self, percentile: float) -> float:
        """Mirrors `histogram.Percentile`: the end of the bucket where the cumulative weight reaches
        `percentile * total`, walking from the first non-empty bucket; the start of the last bucket if
        that is where it ends; 0.0 when empty. `percentile` is a fraction (0.9 is the 90th)."""
        if self.is_empty:
            return 0.0
        threshold = percentile * self._total_weight
        partial_sum = 0.0
        bucket = self._min_bucket
        while bucket < self._max_bucket:
            partial_sum += self._weights[bucket]
            if partial_sum >= threshold:
                break
            bucket += 1
        if bucket < self.options.num_buckets - 1:
            return self.options.bucket_start(bucket + 1)
        return self.options.bucket_start(bucket)

    @property
    def is_empty(self) -> bool:
        """Mirrors `histogram.IsEmpty`: the first non-empty bucket holds less than epsilon."""
        return self._weights[self._min_bucket] < self.options.epsilon

    def _scale(self, factor: float) -> None:
        """Mirrors `histogram.scale`: multiply every weight; buckets may fall below epsilon."""
        if factor < 0.0:
            raise ValueError("scale factor must be non-negative")
        for bucket in range(self._min_bucket, self._max_bucket + 1):
            self._weights[bucket] *= factor
        self._total_weight *= factor
        self._update_min_and_max_bucket()

    def _update_min_and_max_bucket(self) -> None:
        """Mirrors `histogram.updateMinAndMaxBucket`."""
        epsilon = self.options.epsilon
        last = self.options.num_buckets - 1
        while self._weights[self._min_bucket] < epsilon and self._min_bucket < last:
            self._min_bucket += 1
        while self._weights[self._max_bucket] < epsilon and self._max_bucket > 0:
            self._max_bucket -= 1


def _safe_subtract(value: float, sub: float, epsilon: float) -> float:
    value -= sub
    return 0.0 if value < epsilon else value


class DecayingHistogram(Histogram):
    """A histogram forgetting old samples; mirrors upstream `decayingHistogram` (`NewDecayingHistogram`).

    A sample at time t is added with weight `w * 2^((t - reference) / half_life)`. The reference
    timestamp starts at 0 (upstream: Go's zero time) and is always a multiple of `half_life`.
    """

    __slots__ = ("_reference", "half_life")

    def __init__(self, options: HistogramOptions, half_life: int = DEFAULT_HALF_LIFE) -> None:
        if half_life <= 0:
            raise ValueError("half_life must be positive")
        super().__init__(options)
        self.half_life = half_life
        self._reference = 0

    @property
    def reference_timestamp(self) -> int:
        return self._reference

    def add_sample(self, value: float, weight: float, time: int = 0) -> None:
        """Mirrors `decayingHistogram.AddSample`."""
        if weight < 0.0:
            raise ValueError("sample weight must be non-negative")
        self._add_weight(value, weight * self._decay_factor(time))

    def subtract_sample(self, value: float, weight: float, time: int = 0) -> None:
        """Mirrors `decayingHistogram.SubtractSample`."""
        if weight < 0.0:
            raise ValueError("sample weight must be non-negative")
        self._subtract_weight(value, weight * self._decay_factor(time))

    def _shift_reference_timestamp(self, new_reference: int) -> None:
        """Mirrors `decayingHistogram.shiftReferenceTimestamp`: round the new reference to a multiple
        of the half-life (halves round up, as Go's `Time.Round`) and rescale by 2^(old - new)."""
        half_life = self.half_life
        remainder = new_reference % half_life
        new_reference -= remainder
        if remainder + remainder >= half_life:
            new_reference += half_life
        exponent = (self._reference - new_reference) // half_life  # exact: both are multiples
        self._scale(math.ldexp(1.0, exponent))
        self._reference = new_reference

    def _decay_factor(self, time: int) -> float:
        """Mirrors `decayingHistogram.decayFactor`."""
        if time > self._reference + self.half_life * MAX_DECAY_EXPONENT:
            self._shift_reference_timestamp(time)
        return math.exp2(float(time - self._reference) / float(self.half_life))
