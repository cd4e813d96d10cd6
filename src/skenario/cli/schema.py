"""`skenario schema`: the JSON Schema of the scenario format, for editors to validate and complete with."""

from __future__ import annotations

import click

from skenario.cli.common import output_option, print_json
from skenario.scenario.format.jsonschema import batch_json_schema, scenario_json_schema


@click.command()
@click.option(
    "--kind",
    type=click.Choice(["Scenario", "BatchReplay"]),
    default="Scenario",
    show_default=True,
    help="Which document's schema: a scenario, or a batch replay (a trace and its queue scheduler).",
)
@output_option("json", "yaml", default="json")
def schema(kind: str, output: str) -> None:
    """Print the JSON Schema of scenario files (editors autocomplete and check with it); defaults are written as
    in a scenario (`15s`, `250m`, `16Gi`)."""
    print_json(scenario_json_schema() if kind == "Scenario" else batch_json_schema(), output)
