"""Trace replay: exact parsing, the real traces bundled in examples/traces, scaling, and errors on bad files.

Tolerances for random scaling: thinning keeps each of n arrivals with probability p, a
Binomial(n, p) count with sd sqrt(n p (1 - p)); random rounding of a scaled count adds a
Bernoulli(frac) per row, variance frac (1 - frac) <= 1/4. Bounds are 5 sd (fixed seeds).
"""

from __future__ import annotations

import bz2
import io
import math
import tarfile
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from skenario.core.time import MINUTE, SECOND
from skenario.errors import SkenarioError
from skenario.workloads.traces import (
    TraceError,
    azure_llm_arrivals,
    count_arrivals,
    nasa_arrivals,
    parse_datetime_ns,
    parse_number_ns,
    timestamp_arrivals,
)

TRACES = Path(__file__).parents[2] / "examples" / "traces"  # bundled copies of ../shared/traces
AZURE = TRACES / "AzureLLMInferenceTrace_conv.csv"
NASA = TRACES / "nasa_http_1995_per_second_workload.tbz2"
AZURE_ROWS = 19_366
# 19:14:08.4025270 - 18:15:46.6805900 = 58 min 22 s - 0.2780630 s = 3501.7219370 s
AZURE_SPAN = 3_501_721_937_000


