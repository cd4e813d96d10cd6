"""Scenarios made from `skenario schema`: every field the schema names, at and past its bounds, through `check`.

The JSON Schema says what each field takes: a type, a minimum or maximum, an enum or const, a
pattern (durations, rates, CPU, names), a least length or number of items. Two kinds of scenario
come from it:

- an example with one to three fields set to boundary values: a field the example writes or one it
  leaves out, anywhere the schema reaches from the example's own mappings (the bound itself, one
  past it, the float next to it, zero, the wrong type, another enum value, a string just off the
  pattern);
- a scenario written from the schema alone: its required fields, some optional ones, each given a
  value the schema allows or a boundary value.

Each goes through `skenario check` with the verdicts of `test_fuzz_scenarios.verdict`, and one more:
a file `check` accepts is one the schema takes (editors must not flag a valid file), once the
values pydantic's lax mode reads (`true` as 1) are written strictly. The schema may be looser than
the format (a rule across fields, a bound it cannot say), never stricter. 700 examples at their
bounds and 300 scenarios from the schema alone go through per run.
"""

from __future__ import annotations

import copy
import json
import math
from datetime import date
from typing import Any

import jsonschema
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.cli import cli
from tests.cli.test_fuzz_examples import CHECK_SIZES, SCENARIOS, tame, write
from tests.cli.test_fuzz_scenarios import FUZZ, Tally, verdict


def _schema() -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["schema"])
    assert result.exit_code == 0, result.output
    schema: dict[str, Any] = json.loads(result.stdout)
    return schema


SCHEMA = _schema()
DEFS: dict[str, Any] = SCHEMA["$defs"]
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
NAN, INF = float("nan"), float("inf")


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its $ref followed into $defs."""
    while "$ref" in schema:
        schema = {**DEFS[schema["$ref"].rpartition("/")[2]], **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The alternatives of a schema (its anyOf or oneOf, flattened), each resolved."""
    schema = resolve(schema)
    options = schema.get("anyOf") or schema.get("oneOf")
    if not options:
        return [schema]
    return [branch for option in options for branch in branches(option)]


def object_branch(schema: dict[str, Any], value: dict[str, Any]) -> dict[str, Any] | None:
    """The object alternative that describes `value`: the one whose tag (type, distribution) it writes."""
    objects = [b for b in branches(schema) if "properties" in b]
    for branch in objects:
        tags = [k for k in ("type", "distribution") if "const" in branch["properties"].get(k, {})]
        if tags and all(value.get(k) == branch["properties"][k]["const"] for k in tags):
            return branch
    untagged = [b for b in objects if not any("const" in b["properties"].get(k, {}) for k in ("type", "distribution"))]
    return untagged[0] if untagged else None


