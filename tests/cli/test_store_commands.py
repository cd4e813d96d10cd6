"""Every command on stored runs, on fresh runs made through the command line in a throwaway store."""

from __future__ import annotations

import csv
import json
import math
import re
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner, Result

from skenario.cli import cli
from skenario.scenario.loader import load_scenario

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

DURATION_S = 120
INTERVAL_S = 7  # does not divide the duration: the last row is a short interval
SCENARIO = f"""\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {{name: small-store}}
spec:
  duration: {DURATION_S}s
  seed: 1
  workload:
    replicas: 2
    resources: {{requests: {{cpu: 500m}}}}
    request: {{cpuTime: {{distribution: exponential, mean: 20ms}}}}
  traffic: {{type: poisson, rate: 20/s}}
  recording: {{interval: {INTERVAL_S}s}}
  slo: {{latency: 200ms}}
  autoscalers:
    - type: hpa
      spec:
        maxReplicas: 5
        metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 60}}}}}}]
  events:
    - {{id: burst, at: 30s, patch: {{target: traffic, patch: {{rate: 40/s}}}}}}
    - {{id: crash, at: 1m, delete: {{target: replica}}}}
"""
# Computed from the scenario, not read from skenario: one row per interval, the last one at the end.
EXPECTED_ROWS = math.ceil(DURATION_S / INTERVAL_S)
EXPORTED = {"series", "replica_series", "replicas", "timeline"}


def invoke_raw(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def invoke(*args: str) -> Result:
    result = invoke_raw(*args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:"), lines[0]
    return lines[0]


@dataclass(frozen=True)
class Stored:
    store: Path
    scenario: Path
    json: dict[int, dict]  # `run --json --no-store` of the same runs, by seed
    tables: dict[int, str]  # what `run` printed for stored runs 1 (seed 1) and 2 (seed 2), by seed

    def args(self) -> list[str]:
        return ["--store", str(self.store)]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    folder = tmp_path_factory.mktemp("store-commands")
    scenario = folder / "small.yaml"
    scenario.write_text(SCENARIO)
    store = folder / "store"
    tables, documents = {}, {}
    for seed in (1, 2):
        table = invoke("run", str(scenario), "--store", str(store), "--seed", str(seed), "--no-progress")
        assert table.exit_code == 0, table.output
        assert f"stored as run {seed} in" in table.stdout
        tables[seed] = table.stdout
        document = invoke("run", str(scenario), "--store", str(store), "--seed", str(seed), "--json", "--no-store")
        assert document.exit_code == 0, document.output
        documents[seed] = json.loads(document.stdout)
    return Stored(store, scenario, documents, tables)


def summary_rows(text: str) -> list[str]:
    """The rows of a summary table, without wall time and speed-up (which only `run` knows)."""
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("┌"))
    bottom = next(i for i, line in enumerate(lines) if line.startswith("└"))
    rows = lines[top + 1 : bottom]
    return [row for row in rows if "wall time" not in row and "speed-up" not in row]


def test_runs_lists_both_fresh_runs_as_completed(stored: Stored) -> None:
    result = invoke("runs", *stored.args())
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if re.match(r"^│ \d+ ", line)]
    assert len(rows) == 2, result.stdout  # the --no-store runs are not there
    for seed, row in zip((1, 2), rows, strict=True):
        assert re.match(rf"^│ {seed} +│ small-store +│ {seed} +│ Completed +│ 2m +│", row), row
        assert stored.json[seed]["digest"] in row
        assert stored.json[seed]["phase"] == "Completed" and stored.json[seed]["run"] is None


@pytest.mark.parametrize(("which", "seed"), [("1", 1), ("2", 2), ("latest", 2), ("-1", 2), ("-2", 1)])
def test_show_prints_the_summary_the_run_printed(stored: Stored, which: str, seed: int) -> None:
    result = invoke("show", *stored.args(), "--", which)
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0]
    assert header.startswith(f"run {seed}: small-store, seed {seed}, Completed: reached spec.duration"), header
    # The stored summary is the one the run printed, row for row (the digest hashes these counts).
    assert summary_rows(result.stdout) == summary_rows(stored.tables[seed])
    # Every row of the summary (readout.summary_rows: 13 without Pending pods, memory or retries) and the
    # two movement counts.
    assert len(summary_rows(result.stdout)) == 15
    assert f"{stored.json[seed]['requests_arrived']:,}" in result.stdout
    assert "SLO p99 <= 200 ms" in result.stdout
    assert "burst" in result.stdout and "crash" in result.stdout  # the events table
    assert "decisions: hpa" in result.stdout


