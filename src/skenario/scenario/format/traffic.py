"""The `spec.traffic` section of a scenario file: which arrivals the user asks for.

```yaml
traffic:                      # one traffic object, or a list of them meaning their sum
  - {type: poisson, rate: 20/s}
  - {type: step, rate: 0, stepTo: 50/s, stepAt: 5m, start: 2m, stop: 8m}
  - {type: nasa, file: traces/nasa.tbz2, rateScale: 100, stop: 1h}
```

Every type names a pattern or a trace reader of `skenario.workloads`, and every type takes
`start` and `stop`, the window in which it produces arrivals (by default the whole run).
`skenario.scenario.wiring.traffic` turns a section into its lazy arrival stream and checks trace
files then, before the run starts, so a bad row is one clear `TraceError` and not a failure
halfway through.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Discriminator, Field, Tag, model_validator

from skenario.scenario.format.base import Spec
from skenario.scenario.format.units import Duration, Rate

TimeUnit = Literal["ns", "us", "µs", "μs", "ms", "s", "m", "h", "d"]
"""The unit of numeric times in a trace CSV (datetimes need none)."""


class TrafficBase(Spec):
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


class ConstantTraffic(TrafficBase):
    """Evenly spaced arrivals, the first one interval after `start`."""

    type: Literal["constant"]
    rate: Rate = Field(ge=0, allow_inf_nan=False, description="Requests per second.")


class PoissonTraffic(TrafficBase):
    """Arrivals with exponential gaps (a Poisson process)."""

    type: Literal["poisson"]
    rate: Rate = Field(ge=0, allow_inf_nan=False, description="Mean requests per second.")


class UniformTraffic(TrafficBase):
    """A fixed number of arrivals at independent uniform times in the window (any after the run's end are cut)."""

    type: Literal["uniform"]
    count: int = Field(ge=0, description="Requests in the window [start, stop).")


class StepTraffic(TrafficBase):
    """Poisson arrivals whose rate jumps once, at `stepAt`: the simplest load change."""

    type: Literal["step"]
    rate: Rate = Field(ge=0, allow_inf_nan=False, description="Mean requests per second before the step.")
    step_to: Rate = Field(ge=0, allow_inf_nan=False, description="Mean requests per second from the step on.")
    step_at: Duration = Field(ge=0, description="When the rate changes, from the start of the run.")


class RampTraffic(TrafficBase):
    """Poisson arrivals whose rate moves linearly across the window, from `from` at start to `to` at stop."""

    type: Literal["ramp"]
    rate_from: Rate = Field(alias="from", ge=0, allow_inf_nan=False, description="Requests per second at start.")
    rate_to: Rate = Field(alias="to", ge=0, allow_inf_nan=False, description="Requests per second at stop.")


class SinusoidalTraffic(TrafficBase):
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


class TraceFileTraffic(TrafficBase):
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


class TraceTraffic(TraceFileTraffic):
    """A CSV with one row per request, replayed one arrival per row (times relative to the first row)."""

    type: Literal["trace"]
    column: str = Field(min_length=1, description="The column holding each request's time.")
    unit: TimeUnit = Field(
        "s", description="The unit of numeric times; datetimes such as 2023-11-16 18:15:46 need none."
    )


class CountsTraffic(TraceFileTraffic):
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


class AzureLlmTraffic(TraceFileTraffic):
    """The Azure LLM inference trace 2023 (AzureLLMInferenceTrace_*.csv): one arrival per row."""

    type: Literal["azureLlm"]


class NasaTraffic(TraceFileTraffic):
    """The NASA-HTTP 1995 per-second request counts (a bzip2 tar holding workload.txt), spread within each second."""

    type: Literal["nasa"]


class ObservedTraffic(TraceFileTraffic):
    """A series a real cluster's metrics recorded (Prometheus query_range JSON, or a timestamp,__name__,value
    CSV): a rate, or a counter's increase, turned into arrivals that follow it."""

    type: Literal["observed"]
    series: str | None = Field(
        None, min_length=1, description="The series' name in the file; may be left out when the file holds one."
    )
    kind: Literal["rate", "counter"] = Field(
        "rate", description="rate: records per second; counter: a running total, its increases arrive."
    )
    scale: float = Field(
        1.0,
        gt=0,
        allow_inf_nan=False,
        description="Real records one simulated request stands for: 1000 runs 250k records/s as 250 requests/s.",
    )
    counts: Literal["poisson", "exact"] = Field(
        "poisson",
        description="poisson: a Poisson count per sample (the rate steps with the series); exact: the records "
        "over the scale, rounded at random keeping the mean.",
    )
    gaps: Literal["refuse", "hold", "interpolate", "zero"] = Field(
        "refuse", description="How a missing or NaN sample is filled; refuse makes one an error."
    )


_TYPES = (
    "constant",
    "poisson",
    "uniform",
    "step",
    "ramp",
    "sinusoidal",
    "trace",
    "counts",
    "azureLlm",
    "nasa",
    "observed",
)
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
    | Annotated[ObservedTraffic, Tag("observed")]
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
