"""The command line as a user meets it: exit codes, output, and no tracebacks for user mistakes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from skenario import __version__
from skenario.cli import cli

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skenario", *args], capture_output=True, text=True, cwd=ROOT)


def test_run_prints_the_summary_and_a_digest() -> None:
    result = CliRunner().invoke(cli, ["run", str(QUICKSTART), "--show-ignored"])
    assert result.exit_code == 0, result.output
    for row in (
        "requests arrived",
        "requests completed",
        "requests failed",
        "latency p50",
        "latency p95",
        "latency p99",
        "movements completed",
        "movements ignored",
        "wall time",
        "speed-up",
        "digest:",
        "ignored movements",
    ):
        assert row in result.output


def test_same_seed_same_digest_across_processes_and_a_new_seed_changes_it() -> None:
    first = json.loads(run_cli("run", str(QUICKSTART), "--json").stdout)
    second = json.loads(run_cli("run", str(QUICKSTART), "--json").stdout)
    other = json.loads(run_cli("run", str(QUICKSTART), "--json", "--seed", "43").stdout)
    assert first["digest"] == second["digest"]
    assert first["digest"] != other["digest"]
    assert (
        first["requests_arrived"]
        == first["requests_completed"] + first["requests_failed"] + first["requests_in_flight"]
    )


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


@pytest.mark.parametrize(
    ("content", "needles"),
    [
        ("spec: [unclosed\n", ["bad.yaml", "YAML"]),
        (
            QUICKSTART.read_text().replace("    replicas: 6", "    replicas: 6\n    replicaz: 1"),
            ["bad.yaml", "spec.workload.replicaz"],
        ),
        (QUICKSTART.read_text().replace("rate: 10/s", "rate: -5"), ["bad.yaml", "spec.traffic.1.rate", "-5"]),
        (
            QUICKSTART.read_text().replace("duration: 30m", "duration: 5 parsecs"),
            ["bad.yaml", "spec.duration", "5 parsecs"],
        ),
    ],
    ids=["bad-yaml", "unknown-field", "negative-rate", "wrong-unit"],
)
def test_malformed_scenarios_exit_2_with_one_clear_message(tmp_path: Path, content: str, needles: list[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(content)
    result = run_cli("run", str(bad))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    message = result.stderr.strip()
    assert message.startswith("error:")
    for needle in needles:
        assert needle in message


def test_missing_file_exits_2(tmp_path: Path) -> None:
    result = run_cli("run", str(tmp_path / "absent.yaml"))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "absent.yaml" in result.stderr


TRACE_SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: replay}
spec:
  duration: 1m
  workload:
    replicas: 2
    request: {cpuTime: 10ms}
  traffic: {type: trace, file: trace.csv, column: t}
"""


@pytest.mark.parametrize(
    ("rows", "needles"),
    [
        ("time\n1\n2\n", ["trace.csv", "'t'"]),  # missing column
        ("t\n1\n3\n2\n", ["trace.csv:4", "2"]),  # unsorted: line 4 goes back in time
        ("t\n1\nsoon\n", ["trace.csv:3", "soon"]),  # not a time
        ("", ["trace.csv", "empty"]),
    ],
    ids=["missing-column", "unsorted", "unparsable", "empty"],
)
def test_bad_trace_files_exit_2_naming_file_line_and_value_and_write_nothing(
    tmp_path: Path, rows: str, needles: list[str]
) -> None:
    (tmp_path / "replay.yaml").write_text(TRACE_SCENARIO)
    (tmp_path / "trace.csv").write_text(rows)
    series = tmp_path / "series.csv"
    result = run_cli("run", str(tmp_path / "replay.yaml"), "--series", str(series))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    message = result.stderr.strip()
    assert message.startswith("error:")
    for needle in needles:
        assert needle in message, message
    assert not series.exists()
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())  # no half-written file either


def test_negative_counts_in_a_counts_trace_exit_2(tmp_path: Path) -> None:
    scenario = TRACE_SCENARIO.replace(
        "{type: trace, file: trace.csv, column: t}", "{type: counts, file: trace.csv, timeColumn: t, countColumn: n}"
    )
    (tmp_path / "replay.yaml").write_text(scenario)
    (tmp_path / "trace.csv").write_text("t,n\n0,5\n1,-3\n")
    result = run_cli("run", str(tmp_path / "replay.yaml"))
    assert result.returncode == 2
    assert "trace.csv:3" in result.stderr and "-3" in result.stderr


def test_series_has_a_row_per_interval_and_adds_up_to_the_summary(tmp_path: Path) -> None:
    import csv

    series = tmp_path / "series.csv"
    result = run_cli("run", str(QUICKSTART), "--json", "--series", str(series))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    rows = list(csv.DictReader(series.open()))
    assert len(rows) == 60  # 30 minutes recorded every 30 s
    assert sum(int(r["requests_arrived"]) for r in rows) == summary["requests_arrived"]
    assert sum(int(r["requests_completed"]) for r in rows) == summary["requests_completed"]
    assert int(rows[-1]["time_ns"]) == summary["simulated_ns"]
