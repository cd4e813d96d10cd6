"""Trace replay: real traces turned into lazy iterators of absolute arrival times in ns.

Two kinds of trace exist. Per-request traces list one timestamp per arrival (the Azure LLM
trace); per-interval traces give a count per time bucket (the NASA per-second counts). Both are
streamed: a CSV row or an archive block at a time, so a month of trace never sits in memory.
Times are relative to the first row and shifted to `start`; `stop` cuts the replay (and the
reading) short. A malformed file raises `TraceError` naming the file, the line and the value.

Scaling. `time_scale` stretches time (2.0 makes the replay last twice as long, at half the rate).
`rate_scale` multiplies the request rate without moving the trace's shape in time:

* per-request traces: each recorded arrival is replayed `floor(s)` times, plus once more with
  probability `frac(s)`, so the expected number is exactly `s` times the original. The first copy
  keeps the recorded time; extra copies land uniformly between it and the next recorded arrival
  (the last arrival's extras coincide with it). Scaling below 1 is therefore independent thinning,
  scaling above 1 keeps every original arrival and adds jittered duplicates that stay in order.
* per-interval traces: each count is multiplied by `s` and rounded down or up at random with the
  probability that keeps its mean exact. Each interval's arrivals are independent uniform times
  in the interval, which is a Poisson process conditional on the count.
"""

from __future__ import annotations

import csv
import math
import re
import tarfile
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from decimal import Decimal
from fractions import Fraction
from itertools import chain
from os import PathLike
from pathlib import Path

import numpy as np
import numpy.typing as npt

from skenario.core.random import BATCH
from skenario.core.time import SECOND, UNITS
from skenario.errors import SkenarioError

TracePath = str | PathLike[str]
Int64s = npt.NDArray[np.int64]
Float64s = npt.NDArray[np.float64]

AZURE_TIMESTAMP_COLUMN = "TIMESTAMP"
NASA_MEMBER = "workload.txt"


class TraceError(SkenarioError):
    """A trace file is missing, empty or malformed."""


_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_DATETIME = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:?\d{2})?")
_EPOCH_ORDINAL = datetime(1970, 1, 1).toordinal()
_TOKEN = re.compile(rb"\S+")


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
    if _NUMBER.fullmatch(text) is None:
        return None
    return round(Decimal(text) * unit_ns)


def _time_parser(first: str, unit_ns: int) -> Callable[[str], int | None] | None:
    """Pick numeric or datetime parsing from the first value; every later row must match it."""
    if parse_number_ns(first, unit_ns) is not None:
        return lambda text: parse_number_ns(text, unit_ns)
    if parse_datetime_ns(first) is not None:
        return parse_datetime_ns
    return None


def _bad(message: str, file: str, line: int, field: str | None = None, value: str | None = None) -> TraceError:
    return TraceError(message, file=file, line=line, field=field, value=value)


def _parse_count(text: str) -> float | None:
    return float(text) if _NUMBER.fullmatch(text) else None


def _rows(path: Path, columns: Sequence[str]) -> Iterator[tuple[int, list[str]]]:
    """Data rows of a CSV as (line number, values of `columns`), checked against the header."""
    file = str(path)
    try:
        handle = open(path, newline="", encoding="utf-8-sig")  # noqa: SIM115 (closed by `with` below)
    except OSError as exc:
        raise TraceError(f"cannot open trace file: {exc.strerror}", file=file) from None
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if header is None:
                raise TraceError("empty trace file: no header and no data rows", file=file, line=1)
            names = [name.strip() for name in header]
            indexes = []
            for column in columns:
                if column not in names:
                    raise _bad(f"no column '{column}' (the header has {', '.join(names)})", file, 1, column, column)
                indexes.append(names.index(column))
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) <= max(indexes):
                    raise _bad(f"row has {len(row)} fields, fewer than the header", file, reader.line_num)
                yield reader.line_num, [row[index].strip() for index in indexes]
        except (csv.Error, UnicodeDecodeError) as exc:
            raise TraceError(f"not a readable CSV file: {exc}", file=file, line=reader.line_num) from None


