"""Run management: runs named and tagged by `run`, referred to by number, name, tag or `latest` in every
command that takes a run, `runs` filtered and printed as a table, a wide table, JSON or YAML."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skenario.cli import cli
from skenario.results.store import RUN_FIELDS, RunStore

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: managed}
spec:
  duration: 40s
  seed: 1
  workload: {replicas: 2, request: {cpuTime: {distribution: exponential, mean: 20ms}}}
  traffic: {type: poisson, rate: 10/s}
  recording: {interval: 10s}
  slo: {latency: 200ms}
  autoscalers:
    - type: hpa
      spec:
        maxReplicas: 4
        metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
  events:
    - {id: burst, at: 20s, patch: {target: traffic, patch: {rate: 20/s}}}
"""

# run number: (seed, --name, --tags). Run 1 has neither: a store that held a run before the named ones.
RUNS: dict[int, tuple[int, str | None, tuple[str, ...]]] = {
    1: (1, None, ()),
    2: (2, "hpa-a", ("sweep",)),
    3: (3, "hpa-b", ("sweep",)),
    4: (4, "hpa-c", ("sweep", "best")),
    5: (5, "hpa-a", ()),  # a name again: the newest run of a name wins
}


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    return lines[0]


@dataclass(frozen=True)
class Store:
    folder: Path
    scenario: Path

    def args(self) -> list[str]:
        return ["--store", str(self.folder)]


def make_store(folder: Path) -> Store:
    scenario = folder / "managed.yaml"
    scenario.write_text(SCENARIO)
    store = Store(folder / "store", scenario)
    for number, (seed, name, tags) in RUNS.items():
        labels = [*(["--name", name] if name else []), *(arg for tag in tags for arg in ("--tag", tag))]
        result = invoke("run", str(scenario), *store.args(), "--seed", str(seed), "--no-progress", *labels)
        assert result.exit_code == 0, result.output
        assert f"stored as run {number} in" in result.stdout
    return store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    return make_store(tmp_path_factory.mktemp("managed"))


def listed(store: Store, *args: str) -> list[dict[str, Any]]:
    result = invoke("runs", *store.args(), "-o", "json", *args)
    assert result.exit_code == 0, result.output
    runs: list[dict[str, Any]] = json.loads(result.stdout)
    return runs


# -- references --------------------------------------------------------------------------------

REFERENCES = [("3", 3), ("hpa-b", 3), ("hpa-a", 5), ("sweep", 4), ("best", 4), ("latest", 5), ("-2", 4)]


@pytest.mark.parametrize(("ref", "number"), REFERENCES)
def test_show_takes_a_number_a_name_a_tag_or_latest(store: Store, ref: str, number: int) -> None:
    result = invoke("show", ref, *store.args())  # -2 too: a RUN, not an unknown option
    assert result.exit_code == 0, result.output
    seed = RUNS[number][0]
    assert result.stdout.startswith(f"run {number}: managed, seed {seed}, Completed"), result.stdout


def test_compare_by_names_compares_those_runs_in_a_store_that_held_others(store: Store) -> None:
    result = invoke("compare", "hpa-a", "hpa-b", "hpa-c", *store.args())
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "run " in line)
    assert re.findall(r"run (\d+)", header) == ["5", "3", "4"]  # the newest hpa-a, not run 2
    seeds_row = next(line for line in result.stdout.splitlines() if "seed / phase" in line)
    assert re.findall(r"(\d+) / Completed", seeds_row) == ["5", "3", "4"]


@pytest.mark.parametrize(("ref", "number"), [("best", 4), ("hpa-b", 3), ("latest", 5)])
def test_export_plot_and_report_take_names_and_tags(store: Store, tmp_path: Path, ref: str, number: int) -> None:
    folder = tmp_path / "export"
    assert invoke("export", ref, "--format", "csv", "--to", str(folder), *store.args()).exit_code == 0
    summary = json.loads((folder / "summary.json").read_text())
    assert (summary["run"], summary["seed"]) == (number, RUNS[number][0])
    picture = tmp_path / "plot.png"
    assert invoke("plot", ref, "--to", str(picture), *store.args()).exit_code == 0
    assert picture.read_bytes().startswith(b"\x89PNG")
    page = tmp_path / "report.html"
    assert invoke("report", ref, "--to", str(page), *store.args()).exit_code == 0
    digest = next(run["digest"] for run in listed(store) if run["run"] == number)
    assert digest in page.read_text()


