"""Archived count replay: the bundled NASA-HTTP archive's totals, bad archives and bad tokens, and the
up-front check."""

from __future__ import annotations

import tarfile
from pathlib import Path

import numpy as np
import pytest

from skenario.core.time import MINUTE, SECOND
from skenario.workloads.archives import check_archive_trace, nasa_arrivals
from skenario.workloads.tracefiles import TraceError
from tests.workloads import TRACES, error_of, exhaust, raises, write, write_archive

NASA = TRACES / "nasa_http_1995_per_second_workload.tbz2"


def test_nasa_total_matches_the_archive() -> None:
    with tarfile.open(NASA, "r:bz2") as archive:
        member = archive.extractfile("workload.txt")
        assert member is not None
        counts = [int(token) for token in member.read().split()]
    times = np.fromiter(nasa_arrivals(NASA, rng=np.random.default_rng(0)), dtype=np.int64)
    assert times.size == sum(counts)
    assert np.all(np.diff(times) >= 0)
    assert times[0] >= 0 and times[-1] < len(counts) * SECOND
    # the first hour, second by second
    hour = np.fromiter(nasa_arrivals(NASA, rng=np.random.default_rng(0), stop=3600 * SECOND), dtype=np.int64)
    assert np.array_equal(np.bincount(hour // SECOND, minlength=3600), counts[:3600])
    # time_scale 2 within a 2-hour stop covers the same first hour of trace
    slow = list(nasa_arrivals(NASA, rng=np.random.default_rng(0), stop=7200 * SECOND, time_scale=2.0))
    assert len(slow) == sum(counts[:3600])


@pytest.mark.parametrize(
    ("content", "line", "value"),
    [(b"1 2 x 3", 1, "x"), (b"1 2\n3 -4 5\n", 2, "-4"), (b"0 0\n\n1.5", 3, "1.5")],
)
def test_bad_archived_counts(tmp_path: Path, content: bytes, line: int, value: str) -> None:
    path = write_archive(tmp_path / "workload.tbz2", content)
    with pytest.raises(TraceError) as excinfo:
        list(nasa_arrivals(path, rng=np.random.default_rng(0)))
    assert f"{path}:{line}" in error_of(excinfo) and value in error_of(excinfo)


def test_archived_counts_small(tmp_path: Path) -> None:
    path = write_archive(tmp_path / "workload.tbz2", b"2 0\n1 ")
    times = list(nasa_arrivals(path, rng=np.random.default_rng(0), interval=MINUTE))
    assert len(times) == 3
    assert [t // MINUTE for t in times] == [0, 0, 2]


def test_bad_archives(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="holds no counts"):
        nasa_arrivals(write_archive(tmp_path / "workload.tbz2", b" \n"), rng=np.random.default_rng(0))
    with pytest.raises(TraceError, match=r"no file 'workload\.txt'"):
        nasa_arrivals(
            write_archive(tmp_path / "workload.tbz2", b"1 2", member="other.txt"), rng=np.random.default_rng(0)
        )
    with pytest.raises(TraceError, match="not a tar archive"):
        nasa_arrivals(write(tmp_path, "1 2 3", name="plain.txt"), rng=np.random.default_rng(0))
    with pytest.raises(TraceError, match="cannot open"):
        nasa_arrivals(tmp_path / "absent.tbz2", rng=np.random.default_rng(0))


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


def test_a_member_without_whitespace_is_refused_at_its_first_long_token(tmp_path: Path) -> None:
    """Counts are cut at whitespace; a member with none (3 MiB of digits here) is refused once a token passes
    any count's length, not carried whole into memory first."""
    path = write_archive(tmp_path / "workload.tbz2", b"1 2\n" + b"7" * (3 << 20))
    with pytest.raises(TraceError, match="not a file of counts") as excinfo:
        list(nasa_arrivals(path, rng=np.random.default_rng(0)))
    assert f"{path}:2" in error_of(excinfo)