def write(tmp_path: Path, text: str, name: str = "trace.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- parsing -------------------------------------------------------------------------------------


def test_datetime_parsing_is_exact() -> None:
    a = parse_datetime_ns("2023-11-16 18:15:46.6805900")
    b = parse_datetime_ns("2023-11-16 18:15:50.9951690")
    assert a is not None and b is not None
    assert b - a == 4_314_579_000  # 50.9951690 - 46.6805900 = 4.3145790 s
    assert parse_datetime_ns("1970-01-01T00:00:01.000000001") == SECOND + 1
    assert parse_datetime_ns("1970-01-02 00:00:00") == 86_400 * SECOND
    # across a leap day and a year end
    leap = parse_datetime_ns("2024-03-01 00:00:00")
    feb28 = parse_datetime_ns("2024-02-28 00:00:00")
    assert leap is not None and feb28 is not None and leap - feb28 == 2 * 86_400 * SECOND
    y1 = parse_datetime_ns("2023-12-31 23:59:59.999999999")
    y2 = parse_datetime_ns("2024-01-01 00:00:00.000000001")
    assert y1 is not None and y2 is not None and y2 - y1 == 2
    # a zone offset: 02:00+02:00 is 00:00 UTC
    assert parse_datetime_ns("1970-01-01T02:00:00+02:00") == 0
    for bad in ("2023-13-01 00:00:00", "2023-02-30 00:00:00", "yesterday", "2023-11-16"):
        assert parse_datetime_ns(bad) is None


def test_number_parsing_is_exact() -> None:
    # float seconds cannot hold 1700000000.123456789 to the ns; Decimal parsing does
    later = parse_number_ns("1700000000.123456789")
    assert later is not None and later - 1_700_000_000 * SECOND == 123_456_789
    assert parse_number_ns("0.000000001") == 1
    assert parse_number_ns("1.5e3") == 1500 * SECOND
    assert parse_number_ns("250", 1_000_000) == 250_000_000
    for bad in ("nan", "inf", "1,5", "", "1s"):
        assert parse_number_ns(bad) is None


# --- per-request timestamps ----------------------------------------------------------------------


def test_timestamp_csv_numeric_and_offsets(tmp_path: Path) -> None:
    path = write(tmp_path, "id,t\na,1700000000.5\nb,1700000000.500000001\nc,1700000002\n")
    assert list(timestamp_arrivals(path, "t", start=7)) == [7, 8, 7 + 1_500_000_000]
    # in ms, 0.000000001 ms is 0.001 ns and rounds to 0; 1.5 ms is 1_500_000 ns
    assert list(timestamp_arrivals(path, "t", unit="ms")) == [0, 0, 1_500_000]
    assert list(timestamp_arrivals(path, "t", stop=8)) == [0, 1]


def test_azure_trace() -> None:
    times = list(azure_llm_arrivals(AZURE))
    assert len(times) == AZURE_ROWS
    assert times[:3] == [0, 4_314_579_000, 4_541_877_000]  # 51.2224670 - 46.6805900 = 4.5418770 s
    assert times[-1] == AZURE_SPAN
    assert all(a <= b for a, b in pairwise(times))


def test_azure_time_scale() -> None:
    times = list(azure_llm_arrivals(AZURE, time_scale=2.0, start=SECOND))
    assert len(times) == AZURE_ROWS
    assert times[0] == SECOND and times[-1] == SECOND + 2 * AZURE_SPAN
    half = list(azure_llm_arrivals(AZURE, time_scale=0.5))
    assert half[-1] == AZURE_SPAN // 2


@pytest.mark.parametrize("scale", [0.3, 1.5, 2.0, 3.25])
def test_azure_rate_scale(scale: float) -> None:
    times = list(azure_llm_arrivals(AZURE, rate_scale=scale, rng=np.random.default_rng(8)))
    assert all(a <= b for a, b in pairwise(times))
    assert all(0 <= t <= AZURE_SPAN for t in times)
    frac = scale - math.floor(scale)
    # floor(s) copies each, plus a Bernoulli(frac) one: mean s n, variance n frac (1 - frac)
    sd = math.sqrt(AZURE_ROWS * frac * (1 - frac))
    assert abs(len(times) - scale * AZURE_ROWS) <= 5 * sd
    if scale >= 1:  # every recorded arrival is kept
        assert set(azure_llm_arrivals(AZURE)) <= set(times)


def test_rate_scale_keeps_duplicates_between_neighbours(tmp_path: Path) -> None:
    path = write(tmp_path, "t\n0\n10\n20\n")
    times = list(timestamp_arrivals(path, "t", rate_scale=4.0, rng=np.random.default_rng(1)))
    assert len(times) == 12
    # copies of the arrival at 0 lie in [0, 10 s), of 10 s in [10 s, 20 s), of the last one at 20 s
    bins = ((0, 10 * SECOND), (10 * SECOND, 20 * SECOND), (20 * SECOND, 20 * SECOND + 1))
    assert [sum(1 for t in times if lo <= t < hi) for lo, hi in bins] == [4, 4, 4]
    assert times.count(20 * SECOND) == 4 and times.count(0) >= 1


def test_rate_scale_needs_rng(tmp_path: Path) -> None:
    path = write(tmp_path, "t\n0\n1\n")
    with pytest.raises(ValueError):
        timestamp_arrivals(path, "t", rate_scale=2.0)


# --- per-interval counts -------------------------------------------------------------------------


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


# --- bad files -----------------------------------------------------------------------------------


def error_of(excinfo: pytest.ExceptionInfo[TraceError]) -> str:
    assert isinstance(excinfo.value, SkenarioError)
    return str(excinfo.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TraceError) as excinfo:
        timestamp_arrivals(tmp_path / "nope.csv", "t")
    assert "nope.csv" in error_of(excinfo)


def test_empty_files(tmp_path: Path) -> None:
    for text in ("", "t\n", "t\n\n\n"):
        path = write(tmp_path, text)
        with pytest.raises(TraceError) as excinfo:
            timestamp_arrivals(path, "t")
        assert f"{path}:1" in error_of(excinfo)


def test_missing_column(tmp_path: Path) -> None:
    path = write(tmp_path, "time,count\n0,1\n")
    with pytest.raises(TraceError) as excinfo:
        count_arrivals(path, "time", "requests", rng=np.random.default_rng(0))
    assert f"{path}:1" in error_of(excinfo) and "'requests'" in error_of(excinfo)
    assert excinfo.value.line == 1 and excinfo.value.value == "requests"


@pytest.mark.parametrize(
    ("text", "line", "value"),
    [
        ("t\n1\n3\n2\n", 4, "2"),  # unsorted
        ("t\n2023-11-16 18:15:46.1\n2023-11-16 18:15:45.9\n", 3, "2023-11-16 18:15:45.9"),
        ("t\n1\n2\nabc\n", 4, "abc"),  # unparsable number
        ("t\n2023-11-16 18:15:46\n2023-11-16 25:00:00\n", 3, "2023-11-16 25:00:00"),
        ("t\nsoon\n", 2, "soon"),  # unparsable first row: raised at once
        ("t\n1\n2023-11-16 18:15:46\n", 3, "2023-11-16 18:15:46"),  # mixed kinds
    ],
)
def test_bad_timestamps(tmp_path: Path, text: str, line: int, value: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(TraceError) as excinfo:
        list(timestamp_arrivals(path, "t"))
    message = error_of(excinfo)
    assert f"{path}:{line}" in message and value in message
    assert excinfo.value.line == line and excinfo.value.value == value


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


def write_archive(tmp_path: Path, content: bytes, member: str = "workload.txt") -> Path:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo(member)
        info.size = len(content)
        archive.addfile(info, io.BytesIO(content))
    path = tmp_path / "workload.tbz2"
    path.write_bytes(bz2.compress(buffer.getvalue()))
    return path


@pytest.mark.parametrize(
    ("content", "line", "value"),
    [(b"1 2 x 3", 1, "x"), (b"1 2\n3 -4 5\n", 2, "-4"), (b"0 0\n\n1.5", 3, "1.5")],
)
def test_bad_archived_counts(tmp_path: Path, content: bytes, line: int, value: str) -> None:
    path = write_archive(tmp_path, content)
    with pytest.raises(TraceError) as excinfo:
        list(nasa_arrivals(path, rng=np.random.default_rng(0)))
    assert f"{path}:{line}" in error_of(excinfo) and value in error_of(excinfo)


def test_archived_counts_small(tmp_path: Path) -> None:
    path = write_archive(tmp_path, b"2 0\n1 ")
    times = list(nasa_arrivals(path, rng=np.random.default_rng(0), interval=MINUTE))
    assert len(times) == 3
    assert [t // MINUTE for t in times] == [0, 0, 2]


def test_bad_archives(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="holds no counts"):
        nasa_arrivals(write_archive(tmp_path, b" \n"), rng=np.random.default_rng(0))
    with pytest.raises(TraceError, match=r"no file 'workload\.txt'"):
        nasa_arrivals(write_archive(tmp_path, b"1 2", member="other.txt"), rng=np.random.default_rng(0))
    with pytest.raises(TraceError, match="not a tar archive"):
        nasa_arrivals(write(tmp_path, "1 2 3", name="plain.txt"), rng=np.random.default_rng(0))
    with pytest.raises(TraceError, match="cannot open"):
        nasa_arrivals(tmp_path / "absent.tbz2", rng=np.random.default_rng(0))
