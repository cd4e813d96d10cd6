"""kube-scheduler-simulator's exports read and turned into a KEP-140 scenario; PodResults written as its annotations.

The export in data/ksim-export.json is written by hand after upstream's `ResourcesForSnap`
(simulator/snapshot/snapshot.go) and its sample response (simulator/docs/api-samples/v1/export.md):
list items without apiVersion and kind, server metadata kept, the scheduler configuration without
its TypeMeta. Expected annotation values are worked out by hand from `Store.GetStoredResult`
(simulator/scheduler/plugin/resultstore/store.go) and Go's `json.Marshal` (compact, keys sorted).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from skenario.errors import ScenarioError
from skenario.scenario.faketime import FakeTimeRun
from skenario.scenario.format.kep import KepScenario
from skenario.scenario.ksim import go_json_marshal, ksim_annotations, read_export
from skenario.scheduling.attempts import Attempt, FilterVerdicts, PluginScores
from skenario.scheduling.objects import PodSpec
from skenario.scheduling.pods import Pod

EXPORT = Path(__file__).parent / "data" / "ksim-export.json"

FILTER = "kube-scheduler-simulator.sigs.k8s.io/filter-result"
POSTFILTER = "kube-scheduler-simulator.sigs.k8s.io/postfilter-result"
SCORE = "kube-scheduler-simulator.sigs.k8s.io/score-result"
FINALSCORE = "kube-scheduler-simulator.sigs.k8s.io/finalscore-result"
SELECTED = "kube-scheduler-simulator.sigs.k8s.io/selected-node"


def names(objects: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["name"] for o in objects]


# -- reading an export ------------------------------------------------------------------------------


def test_an_export_holds_each_kind_as_manifests_in_the_file_order() -> None:
    export = read_export(EXPORT)
    assert names(export.namespaces) == ["team-a"]
    assert names(export.priority_classes) == ["system-cluster-critical", "high"]
    assert names(export.storage_classes) == ["standard"]
    assert names(export.pvs) == ["pv-db-0"]
    assert names(export.pvcs) == ["data-db-0"]
    assert names(export.nodes) == ["node-a1", "node-a2", "node-b1"]
    assert names(export.pods) == ["web-0", "web-1", "batch-0", "db-0"]
    # client-go list items carry no TypeMeta: each gets the one its list implies
    assert {(o["apiVersion"], o["kind"]) for o in export.pods + export.nodes + export.pvs + export.pvcs} == {
        ("v1", "Pod"),
        ("v1", "Node"),
        ("v1", "PersistentVolume"),
        ("v1", "PersistentVolumeClaim"),
    }
    assert export.priority_classes[1]["apiVersion"] == "scheduling.k8s.io/v1"
    assert export.storage_classes[0]["kind"] == "StorageClass"
    # kept as exported: server metadata and status are still there
    assert export.pods[0]["metadata"]["uid"] == "3f1c8a52-0d6e-4d6b-9a51-0c1f6b1e7a01"
    assert export.pods[0]["status"]["phase"] == "Running"
    assert export.scheduler_config is not None
    assert export.scheduler_config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert export.scheduler_config["kind"] == "KubeSchedulerConfiguration"
    assert export.scheduler_config["profiles"][0]["plugins"]["score"]["enabled"][0] == {
        "name": "TaintToleration",
        "weight": 3,
    }


def test_the_export_buttons_yaml_reads_as_the_apis_json(tmp_path: Path) -> None:
    """The web UI's Export button saves `yaml.dump` of the same JSON as `export.yml` (ExportButton.vue)."""
    path = tmp_path / "export.yml"
    path.write_text(yaml.safe_dump(json.loads(EXPORT.read_text())), encoding="utf-8")
    from_yaml, from_json = read_export(path), read_export(EXPORT)
    for field in ("namespaces", "priority_classes", "storage_classes", "pvs", "pvcs", "nodes", "pods"):
        assert getattr(from_yaml, field) == getattr(from_json, field)
    assert from_yaml.scheduler_config == from_json.scheduler_config


