"""`skenario schema`: the JSON Schema of the scenario format, for editors to validate and complete with."""

from __future__ import annotations

import json

import click

from skenario.scenario.format.jsonschema import scenario_json_schema


@click.command()
def schema() -> None:
    """Print the JSON Schema of scenario files (editors autocomplete and check with it); defaults are written as
    in a scenario (`15s`, `250m`, `16Gi`)."""
    click.echo(json.dumps(scenario_json_schema(), indent=2))