def test_runs_rm_by_name_deletes_the_newest_run_of_that_name(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert "deleted run 5" in invoke("runs", "rm", "hpa-a", *store.args()).stdout
    assert "deleted run 2" in invoke("runs", "rm", "hpa-a", *store.args()).stdout  # now the newest of the name
    assert "deleted runs 4, 1" in invoke("runs", "rm", "best", "1", *store.args()).stdout
    assert [run["run"] for run in listed(store)] == [3]
    with closing(sqlite3.connect(store.folder / "runs.sqlite")) as db:
        assert db.execute("SELECT DISTINCT run_id FROM series").fetchall() == [(3,)]


COMMANDS = [["show"], ["compare", "1"], ["export"], ["plot"], ["report"], ["runs", "rm"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("ref", ["no-such-name", "99", "-9"])
def test_a_reference_to_no_run_is_one_line_naming_it(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], ref: str
) -> None:
    monkeypatch.chdir(tmp_path)
    line = one_error_line(invoke(*command, ref, *store.args()))
    assert "no such run" in line and ref in line
    assert list(tmp_path.iterdir()) == []  # nothing written
    assert len(listed(store)) == len(RUNS)  # nothing deleted


@pytest.mark.parametrize("label", ["3", "latest", "-1", "", " padded"])
@pytest.mark.parametrize("option", ["--name", "--tag"])
def test_a_name_or_tag_that_reads_as_a_reference_is_refused_before_the_run(
    tmp_path: Path, option: str, label: str
) -> None:
    scenario = tmp_path / "managed.yaml"
    scenario.write_text(SCENARIO)
    line = one_error_line(invoke("run", str(scenario), "--store", str(tmp_path / "store"), option, label))
    assert option in line
    assert not (tmp_path / "store").exists()


# -- filters -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "numbers"),
    [
        ([], [1, 2, 3, 4, 5]),
        (["--name", "hpa-a"], [2, 5]),
        (["--tag", "sweep"], [2, 3, 4]),
        (["--tag", "sweep", "--last", "2"], [3, 4]),
        (["--name", "hpa-a", "--tag", "sweep"], [2]),
        (["--phase", "completed", "--last", "1"], [5]),
        (["--phase", "Failed"], []),
        (["--last", "2"], [4, 5]),
        (["--tag", "nobody"], []),
    ],
)
def test_runs_filters_combine_with_last(store: Store, args: list[str], numbers: list[int]) -> None:
    assert [run["run"] for run in listed(store, *args)] == numbers


def test_an_unknown_phase_is_refused(store: Store) -> None:
    result = invoke("runs", *store.args(), "--phase", "Finished")
    assert result.exit_code == 2 and "Finished" in result.output


# -- output formats ----------------------------------------------------------------------------


def test_runs_json_and_yaml_carry_every_field_and_agree(store: Store) -> None:
    as_json = listed(store)
    result = invoke("runs", *store.args(), "-o", "yaml")
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout) == as_json
    for run in as_json:
        assert list(run) == list(RUN_FIELDS)
        seed, name, tags = RUNS[run["run"]]
        assert (run["seed"], run["name"], run["tags"], run["scenario"]) == (seed, name, list(tags), "managed")
        assert run["phase"] == "Completed" and run["scenario_file"] == str(store.scenario)
        assert run["summary"]["seed"] == seed and run["summary"]["digest"] == run["digest"]
        assert run["summary"]["simulated_ns"] == run["simulated_ns"] == 40 * 10**9


def table_rows(text: str) -> list[list[str]]:
    """A table's body rows (one line each here), split into cells."""
    return [[cell.strip() for cell in line.strip("│").split("│")] for line in text.splitlines() if line.startswith("│")]


