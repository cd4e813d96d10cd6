"""`skenario check`: read and validate a scenario in full, and say what running it would cost.

KEP-140 input (a KEP-140 Scenario, a kube-scheduler-simulator export or recording, told apart as
`skenario run` tells them, `cli.kep.read_kep`) is checked by running its timeline in memory.
"""

from __future__ import annotations

from pathlib import Path

import click

from skenario.cli.common import out, user_errors
from skenario.cli.kep import check_kep, read_kep
from skenario.scenario.format.scenario import Scenario
from skenario.scenario.io import read_text
from skenario.scenario.loader import load_scenario
from skenario.scenario.preflight import LIMITS, estimate, pitfalls


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@user_errors
def check(file: Path) -> None:
    """Validate the scenario in FILE and print an estimate of its run (nothing runs, no plugin is loaded).

    Exits 2 on a mistake in the file; prints the limits the estimate passes, past which
    `skenario run` refuses the scenario unless --force. A KEP-140 Scenario, or a
    kube-scheduler-simulator export or recording, is run in memory instead (it loads no plugin),
    so that an event on an object not there at its step is found; nothing is stored.
    """
    text = read_text(file)
    kep = read_kep(file, text)
    if kep is not None:
        check_kep(kep, file=file, text=text, seed=None)
        return
    preflight(file, load_scenario(file))


def preflight(file: Path, scenario: Scenario) -> None:
    """Print the estimate of the scenario's run, the limits it passes and its pitfalls."""
    cost = estimate(scenario.spec)
    out.print(f"{file}: valid. A run would take about:", highlight=False)
    for line in cost.lines():
        out.print(f"  {line}", highlight=False)
    over = cost.over(LIMITS)
    for phrase in over:
        out.print(f"[bold yellow]over the limit:[/] {phrase}", highlight=False)
    if over:
        out.print("`skenario run` refuses it unless --force.", highlight=False)
    for warning in pitfalls(scenario.spec, Path(file).parent):
        out.print(f"[bold yellow]warning:[/] {warning}", highlight=False)
