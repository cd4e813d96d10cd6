"""kube-scheduler-simulator's recorder files read and replayed as a KEP-140 scenario.

The recording in examples/ksim/recording.jsonl is written by hand after upstream's recorder
(simulator/recorder/recorder.go: `Record{Time, Event, Resource}` marshalled one a line, a Delete
keeping only apiVersion, kind, name and namespace) and the objects a cluster's informers deliver
(server metadata, status). Its story, worked out by hand (4-CPU node a, 2-CPU node b):

    step 0  namespace, nodes a and b, agent-b (1 CPU, running on b before the recording began)
    step 1  web-0 (3 CPU) arrives: only a has 3 CPU            -> a
            (its recorded binding at 01.18 and status at 02.70 are not replayed)
    step 3  a is tainted NoSchedule; web-1 (500m) arrives      -> b (1 CPU free)
    step 5  agent-b Succeeded: gone for the scheduler; batch-0 (1.5 CPU) arrives -> b (exactly 1.5 free)
            (agent-b's Delete at 06.50 is left out: it is gone already)
    step 7  web-1's labels change (canary removed, tier added)
    step 8  web-0 deleted (its graceful-deletion Update at 08.10 is not replayed)
    step 9  web-2 (3 CPU) arrives: a is tainted, b is full     -> unschedulable
    step 10 a's taint removed                                  -> web-2 on a
    step 11 Done
"""

from __future__ import annotations

import calendar
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.core.time import MILLISECOND, SECOND
from skenario.errors import ScenarioError
from skenario.scenario.faketime import FakeTimeRun
from skenario.scenario.format.events import merge_patch
from skenario.scenario.format.kep import KepScenario
from skenario.scenario.ksimrecord import (
    ABSENT,
    OTHER_KIND,
    PRESENT,
    TERMINATED,
    UNCHANGED,
    is_recording,
    merge_diff,
    parse_recording,
    read_recording,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RECORDING = EXAMPLES / "ksim" / "recording.jsonl"
EXPORT = Path(__file__).parent / "data" / "ksim-export.json"

# 2025-06-20T09:00:00Z in nanoseconds since the epoch, by the standard library's calendar.
NINE = calendar.timegm((2025, 6, 20, 9, 0, 0)) * SECOND


def line(second: str, event: str, resource: dict[str, Any], *, zone: str = "Z") -> str:
    """A record as the recorder writes it: `time`, `event`, `resource`, compact."""
    return json.dumps({"time": f"2025-06-20T09:00:{second}{zone}", "event": event, "resource": resource})


def node(name: str, cpu: str = "4", labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": "1", "labels": labels or {}},
        "spec": spec,
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }


def pod(name: str, cpu: str = "1", *, node_name: str = "", phase: str = "Pending", **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "1", **meta},
        "spec": spec,
        "status": {"phase": phase},
    }


def gone(kind: str, name: str, namespace: str = "") -> dict[str, Any]:
    """A Delete's resource: `recordEvent` keeps only these."""
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": namespace}}


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "recording.jsonl"
    path.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return path


def events(tmp_path: Path, *lines: str) -> list[tuple[int, str, str]]:
    replay = read_recording(write(tmp_path, *lines)).replay("r")
    return [(e["time"], e["operation"], e["id"]) for e in replay.scenario["spec"]["events"]]


def run(scenario: dict[str, Any]) -> FakeTimeRun:
    fake = FakeTimeRun(KepScenario.model_validate(scenario))
    fake.run()
    return fake


def bound(fake: FakeTimeRun) -> dict[str, str | None]:
    return {pod.name: pod.node if pod.bound_at is not None else None for pod in fake.pods()}


# -- reading --------------------------------------------------------------------------------------


def test_the_example_holds_one_record_a_line_in_file_order() -> None:
    recording = read_recording(RECORDING)
    assert len(recording.records) == 20
    assert [r.line for r in recording.records] == list(range(1, 21))
    assert [r.event for r in recording.records[:6]] == ["Add", "Add", "Add", "Add", "Add", "Update"]
    assert [r.key for r in recording.records[:5]] == [
        ("Namespace", "", "team-a"),
        ("Node", "", "a"),
        ("Node", "", "b"),
        ("Pod", "team-a", "agent-b"),
        ("Pod", "team-a", "web-0"),
    ]
    # "2025-06-20T09:00:00.102345678Z": every nanosecond kept
    assert recording.records[0].at == NINE + 102_345_678
    # a Delete keeps only the object's name (and namespace)
    assert recording.records[13].resource == gone("Pod", "agent-b", "team-a")


