"""Queues' step series kept on disk and folded as they come, against the same figures computed from every row."""

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.queues.steps import SpilledSeries, StepIntegral, sample

# Changes of one step series: (ns since the last change, value); several may share an instant.
changes = st.lists(st.tuples(st.sampled_from([0, 0, 1, 7, 1000]), st.integers(0, 10**9)), max_size=40)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.lists(st.integers(-(2**62), 2**62), min_size=3, max_size=3)), max_size=60),
    st.integers(1, 5),
)
def test_spilled_rows_read_back_as_appended(rows: list[tuple[int, list[int]]], block: int) -> None:
    """Whatever went to disk and whatever is still in memory, each series reads back its rows in order: whole, and
    a block at a time."""
    series = SpilledSeries(3, 3, block_rows=block)
    for k, row in rows:
        series.append(k, row)
    for k in range(3):
        mine = np.array([row for j, row in rows if j == k], dtype=np.int64).reshape(-1, 3)
        assert series.rows(k) == len(mine)
        assert np.array_equal(series.read(k), mine)
        chunks = list(series.chunks(k))
        assert all(len(c) <= block for c in chunks)
        assert np.array_equal(np.concatenate(chunks) if chunks else np.zeros((0, 3), dtype=np.int64), mine)


@settings(max_examples=150, deadline=None)
@given(changes, st.integers(1, 5000), st.booleans())
def test_a_folded_integral_is_the_step_series_mean_and_peak(
    steps: list[tuple[int, int]], tail: int, every: bool
) -> None:
    """The mean over [0, end) is the sum of each value times how long it lasted (0 before the first change), over
    end, exactly; the peak is the largest value taken, or with `every_value=False` the largest left at an
    instant (the last of the changes there)."""
    fold = StepIntegral(every_value=every)
    times, values, t = [], [], 0
    for gap, value in steps:
        t += gap
        fold.change(t, value)
        times.append(t)
        values.append(value)
    end = t + tail
    edges = [*times, end]
    area = sum(Fraction(v) * (edges[i + 1] - edges[i]) for i, v in enumerate(values))
    assert fold.mean(end) == float(area / end)
    finals = [v for i, v in enumerate(values) if i + 1 == len(times) or times[i + 1] > times[i]]
    assert fold.peak == max([0, *(values if every else finals)])


@settings(max_examples=100, deadline=None)
@given(changes, st.lists(st.integers(0, 50_000), max_size=20), st.integers(1, 4))
def test_sampling_a_block_at_a_time_reads_the_last_change_at_or_before_each_instant(
    steps: list[tuple[int, int]], grid: list[int], block: int
) -> None:
    """Read a block at a time, each instant of the grid gets the series' last row at or before it (0 before the
    first): what a search of the whole series gives."""
    rows, t = [], 0
    for gap, value in steps:
        t += gap
        rows.append((t, value, -value))
    series = SpilledSeries(1, 3, block_rows=block)
    for row in rows:
        series.append(0, row)
    at = np.array(sorted(grid), dtype=np.int64)
    whole = np.array(rows, dtype=np.int64).reshape(-1, 3)
    found = np.searchsorted(whole[:, 0], at, side="right") - 1
    for column, got in zip((1, 2), sample(series.chunks(0), 0, (1, 2), at), strict=True):
        expected = np.where(found >= 0, whole[np.maximum(found, 0), column] if len(whole) else 0, 0)
        assert np.array_equal(got, expected.astype(float))
