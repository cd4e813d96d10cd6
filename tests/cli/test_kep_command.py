"""`skenario run` on KEP-140's own Scenario: the example's story end to end, its results and its run in the store."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from skenario.cli import cli
from skenario.results.store import RunStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "kep140" / "taint-and-delete.yaml"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_example_tells_the_keps_story(tmp_path: Path) -> None:
    """By hand: the two 3-CPU pods of `web` take one 4-CPU node each at step 1; after `a` is tainted
    the 500m pod goes to `b` (1 CPU free there); deleting web-0 at step 3 makes its ReplicaSet create
    web-2, which fits nowhere (a is tainted, b has 500m free); Done at 4."""
    status_file = tmp_path / "status.json"
    code, stdout, stderr = invoke(
        "run", str(EXAMPLE), "--json", "--store", str(tmp_path / "store"), "--results", str(status_file)
    )
    assert code == 0, stderr
    printed = json.loads(stdout)
    assert (printed["phase"], printed["time"]) == ("Completed", 4)
    steps = {row["time"]: (row["scheduled"], row["unschedulable"]) for row in printed["steps"]}
    assert steps == {0: (0, 0), 1: (2, 0), 2: (1, 0), 3: (0, 1), 4: (0, 0)}
    status = json.loads(status_file.read_text())
    assert status["phase"] == "Completed"
    step2 = status["scenarioResult"]["timeline"]["2"]
    (batch,) = [e["podScheduled"] for e in step2 if e["operation"] == "PodScheduled"]
    assert batch["boundTo"] == "b"
    assert batch["scheduleResult"][0]["pluginResults"]["filter"]["a"]["TaintToleration"].startswith(
        "node(s) had untolerated taint"
    )
    store = RunStore(tmp_path / "store")
    (run,) = store.runs()
    assert run["phase"] == "Completed" and run["digest"] == printed["digest"]
    assert store.load(run["run"]).documents["kep140"]["phase"] == "Completed"


def test_the_same_scenario_gives_the_same_digest(tmp_path: Path) -> None:
    digests = {json.loads(invoke("run", str(EXAMPLE), "--json", "--no-store")[1])["digest"] for _ in range(2)}
    assert len(digests) == 1


def test_a_mistake_is_one_line_naming_the_event_and_nothing_is_stored(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace("objectMeta: {name: a}", "objectMeta: {name: nowhere}")
    broken = tmp_path / "broken.yaml"
    broken.write_text(text)
    code, _, stderr = invoke("run", str(broken), "--store", str(tmp_path / "store"))
    assert code == 2
    assert "spec.events.3.patchOperation" in stderr and "nowhere" in stderr
    assert "Traceback" not in stderr
    assert not (tmp_path / "store").exists()


def test_a_kube_scheduler_simulator_export_runs_and_carries_its_web_uis_annotations(tmp_path: Path) -> None:
    """The hand-written export: web-0 is bound to node-a1 already (no cycle, no annotations); db-0's
    claim is on a PV whose node affinity is zone-a, so it lands in zone a; every scheduled pod's
    `selected-node` annotation names the node its PodResult was bound to."""
    export = Path(__file__).resolve().parents[1] / "scenario" / "data" / "ksim-export.json"
    status_file = tmp_path / "status.json"
    code, _, stderr = invoke("run", str(export), "--no-store", "--results", str(status_file))
    assert code == 0, stderr
    status = json.loads(status_file.read_text())
    assert status["phase"] == "Completed"
    bound = {
        e["podScheduled"]["pod"]["metadata"]["name"]: e["podScheduled"]["boundTo"]
        for events in status["scenarioResult"]["timeline"].values()
        for e in events
        if e["operation"] == "PodScheduled"
    }
    assert bound["web-0"] == "node-a1"
    assert bound["db-0"] in ("node-a1", "node-a2")
    annotations = status["ksimAnnotations"]
    assert annotations["team-a/web-0"] == {}
    for key, names in annotations.items():
        if names:
            assert names["kube-scheduler-simulator.sigs.k8s.io/selected-node"] == bound[key.rpartition("/")[2]]
