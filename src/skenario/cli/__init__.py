"""The `skenario` command line: thin, it parses input, calls the library and renders output.

User mistakes (a bad scenario file, a wrong unit, an unknown run) print one line and exit 2 with
no traceback; a bug keeps its traceback and exits 1: `Commands.invoke` does it once for every
command. Each command lives in its own module, imported only when that command runs, so that
`skenario --help` and `--version` load neither the simulator nor numpy (`benchmarks/startup.py`).
"""

from __future__ import annotations

import copy
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import click

from skenario.errors import SkenarioError
from skenario.version import __version__, compiled


@dataclass(frozen=True)
class Entry:
    """A command as the group lists it before importing it: where it lives ("module:attribute"), the
    first paragraph of its help (what `--help` shortens; `tests/cli/test_lazy.py` checks it against the
    command's own) and whether it is hidden."""

    where: str
    help: str
    hidden: bool = False


THEORY = "Simulate standard queueing models and set each analytic value beside the simulated 95% interval."

COMMANDS: dict[str, Entry] = {
    "calibrate": Entry(
        "skenario.cli.calibrate:calibrate",
        "Fit what no manifest says so the scenarios follow the replicas their clusters recorded; errors in-sample "
        "and held out.",
    ),
    "check": Entry(
        "skenario.cli.check:check",
        "Validate the scenario in FILE and everything it names, as `skenario run` reads them, and print an "
        "estimate of its run (nothing runs; a plugin's file is read, not run).",
    ),
    "compare": Entry(
        "skenario.cli.runs:compare",
        "Compare stored runs side by side: outcomes, latency, replicas, cost and objectives.",
    ),
    "decisions": Entry(
        "skenario.cli.explain:decisions",
        "Every decision of RUN's autoscalers, the raw table: CSV (one column per input) or JSON (nested).",
    ),
    "explain": Entry(
        "skenario.cli.explain:explain",
        "Why RUN's autoscalers did what they did: conditions, inputs and the rule behind each decision. For a batch "
        "replay, why its jobs or workloads wait.",
    ),
    "export": Entry(
        "skenario.cli.runs:export",
        "Export a stored RUN's tables (series, replica_series, replicas, timeline, summary; with a cluster also "
        "pods, nodes, attempts and kep140.json; a batch replay's jobs) to a folder.",
    ),
    "plot": Entry(
        "skenario.cli.runs:plot",
        "Plot a stored RUN to a PNG: replicas, requests, latency, CPU, with its events marked.",
    ),
    "replay": Entry(
        "skenario.cli.replay:replay",
        "Run the scenario in FILE and print how closely it followed what its real cluster recorded.",
    ),
    "report": Entry(
        "skenario.cli.runs:report",
        "Write a stored RUN as one self-contained HTML page with interactive charts.",
    ),
    "run": Entry(
        "skenario.cli.run:run",
        "Run the scenario in FILE, print a summary of what happened and keep the run in the store.",
    ),
    "runs": Entry(
        "skenario.cli.runs:runs",
        "List the stored runs (`runs rm` and `runs gc` delete them, `runs check` checks the store).",
    ),
    "schedule": Entry(
        "skenario.cli.schedule:schedule",
        "Replay TRACE on its nodes: its pods with kube-scheduler (--scheduler's profile, Kueue's admission with "
        "--kueue), or an SLS trace's jobs under YARN's Capacity or Fair Scheduler; keep it in the run store.",
    ),
    "schema": Entry(
        "skenario.cli.schema:schema",
        "Print the JSON Schema of scenario files (editors autocomplete and check with it); defaults are written "
        "as in a scenario (`15s`, `250m`, `16Gi`).",
    ),
    "serve": Entry(
        "skenario.cli.serve:serve",
        "Serve the web dashboard: runs, charts, decisions explained, the scheduler's view, comparisons, sweeps "
        "and a scenario editor, over the run store.",
    ),
    "show": Entry(
        "skenario.cli.runs:show",
        "Show one stored RUN (a number, name, tag or `latest`): summary, objectives, cost and events.",
    ),
    "solve": Entry(
        "skenario.cli.solve:solve",
        "Solve a queueing model file: throughput, response, residence, utilisation and queues.",
    ),
    "sweep": Entry(
        "skenario.cli.sweep:sweep",
        "Run the scenario in FILE at every point of the settings, each with the same seeds, and show each "
        "figure's mean and 95% interval per point.",
    ),
    "sweeps": Entry(
        "skenario.cli.sweep:sweeps",
        "List the sweeps and studies kept in the run store (`sweeps show N` prints one's table).",
    ),
    # The simulator checked against queueing theory: `theory`, so it is not taken for `check`'s
    # validation of a scenario; `validate`, its old name, still works and is no longer listed.
    "theory": Entry("skenario.cli.validate:validate", THEORY),
    "tune": Entry(
        "skenario.cli.tune:tune",
        "Search the settings of the scenario in FILE for the best objectives within the constraints; print the "
        "Pareto front and write it, a plot, a report and best.yaml (the scenario with the best settings).",
    ),
    "validate": Entry("skenario.cli.validate:validate", THEORY, hidden=True),
}


# What prints a user error, loaded like a command: only when there is one (it needs Rich's console).
REPORT_USER_ERROR = "skenario.cli.common:report_user_error"
SHOWN_WRITER = "skenario.cli.terminal:ShownWriter"


def load(where: str) -> Any:
    """The object named "module:attribute", its module imported now."""
    module, attribute = where.split(":")
    return getattr(importlib.import_module(module), attribute)


class Commands(click.Group):
    """The top-level group: commands imported on first use from `COMMANDS`, and user errors reported
    once for all of them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loaded: dict[str, click.Command] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        if cmd_name not in self.loaded:
            command: click.Command = load(entry.where)
            if entry.hidden:  # an old name: the same command, unlisted
                command = copy.copy(command)
                command.hidden = True
            self.loaded[cmd_name] = command
        return self.loaded[cmd_name]

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their short help from `COMMANDS`, as click writes them, importing none."""
        listed = [(name, entry) for name, entry in sorted(COMMANDS.items()) if not entry.hidden]
        limit = formatter.width - 6 - max(len(name) for name, _ in listed)
        rows = [(name, click.Command(name, help=entry.help).get_short_help_str(limit)) for name, entry in listed]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SkenarioError as exc:
            load(REPORT_USER_ERROR)(exc)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """click's own, but its usage errors (which quote what was typed) written as text: a control
        character in an argument is shown as its escape (`skenario.cli.terminal.shown`)."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            returned = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as exc:
            exc.show(file=load(SHOWN_WRITER)(sys.stderr))
            sys.exit(exc.exit_code)
        except click.Abort as exc:  # Ctrl-C (130, as a shell reports SIGINT) or end of input at a prompt
            click.echo("Aborted!", err=True)
            sys.exit(130 if isinstance(exc.__cause__, KeyboardInterrupt) else 1)
        sys.exit(returned if isinstance(returned, int) else 0)


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(f"{__version__} (compiled)" if compiled() else __version__, prog_name="skenario")
def cli() -> None:
    """skenario: simulate Kubernetes autoscaling and scheduling, hours of it in seconds."""


def main() -> None:
    cli()
