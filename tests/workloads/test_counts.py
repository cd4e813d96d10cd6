"""Per-interval count replay: counts spread within their intervals, scaling, bad rows, the up-front
check, and spreading in bounded pieces.

Tolerances: random rounding of a scaled count adds a Bernoulli(frac) per row, variance
frac (1 - frac) <= 1/4; a uniform spread puts Binomial(n, p) of n arrivals in a fraction p of an
interval. Bounds are 5 sd (fixed seeds).
"""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from skenario.core.random import BATCH
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from skenario.workloads.counts import check_count_trace, count_arrivals
from skenario.workloads.tracefiles import TraceError
from tests.workloads import error_of, exhaust, raises, write


def test_count_csv_spreads_counts_within_intervals(tmp_path: Path) -> None:
    path = write(tmp_path, "minute,requests\n0,3\n60,0\n120,5\n180,2\n")
    times = list(count_arrivals(path, "minute", "requests", rng=np.random.default_rng(0)))
    assert len(times) == 10
    assert times == sorted(times)
    per_minute = [sum(1 for t in times if m * MINUTE <= t < (m + 1) * MINUTE) for m in range(4)]
    assert per_minute == [3, 0, 5, 2]  # the last row lasts the previous gap, 60 s
    explicit = list(count_arrivals(path, "minute", "requests", rng=np.random.default_rng(0), interval=SECOND))
    assert all(t < 180 * SECOND + SECOND for t in explicit)


def test_count_csv_scales(tmp_path: Path) -> None:
    rows = 2000
    path = write(tmp_path, "t,n\n" + "".join(f"{i},10\n" for i in range(rows)))
    doubled = list(count_arrivals(path, "t", "n", rng=np.random.default_rng(1), rate_scale=2.0))
    assert len(doubled) == 2 * 10 * rows  # integer scale: no rounding
    quarter = list(count_arrivals(path, "t", "n", rng=np.random.default_rng(1), rate_scale=0.25))
    # 2.5 per row: 2 or 3 with equal odds, variance 1/4 per row
    assert abs(len(quarter) - 2.5 * rows) <= 5 * math.sqrt(rows / 4)
    stretched = list(count_arrivals(path, "t", "n", rng=np.random.default_rng(1), time_scale=3.0, start=5))
    assert len(stretched) == 10 * rows
    assert stretched[0] >= 5 and stretched[-1] < 5 + 3 * rows * SECOND
    assert sum(1 for t in stretched if t < 5 + 3 * SECOND) == 10  # first row now lasts 3 s


@pytest.mark.parametrize(
    ("text", "line", "value"),
    [
        ("t,n\n0,1\n1,-2\n", 3, "-2"),
        ("t,n\n0,1\n1,lots\n", 3, "lots"),
        ("t,n\n0,1\n1,2\n1,3\n", 4, "1"),  # a repeated time has no interval
        ("t,n\n0,1\n", 2, None),  # one row: its interval is unknown
    ],
)
def test_bad_counts(tmp_path: Path, text: str, line: int, value: str | None) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TraceError) as excinfo:
        list(count_arrivals(path, "t", "n", rng=np.random.default_rng(0)))
    assert f"{path}:{line}" in error_of(excinfo)
    assert excinfo.value.line == line and excinfo.value.value == value


def test_count_check_raises_exactly_when_the_replay_does(tmp_path: Path) -> None:
    # Row i is at i seconds and rows are read BATCH at a time (plus one row of lookahead), so put
    # the window's end and a bad row on both sides of the chunk borders.
    rows = 2 * BATCH + 8
    ends = [BATCH - 0.5, BATCH, BATCH + 0.5, 2 * BATCH + 0.5]
    for bad in (BATCH, BATCH + 1, BATCH + 900, 2 * BATCH + 2, rows):
        values = [f"{i},{-1 if i == bad else 1}" for i in range(rows)]
        path = tmp_path / f"c{bad}.csv"
        path.write_text("t,n\n" + "\n".join(values) + "\n")
        for end in ends:
            for time_scale in (1.0, 0.37):
                window = {"start": 0, "stop": round(end * SECOND * time_scale), "time_scale": time_scale}
                checked = raises(check_count_trace, path, "t", "n", **window)
                replayed = raises(exhaust, count_arrivals, path, "t", "n", rng=np.random.default_rng(0), **window)
                assert checked == replayed, (bad, end, time_scale)


def test_one_huge_interval_is_exact_and_uniform(tmp_path: Path) -> None:
    # 200,000 requests in the first second: more than one piece, so drawn lazily on their own.
    n = 200_000
    path = tmp_path / "c.csv"
    path.write_text(f"t,n\n0,{n}\n1,3\n")
    times = np.fromiter(count_arrivals(path, "t", "n", rng=np.random.default_rng(2)), dtype=np.int64)
    assert times.size == n + 3
    assert np.all(np.diff(times) >= 0)
    assert int(np.sum(times < SECOND)) == n and int(np.sum(times >= SECOND)) == 3
    # Ten 100 ms bins of the first second each hold Binomial(n, 1/10): sd sqrt(n 0.1 0.9).
    bins = np.bincount(times[times < SECOND] // (100 * MILLISECOND), minlength=10)
    assert np.all(np.abs(bins - n / 10) <= 5 * math.sqrt(n * 0.09))
    # Cut in the middle of the huge interval: Binomial(n, 1/2) of them, and nothing after.
    half = list(count_arrivals(path, "t", "n", rng=np.random.default_rng(2), stop=SECOND // 2))
    assert abs(len(half) - n / 2) <= 5 * math.sqrt(n / 4) and max(half) < SECOND // 2


def test_many_intervals_across_pieces_keep_their_counts(tmp_path: Path) -> None:
    # 300 intervals of 700 requests: 210,000 in all, several pieces; each second keeps exactly 700.
    path = tmp_path / "c.csv"
    path.write_text("t,n\n" + "".join(f"{i},700\n" for i in range(300)))
    times = np.fromiter(count_arrivals(path, "t", "n", rng=np.random.default_rng(3)), dtype=np.int64)
    assert all(a <= b for a, b in pairwise(times.tolist()))
    assert np.array_equal(np.bincount(times // SECOND, minlength=300), [700] * 300)


def test_an_interval_squeezed_to_nothing_keeps_its_requests(tmp_path: Path) -> None:
    # time_scale 0.4 turns a 1 ns interval into 0 ns: its 70,000 requests all land at its start.
    path = tmp_path / "c.csv"
    path.write_text("t,n\n0,70000\n1,2\n")
    times = list(count_arrivals(path, "t", "n", unit="ns", time_scale=0.4, start=5, rng=np.random.default_rng(0)))
    assert len(times) == 70_002 and times[:70_000] == [5] * 70_000