@pytest.mark.parametrize(
    ("written", "nanoseconds"),
    [
        ("2025-06-20T09:00:01Z", NINE + SECOND),  # Go trims a zero fraction away
        ("2025-06-20T09:00:01.5Z", NINE + SECOND + 500 * MILLISECOND),
        ("2025-06-20T09:00:01.000000001Z", NINE + SECOND + 1),
        ("2025-06-20T18:00:01.25+09:00", NINE + SECOND + 250 * MILLISECOND),  # a recorder in Tokyo
        ("2025-06-20T01:30:01-07:30", NINE + SECOND),
    ],
)
def test_times_are_read_as_go_writes_them(tmp_path: Path, written: str, nanoseconds: int) -> None:
    text = json.dumps({"time": written, "event": "Add", "resource": node("a")})
    (record,) = parse_recording(text, "r.jsonl").records
    assert record.at == nanoseconds


def test_the_recorders_kinds_get_their_api_version_and_namespaced_ones_a_namespace(tmp_path: Path) -> None:
    """Hand-written records may leave out what the recorder always writes; the API server's defaults apply."""
    bare = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    (record,) = parse_recording(line("00", "Add", bare)).records
    assert record.resource["apiVersion"] == "v1"
    assert record.key == ("Pod", "default", "p")


