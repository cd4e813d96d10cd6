"""`spec.observed` read in: each recorded series filled and scaled, and the Unix time that is simulated 0.

The origin lines the two clocks up: the scenario's `observed` traffic replays its series from its
`start`, so the series' first sample happened at simulated `start`; without such traffic (or with
`origin` set) the replica series' first sample, or `origin`, is simulated 0.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.scenario.format.observed import Observed, ObservedSeries
from skenario.scenario.format.scenario import ScenarioSpec
from skenario.scenario.format.traffic import ObservedTraffic, TrafficBase
from skenario.scenario.wiring.traffic import load_series, observed_series, trace_path
from skenario.workloads.observed import Series


@dataclass(frozen=True)
class ObservedRun:
    """What the real cluster recorded, on simulated time: each series' times are ns since simulated 0."""

    replicas: Series
    cpu: Series | None
    lag: Series | None
    latency: Series | None
    origin_ns: int  # the Unix time (ns) that is simulated 0
    warm_up: int
    tolerance: int


def read_observed_run(spec: ScenarioSpec, base_dir: Path) -> ObservedRun:
    """The scenario's `spec.observed`, read; a ScenarioError (a TraceError) names the file and the field."""
    observed = spec.observed
    if observed is None:
        raise ScenarioError("the scenario has no spec.observed: name what the real cluster recorded", field="spec")
    replicas = _series(observed.replicas, base_dir, "spec.observed.replicas")
    origin = _origin(observed, spec, base_dir, replicas)

    def read(entry: ObservedSeries | None, name: str) -> Series | None:
        return None if entry is None else _shifted(_series(entry, base_dir, f"spec.observed.{name}"), origin)

    return ObservedRun(
        _shifted(replicas, origin),
        read(observed.cpu, "cpu"),
        read(observed.lag, "lag"),
        read(observed.latency, "latency"),
        origin,
        observed.warm_up,
        observed.tolerance,
    )


def _series(entry: ObservedSeries, base_dir: Path, field: str) -> Series:
    given = Path(entry.file).expanduser()
    path = given if given.is_absolute() else base_dir / given
    if not path.is_file():
        raise ScenarioError(f"no such file (looked for {path})", field=f"{field}.file", value=entry.file)
    filled = load_series(path, entry.series, entry.gaps, field)
    return replace(filled, values=filled.values * entry.scale) if entry.scale != 1 else filled


def _origin(observed: Observed, spec: ScenarioSpec, base_dir: Path, replicas: Series) -> int:
    if observed.origin is not None:
        return round(observed.origin * SECOND)
    items = spec.traffic if isinstance(spec.traffic, tuple) else (spec.traffic,)
    for index, item in enumerate(items):
        if isinstance(item, ObservedTraffic):
            field = "spec.traffic" if isinstance(spec.traffic, TrafficBase) else f"spec.traffic.{index}"
            load = observed_series(item, trace_path(item, base_dir, field), field)
            return int(load.times_ns[0]) - item.start
    return int(replicas.times_ns[0])


def _shifted(series: Series, origin: int) -> Series:
    return replace(series, times_ns=series.times_ns - origin)
