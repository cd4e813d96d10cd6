"""`skenario replay` and `skenario calibrate` as a user meets them: the error against hand-made observed series,
kept with the run; calibration recovering a value skenario itself generated data with; bad input refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from skenario.cli import cli
from skenario.scenario.loader import parse_scenario

ORIGIN = 1_700_000_000  # the Unix second that is simulated 0

FIXED = f"""\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {{name: fixed}}
spec:
  duration: 10m
  workload:
    replicas: 3
    resources: {{requests: {{cpu: 500m}}}}
    request: {{cpuTime: 10ms}}
  traffic: {{type: constant, rate: 5}}
  recording: {{interval: 15s}}
  observed:
    replicas: {{file: replicas.csv}}
    origin: {ORIGIN}
    warmUp: 1m
"""


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def write_replicas(path: Path, counts: list[int], every: int = 15) -> None:
    rows = [f"{ORIGIN + i * every},replicas,{n}" for i, n in enumerate(counts)]
    path.write_text("timestamp,__name__,value\n" + "\n".join(rows) + "\n")


@pytest.fixture
def fixed(tmp_path: Path) -> Path:
    """Three replicas throughout; the cluster had 3 for 5 minutes, then 5."""
    write_replicas(tmp_path / "replicas.csv", [3] * 20 + [5] * 20)
    file = tmp_path / "fixed.yaml"
    file.write_text(FIXED)
    return file


def test_replay_prints_and_keeps_the_hand_computed_error(fixed: Path, tmp_path: Path) -> None:
    """Over [1 min, 10 min): 240 s alike, then 300 s two apart: MAE 600 / 540; replica-seconds 3 × 540 = 1620
    simulated against 3 × 240 + 5 × 300 = 2220 observed (-27.0%); one observed up, none simulated."""
    store = tmp_path / "store"
    code, out, err = invoke("replay", str(fixed), "--store", str(store), "-o", "json")
    assert code == 0, err
    found = json.loads(out)
    replicas = found["replicas"]
    assert replicas["mae"] == pytest.approx(600 / 540)
    assert (replicas["replica_seconds_simulated"], replicas["replica_seconds_observed"]) == (1620, 2220)
    assert replicas["replica_seconds_error_pct"] == pytest.approx(100 * (1620 - 2220) / 2220)
    assert (replicas["events_observed"], replicas["events_simulated"], replicas["events_matched"]) == (1, 0, 0)
    with sqlite3.connect(store / "runs.sqlite") as db:
        (body,) = db.execute("SELECT body FROM documents WHERE name = 'replay'").fetchone()
    kept = json.loads(body)
    assert kept["replicas"]["mae"] == pytest.approx(600 / 540)
    assert kept["observed"]["replicas"]["value"][-1] == 5
    code, out, err = invoke("replay", str(fixed), "--no-store")
    assert code == 0, err
    assert "replica MAE (time-weighted)" in out and "1.11" in out and "-27.0%" in out
    code, out, err = invoke("show", "1", "--store", str(store))
    assert code == 0, err
    assert "against the observed cluster: replica MAE 1.11" in out
    code, _, err = invoke("report", "1", "--store", str(store), "--to", str(tmp_path / "report.html"))
    assert code == 0, err
    assert "observed (the real cluster)" in (tmp_path / "report.html").read_text()


def test_replay_reads_observed_files_named_on_the_command_line(fixed: Path, tmp_path: Path) -> None:
    write_replicas(tmp_path / "other.csv", [3] * 40)  # the cluster matched: no error at all
    text = (tmp_path / "other.csv").read_text().replace(",replicas,", ",pods,")
    (tmp_path / "other.csv").write_text(text)
    code, out, err = invoke(
        "replay",
        str(fixed),
        "--no-store",
        "--observed",
        str(tmp_path / "other.csv"),
        "--replicas",
        "pods",
        "-o",
        "json",
    )
    assert code == 0, err
    assert json.loads(out)["replicas"]["mae"] == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--observed", "missing.csv"], "--observed"),
        (["--replicas", "pods"], "--replicas"),
        (["--warm-up", "soon"], "--warm-up"),
    ],
)
def test_bad_replay_input_is_one_line_and_nothing_is_kept(
    fixed: Path, tmp_path: Path, args: list[str], expected: str
) -> None:
    store = tmp_path / "store"
    code, _, err = invoke("replay", str(fixed), "--store", str(store), *args)
    assert code == 2
    assert expected in err and "Traceback" not in err
    assert not (store / "runs.sqlite").exists() or _runs(store) == 0


def test_a_scenario_without_observed_data_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "plain.yaml"
    file.write_text(FIXED.split("  observed:")[0])
    code, _, err = invoke("replay", str(file), "--no-store")
    assert code == 2
    assert "spec.observed" in err


def _runs(store: Path) -> int:
    with sqlite3.connect(store / "runs.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])


RAMP = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: ramp}
spec:
  duration: 12m
  seed: 3
  workload:
    replicas: 1
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: CPU}
  traffic: {type: ramp, from: 5/s, to: 60/s, stop: 10m}
  recording: {interval: 15s}
  autoscalers:
  - type: hpa
    spec:
      maxReplicas: 20
      metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
"""


def test_calibration_recovers_the_cpu_time_the_observed_run_was_made_with(tmp_path: Path) -> None:
    """Observed replicas made by skenario itself with 40 ms per request: fitting cpuTime over 20 ms..80 ms finds
    a value within 15% of it that follows those replicas (in-sample MAE at most 0.25 replica)."""
    truth = tmp_path / "truth.yaml"
    truth.write_text(RAMP.replace("CPU", "40ms"))
    series = tmp_path / "series.csv"
    code, _, err = invoke("run", str(truth), "--no-store", "--series", str(series), "-o", "json")
    assert code == 0, err
    lines = series.read_text().splitlines()
    header = lines[0].split(",")
    at, active = header.index("time_ns"), header.index("replicas_active")
    rows = [line.split(",") for line in lines[1:]]
    observed = [f"{ORIGIN + int(r[at]) // 10**9},replicas,{r[active]}" for r in rows]
    (tmp_path / "replicas.csv").write_text("timestamp,__name__,value\n" + "\n".join(observed) + "\n")
    fitted = tmp_path / "ramp.yaml"
    fitted.write_text(
        RAMP.replace("CPU", "25ms") + f"  observed:\n    replicas: {{file: replicas.csv}}\n    origin: {ORIGIN}\n"
    )
    code, out, err = invoke(
        "calibrate", str(fitted), "--fit", "workload.request.cpuTime=20ms..80ms", "--trials", "16",
        "--workers", "1", "--no-progress", "-o", "json",
    )  # fmt: skip
    assert code == 0, err
    found = json.loads(out)
    cpu = parse_scenario((tmp_path / "ramp.calibrated.yaml").read_text()).spec.workload.request.cpu_time
    assert abs(cpu.value / 1e6 - 40) <= 0.15 * 40  # type: ignore[union-attr]
    [run] = found["runs"]
    assert run["set"] == "in-sample"
    assert run["replica_mae"] <= 0.25
