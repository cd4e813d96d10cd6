"""`skenario run` on KEP-140's own Scenario: the example's story end to end, its results and its run in the store,
dry runs, and the results checked against the KEP's own types and fed back as a Scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    code, _, stderr = invoke("export", str(run["run"]), "--store", str(store), "--to", str(folder))
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


# -- the KEP's shapes, round-tripped ------------------------------------------------------------------
#
# KEP-140's Go types (kubernetes-sigs/kube-scheduler-simulator keps/140-scenario-based-simulation in
# its FakeTime version, the one skenario's founding documents give and reads: `ScenarioStatus`,
# `ScenarioResults`, `ScenarioTimelineEvent`, the operation results, `PodResult`,
# `ScenarioPodScheduleResult`, `ScenarioPluginsResults`, `ScenarioPluginsScoreResult`), restated
# as data: each struct's fields by their JSON names (the Go field, lowerCamelCase, as Kubernetes
# types are tagged) and types. "?T" is a pointer: null or left out when nil. "[]T" a slice,
# "map[K]T" a map (a JSON object, its keys strings). FakeTime is an int32, scores int64;
# runtime.Object, v1.Pod and metav1.ObjectMeta are Kubernetes objects (JSON objects).
FAKE_TIME = "FakeTime"
KEP_STRUCTS: dict[str, dict[str, str]] = {
    "ScenarioStatus": {
        "phase": "ScenarioPhase",
        "message": "?string",
        "time": FAKE_TIME,
        "scenarioResult": "ScenarioResults",
    },
    "ScenarioResults": {"simulatorVersion": "string", "timeline": "map[FakeTime][]ScenarioTimelineEvent"},
    "ScenarioTimelineEvent": {
        "time": FAKE_TIME,
        "operation": "OperationType",
        "create": "?CreateOperationResult",
        "patch": "?PatchOperationResult",
        "delete": "?DeleteOperationResult",
        "done": "?DoneOperationResult",
        "podScheduled": "?PodResult",
        "podUnscheduled": "?PodResult",
        "podPreempted": "?PodResult",
    },
    "CreateOperationResult": {"object": "Object"},
    "PatchOperationResult": {"typeMeta": "TypeMeta", "objectMeta": "ObjectMeta", "patch": "string", "object": "Object"},
    "DeleteOperationResult": {"typeMeta": "TypeMeta", "objectMeta": "ObjectMeta"},
    "DoneOperationResult": {"done": "bool"},
    "PodResult": {
        "pod": "Pod",
        "boundTo": "?string",
        "preemptedBy": "?string",
        "createdAt": FAKE_TIME,
        "boundAt": "?FakeTime",
        "preemptedAt": "?FakeTime",
        "scheduleResult": "[]ScenarioPodScheduleResult",
    },
    "ScenarioPodScheduleResult": {
        "time": "?FakeTime",
        "allCandidateNodes": "[]string",
        "allFilteredNodes": "[]string",
        "pluginResults": "ScenarioPluginsResults",
    },
    "ScenarioPluginsResults": {
        "filter": "map[NodeName]map[PluginName]string",
        "score": "map[NodeName]map[PluginName]ScenarioPluginsScoreResult",
    },
    "ScenarioPluginsScoreResult": {"rawScore": "int64", "normalizedScore": "int64", "finalScore": "int64"},
    "TypeMeta": {"apiVersion": "string", "kind": "string"},
}
# The KEP's enums.
KEP_ENUMS = {
    "ScenarioPhase": {"Pending", "Running", "Paused", "Completed", "Failed", "Unknown"},
    "OperationType": {"Create", "Patch", "Delete", "Done", "PodScheduled", "PodUnscheduled", "PodPreempted"},
}
# Which result field goes with which operation ("When Create is non nil, Operation should be Create").
RESULT_OF = {
    "Create": "create",
    "Patch": "patch",
    "Delete": "delete",
    "Done": "done",
    "PodScheduled": "podScheduled",
    "PodUnscheduled": "podUnscheduled",
    "PodPreempted": "podPreempted",
}
# What skenario adds, and only this: the event's id (the KEP's later ScenarioTimelineEvent has ID),
# why a Delete that no event asked for happened (a drain's eviction), and each attempt's chosen node
# and the scheduler's message.
SKENARIO_EXTRAS = {
    "ScenarioTimelineEvent": {"id": "string", "reason": "string"},
    "ScenarioPodScheduleResult": {"selectedNode": "?string", "message": "?string"},
}
INT_RANGES = {FAKE_TIME: (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def check_shape(value: Any, kind: str, path: str) -> None:
    """`value` is JSON of the KEP's type `kind`; an AssertionError names the path where it is not."""
    if kind.startswith("?"):
        if value is not None:
            check_shape(value, kind[1:], path)
        return
    if kind.startswith("[]"):
        assert isinstance(value, list), f"{path}: {kind} wanted, got {value!r}"
        for i, item in enumerate(value):
            check_shape(item, kind[2:], f"{path}.{i}")
        return
    if kind.startswith("map["):
        key_kind, _, item_kind = kind[4:].partition("]")
        assert isinstance(value, dict), f"{path}: {kind} wanted, got {value!r}"
        for key, item in value.items():
            assert isinstance(key, str), f"{path}: key {key!r}"
            if key_kind == FAKE_TIME:
                check_shape(int(key), FAKE_TIME, f"{path} key")
            check_shape(item, item_kind, f"{path}.{key}")
        return
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]
        assert type(value) is int and low <= value <= high, f"{path}: {kind} wanted, got {value!r}"
    elif kind in ("string", "NodeName", "PluginName"):
        assert isinstance(value, str), f"{path}: string wanted, got {value!r}"
    elif kind == "bool":
        assert isinstance(value, bool), f"{path}: bool wanted, got {value!r}"
    elif kind in KEP_ENUMS:
        assert value in KEP_ENUMS[kind], f"{path}: one of {sorted(KEP_ENUMS[kind])} wanted, got {value!r}"
    elif kind in ("Object", "Pod"):  # runtime.Object and v1.Pod: a Kubernetes object with its TypeMeta
        assert isinstance(value, dict) and isinstance(value.get("metadata"), dict), f"{path}: object {value!r}"
        check_shape({k: value.get(k) for k in ("apiVersion", "kind")}, "TypeMeta", path)
        assert kind != "Pod" or value["kind"] == "Pod", f"{path}: a Pod wanted"
    elif kind == "ObjectMeta":
        assert isinstance(value, dict) and isinstance(value.get("name"), str), f"{path}: ObjectMeta {value!r}"
    else:
        check_struct(value, kind, path)