def test_blank_lines_are_passed_over_and_lines_still_count(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(f"\n{line('00', 'Add', node('a'))}\n\n{line('01', 'Add', node('b'))}", encoding="utf-8")
    records = read_recording(path).records  # the last line has no newline: read too
    assert [(r.index, r.line) for r in records] == [(0, 2), (1, 4)]


def test_a_recording_is_told_from_other_files_by_its_first_line() -> None:
    assert is_recording(RECORDING.read_text())
    assert is_recording("\n\n" + line("00", "Delete", gone("Node", "a")))
    assert not is_recording(EXPORT.read_text())  # a ksim export: one JSON document
    assert not is_recording(json.dumps({"nodes": [], "pods": []}))  # the same on one line
    assert not is_recording((EXAMPLES / "kep140" / "taint-and-delete.yaml").read_text())
    assert not is_recording("")
    assert not is_recording("[1, 2]\n")


# -- errors ------------------------------------------------------------------------------------------

GOOD = line("00", "Add", node("a"))
BAD = [
    ("{not json", "records.1", "record 1 is not JSON"),
    ("[1, 2]", "records.1", "not a list"),
    (json.dumps({"time": "2025-06-20T09:00:01Z", "event": "Patch", "resource": node("b")}), "records.1.event", "Patch"),
    (json.dumps({"event": "Add", "resource": node("b")}), "records.1.time", "RFC 3339"),
    (json.dumps({"time": "yesterday", "event": "Add", "resource": node("b")}), "records.1.time", "yesterday"),
    (json.dumps({"time": "2025-13-01T00:00:00Z", "event": "Add", "resource": node("b")}), "records.1.time", "2025-13"),
    (json.dumps({"time": "2025-06-20T09:00:01Z", "event": "Add"}), "records.1.resource", "not null"),
    (line("01", "Add", {"apiVersion": "v1", "metadata": {"name": "b"}}), "records.1.resource.kind", "names its kind"),
    (line("01", "Add", {"kind": "Node"}), "records.1.resource.metadata", "needs metadata"),
    (line("01", "Add", {"kind": "Node", "metadata": {"name": ""}}), "records.1.resource.metadata.name", "needs a name"),
    (line("01", "Add", {**node("b"), "apiVersion": "v2"}), "records.1.resource.apiVersion", "not 'v2'"),
    (
        line("01", "Add", {**pod("p"), "metadata": {"name": "p", "namespace": 7}}),
        "records.1.resource.metadata.namespace",
        "namespace name",
    ),
]


@pytest.mark.parametrize(("bad", "field", "needle"), BAD)
def test_a_bad_record_is_one_error_naming_the_file_its_line_and_field(
    tmp_path: Path, bad: str, field: str, needle: str
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(f"{GOOD}\n\n{bad}\n", encoding="utf-8")  # record 1, on line 3
    with pytest.raises(ScenarioError) as raised:
        read_recording(path)
    error = raised.value
    assert (error.file, error.line, error.field) == (str(path), 3, field)
    assert needle in str(error) and "\n" not in str(error)


def test_a_file_without_records_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no records"):
        read_recording(write(tmp_path, "", "  "))


def test_a_recording_longer_than_faketime_is_an_error_at_the_record(tmp_path: Path) -> None:
    """FakeTime is an int32: at one step per nanosecond, 3 s of recording is 3·10⁹ steps, past 2³¹ - 1."""
    recording = read_recording(write(tmp_path, line("00", "Add", node("a")), line("03", "Add", node("b"))))
    with pytest.raises(ScenarioError) as raised:
        recording.replay("r", step=1)
    assert (raised.value.line, raised.value.field) == (2, "records.1.time")
    with pytest.raises(ScenarioError, match="positive"):
        recording.replay("r", step=0)


# -- the time mapping --------------------------------------------------------------------------------


def test_the_examples_records_run_at_their_recorded_second_in_file_order() -> None:
    """By hand from the timestamps (the first record's second is step 0); records 5, 6, 9, 12, 15 and
    19 (bindings, status, a graceful delete's Update) and 13 (agent-b's Delete, after it terminated) are
    left out."""
    scenario = read_recording(RECORDING).as_scenario("recording")
    assert scenario["apiVersion"] == "simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1"
    assert scenario["metadata"] == {"name": "recording"}
    assert [(e["time"], e["operation"], e["id"]) for e in scenario["spec"]["events"]] == [
        (0, "Create", "0/add/namespace/team-a"),
        (0, "Create", "1/add/node/a"),
        (0, "Create", "2/add/node/b"),
        (0, "Create", "3/add/pod/team-a/agent-b"),
        (1, "Create", "4/add/pod/team-a/web-0"),
        (3, "Patch", "7/update/node/a"),
        (3, "Create", "8/add/pod/team-a/web-1"),
        (5, "Delete", "10/update/pod/team-a/agent-b"),  # its Update to Succeeded
        (5, "Create", "11/add/pod/team-a/batch-0"),
        (7, "Patch", "14/update/pod/team-a/web-1"),
        (8, "Delete", "16/delete/pod/team-a/web-0"),
        (9, "Create", "17/add/pod/team-a/web-2"),
        (10, "Patch", "18/update/node/a"),
        (11, "Done", "done"),
    ]


def test_a_coarser_step_puts_more_records_in_one_step(tmp_path: Path) -> None:
    """At 5 s a step, seconds 0-4 are step 0, 5-9 step 1 and 10 step 2 (whole multiples of the step, from the epoch)."""
    replay = read_recording(RECORDING).replay("r", step=5 * SECOND)
    assert sorted({e["time"] for e in replay.scenario["spec"]["events"]}) == [0, 1, 2, 3]
    assert [e["time"] for e in replay.scenario["spec"]["events"] if e["operation"] != "Done"] == [0] * 7 + [1] * 5 + [2]


def test_a_record_written_out_of_time_order_keeps_its_place(tmp_path: Path) -> None:
    """Handlers of different informers take `time.Now()` before the lock: the file's order wins."""
    assert events(
        tmp_path,
        line("02", "Add", node("a")),
        line("05", "Add", node("b")),
        line("03", "Add", node("c")),  # written after b: not before it
        line("00", "Add", node("d")),  # earlier than the first record: not before step 0 either
    ) == [
        (0, "Create", "0/add/node/a"),
        (3, "Create", "1/add/node/b"),
        (3, "Create", "2/add/node/c"),
        (3, "Create", "3/add/node/d"),
        (4, "Done", "done"),
    ]


def test_records_of_one_second_run_in_file_order_before_the_scheduler_looks(tmp_path: Path) -> None:
    """A pod created and given a node selector in one second is scheduled once, with the selector:
    on `ssd`, where without it the emptier `plain` would win (LeastAllocated); the patch ran after
    the create though both are step 1."""
    fake = run(
        read_recording(
            write(
                tmp_path,
                line("00", "Add", node("plain", cpu="8")),
                line("00", "Add", node("ssd", labels={"disk": "ssd"})),
                line("01.1", "Add", pod("p")),
                line("01.9", "Update", {**pod("p"), "spec": {**pod("p")["spec"], "nodeSelector": {"disk": "ssd"}}}),
            )
        ).as_scenario("r")
    )
    assert bound(fake) == {"p": "ssd"}
    assert len(fake.pods()[0].attempts) == 1
    assert [(row["time"], row["operations"], row["scheduled"]) for row in fake.steps()] == [
        (0, 2, 0),
        (1, 2, 1),
        (2, 1, 0),
    ]


# -- Update as a patch -------------------------------------------------------------------------------

# RFC 7386 Appendix A's examples whose original and result are JSON objects, as (original, result,
# the least patch between them). That is the RFC's own patch but where the RFC's nulls remove
# nothing (marked): `merge_diff` writes no null for a key the original lacks.
RFC7386 = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"a": "b", "b": "c"}, {"b": "c"}),
    ({"a": "b"}, {}, {"a": None}),
    ({"a": "b", "b": "c"}, {"b": "c"}, {"a": None}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d"}}, {"a": {"b": "d"}}),  # the RFC's patch: {"a": {"b": "d", "c": null}}
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"e": None}, {"e": None, "a": 1}, {"a": 1}),
    ({}, {"a": {"bb": {}}}, {"a": {"bb": {}}}),  # the RFC's patch: {"a": {"bb": {"ccc": null}}}
]


