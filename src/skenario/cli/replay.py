"""`skenario replay`: run a scenario and hold it against what its real cluster recorded.

What was recorded comes from the scenario's `spec.observed`, or from `--observed FILE...` with the
series named by `--replicas`, `--cpu`, `--lag` and `--latency`. The run is kept in the store as
`skenario run` keeps it, with the comparison as its `replay` document: `skenario show` prints it
and `skenario report` draws the observed series over the simulated ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import numpy as np
from rich.markup import escape
from rich.table import Table

from skenario.cli.common import err, out, output_option, plugin_options, print_document, store_option
from skenario.cli.store import run_store
from skenario.core.time import SECOND, parse_duration
from skenario.errors import Halt, SkenarioError
from skenario.results.replay import COUNTS, Comparison, compare, window
from skenario.results.rundata import RunData
from skenario.runs import PluginFailed, Stopped, execute, keep_unbuilt, open_run
from skenario.runs.supervise import loading, memory_budget
from skenario.scenario.format.observed import Observed, ObservedSeries
from skenario.scenario.format.scenario import MAX_SEED
from skenario.scenario.simulation import Simulation
from skenario.scenario.wiring.observed import ObservedRun, read_observed_run
from skenario.workloads.observed import GAP_POLICIES, GapPolicy, Series, read_observed

ROLES = ("replicas", "cpu", "lag", "latency")
CPU_UNITS = ("fraction", "percent")


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--observed",
    "observed_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A Prometheus query_range JSON or timestamp,__name__,value CSV the cluster recorded; may be given again. "
    "Without it, the scenario's spec.observed.",
)
@click.option("--replicas", default=None, help="The observed series of the replica count (default: 'replicas').")
@click.option(
    "--count",
    type=click.Choice(tuple(COUNTS)),
    default="active",
    show_default=True,
    help="Which simulated replica count the observed one is held against: the ready pods (active), every pod not "
    "terminating (pods: kube_deployment_status_replicas), or what the autoscalers asked for (desired).",
)
@click.option("--cpu", default=None, help="The observed series of CPU used over requested (see --cpu-unit).")
@click.option(
    "--cpu-unit",
    type=click.Choice(CPU_UNITS),
    default=None,
    help="How --cpu's series is written: a fraction of the request (0..1, the default) or a percent (0..100).",
)
@click.option("--lag", default=None, help="The observed series of a stream's consumer lag (see --lag-scale).")
@click.option(
    "--lag-scale",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="FACTOR",
    help="Multiplies --lag's series into the scenario's messages: 0.0002 when one message stands for 5000 "
    "records (default 1).",
)
@click.option("--latency", default=None, help="The observed series of latency (seconds).")
@click.option(
    "--warm-up",
    "warm_up",
    default=None,
    metavar="DURATION",
    help="Left out of the comparison at the start, such as 5m (default: spec.observed.warmUp, else none).",
)
@click.option(
    "--tolerance",
    default=None,
    metavar="DURATION",
    help="How far apart an observed and a simulated scale event may be to match, such as 2m (default: the "
    "scenario's spec.observed.tolerance, else 120s).",
)
@click.option(
    "--sync",
    default="15s",
    show_default=True,
    metavar="DURATION",
    help="The autoscaler's sync period: decisions (up, down, hold) are compared once a period.",
)
@click.option(
    "--origin",
    type=float,
    default=None,
    metavar="UNIX_SECONDS",
    help="The observed time that is simulated 0 (default: spec.observed.origin, else the first sample of the load "
    "the scenario's observed traffic replays, else of the replica series).",
)
@click.option(
    "--gaps",
    type=click.Choice(GAP_POLICIES),
    default="refuse",
    show_default=True,
    help="How a missing or NaN sample of an --observed series is filled; refuse makes one an error.",
)
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None, help="Override the scenario's seed.")
@output_option("table", "json", "yaml")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the run store.")
@plugin_options
@store_option
def replay(
    file: Path,
    observed_files: tuple[Path, ...],
    replicas: str | None,
    count: str,
    cpu: str | None,
    lag: str | None,
    latency: str | None,
    warm_up: str | None,
    tolerance: str | None,
    sync: str,
    origin: float | None,
    gaps: GapPolicy,
    cpu_unit: str | None,
    lag_scale: float | None,
    seed: int | None,
    output: str,
    no_store: bool,
    store: Path | None,
) -> None:
    """Run the scenario in FILE and print how closely it followed what its real cluster recorded.

    The replica-trajectory error (MAE, replica-seconds, scale events, decisions) and the errors of CPU, lag and
    latency; the run is kept with them, so `skenario show` prints them and `skenario report` draws both."""
    names = {"replicas": replicas, "cpu": cpu, "lag": lag, "latency": latency}
    if not observed_files and any(names.values()):
        named = next(f"--{role}" for role, name in names.items() if name)
        raise SkenarioError(f"{named} names a series of an --observed file: give the files with --observed")
    if cpu_unit is not None and cpu is None:
        raise SkenarioError("says how --cpu's series is written: name the series with --cpu", field="--cpu-unit")
    if lag_scale is not None and lag is None:
        raise SkenarioError("scales --lag's series: name the series with --lag", field="--lag-scale")
    settings: dict[str, Any] = {}
    if warm_up is not None:
        settings["warm_up"] = _duration(warm_up, "--warm-up", zero=True)
    if tolerance is not None:
        settings["tolerance"] = _duration(tolerance, "--tolerance", zero=False)
    sync_ns = _duration(sync, "--sync", zero=False)
    if origin is not None:
        if not math.isfinite(origin):
            raise SkenarioError("a Unix time in seconds", field="--origin", value=origin)
        settings["origin"] = origin
    scales = {"cpu": 0.01 if cpu_unit == "percent" else 1.0, "lag": 1.0 if lag_scale is None else lag_scale}
    files = ObservedFiles(observed_files, names, gaps, scales)
    budget = memory_budget(None)
    kept = None if no_store else run_store(store)
    try:
        with loading(budget):
            try:
                opened = open_run(file, seed=seed)
            except PluginFailed as failed:
                keep_unbuilt(failed, kept, scenario_file=str(file))
                raise
            if not isinstance(opened, Simulation):
                raise SkenarioError(f"replay runs skenario's scenarios, not a {opened.kind} input", file=str(file))
            observed = _observed(opened, files, settings)
            _comparable(opened, observed, file, from_files=bool(files.paths))
        done = execute(opened, kept, scenario_file=str(file), budget=budget)
    except Stopped as stopped:
        where = "" if stopped.run_id is None else f": run {stopped.run_id} kept in the store as Failed"
        err.print(f"[bold red]{escape(str(stopped))}[/]{where}", highlight=False, soft_wrap=True, markup=True)
        raise Halt(stopped.exit_code) from None
    run = RunData.from_simulation(opened)
    try:
        comparison = compare(run, observed, count, sync_ns)
    except ValueError as exc:  # a run with no duration: how far it went was known only once it ran
        kept_as = "" if done.run_id is None else f" (run {done.run_id} kept in the store without a comparison)"
        raise SkenarioError(str(exc) + kept_as, file=str(file), field="spec.observed") from None
    document = replay_document(comparison, observed)
    if kept is not None and done.run_id is not None:
        kept.keep_document(done.run_id, "replay", document)
    if output in ("json", "yaml"):
        print_document({"run": done.run_id, "name": run.name, "seed": run.seed, **comparison.to_dict()}, output)
        return
    out.print(comparison_table(comparison, f"{run.name} (seed {run.seed}) against the observed cluster"))
    if done.run_id is not None:
        out.print(f"stored as run {done.run_id}; skenario report {done.run_id} draws both", highlight=False)


@dataclass(frozen=True)
class ObservedFiles:
    """What the command line says the cluster recorded: the files, the series named for each role, how gaps
    are filled and the factors that bring a role's series into skenario's units (CPU a fraction of the
    request, lag in the scenario's messages)."""

    paths: tuple[Path, ...]
    names: dict[str, str | None]
    gaps: GapPolicy = "refuse"
    scales: dict[str, float] = field(default_factory=dict)

    def entries(self) -> dict[str, ObservedSeries]:
        """Each role's series as `spec.observed` would name it; a name no file holds, or two do, is an error
        naming the option, the name and the files."""
        found: dict[str, list[Path]] = {}
        nan: dict[str, int] = {}  # the Unix time of each series' first NaN, if it has one
        for path in self.paths:
            if not path.is_file():
                raise SkenarioError("no such file", field="--observed", value=str(path))
            for series_name, series in read_observed(path).items():
                found.setdefault(series_name, []).append(path)
                if not np.isfinite(series.values).all():
                    nan[series_name] = int(series.times_ns[np.flatnonzero(~np.isfinite(series.values))[0]])
        chosen = self.names | {"replicas": self.names["replicas"] or "replicas"}
        entries: dict[str, ObservedSeries] = {}
        for role, name in chosen.items():
            if name is None:
                continue
            if name not in found:
                holds = ", ".join(sorted(found)[:8]) + (", …" if len(found) > 8 else "")
                raise SkenarioError(
                    f"no observed series of that name; the files hold {holds}", field=f"--{role}", value=name
                )
            if len(found[name]) > 1:
                held = " and ".join(str(path) for path in found[name])
                raise SkenarioError(f"{held} each hold a series of that name: give one", field=f"--{role}", value=name)
            if name in nan and self.gaps == "refuse":
                raise SkenarioError(
                    f"series {name!r} has NaN samples, the first at {nan[name] / SECOND:.0f} (Unix s): say how to "
                    "fill them with --gaps hold, interpolate or zero",
                    file=str(found[name][0]),
                    field=f"--{role}",
                )
            entries[role] = ObservedSeries.model_validate(
                {
                    "file": str(found[name][0].resolve()),
                    "series": name,
                    "gaps": self.gaps,
                    "scale": self.scales.get(role, 1.0),
                }
            )
        return entries


def _observed(simulation: Simulation, files: ObservedFiles, settings: dict[str, Any]) -> ObservedRun:
    """What the cluster recorded: the series named in the --observed files, or the scenario's spec.observed;
    `settings` (warm_up, tolerance, origin from the command line) override the scenario's."""
    spec = simulation.spec
    previous = spec.observed
    if files.paths:
        kept = {} if previous is None else {key: getattr(previous, key) for key in ("origin", "warm_up", "tolerance")}
        observed = Observed.model_validate(files.entries()).model_copy(update=kept | settings)
    elif previous is None:
        raise SkenarioError(
            "the scenario has no spec.observed: give what the cluster recorded with --observed FILE --replicas NAME",
            field="--observed",
        )
    else:
        observed = previous.model_copy(update=settings)
    return read_observed_run(spec.model_copy(update={"observed": observed}), simulation.base_dir)


def _comparable(simulation: Simulation, observed: ObservedRun, file: Path, *, from_files: bool) -> None:
    """Refuse, before the run, a replay that could not compare what it was given: an observed lag beside a
    workload that records none, or a run and observed replicas that would not overlap. Nothing is kept."""
    if observed.lag is not None and simulation.spec.workload.stream is None:
        raise SkenarioError(
            "an observed lag needs a workload that records one: this scenario's spec.workload has no stream",
            file=str(file),
            field="--lag" if from_files else "spec.observed.lag",
        )
    if simulation.end is None:  # runs to just past its last event: how far is known once it ran
        return
    try:
        window(observed, simulation.recorder.interval, simulation.end)
    except ValueError as exc:
        raise SkenarioError(str(exc), file=str(file), field="spec.observed") from None


def _duration(text: str, option: str, *, zero: bool) -> int:
    """A duration option's value in ns: refused, naming the option, when it is not one or not above zero."""
    try:
        value = parse_duration(text)
    except ValueError as exc:
        raise SkenarioError(str(exc), field=option, value=text) from None
    if value < 0 or (value == 0 and not zero):
        raise SkenarioError(f"must be {'0 or more' if zero else 'more than 0'}", field=option, value=text)
    return value


def replay_document(comparison: Comparison, observed: ObservedRun) -> dict[str, Any]:
    """The comparison and the observed series (seconds of simulated time, values), as the store keeps them."""
    series = {}
    for role in ROLES:
        found: Series | None = getattr(observed, role)
        if found is not None:
            values = [None if not np.isfinite(v) else float(v) for v in found.values]
            series[role] = {"time_s": (found.times_ns / SECOND).tolist(), "value": values}
    return comparison.to_dict() | {"observed": series}


def comparison_table(comparison: Comparison, title: str) -> Table:
    """The replica-trajectory error, then the other series' errors, as one table."""
    error = comparison.replicas
    table = Table(title=title)
    table.add_column("figure")
    table.add_column("value", justify="right")
    compared = f"{error.start_ns / SECOND:,.0f} s to {error.stop_ns / SECOND:,.0f} s"
    pct = error.replica_seconds_error_pct
    rows = [
        ("window compared", compared),
        ("simulated replicas counted", comparison.count),
        ("replica MAE (time-weighted)", f"{error.mae:.2f}"),
        ("largest replica difference", f"{error.max_abs:.0f}"),
        (
            "replica-seconds simulated / observed",
            f"{error.replica_seconds_simulated:,.0f} / {error.replica_seconds_observed:,.0f}",
        ),
        ("replica-seconds error", "n/a" if pct is None else f"{pct:+.1f}%"),
        ("scale events observed / simulated", f"{error.events_observed} / {error.events_simulated}"),
        ("scale events matched", str(error.events_matched)),
        ("mean timing error of matched", "n/a" if error.timing_error_s is None else f"{error.timing_error_s:.0f} s"),
        ("decisions matched (all syncs)", _share(error.decision_match)),
        ("decisions matched (either moved)", _share(error.decision_match_moving)),
    ]
    for name, (mae, rmse) in comparison.secondary.items():
        rows.append((f"{name} MAE / RMSE", "n/a" if mae is None else f"{mae:,.3g} / {rmse:,.3g}"))
    for row in rows:
        table.add_row(*row)
    return table


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"
