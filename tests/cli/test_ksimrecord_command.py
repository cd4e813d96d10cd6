"""`skenario run RECORDING`: a kube-scheduler-simulator recording replayed as a KEP-140 scenario, end to end.

The story of examples/ksim/recording.jsonl is worked out by hand in tests/scenario/test_ksimrecord.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from skenario.cli import cli
from skenario.results.store import RunStore

RECORDING = Path(__file__).resolve().parents[2] / "examples" / "ksim" / "recording.jsonl"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_example_recording_runs_stores_and_writes_the_keps_status(tmp_path: Path) -> None:
    status_file = tmp_path / "status.json"
    code, stdout, stderr = invoke(
        "run", str(RECORDING), "--json", "--store", str(tmp_path / "store"), "--results", str(status_file)
    )
    assert code == 0, stderr
    # what was left out, on stderr: 6 bindings, status and graceful-deletion Updates; agent-b's Delete
    assert "20 recorded change(s) replayed as 13 operation(s) over FakeTime 0-11" in stderr
    assert "6 updates with nothing to replay" in stderr and "1 updates or deletes" in stderr
    printed = json.loads(stdout)
    assert (printed["scenario"], printed["phase"], printed["time"]) == ("recording", "Completed", 11)
    steps = {row["time"]: (row["scheduled"], row["unschedulable"]) for row in printed["steps"] if row["time"] >= 9}
    assert steps == {9: (0, 1), 10: (1, 0), 11: (0, 0)}  # web-2 waits a step for a's taint to go
    status = json.loads(status_file.read_text())
    bound = {
        e["podScheduled"]["pod"]["metadata"]["name"]: e["podScheduled"]["boundTo"]
        for events in status["scenarioResult"]["timeline"].values()
        for e in events
        if e["operation"] == "PodScheduled"
    }
    assert bound == {"agent-b": "b", "web-0": "a", "web-1": "b", "batch-0": "b", "web-2": "a"}
    # as ksim's web UI would show them after its replay
    annotations = status["ksimAnnotations"]
    assert annotations["team-a/web-2"]["kube-scheduler-simulator.sigs.k8s.io/selected-node"] == "a"
    assert annotations["team-a/agent-b"] == {}  # bound before the recording: no scheduling cycle
    store = RunStore(tmp_path / "store")
    (run,) = store.runs()
    assert run["phase"] == "Completed" and run["digest"] == printed["digest"]


def test_a_dry_run_converts_and_checks_and_runs_nothing(tmp_path: Path) -> None:
    code, stdout, stderr = invoke("run", str(RECORDING), "--dry-run", "--store", str(tmp_path / "store"))
    assert code == 0, stderr
    assert "a valid KEP-140 Scenario with 14 event(s)" in stdout
    assert not (tmp_path / "store").exists()


def test_a_bad_record_is_one_line_naming_file_line_and_field_and_nothing_is_stored(tmp_path: Path) -> None:
    lines = RECORDING.read_text().splitlines()
    lines[5] = lines[5].replace('"event":"Update"', '"event":"Modified"')
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    code, _, stderr = invoke("run", str(broken), "--store", str(tmp_path / "store"))
    assert code == 2
    assert f"{broken}:6, field 'records.5.event'" in stderr and "Modified" in stderr
    assert "Traceback" not in stderr
    assert not (tmp_path / "store").exists()


def test_an_operation_that_fails_names_the_record_it_came_from(tmp_path: Path) -> None:
    """web-1 (record 8, line 9) names a PriorityClass the recording never created: the run fails there."""
    lines = RECORDING.read_text().splitlines()
    lines[8] = lines[8].replace('"priority":0', '"priority":0,"priorityClassName":"batch-high"')
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(lines) + "\n")
    code, _, stderr = invoke("run", str(broken), "--store", str(tmp_path / "store"))
    assert code == 2
    assert f"{broken}:9, field 'records.8.resource.spec.priorityClassName'" in stderr
    assert "no PriorityClass 'batch-high'" in stderr
    assert not (tmp_path / "store").exists()