def _open_csv(
    path: Path, columns: Sequence[str], unit: str
) -> tuple[Iterator[tuple[int, list[str]]], Callable[[str], int | None]]:
    """Check the file, header, columns and first row now; return all rows and the time parser."""
    if unit not in UNITS:
        raise ValueError(f"unknown time unit '{unit}'; use one of {', '.join(UNITS)}")
    rows = _rows(path, columns)
    first = next(rows, None)
    if first is None:
        raise TraceError("the trace has a header but no data rows", file=str(path), line=1)
    line, (text, *_) = first
    parse = _time_parser(text, UNITS[unit])
    if parse is None:
        raise _bad(f"cannot parse time '{text}'", str(path), line, columns[0], text)
    return chain([first], rows), parse


def _check_scales(time_scale: float, rate_scale: float) -> None:
    if not (math.isfinite(time_scale) and time_scale > 0):
        raise ValueError(f"time_scale must be a finite number > 0, got {time_scale}")
    if not (math.isfinite(rate_scale) and rate_scale >= 0):
        raise ValueError(f"rate_scale must be a finite number >= 0, got {rate_scale}")


def _uniforms(rng: np.random.Generator) -> Callable[[], float]:
    """Uniform [0, 1) floats handed out one by one from numpy batches."""
    return chain.from_iterable(iter(lambda: rng.random(BATCH).tolist(), None)).__next__


def timestamp_arrivals(
    path: TracePath,
    column: str,
    *,
    unit: str = "s",
    start: int = 0,
    stop: int | None = None,
    time_scale: float = 1.0,
    rate_scale: float = 1.0,
    rng: np.random.Generator | None = None,
) -> Iterator[int]:
    """Replay a CSV of per-request timestamps (numbers in `unit`, or datetimes) from `start`.

    The header, the column and the first row are checked now; later rows as they are read.
    `rng` is needed only when `rate_scale` != 1.
    """
    _check_scales(time_scale, rate_scale)
    if rate_scale != 1 and rng is None:
        raise ValueError("rate_scale != 1 needs an rng")
    file = Path(path)
    rows, parse = _open_csv(file, (column,), unit)
    times = _timestamps(rows, parse, str(file), column)
    return _replay(_shift(times, start, time_scale), stop, rate_scale, rng)


def _timestamps(
    rows: Iterator[tuple[int, list[str]]], parse: Callable[[str], int | None], file: str, column: str
) -> Iterator[int]:
    previous: int | None = None
    for line, (text,) in rows:
        ns = parse(text)
        if ns is None:
            raise _bad(f"cannot parse timestamp '{text}'", file, line, column, text)
        if previous is not None and ns < previous:
            raise _bad(f"timestamps are not sorted: '{text}' is before the row above", file, line, column, text)
        previous = ns
        yield ns


def _shift(times: Iterator[int], start: int, time_scale: float) -> Iterator[int]:
    """Times relative to the first one, scaled, from `start` (exact when time_scale is 1)."""
    origin: int | None = None
    for ns in times:
        if origin is None:
            origin = ns
        offset = ns - origin
        yield start + (offset if time_scale == 1 else round(offset * time_scale))


def _replay(
    times: Iterator[int], stop: int | None, rate_scale: float, rng: np.random.Generator | None
) -> Iterator[int]:
    if rate_scale == 1 or rng is None:
        for at in times:
            if stop is not None and at >= stop:
                return
            yield at
        return
    whole = math.floor(rate_scale)
    extra = rate_scale - whole
    uniform = _uniforms(rng)
    current = next(times, None)
    while current is not None:
        if stop is not None and current >= stop:
            return
        following = next(times, None)
        copies = whole + (1 if extra and uniform() < extra else 0)
        if copies:
            yield current
            gap = 0 if following is None else following - current
            for at in sorted(current + int(uniform() * gap) for _ in range(copies - 1)):
                if stop is not None and at >= stop:
                    return
                yield at
        current = following


