"""`-o FORMAT` on every command that prints data, `--json` its old spelling, and `--to PATH` for files:
YAML is the JSON document, CSV the table's rows, an old `-o PATH` still works with a warning, and an
unknown format is one line naming the option, the value and what it accepts."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner, Result

from skenario.cli import cli
from tests.sweeps.test_runner import SCENARIO

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SLS = EXAMPLES / "traces" / "sls" / "inputsls.json"
SLS_NODES = EXAMPLES / "traces" / "sls" / "nodes-with-resources.json"
SWEEP = ["--set", "workload.replicas=1,2", "--seeds", "2", "--workers", "1", "--no-progress"]
TUNE = ["--space", "workload.replicas=1..3:int", "--objective", "min:replica_hours", "--trials", "2", "--seeds", "2"]
# What a second run of the same command measures anew: the wall clock and what is divided by it.
VOLATILE = re.compile(r"wall|speedup|started|finished|pid", re.IGNORECASE)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A store with two runs that made autoscaler decisions and one sweep, and a small sweep scenario."""
    folder = tmp_path_factory.mktemp("output")
    store, small = folder / "store", folder / "small.yaml"
    small.write_text(SCENARIO)
    for seed in ("1", "2"):
        ran = invoke("run", str(EXAMPLES / "hpa-step.yaml"), "--seed", seed, "--store", str(store), "--no-progress")
        assert ran.exit_code == 0, ran.output
    swept = invoke("sweep", str(small), *SWEEP, "--store", str(store))
    assert swept.exit_code == 0, swept.output
    return {"store": store, "small": small, "folder": folder}


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), terminal_width=400, env={"COLUMNS": "400"})


def commands(world: dict[str, Path]) -> dict[str, list[str]]:
    """Every command that prints data, with arguments that make it print some quickly."""
    store = ["--store", str(world["store"])]
    return {
        "run": ["run", str(EXAMPLES / "quickstart.yaml"), "--no-store", "--no-progress"],
        "check": ["check", str(EXAMPLES / "quickstart.yaml")],
        "runs": ["runs", *store],
        "show": ["show", "1", *store],
        "explain": ["explain", "1", *store],
        "decisions": ["decisions", "1", *store],
        "compare": ["compare", "1", "2", *store],
        "schedule": ["schedule", str(SLS), "--format", "sls", "--nodes", str(SLS_NODES), "--no-store"],
        "solve": ["solve", str(EXAMPLES / "queueing" / "web-server.yaml")],
        "sweep": ["sweep", str(world["small"]), *SWEEP, "--no-store"],
        "sweeps": ["sweeps", *store],
        "sweeps show": ["sweeps", "show", "1", *store],
        "tune": ["tune", str(world["small"]), *TUNE, "--no-store", "--no-progress", "--to", str(world["folder"] / "t")],
        "theory": ["theory", "--model", "M/M/1", "--replications", "3", "--length", "0.05"],
        "schema": ["schema"],
    }


def steady(document: Any) -> Any:
    """`document` without what a second run measures anew (wall times, start and finish times)."""
    if isinstance(document, dict):
        return {key: steady(value) for key, value in document.items() if not VOLATILE.search(str(key))}
    if isinstance(document, list):
        return [steady(item) for item in document]
    return document


def printed(*args: str) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, (args, result.output)
    return result.stdout


DATA_COMMANDS = ("run", "check", "runs", "show", "explain", "decisions", "compare", "schedule", "solve")
DATA_COMMANDS += ("sweep", "sweeps", "sweeps show", "tune", "theory", "schema")


@pytest.mark.parametrize("name", DATA_COMMANDS)
def test_every_data_command_prints_json_and_the_same_object_as_yaml(name: str, world: dict[str, Path]) -> None:
    args = commands(world)[name]
    as_json = json.loads(printed(*args, "-o", "json"))
    as_yaml = yaml.safe_load(printed(*args, "-o", "yaml"))
    assert as_json and steady(as_yaml) == steady(as_json)
    # `--json`, the old spelling, is `-o json`.
    assert steady(json.loads(printed(*args, "--json"))) == steady(as_json)


def test_schema_prints_json_by_default() -> None:
    assert printed("schema") == printed("schema", "-o", "json")
    assert yaml.safe_load(printed("schema", "-o", "yaml"))["title"] == json.loads(printed("schema"))["title"]


def test_wide_is_the_table_where_there_is_nothing_more(world: dict[str, Path]) -> None:
    args = commands(world)["explain"]
    assert printed(*args, "-o", "wide") == printed(*args) == printed(*args, "-o", "table")


def _header(table: str) -> list[str]:
    """The headings of the first table Rich printed: the cells of its first row of text inside │."""
    line = next(line for line in table.splitlines() if line.startswith("┃"))
    return [cell.strip() for cell in line.strip("┃").split("┃")]


def _csv(*args: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(printed(*args))))


