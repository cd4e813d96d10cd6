"""`skenario explain` and `skenario decisions` on a run made through the command line, in a throwaway store."""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from skenario.cli import cli
from tests.docs import section

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("store")
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "hpa-step.yaml"), "--store", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def test_decisions_as_csv_and_json_are_the_same_rows(store: Path) -> None:
    code, text = _invoke("decisions", "latest", "--store", str(store))
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(text)))
    code, text = _invoke("decisions", "latest", "-o", "json", "--store", str(store))
    assert code == 0
    records = json.loads(text)
    assert len(rows) == len(records) > 0
    assert [int(float(r["desired"])) for r in rows] == [r["desired"] for r in records]
    # Every HPA decision carries its conditions and the rule that set it.
    assert all(
        set(r["conditions"]) == {"AbleToScale", "ScalingActive", "ScalingLimited"} and r["rule"] for r in records
    )


def test_explain_names_the_conditions_and_the_rule(store: Path) -> None:
    code, text = _invoke("explain", "latest", "--at", "6m", "--store", str(store))
    assert code == 0
    for word in ("AbleToScale", "ScalingActive", "ScalingLimited", "rule", "conditions at 00:06:00"):
        assert word in text


def test_explain_at_takes_the_clock_time_its_tables_print(store: Path) -> None:
    assert _invoke("explain", "latest", "--at", "00:06:00", "--store", str(store)) == _invoke(
        "explain", "latest", "--at", "6m", "--store", str(store)
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("explain", "latest", "--autoscaler", "kpa"), "kpa"),
        (("explain", "latest", "--at", "soon"), "--at"),
        (("explain", "latest", "--at", "6:00"), "hh:mm:ss"),
        (("decisions", "latest", "--autoscaler", "nope"), "nope"),
        (("explain", "999"), "999"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(store: Path, args: tuple[str, ...], words: str) -> None:
    code, text = _invoke(*args, "--store", str(store))
    assert code == 2
    assert len(text.strip().splitlines()) == 1 and words in text and "Traceback" not in text


def test_the_readme_example_is_what_explain_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The results guide's explain section shows commands and their output: run them, and the output is the
    block, line for line (trailing blanks aside). Regenerate the block by running the commands."""
    text = section("docs/how-to/results.md", "## Why a replica count is what it is", "`skenario decisions RUN` is")
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    commands = next(body for lang, body in blocks if lang == "sh").splitlines()
    shown = next(body for lang, body in blocks if not lang)
    monkeypatch.chdir(ROOT)
    output = ""
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "skenario"
        code, output = _invoke(*words[1:], "--store", str(tmp_path))
        assert code == 0, output
    assert [line.rstrip() for line in output.splitlines()] == shown.splitlines()
