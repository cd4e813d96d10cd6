"""Arrival patterns: iterators of absolute arrival times in nanoseconds, generated lazily.

The traffic source pulls one time per arrival, so no pattern ever pre-schedules a whole run into
the heap (the Go original did, which made memory grow with the duration). Randomness is drawn in
numpy batches from the `np.random.Generator` passed in, so a pattern is deterministic per seed.
Rates are requests per second (floats); times and periods are integer nanoseconds.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from itertools import chain

import numpy as np
import numpy.typing as npt

from skenario.core.random import BATCH, Exponential, sampler
from skenario.core.time import SECOND


def constant_arrivals(rate_per_s: float, start: int, stop: int) -> Iterator[int]:
    """Evenly spaced arrivals at `rate_per_s`, the first one interval after `start`.

    Times are computed from the start, not accumulated, so rounding never drifts.
    """
    if rate_per_s <= 0:
        return
    interval = SECOND / rate_per_s
    k = 1
    while True:
        at = start + round(k * interval)
        if at >= stop:
            return
        yield at
        k += 1


def poisson_arrivals(rate_per_s: float, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
    """A Poisson process: exponential gaps with mean 1/rate, drawn in numpy batches."""
    if rate_per_s <= 0:
        return
    gap = sampler(Exponential(SECOND / rate_per_s), rng)
    at = start
    while True:
        at += gap()
        if at >= stop:
            return
        yield at


RateFunction = Callable[[npt.NDArray[np.int64]], npt.NDArray[np.float64]]
"""A request rate in requests per second, evaluated on an array of absolute times in ns."""


def uniform_arrivals(count: int, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
    """`count` arrivals at independent uniform times in [start, stop), yielded in order.

    Sorting `count` draws would need them all in memory. Instead the order statistics are drawn
    one after another (Rényi's representation): if U(1) <= ... <= U(n) are sorted uniforms then
    -log(1 - U(k)) is a sum of k independent exponentials scaled by 1/n, 1/(n-1), ... So the
    remaining fraction 1 - U(k) shrinks by exp(-E/m) at each step, m being the number of points
    still to place. That is exact, O(1) in memory, and the exponentials come in numpy batches.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if count == 0:
        return
    if stop <= start:
        raise ValueError(f"cannot place {count} arrivals in the empty interval [{start}, {stop})")
    span = stop - start
    log_remaining = 0.0  # log(1 - U(k)) so far
    placed = 0
    while placed < count:
        size = min(BATCH, count - placed)
        still_to_place = np.arange(count - placed, count - placed - size, -1, dtype=np.float64)
        steps = rng.standard_exponential(size) / still_to_place
        logs = log_remaining - np.cumsum(steps)
        fractions = -np.expm1(logs)  # U(k) = 1 - exp(log(1 - U(k))), accurate near 0
        offsets = np.minimum(np.floor(fractions * span).astype(np.int64), span - 1)
        for offset in offsets.tolist():
            yield start + offset
        log_remaining = float(logs[-1])
        placed += size


def thinned_arrivals(
    rate: RateFunction, rate_max: float, start: int, stop: int, rng: np.random.Generator
) -> Iterator[int]:
    """A non-homogeneous Poisson process with intensity `rate`, by Lewis–Shedler thinning.

    Candidates come from a homogeneous process at `rate_max` (exponential gaps, in batches); each
    is kept with probability rate(t) / rate_max. The candidates and the acceptance uniforms do not
    depend on `rate`, so with the same seed and bound a lower rate keeps a subset of the arrivals
    of a higher one. A rate above `rate_max` or below 0 is a ValueError, not a silent distortion.
    Each batch's kept times are a list chained in C, so pulling one time resumes no generator.
    """
    return chain.from_iterable(_thinned_batches(rate, rate_max, start, stop, rng))


def _thinned_batches(
    rate: RateFunction, rate_max: float, start: int, stop: int, rng: np.random.Generator
) -> Iterator[list[int]]:
    if rate_max < 0:
        raise ValueError(f"rate_max must be >= 0, got {rate_max}")
    if rate_max == 0 or stop <= start:
        return
    mean_gap = SECOND / rate_max
    at = start
    while True:
        remaining = stop - at
        gaps = np.minimum(np.rint(rng.exponential(mean_gap, BATCH)), remaining + 1).astype(np.int64)
        uniforms = rng.random(BATCH)
        times = at + np.cumsum(gaps)
        inside = int(np.searchsorted(times, stop, side="left"))
        candidates = times[:inside]
        rates = np.asarray(rate(candidates), dtype=np.float64)
        if rates.size and (rates.max() > rate_max * (1 + 1e-12) or rates.min() < 0):
            bad = int(np.argmax((rates > rate_max * (1 + 1e-12)) | (rates < 0)))
            raise ValueError(
                f"rate {float(rates[bad])}/s at t={int(candidates[bad])}ns is outside [0, rate_max={rate_max}]"
            )
        kept = candidates[uniforms[:inside] * rate_max < rates]
        yield kept.tolist()
        if inside < BATCH:
            return
        at = int(times[-1])


def _check_rates(**rates: float) -> None:
    for name, value in rates.items():
        if not value >= 0:  # also rejects NaN
            raise ValueError(f"{name} must be >= 0 requests per second, got {value}")


def step_arrivals(
    rate_before: float, rate_after: float, step_at: int, start: int, stop: int, rng: np.random.Generator
) -> Iterator[int]:
    """Poisson arrivals at `rate_before` until the absolute time `step_at`, then `rate_after`."""
    _check_rates(rate_before=rate_before, rate_after=rate_after)
    return thinned_arrivals(step_rate(rate_before, rate_after, step_at), max(rate_before, rate_after), start, stop, rng)


def step_rate(rate_before: float, rate_after: float, step_at: int) -> RateFunction:
    """`step_arrivals`' intensity: `rate_before` until `step_at` (ns), then `rate_after` (a fluid run's input)."""

    def rate(t: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        return np.where(t < step_at, rate_before, rate_after).astype(np.float64)

    return rate


def ramp_arrivals(rate_from: float, rate_to: float, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
    """Poisson arrivals whose rate moves linearly from `rate_from` at `start` to `rate_to` at `stop`."""
    _check_rates(rate_from=rate_from, rate_to=rate_to)
    return thinned_arrivals(ramp_rate(rate_from, rate_to, start, stop), max(rate_from, rate_to), start, stop, rng)


def ramp_rate(rate_from: float, rate_to: float, start: int, stop: int) -> RateFunction:
    """`ramp_arrivals`' intensity: linear from `rate_from` at `start` to `rate_to` at `stop` (ns)."""
    span = max(stop - start, 1)

    def rate(t: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        return np.asarray(rate_from + (rate_to - rate_from) * ((t - start) / span), dtype=np.float64)

    return rate


def sinusoidal_arrivals(
    mean_rate: float, amplitude: float, period: int, start: int, stop: int, rng: np.random.Generator
) -> Iterator[int]:
    """Poisson arrivals at mean + amplitude·sin(2π(t - start)/period) per second, clipped at 0.

    The phase is zero at `start`, so the rate starts at the mean and rises first (a negative
    amplitude falls first). Between 50 and 500 req/s is mean 275, amplitude 225. `period` is in ns.
    """
    _check_rates(mean_rate=mean_rate)
    rate = sinusoidal_rate(mean_rate, amplitude, period, start)
    return thinned_arrivals(rate, mean_rate + abs(amplitude), start, stop, rng)


def sinusoidal_rate(mean_rate: float, amplitude: float, period: int, start: int) -> RateFunction:
    """`sinusoidal_arrivals`' intensity: mean + amplitude·sin(2π(t - start)/period), clipped at 0."""
    if period <= 0:
        raise ValueError(f"period must be > 0 ns, got {period}")
    omega = 2 * np.pi / period

    def rate(t: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        phase = omega * ((t - start) % period)
        return np.asarray(np.maximum(mean_rate + amplitude * np.sin(phase), 0.0), dtype=np.float64)

    return rate


def sum_arrivals(*patterns: Iterable[int]) -> Iterator[int]:
    """The superposition of several arrival patterns, merged lazily in time order (ties keep argument order)."""
    return heapq.merge(*patterns)