def test_runs_as_csv_has_the_wide_tables_columns_and_a_row_a_run(world: dict[str, Path]) -> None:
    args = commands(world)["runs"]
    rows = _csv(*args, "-o", "csv")
    assert rows[0] == _header(printed(*args, "-o", "wide"))
    records = json.loads(printed(*args, "-o", "json"))
    assert [row[0] for row in rows[1:]] == [str(record["run"]) for record in records]
    digests = rows[0].index("digest")
    assert [row[digests] for row in rows[1:]] == [record["digest"] for record in records]


def test_compare_as_csv_has_a_column_a_run_and_the_tables_rows(world: dict[str, Path]) -> None:
    args = commands(world)["compare"]
    rows = _csv(*args, "-o", "csv")
    runs = json.loads(printed(*args, "-o", "json"))
    assert rows[0] == ["", *(f"run {run['run']} {run['name']}" for run in runs)]
    by_label = {row[0]: row[1:] for row in rows[1:]}
    assert by_label["digest"] == [run["digest"] for run in runs]
    table = printed(*args)
    assert all(label in table for label in by_label)


def test_decisions_as_yaml_are_the_json_records(world: dict[str, Path]) -> None:
    args = commands(world)["decisions"]
    assert yaml.safe_load(printed(*args, "-o", "yaml")) == json.loads(printed(*args, "-o", "json"))
    assert printed(*args) == printed(*args, "-o", "csv")  # CSV stays the default


def test_theory_as_csv_is_its_json_comparisons(world: dict[str, Path]) -> None:
    args = commands(world)["theory"]
    rows = list(csv.DictReader(io.StringIO(printed(*args, "-o", "csv"))))
    records = json.loads(printed(*args, "-o", "json"))
    assert [row["quantity"] for row in rows] == [record["quantity"] for record in records]
    assert [float(row["analytic"]) for row in rows] == [record["analytic"] for record in records]
    assert set(rows[0]) == set(records[0])


def test_a_sweeps_csv_has_a_row_a_point(world: dict[str, Path]) -> None:
    args = commands(world)["sweeps show"]
    rows = list(csv.DictReader(io.StringIO(printed(*args, "-o", "csv"))))
    document = json.loads(printed(*args, "-o", "json"))
    assert [row["workload.replicas"] for row in rows] == ["1", "2"]
    assert len(rows) == len(document["points"])
    listed = list(csv.DictReader(io.StringIO(printed("sweeps", "--store", str(world["store"]), "-o", "csv"))))
    assert [row["sweep"] for row in listed] == ["1"] and listed[0]["kind"] == "sweep"


def test_to_names_the_files_and_the_old_o_path_still_works_with_a_warning(world: dict[str, Path]) -> None:
    store, folder = ["--store", str(world["store"])], world["folder"]
    for command, name in (("plot", "new.png"), ("report", "new.html")):
        result = invoke(command, "1", *store, "--to", str(folder / name))
        assert result.exit_code == 0 and (folder / name).stat().st_size > 0 and result.stderr == ""
    old = invoke("plot", "1", *store, "-o", str(folder / "old.png"))
    assert old.exit_code == 0, old.output
    assert (folder / "old.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert old.stderr.splitlines() == [
        f"warning: -o {folder / 'old.png'} is deprecated for a file: use --to {folder / 'old.png'}"
    ]
    exported = invoke("export", "1", *store, "--format", "csv", "-o", str(folder / "exported"))
    assert exported.exit_code == 0 and (folder / "exported" / "series.csv").is_file()
    assert "deprecated" in exported.stderr and "--to" in exported.stderr
    swept = invoke("sweeps", "show", "1", *store, "-o", str(folder / "old.parquet"))
    assert swept.exit_code == 0 and "deprecated" in swept.stderr
    assert len(pd.read_parquet(folder / "old.parquet")) == 4  # 2 points × 2 seeds
    assert "sweep 1" in swept.stdout  # the table, as without -o


def _one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    return lines[0]


def test_an_unknown_format_is_one_line_naming_the_option_the_value_and_the_formats(world: dict[str, Path]) -> None:
    line = _one_error_line(invoke("runs", "--store", str(world["store"]), "-o", "xml"))
    assert "-o/--output" in line and "'xml'" in line and "table, wide, json, yaml, csv" in line
    line = _one_error_line(invoke("solve", str(EXAMPLES / "queueing" / "web-server.yaml"), "-o", "csv"))
    assert "'csv'" in line and "table, wide, json, yaml" in line
    # A command that writes a file takes no format: a format's name is no path either.
    line = _one_error_line(invoke("report", "1", "--store", str(world["store"]), "-o", "json"))
    assert "-o/--output" in line and "'json'" in line and "--to" in line


def test_a_file_named_twice_is_one_line(world: dict[str, Path]) -> None:
    folder = world["folder"]
    both = invoke(
        "plot", "1", "--store", str(world["store"]), "--to", str(folder / "a.png"), "-o", str(folder / "b.png")
    )
    assert "--to" in _one_error_line(both)