def check_struct(value: Any, kind: str, path: str) -> None:
    fields = KEP_STRUCTS[kind] | SKENARIO_EXTRAS.get(kind, {})
    assert isinstance(value, dict), f"{path}: {kind} wanted, got {value!r}"
    unknown = set(value) - set(fields)
    assert not unknown, f"{path}: {kind} has no field(s) {sorted(unknown)}"
    for name, field_kind in fields.items():
        if not field_kind.startswith("?") and name in KEP_STRUCTS[kind]:
            assert name in value, f"{path}: {kind}.{name} is missing"
        if name in value:
            check_shape(value[name], field_kind, f"{path}.{name}")
    if kind == "ScenarioTimelineEvent":  # one result, the one its operation names
        given = [field for field in RESULT_OF.values() if value.get(field) is not None]
        assert given == [RESULT_OF[value["operation"]]], f"{path}: {value['operation']} with {given}"


PREEMPT_AND_DRAIN = """\
apiVersion: simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1
kind: Scenario
metadata: {name: preempt-and-drain}
spec:
  events:
    - {id: low-class, time: 0, operation: Create, createOperation: {object: {apiVersion: scheduling.k8s.io/v1,
       kind: PriorityClass, metadata: {name: low}, value: 10}}}
    - {id: high-class, time: 0, operation: Create, createOperation: {object: {apiVersion: scheduling.k8s.io/v1,
       kind: PriorityClass, metadata: {name: high}, value: 1000}}}
    - {id: node-a, time: 0, operation: Create, createOperation: {object: {apiVersion: v1, kind: Node,
       metadata: {name: a}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}}}}
    - {id: low, time: 1, operation: Create, createOperation: {object: {apiVersion: v1, kind: Pod,
       metadata: {name: low}, spec: {priorityClassName: low,
       containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}}}
    - {id: high, time: 2, operation: Create, createOperation: {object: {apiVersion: v1, kind: Pod,
       metadata: {name: high}, spec: {priorityClassName: high,
       containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}}}
    - {id: node-b, time: 3, operation: Create, createOperation: {object: {apiVersion: v1, kind: Node,
       metadata: {name: b}, status: {allocatable: {cpu: "4", memory: 4Gi, pods: "110"}}}}}
    - {id: drain-a, time: 3, operation: Delete,
       deleteOperation: {typeMeta: {apiVersion: v1, kind: Node}, objectMeta: {name: a}}}
    - {id: end, time: 4, operation: Done, doneOperation: {done: true}}
"""


