"""`skenario replay`: run a scenario and hold it against what its real cluster recorded.

What was recorded comes from the scenario's `spec.observed`, or from `--observed FILE...` with the
series named by `--replicas`, `--cpu`, `--lag` and `--latency`. The run is kept in the store as
`skenario run` keeps it, with the comparison as its `replay` document: `skenario show` prints it
and `skenario report` draws the observed series over the simulated ones.
"""

from __future__ import annotations

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
from skenario.results.replay import Comparison, compare
from skenario.results.rundata import RunData
from skenario.runs import PluginFailed, Stopped, execute, keep_unbuilt, open_run
from skenario.runs.supervise import loading, memory_budget
from skenario.scenario.format.observed import Observed, ObservedSeries
from skenario.scenario.format.scenario import MAX_SEED
from skenario.scenario.simulation import Simulation
from skenario.scenario.wiring.observed import ObservedRun, read_observed_run
from skenario.workloads.observed import Series, read_observed

ROLES = ("replicas", "cpu", "lag", "latency")


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
@click.option("--cpu", default=None, help="The observed series of CPU used over requested (0..1).")
@click.option("--lag", default=None, help="The observed series of a stream's consumer lag (in messages).")
@click.option("--latency", default=None, help="The observed series of latency (seconds).")
@click.option("--warm-up", "warm_up", default=None, help="Left out of the comparison at the start, such as 5m.")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None, help="Override the scenario's seed.")
@output_option("table", "json", "yaml")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the run store.")
@plugin_options
@store_option
def replay(
    file: Path,
    observed_files: tuple[Path, ...],
    replicas: str | None,
    cpu: str | None,
    lag: str | None,
    latency: str | None,
    warm_up: str | None,
    seed: int | None,
    output: str,
    no_store: bool,
    store: Path | None,
) -> None:
    """Run the scenario in FILE and print how closely it followed what its real cluster recorded.

    The replica-trajectory error (MAE, replica-seconds, scale events, decisions) and the errors of CPU, lag and
    latency; the run is kept with the comparison, which show prints and report draws."""
    names = {"replicas": replicas, "cpu": cpu, "lag": lag, "latency": latency}
    if not observed_files and any(names.values()):
        named = next(f"--{role}" for role, name in names.items() if name)
        raise SkenarioError(f"{named} names a series of an --observed file: give the files with --observed")
    warm = None
    if warm_up is not None:
        try:
            warm = parse_duration(warm_up)
        except ValueError as exc:
            raise SkenarioError(str(exc), field="--warm-up", value=warm_up) from None
        if warm < 0:
            raise SkenarioError("a warm-up is not negative", field="--warm-up", value=warm_up)
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
            observed = _observed(opened, observed_files, names, warm)
        done = execute(opened, kept, scenario_file=str(file), budget=budget)
    except Stopped as stopped:
        where = "" if stopped.run_id is None else f": run {stopped.run_id} kept in the store as Failed"
        err.print(f"[bold red]{escape(str(stopped))}[/]{where}", highlight=False, soft_wrap=True, markup=True)
        raise Halt(stopped.exit_code) from None
    run = RunData.from_simulation(opened)
    try:
        comparison = compare(run, observed)
    except ValueError as exc:
        raise SkenarioError(str(exc), file=str(file), field="spec.observed") from None
    document = replay_document(comparison, observed)
    if kept is not None and done.run_id is not None:
        kept.keep_document(done.run_id, "replay", document)
    if output in ("json", "yaml"):
        print_document({"run": done.run_id, "name": run.name, "seed": run.seed, **comparison.to_dict()}, output)
        return
    out.print(comparison_table(comparison, f"{run.name} (seed {run.seed}) against the observed cluster"))
    if done.run_id is not None:
        out.print(f"stored as run {done.run_id}; skenario report {done.run_id} draws both", highlight=False)


def _observed(
    simulation: Simulation, files: tuple[Path, ...], names: dict[str, str | None], warm_up: int | None
) -> ObservedRun:
    """What the cluster recorded: the scenario's spec.observed, or the series named in the --observed files."""
    spec = simulation.spec
    if files:
        found: dict[str, tuple[Path, Series]] = {}
        for path in files:
            if not path.is_file():
                raise SkenarioError("no such file", field="--observed", value=str(path))
            for name, series in read_observed(path).items():
                found.setdefault(name, (path, series))
        chosen = names | {"replicas": names["replicas"] or "replicas"}
        entries: dict[str, Any] = {}
        for role, wanted in chosen.items():
            if wanted is None:
                continue
            name = wanted
            if name not in found:
                holds = ", ".join(sorted(found)[:8])
                raise SkenarioError(
                    f"no observed series of that name; the files hold {holds}", field=f"--{role}", value=name
                )
            entries[role] = ObservedSeries.model_validate(
                {"file": str(found[name][0].resolve()), "series": name, "gaps": "hold"}
            )
        previous = spec.observed
        settings: dict[str, Any] = {"warm_up": warm_up or 0}
        if previous is not None:  # where the clocks meet and how near events match stay the scenario's
            settings |= {"origin": previous.origin, "tolerance": previous.tolerance}
        observed = Observed.model_validate(entries).model_copy(update=settings)
        spec = spec.model_copy(update={"observed": observed})
    elif spec.observed is None:
        raise SkenarioError(
            "the scenario has no spec.observed: give what the cluster recorded with --observed FILE --replicas NAME",
            field="--observed",
        )
    elif warm_up is not None:
        spec = spec.model_copy(update={"observed": spec.observed.model_copy(update={"warm_up": warm_up})})
    return read_observed_run(spec, simulation.base_dir)


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
    window = f"{error.start_ns / SECOND:,.0f} s to {error.stop_ns / SECOND:,.0f} s"
    pct = error.replica_seconds_error_pct
    rows = [
        ("window compared", window),
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
