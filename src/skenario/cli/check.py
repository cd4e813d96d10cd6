"""`skenario check`: read and validate a scenario in full, and say what running it would cost.

`validated` is the one validation of a scenario file, which `check`, `run --dry-run` and `run`
all call: the file parsed and validated (its events dry-run), then everything it names read and
built by `wiring.prepare` as the run reads it (manifests, traces, plugins, the files its events
bring in), and the run's own refusal of a scenario that never ends. `check` and `run --dry-run`
check plugins without running their code (`wiring.plugins.unloaded`); `run` loads them. So check
and run agree on every file but where only a plugin's code can tell.

KEP-140 input (a KEP-140 Scenario, a kube-scheduler-simulator export or recording, told apart as
`skenario run` tells them, `cli.kep.read_kep`) is checked by running its timeline in memory.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Literal

import click

from skenario.cli.common import out, user_errors
from skenario.cli.kep import check_kep, read_kep
from skenario.errors import SkenarioError
from skenario.scenario.io import located, read_text
from skenario.scenario.loader import parse_scenario
from skenario.scenario.preflight import LIMITS, estimate, pitfalls
from skenario.scenario.wiring.plugins import refused, unloaded
from skenario.scenario.wiring.prepare import Prepared, prepare

Plugins = Literal["check", "load", "refuse"]


@click.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@user_errors
def check(file: Path) -> None:
    """Validate the scenario in FILE and everything it names, as `skenario run` reads them, and print an
    estimate of its run (nothing runs; a plugin's file is read, not run).

    Exits 2 on a mistake in the file or in a file it names (a manifest, a trace, a plugin); prints
    the limits the estimate passes, past which `skenario run` refuses the scenario unless --force.
    A KEP-140 Scenario, or a kube-scheduler-simulator export or recording, is run in memory instead
    (it loads no plugin), so that an event on an object not there at its step is found; nothing is
    stored.
    """
    text = read_text(file)
    kep = read_kep(file, text)
    if kep is not None:
        check_kep(kep, file=file, text=text, seed=None)
        return
    preflight(file, validated(file, text))


def validated(file: Path, text: str, *, seed: int | None = None, plugins: Plugins = "check") -> Prepared:
    """The scenario FILE holds (`text`), read and checked as `skenario run` reads it, ready to run.

    `plugins`: "check" reads a plugin without running its code (check, run --dry-run), "load" runs
    it (run), "refuse" refuses it (run --no-plugins). A mistake found in a file the scenario names
    but not said against a file of its own is said against FILE, with the line of its field.
    """
    scenario = parse_scenario(text, str(file))
    mode: AbstractContextManager[None] = (
        unloaded() if plugins == "check" else refused() if plugins == "refuse" else nullcontext()
    )
    try:
        with mode:
            prepared = prepare(scenario, seed=seed, base_dir=file.parent)
    except SkenarioError as exc:
        raise located(exc, str(file), text) from None
    if prepared.end is None:
        raise SkenarioError(
            "the scenario never ends: give spec.duration or a `done` event", file=str(file), field="spec.duration"
        )
    return prepared


def preflight(file: Path, prepared: Prepared) -> None:
    """Print the estimate of the scenario's run, the limits it passes and its pitfalls."""
    cost = estimate(prepared)
    out.print(f"{file}: valid. A run would take about:", highlight=False)
    for line in cost.lines():
        out.print(f"  {line}", highlight=False, soft_wrap=True)
    over = cost.over(LIMITS)
    for phrase in over:
        out.print(f"[bold yellow]over the limit:[/] {phrase}", highlight=False)
    if over:
        out.print("`skenario run` refuses it unless --force.", highlight=False)
    for warning in pitfalls(prepared):
        out.print(f"[bold yellow]warning:[/] {warning}", highlight=False)