def test_extra_fields_null_lists_and_missing_keys_are_tolerated(tmp_path: Path) -> None:
    """Go writes a nil slice as null; exports before namespaces were added have no `namespaces`."""
    path = tmp_path / "old.json"
    written = {
        "pods": [{"metadata": {"name": "p"}, "spec": {"futureField": 1}}],  # no namespace: the API server's default
        "nodes": None,
        "pvs": [],
        "schedulerConfig": None,
        "somethingNew": {"x": 1},
    }
    path.write_text(json.dumps(written), encoding="utf-8")
    export = read_export(path)
    assert export.pods == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"futureField": 1},
        }
    ]
    assert export.nodes == export.pvs == export.namespaces == []
    assert export.scheduler_config is None
    assert "schedulerConfiguration" not in export.as_scenario("old")["spec"]


BAD = [
    ("[]", "(top level)", "not a list"),
    ('{"apiVersion": "skenario.dev/v1alpha1", "kind": "Scenario"}', "(top level)", "a Scenario manifest"),
    ('{"pods": {}}', "pods", "should be a list of Pod objects"),
    ('{"nodes": [42]}', "nodes.0", "should be a Node object"),
    ('{"pods": [{"kind": "Node", "metadata": {"name": "x"}}]}', "pods.0.kind", "not 'Node'"),
    ('{"pvs": [{"apiVersion": "v2", "metadata": {"name": "x"}}]}', "pvs.0.apiVersion", "not 'v2'"),
    ('{"nodes": [{"spec": {}}]}', "nodes.0.metadata", "needs metadata"),
    ('{"nodes": [{"metadata": {"name": ""}}]}', "nodes.0.metadata.name", "needs a name"),
    ('{"pods": [{"metadata": {"name": "a", "namespace": 7}}]}', "pods.0.metadata.namespace", "namespace name"),
    (
        '{"pods": [{"metadata": {"name": "a"}}, {"metadata": {"name": "a", "namespace": "default"}}]}',
        "pods.1.metadata.name",
        "Pod default/a is listed twice",
    ),
    ('{"schedulerConfig": "default"}', "schedulerConfig", "or null"),
    ('{"schedulerConfig": {"kind": "Policy"}}', "schedulerConfig.kind", "not 'Policy'"),
]


@pytest.mark.parametrize(("text", "field", "needle"), BAD)
def test_a_file_that_is_no_export_is_one_error_naming_file_and_field(
    tmp_path: Path, text: str, field: str, needle: str
) -> None:
    path = tmp_path / "export.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        read_export(path)
    error = raised.value
    assert (error.file, error.field) == (str(path), field)
    assert needle in str(error) and "\n" not in str(error)


