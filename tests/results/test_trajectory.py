"""The replica-trajectory error on hand-made series, and invariants of it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.results.trajectory import match_events, mean_absolute_error, series_error, trajectory_error


def step(counts: Sequence[float], every: int = 15) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(len(counts), dtype=np.int64) * every * SECOND, np.array(counts, dtype=np.float64)


def test_a_hand_computed_pair_of_trajectories() -> None:
    """Observed 2, 2, 4, 4 and simulated 2, 3, 3, 4, every 15 s over [0, 60 s): differences 0, 1, 1, 0, so the
    MAE is 0.5; both hold 12 replicas × 15 s = 180 replica-seconds; the observed +2 at 30 s matches the closer
    of the simulated ups at 15 s and 45 s (|Δt| 15 s); the decisions (hold, up, hold) and (up, hold, up) never agree."""
    error = trajectory_error(step([2, 2, 4, 4]), step([2, 3, 3, 4]), 0, 60 * SECOND)
    assert error.mae == 0.5
    assert error.max_abs == 1
    assert error.replica_seconds_observed == error.replica_seconds_simulated == 180
    assert error.replica_seconds_error_pct == 0
    assert (error.events_observed, error.events_simulated, error.events_matched) == (1, 2, 1)
    assert error.timing_error_s == 15
    assert error.decisions == 3
    assert error.decision_match == 0
    assert error.decision_match_moving == 0
    # observed (hold, up, hold) by row, simulated (up, hold, up) by column: hold->up twice, up->hold once
    assert error.confusion == ((0, 0, 0), (0, 0, 2), (0, 1, 0))


def test_the_mae_is_exact_between_samples() -> None:
    """Observed 4 from 0 to 60 s; simulated 4, then 6 from 10 s, sampled at its own times: |Δ| is 2 for 50 of
    60 s, so the MAE is 100/60, and the simulated replica-seconds 4·10 + 6·50 = 340 against 240 (+41.7%)."""
    observed = (np.array([0, 30 * SECOND]), np.array([4.0, 4.0]))
    simulated = (np.array([0, 10 * SECOND]), np.array([4.0, 6.0]))
    mae, largest, obs, sim = mean_absolute_error(observed, simulated, 0, 60 * SECOND)
    assert mae == pytest.approx(100 / 60)
    assert largest == 2
    assert (obs, sim) == (240, 340)


def test_events_match_only_in_the_same_direction_and_within_the_tolerance() -> None:
    observed = [(100, 1), (500, -1)]
    simulated = [(130, -1), (160, 1), (900, -1)]
    assert match_events(observed, simulated, 120) == [60]  # 500 down has no down within 120


def test_a_cascade_counts_one_event_per_step() -> None:
    error = trajectory_error(step([3, 5, 8, 8]), step([3, 3, 3, 8]), 0, 60 * SECOND)
    assert (error.events_observed, error.events_simulated, error.events_matched) == (2, 1, 1)


def test_series_error_compares_each_observed_sample_with_the_row_that_covers_it() -> None:
    """Rows at 15 and 30 s hold 0.5 and 0.7; observed 0.4 at 10 s and 0.9 at 20 s: errors 0.1 and 0.2."""
    observed = (np.array([10 * SECOND, 20 * SECOND]), np.array([0.4, 0.9]))
    simulated = (np.array([15 * SECOND, 30 * SECOND]), np.array([0.5, 0.7]))
    mae, rmse = series_error(observed, simulated, 0, 60 * SECOND)
    assert mae == pytest.approx(0.15)
    assert rmse == pytest.approx(np.sqrt((0.01 + 0.04) / 2))


counts = st.lists(st.integers(0, 20), min_size=2, max_size=40)


@settings(max_examples=60, deadline=None)
@given(counts)
def test_a_trajectory_against_itself_has_no_error(values: list[int]) -> None:
    error = trajectory_error(step(values), step(values), 0, len(values) * 15 * SECOND)
    assert error.mae == 0
    assert error.events_matched == error.events_observed == error.events_simulated
    assert error.decision_match == 1


@settings(max_examples=60, deadline=None)
@given(counts, counts, st.integers(-5, 5))
def test_the_mae_is_symmetric_bounded_and_blind_to_a_common_shift(a: list[int], b: list[int], shift: int) -> None:
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    stop = n * 15 * SECOND
    mae, largest, _, _ = mean_absolute_error(step(a), step(b), 0, stop)
    assert mae == pytest.approx(mean_absolute_error(step(b), step(a), 0, stop)[0])
    assert mae <= largest + 1e-12
    moved = mean_absolute_error(step([x + shift for x in a]), step([x + shift for x in b]), 0, stop)[0]
    assert moved == pytest.approx(mae)


def irregular(draw: st.DrawFn, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """A step function on its own irregular grid starting at 0: integer counts at sorted distinct times (s)."""
    times = sorted(draw(st.sets(st.integers(1, stop - 1), max_size=12)) | {0})
    values = draw(st.lists(st.integers(0, 20), min_size=len(times), max_size=len(times)))
    return np.array(times, dtype=np.int64) * SECOND, np.array(values, dtype=np.float64)


@st.composite
def two_trajectories(draw: st.DrawFn) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], int]:
    stop = draw(st.integers(2, 600))
    return irregular(draw, stop), irregular(draw, stop), stop * SECOND


@settings(max_examples=80, deadline=None)
@given(two_trajectories())
def test_on_any_two_grids_the_mae_bounds_the_replica_seconds_gap_and_is_bounded_by_the_largest(
    pair: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray], int],
) -> None:
    """|∫(s - o)| ≤ ∫|s - o| ≤ max|s - o| · span, whatever the two sampling grids; and the MAE is symmetric."""
    observed, simulated, stop = pair
    mae, largest, seconds_o, seconds_s = mean_absolute_error(observed, simulated, 0, stop)
    span_s = stop / SECOND
    assert abs(seconds_s - seconds_o) / span_s <= mae + 1e-9
    assert mae <= largest + 1e-9
    assert mae == pytest.approx(mean_absolute_error(simulated, observed, 0, stop)[0])


@settings(max_examples=60, deadline=None)
@given(counts, counts, st.integers(-3600, 3600))
def test_moving_both_trajectories_and_the_window_in_time_changes_nothing_but_the_window(
    a: list[int], b: list[int], seconds: int
) -> None:
    n = min(len(a), len(b))
    shift = seconds * SECOND
    stop = n * 15 * SECOND
    here = trajectory_error(step(a[:n]), step(b[:n]), 0, stop)
    times, values = step(a[:n])
    moved_a = (times + shift, values)
    times, values = step(b[:n])
    moved_b = (times + shift, values)
    there = trajectory_error(moved_a, moved_b, shift, stop + shift)
    assert (there.start_ns, there.stop_ns) == (shift, stop + shift)
    assert {**there.to_dict(), "start_ns": 0, "stop_ns": 0} == {**here.to_dict(), "start_ns": 0, "stop_ns": 0}


@settings(max_examples=60, deadline=None)
@given(counts, counts)
def test_swapping_the_sides_on_one_grid_swaps_the_events_and_transposes_the_confusion(
    a: list[int], b: list[int]
) -> None:
    n = min(len(a), len(b))
    stop = n * 15 * SECOND
    one = trajectory_error(step(a[:n]), step(b[:n]), 0, stop)
    other = trajectory_error(step(b[:n]), step(a[:n]), 0, stop)
    assert (one.events_observed, one.events_simulated) == (other.events_simulated, other.events_observed)
    assert one.events_matched == other.events_matched
    assert one.decision_match == other.decision_match
    assert one.confusion == tuple(zip(*other.confusion, strict=True))


def test_a_down_step_and_its_late_twin() -> None:
    """Observed 6, 6, 4, 4, 4, 4; simulated 6, 6, 6, 6, 4, 4 (the same down 30 s late), every 15 s over
    [0, 90 s): |Δ| = 2 for 30 s, MAE 60/90; replica-seconds 15·28 = 420 observed, 15·32 = 480 simulated
    (+14.3%); the downs at 30 s and 60 s match (|Δt| 30 s); decisions (hold, down, hold, hold, hold) against
    (hold, hold, hold, down, hold): 3 of 5 agree, none of the 2 where either moved."""
    error = trajectory_error(step([6, 6, 4, 4, 4, 4]), step([6, 6, 6, 6, 4, 4]), 0, 90 * SECOND)
    assert error.mae == pytest.approx(60 / 90)
    assert (error.replica_seconds_observed, error.replica_seconds_simulated) == (420, 480)
    assert error.replica_seconds_error_pct == pytest.approx(100 * 60 / 420)
    assert (error.events_observed, error.events_simulated, error.events_matched) == (1, 1, 1)
    assert error.timing_error_s == 30
    assert error.decision_match == pytest.approx(3 / 5)
    assert error.decision_match_moving == 0
    assert error.confusion == ((0, 1, 0), (1, 3, 0), (0, 0, 0))
    assert "0.67" in error.lines()[0] and "+14.3%" in error.lines()[1]
