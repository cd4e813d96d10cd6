"""`skenario solve FILE`: a queueing model file solved analytically, as a report or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import click

from skenario.cli.common import out, user_errors
from skenario.queueing.modelfile import load_model
from skenario.queueing.report import report, solution_dict
from skenario.queueing.solution import Method


@click.command()
@click.argument("model_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--method",
    type=click.Choice([m.value for m in Method]),
    default=None,
    help="canonical (open), exact or approx (closed); default: the file's, else canonical or exact.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the solution as one JSON object.")
@user_errors
def solve(model_file: Path, method: str | None, as_json: bool) -> None:
    """Solve a queueing model file: throughput, response, residence, utilisation and queues."""
    solution = load_model(model_file).solve(method)
    if as_json:
        click.echo(json.dumps(solution_dict(solution), indent=2))
    else:
        out.print(report(solution), highlight=False, markup=False, soft_wrap=True)