def azure_llm_arrivals(
    path: TracePath,
    *,
    start: int = 0,
    stop: int | None = None,
    time_scale: float = 1.0,
    rate_scale: float = 1.0,
    rng: np.random.Generator | None = None,
) -> Iterator[int]:
    """The Azure LLM inference trace 2023 (`AzureLLMInferenceTrace_*.csv`): one arrival per row."""
    return timestamp_arrivals(
        path, AZURE_TIMESTAMP_COLUMN, start=start, stop=stop, time_scale=time_scale, rate_scale=rate_scale, rng=rng
    )


def count_arrivals(
    path: TracePath,
    time_column: str,
    count_column: str,
    *,
    rng: np.random.Generator,
    interval: int | None = None,
    unit: str = "s",
    start: int = 0,
    stop: int | None = None,
    time_scale: float = 1.0,
    rate_scale: float = 1.0,
) -> Iterator[int]:
    """Replay a CSV of per-interval request counts: each row's count spread uniformly over its interval.

    A row's interval runs to the next row's time; the last row's lasts `interval` ns (trace time,
    before `time_scale`) or, if that is None, as long as the gap before it. Times must increase.
    """
    _check_scales(time_scale, rate_scale)
    file = Path(path)
    rows, parse = _open_csv(file, (time_column, count_column), unit)
    spans = _count_rows(rows, parse, str(file), time_column, count_column, interval)
    return _spread(_chunked(spans), start, stop, time_scale, rate_scale, rng)


def _count_rows(
    rows: Iterator[tuple[int, list[str]]],
    parse: Callable[[str], int | None],
    file: str,
    time_column: str,
    count_column: str,
    interval: int | None,
) -> Iterator[tuple[int, int, float]]:
    """(start, end, count) per row, times relative to the first row, with one row of lookahead."""
    origin: int | None = None
    pending: tuple[int, float] | None = None
    previous_gap: int | None = None
    last_line = 0
    for line, (time_text, count_text) in rows:
        ns = parse(time_text)
        if ns is None:
            raise _bad(f"cannot parse time '{time_text}'", file, line, time_column, time_text)
        count = _parse_count(count_text)
        if count is None or count < 0:
            problem = "cannot parse count" if count is None else "negative count"
            raise _bad(f"{problem} '{count_text}'", file, line, count_column, count_text)
        if origin is None:
            origin = ns
        at = ns - origin
        if pending is not None:
            if at <= pending[0]:
                raise _bad(
                    f"times must increase: '{time_text}' is not after the row above", file, line, time_column, time_text
                )
            yield pending[0], at, pending[1]
            previous_gap = at - pending[0]
        pending, last_line = (at, count), line
    if pending is not None:
        length = interval if interval is not None else previous_gap
        if length is None or length <= 0:
            raise TraceError("cannot tell how long the last interval lasts: give `interval`", file=file, line=last_line)
        yield pending[0], pending[0] + length, pending[1]


def _chunked(spans: Iterator[tuple[int, int, float]]) -> Iterator[tuple[Int64s, Int64s, Float64s]]:
    while True:
        block = [span for _, span in zip(range(BATCH), spans, strict=False)]
        if not block:
            return
        begins, ends, counts = zip(*block, strict=True)
        yield np.array(begins, dtype=np.int64), np.array(ends, dtype=np.int64), np.array(counts, dtype=np.float64)


def _spread(
    chunks: Iterator[tuple[Int64s, Int64s, Float64s]],
    start: int,
    stop: int | None,
    time_scale: float,
    rate_scale: float,
    rng: np.random.Generator,
) -> Iterator[int]:
    """Arrivals for chunks of (relative begin, relative end, count), vectorised per chunk."""
    for begins, ends, counts in chunks:
        if time_scale != 1:
            begins = np.rint(begins * time_scale).astype(np.int64)
            ends = np.rint(ends * time_scale).astype(np.int64)
        begins, ends = begins + start, ends + start
        scaled = counts * rate_scale
        whole = np.floor(scaled)
        numbers = whole.astype(np.int64) + (rng.random(scaled.size) < scaled - whole)
        which = np.repeat(np.arange(scaled.size), numbers)
        lengths = (ends - begins)[which]
        offsets = np.minimum(np.floor(rng.random(which.size) * lengths).astype(np.int64), np.maximum(lengths - 1, 0))
        times = np.sort(begins[which] + offsets)  # intervals are disjoint and in order
        if stop is not None and times.size and times[-1] >= stop:
            yield from times[: int(np.searchsorted(times, stop))].tolist()
            return
        yield from times.tolist()
        if stop is not None and ends[-1] >= stop:
            return


