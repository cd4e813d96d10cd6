"""KEP-140's Scenario on FakeTime, checked against timelines worked out by hand from the KEP's rules
(operations first, then the scheduler until nothing more fits, then the next step) and Kubernetes'
(a ReplicaSet replaces its pods, a Job runs to its completions, a drain evicts within a budget,
admission gives a pod its PriorityClass's value).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.errors import ScenarioError
from skenario.scenario.faketime import FakeTimeRun, kep_scenario
from skenario.scenario.format.kep import KEP_API_VERSION, KepScenario, ScenarioEvent
from skenario.scenario.simulation import Phase


def node(name: str, cpu: str = "4", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}},
    }


def pod_spec(cpu: str, **extra: Any) -> dict[str, Any]:
    return {"containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}], **extra}


def pod(name: str, cpu: str = "1", labels: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}},
        "spec": pod_spec(cpu, **extra),
    }


def deployment(name: str, replicas: int, cpu: str, kind: str = "Deployment") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec(cpu)},
        },
    }


def create(id: str, time: int, obj: dict[str, Any]) -> dict[str, Any]:
    return {"id": id, "time": time, "operation": "Create", "createOperation": {"object": obj}}


def patch(id: str, time: int, kind: str, name: str, body: Any, api: str = "v1") -> dict[str, Any]:
    return {
        "id": id,
        "time": time,
        "operation": "Patch",
        "patchOperation": {"typeMeta": {"apiVersion": api, "kind": kind}, "objectMeta": {"name": name}, "patch": body},
    }


def delete(id: str, time: int, kind: str, name: str, api: str = "v1") -> dict[str, Any]:
    return {
        "id": id,
        "time": time,
        "operation": "Delete",
        "deleteOperation": {"typeMeta": {"apiVersion": api, "kind": kind}, "objectMeta": {"name": name}},
    }


def done(time: int) -> dict[str, Any]:
    return {"id": "done", "time": time, "operation": "Done", "doneOperation": {"done": True}}


def scenario(*events: dict[str, Any], **spec: Any) -> KepScenario:
    return KepScenario.model_validate(
        {
            "apiVersion": KEP_API_VERSION,
            "kind": "Scenario",
            "metadata": {"name": "t"},
            "spec": {"events": list(events), **spec},
        }
    )


def run(*events: dict[str, Any], **spec: Any) -> FakeTimeRun:
    simulation = FakeTimeRun(scenario(*events, **spec))
    simulation.run()
    return simulation


def scheduled(simulation: FakeTimeRun) -> dict[str, tuple[int, str]]:
    """Each PodScheduled of the timeline: pod -> (FakeTime, node)."""
    out = {}
    for time, events in simulation.result()["timeline"].items():
        for event in events:
            if event["operation"] == "PodScheduled":
                result = event["podScheduled"]
                out[result["pod"]["metadata"]["name"]] = (int(time), result["boundTo"])
    return out


def operations(simulation: FakeTimeRun, time: int) -> list[str]:
    return [e["operation"] for e in simulation.result()["timeline"].get(str(time), [])]


def test_the_keps_own_story() -> None:
    """Nodes created, pods created, a node tainted, a pod deleted, done: by hand, a 3-CPU pod fits
    each 4-CPU node once; after `a` is tainted NoSchedule only `b` takes the 1-CPU pod; deleting
    web-1 frees its node; Done completes the scenario at step 4."""
    simulation = run(
        create("node-a", 0, node("a")),
        create("node-b", 0, node("b")),
        create("web-1", 1, pod("web-1", "3")),
        create("web-2", 1, pod("web-2", "3")),
        patch("taint-a", 2, "Node", "a", '{"spec": {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}}'),
        create("web-3", 2, pod("web-3", "1")),
        delete("delete-web-1", 3, "Pod", "web-1"),
        done(4),
    )
    assert simulation.phase is Phase.COMPLETED
    placed = scheduled(simulation)
    assert {placed["web-1"][1], placed["web-2"][1]} == {"a", "b"}
    assert placed["web-3"] == (2, "b")
    assert operations(simulation, 0) == ["Create", "Create"]
    assert operations(simulation, 3) == ["Delete"]
    assert operations(simulation, 4) == ["Done"]
    last = next(e for e in simulation.result()["timeline"]["2"] if e["operation"] == "PodScheduled")["podScheduled"]
    (attempt,) = last["scheduleResult"]
    assert attempt["allCandidateNodes"] == ["a", "b"]
    assert attempt["allFilteredNodes"] == ["b"]
    assert attempt["pluginResults"]["filter"]["a"]["TaintToleration"] == "node(s) had untolerated taint {maintenance: }"
    status = simulation.status()
    assert (status["phase"], status["time"]) == ("Completed", 4)


def test_scores_carry_raw_normalized_and_final() -> None:
    """Two feasible nodes are scored: each plugin's final score is its normalized score times its weight."""
    simulation = run(
        create("a", 0, node("a", "4")), create("b", 0, node("b", "8")), create("p", 1, pod("p", "2")), done(2)
    )
    (event,) = [e for e in simulation.result()["timeline"]["1"] if e["operation"] == "PodScheduled"]
    scores = event["podScheduled"]["scheduleResult"][0]["pluginResults"]["score"]
    assert set(scores) == {"a", "b"}
    weights = {"TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "NodeResourcesBalancedAllocation": 1}
    for plugin, weight in weights.items():
        for node_name in ("a", "b"):
            s = scores[node_name][plugin]
            assert s["finalScore"] == s["normalizedScore"] * weight
    # LeastAllocated by hand: 2 of 4 cores leaves 50, 2 of 8 leaves 75 (memory 200 MiB default of 16 GiB alike).
    assert scores["b"]["NodeResourcesFit"]["rawScore"] > scores["a"]["NodeResourcesFit"]["rawScore"]
    assert scheduled(simulation)["p"] == (1, "b")


@settings(max_examples=25, deadline=None)
@given(st.permutations(range(6)), st.permutations(range(4)))
def test_the_order_of_same_step_operations_never_changes_the_outcome(nodes: list[int], pods: list[int]) -> None:
    """The FakeTime rule: operations of one step all run before the scheduler, so writing them in
    any order gives the same placements."""
    cpus = ["2", "4", "4", "8", "1", "2"]
    node_events = [create(f"n{i}", 0, node(f"n{i}", cpus[i], zone=f"z{i % 2}")) for i in nodes]
    pod_events = [create(f"p{i}", 0, pod(f"p{i}", str(i + 1))) for i in pods]
    mixed = [e for pair in zip(node_events, pod_events, strict=False) for e in pair] + node_events[len(pod_events) :]
    reference = run(*sorted(node_events + pod_events, key=lambda e: e["id"]), done(1))
    shuffled = run(*mixed, done(1))
    assert scheduled(shuffled) == scheduled(reference)


def test_a_replicaset_replaces_a_deleted_pod_and_a_deployment_scales() -> None:
    """`manageReplicas`: deleting one of 2 pods makes a third; scaling to 1 deletes the newest."""
    simulation = run(
        create("a", 0, node("a", "8")),
        create("web", 1, deployment("web", 2, "1")),
        delete("kill", 2, "Pod", "web-0"),
        patch("scale", 3, "Deployment", "web", {"spec": {"replicas": 1}}, api="apps/v1"),
        done(4),
    )
    placed = scheduled(simulation)
    assert placed == {"web-0": (1, "a"), "web-1": (1, "a"), "web-2": (2, "a")}
    live = [p.name for p in simulation.pods() if p.end is None]
    assert live == ["web-1"]  # the newest (web-2) went on the scale-down


def test_a_job_runs_until_its_completions() -> None:
    """parallelism 2, completions 3, each pod runs 2 steps: two pods at 1, done at 3; the third at 3, done at 5."""
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "batch"},
        "spec": {
            "parallelism": 2,
            "completions": 3,
            "template": {
                "metadata": {"annotations": {"skenario.dev/run-for": "2"}},
                "spec": pod_spec("1", restartPolicy="Never"),
            },
        },
    }
    simulation = run(create("a", 0, node("a", "8")), create("job", 1, job), done(6))
    placed = scheduled(simulation)
    assert placed == {"batch-0": (1, "a"), "batch-1": (1, "a"), "batch-2": (3, "a")}
    finished = {p.name: p.finished_at // 10**9 - 1 for p in simulation.pods() if p.finished_at is not None}
    assert finished == {"batch-0": 3, "batch-1": 3, "batch-2": 5}


def pdb(min_available: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }


def test_a_drain_waits_for_the_budget_then_removes_the_node() -> None:
    """Two 3-CPU pods on two 4-CPU nodes, minAvailable 2: deleting node `a` cordons it but may evict
    nothing (2 healthy, 2 needed). Scaling to 3 puts web-2 on the new node `c`: 3 healthy, one
    disruption allowed, so the pod on `a` is evicted and `a` removed at that step; its replacement
    finds no room (1 CPU free on `b` and `c`)."""
    simulation = run(
        create("a", 0, node("a")),
        create("b", 0, node("b")),
        create("web", 1, deployment("web", 2, "3")),
        create("pdb", 1, pdb(2)),
        delete("drain-a", 2, "Node", "a"),
        create("c", 3, node("c")),
        patch("scale", 3, "Deployment", "web", {"spec": {"replicas": 3}}, api="apps/v1"),
        done(5),
    )
    on_a = next(name for name, (_, where) in scheduled(simulation).items() if where == "a")
    assert simulation.store.evicted == [(4 * 10**9, on_a, "a")]
    assert simulation.store.removed == [(4 * 10**9, "a")]
    assert scheduled(simulation)["web-2"] == (3, "c")
    replacement = simulation.controller.pods["web-3"]
    assert replacement.bound_at is None and replacement.created_at == 4 * 10**9
    deletes = [e for e in simulation.result()["timeline"]["3"] if e["operation"] == "Delete"]
    assert [d["delete"]["objectMeta"]["name"] for d in deletes] == [on_a]


def test_a_drain_without_a_budget_evicts_at_once() -> None:
    simulation = run(
        create("a", 0, node("a")), create("b", 0, node("b")), create("web", 1, deployment("web", 2, "1")),
        delete("drain-a", 2, "Node", "a"), done(3),
    )  # fmt: skip
    assert [n for _, n in simulation.store.removed] == ["a"]
    assert all(p.node == "b" for p in simulation.pods() if p.end is None)


def test_a_priority_class_lets_a_pod_preempt() -> None:
    """Admission gives each pod its class's value; the 1000 pod preempts the 10 pod on the full node."""
    classes = [
        create(
            f"pc-{n}",
            0,
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v},
        )
        for n, v in (("low", 10), ("high", 1000))
    ]
    simulation = run(
        *classes,
        create("a", 0, node("a", "2")),
        create("low", 1, pod("low", "2", priorityClassName="low")),
        create("high", 2, pod("high", "2", priorityClassName="high")),
        done(3),
    )
    assert simulation.controller.pods["high"].spec.priority == 1000
    preempted = [e for e in simulation.result()["timeline"]["2"] if e["operation"] == "PodPreempted"]
    assert [e["podPreempted"]["preemptedBy"] for e in preempted] == ["high"]
    assert scheduled(simulation)["high"] == (2, "a")


