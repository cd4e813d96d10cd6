"""Traffic as an intensity: the request rate a fluid run reads where a discrete run draws arrivals.

A pattern's rate is a function of time (`patterns.RateFunction`), averaged over a step at a few
points. A trace's rate is piecewise constant (`PiecewiseRate`): each interval of a count trace or
an observed series at its count over its length, a timestamp trace's records counted in bins. Its
mean over any span is exact (the difference of its running integral), so a fluid run's arrivals
over a step are the trace's expected arrivals then, whatever the step and the trace's intervals.

Each reader takes what its discrete twin takes (`start`, `stop`, `time_scale`, `rate_scale`) and
reads the same records: a fluid run of a trace reads what a discrete run of it would.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice

import numpy as np

from skenario.core.random import BATCH
from skenario.core.time import SECOND
from skenario.workloads.patterns import RateFunction
from skenario.workloads.tracefiles import Float64s, Int64s

SAMPLES_PER_STEP = 8
"""Points at which a pattern's rate is averaged over a span (the midpoints of equal parts)."""

TIMESTAMP_BIN = SECOND
"""The bins a timestamp trace's records are counted in (simulated ns): its rate is flat within each."""

Chunk = tuple[Int64s, Int64s, Float64s]
"""Intervals as arrays of (relative begin, relative end, count), in trace-time ns (`counts.Chunk`)."""


@dataclass(frozen=True)
class PiecewiseRate:
    """A rate constant on each of disjoint, sorted intervals [begins, ends) of absolute ns, 0 elsewhere."""

    begins: Int64s
    ends: Int64s
    rates: Float64s  # requests per second
    _before: Float64s = field(init=False, repr=False, compare=False)  # expected arrivals before each interval

    def __post_init__(self) -> None:
        if not self.begins.shape == self.ends.shape == self.rates.shape:
            raise ValueError("begins, ends and rates must have one entry per interval")
        if (self.ends < self.begins).any() or (self.begins[1:] < self.ends[:-1]).any():
            raise ValueError("intervals must be sorted and disjoint")
        if (self.rates < 0).any():
            raise ValueError("a rate must be >= 0 requests per second")
        arrivals = self.rates * ((self.ends - self.begins) / SECOND)
        object.__setattr__(self, "_before", np.concatenate(([0.0], np.cumsum(arrivals))))

    def expected(self, t: Int64s) -> Float64s:
        """Expected arrivals before each time of `t` (the rate's integral from the start)."""
        index = np.searchsorted(self.begins, t, side="right") - 1
        inside = np.maximum(index, 0)
        if not self.begins.size:
            return np.zeros(t.shape, dtype=np.float64)
        within = np.clip(t, self.begins[inside], self.ends[inside]) - self.begins[inside]
        return np.where(index >= 0, self._before[inside] + self.rates[inside] * (within / SECOND), 0.0)

    def mean(self, start: int, stop: int) -> float:
        """The mean rate over [start, stop), exactly: its expected arrivals there over its length."""
        if stop <= start:
            raise ValueError(f"an empty span: [{start}, {stop})")
        low, high = self.expected(np.array([start, stop], dtype=np.int64))
        return float(high - low) * SECOND / (stop - start)

    def __call__(self, t: Int64s) -> Float64s:
        """The rate at each time of `t`."""
        index = np.searchsorted(self.begins, t, side="right") - 1
        inside = np.maximum(index, 0)
        if not self.begins.size:
            return np.zeros(t.shape, dtype=np.float64)
        return np.where((index >= 0) & (t < self.ends[inside]), self.rates[inside], 0.0)


