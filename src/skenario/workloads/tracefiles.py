"""Reading trace files: exact time parsing, checked CSV rows, and the one error a bad trace gives.

Shared by the per-request replay (`timestamps`) and the per-interval replay (`counts`). Times are
parsed with integer arithmetic so a month of trace keeps nanosecond precision; every problem is a
`TraceError` naming the file, the line, the column and the value, so the user can fix the file.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from itertools import chain
from os import PathLike
from pathlib import Path

import numpy as np
import numpy.typing as npt

from skenario.core.time import SECOND, UNITS
from skenario.errors import SkenarioError

TracePath = str | PathLike[str]
Int64s = npt.NDArray[np.int64]
Float64s = npt.NDArray[np.float64]
Rows = Iterator[tuple[int, list[str]]]
"""CSV data rows as (line number, the values of the requested columns)."""
TimeParser = Callable[[str], int | None]


class TraceError(SkenarioError):
    """A trace file is missing, empty or malformed."""


_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?")
_EPOCH_ORDINAL = datetime(1970, 1, 1).toordinal()


def parse_datetime_ns(text: str) -> int | None:
    """`2023-11-16 18:15:46.6805900` as exact ns since 1970 (None if not a datetime).

    Integer arithmetic throughout: `datetime` keeps only microseconds, and the Azure trace has
    seven fractional digits. A zone suffix (`Z`, `+02:00`) is honoured; no suffix means UTC.
    """
    match = _DATETIME.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(group) for group in match.groups()[:6])
    try:
        moment = datetime(year, month, day, hour, minute, second)
    except ValueError:
        return None
    seconds = (moment.toordinal() - _EPOCH_ORDINAL) * 86_400 + hour * 3600 + minute * 60 + second
    zone = match.group(8)
    if zone and zone != "Z":
        digits = zone[1:].replace(":", "")
        offset = int(digits[:2]) * 3600 + int(digits[2:]) * 60
        seconds -= offset if zone[0] == "+" else -offset
    fraction = match.group(7) or ""
    if len(fraction) <= 9:
        fraction_ns = int(fraction.ljust(9, "0"))
    else:  # finer than a nanosecond: round, exactly
        fraction_ns = round(Fraction(int(fraction), 10 ** len(fraction)) * SECOND)
    return seconds * SECOND + fraction_ns


def parse_number_ns(text: str, unit_ns: int = SECOND) -> int | None:
    """A decimal number of `unit_ns` (seconds by default) as exact ns (None if not a number)."""
    whole, dot, fraction = text.partition(".")
    if (
        unit_ns == SECOND
        and whole.isdigit()
        and whole.isascii()
        and (not dot or (fraction.isdigit() and fraction.isascii() and len(fraction) <= 9))
    ):  # plain seconds to the nanosecond, a trace's usual cell: exact without Decimal
        return int(whole) * SECOND + (int(fraction.ljust(9, "0")) if dot else 0)
    if _NUMBER.fullmatch(text) is None:
        return None
    return round(Decimal(text) * unit_ns)


def parse_count(text: str) -> float | None:
    """A request count as written in a CSV cell (None if not a number; the sign is the caller's check)."""
    return float(text) if _NUMBER.fullmatch(text) else None


def _time_parser(first: str, unit_ns: int) -> TimeParser | None:
    """Pick numeric or datetime parsing from the first value; every later row must match it."""
    if parse_number_ns(first, unit_ns) is not None:
        return lambda text: parse_number_ns(text, unit_ns)
    if parse_datetime_ns(first) is not None:
        return parse_datetime_ns
    return None


def bad_value(message: str, file: str, line: int, field: str | None = None, value: str | None = None) -> TraceError:
    """A TraceError for one value on one line of a trace file."""
    return TraceError(message, file=file, line=line, field=field, value=value)


def csv_records(path: TracePath) -> Iterator[tuple[int, list[str]]]:
    """Each record of a CSV file with its (last) line number, the header first.

    A file that cannot be opened or is not readable CSV is a TraceError naming it (and the line).
    """
    file = str(path)
    try:
        handle = open(path, newline="", encoding="utf-8-sig")  # noqa: SIM115 (closed by `with` below)
    except OSError as exc:
        raise TraceError(f"cannot open trace file: {exc.strerror or exc}", file=file) from None
    with handle:
        reader = csv.reader(handle)
        try:
            for row in reader:
                yield reader.line_num, row
        except (csv.Error, UnicodeDecodeError) as exc:
            raise TraceError(f"not a readable CSV file: {exc}", file=file, line=reader.line_num) from None


def _rows(path: Path, columns: Sequence[str]) -> Rows:
    """Data rows of a CSV as (line number, values of `columns`), checked against the header."""
    file = str(path)
    records = csv_records(path)
    header = next(records, None)
    if header is None:
        raise TraceError("empty trace file: no header and no data rows", file=file, line=1)
    names = [name.strip() for name in header[1]]
    indexes = []
    for column in columns:
        if column not in names:
            raise bad_value(f"no column '{column}' (the header has {', '.join(names)})", file, 1, column, column)
        indexes.append(names.index(column))
    for line, row in records:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) <= max(indexes):
            raise bad_value(f"row has {len(row)} fields, fewer than the header", file, line)
        yield line, [row[index].strip() for index in indexes]


def open_csv(path: Path, columns: Sequence[str], unit: str) -> tuple[Rows, TimeParser]:
    """Check the file, header, columns and first row now; return all rows and the time parser.

    The first of `columns` holds the times; `unit` is the unit of numeric times.
    """
    if unit not in UNITS:
        raise ValueError(f"unknown time unit '{unit}'; use one of {', '.join(UNITS)}")
    rows = _rows(path, columns)
    first = next(rows, None)
    if first is None:
        raise TraceError("the trace has a header but no data rows", file=str(path), line=1)
    line, (text, *_) = first
    parse = _time_parser(text, UNITS[unit])
    if parse is None:
        raise bad_value(f"cannot parse time '{text}'", str(path), line, columns[0], text)
    return chain([first], rows), parse


def check_scales(time_scale: float, rate_scale: float) -> None:
    """Reject scales that would make a replay meaningless (zero or infinite time, negative rate)."""
    if not (math.isfinite(time_scale) and time_scale > 0):
        raise ValueError(f"time_scale must be a finite number > 0, got {time_scale}")
    if not (math.isfinite(rate_scale) and rate_scale >= 0):
        raise ValueError(f"rate_scale must be a finite number >= 0, got {rate_scale}")