def test_the_stored_digest_is_the_digest_the_run_printed(stored: Stored) -> None:
    for seed in (1, 2):
        digest = re.search(r"digest: (\w+)", stored.tables[seed])
        assert digest is not None and digest.group(1) == stored.json[seed]["digest"]
    with sqlite3.connect(stored.store / "runs.sqlite") as db:
        rows = db.execute("SELECT id, seed, digest, phase, simulated_ns FROM runs ORDER BY id").fetchall()
    assert rows == [(seed, seed, stored.json[seed]["digest"], "Completed", DURATION_S * 10**9) for seed in (1, 2)]
    assert stored.json[1]["digest"] != stored.json[2]["digest"]


def test_compare_shows_both_runs(stored: Stored) -> None:
    result = invoke("compare", "1", "2", *stored.args())
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "run 1" in text and "run 2" in text
    assert "1 / Completed" in text and "2 / Completed" in text
    for document in stored.json.values():
        assert document["digest"] in text
        assert f"{document['requests_arrived']:,}" in text
    assert "SLO" in text


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_writes_every_table_with_a_row_per_interval(stored: Stored, tmp_path: Path, fmt: str) -> None:
    folder = tmp_path / "exported"
    result = invoke("export", "1", "--format", fmt, "--to", str(folder), *stored.args())
    assert result.exit_code == 0, result.output
    names = {p.name for p in folder.iterdir()}
    assert names == {f"{table}.{fmt}" for table in EXPORTED} | {"summary.json", "scenario.yaml"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left behind

    def read(table: str) -> pd.DataFrame:
        path = folder / f"{table}.{fmt}"
        return pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)

    series = read("series")
    assert len(series) == EXPECTED_ROWS
    assert series["time_ns"].tolist() == [min((k + 1) * INTERVAL_S, DURATION_S) * 10**9 for k in range(EXPECTED_ROWS)]
    assert series["requests_arrived"].sum() == stored.json[1]["requests_arrived"]
    assert series["requests_completed"].sum() == stored.json[1]["requests_completed"]
    replicas = read("replicas")
    assert len(replicas) == stored.json[1]["replicas_started"]  # the two it started with count as started
    assert set(read("replica_series")["replica"]) <= set(replicas["replica"])
    timeline = read("timeline")
    assert {"burst", "crash"} <= set(timeline["source"])
    assert all(isinstance(json.loads(detail), dict) for detail in timeline["detail"])
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["run"] == 1 and summary["phase"] == "Completed"
    assert summary["digest"] == stored.json[1]["digest"]
    assert (folder / "scenario.yaml").read_text() == SCENARIO


def test_export_to_an_existing_folder_exits_2_and_leaves_it_alone(stored: Stored, tmp_path: Path) -> None:
    folder = tmp_path / "taken"
    folder.mkdir()
    (folder / "mine.txt").write_text("keep")
    line = one_error_line(invoke("export", "1", "--format", "csv", "--to", str(folder), *stored.args()))
    assert "exists" in line and "taken" in line
    assert [p.name for p in folder.iterdir()] == ["mine.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]


def test_export_by_default_names_a_folder_after_the_run(
    stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("export", "2", "--format", "csv", *stored.args())
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir()] == ["run-2-small-store"]


def short_run(tmp_path: Path, name: str) -> Path:
    """A store in tmp_path holding one 10 s run of the scenario named `name`."""
    scenario = tmp_path / "named.yaml"
    text = SCENARIO.replace("name: small-store", f"name: {json.dumps(name)}").replace(f"{DURATION_S}s", "10s")
    scenario.write_text(text.replace("at: 30s", "at: 3s").replace("at: 1m", "at: 6s"))
    store = tmp_path / "store"
    assert invoke("run", str(scenario), "--store", str(store), "--no-progress").exit_code == 0
    return store


@pytest.mark.parametrize("existing", [False, True], ids=["plain", "with-run-1-x-present"])
def test_export_of_a_run_whose_name_is_a_path_stays_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    """metadata.name is free text; the default export folder `run-<id>-<name>` must not become a path.

    BUG: with name `x/../../escaped`, export without -o renames its staging folder to
    `run-1-x/../../escaped`: a FileNotFoundError traceback (exit 1), or, when a folder `run-1-x`
    happens to exist in the working folder, the export lands outside it, in `../escaped`.
    """
    store = short_run(tmp_path, "x/../../escaped")
    work = tmp_path / "a" / "work"
    work.mkdir(parents=True)
    if existing:
        (work / "run-1-x").mkdir()
    monkeypatch.chdir(work)
    result = invoke_raw("export", "1", "--format", "csv", "--store", str(store))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 2), result.output
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["work"]  # nothing written outside the working folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "named.yaml", "store"]


