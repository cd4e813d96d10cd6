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


def test_a_dry_run_finds_the_mistake_the_run_would_and_stores_nothing(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(EXAMPLE.read_text().replace("objectMeta: {name: a}", "objectMeta: {name: nowhere}"))
    store = tmp_path / "store"
    dry = CliRunner().invoke(cli, ["run", str(broken), "--dry-run", "--store", str(store)])
    real = CliRunner().invoke(cli, ["run", str(broken), "--store", str(store)])
    assert dry.exit_code == real.exit_code == 2
    assert dry.stderr == real.stderr
    (line,) = dry.stderr.splitlines()
    assert "spec.events.3.patchOperation" in line and "event 'taint-a' at FakeTime 2" in line
    assert "no Node nowhere" in line and "Traceback" not in line
    assert not store.exists()


def test_a_dry_run_of_a_valid_scenario_runs_it_in_memory_and_writes_nothing(tmp_path: Path) -> None:
    store, results = tmp_path / "store", tmp_path / "status.json"
    code, stdout, stderr = invoke("run", str(EXAMPLE), "--dry-run", "--store", str(store), "--results", str(results))
    assert code == 0, stderr
    assert "a valid KEP-140 Scenario with 7 event(s)" in stdout  # the example's seven `- id:` entries
    assert "Completed at FakeTime 4" in stdout
    assert not store.exists() and not results.exists()


def test_the_store_keeps_the_web_uis_annotations_and_export_writes_them(tmp_path: Path) -> None:
    """The stored KEP-140 document is the `--results` one, ksimAnnotations included, and `skenario
    export` writes it: a pod ksim would have scheduled names its node as PodScheduled does."""
    export = Path(__file__).resolve().parents[1] / "scenario" / "data" / "ksim-export.json"
    store, status_file, folder = tmp_path / "store", tmp_path / "status.json", tmp_path / "exported"
    code, _, stderr = invoke("run", str(export), "--store", str(store), "--results", str(status_file))
    assert code == 0, stderr
    written = json.loads(status_file.read_text())
    (run,) = RunStore(store).runs()
    stored = RunStore(store).load(run["run"]).documents["kep140"]
    assert stored["ksimAnnotations"] == written["ksimAnnotations"]
    code, _, stderr = invoke("export", str(run["run"]), "--store", str(store), "--output", str(folder))
    assert code == 0, stderr
    exported = json.loads((folder / "kep140.json").read_text())
    annotations = exported["ksimAnnotations"]
    assert annotations["team-a/web-0"] == {}  # bound in the export already: no scheduling cycle
    bound = {
        e["podScheduled"]["pod"]["metadata"]["name"]: e["podScheduled"]["boundTo"]
        for events in exported["scenarioResult"]["timeline"].values()
        for e in events
        if e["operation"] == "PodScheduled"
    }
    selected = {
        key.rpartition("/")[2]: names["kube-scheduler-simulator.sigs.k8s.io/selected-node"]
        for key, names in annotations.items()
        if names
    }
    assert selected and all(selected[name] == bound[name] for name in selected)


def test_a_kep_scenario_is_not_given_the_web_uis_annotations(tmp_path: Path) -> None:
    store = tmp_path / "store"
    code, _, stderr = invoke("run", str(EXAMPLE), "--store", str(store))
    assert code == 0, stderr
    (run,) = RunStore(store).runs()
    assert "ksimAnnotations" not in RunStore(store).load(run["run"]).documents["kep140"]


def test_disabling_prioritysort_is_one_line_naming_file_field_and_plugin(tmp_path: Path) -> None:
    configured = tmp_path / "configured.yaml"
    configured.write_text(
        EXAMPLE.read_text()
        + "  schedulerConfiguration:\n"
        + "    profiles: [{plugins: {queueSort: {disabled: [{name: PrioritySort}]}}}]\n"
    )
    code, _, stderr = invoke("check", str(configured))
    assert code == 2
    (line,) = stderr.splitlines()
    assert str(configured) in line and "PrioritySort cannot be disabled" in line
    assert "field 'spec.schedulerConfiguration.profiles.0.plugins.queueSort.disabled.0.name'" in line
    assert "Traceback" not in line