def nasa_arrivals(
    path: TracePath,
    *,
    rng: np.random.Generator,
    interval: int = SECOND,
    member: str = NASA_MEMBER,
    start: int = 0,
    stop: int | None = None,
    time_scale: float = 1.0,
    rate_scale: float = 1.0,
) -> Iterator[int]:
    """The NASA-HTTP 1995 per-second counts, read lazily from the bzip2 tar (`workload.tbz2`).

    The member holds whitespace-separated non-negative integers, one per `interval`, from 0 on.
    The archive is opened and its first block checked now; the rest streams as it is consumed.
    """
    _check_scales(time_scale, rate_scale)
    blocks = _archive_counts(Path(path), member)
    first = next(blocks, None)
    if first is None:
        raise TraceError(f"'{member}' holds no counts", file=str(path), line=1, value=member)
    return _spread(_count_spans(chain([first], blocks), interval), start, stop, time_scale, rate_scale, rng)


def _count_spans(blocks: Iterator[Int64s], interval: int) -> Iterator[tuple[Int64s, Int64s, Float64s]]:
    index = 0
    for counts in blocks:
        begins = (index + np.arange(counts.size, dtype=np.int64)) * interval
        yield begins, begins + interval, counts.astype(np.float64)
        index += counts.size


def _archive_counts(path: Path, member: str, block_size: int = 1 << 20) -> Iterator[Int64s]:
    """Blocks of counts streamed out of a tar member, each block cut at whitespace."""
    file = str(path)
    try:
        archive = tarfile.open(path, "r:*")  # noqa: SIM115 (closed by `with` below)
    except OSError as exc:
        raise TraceError(f"cannot open trace file: {exc.strerror or exc}", file=file) from None
    except tarfile.TarError as exc:
        raise TraceError(f"not a tar archive: {exc}", file=file) from None
    with archive:
        try:
            found = next((item for item in archive if item.name.rsplit("/", 1)[-1] == member), None)
            stream = archive.extractfile(found) if found is not None else None
            if stream is None:
                raise TraceError(f"the archive has no file '{member}'", file=file, value=member)
            line, carry = 1, b""
            while True:
                block = stream.read(block_size)
                data = carry + block
                cut = len(data) if not block else max(data.rfind(byte) for byte in (b" ", b"\n", b"\t", b"\r"))
                data, carry = data[: cut + 1], data[cut + 1 :]
                tokens = data.split()
                if tokens:
                    try:
                        counts = np.fromiter(map(int, tokens), dtype=np.int64, count=len(tokens))
                    except ValueError:
                        counts = np.full(1, -1, dtype=np.int64)
                    if counts.min() < 0:
                        _bad_token(data, line, file)
                    yield counts
                line += data.count(b"\n")
                if not block:
                    return
        except (OSError, EOFError, tarfile.TarError) as exc:
            raise TraceError(f"corrupt archive: {exc}", file=file) from None


def _bad_token(data: bytes, line: int, file: str) -> None:
    """Find the first token that is not a count, and report it with its line."""
    for match in _TOKEN.finditer(data):
        value = match.group().decode(errors="replace")
        try:
            problem = "negative count" if int(match.group()) < 0 else ""
        except ValueError:
            problem = "cannot parse count"
        if problem:
            where = line + data.count(b"\n", 0, match.start())
            raise TraceError(f"{problem} '{value}'", file=file, line=where, value=value)