def test_scheduling_gates_hold_a_pod_until_patched_away() -> None:
    simulation = run(
        create("a", 0, node("a")),
        create("gated", 1, pod("gated", schedulingGates=[{"name": "quota"}])),
        patch("ungate", 3, "Pod", "gated", {"spec": {"schedulingGates": None}}),
        done(4),
    )
    assert scheduled(simulation) == {"gated": (3, "a")}
    assert simulation.controller.pods["gated"].attempts[0].at == 4 * 10**9


def test_a_pod_with_a_node_name_is_bound_without_a_cycle() -> None:
    simulation = run(
        create("a", 0, node("a")), create("b", 0, node("b")), create("p", 1, pod("p", nodeName="b")), done(2)
    )
    p = simulation.controller.pods["p"]
    assert (p.node, list(p.attempts)) == ("b", [])  # no scheduling cycle, so no attempt


def test_a_paused_scenario_takes_more_events_and_ignores_past_ones() -> None:
    simulation = run(create("a", 0, node("a")), create("p", 1, pod("p")))
    assert simulation.status()["phase"] == "Paused"
    more = [
        ScenarioEvent.model_validate(e) for e in (create("late", 1, pod("late")), create("q", 2, pod("q")), done(3))
    ]
    assert simulation.add_events(more) == ["late"]
    simulation.run()
    assert simulation.phase is Phase.COMPLETED
    assert set(scheduled(simulation)) == {"p", "q"}


