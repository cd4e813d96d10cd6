"""The arrivals a `spec.traffic` section describes: a lazy iterator of times, each type on its pattern or trace.

Each traffic type of the format maps to one function of `skenario.workloads` here, in one
registry per kind (patterns, trace files). Trace files are opened and checked when the arrivals
are built, before the run starts, so a bad row is one clear `TraceError`; the arrivals themselves
are made only as the simulation pulls them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from functools import partial
from itertools import dropwhile, repeat, takewhile
from operator import add, gt
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from skenario.core.random import RandomStreams
from skenario.core.time import DAY, SECOND
from skenario.errors import ScenarioError
from skenario.scenario.format.traffic import (
    AzureLlmTraffic,
    ConstantTraffic,
    CountsTraffic,
    NasaTraffic,
    ObservedTraffic,
    PoissonTraffic,
    RampTraffic,
    SinusoidalTraffic,
    StepTraffic,
    TraceFileTraffic,
    TraceTraffic,
    TrafficBase,
    TrafficSpec,
    UniformTraffic,
)
from skenario.workloads.archives import check_archive_trace, nasa_arrivals, nasa_rate
from skenario.workloads.counts import check_count_trace, count_arrivals, count_rate
from skenario.workloads.observed import (
    GapPolicy,
    Series,
    fill,
    named_series,
    observed_arrivals,
    observed_rate,
    read_observed,
)
from skenario.workloads.patterns import (
    RateFunction,
    constant_arrivals,
    poisson_arrivals,
    ramp_arrivals,
    ramp_rate,
    sinusoidal_arrivals,
    sinusoidal_rate,
    step_arrivals,
    step_rate,
    sum_arrivals,
    thinned_arrivals,
    uniform_arrivals,
)
from skenario.workloads.rates import Intensity, PiecewiseRate
from skenario.workloads.timestamps import (
    AZURE_TIMESTAMP_COLUMN,
    azure_llm_arrivals,
    check_timestamp_trace,
    timestamp_arrivals,
    timestamp_rate,
)
from skenario.workloads.tracefiles import TraceError

OPEN_HORIZON = 365 * DAY
"""How far a scenario with no end (no duration, no done event) can run: traffic is made up to it."""

Pattern = Callable[[Any, int, int, np.random.Generator], Iterator[int]]
"""A pattern's arrivals in [start, stop): (its spec, start, stop, rng)."""


