"""Reading trace files: exact time parsing, the scale checks, and the TraceError a missing, empty or
ill-formed file gives, naming the file and the line."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.workloads.counts import check_count_trace, count_arrivals
from skenario.workloads.timestamps import check_timestamp_trace, timestamp_arrivals
from skenario.workloads.tracefiles import TraceError, parse_datetime_ns, parse_number_ns
from tests.workloads import error_of, write


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


def test_checks_reject_bad_scales(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("t\n0\n1\n")
    with pytest.raises(ValueError):
        check_timestamp_trace(path, "t", time_scale=0.0)
    with pytest.raises(ValueError):
        check_count_trace(path, "t", "t", time_scale=float("inf"))


@given(st.integers(0, 10**12), st.text("0123456789", max_size=12), st.booleans())
def test_seconds_read_to_the_nanosecond_as_a_decimal_reads_them(whole: int, fraction: str, dot: bool) -> None:
    """The shortcut for plain seconds gives what Decimal gives: exact ns, rounded past the ninth digit."""
    text = f"{whole}.{fraction}" if dot else str(whole)
    assert parse_number_ns(text) == round(Decimal(text) * SECOND)