@pytest.mark.parametrize(
    ("event", "field", "message"),
    [
        (patch("x", 1, "Node", "nope", {"spec": {}}), "spec.events.1.patchOperation", "no Node nope"),
        (
            create("x", 1, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
            "spec.events.1.createOperation.object",
            "does not model kind 'Secret'",
        ),
        (create("x", 1, node("a")), "spec.events.1.createOperation.object", "exists already"),
        (
            create("x", 1, pod("p", priorityClassName="gold")),
            "spec.events.1.createOperation.object.spec.priorityClassName",
            "no PriorityClass 'gold'",
        ),
        (  # the API server refuses it (`ValidateLabels`): a space is not allowed in a label value
            create("x", 1, pod("p", nodeSelector={"app": "bad value!"})),
            "spec.events.1.createOperation.object.spec.nodeSelector.app",
            "event 'x' at FakeTime 1: label value 'bad value!' is not valid",
        ),
    ],
)
def test_a_mistake_names_the_event_field(event: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message) as caught:
        run(create("a", 0, node("a")), event, done(2))
    assert caught.value.field == field


def test_a_bad_object_names_its_field_and_value() -> None:
    bad = node("b")
    bad["status"]["allocatable"]["cpu"] = "lots"
    with pytest.raises(ScenarioError) as caught:
        run(create("b", 0, bad), done(1))
    assert caught.value.field == "spec.events.0.createOperation.object.status.allocatable.cpu"
    assert caught.value.value == "lots"


def test_an_event_has_the_operation_it_names() -> None:
    with pytest.raises(ValueError, match="createOperation"):
        scenario(
            {
                "id": "x",
                "time": 0,
                "operation": "Create",
                "deleteOperation": {"typeMeta": {"kind": "Pod"}, "objectMeta": {"name": "p"}},
            }
        )


def test_the_file_is_told_apart_from_skenarios_own_format() -> None:
    kep = f"apiVersion: {KEP_API_VERSION}\nkind: Scenario\nmetadata: {{name: k}}\nspec: {{events: []}}\n"
    assert kep_scenario(kep, "k.yaml") is not None
    own = "apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec: {duration: 1m}\n"
    assert kep_scenario(own, "s.yaml") is None


def test_a_claim_on_a_local_volume_takes_its_pod_to_the_volumes_node() -> None:
    """VolumeBinding with a WaitForFirstConsumer class: the only PV that fits the 10 GiB claim is on
    node b (the 5 GiB one on a is too small), so the pod goes to b and the claim is bound to that PV."""
    local = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
             "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}  # fmt: skip

    def pv(name: str, size: str, host: str) -> dict[str, Any]:
        term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [host]}]}
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": size},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
            },
        }

    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
             "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                      "resources": {"requests": {"storage": "10Gi"}}}}  # fmt: skip
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
    simulation = run(
        create("a", 0, node("a")),
        create("b", 0, node("b")),
        create("local", 0, local),
        create("pv-a", 0, pv("pv-a", "5Gi", "a")),
        create("pv-b", 0, pv("pv-b", "20Gi", "b")),
        create("data", 0, claim),
        create("db", 1, pod("db", volumes=volumes)),
        done(2),
    )
    assert scheduled(simulation) == {"db": (1, "b")}
    catalog = simulation.snapshot.volumes
    bound = catalog.claim("default", "data")
    assert bound is not None and bound.volume_name == "pv-b"


