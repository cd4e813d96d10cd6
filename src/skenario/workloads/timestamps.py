"""Per-request trace replay: one arrival per recorded timestamp (the Azure LLM inference trace).

Rows stream one at a time, so a long trace never sits in memory. Times are relative to the first
row and shifted to `start`; `stop` cuts the replay, and the reading, short.

`rate_scale` s replays each recorded arrival `floor(s)` times, plus once more with probability
`frac(s)`, so the expected number is exactly `s` times the original. The first copy keeps the
recorded time; extra copies land uniformly between it and the next recorded arrival (the last
arrival's extras coincide with it). Scaling below 1 is therefore independent thinning; scaling
above 1 keeps every original arrival and adds jittered duplicates that stay in order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from itertools import chain
from pathlib import Path

import numpy as np

from skenario.core.random import BATCH
from skenario.workloads.rates import PiecewiseRate, timestamps_rate
from skenario.workloads.tracefiles import Rows, TimeParser, TracePath, bad_value, check_scales, open_csv

AZURE_TIMESTAMP_COLUMN = "TIMESTAMP"


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

    The header, the column and the first row are checked now; later rows as they are read
    (`check_timestamp_trace` checks them all up front). `rng` is needed only when `rate_scale` != 1.
    """
    check_scales(time_scale, rate_scale)
    if rate_scale != 1 and rng is None:
        raise ValueError("rate_scale != 1 needs an rng")
    times = _trace_times(Path(path), column, unit, start, time_scale)
    return _replay(times, stop, rate_scale, rng)


def timestamp_rate(
    path: TracePath,
    column: str,
    *,
    stop: int,
    unit: str = "s",
    start: int = 0,
    time_scale: float = 1.0,
    rate_scale: float = 1.0,
) -> PiecewiseRate:
    """The rate of the records `timestamp_arrivals` with the same arguments replays, `rate_scale` requests each,
    counted in bins of `rates.TIMESTAMP_BIN`."""
    check_scales(time_scale, rate_scale)
    return timestamps_rate(_trace_times(Path(path), column, unit, start, time_scale), start, stop, rate_scale)


def check_timestamp_trace(
    path: TracePath,
    column: str,
    *,
    unit: str = "s",
    start: int = 0,
    stop: int | None = None,
    time_scale: float = 1.0,
) -> None:
    """Read every row that `timestamp_arrivals` with the same arguments would read; raise TraceError on a bad one.

    That is the rows up to the first one at or after `stop` (all of them when `stop` is None), so
    a replay checked first cannot fail halfway through a run.
    """
    check_scales(time_scale, 1.0)
    for at in _trace_times(Path(path), column, unit, start, time_scale):
        if stop is not None and at >= stop:
            return


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


def _trace_times(path: Path, column: str, unit: str, start: int, time_scale: float) -> Iterator[int]:
    """Checked, shifted and scaled times of a timestamp CSV; the first row is read (and checked) now."""
    rows, parse = open_csv(path, (column,), unit)
    return _shift(_timestamps(rows, parse, str(path), column), start, time_scale)


def _timestamps(rows: Rows, parse: TimeParser, file: str, column: str) -> Iterator[int]:
    previous: int | None = None
    for line, (text,) in rows:
        ns = parse(text)
        if ns is None:
            raise bad_value(f"cannot parse timestamp '{text}'", file, line, column, text)
        if previous is not None and ns < previous:
            raise bad_value(f"timestamps are not sorted: '{text}' is before the row above", file, line, column, text)
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


def _uniforms(rng: np.random.Generator) -> Callable[[], float]:
    """Uniform [0, 1) floats handed out one by one from numpy batches."""
    return chain.from_iterable(iter(lambda: rng.random(BATCH).tolist(), None)).__next__


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
