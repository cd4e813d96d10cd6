"""Observed series: what a real cluster's metrics said, as Prometheus exports them.

Two forms are read. Prometheus's `query_range` response (`{"status": "success", "data": {"resultType":
"matrix", "result": [{"metric": {...}, "values": [[unix seconds, "value"], ...]}, ...]}}`), or a JSON
object naming several such responses (`{"load": <response>, "replicas": <response>}`); and a CSV of
`timestamp,__name__,value` rows (Unix seconds or ISO dates), one series per name, as the shared
espa-hpa runs are written. A series keeps its samples as they came, NaN included: how a gap is
filled (`fill`) is the user's choice, never made silently.

`observed_arrivals` turns a filled series of a rate (per second) or of a counter's running total into
arrivals: each sample's interval gets the records it stood for divided by `scale` (one simulated
request stands for `scale` real records), drawn as a Poisson count (an inhomogeneous Poisson process
whose rate steps with the series) or rounded at random to keep its mean exact (`exact`), and placed
uniformly within the interval.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from skenario.core.time import SECOND
from skenario.scenario.io import read_text
from skenario.workloads.counts import spread_counts
from skenario.workloads.rates import PiecewiseRate, spans_rate
from skenario.workloads.tracefiles import Float64s, Int64s, TraceError, bad_value, open_csv

SeriesKind = Literal["rate", "counter"]
CountKind = Literal["poisson", "exact"]
GapPolicy = Literal["refuse", "hold", "interpolate", "zero"]
GAP_POLICIES: tuple[GapPolicy, ...] = ("refuse", "hold", "interpolate", "zero")
CSV_COLUMNS = ("timestamp", "__name__", "value")


@dataclass(frozen=True)
class Series:
    """One observed series: its name, sample times (Unix ns, increasing) and values (NaN where none)."""

    name: str
    times_ns: Int64s
    values: Float64s
    source: str  # the file it came from, for messages

    @property
    def interval_ns(self) -> int:
        """The usual step between samples (the median): Prometheus's `step`, or the scrape interval."""
        if len(self.times_ns) < 2:
            raise TraceError(f"series {self.name!r} has one sample: no interval", file=self.source)
        return int(np.median(np.diff(self.times_ns)))


def read_observed(path: Path) -> dict[str, Series]:
    """Every series in the file, by name: Prometheus JSON (`.json`) or a `timestamp,__name__,value` CSV."""
    if path.suffix.lower() == ".json":
        return read_prometheus(path)
    return read_csv(path)


def read_csv(path: Path) -> dict[str, Series]:
    """A CSV of `timestamp,__name__,value` rows; each name is a series, its rows in time order."""
    rows, parse_time = open_csv(path, CSV_COLUMNS, "s")
    found: dict[str, tuple[list[int], list[float]]] = {}
    for line, (time_text, name, value_text) in rows:
        try:
            value = float(value_text)
        except ValueError:
            raise bad_value("not a number", str(path), line, "value", value_text) from None
        if not name:
            raise bad_value("a series needs a name", str(path), line, "__name__", name)
        times, values = found.setdefault(name, ([], []))
        time_ns = parse_time(time_text)
        if time_ns is None:
            raise bad_value("cannot parse time", str(path), line, "timestamp", time_text)
        if times and time_ns <= times[-1]:
            raise bad_value("times must increase within a series", str(path), line, "timestamp", time_text)
        times.append(time_ns)
        values.append(value)
    return {name: _series(name, times, values, str(path)) for name, (times, values) in found.items()}


def read_prometheus(path: Path) -> dict[str, Series]:
    """A `query_range` response, or an object naming several; a series is named by the name it was given,
    else its `__name__`, with its other labels (`up{job="api"}`) where names alone would clash."""
    text = read_text(path)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"not JSON: {exc.msg}", file=str(path), line=exc.lineno) from None
    if isinstance(document, Mapping) and "status" in document:  # one response, a failed one too
        return _response(document, None, str(path), "")
    if not isinstance(document, Mapping) or not document:
        raise TraceError("a Prometheus file is a query_range response or an object naming several", file=str(path))
    found: dict[str, Series] = {}
    for given, response in document.items():
        for name, series in _response(response, str(given), str(path), f"{given}.").items():
            if name in found:
                raise TraceError(f"two series are named {name!r}", file=str(path), field=str(given))
            found[name] = series
    return found


