"""YAML in, one clear error out: values PyYAML scans but cannot build are refused with their line and field."""

from __future__ import annotations

import pytest

from skenario.errors import ScenarioError
from skenario.scenario.io import yaml_documents
from skenario.scenario.loader import parse_scenario

TEXT = "spec:\n  workload:\n    replicas: 1\n    seed: VALUE\n"


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("2001-13-45", "'2001-13-45' is not a date such as 2001-12-14 (month must be in 1..12)"),  # was ValueError
        ("2001-02-03 25:00:00", "hour must be in 0..23"),  # ValueError
        ("!!timestamp x", "'x' is not a date"),  # AttributeError: 'NoneType' object has no attribute 'groupdict'
        ("!!bool x", "'x' is not true or false"),  # KeyError: 'x'
        ("!!int x", "'x' is not an integer"),  # ValueError: invalid literal for int() with base 10
        ("!!float x", "'x' is not a number"),
        ("9" * 5000, "(5,000 characters) has more digits than a number read from YAML may"),  # sys.set_int_max_…
        ("{!!int x: 1}", "'x' is not an integer"),  # in a key: the mapping's field
    ],
)
def test_a_scalar_yaml_cannot_build_is_one_error_with_its_line_and_field(value: str, needle: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        yaml_documents(TEXT.replace("VALUE", value), "s.yaml")
    error = raised.value
    assert (error.file, error.line, error.field) == ("s.yaml", 4, "spec.workload.seed")
    assert needle in str(error) and "sys." not in str(error) and "\n" not in str(error)


def test_each_document_keeps_its_node_tree() -> None:
    documents = yaml_documents("a: 1\n---\n---\nb: [2]\n", "s.yaml")
    assert [data for data, _ in documents] == [{"a": 1}, {"b": [2]}]
    assert [root.start_mark.line for _, root in documents if root is not None] == [0, 3]


def test_a_control_character_is_one_error_naming_the_file() -> None:
    """PyYAML's reader checks the text as the loader is made: that too is inside the error handling."""
    with pytest.raises(ScenarioError) as raised:
        yaml_documents("spec: \x07\n", "s.yaml")
    assert raised.value.file == "s.yaml" and "not valid YAML" in str(raised.value)


@pytest.mark.parametrize(
    ("written", "needle"),
    [
        ("[[a]]", "should be a mapping of fields (value: [['a']])"),  # was "valid dictionary or instance of Workload"
        ("9" * 1000, "(value: 9999999999999999999999999999999999999999… (1,000 characters))"),
    ],
)
def test_a_section_that_is_no_mapping_is_named_with_its_value_cut_short(written: str, needle: str) -> None:
    text = (
        "apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {name: d}\n"
        f"spec:\n  workload: {written}\n  traffic: {{type: constant, rate: 1}}\n"
    )
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(text, "s.yaml")
    assert raised.value.field == "spec.workload" and needle in str(raised.value)
    assert "instance of" not in str(raised.value) and len(str(raised.value)) < 300