def test_the_default_table_is_as_before_and_wide_adds_names_tags_and_files(store: Store) -> None:
    plain = invoke("runs", *store.args()).stdout
    header = next(line for line in plain.splitlines() if line.startswith("┃"))
    assert [cell.strip() for cell in header.strip("┃").split("┃")] == [
        *("run", "scenario", "seed", "phase", "simulated", "wall", "digest", "started", "message")
    ]
    assert "hpa-a" not in plain and "sweep" not in plain
    wide = CliRunner().invoke(cli, ["runs", *store.args(), "-o", "wide"], terminal_width=400, env={"COLUMNS": "400"})
    assert wide.exit_code == 0, wide.output
    assert "name" in wide.stdout and "tags" in wide.stdout and "file" in wide.stdout
    for run in listed(store):
        assert run["digest"] in wide.stdout
    assert wide.stdout.count("hpa-a") == 2 and "sweep, best" in wide.stdout


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_show_json_and_yaml_hold_the_run_its_summary_cost_and_verdict(store: Store, output: str) -> None:
    result = invoke("show", "hpa-c", *store.args(), "-o", output)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout) if output == "json" else yaml.safe_load(result.stdout)
    [row] = [run for run in listed(store) if run["run"] == 4]
    assert {key: document[key] for key in row} == row
    assert document["scenario_text"] == SCENARIO
    assert document["slo"]["latency_target_ms"] == 200 and isinstance(document["slo"]["met"], bool)
    assert document["cost"]["replicas"] >= 2 and document["cost"]["replica_hours"] > 0
    assert [event["id"] for event in document["events"]] == ["burst"]
    assert document["events"][0]["time_s"] == 20
    assert set(document["decisions"]) == {"hpa"} and document["decisions"]["hpa"] > 0


def test_show_wide_adds_a_line_with_the_name_tags_and_file(store: Store) -> None:
    result = invoke("show", "best", *store.args(), "-o", "wide")
    assert result.exit_code == 0, result.output
    first, second = result.stdout.splitlines()[:2]
    assert first.startswith("run 4: managed, seed 4")
    assert "name hpa-c" in second and "tags sweep, best" in second and str(store.scenario) in second


# -- any row the store can hold ----------------------------------------------------------------


class TextBytes(bytes):
    """Bytes to store as TEXT that need not be UTF-8 (as another tool might write them)."""


NOT_NULL = st.one_of(  # SQLite stores NaN as NULL: none here
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["[/]", "[bold]x", "Running", "Completed", "Failed", "{", "[1, 2]", '["a", 3]', "null"]),
    st.binary(max_size=6),
    st.binary(max_size=6).map(TextBytes),
)
ANY = st.one_of(st.none(), st.floats(), NOT_NULL)
JSON_VALUES = st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=4))  # NaN too: json writes it
# The columns of `runs` besides id; those the schema declares NOT NULL never hold NULL.
COLUMNS = {
    "name": NOT_NULL,
    "scenario_file": ANY,
    "scenario": NOT_NULL,
    "seed": NOT_NULL,
    "phase": st.one_of(st.sampled_from(["Running", "Completed", "Failed", "Paused", "Pending"]), NOT_NULL),
    "message": ANY,
    "digest": ANY,
    "summary": st.one_of(ANY, st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=3).map(json.dumps)),
    "simulated_ns": NOT_NULL,
    "wall_s": ANY,
    "started_at": NOT_NULL,
    "finished_at": ANY,
    "version": NOT_NULL,
    "host": st.one_of(st.just(socket.gethostname()), NOT_NULL),  # this host's Running runs are checked for life
    "pid": st.one_of(st.integers(-5, 2**40), NOT_NULL),
    "run_name": st.one_of(st.sampled_from(["a", "b"]), ANY),
    "tags": st.one_of(st.lists(st.sampled_from(["x", "y", "[/]"])).map(json.dumps), ANY),
}
ROWS = st.lists(st.fixed_dictionaries(COLUMNS), min_size=1, max_size=4)


def insert(store: RunStore, rows: list[dict[str, Any]]) -> None:
    with closing(store.open()) as db, db:
        for row in rows:
            places = ", ".join("CAST(? AS TEXT)" if isinstance(v, TextBytes) else "?" for v in row.values())
            values = [bytes(v) if isinstance(v, TextBytes) else v for v in row.values()]
            db.execute(f"INSERT INTO runs ({', '.join(row)}) VALUES ({places})", values)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ROWS)
def test_runs_lists_any_row_the_store_can_hold(rows: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(folder)
        insert(store, rows)
        for args in (
            [],
            ["-o", "wide"],
            ["--phase", "Failed", "--tag", "x"],
            ["--name", "a", "--last", "1", "-o", "wide"],
        ):
            result = invoke("runs", "--store", folder, *args)
            assert result.exit_code == 0, (args, result.output)
            assert "runs in" in result.stdout
        as_json = invoke("runs", "--store", folder, "-o", "json")
        assert as_json.exit_code == 0, as_json.output
        listed_runs = json.loads(as_json.stdout)
        assert [run["run"] for run in listed_runs] == list(range(1, len(rows) + 1))
        as_yaml = invoke("runs", "--store", folder, "-o", "yaml")
        assert as_yaml.exit_code == 0, as_yaml.output
        assert yaml.safe_load(as_yaml.stdout) == listed_runs
