"""`skenario sweep`: one scenario over settings and seeds; `skenario sweeps`: the sweeps kept in the store.

The sweep extra (SciPy, Optuna, Dask) loads only once a sweep is asked for, after
`require_sweep_extra` has checked it is there: without it, one line says what to install.
"""

from __future__ import annotations

import functools
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from skenario.cli.common import (
    check_output_dirs,
    err,
    one_line,
    out,
    output_option,
    plugin_options,
    print_csv,
    print_document,
    store_option,
    to_option,
)
from skenario.cli.store import run_store
from skenario.cli.sweeptables import points_table, sweeps_table
from skenario.results.files import atomic_path
from skenario.results.store import check_label
from skenario.runs import Interruption
from skenario.scenario.format.scenario import MAX_SEED
from skenario.sweeps.extra import require_sweep_extra

if TYPE_CHECKING:
    import pandas as pd

    from skenario.sweeps.sweep import SweepRows

DESIGN_NAMES = ("grid", "lhs", "sobol")

parquet_option = to_option("Write every run (point, seed, figures) to this Parquet file.")


def price_options(command: Any) -> Any:
    """`--price-per-replica-hour`, `--price-per-cpu-hour`, `--price-per-gib-hour` and `--price-per-node-hour`:
    what `cost` counts (`analysis.cost`)."""
    for kind, what in (
        ("node", "node (with spec.cluster)"),
        ("gib", "requested GiB of memory"),
        ("cpu", "CPU core (the larger of request and use, as OpenCost's cpuCoreHours)"),
        ("replica", "replica (a pod bound to a node)"),
    ):
        command = click.option(
            f"--price-per-{kind}-hour",
            type=click.FloatRange(0),
            default=None,
            help=f"The price of a {what} for an hour: the cost column counts it.",
        )(command)
    return command


def execution_options(command: Any) -> Any:
    """Where the runs go (`--workers`, `--dask`) and how they are followed (`--no-progress`)."""
    command = click.option("--no-progress", is_flag=True, help="Do not draw a progress bar.")(command)
    command = click.option(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="Run on this Dask distributed cluster (tcp://HOST:8786) instead of local processes.",
    )(command)
    return click.option(
        "--workers",
        type=click.IntRange(1, 4096),
        default=None,
        help="Local worker processes (default: one per core).",
    )(command)


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="PATH=V1,V2,...|LO..HI",
    help="Values of a scenario field for a grid, or a range for --design lhs|sobol; may be given again.",
)
@click.option(
    "--seeds", type=int, default=3, show_default=True, help="Replications per point, the same at every point."
)
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None, help="The first seed (default spec.seed).")
@click.option("--design", type=click.Choice(DESIGN_NAMES), default="grid", show_default=True)
@click.option("--samples", type=int, default=None, help="Points a design samples from the ranges.")
@click.option("--baseline", type=int, default=None, metavar="POINT", help="Also show each point's paired difference.")
@execution_options
@price_options
@parquet_option
@output_option("table", "wide", "json", "yaml", "csv", to=True)
@click.option("--name", default=None, help="A name to find the sweep by in `skenario sweeps`.")
@plugin_options
@store_option
@click.option("--no-store", is_flag=True, help="Keep neither the sweep nor its runs in the run store.")
def sweep(
    file: Path,
    sets: tuple[str, ...],
    seeds: int,
    seed: int | None,
    design: str,
    samples: int | None,
    baseline: int | None,
    workers: int | None,
    dask: str | None,
    no_progress: bool,
    price_per_replica_hour: float | None,
    price_per_cpu_hour: float | None,
    price_per_gib_hour: float | None,
    price_per_node_hour: float | None,
    to: Path | None,
    output: str,
    name: str | None,
    store: Path | None,
    no_store: bool,
) -> None:
    """Run the scenario in FILE at every point of the settings, each with the same seeds, and show each
    figure's mean and 95% interval per point."""
    require_sweep_extra("sweep")
    from skenario.sweeps import api

    if name is not None:
        check_label(name, "--name")
    check_output_dirs(("--to", to))
    prepared = api.prepare_sweep(
        file, sets=sets, seeds=seeds, seed=seed, design=design, samples=samples, baseline=baseline
    )
    total = len(prepared.plan.points) * len(prepared.plan.seeds)
    stop = Interruption()
    with (
        stop,
        api.open_workers(workers, dask) as pool,
        progress_bar("runs", total, no_progress or output not in ("table", "wide")) as update,
    ):
        result = api.run_prepared(
            prepared,
            pool,
            store=None if no_store else run_store(store),
            name=name,
            prices=api.Prices(price_per_replica_hour, price_per_cpu_hour, price_per_gib_hour, price_per_node_hour),
            progress=_counting(update, len(prepared.plan.points), len(prepared.plan.seeds)),
        )
    table = _tables(result, baseline, to)
    if output in ("json", "yaml", "csv"):
        _print_points(table, api.table_document(table, result, baseline), output)
    else:
        title = f"{prepared.plan.template.name}: {len(prepared.plan.points)} point(s) × {seeds} seed(s)"
        if result.sweep_id is not None:
            title = f"sweep {result.sweep_id} · {title}"
        for rendered in points_table(table, title, baseline):
            out.print(rendered)
        if result.sweep_id is not None:
            out.print(
                f"stored as sweep [bold]{result.sweep_id}[/] ({len(result.rows)} runs)", highlight=False, markup=True
            )
    failures((f"point {row['point']}, seed {row['seed']}", row.get("error")) for row in result.rows)
    if result.interrupted:
        err.print(f"[bold red]interrupted[/]: kept the {len(result.rows)} of {total} runs that finished", markup=True)
        sys.exit(stop.exit_code)