def mappings(document: Any, schema: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each mapping of the document with the object schema that describes it."""
    found = []
    stack = [(document, schema)]
    while stack:
        value, schema = stack.pop()
        if isinstance(value, list):
            for alternative in branches(schema):
                if alternative.get("type") == "array" and "items" in alternative:
                    stack.extend((item, alternative["items"]) for item in value)
                    break
            continue
        if not isinstance(value, dict):
            continue
        branch = object_branch(schema, value)
        if branch is None:
            continue
        if branch["properties"]:
            found.append((value, branch))
        stack.extend((value[key], sub) for key, sub in branch["properties"].items() if key in value)
    return found


# Strings on each side of the patterns the schema uses, keyed by a piece of the pattern.
PATTERN_VALUES = {
    "(ns|us|": [
        "1s", "0s", "0ns", "1ns", " 1s ", "1.s", ".5s", "1h1h", "1d", "1µs", "1μs", "1us", "2562047h47m16.854775807s",
        "2562047h47m16.854775808s", "10000000d", "5", "-1s", "1 parsecs", "1e3s", "", "s", "1.5.5s", "0.0000000001ns",
    ],
    "/\\s*(ms|s|m|h|d)": ["5/s", "0/s", "1/ms", " 5 / m ", "5/y", "1e3/s", "-1/s", "/s", "1/", "0.0001/d", "9" * 30],
    "m?\\s*$": ["500m", "0", "0m", "1m", "0.5", "0.0005", "1000000m", "1.5m", "m", "-1", "1e3", "9" * 30],
    "%\\s*$": ["1%", "0%", "100%", "100.1%", "-1%", "1 %", "%", "1e2%", "50"],
    "[a-z0-9]([-": ["a", "a-b", "a.b", "-a", "a-", "A", "a" * 63, "a" * 64, "a" * 253, "a" * 254, "", "a_b"],
    "[^:]+:": ["x.py:C", "os:system", "x.py:", ":C", "x.py:1C", "missing.py:Nope", "a:b:c"],
}  # fmt: skip
WRONG_TYPES: list[Any] = [None, True, "", "x", 0, -1, 1.5, NAN, INF, [], [1], {}, {"x": 1}]


def boundaries(schema: dict[str, Any]) -> list[Any]:
    """Values at and just past what the schema allows, and of the wrong type."""
    values: list[Any] = []
    for branch in branches(schema):
        values += list(branch.get("examples", []))
        if "const" in branch:
            const = branch["const"]
            values += [const, const.upper(), const + "x", const[:-1]] if isinstance(const, str) else [const]
        if "enum" in branch:
            values += branch["enum"] + [str(v).upper() for v in branch["enum"]] + ["unknown"]
        kind = branch.get("type")
        if kind in ("integer", "number"):
            values += [0, -1, 1, 2**31, 2**63 - 1, 2**63]
            for key, side in (("minimum", -1), ("maximum", 1), ("exclusiveMinimum", 1), ("gt", 1), ("ge", -1)):
                if key in branch:
                    bound = branch[key]
                    values += [bound, bound + side] if kind == "integer" else [bound, math.nextafter(bound, side * INF)]
            if kind == "number":
                values += [-0.0, 1e-300, 1e300, NAN, INF, -INF]
        elif kind == "string":
            pattern = branch.get("pattern", "")
            for piece, strings in PATTERN_VALUES.items():
                if piece in pattern:
                    values += strings
            if "minLength" in branch:
                values += ["", "x" * branch["minLength"]]
            if "maxLength" in branch:
                values += ["a" * branch["maxLength"], "a" * (branch["maxLength"] + 1)]
            values += ["", " ", "x"]
        elif kind == "boolean":
            values += [True, False, "true", 1]
        elif kind == "array":
            least = branch.get("minItems", 0)
            values += [[], [None] * max(least - 1, 0), [{}] * (least + 1)]
            if "maxItems" in branch:
                values += [[{}] * (branch["maxItems"] + 1)]
        elif kind == "object":
            values += [{}, {"x": 1}]
    return values + WRONG_TYPES


# Fields the schema leaves optional that the format needs in practice (a rule across fields).
NEEDED = {"Workload": ["replicas", "request"], "RequestWork": ["cpuTime"]}


def allowed_string(branch: dict[str, Any]) -> str:
    """A string the schema allows: the first of its pattern's values, or a name."""
    for piece, strings in PATTERN_VALUES.items():
        if piece in branch.get("pattern", ""):
            return strings[0]
    return "web"


@st.composite
def instance(draw: st.DrawFn, schema: dict[str, Any], wild: int = 0, depth: int = 0) -> Any:
    """A value the schema describes: one it allows, or, `wild` times in a hundred, a boundary value."""
    choices = [b for b in branches(schema) if b.get("type") != "null"] or branches(schema)
    branch = draw(st.sampled_from(choices))
    if depth > 6 or draw(st.integers(0, 99)) < wild:
        return copy.deepcopy(draw(st.sampled_from(boundaries(branch))))
    if "const" in branch:
        return branch["const"]
    if "enum" in branch:
        return draw(st.sampled_from(branch["enum"]))
    if branch.get("examples"):
        return copy.deepcopy(draw(st.sampled_from(branch["examples"])))
    kind = branch.get("type")
    if "properties" in branch:
        required = [*branch.get("required", []), *NEEDED.get(branch.get("title", ""), [])]
        optional = sorted(set(branch["properties"]) - set(required))
        extra = draw(st.lists(st.sampled_from(optional), max_size=3, unique=True)) if optional else []
        return {key: draw(instance(branch["properties"][key], wild, depth + 1)) for key in required + extra}
    if kind == "array":
        size = draw(st.integers(branch.get("minItems", 0), max(branch.get("minItems", 0), 2)))
        return [draw(instance(branch.get("items", {}), wild, depth + 1)) for _ in range(size)]
    if kind == "integer":
        low = branch.get("minimum", branch.get("exclusiveMinimum", -1) + 1)
        return draw(st.integers(low, min(branch.get("maximum", low + 20), low + 20)))
    if kind == "number":
        low = branch.get("minimum", branch.get("exclusiveMinimum", 0))
        return draw(st.floats(low, branch.get("maximum", low + 10), exclude_min="exclusiveMinimum" in branch))
    if kind == "string":
        return allowed_string(branch)
    if kind == "boolean":
        return draw(st.booleans())
    return None


@st.composite
def example_with_boundaries(draw: st.DrawFn) -> tuple[str, list[str]]:
    """An example with one to three fields, anywhere the schema reaches from its mappings, at a boundary."""
    name = draw(st.sampled_from(sorted(SCENARIOS)))
    documents = copy.deepcopy(SCENARIOS[name])
    done = [name]
    for _ in range(draw(st.sampled_from([1, 1, 2, 3]))):
        holder, schema = draw(st.sampled_from(mappings(documents[0], SCHEMA)))
        key = draw(st.sampled_from(sorted(schema["properties"])))
        field = schema["properties"][key]
        if key in holder and draw(st.booleans()) and isinstance(holder[key], dict | list):
            holder[key] = draw(instance(field, wild=5))  # a whole section written afresh
        else:
            holder[key] = copy.deepcopy(draw(st.sampled_from(boundaries(field))))
        done.append(f"{schema.get('title')}.{key}")
    tame(documents[0], CHECK_SIZES, within="cluster")
    return yaml.safe_dump_all(documents, allow_unicode=True, sort_keys=False, width=math.inf), done


@st.composite
def from_the_schema(draw: st.DrawFn) -> str:
    """A scenario written from the schema alone."""
    document = draw(instance(SCHEMA, wild=draw(st.sampled_from([0, 0, 1, 3]))))
    tame(document, CHECK_SIZES, within="cluster")
    return yaml.safe_dump(document, allow_unicode=True, sort_keys=False, width=math.inf)


# Where the schema is stricter than the format, which `check` accepts and the schema refuses: pydantic's
# lax mode reads `true` as 1, 0 and 'yes' as booleans and '2' as 2 (reported in #18). A document the
# schema refuses is read back with those values written strictly; it must then pass.
LAX_BOOLEANS = {0: False, 1: True, "0": False, "1": True, "true": True, "false": False, "yes": True, "no": False,
                "on": True, "off": False, "t": True, "f": False, "y": True, "n": False}  # fmt: skip
NOTHING = object()


def strictly(value: Any, expected: str) -> Any:
    """What pydantic's lax mode reads `value` as where the schema expects the type `expected`, or NOTHING."""
    if expected in ("integer", "number") and isinstance(value, bool):
        return int(value)
    if expected == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if expected in ("integer", "number") and isinstance(value, str):
        try:
            return int(value) if expected == "integer" else float(value)
        except ValueError:
            return NOTHING
    if expected == "boolean" and not isinstance(value, bool) and isinstance(value, int | str):
        return LAX_BOOLEANS.get(value.lower() if isinstance(value, str) else value, NOTHING)
    if expected == "string" and isinstance(value, date):  # YAML's unquoted timestamp: the string it was written as
        return value.isoformat()
    return NOTHING


def leaves(errors: list[jsonschema.ValidationError]) -> list[jsonschema.ValidationError]:
    """The errors under each anyOf and oneOf, not the alternatives' summary."""
    found = []
    for error in errors:
        found.extend(leaves(list(error.context or [])) if error.context else [error])
    return found


def rewritten_strictly(document: Any) -> list[str]:
    """Write the document's lax values strictly until the schema takes it; what it still refuses."""
    for _ in range(20):
        errors = list(VALIDATOR.iter_errors(document))
        if not errors:
            return []
        changed = False
        for error in leaves(errors):
            if error.validator != "type" or not error.absolute_path:
                continue
            types = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
            for expected in types:
                value = strictly(error.instance, expected)
                if value is not NOTHING:
                    holder = document
                    for key in list(error.absolute_path)[:-1]:
                        holder = holder[key]
                    holder[error.absolute_path[-1]] = value
                    changed = True
                    break
        if not changed:
            break
    best = jsonschema.exceptions.best_match(VALIDATOR.iter_errors(document))
    return [f"{'.'.join(map(str, best.absolute_path))}: {best.message[:200]}"] if best is not None else []


def judged(text: str, label: str) -> None:
    """The verdicts of `verdict`; and a file `check` accepts is one the schema takes, lax values aside."""
    code = verdict("check", text, write_to=write, label=label)
    documents = list(yaml.safe_load_all(text)) if code == 0 else []
    if len(documents) == 1:  # (the schema is the Scenario document's, before manifests are folded in)
        assert rewritten_strictly(documents[0]) == [], (label, "check accepts what the schema refuses")


BOUNDARIES, GENERATED = 700, 300


def test_the_schema_takes_every_example_and_reaches_into_it() -> None:
    """The starting points are valid for the schema (a file with manifests only once they are folded in)."""
    for name, documents in SCENARIOS.items():
        assert VALIDATOR.is_valid(documents[0]) or len(documents) > 1, name
        assert mappings(documents[0], SCHEMA), name


def test_examples_with_fields_at_the_schema_boundaries_through_check() -> None:
    tally = Tally()

    @settings(FUZZ, max_examples=BOUNDARIES)
    @given(example_with_boundaries())
    def one(mutant: tuple[str, list[str]]) -> None:
        text, done = mutant
        tally.add()
        judged(text, str(done))

    one()
    assert tally.count >= BOUNDARIES


def test_scenarios_from_the_schema_alone_through_check() -> None:
    tally = Tally()

    @settings(FUZZ, max_examples=GENERATED)
    @given(from_the_schema())
    def one(text: str) -> None:
        tally.add()
        judged(text, "from the schema")

    one()
    assert tally.count >= GENERATED