def _uniform(t: UniformTraffic, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
    return uniform_arrivals(t.count, start, stop, rng) if start < stop else iter(())


PATTERNS: dict[type[TrafficBase], Pattern] = {
    ConstantTraffic: lambda t, start, stop, rng: constant_arrivals(t.rate, start, stop),
    PoissonTraffic: lambda t, start, stop, rng: poisson_arrivals(t.rate, start, stop, rng),
    UniformTraffic: _uniform,
    StepTraffic: lambda t, start, stop, rng: step_arrivals(t.rate, t.step_to, t.step_at, start, stop, rng),
    RampTraffic: lambda t, start, stop, rng: ramp_arrivals(t.rate_from, t.rate_to, start, stop, rng),
    SinusoidalTraffic: lambda t, start, stop, rng: sinusoidal_arrivals(t.mean, t.amplitude, t.period, start, stop, rng),
}
"""Each generated traffic type's arrivals."""

Later = Callable[[Any, int, int, int, int, np.random.Generator], Iterator[int]]
"""A pattern's arrivals in [lo, hi) of its window [start, stop), which began before `lo`: (its spec, start,
stop, lo, hi, rng). A run with `spec.offset` starts in the middle of a pattern: its rate there is the
pattern's at that time of the scenario."""


def _uniform_later(
    t: UniformTraffic, start: int, stop: int, lo: int, hi: int, rng: np.random.Generator
) -> Iterator[int]:
    count = int(rng.binomial(t.count, (hi - lo) / (stop - start)))  # each of the count falls in [lo, hi) or not
    return uniform_arrivals(count, lo, hi, rng)


LATER: dict[type[TrafficBase], Later] = {
    ConstantTraffic: lambda t, start, stop, lo, hi, rng: constant_arrivals(t.rate, lo, hi),
    PoissonTraffic: lambda t, start, stop, lo, hi, rng: poisson_arrivals(t.rate, lo, hi, rng),
    UniformTraffic: _uniform_later,
    StepTraffic: lambda t, start, stop, lo, hi, rng: step_arrivals(t.rate, t.step_to, t.step_at, lo, hi, rng),
    RampTraffic: lambda t, start, stop, lo, hi, rng: thinned_arrivals(
        ramp_rate(t.rate_from, t.rate_to, start, stop), max(t.rate_from, t.rate_to), lo, hi, rng
    ),
    SinusoidalTraffic: lambda t, start, stop, lo, hi, rng: thinned_arrivals(
        sinusoidal_rate(t.mean, t.amplitude, t.period, start), t.mean + abs(t.amplitude), lo, hi, rng
    ),
}
"""Each generated traffic type's arrivals from a time inside its window."""


RateOf = Callable[[Any, int, int], RateFunction]
"""A pattern's intensity in its window [start, stop): (its spec, start, stop)."""


def _flat(rate: float) -> RateFunction:
    def flat(t: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        return np.full(t.shape, rate, dtype=np.float64)

    return flat


RATES: dict[type[TrafficBase], RateOf] = {
    ConstantTraffic: lambda t, start, stop: _flat(t.rate),
    PoissonTraffic: lambda t, start, stop: _flat(t.rate),
    UniformTraffic: lambda t, start, stop: _flat(t.count * SECOND / (stop - start)),
    StepTraffic: lambda t, start, stop: step_rate(t.rate, t.step_to, t.step_at),
    RampTraffic: lambda t, start, stop: ramp_rate(t.rate_from, t.rate_to, start, stop),
    SinusoidalTraffic: lambda t, start, stop: sinusoidal_rate(t.mean, t.amplitude, t.period, start),
}
"""Each generated traffic type's intensity: what a fluid run reads where a discrete run draws `PATTERNS`."""


def build_rate(traffic: TrafficSpec, *, duration: int, base_dir: Path, offset: int = 0) -> Intensity:
    """The scenario traffic's intensity (requests per second at the run's times, in ns, `offset` into the
    scenario's): each pattern's rate in its window and each trace's rate (`TraceReader.rate`), summed; its
    integral over a span is the arrivals a discrete run expects there. Trace files are read now: a bad
    one is a TraceError at its field."""
    items = [traffic] if isinstance(traffic, TrafficBase) else list(traffic)
    single = isinstance(traffic, TrafficBase)
    end = offset + duration
    patterns, traces = [], []
    for index, item in enumerate(items):
        field = "spec.traffic" if single else f"spec.traffic.{index}"
        start, stop = item.window(end)
        if isinstance(item, TraceFileTraffic):
            path = trace_path(item, base_dir, field)
            if isinstance(item, ObservedTraffic):  # the series and gaps it names are said at its own fields
                observed_series(item, path, field)
            try:
                traces.append(TRACES[type(item)].rate(item, path, start, min(stop, end)))
            except TraceError as exc:
                _column_named(item, exc, path, field)
                raise
        else:
            patterns.append((start, stop, RATES[type(item)](item, start, stop)))
    return Intensity(patterns, traces, offset)


def _check_trace(t: TraceTraffic, path: Path, start: int, stop: int) -> None:
    check_timestamp_trace(path, t.column, unit=t.unit, start=start, stop=stop, time_scale=t.time_scale)


def _replay_trace(
    t: TraceTraffic, path: Path, start: int, stop: int, rng: np.random.Generator, since: int
) -> Iterator[int]:
    return timestamp_arrivals(
        path, t.column, unit=t.unit, start=start, stop=stop, time_scale=t.time_scale, rate_scale=t.rate_scale, rng=rng
    )


def _check_counts(t: CountsTraffic, path: Path, start: int, stop: int) -> None:
    check_count_trace(
        path,
        t.time_column,
        t.count_column,
        interval=t.interval,
        unit=t.unit,
        start=start,
        stop=stop,
        time_scale=t.time_scale,
    )


def _replay_counts(
    t: CountsTraffic, path: Path, start: int, stop: int, rng: np.random.Generator, since: int
) -> Iterator[int]:
    return count_arrivals(
        path,
        t.time_column,
        t.count_column,
        rng=rng,
        interval=t.interval,
        unit=t.unit,
        start=start,
        stop=stop,
        time_scale=t.time_scale,
        rate_scale=t.rate_scale,
        since=since,
    )


def _check_azure(t: AzureLlmTraffic, path: Path, start: int, stop: int) -> None:
    check_timestamp_trace(path, AZURE_TIMESTAMP_COLUMN, start=start, stop=stop, time_scale=t.time_scale)


def _replay_azure(
    t: AzureLlmTraffic, path: Path, start: int, stop: int, rng: np.random.Generator, since: int
) -> Iterator[int]:
    return azure_llm_arrivals(path, start=start, stop=stop, time_scale=t.time_scale, rate_scale=t.rate_scale, rng=rng)


def _check_nasa(t: NasaTraffic, path: Path, start: int, stop: int) -> None:
    check_archive_trace(path, start=start, stop=stop, time_scale=t.time_scale)


def _replay_nasa(
    t: NasaTraffic, path: Path, start: int, stop: int, rng: np.random.Generator, since: int
) -> Iterator[int]:
    return nasa_arrivals(
        path, rng=rng, start=start, stop=stop, time_scale=t.time_scale, rate_scale=t.rate_scale, since=since
    )


def observed_series(t: ObservedTraffic, path: Path, field: str = "spec.traffic") -> Series:
    """The series the traffic names, its gaps filled as it says (read whole: a metrics export is small)."""
    return load_series(path, t.series, t.gaps, field)


def load_series(path: Path, name: str | None, gaps: GapPolicy, field: str) -> Series:
    """The series `name` of an observed file, filled as `gaps` says. A name the file lacks, or a gap the policy
    refuses, is the scenario's mistake: a ScenarioError at `field`'s `series` or `gaps`, naming the file."""
    found = read_observed(path)
    try:
        series = named_series(found, name, str(path), f"{field}.series")
    except TraceError as exc:
        raise ScenarioError(f"{path}: {exc.message}", field=f"{field}.series", value=name) from None
    try:
        return fill(series, gaps)
    except TraceError as exc:
        raise ScenarioError(f"{path}: {exc.message}", field=f"{field}.gaps", value=gaps) from None


def _check_observed(t: ObservedTraffic, path: Path, start: int, stop: int) -> None:
    observed_series(t, path)


def _observed_scale(t: ObservedTraffic) -> float:
    """Real records per simulated request: the traffic's scale over its rate scale (none at a rate scale of 0)."""
    return t.scale / t.rate_scale if t.rate_scale else math.inf


def _replay_observed(
    t: ObservedTraffic, path: Path, start: int, stop: int, rng: np.random.Generator, since: int
) -> Iterator[int]:
    return observed_arrivals(
        observed_series(t, path),
        kind=t.kind,
        scale=_observed_scale(t),
        counts=t.counts,
        rng=rng,
        start=start,
        stop=stop,
        time_scale=t.time_scale,
        since=since,
    )


Check = Callable[[Any, Path, int, int], None]
Replay = Callable[[Any, Path, int, int, np.random.Generator, int], Iterator[int]]
"""A trace's arrivals in [start, stop): (its spec, its file, start, stop, rng, since); those before `since` may
be left out (a run with `spec.offset`: counts before it are not drawn at all)."""
TraceRate = Callable[[Any, Path, int, int], PiecewiseRate]
"""A trace's rate in [start, stop): (its spec, its file, start, stop): what a fluid run reads where a
discrete run replays it (the same records)."""


class TraceReader(NamedTuple):
    """How one trace type is read: a check of every record a replay will read, the replay, and the rate."""

    check: Check
    replay: Replay
    rate: TraceRate


def _timestamp_rate(t: TraceTraffic, path: Path, start: int, stop: int) -> PiecewiseRate:
    return timestamp_rate(
        path, t.column, unit=t.unit, start=start, stop=stop, time_scale=t.time_scale, rate_scale=t.rate_scale
    )


def _count_rate(t: CountsTraffic, path: Path, start: int, stop: int) -> PiecewiseRate:
    return count_rate(
        path,
        t.time_column,
        t.count_column,
        interval=t.interval,
        unit=t.unit,
        start=start,
        stop=stop,
        time_scale=t.time_scale,
        rate_scale=t.rate_scale,
    )


def _azure_rate(t: AzureLlmTraffic, path: Path, start: int, stop: int) -> PiecewiseRate:
    return timestamp_rate(
        path, AZURE_TIMESTAMP_COLUMN, start=start, stop=stop, time_scale=t.time_scale, rate_scale=t.rate_scale
    )


def _nasa_rate(t: NasaTraffic, path: Path, start: int, stop: int) -> PiecewiseRate:
    return nasa_rate(path, start=start, stop=stop, time_scale=t.time_scale, rate_scale=t.rate_scale)


def _observed_rate(t: ObservedTraffic, path: Path, start: int, stop: int) -> PiecewiseRate:
    series = observed_series(t, path)
    return observed_rate(series, kind=t.kind, scale=_observed_scale(t), start=start, stop=stop, time_scale=t.time_scale)


TRACES: dict[type[TraceFileTraffic], TraceReader] = {
    TraceTraffic: TraceReader(_check_trace, _replay_trace, _timestamp_rate),
    CountsTraffic: TraceReader(_check_counts, _replay_counts, _count_rate),
    AzureLlmTraffic: TraceReader(_check_azure, _replay_azure, _azure_rate),
    NasaTraffic: TraceReader(_check_nasa, _replay_nasa, _nasa_rate),
    ObservedTraffic: TraceReader(_check_observed, _replay_observed, _observed_rate),
}
"""Each trace type's reader."""


def arrivals(
    traffic: TrafficBase, *, duration: int, rng: np.random.Generator, base_dir: Path, field: str, offset: int = 0
) -> Iterator[int]:
    """One traffic object's sorted arrival times in the scenario's time, from `offset` on; the caller cuts them
    at the end of the run."""
    end = offset + duration
    start, stop = traffic.window(end)
    if not isinstance(traffic, TraceFileTraffic):
        if start >= offset:
            return PATTERNS[type(traffic)](traffic, start, stop, rng)
        high = min(stop, end)
        return LATER[type(traffic)](traffic, start, stop, offset, high, rng) if offset < high else iter(())
    check, replay, _ = TRACES[type(traffic)]
    path = trace_path(traffic, base_dir, field)
    if isinstance(traffic, ObservedTraffic):  # the series and gaps it names are said at its own fields
        observed_series(traffic, path, field)
    stop = min(stop, end)  # a trace's shape does not depend on stop: read no further than the run
    try:
        check(traffic, path, start, stop)
    except TraceError as exc:
        _column_named(traffic, exc, path, field)
        raise
    times = replay(traffic, path, start, stop, rng, offset)
    return dropwhile(partial(gt, offset), times) if offset else times


def _column_named(traffic: TraceFileTraffic, exc: TraceError, path: Path, field: str) -> None:
    """A column the file's header lacks is the scenario's mistake: a ScenarioError at the field that names it."""
    if exc.line != 1 or not exc.message.startswith("no column"):
        return
    names = {"column": "column", "time_column": "timeColumn", "count_column": "countColumn"}
    for attribute, alias in names.items():
        if getattr(traffic, attribute, None) == exc.value:
            raise ScenarioError(f"{path}: {exc.message}", field=f"{field}.{alias}", value=exc.value) from None


def trace_path(traffic: TraceFileTraffic, base_dir: Path, field: str) -> Path:
    """The trace file (a relative path is relative to `base_dir`); a missing one is a TraceError at `field`."""
    given = Path(traffic.file).expanduser()
    path = given if given.is_absolute() else base_dir / given
    if not path.is_file():
        problem = "is a folder, not a trace file" if path.is_dir() else "no such trace file"
        looked = f" (looked for {path})" if str(path) != traffic.file else ""
        raise TraceError(f"{problem}: '{traffic.file}'{looked}", field=f"{field}.file", value=traffic.file)
    return path


def build_arrivals(
    traffic: TrafficSpec,
    *,
    duration: int,
    streams: RandomStreams,
    base_dir: Path,
    stream: str = "traffic",
    offset: int = 0,
) -> Iterator[int]:
    """The scenario's arrivals: a lazy iterator of sorted absolute times in ns, all in (0, duration).

    Trace files are opened and checked now (a `TraceError` before the run starts); the arrivals are
    made only as the simulation pulls them. One traffic object draws from the stream "traffic",
    the i-th of a list from "traffic[i]", so adding an item never changes the others' draws
    (traffic an event brings in uses its own `stream` name instead of "traffic").
    Relative trace paths are relative to `base_dir`, the scenario file's folder. Time 0 belongs to
    the kernel's start movement, so an arrival there (a trace's first row replayed from 0) moves
    to 1 ns. With `offset`, the run starts that far into the scenario's traffic (`spec.offset`): its
    arrivals from then on, moved back by it.
    """
    if duration <= 0:
        raise ValueError(f"duration must be > 0 ns, got {duration}")
    if isinstance(traffic, TrafficBase):
        rng = streams.generator(stream)
        times = arrivals(traffic, duration=duration, rng=rng, base_dir=base_dir, field="spec.traffic", offset=offset)
    else:
        times = sum_arrivals(
            *(
                arrivals(
                    item,
                    duration=duration,
                    rng=streams.generator(f"{stream}[{index}]"),
                    base_dir=base_dir,
                    field=f"spec.traffic.{index}",
                    offset=offset,
                )
                for index, item in enumerate(traffic)
            )
        )
    if offset:
        times = map(partial(add, -offset), times)
    return takewhile(partial(gt, duration), map(max, repeat(1), times))
