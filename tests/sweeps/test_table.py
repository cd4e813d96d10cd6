"""A sweep's tables: each point's means and intervals against hand-computed t-intervals over its runs,
the paired differences against the per-seed differences, and the per-run table as Parquet holds it."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from skenario.sweeps.space import SweepError
from skenario.sweeps.table import points_frame, runs_frame

SETTINGS = {1: {"workload.replicas": 2}, 2: {"workload.replicas": 3}}
# Three seeds per point. p99 at point 1: 10, 12, 14; at point 2: 7, 8, 12 (per-seed differences -3, -4, -2).
ROWS = [
    {"point": 1, "seed": 5, "p99_ms": 10.0, "replica_hours": 1.0, "error": None},
    {"point": 1, "seed": 6, "p99_ms": 12.0, "replica_hours": 1.0, "error": None},
    {"point": 1, "seed": 7, "p99_ms": 14.0, "replica_hours": 1.0, "error": None},
    {"point": 2, "seed": 5, "p99_ms": 7.0, "replica_hours": 1.5, "error": None},
    {"point": 2, "seed": 6, "p99_ms": 8.0, "replica_hours": 1.5, "error": None},
    {"point": 2, "seed": 7, "p99_ms": 12.0, "replica_hours": 1.5, "error": None},
]
T_2 = 4.302653  # t(2 degrees of freedom, 0.975), from a t table


def test_each_point_has_its_runs_mean_and_t_interval() -> None:
    frame = points_frame(SETTINGS, ROWS).set_index("point")
    # Point 1: mean 12, s = 2, half-width t(2) * 2 / sqrt(3).
    assert frame.loc[1, "p99_ms"] == 12.0
    assert frame.loc[1, "p99_ms_high"] - 12.0 == pytest.approx(T_2 * 2 / math.sqrt(3), rel=1e-6)
    # Point 2: mean 9, s = sqrt(((-2)^2 + (-1)^2 + 3^2) / 2) = sqrt(7).
    assert frame.loc[2, "p99_ms"] == 9.0
    assert 9.0 - frame.loc[2, "p99_ms_low"] == pytest.approx(T_2 * math.sqrt(7) / math.sqrt(3), rel=1e-6)
    # Equal values: an interval of no width. No run gave a cost: NaN.
    assert (frame.loc[2, "replica_hours_low"], frame.loc[2, "replica_hours_high"]) == (1.5, 1.5)
    assert math.isnan(frame.loc[1, "cost"])
    assert frame.loc[1, "workload.replicas"] == 2 and frame.loc[1, "runs"] == 3 and frame.loc[1, "failed"] == 0


def test_the_difference_from_the_baseline_is_paired_by_seed() -> None:
    frame = points_frame(SETTINGS, ROWS, baseline=1).set_index("point")
    # Differences -3, -4, -2: mean -3, s = 1, so -3 ± t(2) / sqrt(3) = -3 ± 2.484: below 0, where the
    # unpaired intervals (12 ± 4.97 and 9 ± 6.57) overlap.
    assert frame.loc[2, "p99_ms_diff"] == -3.0
    assert frame.loc[2, "p99_ms_diff_high"] == pytest.approx(-3 + T_2 / math.sqrt(3), rel=1e-6)
    assert frame.loc[2, "p99_ms_diff_high"] < 0 < frame.loc[2, "p99_ms_high"] - frame.loc[1, "p99_ms_low"]
    assert frame.loc[1, "p99_ms_diff"] == 0.0  # the baseline against itself


def test_a_failed_run_is_counted_and_left_out_of_the_figures() -> None:
    rows = [*ROWS[:2], {"point": 1, "seed": 7, "p99_ms": None, "error": "ValueError: x"}, *ROWS[3:]]
    frame = points_frame(SETTINGS, rows).set_index("point")
    assert frame.loc[1, "failed"] == 1
    assert frame.loc[1, "p99_ms"] == 11.0  # the mean of 10 and 12


def test_a_baseline_outside_the_points_is_refused() -> None:
    with pytest.raises(SweepError, match="--baseline 3"):
        points_frame(SETTINGS, ROWS, baseline=3)


def test_the_runs_table_holds_every_run_with_its_settings_and_goes_to_parquet(tmp_path: Path) -> None:
    settings = {1: {"a": 1, "b": "30s"}, 2: {"a": 2.5, "b": 60}}  # b mixes text and numbers
    frame = runs_frame(settings, ROWS)
    assert list(frame["a"]) == [1, 1, 1, 2.5, 2.5, 2.5]
    assert list(frame["b"]) == ["30s"] * 3 + ["60"] * 3  # mixed: held as text, as Parquet needs
    frame.to_parquet(tmp_path / "runs.parquet", index=False)
    back = pd.read_parquet(tmp_path / "runs.parquet")
    assert list(back["p99_ms"]) == [row["p99_ms"] for row in ROWS]
