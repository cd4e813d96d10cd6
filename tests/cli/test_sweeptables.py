"""The sweep table as a user reads it: the SLO as met or missed beside the compliant share, shares as
percentages, and what held a setting back shown only where it did."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from skenario.cli.sweeptables import percent, points_table, verdict
from skenario.sweeps.table import points_frame

SETTINGS = {1: {"target": 40}, 2: {"target": 60}}


def _row(point: int, seed: int, met: float, compliance: float, at_max: float, pending: float) -> dict[str, object]:
    return {
        "point": point,
        "seed": seed,
        "p99_ms": 100.0,
        "slo_met": met,
        "slo_compliance": compliance,
        "at_max_replicas": at_max,
        "pods_pending": pending,
        "cluster_full": 0.0,
        "error": None,
    }


def _rendered(rows: list[dict[str, object]]) -> str:
    console = Console(file=io.StringIO(), width=200)
    for table in points_table(points_frame(SETTINGS, rows), "sweep"):
        console.print(table)
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(output, str)
    return output


@pytest.mark.parametrize(("mean", "runs", "shown"), [(1.0, 5, "met"), (0.0, 5, "missed"), (0.6, 5, "met 3/5")])
def test_a_points_verdict_says_how_many_seeds_met_the_slo(mean: float, runs: int, shown: str) -> None:
    assert verdict(mean, runs) == shown


def test_shares_read_as_percentages_with_their_interval() -> None:
    assert percent(0.5, 0.46, 0.54) == "50% ± 4%"
    assert percent(0.5, 0.5, 0.5) == "50%"  # every seed the same
    assert percent(0.5, float("nan"), float("nan")) == "50%"  # one seed
    assert percent(None, None, None) == "-"


def test_the_table_shows_the_verdict_the_share_and_only_the_limits_that_held() -> None:
    rows = [
        _row(1, 1, 1.0, 0.98, 0.5, 0.4),
        _row(1, 2, 1.0, 0.96, 0.5, 0.4),
        _row(2, 1, 0.0, 0.60, 0.0, 0.0),
        _row(2, 2, 1.0, 0.80, 0.0, 0.0),
    ]
    text = _rendered(rows)
    header = next(line for line in text.splitlines() if "point" in line)
    assert "SLO" in header and "in SLO" in header and "at max" in header and "pending" in header
    assert "cluster full" not in header  # no point was ever held back by a full cluster
    assert "no point was ever cluster full" in text
    point_1 = next(line for line in text.splitlines() if line.startswith("│     1 │"))
    point_2 = next(line for line in text.splitlines() if line.startswith("│     2 │"))
    assert re.search(r"│ +met +│", point_1) and re.search(r"│ +met 1/2 +│", point_2)
    assert "50%" in point_1 and "40%" in point_1  # at max half the time, pods pending 40%
