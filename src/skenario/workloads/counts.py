"""Per-interval trace replay: a CSV of request counts per time bucket, and the spreading they share.

Counts stream a chunk at a time (CSV rows here, blocks of a compressed archive in `archives`), so
a month of trace never sits in memory. Each interval's arrivals are independent uniform times
within it, which is a Poisson process conditional on the count. Times are relative to the first
interval and shifted to `start`; `stop` cuts the replay, and the reading, short.

`rate_scale` multiplies each count and rounds it down or up at random with the probability that
keeps its mean exact, so the trace's shape in time stays where it was. `time_scale` stretches the
intervals (2.0 makes the replay last twice as long, at half the rate).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import repeat
from pathlib import Path

import numpy as np

from skenario.core.random import BATCH
from skenario.workloads.patterns import uniform_arrivals
from skenario.workloads.rates import PiecewiseRate, spans_rate
from skenario.workloads.tracefiles import (
    Float64s,
    Int64s,
    Rows,
    TimeParser,
    TraceError,
    TracePath,
    bad_value,
    check_scales,
    open_csv,
    parse_count,
)

_PIECE = 1 << 16  # arrivals drawn at once when spreading counts

Chunk = tuple[Int64s, Int64s, Float64s]
"""Intervals as arrays of (relative begin, relative end, count), in trace-time ns."""


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
    since: int = 0,
) -> Iterator[int]:
    """Replay a CSV of per-interval request counts: each row's count spread uniformly over its interval.

    A row's interval runs to the next row's time; the last row's lasts `interval` ns (trace time,
    before `time_scale`) or, if that is None, as long as the gap before it. Times must increase.
    """
    check_scales(time_scale, rate_scale)
    chunks = _csv_chunks(Path(path), time_column, count_column, interval, unit)
    return spread_counts(chunks, start, stop, time_scale, rate_scale, rng, since)


def count_rate(
    path: TracePath,
    time_column: str,
    count_column: str,
    *,
    stop: int,
    interval: int | None = None,
    unit: str = "s",
    start: int = 0,
    time_scale: float = 1.0,
    rate_scale: float = 1.0,
) -> PiecewiseRate:
    """The rate `count_arrivals` with the same arguments draws from: each row's count over its interval."""
    check_scales(time_scale, rate_scale)
    chunks = _csv_chunks(Path(path), time_column, count_column, interval, unit)
    return spans_rate(chunks, start, stop, time_scale, rate_scale)


def check_count_trace(
    path: TracePath,
    time_column: str,
    count_column: str,
    *,
    interval: int | None = None,
    unit: str = "s",
    start: int = 0,
    stop: int | None = None,
    time_scale: float = 1.0,
) -> None:
    """Read every row that `count_arrivals` with the same arguments would read; raise TraceError on a bad one."""
    check_scales(time_scale, 1.0)
    read_counts(_csv_chunks(Path(path), time_column, count_column, interval, unit), start, stop, time_scale)


# --- CSV counts ----------------------------------------------------------------------------------


def _csv_chunks(path: Path, time_column: str, count_column: str, interval: int | None, unit: str) -> Iterator[Chunk]:
    """Chunks of a count CSV; the header and first row are checked now."""
    rows, parse = open_csv(path, (time_column, count_column), unit)
    return _chunked(_count_rows(rows, parse, str(path), time_column, count_column, interval))


def _count_rows(
    rows: Rows, parse: TimeParser, file: str, time_column: str, count_column: str, interval: int | None
) -> Iterator[tuple[int, int, float]]:
    """(start, end, count) per row, times relative to the first row, with one row of lookahead."""
    origin: int | None = None
    pending: tuple[int, float] | None = None
    previous_gap: int | None = None
    last_line = 0
    for line, (time_text, count_text) in rows:
        ns = parse(time_text)
        if ns is None:
            raise bad_value(f"cannot parse time '{time_text}'", file, line, time_column, time_text)
        count = parse_count(count_text)
        if count is None or count < 0:
            problem = "cannot parse count" if count is None else "negative count"
            raise bad_value(f"{problem} '{count_text}'", file, line, count_column, count_text)
        if origin is None:
            origin = ns
        at = ns - origin
        if pending is not None:
            if at <= pending[0]:
                message = f"times must increase: '{time_text}' is not after the row above"
                raise bad_value(message, file, line, time_column, time_text)
            yield pending[0], at, pending[1]
            previous_gap = at - pending[0]
        pending, last_line = (at, count), line
    if pending is not None:
        length = interval if interval is not None else previous_gap
        if length is None or length <= 0:
            raise TraceError("cannot tell how long the last interval lasts: give `interval`", file=file, line=last_line)
        yield pending[0], pending[0] + length, pending[1]