def test_plot_writes_a_png(stored: Stored, tmp_path: Path) -> None:
    from PIL import Image

    path = tmp_path / "x.png"
    result = invoke("plot", "1", "--to", str(path), *stored.args())
    assert result.exit_code == 0, result.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        width, height = image.size
    assert width > 200 and height > 200


def test_report_writes_an_html_page(stored: Stored, tmp_path: Path) -> None:
    path = tmp_path / "x.html"
    result = invoke("report", "1", "--to", str(path), *stored.args())
    assert result.exit_code == 0, result.output
    html = path.read_text()
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert html.rstrip().endswith("</html>")
    assert "small-store" in html
    assert stored.json[1]["digest"] in html


@pytest.mark.parametrize(
    "args",
    [
        ["show", "99"],
        ["show", "one"],
        ["compare", "1", "99"],
        ["export", "99", "--format", "csv"],
        ["plot", "99"],
        ["report", "99"],
    ],
    ids=["show", "show-not-a-number", "compare", "export", "plot", "report"],
)
def test_an_unknown_run_exits_2_with_one_line(
    stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    line = one_error_line(invoke(*args, *stored.args()))
    assert ("99" in line or "one" in line) and "run" in line
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("command", ["export", "plot", "report"])
def test_output_in_a_missing_folder_exits_2_and_writes_nothing(stored: Stored, tmp_path: Path, command: str) -> None:
    line = one_error_line(invoke(command, "1", "--to", str(tmp_path / "absent" / "out"), *stored.args()))
    assert "no such directory" in line and "absent" in line
    assert list(tmp_path.iterdir()) == []


def test_no_store_leaves_no_store_folder(stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKENARIO_STORE", raising=False)
    result = invoke("run", str(stored.scenario), "--no-store", "--no-progress", "--store", str(tmp_path / "st"))
    assert result.exit_code == 0, result.output
    assert "stored as run" not in result.stdout
    result = invoke("run", str(stored.scenario), "--no-store", "--no-progress")
    assert result.exit_code == 0, result.output
    assert list(tmp_path.iterdir()) == []  # neither --store's folder nor the default .skenario


def test_store_from_the_environment(stored: Stored, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKENARIO_STORE", str(stored.store))
    result = invoke("runs")
    assert result.exit_code == 0, result.output
    assert str(stored.store) in result.stdout.replace("\n", "")


def test_series_writes_the_csv(stored: Stored, tmp_path: Path) -> None:
    series = tmp_path / "out.csv"
    result = invoke("run", str(stored.scenario), "--json", "--no-store", "--series", str(series))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    with series.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == EXPECTED_ROWS
    assert int(rows[-1]["time_ns"]) == DURATION_S * 10**9 == summary["simulated_ns"]
    assert sum(int(r["requests_arrived"]) for r in rows) == summary["requests_arrived"]
    assert summary["digest"] == stored.json[1]["digest"]


def test_series_in_a_missing_folder_exits_2_and_stores_nothing(stored: Stored, tmp_path: Path) -> None:
    store = tmp_path / "st"
    result = invoke("run", str(stored.scenario), "--store", str(store), "--series", str(tmp_path / "no" / "s.csv"))
    assert "--series" in one_error_line(result)
    assert not store.exists()


# -- the JSON Schema -------------------------------------------------------------------------------


def scenario_documents() -> list[tuple[str, dict]]:
    """The `kind: Scenario` document of every file in examples/ that skenario loads as a scenario.

    Manifest-only files (examples/manifests) are not scenarios; a multi-document scenario file
    holds one Scenario document and manifests, and only the Scenario document is checked.
    """
    found = []
    for path in sorted(EXAMPLES.rglob("*.yaml")):
        try:
            load_scenario(path)
        except Exception:
            continue
        documents = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
        scenarios = [d for d in documents if d.get("kind") == "Scenario"]
        assert len(scenarios) == 1, path
        found.append((str(path.relative_to(EXAMPLES)), scenarios[0]))
    return found


SCENARIO_DOCUMENTS = scenario_documents()


def json_schema() -> dict:
    result = invoke("schema")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_schema_prints_a_valid_json_schema() -> None:
    import jsonschema  # in the test extra

    schema = json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert {"apiVersion", "kind", "metadata", "spec"} <= set(schema["properties"])
    assert len(SCENARIO_DOCUMENTS) >= 7  # every example scenario was found


@pytest.mark.parametrize("document", [d for _, d in SCENARIO_DOCUMENTS], ids=[name for name, _ in SCENARIO_DOCUMENTS])
def test_every_example_scenario_validates_against_the_schema(document: dict) -> None:
    import jsonschema  # in the test extra

    validator = jsonschema.Draft202012Validator(json_schema())
    problems = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]
    assert problems == []


def test_the_schema_rejects_what_skenario_rejects() -> None:
    import jsonschema  # in the test extra

    validator = jsonschema.Draft202012Validator(json_schema())
    good = yaml.safe_load(SCENARIO)
    assert list(validator.iter_errors(good)) == []
    for path, junk in [
        (("spec", "duration"), "5 parsecs"),
        (("spec", "workload", "replicaz"), 1),
        (("apiVersion",), "skenario.dev/v2"),
        (("kind",), "Deployment"),
    ]:
        bad = yaml.safe_load(SCENARIO)
        node = bad
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = junk
        assert list(validator.iter_errors(bad)), path


@pytest.mark.parametrize(
    ("field", "value"),
    [("cpuTime", "20ms"), ("ioTime", "0s"), ("timeout", "2\u03bcs")],
    ids=["shorthand-constant", "shorthand-zero", "greek-mu"],
)
def test_the_schema_accepts_what_skenario_accepts(tmp_path: Path, field: str, value: str) -> None:
    """BUG: `cpuTime: 20ms` (a constant, the shorthand every example uses) and durations in `μs` (U+03BC,
    which parse_duration takes) load and run, but the schema rejects them."""
    import jsonschema  # in the test extra

    document = yaml.safe_load(SCENARIO)
    document["spec"]["workload"]["request"][field] = value
    path = tmp_path / "accepted.yaml"
    path.write_text(yaml.safe_dump(document, allow_unicode=True))
    load_scenario(path)  # skenario takes it
    validator = jsonschema.Draft202012Validator(json_schema())
    assert [e.message for e in validator.iter_errors(document)] == []


def test_reading_commands_never_create_a_store(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    listed = CliRunner().invoke(cli, ["runs", "--store", str(missing)])
    assert listed.exit_code == 0, listed.output
    shown = CliRunner().invoke(cli, ["show", "1", "--store", str(missing)])
    assert shown.exit_code == 2 and "no run store here" in shown.output
    assert not missing.exists()


def test_runs_rm_and_gc_delete_runs_with_everything_they_recorded(tmp_path: Path) -> None:
    scenario = tmp_path / "small.yaml"
    scenario.write_text(SCENARIO)
    store = tmp_path / "store"
    for seed in (1, 2, 3):
        assert invoke("run", str(scenario), "--store", str(store), "--seed", str(seed), "--no-progress").exit_code == 0
    assert invoke("runs", "--store", str(store), "--last", "1").stdout.count("small") == 1
    assert "deleted run 1" in invoke("runs", "rm", "1", "--store", str(store)).stdout
    assert "no such run" in one_error_line(invoke("runs", "rm", "1", "--store", str(store)))
    assert "deleted 1 run" in invoke("runs", "gc", "--keep", "1", "--store", str(store)).stdout
    with sqlite3.connect(store / "runs.sqlite") as db:
        assert db.execute("SELECT id FROM runs").fetchall() == [(3,)]
        assert db.execute("SELECT DISTINCT run_id FROM series").fetchall() == [(3,)]


def test_runs_check_and_the_readers_name_each_damaged_row(tmp_path: Path) -> None:
    store = tmp_path / "store"
    ran = CliRunner().invoke(cli, ["run", str(EXAMPLES / "events.yaml"), "--store", str(store), "--no-progress"])
    assert ran.exit_code == 0, ran.output
    whole = CliRunner().invoke(cli, ["runs", "check", "--store", str(store)])
    assert whole.exit_code == 0 and "whole" in whole.stdout
    with closing(sqlite3.connect(store / "runs.sqlite")) as db, db:
        db.execute("UPDATE timeline SET detail = 'x' WHERE seq = 0")
    checked = CliRunner().invoke(cli, ["runs", "check", "--store", str(store)])
    assert checked.exit_code == 1 and checked.stdout.startswith("run 1: timeline entry 0: not JSON")
    shown = CliRunner().invoke(cli, ["show", "1", "--store", str(store)])
    assert shown.exit_code == 0 and shown.stderr.startswith("warning: run 1: timeline entry 0: not JSON")
    assert shown.stderr.count("\n") == 1
