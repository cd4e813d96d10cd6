"""`skenario calibrate`: fit what no manifest says so that runs follow their observed clusters.

Like `tune`, it loads the sweep extra (Optuna) only once a calibration is asked for.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from skenario.cli.common import out, output_option, plugin_options, print_document
from skenario.cli.sweep import execution_options, progress_bar
from skenario.scenario.format.scenario import MAX_SEED
from skenario.sweeps.extra import require_sweep_extra


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--fit",
    "fits",
    multiple=True,
    required=True,
    metavar="PATH=LO..HI[:log]",
    help="A scenario field to fit and its range, such as workload.request.cpuTime=20ms..60ms; may be given again.",
)
@click.option(
    "--validate",
    "held_out",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A scenario (with spec.observed) the fit never sees: its error is the held-out figure; may be given again.",
)
@click.option("--trials", type=int, default=30, show_default=True, help="Settings to try.")
@click.option("--seeds", type=int, default=1, show_default=True, help="Runs per scenario and trial, seed by seed.")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=0, show_default=True, help="The first seed.")
@click.option("--batch", type=int, default=4, show_default=True, help="Trials run at once (whatever the --workers).")
@click.option("--no-write", is_flag=True, help="Do not write the calibrated scenarios.")
@execution_options
@output_option("table", "json", "yaml")
@plugin_options
def calibrate(
    files: tuple[Path, ...],
    fits: tuple[str, ...],
    held_out: tuple[Path, ...],
    trials: int,
    seeds: int,
    seed: int,
    batch: int,
    no_write: bool,
    workers: int | None,
    dask: str | None,
    no_progress: bool,
    output: str,
) -> None:
    """Fit what no manifest says so the scenarios follow the replicas their clusters recorded; errors in-sample
    and held out.

    The --fit fields are searched so the scenarios in FILES follow their spec.observed replicas; the error is
    reported in-sample and on the --validate scenarios, and each is written as NAME.calibrated.yaml beside it."""
    require_sweep_extra("calibrate")
    from skenario.sweeps import api

    with (
        api.open_workers(workers, dask) as pool,
        progress_bar("trials", trials, no_progress or output != "table") as update,
    ):
        progress = None if update is None else lambda done, total: update(completed=done, total=total)
        result, written = api.calibrate(
            files,
            fits,
            validate=held_out,
            trials=trials,
            seeds=seeds,
            seed=seed,
            batch=batch,
            pool=pool,
            write=not no_write,
            progress=progress,
        )
    if output != "table":
        runs = [
            {
                "scenario": r.name,
                "set": "held-out" if r.held_out else "in-sample",
                **{name: _mean(i) for name, i in r.figures.items()},
                "errors": list(r.errors),
            }
            for r in result.runs
        ]
        files_written = {name: str(path) for name, path in written.items()}
        document: dict[str, Any] = {
            "best": result.best,
            "loss": result.best_loss,
            "runs": runs,
            "written": files_written,
        }
        document["trials"] = result.trials
        print_document(document, output)
        return
    best = Table(title=f"fitted over {len(result.trials)} trial(s): mean replica MAE {result.best_loss:.3f} in-sample")
    best.add_column("field")
    best.add_column("value", justify="right")
    for path, value in result.best.items():
        best.add_row(path, str(value))
    out.print(best)
    out.print(errors_table(result.runs))
    for name, target in written.items():
        out.print(f"{name}: {target}", highlight=False)


def _mean(interval: Any) -> float | None:
    """An interval's mean, None when no run gave the figure."""
    mean = interval.mean
    return None if mean is None or math.isnan(mean) else float(mean)


def errors_table(runs: Any) -> Table:
    """Each scenario's trajectory error with the fitted values, in-sample and held out apart."""
    table = Table(title="replica-trajectory error with the fitted values (mean over seeds)")
    for heading in ("scenario", "set", "MAE", "replica-seconds", "events obs / sim / matched", "decisions matched"):
        table.add_column(heading, justify="left" if heading in ("scenario", "set") else "right")
    for run in runs:
        f = {name: _mean(interval) for name, interval in run.figures.items()}
        pct = f["replica_seconds_error_pct"]
        events = " / ".join(
            "n/a" if f[k] is None else f"{f[k]:.0f}"
            for k in ("scale_events_observed", "scale_events_simulated", "scale_events_matched")
        )
        match = f["decision_match"]
        mae = f["replica_mae"]
        table.add_row(
            run.name,
            "held-out" if run.held_out else "in-sample",
            "n/a" if mae is None else f"{mae:.2f}",
            "n/a" if pct is None else f"{pct:+.1f}%",
            events,
            "n/a" if match is None else f"{match:.1%}",
        )
    return table
