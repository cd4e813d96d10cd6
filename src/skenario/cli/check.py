"""`skenario check`: read and validate a scenario in full, and say what running it would cost.

`runs.examine` is the one validation of an input, which `check` and `run --dry-run` call, and
`run` reads the same way (`runs.open_run`): the file parsed and validated (its events dry-run),
then everything it names read and built as the run reads it; `check` reads plugins without
running their code. KEP-140 input (a KEP-140 Scenario, a kube-scheduler-simulator export or
recording) is checked by running its timeline in memory.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click
from rich.markup import escape

from skenario.cli.common import out, output_option, plugin_options, print_document
from skenario.cli.kep import kep_checked
from skenario.runs import BatchRun, KepRun, examine
from skenario.scenario.preflight import LIMITS, estimate, pitfalls
from skenario.scenario.wiring.prepare import Prepared


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@output_option("table", "wide", "json", "yaml")
@plugin_options
def check(file: Path, output: str) -> None:
    """Validate the scenario in FILE and everything it names, as `skenario run` reads them, and print an
    estimate of its run (nothing runs; a plugin's file is read, not run).

    Exits 2 on a mistake in the file or in a file it names (a manifest, a trace, a plugin); prints
    the limits the estimate passes, past which `skenario run` refuses the scenario unless --force.
    A KEP-140 Scenario, or a kube-scheduler-simulator export or recording, is run in memory instead
    (it loads no plugin), so that an event on an object not there at its step is found; nothing is
    stored.
    """
    checked = examine(file)
    if isinstance(checked, KepRun):
        kep_checked(file, checked, output)
    elif isinstance(checked, BatchRun):
        batch_checked(file, checked, output)
    else:
        preflight(file, checked, output)


def batch_checked(file: Path, run: BatchRun, output: str = "table") -> None:
    """A batch replay read whole (its trace, nodes and scheduler configuration), not run: what it holds."""
    document = {"file": str(file), "valid": True, "kind": "BatchReplay"} | run.contents()
    if output in ("json", "yaml"):
        print_document(document, output)
        return
    held = ", ".join(f"{value:,} {key}" for key, value in run.contents().items() if isinstance(value, int))
    out.print(f"{file}: valid. A replay under {run.scheduler} of {held}.", highlight=False, soft_wrap=True)


def preflight(file: Path, prepared: Prepared, output: str = "table") -> None:
    """Print the estimate of the scenario's run, the limits it passes and its pitfalls (as a document
    for `-o json|yaml`: the estimate's fields, the limits passed, the warnings)."""
    cost = estimate(prepared)
    if output in ("json", "yaml"):
        document = {"file": str(file), "valid": True, "kind": "scenario", "estimate": dataclasses.asdict(cost)}
        document |= {"over_limits": cost.over(LIMITS), "warnings": list(pitfalls(prepared))}
        print_document(document, output)
        return
    out.print(f"{file}: valid. A run would take about:", highlight=False)
    for line in cost.lines():
        out.print(f"  {line}", highlight=False, soft_wrap=True)
    over = cost.over(LIMITS)
    for phrase in over:
        out.print(f"[bold yellow]over the limit:[/] {escape(phrase)}", highlight=False, markup=True)
    if over:
        out.print("`skenario run` refuses it unless --force.", highlight=False)
    for warning in pitfalls(prepared):
        out.print(f"[bold yellow]warning:[/] {escape(warning)}", highlight=False, markup=True)