@pytest.mark.parametrize(("original", "result", "least"), RFC7386)
def test_merge_diff_restates_rfc_7386s_examples(
    original: dict[str, Any], result: dict[str, Any], least: dict[str, Any]
) -> None:
    assert merge_diff(original, result) == least
    assert merge_patch(original, least) == result


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=12,
)
OBJECT = st.dictionaries(st.text(max_size=2), JSON, max_size=4)


def _no_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_no_nulls(v) for v in value]
    return value


@given(OBJECT, OBJECT)
def test_the_store_patched_with_the_diff_holds_the_recorded_object(before: dict[str, Any], after: Any) -> None:
    """The property the replay stands on: skenario's own merge patch (`format.events.merge_patch`,
    what the ObjectStore applies) of `before` with `merge_diff(before, after)` is `after`."""
    after = _no_nulls(after)
    assert merge_patch(before, merge_diff(before, after)) == after
    assert (merge_diff(before, after) == {}) == (before == after)


def test_an_update_replaces_the_whole_object_removed_fields_included(tmp_path: Path) -> None:
    """Node `a` loses its `disk: ssd` label in an Update, as the replayer's Update replaces the object:
    the pod that selects `disk: ssd`, created after, fits nowhere."""
    updated = node("a", labels={"zone": "z1"})
    updated["metadata"]["resourceVersion"] = "2"
    path = write(
        tmp_path,
        line("00", "Add", node("a", labels={"disk": "ssd", "zone": "z1"})),
        line("01", "Update", updated),
        line("02", "Add", {**pod("p"), "spec": {**pod("p")["spec"], "nodeSelector": {"disk": "ssd"}}}),
    )
    scenario = read_recording(path).as_scenario("r")
    patch = scenario["spec"]["events"][1]["patchOperation"]
    assert patch == {
        "typeMeta": {"apiVersion": "v1", "kind": "Node"},
        "objectMeta": {"name": "a"},
        "patch": {"metadata": {"labels": {"disk": None}}},  # uid and resourceVersion: server metadata, not replayed
    }
    fake = run(scenario)
    assert bound(fake) == {"p": None}
    assert fake.store.objects[("Node", "", "a")]["metadata"]["labels"] == {"zone": "z1"}


def test_the_examples_patches_are_the_recorded_changes() -> None:
    events = {e["id"]: e for e in read_recording(RECORDING).as_scenario("r")["spec"]["events"]}
    assert events["7/update/node/a"]["patchOperation"]["patch"] == {
        "spec": {"taints": [{"effect": "NoSchedule", "key": "maintenance"}]}
    }
    assert events["14/update/pod/team-a/web-1"]["patchOperation"] == {
        "typeMeta": {"apiVersion": "v1", "kind": "Pod"},
        "objectMeta": {"name": "web-1", "namespace": "team-a"},
        "patch": {"metadata": {"labels": {"canary": None, "tier": "front"}}},
    }
    untaint = events["18/update/node/a"]["patchOperation"]["patch"]
    assert untaint["spec"] == {"taints": None}
    assert untaint["status"]["conditions"][0]["lastHeartbeatTime"] == "2025-06-20T09:00:10Z"  # a list: given whole


