"""Up-front trace checks read exactly what a replay reads; counts spread in bounded pieces.

The checks exist so a run can refuse a bad trace before it starts. That is only sound if a check
raises exactly when the replay with the same window would: these tests put one bad row at every
position around the window's end and compare the two.
"""

from __future__ import annotations

import bz2
import io
import math
import tarfile
from collections.abc import Callable, Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skenario.core.random import BATCH
from skenario.core.time import MILLISECOND, SECOND
from skenario.workloads.traces import (
    TraceError,
    check_archive_trace,
    check_count_trace,
    check_timestamp_trace,
    count_arrivals,
    nasa_arrivals,
    timestamp_arrivals,
)


def raises(action: Callable[..., object], *args: Any, **kwargs: Any) -> bool:
    """Whether `action(*args, **kwargs)` raises a TraceError."""
    try:
        action(*args, **kwargs)
    except TraceError:
        return True
    return False


def exhaust(arrivals: Callable[..., Iterator[int]], *args: Any, **kwargs: Any) -> None:
    """Replay to the end, which reads everything the replay reads."""
    for _ in arrivals(*args, **kwargs):
        pass


def test_timestamp_check_raises_exactly_when_the_replay_does(tmp_path: Path) -> None:
    # Row i is at i seconds of trace. Every window end just before, at and just after each row,
    # against a bad row at and around it, with time scaled and rate scaled (which reads ahead).
    rows = 10
    for bad in range(rows + 1):
        values = ["x" if i == bad else str(i) for i in range(rows)]
        path = tmp_path / f"t{bad}.csv"
        path.write_text("t\n" + "\n".join(values) + "\n")
        for row in range(rows + 2):
            for offset in (-1, 0, 1):
                for time_scale in (0.5, 1.0, 3.0):
                    stop = max(round(row * SECOND * time_scale) + offset, 0)
                    window = {"start": 0, "stop": stop, "time_scale": time_scale}
                    checked = raises(check_timestamp_trace, path, "t", **window)
                    for rate_scale in (1.0, 2.5):
                        rng = np.random.default_rng(0)
                        replayed = raises(
                            exhaust, timestamp_arrivals, path, "t", rate_scale=rate_scale, rng=rng, **window
                        )
                        assert checked == replayed, (bad, row, offset, time_scale, rate_scale)


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


def write_archive(path: Path, content: bytes) -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo("workload.txt")
        info.size = len(content)
        archive.addfile(info, io.BytesIO(content))
    path.write_bytes(bz2.compress(buffer.getvalue()))
    return path


def test_archive_check_matches_the_replay(tmp_path: Path) -> None:
    good = write_archive(tmp_path / "good.tbz2", b"1 2 3 4\n5 6\n")
    check_archive_trace(good, stop=2 * SECOND)
    check_archive_trace(good)
    bad = write_archive(tmp_path / "bad.tbz2", b"1 2 3\n4 -5 6\n")
    for stop in (SECOND, 10 * SECOND, None):
        checked = raises(check_archive_trace, bad, stop=stop)
        replayed = raises(exhaust, nasa_arrivals, bad, rng=np.random.default_rng(0), stop=stop)
        # One block holds the whole (small) member, so both read the bad token whatever the window.
        assert checked and replayed


def test_checks_reject_bad_scales(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("t\n0\n1\n")
    with pytest.raises(ValueError):
        check_timestamp_trace(path, "t", time_scale=0.0)
    with pytest.raises(ValueError):
        check_count_trace(path, "t", "t", time_scale=float("inf"))


# --- spreading counts in bounded pieces ----------------------------------------------------------


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