def _response(response: Any, given: str | None, source: str, where: str) -> dict[str, Series]:
    """The series of one `query_range` response (`given`: the name the file gave it)."""
    if not isinstance(response, Mapping) or response.get("status") != "success":
        error = response.get("error") if isinstance(response, Mapping) else None
        why = f": {error}" if error else ""
        raise TraceError(f"not a successful query_range response{why}", file=source, field=where + "status")
    data = response.get("data")
    if not isinstance(data, Mapping) or data.get("resultType") != "matrix":
        kind = data.get("resultType") if isinstance(data, Mapping) else None
        raise TraceError(
            f"a range query's result is a matrix, not {kind!r} (use query_range, not query)",
            file=source,
            field=where + "data.resultType",
        )
    results = data.get("result")
    if not isinstance(results, list) or not results:
        raise TraceError("the query found no series", file=source, field=where + "data.result")
    named = [
        (_name(result, given, len(results), source, f"{where}data.result.{i}"), result)
        for i, result in enumerate(results)
    ]
    if len({name for name, _ in named}) < len(named):
        named = [(_labelled(name, result), result) for name, result in named]
    return {name: _samples(name, result, source, f"{where}data.result.{i}") for i, (name, result) in enumerate(named)}


def _name(result: Any, given: str | None, count: int, source: str, field: str) -> str:
    if not isinstance(result, Mapping) or not isinstance(result.get("metric", {}), Mapping):
        raise TraceError("a series is an object with 'metric' and 'values'", file=source, field=field)
    metric = result.get("metric", {})
    if given is not None:
        return given if count == 1 else _labelled(given, result)
    name = metric.get("__name__")
    if not isinstance(name, str) or not name:
        raise TraceError(
            "the series has no __name__ (the query applied a function): name it in an object of responses",
            file=source,
            field=field + ".metric",
        )
    return name


def _labelled(name: str, result: Mapping[str, Any]) -> str:
    labels = {k: v for k, v in result.get("metric", {}).items() if k != "__name__"}
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else name


def _samples(name: str, result: Mapping[str, Any], source: str, field: str) -> Series:
    values = result.get("values")
    if not isinstance(values, list) or not values:
        raise TraceError("the series has no values", file=source, field=field + ".values")
    times: list[int] = []
    numbers: list[float] = []
    for i, pair in enumerate(values):
        try:
            time_s, text = pair
            time_ns = round(float(time_s) * SECOND)
            value = float(text)
        except (TypeError, ValueError):
            raise TraceError(
                f'a sample is [unix seconds, "value"], not {pair!r:.60}', file=source, field=f"{field}.values.{i}"
            ) from None
        if not math.isfinite(float(time_s)) or (times and time_ns <= times[-1]):
            raise TraceError("times must increase within a series", file=source, field=f"{field}.values.{i}")
        times.append(time_ns)
        numbers.append(value)
    return _series(name, times, numbers, source)


def _series(name: str, times: list[int], values: list[float], source: str) -> Series:
    return Series(name, np.array(times, dtype=np.int64), np.array(values, dtype=np.float64), source)


def named_series(found: Mapping[str, Series], name: str | None, source: str, field: str) -> Series:
    """The series `name` of those a file holds (`found`); with no name, its only one. `field` is where the name
    is given, for the error when there is no such series or the choice is not clear."""
    if name is None:
        if len(found) > 1:
            names = ", ".join(sorted(found)[:5])
            raise TraceError(f"the file holds {len(found)} series ({names}…): name one", file=source, field=field)
        return next(iter(found.values()))
    if name not in found:
        holds = ", ".join(sorted(found)[:5])
        raise TraceError(f"no such series; the file holds {holds}", file=source, field=field, value=name)
    return found[name]