# -- what is replayed of pods --------------------------------------------------------------------------


def test_created_objects_lose_server_fields_and_a_pod_bound_before_keeps_its_node() -> None:
    events = {e["id"]: e for e in read_recording(RECORDING).as_scenario("r")["spec"]["events"]}
    agent = events["3/add/pod/team-a/agent-b"]["createOperation"]["object"]
    assert agent["spec"]["nodeName"] == "b"  # running before the recording began
    assert "status" not in agent
    assert set(agent["metadata"]) == {"name", "namespace", "labels"}  # no uid, resourceVersion, managedFields...
    web = events["4/add/pod/team-a/web-0"]["createOperation"]["object"]
    assert "nodeName" not in web["spec"]
    node_a = events["1/add/node/a"]["createOperation"]["object"]
    assert node_a["status"]["allocatable"]["cpu"] == "4"  # a node's status is what the scheduler reads


def test_the_recorded_schedulers_binding_and_status_are_not_replayed(tmp_path: Path) -> None:
    """`p` was bound to `small` in the recorded cluster; skenario's scheduler decides: `big` scores
    higher for NodeResourcesFit (LeastAllocated: 7 of 8 CPU free against 1 of 2) and for
    BalancedAllocation (CPU 1/8 against memory 200Mi/8Gi is closer than 1/2 against it). A label
    changed after the binding is replayed; the node is not."""
    scheduled = {**pod("p"), "spec": {**pod("p")["spec"], "nodeName": "small"}, "status": {"phase": "Running"}}
    relabelled = {**scheduled, "metadata": {**scheduled["metadata"], "labels": {"tier": "front"}}}
    path = write(
        tmp_path,
        line("00", "Add", node("small", cpu="2")),
        line("00", "Add", node("big", cpu="8")),
        line("01", "Add", pod("p")),
        line("02", "Update", scheduled),
        line("03", "Update", relabelled),
    )
    replay = read_recording(path).replay("r")
    patches = [e["patchOperation"]["patch"] for e in replay.scenario["spec"]["events"] if e["operation"] == "Patch"]
    assert patches == [{"metadata": {"labels": {"tier": "front"}}}]
    assert replay.skipped == {UNCHANGED: 1}
    fake = run(replay.scenario)
    assert bound(fake) == {"p": "big"}
    assert fake.store.objects[("Pod", "default", "p")]["metadata"]["labels"] == {"tier": "front"}


def test_an_update_never_moves_a_pod_bound_when_it_was_added(tmp_path: Path) -> None:
    moved = pod("p", node_name="b", phase="Running")
    assert events(
        tmp_path,
        line("00", "Add", node("a")),
        line("00", "Add", node("b")),
        line("00", "Add", pod("p", node_name="a", phase="Running")),
        line("01", "Update", moved),  # impossible in Kubernetes (nodeName is set once): not replayed
    ) == [
        (0, "Create", "0/add/node/a"),
        (0, "Create", "1/add/node/b"),
        (0, "Create", "2/add/pod/default/p"),
        (2, "Done", "done"),
    ]


def test_terminated_pods_are_gone_for_the_scheduler(tmp_path: Path) -> None:
    """kube-scheduler lists pods with `status.phase!=Succeeded,status.phase!=Failed`: `old` (added
    Succeeded) is never created, `job` is deleted when it fails, and their Deletes are left out."""
    replay = read_recording(
        write(
            tmp_path,
            line("00", "Add", node("a")),
            line("00", "Add", pod("old", node_name="a", phase="Succeeded")),
            line("00", "Add", pod("job", node_name="a", phase="Running")),
            line("04", "Update", pod("job", node_name="a", phase="Failed")),
            line("05", "Update", pod("job", node_name="a", phase="Failed", labels={"x": "y"})),
            line("06", "Delete", gone("Pod", "job", "default")),
            line("06", "Delete", gone("Pod", "old", "default")),
        )
    ).replay("r")
    assert [(e["time"], e["operation"], e["id"]) for e in replay.scenario["spec"]["events"]] == [
        (0, "Create", "0/add/node/a"),
        (0, "Create", "2/add/pod/default/job"),
        (4, "Delete", "3/update/pod/default/job"),
        (7, "Done", "done"),
    ]
    assert replay.skipped == {TERMINATED: 1, ABSENT: 3}


