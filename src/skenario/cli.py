"""The `skenario` command line: thin, it parses input, calls the library and renders output.

User mistakes (a bad scenario file, a wrong unit) print one line and exit 2 with no traceback;
a bug keeps its traceback and exits 1.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from skenario import __version__
from skenario.core.environment import Environment
from skenario.core.time import SECOND, format_duration
from skenario.errors import SkenarioError
from skenario.results.summary import Summary
from skenario.scenario.loader import load_scenario
from skenario.scenario.simulation import Simulation

F = TypeVar("F", bound=Callable[..., Any])

# Piped output has no terminal width to follow; 120 columns keep the tables whole.
out = Console(width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True)

PROGRESS_STEPS = 100


def _user_errors(command: F) -> F:
    """Turn a SkenarioError into one clear line on stderr and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except SkenarioError as exc:
            err.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True, soft_wrap=True)
            sys.exit(2)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skenario")
def cli() -> None:
    """skenario: simulate Kubernetes autoscaling and scheduling, hours of it in seconds."""


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Override the scenario's seed.")
@click.option("--show-ignored", is_flag=True, help="Also print the ignored movements and why they were ignored.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object instead of a table.")
@click.option("--no-progress", is_flag=True, help="Do not draw a progress bar.")
@click.option(
    "--series",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the time series (one row per recording interval) to this CSV file.",
)
@_user_errors
def run(
    file: Path, seed: int | None, show_ignored: bool, as_json: bool, no_progress: bool, series: Path | None
) -> None:
    """Run the scenario in FILE and print a summary of what happened."""
    scenario = load_scenario(file)
    if series is not None and not series.parent.is_dir():
        raise SkenarioError("no such directory for the time series", field="--series", value=str(series))
    simulation = Simulation(scenario, seed=seed, base_dir=file.parent)
    halt = simulation.env.halt_at
    started = time.perf_counter()
    if no_progress or as_json:
        summary = simulation.run()
    else:
        with Progress(
            TextColumn(f"[bold]{scenario.metadata.name}"),
            BarColumn(),
            TextColumn("{task.fields[simulated]} simulated"),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("run", total=halt, simulated=format_duration(0))

            def advance(now: int) -> None:
                progress.update(task, completed=now, simulated=format_duration(now))

            summary = simulation.run(steps=PROGRESS_STEPS, progress=advance)
    wall = time.perf_counter() - started
    if series is not None:
        _write_atomically(series, simulation.recorder.frame().to_csv(index=False))
    if as_json:
        document = summary.as_dict() | {"wall_s": wall, "speedup": summary.simulated_ns / SECOND / wall}
        click.echo(json.dumps(document, indent=2))
        return
    out.print(_summary_table(summary, wall))
    out.print(f"digest: [bold]{summary.digest}[/]", highlight=False)
    if show_ignored:
        out.print(_ignored_table(simulation.env))


def _write_atomically(path: Path, text: str) -> None:
    """Write the whole file or nothing: a half-written result is worse than none."""
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    partial.replace(path)


def _ms(ns: int | float | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:,.1f} ms"


def _summary_table(summary: Summary, wall: float) -> Table:
    table = Table(title=f"scenario {summary.scenario} (seed {summary.seed})", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    failed = f"{summary.requests_failed:,}"
    if summary.failures:
        failed += " (" + ", ".join(f"{reason}: {n:,}" for reason, n in summary.failures.items()) + ")"
    rows = [
        ("simulated time", format_duration(summary.simulated_ns)),
        ("requests arrived", f"{summary.requests_arrived:,}"),
        ("requests completed", f"{summary.requests_completed:,}"),
        ("requests failed", failed),
        ("requests in flight at halt", f"{summary.requests_in_flight:,}"),
        ("latency p50", _ms(summary.latency_p50_ns)),
        ("latency p95", _ms(summary.latency_p95_ns)),
        ("latency p99", _ms(summary.latency_p99_ns)),
        ("latency mean", _ms(summary.latency_mean_ns)),
        ("CPU utilisation (of capacity)", "-" if summary.cpu_utilisation is None else f"{summary.cpu_utilisation:.1%}"),
        ("replicas desired / active at halt", f"{summary.replicas_desired:,} / {summary.replicas_active:,}"),
        ("replicas started / terminated", f"{summary.replicas_started:,} / {summary.replicas_terminated:,}"),
        ("movements completed", f"{summary.movements_completed:,}"),
        ("movements ignored", f"{summary.movements_ignored:,}"),
        ("wall time", f"{wall:.3f} s"),
        ("speed-up (simulated / wall)", f"{summary.simulated_ns / SECOND / wall:,.0f}x"),
    ]
    for what, value in rows:
        table.add_row(what, value)
    return table


def _ignored_table(env: Environment) -> Table:
    """Ignored movements grouped by kind and reason, with one example route and the first time."""
    groups: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], tuple[str, int]] = {}
    for movement, reason in env.ignored:
        key = (movement.kind, str(reason))
        groups[key] += 1
        route = f"{movement.from_stock.name} -> {movement.to_stock.name}"
        example.setdefault(key, (route, movement.occurs_at))
    kept = len(env.ignored)
    title = "ignored movements"
    if kept < env.movements_ignored:
        title += f" (first {kept:,} of {env.movements_ignored:,})"
    table = Table(title=title)
    table.add_column("kind")
    table.add_column("reason", no_wrap=True)
    table.add_column("count", justify="right")
    table.add_column("first at", justify="right")
    table.add_column("example route", overflow="fold")
    for key, n in groups.most_common():
        route, at = example[key]
        table.add_row(*key, f"{n:,}", f"{at / SECOND:,.3f} s", route)
    if not groups:
        table.add_row("-", "none", "0", "", "")
    return table


def main() -> None:
    cli()
