"""YAML in, one clear error out: values PyYAML scans but cannot build are refused with their line and field."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from skenario.cli import cli
from skenario.errors import ScenarioError
from skenario.scenario import io
from skenario.scenario.io import read_text, yaml_documents
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


# -- bounded loading -----------------------------------------------------------------------------

QUICKSTART = (Path(__file__).resolve().parents[2] / "examples" / "quickstart.yaml").read_text()


def _laughs(levels: int) -> str:
    """The billion laughs: each anchor a list of ten aliases of the one before, `levels` deep."""
    lines = ['l0: &l0 "lol"']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines)


def _with_laughs(text: str) -> str:
    laughs = "\n".join("  " + line for line in _laughs(9).splitlines())
    return f"x-laughs:\n{laughs}\n{text}"


@pytest.mark.parametrize(
    "text",
    [
        _with_laughs(QUICKSTART.replace("duration: 30m", "duration: *l9")),
        _with_laughs(QUICKSTART.replace("\n  traffic:", "\n  traffic: *l9\n  x-traffic:", 1)),
    ],
    ids=["in a field's value", "as a whole section"],
)
def test_a_yaml_alias_bomb_is_one_line_naming_the_file(text: str) -> None:
    """Ten to the ninth laughs from 600 bytes: refused as composed, before anything walks it expanded."""
    with pytest.raises(ScenarioError, match="alias") as raised:
        parse_scenario(text, "bomb.yaml")
    assert raised.value.file == "bomb.yaml" and "\n" not in str(raised.value)


def test_aliases_used_as_people_use_them_are_read() -> None:
    documents = yaml_documents(_laughs(3), "fine.yaml")  # a thousand laughs: within the limit
    assert len(documents[0][0]["l3"]) == 10


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "folder"])
def test_only_regular_files_are_read(special: str, tmp_path: Path) -> None:
    path = Path(special)
    if special == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)  # opening it would wait for a writer that never comes
    elif special == "folder":
        path = tmp_path
    with pytest.raises(ScenarioError, match="not a regular file") as raised:
        read_text(path)
    assert raised.value.file == str(path)


def test_a_manifest_that_is_a_device_is_one_line_naming_the_field(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    hpa_step = (Path(__file__).resolve().parents[2] / "examples" / "hpa-step.yaml").read_text()
    assert "manifest: manifests/web-hpa.yaml" in hpa_step
    scenario.write_text(hpa_step.replace("manifest: manifests/web-hpa.yaml", "manifest: /dev/zero"))
    result = CliRunner().invoke(cli, ["check", str(scenario)])
    assert result.exit_code == 2 and "not a regular file" in result.stderr and result.stderr.count("\n") == 1


def test_a_manifest_whose_name_is_too_long_is_one_line_naming_the_field(tmp_path: Path) -> None:
    """A name past the file system's 255 bytes (found by the example fuzzer: it was an OSError traceback)."""
    scenario = tmp_path / "s.yaml"
    hpa_step = (Path(__file__).resolve().parents[2] / "examples" / "hpa-step.yaml").read_text()
    scenario.write_text(hpa_step.replace("manifest: manifests/web-hpa.yaml", f"manifest: {'1' * 400}.yaml"))
    result = CliRunner().invoke(cli, ["check", str(scenario)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "field 'spec.autoscalers.0.manifest': cannot be read as a manifest file" in result.stderr


def test_files_and_yaml_past_their_limits_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("# a comment\n" * 100)
    monkeypatch.setattr(io, "MAX_FILE_BYTES", 1000)
    with pytest.raises(ScenarioError, match="larger than"):
        read_text(big)
    monkeypatch.setattr(io, "MAX_YAML_BYTES", 1000)
    with pytest.raises(ScenarioError, match="as YAML"):
        yaml_documents(big.read_text(), str(big))


def test_a_huge_value_is_quoted_cut_short_at_the_cost_of_a_small_one() -> None:
    shown = io._brief([[list(range(1000))] * 1000] * 1000)  # a billion numbers, shared as aliases share them
    assert len(shown) <= 61 and shown.startswith("[[[0, 1, 2")


def test_an_alias_of_the_node_that_holds_it_is_one_line() -> None:
    """`&a [1, *a]` composes into a node that holds itself: a document that never ends, refused as such."""
    with pytest.raises(ScenarioError, match="holds it") as raised:
        yaml_documents("spec: &loop [1, {again: *loop}]\n", "loop.yaml")
    assert raised.value.file == "loop.yaml"