def test_a_yaml_export_error_has_its_line(tmp_path: Path) -> None:
    path = tmp_path / "export.yml"
    path.write_text("pods: []\nnodes:\n  - metadata: {labels: {}}\n", encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        read_export(path)
    assert (raised.value.field, raised.value.line) == ("nodes.0.metadata.name", 3)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"pods": [', "not valid YAML"),  # broken JSON: the YAML reader says where
        ("pods: []\n---\nnodes: []\n", "one document, found 2"),
        ("", "the file is empty"),
    ],
)
def test_an_unreadable_file_is_one_error_naming_it(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "export.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as raised:
        read_export(path)
    assert raised.value.file == str(path) and needle in str(raised.value)


def test_a_missing_file_is_one_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no such file"):
        read_export(tmp_path / "nope.json")


# -- the scenario -----------------------------------------------------------------------------------


def test_the_scenario_creates_everything_at_time_0_in_dependency_order_then_is_done() -> None:
    scenario = read_export(EXPORT).as_scenario("from-ksim")
    assert scenario["apiVersion"] == "simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1"
    assert (scenario["kind"], scenario["metadata"]) == ("Scenario", {"name": "from-ksim"})
    events = scenario["spec"]["events"]
    # system-cluster-critical is skipped, as upstream's import skips `system-` priority classes
    assert [e["id"] for e in events] == [
        "create/namespace/team-a",
        "create/priorityclass/high",
        "create/storageclass/standard",
        "create/persistentvolume/pv-db-0",
        "create/persistentvolumeclaim/team-a/data-db-0",
        "create/node/node-a1",
        "create/node/node-a2",
        "create/node/node-b1",
        "create/pod/team-a/web-0",
        "create/pod/team-a/web-1",
        "create/pod/default/batch-0",
        "create/pod/team-a/db-0",
        "done",
    ]
    assert [(e["time"], e["operation"]) for e in events[:-1]] == [(0, "Create")] * 12
    assert events[-1] == {"id": "done", "time": 1, "operation": "Done", "doneOperation": {}}
    objects = [e["createOperation"]["object"] for e in events[:-1]]
    assert [o["kind"] for o in objects] == [
        "Namespace",
        "PriorityClass",
        "StorageClass",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "Node",
        "Node",
        "Node",
        "Pod",
        "Pod",
        "Pod",
        "Pod",
    ]
    for o in objects:
        assert not {"uid", "resourceVersion", "managedFields", "creationTimestamp", "generation"} & set(o["metadata"])
    config = scenario["spec"]["schedulerConfiguration"]
    assert config["kind"] == "KubeSchedulerConfiguration" and config["parallelism"] == 16
    json.dumps(scenario)  # plain data


def test_pods_lose_status_and_ksim_results_and_the_bound_one_keeps_its_node() -> None:
    events = read_export(EXPORT).as_scenario("s")["spec"]["events"]
    pods = {e["id"]: e["createOperation"]["object"] for e in events if e["id"].startswith("create/pod/")}
    web0 = pods["create/pod/team-a/web-0"]
    assert "status" not in web0
    assert web0["spec"]["nodeName"] == "node-a1"
    assert web0["metadata"] == {
        "name": "web-0",
        "namespace": "team-a",
        "labels": {"app": "web"},
        "annotations": {"example.com/owner": "team-a"},
    }
    assert not any("nodeName" in p["spec"] or "status" in p for i, p in pods.items() if i != "create/pod/team-a/web-0")
    assert pods["create/pod/default/batch-0"]["spec"]["priorityClassName"] == "high"


def test_nodes_keep_their_status_and_the_pv_forgets_the_old_claims_uid() -> None:
    events = read_export(EXPORT).as_scenario("s")["spec"]["events"]
    objects = {e["id"]: e["createOperation"]["object"] for e in events if e["operation"] == "Create"}
    node = objects["create/node/node-b1"]
    assert node["status"]["allocatable"] == {"cpu": "8", "memory": "32Gi", "pods": "110"}
    assert node["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-b"
    assert objects["create/persistentvolume/pv-db-0"]["spec"]["claimRef"] == {
        "kind": "PersistentVolumeClaim",
        "namespace": "team-a",
        "name": "data-db-0",
        "apiVersion": "v1",
    }


def test_the_scenario_is_a_copy() -> None:
    export = read_export(EXPORT)
    scenario = export.as_scenario("s")
    scenario["spec"]["events"][0]["createOperation"]["object"]["metadata"]["name"] = "changed"
    scenario["spec"]["schedulerConfiguration"]["parallelism"] = 1
    assert export.namespaces[0]["metadata"]["name"] == "team-a"
    assert export.namespaces[0]["metadata"]["uid"] == "e4f5a6b7-c8d9-4e0f-a1b2-c3d4e5f6a7b8"
    assert export.scheduler_config is not None and export.scheduler_config["parallelism"] == 16


def test_the_results_the_web_ui_showed_are_read_from_the_pods() -> None:
    assert read_export(EXPORT).results() == {
        "team-a/web-0": {
            "kube-scheduler-simulator.sigs.k8s.io/selected-node": "node-a1",
            FILTER: '{"node-a1":{"NodeResourcesFit":"passed"},"node-a2":{"NodeResourcesFit":"passed"},'
            '"node-b1":{"NodeResourcesFit":"passed"}}',
            "kube-scheduler-simulator.sigs.k8s.io/bind-result": '{"DefaultBinder":"success"}',
        }
    }


# -- annotations ------------------------------------------------------------------------------------


def test_upstream_get_stored_result_success() -> None:
    """TestStore_GetStoredResult "success": filter, score and final score (weight 2) of node0 and node1.

    Upstream's case also fills the postfilter map of a pod it scheduled; PostFilter never runs for
    a pod that fits, so here that map is `{}`.
    """
    score = {"plugin1": {"raw": 10, "normalized": 10, "final": 20}}
    result = {
        "pod": "pod1",
        "scheduleResult": [
            {
                "selectedNode": "node",
                "nominatedNode": None,
                "pluginResults": {
                    "filter": {"node0": {"plugin1": "passed"}, "node1": {"plugin1": "passed"}},
                    "score": {"node0": score, "node1": score},
                },
            }
        ],
    }
    assert ksim_annotations(result) == {
        SELECTED: "node",
        FILTER: '{"node0":{"plugin1":"passed"},"node1":{"plugin1":"passed"}}',
        SCORE: '{"node0":{"plugin1":"10"},"node1":{"plugin1":"10"}}',
        FINALSCORE: '{"node0":{"plugin1":"20"},"node1":{"plugin1":"20"}}',
        POSTFILTER: "{}",
    }


def test_upstream_get_stored_result_without_data() -> None:
    """TestStore_GetStoredResult "do nothing if store doesn't have data": a pod never attempted has none."""
    assert ksim_annotations({"pod": "pod1", "scheduleResult": []}) == {}


def test_upstream_add_post_filter_result_nominated_node() -> None:
    """TestStore_AddPostFilterResult "success with empty result": node1 nominated among node1 and node2."""
    rejected = {"NodeResourcesFit": "Insufficient cpu"}
    result = {
        "pod": "pod1",
        "scheduleResult": [
            {
                "selectedNode": None,
                "nominatedNode": "node1",
                "pluginResults": {"filter": {"node2": rejected, "node1": rejected}, "score": {}},
            }
        ],
    }
    assert ksim_annotations(result) == {
        SELECTED: "",
        FILTER: '{"node1":{"NodeResourcesFit":"Insufficient cpu"},"node2":{"NodeResourcesFit":"Insufficient cpu"}}',
        SCORE: "{}",
        FINALSCORE: "{}",
        POSTFILTER: '{"node1":{"DefaultPreemption":"preemption victim"},"node2":{}}',
    }


def ints(*values: int) -> np.ndarray[Any, np.dtype[np.int64]]:
    return np.array(values, dtype=np.int64)


def test_the_last_attempt_of_a_pod_result_as_skenario_writes_it() -> None:
    """Pod.result() with two attempts: nothing fitted first, then node-a2 lacked cpu and node-a1 won.

    Last attempt, filters in order: NodeUnschedulable passes all three nodes, NodeResourcesFit
    rejects node-a2, so TaintToleration sees only node-a1 and node-b1. Scores over those two:
    TaintToleration (weight 3) raw 0 and 1 (node-b1's PreferNoSchedule taint) normalised to 100
    and 0, final 300 and 0; NodeResourcesFit (weight 1) raw 50 and 75, final the same.
    """
    node_names = ["node-a1", "node-a2", "node-b1"]
    full = FilterVerdicts("NodeResourcesFit", ints(0, 1, 2), ints(1, 1, 1), ["", "Insufficient cpu"])
    first = Attempt("web-1", 0, 3, node_names, ints(0, 1, 2), ints(), filters=[full], message="0/3 nodes")
    last = Attempt(
        "web-1",
        10,
        3,
        node_names,
        examined=ints(0, 1, 2),
        feasible=ints(0, 2),
        filters=[
            FilterVerdicts("NodeUnschedulable", ints(0, 1, 2), ints(0, 0, 0), [""]),
            FilterVerdicts("NodeResourcesFit", ints(0, 1, 2), ints(0, 1, 0), ["", "Insufficient cpu"]),
            FilterVerdicts("TaintToleration", ints(0, 2), ints(0, 0), [""]),
        ],
        scores=[
            PluginScores("TaintToleration", 3, ints(0, 1), ints(100, 0)),
            PluginScores("NodeResourcesFit", 1, ints(50, 75), ints(50, 75)),
        ],
        selected="node-a1",
    )
    pod = Pod(1, PodSpec("web-1"), created_at=0)
    pod.attempts = [first, last]
    expected = {
        SELECTED: "node-a1",
        FILTER: '{"node-a1":{"NodeResourcesFit":"passed","NodeUnschedulable":"passed","TaintToleration":"passed"},'
        '"node-a2":{"NodeResourcesFit":"Insufficient cpu","NodeUnschedulable":"passed"},'
        '"node-b1":{"NodeResourcesFit":"passed","NodeUnschedulable":"passed","TaintToleration":"passed"}}',
        SCORE: '{"node-a1":{"NodeResourcesFit":"50","TaintToleration":"0"},'
        '"node-b1":{"NodeResourcesFit":"75","TaintToleration":"1"}}',
        FINALSCORE: '{"node-a1":{"NodeResourcesFit":"50","TaintToleration":"300"},'
        '"node-b1":{"NodeResourcesFit":"75","TaintToleration":"0"}}',
        POSTFILTER: "{}",
    }
    assert ksim_annotations(pod.result()) == expected
    assert ksim_annotations(json.loads(json.dumps(pod.result()))) == expected  # as read back from --results


def test_annotation_values_escape_as_go_does() -> None:
    """A reason with `>`, `&` and quotes, as a custom plugin might write: Go escapes `<>&` for HTML."""
    result = {
        "scheduleResult": [
            {
                "selectedNode": None,
                "nominatedNode": None,
                "pluginResults": {"filter": {"n": {"Hot": 'cpu > 90% & "hot"'}}},
            }
        ]
    }
    assert ksim_annotations(result)[FILTER] == r'{"n":{"Hot":"cpu \u003e 90% \u0026 \"hot\""}}'


@pytest.mark.parametrize(
    ("value", "go"),
    [
        ({"b": 1, "a": 2, "B": 3}, '{"B":3,"a":2,"b":1}'),  # keys sorted byte-wise
        ({"zone": "é"}, '{"zone":"é"}'),  # UTF-8 kept, not \u00e9
        ({"x": "<a>\n\u2028"}, r'{"x":"\u003ca\u003e\n\u2028"}'),
        ({"x": "\x01\t"}, r'{"x":"\u0001\t"}'),
        ({}, "{}"),
    ],
)
def test_go_json_marshal(value: Any, go: str) -> None:
    assert go_json_marshal(value) == go


# -- its scheduler configuration, run --------------------------------------------------------------


def preempting_export(tmp_path: Path, scheduler_config: dict[str, Any] | None) -> FakeTimeRun:
    """One 2-CPU node holding `low` (PriorityClass low, 10, bound there already) and `high` (1000,
    2 CPU, pending): with DefaultPreemption high evicts low, without it high waits."""

    def klass(name: str, value: int) -> dict[str, Any]:
        return {"metadata": {"name": name}, "value": value}

    def pod(name: str, **spec: Any) -> dict[str, Any]:
        container = {"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "2"}}}
        return {"metadata": {"name": name, "namespace": "default"}, "spec": {"containers": [container], **spec}}

    export = {
        "nodes": [{"metadata": {"name": "a"}, "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"}}}],
        "priorityClasses": [klass("low", 10), klass("high", 1000)],
        "pods": [pod("low", priorityClassName="low", nodeName="a"), pod("high", priorityClassName="high")],
        "schedulerConfig": scheduler_config,
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    simulation = FakeTimeRun(KepScenario.model_validate(read_export(path).as_scenario("s")))
    simulation.run()
    return simulation


def test_an_exports_configuration_without_default_preemption_leaves_the_high_pod_pending(tmp_path: Path) -> None:
    plugins = {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}
    simulation = preempting_export(tmp_path, {"profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]})
    low, high = simulation.controller.pods["low"], simulation.controller.pods["high"]
    assert (low.node, low.end, high.node) == ("a", None, None)
    assert high.attempts and all(a.nominated is None for a in high.attempts)
    assert not [e for e in simulation.controller.timeline if e.kind == "PodPreempted"]


def test_an_export_with_the_default_configuration_preempts(tmp_path: Path) -> None:
    simulation = preempting_export(tmp_path, {"profiles": [{"schedulerName": "default-scheduler"}]})
    low, high = simulation.controller.pods["low"], simulation.controller.pods["high"]
    assert (low.preempted_by, high.node) == ("high", "a")