@pytest.mark.parametrize("skip_gone", [False, True])
def test_a_replay_skips_operations_on_pods_this_cluster_preempted(skip_gone: bool) -> None:
    """In the recorded cluster `low` lived on (its scheduler did not preempt it) and is deleted at 3;
    here `high` preempted it at 2. A replay skips the delete and counts it; a scenario stops on it."""
    classes = [
        create(
            f"pc-{n}",
            0,
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v},
        )
        for n, v in (("low", 10), ("high", 1000))
    ]
    events = (
        *classes,
        create("a", 0, node("a", "2")),
        create("low", 1, pod("low", "2", priorityClassName="low")),
        create("high", 2, pod("high", "2", priorityClassName="high")),
        delete("delete-low", 3, "Pod", "low"),
        done(4),
    )
    simulation = FakeTimeRun(scenario(*events), skip_gone=skip_gone)
    if not skip_gone:
        with pytest.raises(ScenarioError, match="there is no Pod default/low"):
            simulation.run()
        return
    simulation.run()
    assert simulation.skipped == ["delete-low"]
    assert simulation.phase.value == "Completed"


@pytest.mark.parametrize(
    ("point", "disabled", "name"),
    [
        ("queueSort", "PrioritySort", "PrioritySort"),
        ("multiPoint", "PrioritySort", "PrioritySort"),
        ("preEnqueue", "SchedulingGates", "SchedulingGates"),
        ("bind", "DefaultBinder", "DefaultBinder"),
        ("multiPoint", "DefaultBinder", "DefaultBinder"),
        ("queueSort", "*", "PrioritySort"),
        ("bind", "*", "DefaultBinder"),
        ("multiPoint", "*", "SchedulingGates"),
    ],
)
def test_a_configuration_disabling_a_required_built_in_plugin_is_refused(point: str, disabled: str, name: str) -> None:
    """The queue's order and gate and the binder are built in: kube-scheduler refuses a profile without a
    QueueSort or a Bind plugin, and skenario has no other (nor a queue without the gates)."""
    configuration = {"profiles": [{"plugins": {point: {"disabled": [{"name": disabled}]}}}]}
    with pytest.raises(ScenarioError, match=f"{name} cannot be disabled") as caught:
        FakeTimeRun(scenario(done(1), schedulerConfiguration=configuration))
    assert caught.value.field == f"spec.schedulerConfiguration.profiles.0.plugins.{point}.disabled.0.name"
    assert caught.value.value == disabled


