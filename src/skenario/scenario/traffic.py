"""The `spec.traffic` section of a scenario file, and the lazy arrival stream it describes.

```yaml
traffic:                      # one traffic object, or a list of them meaning their sum
  - {type: poisson, rate: 20/s}
  - {type: step, rate: 0, stepTo: 50/s, stepAt: 5m, start: 2m, stop: 8m}
  - {type: nasa, file: traces/nasa.tbz2, rateScale: 100, stop: 1h}
```

Every type wraps a pattern of `skenario.workloads`, and every type takes `start` and `stop`, the
window in which it produces arrivals (by default the whole run). Trace files are checked when
the arrivals are built, before the run starts, so a bad row is one clear `TraceError` and not a
failure halfway through. This module imports only `base` and `units` from the scenario package,
so `schema` can import it.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from itertools import repeat, takewhile
from operator import gt
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import numpy as np
from pydantic import AfterValidator, BeforeValidator, Discriminator, Field, Tag, model_validator

from skenario.core.random import RandomStreams
from skenario.scenario.base import Spec
from skenario.scenario.units import Duration, Rate
from skenario.workloads.archives import check_archive_trace, nasa_arrivals
from skenario.workloads.counts import check_count_trace, count_arrivals
from skenario.workloads.patterns import (
    constant_arrivals,
    poisson_arrivals,
    ramp_arrivals,
    sinusoidal_arrivals,
    step_arrivals,
    sum_arrivals,
    uniform_arrivals,
)
from skenario.workloads.timestamps import (
    AZURE_TIMESTAMP_COLUMN,
    azure_llm_arrivals,
    check_timestamp_trace,
    timestamp_arrivals,
)
from skenario.workloads.tracefiles import TraceError

TimeUnit = Literal["ns", "us", "µs", "μs", "ms", "s", "m", "h", "d"]
"""The unit of numeric times in a trace CSV (datetimes need none)."""


class _Traffic(Spec):
    """What every traffic type has: a type tag and the window in which it produces arrivals."""

    type: str
    start: Duration = Field(0, ge=0, description="When this traffic begins, from the start of the run.")
    stop: Duration | None = Field(
        None, gt=0, description="When this traffic ends, from the start of the run; the end of the run when absent."
    )

    @model_validator(mode="after")
    def _window_is_ordered(self) -> Self:
        if self.stop is not None and self.stop <= self.start:
            raise ValueError("stop must be after start")
        return self

    def window(self, duration: int) -> tuple[int, int]:
        """[start, stop) in absolute ns; stop may lie after the run's end (a ramp's slope depends on it)."""
        return self.start, self.stop if self.stop is not None else duration

    def arrivals(self, *, duration: int, rng: np.random.Generator, base_dir: Path, field: str) -> Iterator[int]:
        """Sorted absolute arrival times; the caller cuts them at the end of the run."""
        raise NotImplementedError


class ConstantTraffic(_Traffic):
    """Evenly spaced arrivals, the first one interval after `start`."""

    type: Literal["constant"]
    rate: Rate = Field(ge=0, allow_inf_nan=False, description="Requests per second.")

    def arrivals(self, *, duration: int, rng: np.random.Generator, base_dir: Path, field: str) -> Iterator[int]:
        return constant_arrivals(self.rate, *self.window(duration))


class PoissonTraffic(_Traffic):
    """Arrivals with exponential gaps (a Poisson process)."""

    type: Literal["poisson"]
    rate: Rate = Field(ge=0, allow_inf_nan=False, description="Mean requests per second.")

    def arrivals(self, *, duration: int, rng: np.random.Generator, base_dir: Path, field: str) -> Iterator[int]:
        return poisson_arrivals(self.rate, *self.window(duration), rng)


class UniformTraffic(_Traffic):
    """A fixed number of arrivals at independent uniform times in the window (any after the run's end are cut)."""

    type: Literal["uniform"]
    count: int = Field(ge=0, description="Requests in the window [start, stop).")

    def arrivals(self, *, duration: int, rng: np.random.Generator, base_dir: Path, field: str) -> Iterator[int]:
        start, stop = self.window(duration)
        return uniform_arrivals(self.count, start, stop, rng) if start < stop else iter(())


class StepTraffic(_Traffic):
    """Poisson arrivals whose rate jumps once, at `stepAt`: the simplest load change."""

    type: Literal["step"]
    rate: Rate = Field(ge=0, allow_inf_nan=False, description="Mean requests per second before the step.")
    step_to: Rate = Field(ge=0, allow_inf_nan=False, description="Mean requests per second from the step on.")
    step_at: Duration = Field(ge=0, description="When the rate changes, from the start of the run.")

    def arrivals(self, *, duration: int, rng: np.random.Generator, base_dir: Path, field: str) -> Iterator[int]:
        return step_arrivals(self.rate, self.step_to, self.step_at, *self.window(duration), rng)


class RampTraffic(_Traffic):
    """Poisson arrivals whose rate moves linearly across the window, from `from` at start to `to` at stop."""

    type: Literal["ramp"]
    rate_from: Rate = Field(alias="from", ge=0, allow_inf_nan=False, description="Requests per second at start.")
    rate_to: Rate = Field(alias="to", ge=0, allow_inf_nan=False, description="Requests per second at stop.")

    def arrivals(self, *, duration: int, rng: np.random.Generator, base_dir: Path, field: str) -> Iterator[int]:
        return ramp_arrivals(self.rate_from, self.rate_to, *self.window(duration), rng)


class SinusoidalTraffic(_Traffic):
    """Poisson arrivals at mean + amplitude·sin(2π(t - start)/period): a daily cycle, compressed."""

    type: Literal["sinusoidal"]
    mean: Rate = Field(ge=0, allow_inf_nan=False, description="Mean requests per second.")
    amplitude: Rate = Field(
        ge=0,
        allow_inf_nan=False,
        description="Requests per second above and below the mean; the rate starts at the mean, rises first "
        "and is cut at 0 when the amplitude exceeds the mean.",
    )
    period: Duration = Field(gt=0, description="Length of one cycle, such as '10m'.")

    def arrivals(self, *, duration: int, rng: np.random.Generator, base_dir: Path, field: str) -> Iterator[int]:
        return sinusoidal_arrivals(self.mean, self.amplitude, self.period, *self.window(duration), rng)


class _TraceTraffic(_Traffic):
    """A replayed trace file: its first record lands at `start`, and it is cut at `stop`."""

    file: str = Field(
        min_length=1, description="The trace file; a relative path is relative to the scenario file's folder."
    )
    time_scale: float = Field(
        1.0,
        gt=0,
        allow_inf_nan=False,
        description="Stretches the trace in time: 2 replays it twice as slowly (at half the rate), 0.5 twice as fast.",
    )
    rate_scale: float = Field(
        1.0,
        ge=0,
        allow_inf_nan=False,
        description="Multiplies the request rate and keeps the trace's shape in time: 0.5 halves it, 3 triples it.",
    )

    def arrivals(self, *, duration: int, rng: np.random.Generator, base_dir: Path, field: str) -> Iterator[int]:
        """Check every record the replay will read (up to the end of the window or the run), then replay."""
        path = self._path(base_dir, field)
        start, stop = self.window(duration)
        stop = min(stop, duration)  # a trace's shape does not depend on stop: read no further than the run
        self._check(path, start, stop)
        return self._replay(path, start, stop, rng)

    def _path(self, base_dir: Path, field: str) -> Path:
        given = Path(self.file).expanduser()
        path = given if given.is_absolute() else base_dir / given
        if not path.is_file():
            problem = "is a folder, not a trace file" if path.is_dir() else "no such trace file"
            looked = f" (looked for {path})" if str(path) != self.file else ""
            raise TraceError(f"{problem}: '{self.file}'{looked}", field=f"{field}.file", value=self.file)
        return path

    def _check(self, path: Path, start: int, stop: int) -> None:
        raise NotImplementedError

    def _replay(self, path: Path, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
        raise NotImplementedError


class TraceTraffic(_TraceTraffic):
    """A CSV with one row per request, replayed one arrival per row (times relative to the first row)."""

    type: Literal["trace"]
    column: str = Field(min_length=1, description="The column holding each request's time.")
    unit: TimeUnit = Field(
        "s", description="The unit of numeric times; datetimes such as 2023-11-16 18:15:46 need none."
    )

    def _check(self, path: Path, start: int, stop: int) -> None:
        check_timestamp_trace(path, self.column, unit=self.unit, start=start, stop=stop, time_scale=self.time_scale)

    def _replay(self, path: Path, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
        return timestamp_arrivals(
            path,
            self.column,
            unit=self.unit,
            start=start,
            stop=stop,
            time_scale=self.time_scale,
            rate_scale=self.rate_scale,
            rng=rng,
        )


class CountsTraffic(_TraceTraffic):
    """A CSV with a request count per time interval; each interval's requests land at uniform times in it."""

    type: Literal["counts"]
    time_column: str = Field(min_length=1, description="The column holding each interval's start time.")
    count_column: str = Field(min_length=1, description="The column holding each interval's request count.")
    interval: Duration | None = Field(
        None,
        gt=0,
        description="How long the last row's interval lasts, in trace time; as long as the gap before it when absent.",
    )
    unit: TimeUnit = Field(
        "s", description="The unit of numeric times; datetimes such as 2023-11-16 18:15:46 need none."
    )

    def _check(self, path: Path, start: int, stop: int) -> None:
        check_count_trace(
            path,
            self.time_column,
            self.count_column,
            interval=self.interval,
            unit=self.unit,
            start=start,
            stop=stop,
            time_scale=self.time_scale,
        )

    def _replay(self, path: Path, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
        return count_arrivals(
            path,
            self.time_column,
            self.count_column,
            rng=rng,
            interval=self.interval,
            unit=self.unit,
            start=start,
            stop=stop,
            time_scale=self.time_scale,
            rate_scale=self.rate_scale,
        )


class AzureLlmTraffic(_TraceTraffic):
    """The Azure LLM inference trace 2023 (AzureLLMInferenceTrace_*.csv): one arrival per row."""

    type: Literal["azureLlm"]

    def _check(self, path: Path, start: int, stop: int) -> None:
        check_timestamp_trace(path, AZURE_TIMESTAMP_COLUMN, start=start, stop=stop, time_scale=self.time_scale)

    def _replay(self, path: Path, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
        return azure_llm_arrivals(
            path, start=start, stop=stop, time_scale=self.time_scale, rate_scale=self.rate_scale, rng=rng
        )


class NasaTraffic(_TraceTraffic):
    """The NASA-HTTP 1995 per-second request counts (a bzip2 tar holding workload.txt), spread within each second."""

    type: Literal["nasa"]

    def _check(self, path: Path, start: int, stop: int) -> None:
        check_archive_trace(path, start=start, stop=stop, time_scale=self.time_scale)

    def _replay(self, path: Path, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
        return nasa_arrivals(
            path, rng=rng, start=start, stop=stop, time_scale=self.time_scale, rate_scale=self.rate_scale
        )


_TYPES = ("constant", "poisson", "uniform", "step", "ramp", "sinusoidal", "trace", "counts", "azureLlm", "nasa")
_TYPE_MESSAGE = f"traffic needs a 'type': one of {', '.join(_TYPES)}"


def _known_type(value: Any) -> Any:
    """Name an unknown or missing `type` in the error (a discriminator's own message cannot show it)."""
    if isinstance(value, dict):
        tag = value.get("type")
        if tag is None:
            raise ValueError(_TYPE_MESSAGE)
        if tag not in _TYPES:
            raise ValueError(f"{tag!r} is not a traffic type; use one of {', '.join(_TYPES)}")
    return value


def _item_tag(value: Any) -> str | None:
    """A mapping is one traffic object, tagged by its own `type`."""
    if isinstance(value, dict):
        tag = value.get("type")
        return tag if isinstance(tag, str) else None
    return getattr(value, "type", None)


def _section_tag(value: Any) -> str | None:
    """A list is a sum of traffic objects; anything else is one."""
    return "list" if isinstance(value, list | tuple) else _item_tag(value)


_Tagged = (
    Annotated[ConstantTraffic, Tag("constant")]
    | Annotated[PoissonTraffic, Tag("poisson")]
    | Annotated[UniformTraffic, Tag("uniform")]
    | Annotated[StepTraffic, Tag("step")]
    | Annotated[RampTraffic, Tag("ramp")]
    | Annotated[SinusoidalTraffic, Tag("sinusoidal")]
    | Annotated[TraceTraffic, Tag("trace")]
    | Annotated[CountsTraffic, Tag("counts")]
    | Annotated[AzureLlmTraffic, Tag("azureLlm")]
    | Annotated[NasaTraffic, Tag("nasa")]
)
"""Every traffic type, tagged by its `type` value so that errors are located as the user wrote them."""

TrafficItem = Annotated[
    _Tagged,
    Discriminator(_item_tag, custom_error_type="traffic_type", custom_error_message=_TYPE_MESSAGE),
    BeforeValidator(_known_type),
]
"""One traffic object, chosen by its `type`."""


def _non_empty(items: tuple[TrafficItem, ...]) -> tuple[TrafficItem, ...]:
    if not items:
        raise ValueError("a list of traffic needs at least one item")
    return items


TrafficSpec = Annotated[
    _Tagged | Annotated[tuple[TrafficItem, ...], AfterValidator(_non_empty), Tag("list")],
    Discriminator(
        _section_tag,
        custom_error_type="traffic_type",
        custom_error_message=_TYPE_MESSAGE + " (or give a list of them)",
    ),
    BeforeValidator(_known_type),
    Field(description="One traffic object, or a list of them meaning their sum."),
]
"""The whole `spec.traffic` section: one traffic object, or a tuple of them meaning their sum.

The tags are the `type` values themselves (and `list`), so an error in one object is located as
with a plain discriminated union (`spec.traffic.rate`), and one in a list as `spec.traffic.1.rate`.
"""


def build_arrivals(
    traffic: TrafficSpec, *, duration: int, streams: RandomStreams, base_dir: Path, stream: str = "traffic"
) -> Iterator[int]:
    """The scenario's arrivals: a lazy iterator of sorted absolute times in ns, all in (0, duration).

    Trace files are opened and checked now (a `TraceError` before the run starts); the arrivals are
    made only as the simulation pulls them. One traffic object draws from the stream "traffic",
    the i-th of a list from "traffic[i]", so adding an item never changes the others' draws
    (traffic an event brings in uses its own `stream` name instead of "traffic").
    Relative trace paths are relative to `base_dir`, the scenario file's folder. Time 0 belongs to
    the kernel's start movement, so an arrival there (a trace's first row replayed from 0) moves
    to 1 ns.
    """
    if duration <= 0:
        raise ValueError(f"duration must be > 0 ns, got {duration}")
    if isinstance(traffic, _Traffic):
        rng = streams.generator(stream)
        times = traffic.arrivals(duration=duration, rng=rng, base_dir=base_dir, field="spec.traffic")
    else:
        times = sum_arrivals(
            *(
                item.arrivals(
                    duration=duration,
                    rng=streams.generator(f"{stream}[{index}]"),
                    base_dir=base_dir,
                    field=f"spec.traffic.{index}",
                )
                for index, item in enumerate(traffic)
            )
        )
    return takewhile(partial(gt, duration), map(max, repeat(1), times))
