"""The JSON Schema (`skenario schema`) says what the format does: each default, written back into a scenario,
is accepted and reads as the model's own default; each example is accepted; no description stops short.

The defaults are checked against the models, not against a list of expected strings: for every field of
every model the schema reaches, the default the schema states is read by that field's own type (with its
bounds) and compared with the default the model gives the field when it is absent.
"""

from __future__ import annotations

import copy
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter
from pydantic.fields import FieldInfo

from skenario.core.time import SECOND, parse_duration
from skenario.scenario.format import units
from skenario.scenario.format.jsonschema import scenario_json_schema
from skenario.scenario.format.scenario import Scenario
from skenario.scenario.loader import parse_scenario

SCHEMA = scenario_json_schema()
DEFS: dict[str, Any] = SCHEMA["$defs"]
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _models(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every model the root reaches through its fields' types, by title (the name of its $defs entry)."""
    found: dict[str, type[BaseModel]] = {}
    stack: list[Any] = [root]
    while stack:
        annotation = stack.pop()
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            title = annotation.model_config.get("title") or annotation.__name__
            if title in found:
                assert found[title] is annotation, f"two models titled {title}"
                continue
            found[title] = annotation
            stack.extend(field.annotation for field in annotation.model_fields.values())
            stack.extend(m for field in annotation.model_fields.values() for m in field.metadata)
        stack.extend(typing.get_args(annotation))
    return found


MODELS = _models(Scenario)


def _field(model: type[BaseModel], alias: str) -> tuple[str, FieldInfo]:
    for name, field in model.model_fields.items():
        if (field.alias or name) == alias:
            return name, field
    raise AssertionError(f"{model.__name__} has no field {alias}")


def _adapter(field: FieldInfo) -> TypeAdapter[Any]:
    """The field's type with its constraints, as the model reads it."""
    return TypeAdapter(typing.Annotated[field.annotation, *field.metadata] if field.metadata else field.annotation)


def _defaults() -> list[tuple[str, str, Any]]:
    found = []
    for title, definition in DEFS.items():
        for alias, property_schema in definition.get("properties", {}).items():
            if "default" in property_schema:
                found.append((title, alias, property_schema["default"]))
    return found


DEFAULTS = _defaults()


def test_the_schema_reaches_every_model_and_states_defaults() -> None:
    assert set(MODELS) <= set(DEFS) | {"Scenario"}, set(MODELS) - set(DEFS)
    assert len(DEFAULTS) > 150  # every field with a default, not a handful


@pytest.mark.parametrize(("title", "alias", "default"), DEFAULTS, ids=[f"{t}.{a}" for t, a, _ in DEFAULTS])
def test_every_default_reads_back_as_the_models_default(title: str, alias: str, default: Any) -> None:
    model = MODELS[title]
    _, field = _field(model, alias)
    read = _adapter(field).validate_python(copy.deepcopy(default))
    assert read == field.get_default(call_default_factory=True), (title, alias, default)


def test_every_field_with_a_default_states_it() -> None:
    """A default made by a factory (the launch stages', the routing's) is stated too."""
    missing = [
        f"{title}.{field.alias or name}"
        for title, model in MODELS.items()
        if title in DEFS
        for name, field in model.model_fields.items()
        if not field.is_required() and "default" not in DEFS[title]["properties"][field.alias or name]
    ]
    assert missing == []


def test_durations_cpu_and_memory_defaults_are_written_in_the_users_units() -> None:
    """The issue's cases: the HPA's sync period, the launch stages, the implicit node's CPU and memory."""
    hpa = DEFS["HpaAutoscaler"]["properties"]
    launch = DEFS["Launch"]["properties"]
    node = DEFS["ImplicitNode"]["properties"]
    assert hpa["syncPeriod"]["default"] == "15s"  # --horizontal-pod-autoscaler-sync-period's 15 s
    # The launch stages add up to the Go Skenario's 5 s delay (the model's docstring).
    stages = [launch[stage]["default"] for stage in ("scheduling", "imagePull", "containerStart", "readiness")]
    assert sum(parse_duration(stage) for stage in stages) == 5 * SECOND
    assert (node["cpu"]["default"], node["memory"]["default"]) == ("4", "16Gi")


def _valid_for(default: Any, property_schema: dict[str, Any]) -> list[str]:
    schema = {"$defs": DEFS, **property_schema}
    return [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(default)]


@pytest.mark.parametrize(("title", "alias", "default"), DEFAULTS, ids=[f"{t}.{a}" for t, a, _ in DEFAULTS])
def test_every_default_is_valid_for_its_own_schema(title: str, alias: str, default: Any) -> None:
    property_schema = {k: v for k, v in DEFS[title]["properties"][alias].items() if k != "default"}
    assert _valid_for(default, property_schema) == []


def _examples() -> list[tuple[str, str, Any]]:
    found = []

    def under(node: Any) -> list[Any]:
        if not isinstance(node, dict):
            return []
        return [*node.get("examples", []), *(e for branch in node.get("anyOf", []) for e in under(branch))]

    for title, definition in DEFS.items():
        for alias, property_schema in definition.get("properties", {}).items():
            found += [(title, alias, example) for example in under(property_schema)]
    return found


EXAMPLES_OF_FIELDS = _examples()


@pytest.mark.parametrize(
    ("title", "alias", "example"), EXAMPLES_OF_FIELDS, ids=[f"{t}.{a}={e!r}" for t, a, e in EXAMPLES_OF_FIELDS]
)
def test_every_example_is_accepted_by_its_field(title: str, alias: str, example: Any) -> None:
    _, field = _field(MODELS[title], alias)
    _adapter(field).validate_python(example)


def _descriptions(node: Any, path: str = "") -> list[tuple[str, str]]:
    if isinstance(node, dict):
        own = [(path, node["description"])] if isinstance(node.get("description"), str) else []
        return own + [d for key, value in node.items() for d in _descriptions(value, f"{path}/{key}")]
    if isinstance(node, list):
        return [d for i, value in enumerate(node) for d in _descriptions(value, f"{path}/{i}")]
    return []


def test_no_description_stops_mid_sentence() -> None:
    """Each description is whole sentences: it ends as a sentence ends and does not begin with an ellipsis
    (the HPA's flags were '...-downscale-stabilization')."""
    short = [
        (path, text)
        for path, text in _descriptions(SCHEMA)
        if not text.rstrip().endswith((".", "?", "!", ".)", ".`")) or text.lstrip().startswith(("...", "…"))
    ]
    assert short == []


def test_a_scenario_written_with_the_stated_defaults_reads_as_one_without_them() -> None:
    """The spec's own sections the example leaves out (routing, metrics, client, ...) written out as the
    schema's defaults: the scenario reads exactly as the example does."""
    text = (EXAMPLES / "quickstart.yaml").read_text()
    plain = yaml.safe_load(text)
    spec_defaults = {
        alias: schema["default"]
        for alias, schema in DEFS["ScenarioSpec"]["properties"].items()
        if "default" in schema and alias not in plain["spec"]
    }
    assert {"routing", "metrics", "client"} <= set(spec_defaults)
    written = {**plain, "spec": {**plain["spec"], **spec_defaults}}
    ours = parse_scenario(yaml.safe_dump(written), "written.yaml").spec
    assert ours == parse_scenario(text, "quickstart.yaml").spec


@given(st.integers(min_value=0, max_value=2**62))
def test_each_writer_is_read_back_by_its_reader(value: int) -> None:
    """`reader(writer(x)) == x`: what the schema writes is what the format reads."""
    for reader, writer in units.WRITTEN.items():
        assert reader(writer(value)) == value, (reader.__name__, writer(value))


def test_every_type_kept_in_other_units_has_a_writer() -> None:
    """The writers are keyed by the functions the format's Annotated types read with: each has one."""
    annotated = [units.Duration, units.RunLength, units.CpuQuantity, units.ByteQuantity, units.MilliQuantity]
    readers = {m.func for a in annotated for m in typing.get_args(a)[1:] if hasattr(m, "func")}
    assert readers == set(units.WRITTEN)