def fill(series: Series, policy: GapPolicy, interval_ns: int | None = None) -> Series:
    """The series on a regular grid of `interval_ns` (its own usual step by default) from its first sample
    to its last, each missing or NaN (or infinite) sample filled as `policy` says: `hold` the last value,
    `interpolate` linearly between its neighbours, `zero`; `refuse` names the first gap as an error.
    A gap at the start has no last value to hold: `hold` takes the first value seen after it."""
    if policy not in GAP_POLICIES:
        raise ValueError(f"unknown gap policy {policy!r}; one of {', '.join(GAP_POLICIES)}")
    step = interval_ns if interval_ns is not None else series.interval_ns
    start = int(series.times_ns[0])
    slots = np.rint((series.times_ns - start) / step).astype(np.int64)
    grid = np.full(int(slots[-1]) + 1, np.nan)
    grid[slots] = series.values  # a sample lands on its nearest slot (jitter of a scrape)
    missing = ~np.isfinite(grid)
    times = start + step * np.arange(len(grid), dtype=np.int64)
    if missing.any():
        first = int(np.flatnonzero(missing)[0])
        if policy == "refuse":
            raise TraceError(
                f"series {series.name!r} has {int(missing.sum())} missing or NaN samples, the first at "
                f"{times[first] / SECOND:.0f} (Unix s): say how to fill them (hold, interpolate or zero)",
                file=series.source,
            )
        known = np.flatnonzero(~missing)
        if not len(known):
            raise TraceError(f"series {series.name!r} has no value at all", file=series.source)
        if policy == "zero":
            grid[missing] = 0.0
        elif policy == "interpolate":
            grid[missing] = np.interp(np.flatnonzero(missing), known, grid[known])
        else:  # hold
            last = np.maximum.accumulate(np.where(missing, -1, np.arange(len(grid))))
            last[last < 0] = known[0]
            grid = grid[last]
    return Series(series.name, times, grid, series.source)


def observed_arrivals(
    series: Series,
    *,
    kind: SeriesKind = "rate",
    scale: float = 1.0,
    counts: CountKind = "poisson",
    rng: np.random.Generator,
    start: int = 0,
    stop: int | None = None,
    time_scale: float = 1.0,
    since: int = 0,
) -> Iterator[int]:
    """Arrival times (ns from the series' first sample, stretched by `time_scale`, shifted to `start`, cut at
    `stop`) following the series; a `scale` of infinity gives none.

    A `rate` sample holds for its interval (to the next sample; the last for the series' usual step); a
    `counter`'s increase from one sample to the next falls in between (a drop is a reset, counted from
    zero, as Prometheus's `increase` counts it). The series must have no gap left (`fill` it first)."""
    begins, ends, expected = _records(series, kind, scale)
    numbers = rng.poisson(expected).astype(np.float64) if counts == "poisson" else expected
    return spread_counts(iter([(begins, ends, numbers)]), start, stop, time_scale, 1.0, rng, since)


def observed_rate(
    series: Series, *, stop: int, kind: SeriesKind = "rate", scale: float = 1.0, start: int = 0, time_scale: float = 1.0
) -> PiecewiseRate:
    """The rate `observed_arrivals` with the same arguments draws from: each interval's records over `scale`."""
    return spans_rate([_records(series, kind, scale)], start, stop, time_scale, 1.0)


def _records(series: Series, kind: SeriesKind, scale: float) -> tuple[Int64s, Int64s, Float64s]:
    """(relative begins, ends, simulated requests) per interval of a filled series."""
    if not scale > 0:
        raise ValueError(f"scale must be a positive number, got {scale}")
    if not np.isfinite(series.values).all():
        raise TraceError(
            f"series {series.name!r} has gaps: fill them first (hold, interpolate or zero)", file=series.source
        )
    relative = series.times_ns - series.times_ns[0]
    if kind == "rate":
        ends = np.append(relative[1:], relative[-1] + series.interval_ns)
        records = series.values * ((ends - relative) / SECOND)
        begins = relative
    else:
        begins, ends = relative[:-1], relative[1:]
        increase = np.diff(series.values)
        records = np.where(increase < 0, series.values[1:], increase)
    if (records < 0).any():
        raise TraceError(f"series {series.name!r} has a negative rate", file=series.source)
    return begins, ends, records / scale