def test_records_the_replay_cannot_apply_are_counted_by_reason(tmp_path: Path) -> None:
    replica_set = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"}}
    replay = read_recording(
        write(
            tmp_path,
            line("00", "Add", node("a")),
            line("00", "Add", node("a")),  # the replayer meets AlreadyExists, and goes on
            line("00", "Add", replica_set),  # a recorder told other GVRs
            line("01", "Update", node("z")),
            line("01", "Delete", gone("Node", "y")),
        )
    ).replay("r")
    assert replay.skipped == {PRESENT: 1, OTHER_KIND: 1, ABSENT: 2}
    assert len(replay.scenario["spec"]["events"]) == 2
    assert "5 recorded change(s) replayed as 1 operation(s)" in replay.describe()
    assert "1 objects of kinds outside the recorder's DefaultGVRs" in replay.describe()


def test_the_example_replays_as_worked_out_by_hand() -> None:
    """The module docstring's story: where skenario's scheduler puts each pod, and when."""
    fake = run(read_recording(RECORDING).as_scenario("recording"))
    assert fake.phase.value == "Completed"
    assert bound(fake) == {
        "team-a/agent-b": "b",
        "team-a/web-0": "a",
        "team-a/web-1": "b",
        "team-a/batch-0": "b",
        "team-a/web-2": "a",
    }
    assert {row["time"]: (row["scheduled"], row["unschedulable"]) for row in fake.steps()} == {
        0: (1, 0),  # agent-b, bound already
        1: (1, 0),
        3: (1, 0),
        5: (1, 0),
        7: (0, 0),
        8: (0, 0),
        9: (0, 1),
        10: (1, 0),
        11: (0, 0),
    }
    pods = {pod.name: pod for pod in fake.pods()}
    assert pods["team-a/web-2"].bound_at == (10 + 1) * SECOND  # FakeTime 10 is the kernel's 11 s


def test_an_operation_that_fails_is_pointed_at_its_record(tmp_path: Path) -> None:
    """The scenario's `spec.events.1.createOperation.object...` is record 2's resource, on line 4."""
    path = tmp_path / "r.jsonl"
    broken = {**pod("p"), "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}}
    path.write_text(
        "\n".join([line("00", "Add", node("a")), line("00", "Update", pod("x")), "", line("01", "Add", broken)]),
        encoding="utf-8",
    )
    replay = read_recording(path).replay("r")
    with pytest.raises(ScenarioError) as raised:
        run(replay.scenario)
    error = replay.locate(raised.value)
    assert (error.file, error.line) == (str(path), 4)
    assert error.field == "records.2.resource.spec.containers.0.resources.requests.cpu"
    other = ScenarioError("elsewhere", field="spec.seed")
    assert replay.locate(other) is other and other.field == "spec.seed"


def test_a_record_about_a_pod_skenarios_run_evicted_is_skipped_in_a_replay(tmp_path: Path) -> None:
    """Node `a`'s Delete is a drain in skenario, which evicts `p` at step 2; the recording deletes `p`
    itself at step 3, when the run no longer holds it. A replay (`skip_gone`, as `skenario run` runs a
    recording) skips that record and counts it; run as a plain scenario, it stops at that record."""
    path = write(
        tmp_path,
        line("00", "Add", node("a")),
        line("01", "Add", pod("p")),
        line("02", "Delete", gone("Node", "a")),
        line("03", "Delete", gone("Pod", "p", "default")),
    )
    replay = read_recording(path).replay("r")
    with pytest.raises(ScenarioError) as raised:
        run(replay.scenario)
    error = replay.locate(raised.value)
    assert (error.line, error.field) == (4, "records.3.resource")
    assert "there is no Pod default/p at this time" in str(error)
    fake = FakeTimeRun(KepScenario.model_validate(replay.scenario), skip_gone=True)
    fake.run()
    assert len(fake.skipped) == 1 and fake.phase.value == "Completed"
