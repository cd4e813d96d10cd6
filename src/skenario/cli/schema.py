"""`skenario schema`: the JSON Schema of the scenario format, for editors to validate and complete with."""

from __future__ import annotations

import json
from typing import Any

import click

from skenario.scenario.format.scenario import Scenario

SCHEMA_ID = "https://skenario.dev/schemas/scenario-v1alpha1.json"


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a `kind: Scenario` document, fields by their YAML names."""
    schema = Scenario.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


@click.command()
def schema() -> None:
    """Print the JSON Schema of scenario files (editors autocomplete and check with it)."""
    click.echo(json.dumps(scenario_json_schema(), indent=2))
