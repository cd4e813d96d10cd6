"""`skenario run`: run any input (`runs.open_run`), show its summary, keep it in the run store.

The command parses, calls `skenario.runs` and renders: which kind of file it is, the signals and
the memory budget (a run stopped early is kept as Failed with what it recorded) all live there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from skenario.cli.check import batch_checked, preflight
from skenario.cli.common import (
    check_output_dirs,
    err,
    out,
    output_option,
    plugin_options,
    print_document,
    print_json,
    store_option,
)
from skenario.cli.kep import announce, kep_checked, render_kep
from skenario.cli.scheduling import batch_table, scheduling_table, write_results
from skenario.cli.store import run_store
from skenario.cli.tables import class_table, ignored_table, summary_table, workloads_table
from skenario.core.time import SECOND, format_duration, parse_duration
from skenario.errors import Halt, SkenarioError
from skenario.results.analysis import cost
from skenario.results.files import atomic_path
from skenario.results.readout import node_cpu_rows
from skenario.results.rundata import RunData
from skenario.results.store import RunStore, check_label
from skenario.runs import (
    BatchRun,
    Executed,
    KepRun,
    PluginFailed,
    Stopped,
    describe,
    examine,
    execute,
    keep_unbuilt,
    open_run,
)
from skenario.runs.inputs import Window
from skenario.runs.supervise import DEFAULT_MEMORY_SHARE, loading, memory_budget
from skenario.scenario.format.scenario import MAX_SEED
from skenario.scenario.simulation import Phase, Simulation
from skenario.scenario.wiring.fluid import cpu_time_warnings, fluid_warnings


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None, help="Override the scenario's seed.")
@click.option(
    "--mode",
    type=click.Choice(["discrete", "fluid", "both"]),
    default=None,
    help="Override spec.mode: every request simulated (discrete), requests as flows (fluid), or both, side by "
    "side with their differences.",
)
@click.option(
    "--window",
    metavar="START..END",
    default=None,
    help="Run only this stretch of the scenario's time (86h..87h): its traffic then, from the replicas a fluid "
    "run of the scenario had at START (a critical hour of a long fluid run, checked request by request).",
)
@click.option("--show-ignored", is_flag=True, help="Also print the ignored movements and why they were ignored.")
@output_option("table", "wide", "json", "yaml")
@click.option("--no-progress", is_flag=True, help="Do not draw a progress bar.")
@click.option("--no-store", is_flag=True, help="Do not keep the run in the run store.")
@plugin_options
@click.option("--force", is_flag=True, help="Run even a scenario whose estimate passes the limits (skenario check).")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Validate and estimate the run as `skenario check` does; run nothing (KEP-140 input runs in memory).",
)
@click.option(
    "--max-memory",
    default=None,
    metavar="SIZE",
    help="Stop the run, kept as Failed, past this resident memory: 2GiB, 500MiB, 50%; 0 or none for no limit "
    f"(default {DEFAULT_MEMORY_SHARE:.0%} of physical memory).",
)
@click.option("--name", default=None, help="A name to refer to the run by (the newest run of a name wins).")
@click.option("--tag", "tags", multiple=True, help="A tag to find the run by; may be given again.")
@store_option
@click.option(
    "--series",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the time series (one row per recording interval) to this CSV file.",
)
@click.option(
    "--pods",
    "pods_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With spec.cluster: write one row per pod (created, bound, node, wait, end) to this CSV file.",
)
@click.option(
    "--results",
    "results_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With spec.cluster: write KEP-140's PodResults (every attempt's plugin results) and the timeline as JSON.",
)
def run(
    file: Path,
    seed: int | None,
    mode: str | None,
    window: str | None,
    show_ignored: bool,
    output: str,
    no_progress: bool,
    no_store: bool,
    force: bool,
    dry_run: bool,
    max_memory: str | None,
    name: str | None,
    tags: tuple[str, ...],
    store: Path | None,
    series: Path | None,
    pods_file: Path | None,
    results_file: Path | None,
) -> None:
    """Run the scenario in FILE, print a summary of what happened and keep the run in the store."""
    budget = memory_budget(max_memory)
    if name is not None:
        check_label(name, "--name")
    for tag in tags:
        check_label(tag, "--tag")
    check_output_dirs(("--series", series), ("--pods", pods_file), ("--results", results_file))
    if dry_run:
        checked = examine(file, seed=seed)
        if isinstance(checked, KepRun):
            kep_checked(file, checked, output)
        elif isinstance(checked, BatchRun):
            batch_checked(file, checked, output)
        else:
            preflight(file, checked, output)
        return
    stretch = _window(file, window, seed) if window is not None else None
    kept = None if no_store else run_store(store)
    if mode == "both":
        _both(file, seed=seed, kept=kept, name=name, tags=tags, budget=budget, output=output, window=stretch)
        return
    try:
        with loading(budget):  # signals and the memory budget hold from the first byte read
            try:
                opened = open_run(file, seed=seed, force=force, mode=mode, window=stretch)
            except PluginFailed as failed:  # the user's code failed, not the input: the run is kept, Failed
                keep_unbuilt(failed, kept, scenario_file=str(file), name=name, tags=tags)
                raise
        if isinstance(opened, KepRun):
            announce(opened)
        quiet = no_progress or output in ("json", "yaml")
        bar = _progress(opened, quiet=quiet) if isinstance(opened, Simulation) else nullcontext(None)
        with bar as advance:
            done = execute(
                opened,
                kept,
                scenario_file=str(file),
                name=name,
                tags=tags,
                budget=budget,
                progress=advance,
                release=True,  # nothing below reads the run's per-replica rows or timeline (the store has them)
            )
    except Stopped as stopped:  # every kind of run stops the same way, and so does reading its input
        where = "" if stopped.run_id is None else f": run {stopped.run_id} kept in the store as Failed"
        err.print(f"[bold red]{escape(str(stopped))}[/]{where}", highlight=False, soft_wrap=True, markup=True)
        raise Halt(stopped.exit_code) from None
    if isinstance(opened, KepRun):
        render_kep(opened, done, output=output, pods_file=pods_file, results_file=results_file)
        return
    if isinstance(opened, BatchRun) and output not in ("json", "yaml"):  # its scheduler's table, as `show` prints
        batch = opened.batch_summary()
        out.print(batch_table(batch, title=f"{opened.name} ({batch['scheduler']}, seed {opened.seed})"))
        out.print(f"digest: [bold]{opened.digest()}[/]", highlight=False, markup=True)
        if done.run_id is not None:
            out.print(
                f"stored as run [bold]{done.run_id}[/] in {escape(str(done.store))}", highlight=False, markup=True
            )
        return
    if not isinstance(opened, Simulation):  # a kind with no table of its own: the shape every kind shares
        print_document(
            describe(opened) | {"run": done.run_id, "wall_s": done.wall_s}, "yaml" if output == "yaml" else "json"
        )
        return
    simulation = opened
    if series is not None:
        with atomic_path(series) as partial:
            simulation.series().to_csv(partial, index=False)
    if simulation.placement is not None:
        write_results(simulation.placement.controller, pods_file, results_file)
    _render(simulation, done, output=output, show_ignored=show_ignored)


def _window(file: Path, text: str, seed: int | None) -> Window:
    """`--window START..END`: that stretch of the scenario, from the replicas its fluid run had at START (the
    scenario's own from the start, or when it cannot run as flows, said on stderr)."""
    start_text, dots, end_text = text.partition("..")
    try:
        start, end = parse_duration(start_text), parse_duration(end_text)
    except ValueError:
        start = end = -1
    if not dots or start < 0 or end <= start:
        raise click.BadParameter(
            f"{text!r}: give START..END, two times with END later, such as 86h..87h", param_hint="--window"
        )
    if start == 0:
        return Window(0, end)
    try:
        with loading(None):
            before = open_run(file, seed=seed, mode="fluid", window=Window(0, start))
            assert isinstance(before, Simulation), "a window is only skenario's own scenarios'"
            replicas = before.run().replicas_desired
    except (SkenarioError, Stopped) as refused:
        err.print(
            f"warning: --window: no fluid run to start from ({escape(str(refused))}); the window starts with the "
            "scenario's own replicas",
            highlight=False,
            soft_wrap=True,
        )
        return Window(start, end - start)
    err.print(
        f"window {format_duration(start)}..{format_duration(end)}: {replicas} replicas to start, as a fluid run "
        f"of the scenario had them at {format_duration(start)}",
        highlight=False,
    )
    return Window(start, end - start, replicas)


def _render(simulation: Simulation, done: Executed, *, output: str, show_ignored: bool) -> None:
    """The run's summary as tables (`-o wide` has no more), or as one JSON or YAML document."""
    wall = done.wall_s
    summary = simulation.summary()
    placement = simulation.placement
    warnings = _fluid_warnings(simulation) if summary.mode == "fluid" else []
    if output in ("json", "yaml"):
        document = summary.as_dict() | {"wall_s": wall, "speedup": summary.simulated_ns / SECOND / wall}
        document |= {"warnings": warnings} if warnings else {}
        if placement is not None:
            document["scheduling"] = placement.summary().as_dict() | placement.autoscaler_figures()
        document |= {"phase": simulation.phase.value, "run": done.run_id}
        print_json(document, output)
        return
    out.print(summary_table(summary, wall))
    for warning in warnings:
        err.print(f"[bold yellow]warning:[/] {escape(warning)}", highlight=False, markup=True, soft_wrap=True)
    if (workloads := workloads_table(summary)) is not None:
        out.print(workloads)
    if (classes := class_table(summary)) is not None:
        out.print(classes)
    if placement is not None:
        extra = [(k, f"{v:,}") for k, v in placement.autoscaler_figures().items()]
        extra += node_cpu_rows(placement.node_cpu_utilisation().values())
        out.print(scheduling_table(placement.summary(), extra=extra))
    out.print(f"digest: [bold]{summary.digest}[/]", highlight=False, markup=True)
    if simulation.phase is not Phase.COMPLETED:
        out.print(f"phase: {simulation.phase.value}: {simulation.message}", highlight=False)
    if done.run_id is not None:
        out.print(f"stored as run [bold]{done.run_id}[/] in {escape(str(done.store))}", highlight=False, markup=True)
    if show_ignored:
        out.print(ignored_table(simulation.env))


BOTH_FIGURES = (
    ("replica_hours", "replica-hours"),
    ("requests_completed", "requests completed"),
    ("requests_failed", "requests failed"),
    ("error_rate", "error rate"),
    ("latency_mean_ns", "latency mean (ms)"),
    ("latency_p50_ns", "latency p50 (ms)"),
    ("latency_p95_ns", "latency p95 (ms)"),
    ("latency_p99_ns", "latency p99 (ms)"),
    ("cpu_request_utilisation", "CPU of request"),
    ("replicas_started", "replicas started"),
)
"""What `--mode both` holds side by side."""


def _both(
    file: Path,
    *,
    seed: int | None,
    kept: RunStore | None,
    name: str | None,
    tags: tuple[str, ...],
    budget: int | None,
    output: str,
    window: Window | None = None,
) -> None:
    """The scenario run discrete, then fluid (each kept, tagged with its mode), and their differences."""
    summaries, walls, ids = {}, {}, {}
    for mode in ("discrete", "fluid"):
        try:
            with loading(budget):
                simulation = open_run(file, seed=seed, mode=mode, window=window)
            assert isinstance(simulation, Simulation), "a mode is only skenario's own scenarios'"
            done = execute(simulation, kept, scenario_file=str(file), name=name, tags=(*tags, mode), budget=budget)
        except Stopped as stopped:
            err.print(f"[bold red]{escape(str(stopped))}[/]", highlight=False, soft_wrap=True, markup=True)
            raise Halt(stopped.exit_code) from None
        summaries[mode], walls[mode], ids[mode] = _both_figures(simulation), done.wall_s, done.run_id
    rows = []
    for key, label in BOTH_FIGURES:
        discrete, fluid = summaries["discrete"].get(key), summaries["fluid"].get(key)
        difference = None if not discrete or fluid is None else (fluid - discrete) / discrete
        rows.append((key, label, discrete, fluid, difference))
    if output in ("json", "yaml"):
        print_json(
            {mode: summaries[mode] | {"wall_s": walls[mode], "run": ids[mode]} for mode in ("discrete", "fluid")}
            | {"differences": {key: difference for key, _, _, _, difference in rows}},
            output,
        )
        return
    table = Table(title=f"{file.name}: discrete and fluid (seed {summaries['discrete']['seed']})")
    for column in ("", "discrete", "fluid", "fluid - discrete"):
        table.add_column(column, justify="left" if not column else "right")
    for key, label, discrete, fluid, difference in rows:
        table.add_row(
            label, _figure(key, discrete), _figure(key, fluid), "-" if difference is None else f"{difference:+.1%}"
        )
    table.add_row(
        "wall time (s)",
        f"{walls['discrete']:.2f}",
        f"{walls['fluid']:.2f}",
        f"{walls['fluid'] / walls['discrete']:.2f}x",
    )
    out.print(table)


def _both_figures(simulation: Simulation) -> dict[str, Any]:
    """The run's summary, with its pods' billed hours (as `show` counts them) and its error rate."""
    summary = simulation.summary()
    finished = summary.requests_completed + summary.requests_failed
    return summary.as_dict() | {
        "replica_hours": cost(RunData.from_simulation(simulation))["replica_hours"],
        "error_rate": summary.requests_failed / finished if finished else None,
    }


def _figure(key: str, value: object) -> str:
    if value is None:
        return "-"
    if key == "replica_hours":
        return f"{float(value):,.2f}"  # type: ignore[arg-type]
    if key.endswith("_ns"):
        return f"{float(value) / 1e6:,.1f}"  # type: ignore[arg-type]
    if key in ("cpu_request_utilisation", "error_rate"):
        return f"{float(value):.2%}"  # type: ignore[arg-type]
    return f"{value:,}"


def _fluid_warnings(simulation: Simulation) -> list[str]:
    """A fluid run's regime: the requests per serving replica, from its series' replica-seconds."""
    series = simulation.series()
    if series.empty:
        return []
    seconds = series["time_ns"].diff().fillna(series["time_ns"]) / SECOND
    replica_seconds = float((series["replicas_active"] * seconds).sum())
    return cpu_time_warnings(simulation.scenario.spec) + fluid_warnings(
        simulation.summary().requests_arrived, replica_seconds
    )


@contextmanager
def _progress(simulation: Simulation, *, quiet: bool) -> Iterator[Callable[[int], object] | None]:
    """A bar of the simulated time on stderr, moved by each stretch of the run; None when `quiet`."""
    if quiet:
        yield None
        return
    with Progress(
        TextColumn(f"[bold]{escape(simulation.scenario.metadata.name)}"),
        BarColumn(),
        TextColumn("{task.fields[simulated]} simulated"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("run", total=simulation.end, simulated=format_duration(0))

        def advance(now: int) -> None:
            progress.update(task, completed=now, simulated=format_duration(now))

        yield advance
