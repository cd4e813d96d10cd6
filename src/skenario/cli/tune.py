"""`skenario tune`: search a scenario's settings for the best within constraints, with Optuna.

Like `sweep`, it loads the sweep extra only once a study is asked for, after checking it is there.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from skenario.cli.common import err, out, output_option, plugin_options, print_document, store_option
from skenario.cli.store import run_store
from skenario.cli.sweep import execution_options, failures, price_options, progress_bar
from skenario.cli.sweeptables import figure_cell, headings, number, present
from skenario.errors import SkenarioError
from skenario.results.store import check_label
from skenario.runs import Interruption
from skenario.scenario.format.scenario import MAX_SEED
from skenario.sweeps.extra import require_sweep_extra


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--space",
    "space",
    multiple=True,
    metavar="PATH=LO..HI[:int|:log]",
    help="A scenario field to search and its range (or PATH=V1,V2,... to choose among); may be given again.",
)
@click.option(
    "--objective",
    "objectives",
    multiple=True,
    metavar="min|max:FIGURE",
    help="What to make small or large: p99, error_rate, replica_hours, cpu_core_hours, node_hours, cost, "
    "slo_compliance, slo_met.",
)
@click.option(
    "--constraint",
    "constraints",
    multiple=True,
    metavar="FIGURE<=X|FIGURE>=X",
    help="A bound every kept setting meets across its seeds' 95% interval, such as slo_compliance>=0.99.",
)
@click.option(
    "--trials", type=int, default=20, show_default=True, help="Settings to try, in all (a resumed study too)."
)
@click.option("--seeds", type=int, default=3, show_default=True, help="Runs per trial, with the same seeds at each.")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None, help="The first seed (default spec.seed).")
@click.option("--batch", type=int, default=4, show_default=True, help="Trials run at once (whatever the --workers).")
@click.option(
    "--study", "study_name", default=None, help="The study's name in the store (default: scenario and options)."
)
@click.option(
    "--to",
    "--out",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for pareto.parquet, trials.parquet, pareto.png, report.html and best.yaml (default tune-NAME).",
)
@execution_options
@price_options
@output_option("table", "wide", "json", "yaml")
@plugin_options
@store_option
@click.option("--no-store", is_flag=True, help="Keep the study in memory only: it cannot be resumed.")
def tune(
    file: Path,
    space: tuple[str, ...],
    objectives: tuple[str, ...],
    constraints: tuple[str, ...],
    trials: int,
    seeds: int,
    seed: int | None,
    batch: int,
    study_name: str | None,
    folder: Path | None,
    workers: int | None,
    dask: str | None,
    no_progress: bool,
    price_per_replica_hour: float | None,
    price_per_cpu_hour: float | None,
    price_per_gib_hour: float | None,
    price_per_node_hour: float | None,
    output: str,
    store: Path | None,
    no_store: bool,
) -> None:
    """Search the settings of the scenario in FILE for the best objectives within the constraints; print the
    Pareto front and write it, a plot, a report and best.yaml (the scenario with the best settings)."""
    require_sweep_extra("tune")
    from skenario.sweeps import api

    if study_name is not None:
        check_label(study_name, "--study")
    prepared = api.prepare_study(
        file,
        space=space,
        objectives=objectives,
        constraints=constraints,
        trials=trials,
        seeds=seeds,
        seed=seed,
        batch=batch,
        prices=api.Prices(price_per_replica_hour, price_per_cpu_hour, price_per_gib_hour, price_per_node_hour),
        study=study_name,
    )
    folder = folder or Path(f"tune-{prepared.template.name}")
    if folder.exists() and not folder.is_dir():
        raise SkenarioError("exists and is not a folder", field="--to", value=str(folder))
    kept = None if no_store else run_store(store)
    stop = Interruption()
    with (
        stop,
        api.open_workers(workers, dask) as pool,
        progress_bar("trials", trials, no_progress or output in ("json", "yaml")) as update,
    ):
        progress = None if update is None else lambda done, total: update(completed=done, total=total)
        result = api.run_prepared_study(prepared, pool, store=kept, progress=progress)
    failures((f"trial {trial['trial']}", trial.get("error")) for trial in result.trials.to_dict("records"))
    files = api.write_study(result, prepared, folder)
    paths = [d.path for d in prepared.options.space.dimensions]
    if output in ("json", "yaml"):
        records = result.pareto.to_dict("records") if not result.pareto.empty else []
        document = {"study": prepared.name, "trials": len(result.trials), "pareto": records}
        document |= {"files": {name: str(path) for name, path in files.items()}}
        print_document(document, output)
    else:
        title = f"study {prepared.name}: Pareto front of {len(result.trials)} trial(s)"
        out.print(_front_table(result.pareto, paths, title))
        if result.best is None:
            out.print("no trial kept every constraint: no best.yaml", highlight=False)
        for name, path in files.items():
            out.print(f"{name}: {path}", highlight=False)
        if not no_store:
            again = f"resume or extend: run the same command again (study [bold]{escape(prepared.name)}[/])"
            out.print(again, highlight=False, markup=True)
    if result.interrupted:
        err.print(f"[bold red]interrupted[/]: kept the {len(result.trials)} trial(s) that finished", markup=True)
        sys.exit(stop.exit_code)


def _front_table(front: Any, paths: list[str], title: str) -> Table:
    names = headings(paths)
    table = Table(title=f"{title} (mean ± 95% interval)")
    table.add_column("trial", justify="right")
    for path in paths:
        table.add_column(names[path], justify="right")
    figures = present(front) if not front.empty else []
    for _, heading in figures:
        table.add_column(heading, justify="right")
    for record in front.to_dict("records") if not front.empty else []:
        cells = [number(record["trial"]), *(number(record[p]) for p in paths)]
        cells += [figure_cell(m, record) for m, _ in figures]
        table.add_row(*cells)
    return table