def preempting(configuration: dict[str, Any] | None) -> FakeTimeRun:
    """A 2-CPU node; a 2-CPU pod of PriorityClass low (10) at step 1, one of high (1000) at step 2."""
    classes = [
        create(
            f"pc-{n}",
            0,
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v},
        )
        for n, v in (("low", 10), ("high", 1000))
    ]
    spec = {} if configuration is None else {"schedulerConfiguration": configuration}
    return run(
        *classes,
        create("a", 0, node("a", "2")),
        create("low", 1, pod("low", "2", priorityClassName="low")),
        create("high", 2, pod("high", "2", priorityClassName="high")),
        done(4),
        **spec,
    )


@pytest.mark.parametrize(
    "plugins",
    [
        {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}},
        {"postFilter": {"disabled": [{"name": "*"}]}},
        {"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}},
    ],
)
def test_a_configuration_without_default_preemption_leaves_the_high_pod_pending(plugins: dict[str, Any]) -> None:
    """As `test_a_priority_class_lets_a_pod_preempt`, with no PostFilter plugin: upstream's
    schedulingCycle then performs no preemption, so high stays unschedulable and low runs on."""
    simulation = preempting({"profiles": [{"plugins": plugins}]})
    timeline = simulation.result()["timeline"]
    assert not [e for events in timeline.values() for e in events if e["operation"] == "PodPreempted"]
    assert [o for o in operations(simulation, 2) if o.startswith("Pod")] == ["PodUnscheduled"]
    assert scheduled(simulation) == {"low": (1, "a")}
    low, high = simulation.controller.pods["low"], simulation.controller.pods["high"]
    assert (low.node, low.end) == ("a", None)
    assert (high.node, high.nominated) == (None, None)
    assert simulation.phase.value == "Completed"


def test_a_configuration_as_ksim_exports_it_keeps_preemption_on() -> None:
    """Every point spelled out, DefaultPreemption under postFilter: the default run, preemption and all."""
    configuration = {
        "profiles": [
            {
                "plugins": {
                    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                    "filter": {"enabled": [{"name": "NodeName"}, {"name": "NodeResourcesFit"}]},
                    "postFilter": {"enabled": [{"name": "DefaultPreemption"}]},
                    "bind": {"enabled": [{"name": "DefaultBinder"}]},
                }
            }
        ]
    }
    simulation = preempting(configuration)
    assert scheduled(simulation)["high"] == (2, "a")
    assert simulation.controller.pods["low"].preempted_by == "high"


def test_a_configuration_enabling_the_built_in_plugins_reads_as_upstreams_defaults() -> None:
    """As kube-scheduler-simulator exports a configuration: PrioritySort under queueSort, both under multiPoint."""
    configuration = {
        "profiles": [
            {
                "plugins": {
                    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                    "multiPoint": {"enabled": [{"name": "SchedulingGates"}, {"name": "PrioritySort"}]},
                }
            }
        ]
    }
    simulation = run(create("a", 0, node("a")), create("p", 1, pod("p")), done(2), schedulerConfiguration=configuration)
    assert scheduled(simulation) == {"p": (1, "a")}