def failures(failed: Iterable[tuple[str, Any]]) -> None:
    """Why runs failed (each `(which run or trial, its error)`), on stderr: one line per reason (a plugin's
    failure, a worker lost), with the first it failed and how many more."""
    reasons: dict[str, list[str]] = {}
    for which, error in failed:
        if isinstance(error, str) and error:
            reasons.setdefault(error, []).append(which)
    for reason, where in reasons.items():
        more = f" and {len(where) - 1} more" if len(where) > 1 else ""
        err.print(
            f"[bold red]failed:[/] {where[0]}{more}: {one_line(reason)}", highlight=False, soft_wrap=True, markup=True
        )


def _tables(found: SweepRows, baseline: int | None, parquet: Path | None) -> pd.DataFrame:
    """The points table to show; every run written to `parquet` first, if asked (whole or not at all)."""
    if parquet is not None:
        with atomic_path(parquet) as partial:
            found.runs().to_parquet(partial, index=False)
    return found.points(baseline)


def _print_points(table: pd.DataFrame, document: dict[str, Any], output: str) -> None:
    """A sweep's points as one JSON or YAML document, or as CSV: the table's columns, unrounded."""
    if output == "csv":
        frame = table.reset_index() if table.index.name is not None else table
        print_csv([str(c) for c in frame.columns], frame.itertuples(index=False))
    else:
        print_document(document, output)


@contextmanager
def progress_bar(label: str, total: int, quiet: bool) -> Iterator[Callable[..., object] | None]:
    """A bar of `label` done out of `total` with the time remaining, on stderr; its `update(**fields)`
    (rich's `completed`, `advance`, `total`, and `note` shown beside the count), or None when `quiet`."""
    if quiet:
        yield None
        return
    columns = (
        TextColumn(f"[bold]{escape(label)}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[note]}", markup=False),
    )
    with Progress(*columns, TimeRemainingColumn(), console=err, transient=True) as bar:
        task = bar.add_task(label, total=total, note="")
        yield functools.partial(bar.update, task)


def _counting(update: Callable[..., object] | None, points: int, seeds: int) -> Callable[[dict[str, Any]], None] | None:
    """Each finished run moves the bar on; beside it, the points with every seed done, and the failed runs."""
    if update is None:
        return None
    done: Counter[int] = Counter()
    failed = 0

    def advance(row: dict[str, Any]) -> None:
        nonlocal failed
        done[row["point"]] += 1
        failed += row.get("error") is not None
        complete = sum(count == seeds for count in done.values())
        note = f"points {complete}/{points}" + (f", {failed} failed" if failed else "")
        update(advance=1, note=note)

    return advance


@click.group(invoke_without_command=True)
@store_option
@click.option("--last", type=click.IntRange(1), default=None, help="Only the newest N sweeps.")
@output_option("table", "wide", "json", "yaml", "csv")
@click.pass_context
def sweeps(context: click.Context, store: Path | None, last: int | None, output: str) -> None:
    """List the sweeps and studies kept in the run store (`sweeps show N` prints one's table)."""
    if context.invoked_subcommand is not None:
        return
    runs_store = run_store(store)
    found = runs_store.sweeps(last=last)
    if output in ("json", "yaml"):
        print_document(found, output)
        return
    if output == "csv":
        print_csv(list(found[0]) if found else [], ([*record.values()] for record in found))
        return
    out.print(sweeps_table(found, f"sweeps in {runs_store.path}"))


@sweeps.command("show")
@click.argument("sweep_ref", metavar="SWEEP")
@click.option("--baseline", type=int, default=None, metavar="POINT", help="Also show each point's paired difference.")
@parquet_option
@output_option("table", "wide", "json", "yaml", "csv", to=True)
@store_option
def show_sweep(sweep_ref: str, baseline: int | None, to: Path | None, output: str, store: Path | None) -> None:
    """The table of SWEEP (a number, a name, `latest` or -N) from the runs it kept: nothing is run again."""
    require_sweep_extra("sweeps show")
    from skenario.sweeps import api

    check_output_dirs(("--to", to))
    stored = api.stored_sweep(run_store(store), sweep_ref)
    table = _tables(stored, baseline, to)
    if output in ("json", "yaml", "csv"):
        _print_points(table, api.table_document(table, stored, baseline), output)
        return
    record = stored.record
    title = f"{record['kind']} {record['sweep']} · {record['scenario']} · {record['phase']}"
    for rendered in points_table(table, title, baseline):
        out.print(rendered)


@sweeps.command("rm")
@click.argument("sweep_ref", metavar="SWEEP")
@store_option
def remove_sweep(sweep_ref: str, store: Path | None) -> None:
    """Delete SWEEP, its points and every run it made."""
    runs_store = run_store(store)
    record = runs_store.sweep_record(sweep_ref)
    if record["kind"] == "study":
        require_sweep_extra("sweeps rm")  # a study's trials are in Optuna's tables too
    sweep_id, run_ids = runs_store.remove_sweep(sweep_ref)
    if record["kind"] == "study":  # forgotten there too, so the name can begin anew
        from skenario.sweeps import api

        api.remove_study(runs_store, record["name"])
    out.print(f"deleted sweep {sweep_id} and its {len(run_ids)} run(s)", highlight=False)
