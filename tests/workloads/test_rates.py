"""Traffic as an intensity: piecewise rates integrate exactly, and a pattern's mean is its samples'."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.workloads.rates import TIMESTAMP_BIN, Intensity, PiecewiseRate, spans_rate, timestamps_rate


def piecewise(*rows: tuple[float, float, float]) -> PiecewiseRate:
    """(begin s, end s, rate /s) rows."""
    begins, ends, rates = zip(*rows, strict=True)
    return PiecewiseRate(
        np.array([round(b * SECOND) for b in begins], dtype=np.int64),
        np.array([round(e * SECOND) for e in ends], dtype=np.int64),
        np.array(rates, dtype=np.float64),
    )


def test_a_piecewise_rate_integrates_by_hand() -> None:
    """2/s on [0, 10), nothing on [10, 20), 5/s on [20, 30): 20 + 50 requests; over [5, 25): 10 + 25."""
    rate = piecewise((0, 10, 2.0), (20, 30, 5.0))
    assert list(rate.expected(np.array([0, 10, 20, 30, 40], dtype=np.int64) * SECOND)) == [0, 20, 20, 70, 70]
    assert rate.mean(5 * SECOND, 25 * SECOND) == pytest.approx(35 / 20)
    assert list(rate(np.array([1, 15, 29, 31], dtype=np.int64) * SECOND)) == [2, 0, 5, 0]


def test_bad_intervals_are_refused() -> None:
    with pytest.raises(ValueError, match="sorted and disjoint"):
        piecewise((0, 10, 1.0), (5, 20, 1.0))
    with pytest.raises(ValueError, match=">= 0"):
        piecewise((0, 10, -1.0))
    with pytest.raises(ValueError, match="empty span"):
        piecewise((0, 10, 1.0)).mean(SECOND, SECOND)


@given(
    st.lists(st.tuples(st.integers(1, 100), st.floats(0, 1000)), min_size=1, max_size=20),
    st.integers(0, 2000),
    st.integers(1, 2000),
)
def test_the_mean_over_a_span_is_the_sum_of_its_parts(rows: list[tuple[int, float]], a: int, length: int) -> None:
    """Additivity: the arrivals expected over [a, c) are those over [a, b) plus [b, c), for any b between."""
    ends = np.cumsum([width for width, _ in rows]) * SECOND // 10
    begins = np.concatenate(([0], ends[:-1]))
    rate = PiecewiseRate(begins.astype(np.int64), ends.astype(np.int64), np.array([r for _, r in rows]))
    start, stop = a * SECOND // 10, (a + length) * SECOND // 10
    middle = (start + stop) // 2
    whole = rate.mean(start, stop) * (stop - start)
    parts = rate.mean(start, middle) * (middle - start) if middle > start else 0.0
    parts += rate.mean(middle, stop) * (stop - middle)
    assert whole == pytest.approx(parts, rel=1e-9, abs=1e-3)


def test_spans_are_scaled_in_time_and_count() -> None:
    """Counts 30 and 60 over two 1-minute intervals, stretched twice as long and doubled: 60 requests over
    two minutes, then 120 over the next two, from a start of 10 s; cut at 3 minutes."""
    minute = 60 * SECOND
    chunk = (np.array([0, minute], dtype=np.int64), np.array([minute, 2 * minute]), np.array([30.0, 60.0]))
    rate = spans_rate([chunk], 10 * SECOND, 3 * minute, time_scale=2.0, rate_scale=2.0)
    assert list(rate.begins) == [10 * SECOND, 10 * SECOND + 2 * minute]
    assert rate.mean(10 * SECOND, 10 * SECOND + 2 * minute) == pytest.approx(60 / 120)
    assert rate.mean(10 * SECOND + 2 * minute, 10 * SECOND + 4 * minute) == pytest.approx(120 / 120)


def test_timestamps_are_counted_in_bins() -> None:
    """Records at 0.5, 1.2, 1.7 and 3.0 s: one in the first second, two in the second, one in the fourth;
    each worth 3 requests; cut at 3.5 s, the last bin half as long."""
    times = iter(round(t * SECOND) for t in (0.5, 1.2, 1.7, 3.0, 9.0))
    rate = timestamps_rate(times, 0, 3 * SECOND + SECOND // 2, rate_scale=3.0)
    assert TIMESTAMP_BIN == SECOND
    assert list(rate(np.array([0, 1, 2, 3], dtype=np.int64) * SECOND)) == [3, 6, 0, 6]
    assert float(rate.expected(np.array([10 * SECOND]))[0]) == pytest.approx(12)


def test_an_intensity_sums_patterns_in_their_windows_and_traces() -> None:
    """A flat 4/s on [0, 10 s) with a trace of 1/s on [5, 15 s): over [0, 20 s), 40 + 10 requests."""

    def flat(t: np.ndarray) -> np.ndarray:
        return np.full(t.shape, 4.0)

    intensity = Intensity([(0, 10 * SECOND, flat)], [piecewise((5, 15, 1.0))])
    assert intensity.mean(0, 20 * SECOND) == pytest.approx(50 / 20)
    assert list(intensity(np.array([1, 6, 12], dtype=np.int64) * SECOND)) == [4, 5, 1]


def test_an_intensity_reads_consecutive_steps_at_once_as_it_reads_each() -> None:
    """`step_means` over four 5 s steps of the intensity above: the flat 4/s on [0, 10 s) and the trace's 1/s on
    [5, 15 s) give 4, 5, 1 and 0 requests/s, with an offset of 5 s 5, 1, 0, 0; the same floats `mean` gives
    step by step, so a fluid run reading steps at once runs as one reading them one by one."""

    def flat(t: np.ndarray) -> np.ndarray:
        return np.full(t.shape, 4.0)

    for offset, expected in ((0, [4, 5, 1, 0]), (5 * SECOND, [5, 1, 0, 0])):
        intensity = Intensity([(0, 10 * SECOND, flat)], [piecewise((5, 15, 1.0))], offset=offset)
        means = intensity.step_means(0, 5 * SECOND, 4)
        assert means == pytest.approx(expected)
        assert means == [intensity.mean(k * 5 * SECOND, (k + 1) * 5 * SECOND) for k in range(4)]
    with pytest.raises(ValueError, match="empty span"):
        intensity.step_means(0, 0, 3)


@given(st.integers(0, 10**12), st.integers(1, 10**11), st.integers(1, 40))
def test_a_wave_read_a_run_of_steps_at_once_is_read_as_each_step_alone(start: int, step: int, steps: int) -> None:
    """A sine wave's (a pattern's) means over consecutive steps, read at once, are each step's own, float for float."""

    def wave(t: np.ndarray) -> np.ndarray:
        return 100 + 50 * np.sin(2 * np.pi * t / (86_400 * SECOND))

    intensity = Intensity([(0, 10**13, wave)])
    together = intensity.step_means(start, step, steps)
    assert together == [intensity.step_means(start + k * step, step, 1)[0] for k in range(steps)]


def test_an_intensity_offset_reads_the_scenarios_later_time() -> None:
    """With an offset of 10 s, the run's [0, 10 s) is the scenario's [10 s, 20 s): the trace's 1/s from 10 s on."""

    def flat(t: np.ndarray) -> np.ndarray:
        return np.full(t.shape, 4.0)

    intensity = Intensity([(0, 10 * SECOND, flat)], [piecewise((5, 15, 1.0))], offset=10 * SECOND)
    assert intensity.mean(0, 10 * SECOND) == pytest.approx(0.5)
    assert list(intensity(np.array([1, 6], dtype=np.int64) * SECOND)) == [1, 0]