def spans_rate(chunks: Iterable[Chunk], start: int, stop: int, time_scale: float, rate_scale: float) -> PiecewiseRate:
    """Count intervals as a rate: each at `count * rate_scale` over its length once stretched by `time_scale`
    and shifted to `start`; read up to the chunk whose last interval ends at or after `stop`, as
    `counts.spread_counts` reads them."""
    begins_parts, ends_parts, counts_parts = [], [], []
    for relative_begins, relative_ends, counts in chunks:
        begins, ends = relative_begins, relative_ends
        if time_scale != 1:
            begins = np.rint(begins * time_scale).astype(np.int64)
            ends = np.rint(ends * time_scale).astype(np.int64)
        begins, ends = begins + start, ends + start
        inside = int(np.searchsorted(begins, stop))
        begins_parts.append(begins[:inside])
        ends_parts.append(ends[:inside])
        counts_parts.append(counts[:inside])
        if ends[-1] >= stop:
            break
    begins = np.concatenate(begins_parts) if begins_parts else np.zeros(0, dtype=np.int64)
    ends = np.concatenate(ends_parts) if ends_parts else np.zeros(0, dtype=np.int64)
    counts = np.concatenate(counts_parts) if counts_parts else np.zeros(0, dtype=np.float64)
    ends = np.maximum(ends, begins + 1)  # an interval stretched to nothing keeps its count, in 1 ns
    return PiecewiseRate(begins, ends, counts * rate_scale * SECOND / (ends - begins))


def timestamps_rate(times: Iterator[int], start: int, stop: int, rate_scale: float) -> PiecewiseRate:
    """Records at absolute times (sorted, from `start`) as a rate: counted in `TIMESTAMP_BIN` bins from `start`,
    each worth `rate_scale` requests; read up to the first at or after `stop`."""
    bins = -(-(stop - start) // TIMESTAMP_BIN)
    counts = np.zeros(bins, dtype=np.float64)
    while block := list(islice(times, BATCH)):
        at = np.array(block, dtype=np.int64)
        inside = int(np.searchsorted(at, stop))
        counts += np.bincount((at[:inside] - start) // TIMESTAMP_BIN, minlength=bins)[:bins]
        if inside < at.size:
            break
    begins = start + np.arange(bins, dtype=np.int64) * TIMESTAMP_BIN
    ends = np.minimum(begins + TIMESTAMP_BIN, stop)
    return PiecewiseRate(begins, ends, counts * rate_scale * SECOND / (ends - begins))


@dataclass(frozen=True)
class Intensity:
    """The scenario's traffic as a rate: patterns in their windows [start, stop), and traces' rates, summed;
    read at the run's times, `offset` into the scenario's (a run with `spec.offset`)."""

    patterns: Sequence[tuple[int, int, RateFunction]] = ()
    traces: Sequence[PiecewiseRate] = ()
    offset: int = 0

    def __call__(self, t: Int64s) -> Float64s:
        """The rate at each time of `t`, requests per second."""
        t = t + self.offset
        total = self._patterns_at(t)
        for trace in self.traces:
            total += trace(t)
        return total

    def _patterns_at(self, t: Int64s) -> Float64s:
        """The patterns' rate at each time of `t` (the scenario's)."""
        total = np.zeros(t.shape, dtype=np.float64)
        for start, stop, rate in self.patterns:
            total += np.where((t >= start) & (t < stop), rate(t), 0.0)
        return total

    def mean(self, start: int, stop: int) -> float:
        """The mean rate over [start, stop): the patterns' at `SAMPLES_PER_STEP` midpoints, the traces' exactly."""
        return self.step_means(start, stop - start, 1)[0]

    def step_means(self, start: int, step: int, steps: int) -> list[float]:
        """`mean` over each of `steps` consecutive spans of `step` ns from `start`, the patterns' read in one pass
        (a fluid run asks for every step's)."""
        if step <= 0:
            raise ValueError(f"an empty span: [{start}, {start + step})")
        start += self.offset
        parts = np.arange(SAMPLES_PER_STEP, dtype=np.int64) * 2 + 1
        starts = start + np.arange(steps, dtype=np.int64) * step
        points = starts[:, None] + parts * step // (2 * SAMPLES_PER_STEP)
        means = np.mean(self._patterns_at(points), axis=1).tolist() if self.patterns else [0.0] * steps
        if not self.traces:
            return means
        bounds = np.append(starts, starts[-1] + step)
        traces = [(np.diff(trace.expected(bounds)) * SECOND / step).tolist() for trace in self.traces]
        return [mean + sum(values) for mean, *values in zip(means, *traces, strict=True)]
