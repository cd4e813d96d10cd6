"""`skenario explain` and `skenario decisions` on a run made through the command line, in a throwaway store."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from skenario.cli import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


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
    for word in ("AbleToScale", "ScalingActive", "ScalingLimited", "rule", "conditions at 5m"):  # the last sync by 6m
        assert word in text


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("explain", "latest", "--autoscaler", "kpa"), "kpa"),
        (("explain", "latest", "--at", "soon"), "--at"),
        (("decisions", "latest", "--autoscaler", "nope"), "nope"),
        (("explain", "999"), "999"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(store: Path, args: tuple[str, ...], words: str) -> None:
    code, text = _invoke(*args, "--store", str(store))
    assert code == 2
    assert len(text.strip().splitlines()) == 1 and words in text and "Traceback" not in text
