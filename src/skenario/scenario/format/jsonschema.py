"""The JSON Schema of the scenario format (draft 2020-12), every default written as a user writes it.

The models keep what they read in the simulator's units (nanoseconds, millicores, bytes, a constant
distribution), so pydantic alone would give `syncPeriod` the default `15000000000`, which the
format refuses (a duration needs a unit), and no default at all where one is made by a factory
(`launch.readiness`). Here each default, plain or from a factory, is written back through the type
that reads it: a duration as `15s`, CPU as `250m` or `4`, memory as `16Gi`, a quantity as `100m`,
a constant distribution as its duration, a model as the mapping of its fields. So every default
the schema states, written into a scenario, reads back as the model's own default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema, SchemaValidator, ValidationError, core_schema

from skenario.core.time import format_duration
from skenario.scenario.format.batch import BatchReplayDocument
from skenario.scenario.format.distributions import ConstantBytes, ConstantDistribution, shorthand_constant
from skenario.scenario.format.scenario import Scenario
from skenario.scenario.format.units import WRITTEN, write_bytes

Writer = Callable[[Any], Any]


def _shorthand(value: Any) -> Any:
    """A constant distribution as the shorthand its reader takes (`1s`, `2Mi`); NotImplemented for another."""
    if isinstance(value, ConstantDistribution):
        return format_duration(value.value)
    if isinstance(value, ConstantBytes):
        return write_bytes(value.value)
    return NotImplemented


WRITERS: dict[Callable[..., Any], Writer] = {**WRITTEN, shorthand_constant: _shorthand}
"""Each reader (a BeforeValidator's function) of a value kept in other units, and how that value is written."""


class WrittenDefaults(GenerateJsonSchema):
    """Pydantic's JSON Schema, with each default (a factory's too) written through the type that reads it."""

    def generate(self, schema: CoreSchema, mode: Any = "validation") -> JsonSchemaValue:
        self._definitions: dict[str, CoreSchema] = {}
        if schema["type"] == "definitions":
            self._definitions = {d["ref"]: d for d in schema["definitions"] if "ref" in d}
        return super().generate(schema, mode)

    def model_field_schema(self, schema: core_schema.ModelField) -> JsonSchemaValue:
        """The field's schema, its type's examples kept only where the field takes them (a duration's `250ms`
        is no example of a field that must be at least 10s)."""
        json_schema = super().model_field_schema(schema)
        branches = [json_schema, *json_schema.get("anyOf", [])]
        if any("examples" in branch for branch in branches):
            definitions = list(self._definitions.values())
            validator = SchemaValidator(core_schema.definitions_schema(schema["schema"], definitions))
            for branch in branches:
                if "examples" in branch:
                    branch["examples"] = [example for example in branch["examples"] if _takes(validator, example)]
                    if not branch["examples"]:
                        del branch["examples"]
        return json_schema

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        json_schema = self.generate_inner(schema["schema"])
        if "default" in schema:
            value = schema["default"]
        elif "default_factory" in schema and not schema.get("default_factory_takes_data"):
            value = schema["default_factory"]()  # type: ignore[call-arg]  # takes no data: checked above
        else:
            return json_schema
        json_schema["default"] = self.written(value, schema["schema"])
        return json_schema

    def written(self, value: Any, schema: CoreSchema) -> Any:
        """`value`, read by `schema`, as a user writes it."""
        kind = schema["type"]
        if kind == "definition-ref":
            return self.written(value, self._definitions[schema["schema_ref"]])
        if kind == "definitions":
            return self.written(value, schema["schema"])
        if value is None:
            return None
        if kind in ("function-before", "function-plain", "function-wrap", "function-after"):
            writer = WRITERS.get(schema["function"]["function"])
            if writer is not None:
                shown = writer(value)
                if shown is not NotImplemented:
                    return shown
            inner = schema.get("schema")
            return self.written(value, inner) if inner is not None else _plain(value)
        if kind in ("nullable", "default", "json-or-python"):
            inner = schema.get("schema") or schema.get("python_schema")
            return self.written(value, inner) if inner is not None else _plain(value)
        if kind == "model":
            return self._model(value, schema)
        if kind in ("union", "tagged-union"):
            return self._union(value, schema)
        if kind in ("list", "tuple", "set", "frozenset") and isinstance(value, list | tuple | set | frozenset):
            items = schema.get("items_schema")
            if isinstance(items, list):  # a tuple of positions
                items = items[0] if items else None
            ordered = sorted(value) if isinstance(value, set | frozenset) else value
            return [self.written(item, items) if items is not None else _plain(item) for item in ordered]
        if kind == "dict" and isinstance(value, dict):
            values = schema.get("values_schema")
            return {k: self.written(v, values) if values is not None else _plain(v) for k, v in value.items()}
        return _plain(value)

    def _model(self, value: BaseModel, schema: CoreSchema) -> dict[str, Any]:
        fields = schema["schema"]["fields"]
        shown: dict[str, Any] = {}
        for name, field in fields.items():
            item = getattr(value, name)
            default = type(value).model_fields[name].get_default(call_default_factory=True)
            if item is None and default is None:
                continue  # absent is how a user writes it
            shown[field.get("serialization_alias") or name] = self.written(item, field["schema"])
        return shown

    def _union(self, value: Any, schema: CoreSchema) -> Any:
        """A union's value through its choice: the model of its class, else the first choice with a writer."""
        choices = schema["choices"]
        options = list(choices.values()) if isinstance(choices, dict) else [_first(c) for c in choices]
        for option in options:
            resolved = self._resolve(option)
            if isinstance(value, BaseModel) and resolved.get("cls") is type(value):
                return self.written(value, option)
            scalar = not isinstance(value, BaseModel) and option["type"] == "function-before"
            if scalar and option["function"]["function"] in WRITERS:
                return self.written(value, option)
        return _plain(value)

    def _resolve(self, schema: CoreSchema) -> CoreSchema:
        while schema["type"] in ("definition-ref", "function-after", "function-before", "function-wrap"):
            ref = schema["type"] == "definition-ref"
            schema = self._definitions[schema["schema_ref"]] if ref else schema["schema"]
        return schema


def _takes(validator: SchemaValidator, value: Any) -> bool:
    try:
        validator.validate_python(value)
    except ValidationError:
        return False
    return True


def _first(choice: Any) -> CoreSchema:
    """A union choice without its label (pydantic writes a labelled one as a pair)."""
    first: CoreSchema = choice[0] if isinstance(choice, tuple) else choice
    return first


def _plain(value: Any) -> Any:
    """A value JSON holds as it is: enums as their values, tuples and sets as lists."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if hasattr(value, "value") and type(value).__module__ != "builtins" and isinstance(value.value, str | int):
        return value.value  # an Enum
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, set | frozenset):
        return sorted(_plain(item) for item in value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


SCHEMA_ID = "https://skenario.dev/schemas/scenario-v1alpha1.json"


def scenario_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a `kind: Scenario` document, fields by their YAML names, defaults as
    users write them."""
    schema = Scenario.model_json_schema(by_alias=True, mode="validation", schema_generator=WrittenDefaults)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


BATCH_SCHEMA_ID = "https://skenario.dev/schemas/batchreplay-v1alpha1.json"


def batch_json_schema() -> dict[str, Any]:
    """The JSON Schema of a `kind: BatchReplay` document (`skenario.scenario.format.batch`)."""
    schema = BatchReplayDocument.model_json_schema(by_alias=True, mode="validation", schema_generator=WrittenDefaults)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BATCH_SCHEMA_ID, **schema}
