"""Streaming statistics that keep memory flat however long the run.

`LatencyHistogram` is a log-linear histogram in the manner of HdrHistogram: integer values below
256 are kept exactly, larger ones in buckets 1/128 to 1/256 of their size wide, so any
percentile is within 0.4% of the true value while a whole run's latencies fit in a few thousand
integers.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from itertools import accumulate
from operator import add
from typing import Any

_BITS = 8
_EXACT = 1 << _BITS  # values below this have a bucket each
_HALF = _EXACT >> 1
_NO_MIN = 1 << 64  # an empty histogram's min and max: above and below any latency in ns
_NO_MAX = -1


def _index(value: int) -> int:
    """The bucket `value` falls in (what `record` works out inline, for speed)."""
    if value < _EXACT:
        return value if value > 0 else 0
    shift = value.bit_length() - _BITS
    return shift * _HALF + (value >> shift)


class LatencyHistogram:
    """Counts of non-negative integers (nanoseconds) in log-linear buckets."""

    __slots__ = ("_counts", "_max", "_min", "count", "total")

    def __init__(self) -> None:
        self._counts: list[int] = [0] * _EXACT
        self.count = 0
        self.total = 0
        # Sentinels rather than None, so `record` (once per request) compares without a test first.
        self._min = _NO_MIN
        self._max = _NO_MAX

    @property
    def min(self) -> int | None:
        return self._min if self.count else None

    @property
    def max(self) -> int | None:
        return self._max if self.count else None

    def record(self, value: int) -> None:
        if value < _EXACT:
            index = value if value > 0 else 0
        else:
            shift = value.bit_length() - _BITS
            index = shift * _HALF + (value >> shift)
        counts = self._counts
        try:
            counts[index] += 1
        except IndexError:
            counts.extend([0] * (index + 1 - len(counts)))
            counts[index] += 1
        self.count += 1
        self.total += value
        if value < self._min:
            self._min = value
        if value > self._max:
            self._max = value

    def record_many(self, value: int, times: int) -> None:
        """`record(value)` `times` times at once: a fluid run's completions of one step, at one latency."""
        if times < 0:
            raise ValueError(f"times must be >= 0, got {times}")
        if times == 0:
            return
        if value < _EXACT:
            index = value if value > 0 else 0
        else:
            shift = value.bit_length() - _BITS
            index = shift * _HALF + (value >> shift)
        counts = self._counts
        if index >= len(counts):
            counts.extend([0] * (index + 1 - len(counts)))
        counts[index] += times
        self.count += times
        self.total += value * times
        self._min = min(self._min, value)
        self._max = max(self._max, value)

    @staticmethod
    def bucket_bounds(index: int) -> tuple[int, int]:
        """The values `[low, high)` that fall in bucket `index`."""
        if index < _EXACT:
            return index, index + 1
        shift, top = divmod(index - _HALF, _HALF)
        top += _HALF
        return top << shift, (top + 1) << shift

    def percentile(self, q: float) -> int | None:
        """The nearest-rank q-th percentile (0 < q <= 100), at its bucket's midpoint.

        Clamped to the exact min and max, so p100 is the true maximum.
        """
        if not 0 < q <= 100:
            raise ValueError(f"percentile must be in (0, 100], got {q}")
        if self.count == 0:
            return None
        rank = max(1, math.ceil(q / 100 * self.count))
        # The first bucket whose running count reaches the rank; summed and searched in C, since a
        # recorder asks three percentiles of a few thousand buckets every interval.
        index = bisect_left(list(accumulate(self._counts)), rank)
        if index == len(self._counts):
            return self._max
        low, high = self.bucket_bounds(index)
        middle = (low + high - 1) // 2
        return min(max(middle, self._min), self._max)

    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    def buckets(self) -> Iterator[tuple[int, int]]:
        """Non-empty buckets as (index, count), for digests and storage."""
        return ((i, n) for i, n in enumerate(self._counts) if n)

    def since(self, earlier: LatencyHistogram | None) -> LatencyHistogram:
        """What was recorded after `earlier`, a copy of this histogram taken before (None: everything), as a
        histogram of its own: what a Prometheus `histogram_quantile` over a rate reads. Its least and greatest
        values are their buckets' bounds (the exact ones are not kept)."""
        out = LatencyHistogram()
        counts = list(self._counts)
        if earlier is not None:
            for index, n in enumerate(earlier._counts):
                counts[index] -= n
            out.count = self.count - earlier.count
            out.total = self.total - earlier.total
        else:
            out.count, out.total = self.count, self.total
        out._counts = counts
        filled = [index for index, n in enumerate(counts) if n]
        if filled:
            out._min = max(self.bucket_bounds(filled[0])[0], self._min)
            out._max = min(self.bucket_bounds(filled[-1])[1] - 1, self._max)
        return out

    def as_document(self) -> dict[str, Any]:
        """The histogram as JSON data that describes it exactly: its non-empty buckets in order, each
        `[lower_ns[i], upper_ns[i])` holding `counts[i]` values, and the `count`, `total_ns`, `min_ns` and
        `max_ns` of everything recorded (None when empty). `from_document` reads it back."""
        filled = list(self.buckets())
        bounds = [self.bucket_bounds(index) for index, _ in filled]
        return {
            "lower_ns": [low for low, _ in bounds],
            "upper_ns": [high for _, high in bounds],
            "counts": [n for _, n in filled],
            "count": self.count,
            "total_ns": self.total,
            "min_ns": self.min,
            "max_ns": self.max,
        }

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> LatencyHistogram:
        """The histogram `as_document` described."""
        out = cls()
        for low, high, n in zip(document["lower_ns"], document["upper_ns"], document["counts"], strict=True):
            index = _index(low)
            if cls.bucket_bounds(index) != (low, high):
                raise ValueError(f"[{low}, {high}) is not one of the histogram's buckets")
            if index >= len(out._counts):
                out._counts.extend([0] * (index + 1 - len(out._counts)))
            out._counts[index] += n
        out.count = document["count"]
        out.total = document["total_ns"]
        if out.count:
            out._min, out._max = document["min_ns"], document["max_ns"]
        return out

    def merge(self, other: LatencyHistogram) -> None:
        counts = self._counts
        theirs = other._counts
        if len(theirs) > len(counts):
            counts.extend([0] * (len(theirs) - len(counts)))
        counts[: len(theirs)] = map(add, counts, theirs)
        self.count += other.count
        self.total += other.total
        self._min = min(self._min, other._min)
        self._max = max(self._max, other._max)
