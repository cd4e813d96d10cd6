"""`skenario schema`: the JSON Schema of the scenario format, for editors to validate and complete with."""

from __future__ import annotations

import click

from skenario.cli.common import output_option, print_json
from skenario.scenario.format.jsonschema import scenario_json_schema


@click.command()
@output_option("json", "yaml", default="json")
def schema(output: str) -> None:
    """Print the JSON Schema of scenario files (editors autocomplete and check with it); defaults are written as
    in a scenario (`15s`, `250m`, `16Gi`)."""
    print_json(scenario_json_schema(), output)