def _chunked(spans: Iterator[tuple[int, int, float]]) -> Iterator[Chunk]:
    while True:
        block = [span for _, span in zip(range(BATCH), spans, strict=False)]
        if not block:
            return
        begins, ends, counts = zip(*block, strict=True)
        yield np.array(begins, dtype=np.int64), np.array(ends, dtype=np.int64), np.array(counts, dtype=np.float64)


# --- spreading counts over their intervals -------------------------------------------------------


def _placed(begins: Int64s, ends: Int64s, start: int, time_scale: float) -> tuple[Int64s, Int64s]:
    """Trace-time intervals as absolute simulated times: scaled, then shifted to `start`."""
    if time_scale != 1:
        begins = np.rint(begins * time_scale).astype(np.int64)
        ends = np.rint(ends * time_scale).astype(np.int64)
    return begins + start, ends + start


def spread_counts(
    chunks: Iterator[Chunk],
    start: int,
    stop: int | None,
    time_scale: float,
    rate_scale: float,
    rng: np.random.Generator,
    since: int = 0,
) -> Iterator[int]:
    """Arrivals for chunks of (relative begin, relative end, count), vectorised per chunk.

    It reads chunks until the one whose last interval ends at or after `stop`; `read_counts` reads the
    same ones, which is what lets a check up front cover everything a replay reads. Intervals that end
    by `since` draw nothing (a run that starts into the trace: `spec.offset`); the one it falls in
    draws its whole count, the caller dropping the arrivals before it.
    """
    for relative_begins, relative_ends, counts in chunks:
        begins, ends = _placed(relative_begins, relative_ends, start, time_scale)
        past_stop = stop is not None and ends[-1] >= stop
        if since and ends[0] <= since:
            after = int(np.searchsorted(ends, since, side="right"))
            begins, ends, counts = begins[after:], ends[after:], counts[after:]
            if not counts.size:
                continue
        if stop is not None:  # intervals from stop on would draw arrivals only to drop them
            inside = int(np.searchsorted(begins, stop))
            begins, ends, counts = begins[:inside], ends[:inside], counts[:inside]
        scaled = counts * rate_scale
        whole = np.floor(scaled)
        numbers = whole.astype(np.int64) + (rng.random(scaled.size) < scaled - whole)
        yield from _within_intervals(begins, ends, numbers, stop, rng)
        if past_stop:
            return


def _within_intervals(
    begins: Int64s, ends: Int64s, numbers: Int64s, stop: int | None, rng: np.random.Generator
) -> Iterator[int]:
    """`numbers[i]` uniform times in [begins[i], ends[i]) for each i, in order, cut at `stop`.

    Drawn a piece of about `_PIECE` arrivals at a time, so memory stays bounded whatever the counts
    and the rate scale; an interval with more than that is drawn on its own, lazily and in order.
    Intervals are disjoint and in order, so once a time reaches `stop` all later ones do too.
    """
    totals = np.cumsum(numbers)
    first = 0
    while first < numbers.size:
        if numbers[first] > _PIECE:
            end = first + 1
            begin, length, count = int(begins[first]), int(ends[first] - begins[first]), int(numbers[first])
            for at in uniform_arrivals(count, begin, begin + length, rng) if length > 0 else repeat(begin, count):
                if stop is not None and at >= stop:
                    return
                yield at
        else:
            end = int(np.searchsorted(totals, totals[first] - numbers[first] + _PIECE, side="right"))
            times = _uniform_times(begins[first:end], ends[first:end], numbers[first:end], rng)
            inside = times.size if stop is None else int(np.searchsorted(times, stop))
            yield from times[:inside].tolist()
            if inside < times.size:
                return
        first = end


def _uniform_times(begins: Int64s, ends: Int64s, numbers: Int64s, rng: np.random.Generator) -> Int64s:
    """Sorted: `numbers[i]` uniform times in [begins[i], ends[i]) (at begins[i] if the interval is empty)."""
    which = np.repeat(np.arange(numbers.size), numbers)
    lengths = (ends - begins)[which]
    offsets = np.minimum(np.floor(rng.random(which.size) * lengths).astype(np.int64), np.maximum(lengths - 1, 0))
    return np.sort(begins[which] + offsets)


def read_counts(chunks: Iterator[Chunk], start: int, stop: int | None, time_scale: float) -> None:
    """Read (and so check) the chunks `spread_counts` would read with the same window, drawing nothing."""
    for relative_begins, relative_ends, _ in chunks:
        _, ends = _placed(relative_begins[-1:], relative_ends[-1:], start, time_scale)
        if stop is not None and ends[-1] >= stop:
            return
