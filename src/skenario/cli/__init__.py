"""The `skenario` command line: thin, it parses input, calls the library and renders output.

User mistakes (a bad scenario file, a wrong unit, an unknown run) print one line and exit 2 with
no traceback; a bug keeps its traceback and exits 1. Each command lives in its own module.
"""

from __future__ import annotations

import copy

import click

from skenario.cli.check import check
from skenario.cli.explain import decisions, explain
from skenario.cli.run import run
from skenario.cli.runs import compare, export, plot, report, runs, show
from skenario.cli.schedule import schedule
from skenario.cli.schema import schema
from skenario.cli.solve import solve
from skenario.cli.sweep import sweep, sweeps
from skenario.cli.tune import tune
from skenario.cli.validate import validate
from skenario.version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skenario")
def cli() -> None:
    """skenario: simulate Kubernetes autoscaling and scheduling, hours of it in seconds."""


for command in (
    run,
    check,
    runs,
    show,
    explain,
    decisions,
    compare,
    export,
    plot,
    report,
    schedule,
    schema,
    solve,
    sweep,
    sweeps,
    tune,
):
    cli.add_command(command)
# The simulator checked against queueing theory: `theory`, so it is not taken for `check`'s validation
# of a scenario; `validate`, its old name, still works and is no longer listed.
cli.add_command(validate, "theory")
_old_name = copy.copy(validate)
_old_name.hidden = True
cli.add_command(_old_name, "validate")


def main() -> None:
    cli()