def scenario_from_timeline(status: dict[str, Any], name: str) -> dict[str, Any]:
    """The Scenario the results describe: each Create, Patch, Delete and Done result back as its event
    (a Delete with a `reason` was a drain's eviction, no event's), in the timeline's order."""
    events = []
    for entries in status["scenarioResult"]["timeline"].values():
        for entry in entries:
            operation = entry["operation"]
            if operation not in ("Create", "Patch", "Delete", "Done") or "reason" in entry:
                continue
            result = entry[RESULT_OF[operation]]
            body = {
                "Create": {"object": result.get("object")},
                "Patch": {k: result.get(k) for k in ("typeMeta", "objectMeta", "patch")},
                "Delete": {k: result.get(k) for k in ("typeMeta", "objectMeta")},
                "Done": result,
            }[operation]
            events.append(
                {
                    "id": entry["id"],
                    "time": entry["time"],
                    "operation": operation,
                    f"{operation.lower()}Operation": body,
                }
            )
    return {
        "apiVersion": "simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": name},
        "spec": {"events": events},
    }


def test_the_results_have_the_keps_shapes_and_feed_back_to_the_same_digest(tmp_path: Path) -> None:
    """The KEP's story (nodes and pods created, a node tainted, a pod deleted, done) and one with a
    preemption and a drain: every ScenarioStatus is the KEP's types, every operation type occurs, and
    the Scenario rebuilt from the results' Create/Patch/Delete/Done runs to the same digest."""
    second = tmp_path / "preempt-and-drain.yaml"
    second.write_text(PREEMPT_AND_DRAIN)
    seen: set[str] = set()
    for scenario in (EXAMPLE, second):
        results = tmp_path / f"{scenario.stem}.json"
        code, stdout, stderr = invoke("run", str(scenario), "--json", "--no-store", "--results", str(results))
        assert code == 0, stderr
        status = json.loads(results.read_text())
        check_struct(status, "ScenarioStatus", scenario.name)
        timeline = status["scenarioResult"]["timeline"]
        for key, entries in timeline.items():
            assert all(entry["time"] == int(key) for entry in entries)  # keyed by each event's FakeTime
            seen |= {entry["operation"] for entry in entries}
        fed_back = tmp_path / f"{scenario.stem}-fed-back.json"
        fed_back.write_text(json.dumps(scenario_from_timeline(status, scenario.stem)))
        code, again, stderr = invoke("run", str(fed_back), "--json", "--no-store")
        assert code == 0, stderr
        assert json.loads(again)["digest"] == json.loads(stdout)["digest"]
    assert seen == KEP_ENUMS["OperationType"]
