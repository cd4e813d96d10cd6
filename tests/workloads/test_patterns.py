"""Arrival patterns: invariants (order, bounds, determinism) and counts against theory.

Count tolerances. The thinned patterns are non-homogeneous Poisson processes, so the number of
arrivals N in a window is Poisson with mean mu = integral of the rate over the window, and its
standard deviation is sqrt(mu). |N - mu| > 5 sqrt(mu) has probability below 1e-6 (normal
approximation; mu is in the thousands here), and the seeds are fixed, so a correct
implementation passes reproducibly while a wrong integral (say a rate off by 5 %) fails by far.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from itertools import pairwise

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.workloads.patterns import (
    constant_arrivals,
    poisson_arrivals,
    ramp_arrivals,
    ramp_rate,
    sinusoidal_arrivals,
    sinusoidal_rate,
    step_arrivals,
    step_rate,
    sum_arrivals,
    thinned_arrivals,
    uniform_arrivals,
)

Pattern = Callable[[int, int, np.random.Generator], Iterator[int]]

PATTERNS: dict[str, Pattern] = {
    "uniform": lambda start, stop, rng: uniform_arrivals(300, start, stop, rng),
    "step": lambda start, stop, rng: step_arrivals(20.0, 60.0, (start + stop) // 2, start, stop, rng),
    "ramp": lambda start, stop, rng: ramp_arrivals(5.0, 80.0, start, stop, rng),
    "sinusoid": lambda start, stop, rng: sinusoidal_arrivals(40.0, 30.0, 3 * SECOND, start, stop, rng),
    "clipped-sinusoid": lambda start, stop, rng: sinusoidal_arrivals(10.0, 50.0, 2 * SECOND, start, stop, rng),
}


def within(count: int, mean: float, sds: float = 5.0) -> bool:
    return abs(count - mean) <= sds * math.sqrt(mean)


@pytest.mark.parametrize("name", sorted(PATTERNS))
@settings(max_examples=25, deadline=None)
@given(start=st.integers(0, 10**12), span=st.integers(1, 20 * SECOND), seed=st.integers(0, 2**32))
def test_patterns_ordered_in_bounds_and_deterministic(name: str, start: int, span: int, seed: int) -> None:
    pattern = PATTERNS[name]
    stop = start + span
    first = list(pattern(start, stop, np.random.default_rng(seed)))
    again = list(pattern(start, stop, np.random.default_rng(seed)))
    assert first == again
    assert all(type(t) is int for t in first)
    assert all(start <= t < stop for t in first)
    assert all(a <= b for a, b in pairwise(first))


@settings(max_examples=50, deadline=None)
@given(count=st.integers(0, 5000), start=st.integers(-(10**15), 10**15), span=st.integers(1, 10**16))
def test_uniform_yields_exactly_count(count: int, start: int, span: int) -> None:
    times = list(uniform_arrivals(count, start, start + span, np.random.default_rng(count)))
    assert len(times) == count
    assert all(start <= t < start + span for t in times)
    assert all(a <= b for a, b in pairwise(times))


def test_uniform_is_uniform() -> None:
    # Each of 10 equal bins holds Binomial(n, 1/10) points: mean n/10, sd sqrt(n * 0.1 * 0.9).
    n = 20_000
    times = np.fromiter(uniform_arrivals(n, 0, 10 * SECOND, np.random.default_rng(7)), dtype=np.int64)
    bins = np.bincount(times // SECOND, minlength=10)
    assert bins.sum() == n
    assert np.all(np.abs(bins - n / 10) <= 5 * math.sqrt(n * 0.1 * 0.9))
    # The smallest of n uniforms on [0, 1) has mean 1/(n + 1); over 200 runs of n=50 the sample
    # mean of the minimum has sd ~ (1/(n+1)) / sqrt(200) (the minimum's sd is about its mean).
    rng = np.random.default_rng(3)
    minima = [next(uniform_arrivals(50, 0, SECOND, rng)) / SECOND for _ in range(200)]
    assert abs(np.mean(minima) - 1 / 51) <= 5 * (1 / 51) / math.sqrt(200)


def test_uniform_rejects_bad_arguments() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        list(uniform_arrivals(-1, 0, 10, rng))
    with pytest.raises(ValueError):
        list(uniform_arrivals(3, 10, 10, rng))
    assert list(uniform_arrivals(0, 10, 10, rng)) == []


def test_step_counts() -> None:
    # Expected count: rate_before * (step - start) + rate_after * (stop - step), per side too.
    start, step, stop = 0, 100 * SECOND, 300 * SECOND
    times = np.fromiter(step_arrivals(30.0, 90.0, step, start, stop, np.random.default_rng(11)), dtype=np.int64)
    before = int(np.sum(times < step))
    assert within(before, 30.0 * 100)
    assert within(times.size - before, 90.0 * 200)


def test_ramp_counts() -> None:
    # rate(t) = r0 + (r1 - r0) t / T. Over [0, T] its integral is (r0 + r1)/2 * T; over the first
    # half it is r0 T/2 + (r1 - r0) T/8.
    r0, r1, seconds = 10.0, 110.0, 400
    times = np.fromiter(ramp_arrivals(r0, r1, 0, seconds * SECOND, np.random.default_rng(5)), dtype=np.int64)
    assert within(times.size, (r0 + r1) / 2 * seconds)
    first_half = int(np.sum(times < seconds * SECOND // 2))
    assert within(first_half, r0 * seconds / 2 + (r1 - r0) * seconds / 8)


def test_ramp_down_counts() -> None:
    times = list(ramp_arrivals(200.0, 0.0, 5 * SECOND, 105 * SECOND, np.random.default_rng(9)))
    assert within(len(times), 100.0 * 100)


def test_sinusoid_counts_over_whole_periods() -> None:
    # The sine integrates to zero over whole periods, so with amplitude <= mean (no clipping) the
    # expected count is mean * duration. 50..500 req/s is mean 275, amplitude 225.
    period, periods = 10 * SECOND, 6
    stop = 3 * SECOND + periods * period
    times = np.fromiter(
        sinusoidal_arrivals(275.0, 225.0, period, 3 * SECOND, stop, np.random.default_rng(1)), dtype=np.int64
    )
    assert within(times.size, 275.0 * periods * 10)
    # The phase is zero at start, so the first half period (sin > 0) has the busy half:
    # integral of mean + A sin over [0, P/2] is mean P/2 + A P/pi.
    offsets = (times - 3 * SECOND) % period
    busy = int(np.sum(offsets < period // 2))
    assert within(busy, periods * (275.0 * 5 + 225.0 * 10 / math.pi))


def test_clipped_sinusoid_counts() -> None:
    # mean 0, amplitude A: rate = A max(0, sin), whose integral over one period P is A P / pi.
    amplitude, period, periods = 300.0, 4 * SECOND, 25
    times = list(sinusoidal_arrivals(0.0, amplitude, period, 0, periods * period, np.random.default_rng(2)))
    assert within(len(times), periods * amplitude * 4 / math.pi)
    assert all((t % period) < period // 2 + 1 for t in times)  # never in the clipped half


def test_thinning_keeps_a_subset_of_the_bound() -> None:
    # Same seed and same bound: the candidates and acceptance draws do not depend on the rate,
    # so a rate below another keeps a subset of its arrivals, and rate == bound keeps them all.
    bound = 50.0
    stop = 60 * SECOND

    def full(t: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        return np.full(t.shape, bound)

    def half(t: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        return np.full(t.shape, bound / 2)

    everything = list(thinned_arrivals(full, bound, 0, stop, np.random.default_rng(4)))
    some = list(thinned_arrivals(half, bound, 0, stop, np.random.default_rng(4)))
    assert set(some) <= set(everything)
    assert within(len(everything), bound * 60)
    assert within(len(some), bound / 2 * 60)


def test_thinning_rejects_a_rate_above_its_bound() -> None:
    def too_high(t: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        return np.full(t.shape, 11.0)

    with pytest.raises(ValueError, match="outside"):
        list(thinned_arrivals(too_high, 10.0, 0, 100 * SECOND, np.random.default_rng(0)))


def test_patterns_reject_bad_rates() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        step_arrivals(-1.0, 2.0, 5, 0, 10, rng)
    with pytest.raises(ValueError):
        ramp_arrivals(1.0, float("nan"), 0, 10, rng)
    with pytest.raises(ValueError):
        sinusoidal_arrivals(1.0, 1.0, 0, 0, 10, rng)
    assert list(step_arrivals(0.0, 0.0, 5, 0, 10**12, rng)) == []


def test_sum_merges_in_order() -> None:
    parts = [
        list(poisson_arrivals(30.0, 0, 20 * SECOND, np.random.default_rng(1))),
        list(constant_arrivals(7.0, 0, 20 * SECOND)),
        list(uniform_arrivals(100, 5 * SECOND, 6 * SECOND, np.random.default_rng(2))),
    ]
    merged = list(sum_arrivals(*(iter(part) for part in parts)))
    assert len(merged) == sum(len(part) for part in parts)
    assert merged == sorted(merged)
    assert sorted(merged) == sorted(t for part in parts for t in part)


def test_sum_is_lazy() -> None:
    # Merging two endless patterns must not try to exhaust them.
    merged = sum_arrivals(constant_arrivals(1.0, 0, 2**62), constant_arrivals(2.0, 0, 2**62))
    assert [next(merged) for _ in range(4)] == [SECOND // 2, SECOND, SECOND, 3 * SECOND // 2]


@pytest.mark.parametrize(
    ("rate", "integral", "arrivals"),
    [
        # A step from 20/s to 80/s at 100 s, over [0, 300 s): 20*100 + 80*200 requests expected.
        (
            step_rate(20.0, 80.0, 100 * SECOND),
            20 * 100 + 80 * 200,
            lambda rng: step_arrivals(20, 80, 100 * SECOND, 0, 300 * SECOND, rng),
        ),
        # A ramp from 10/s to 90/s over 300 s: the mean of its ends times the span.
        (ramp_rate(10.0, 90.0, 0, 300 * SECOND), 50 * 300, lambda rng: ramp_arrivals(10, 90, 0, 300 * SECOND, rng)),
        # Three whole periods of a sinusoid around 60/s: the mean times the span.
        (
            sinusoidal_rate(60.0, 40.0, 100 * SECOND, 0),
            60 * 300,
            lambda rng: sinusoidal_arrivals(60, 40, 100 * SECOND, 0, 300 * SECOND, rng),
        ),
    ],
)
def test_a_patterns_rate_is_what_its_arrivals_average(
    rate: Callable[[npt.NDArray[np.int64]], npt.NDArray[np.float64]],
    integral: float,
    arrivals: Callable[[np.random.Generator], Iterator[int]],
) -> None:
    """The rate function a fluid run reads: its integral is the expected count (by hand above), both by
    quadrature and, within 4 standard deviations of a Poisson count, by the arrivals drawn from it."""
    grid = np.arange(0, 300 * SECOND, SECOND // 10, dtype=np.int64)
    assert float(rate(grid).sum()) * 0.1 == pytest.approx(integral, rel=0.01)
    counted = sum(1 for _ in arrivals(np.random.default_rng(34)))
    assert abs(counted - integral) < 4 * math.sqrt(integral)
