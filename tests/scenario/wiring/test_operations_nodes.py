"""Node events: create, patch and delete (a drain) on `node/<name>`, checked at load and timed by hand.

The scenarios keep the times simple to compute: no traffic, launches of exactly 3 s (readiness),
a preStop sleep of exactly 2 s so that an evicted replica's pod is gone 2 s after its eviction,
and every pod on node `a` at the start (node `b` begins cordoned and is uncordoned at 5 s).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.model.replicas import ReplicaState
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import EventRefused, Simulation
from skenario.scheduling.objects import NodeSpec

HEAD = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: run}
spec:
  duration: 40s
  workload:
    replicas: 3
    resources: {requests: {cpu: 1}}
    request: {cpuTime: 10ms}
    launch: {containerStart: 0s, readiness: 3s}
    preStopSleep: 2s
POD
  traffic: {type: constant, rate: 0/s}
BUDGET
  cluster:
    nodes:
      - {name: a, cpu: 4, memory: 8Gi}
      - {name: b, cpu: 4, memory: 8Gi, unschedulable: true}
    nodeGroups:
      - {name: burst, maxSize: 2, node: {cpu: 4, memory: 8Gi}}
  events:
    - {id: open, at: 5s, patch: {target: node/b, patch: {unschedulable: false}}}
"""


def text(*events: str, budget: str = "", pod: str = "") -> str:
    head = HEAD.replace("BUDGET\n", f"  disruptionBudget: {budget}\n" if budget else "")
    head = head.replace("POD\n", f"    pod: {pod}\n" if pod else "")
    return head + "".join(f"    - {event}\n" for event in events)


def simulate(*events: str, budget: str = "", pod: str = "") -> Simulation:
    return Simulation(parse_scenario(text(*events, budget=budget, pod=pod)))


def error_for(*events: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text(*events), source="s.yaml")
    return info.value


def entries(simulation: Simulation, source: str) -> list[tuple[float, str]]:
    """The results timeline's lines from one event: (seconds, message)."""
    return [(e[0] / SECOND, e[4]) for e in simulation.timeline.entries() if e[1] == source]


def scheduled(simulation: Simulation) -> list[tuple[float, str, str | None]]:
    """Each binding: (seconds, pod, node)."""
    assert simulation.placement is not None
    timeline = simulation.placement.controller.timeline
    return [(e.at / SECOND, e.pod, e.node) for e in timeline if e.kind == "PodScheduled"]


def nodes_present(simulation: Simulation) -> list[str]:
    assert simulation.placement is not None
    snapshot = simulation.placement.snapshot
    return sorted(snapshot.nodes[i].name for i in snapshot.order.tolist())


def node(simulation: Simulation, name: str) -> NodeSpec:
    assert simulation.placement is not None
    snapshot = simulation.placement.snapshot
    return snapshot.nodes[snapshot.index[name]]


def pods_on(simulation: Simulation, name: str) -> list[str]:
    assert simulation.placement is not None
    snapshot = simulation.placement.snapshot
    return sorted(snapshot.pods_on[snapshot.index[name]])


# -- load-time errors --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event", "field", "value", "words"),
    [
        # A node the cluster never had: the nodes of this time are listed.
        (
            "{id: e, at: 8s, patch: {target: node/zz, patch: {unschedulable: true}}}",
            "spec.events.1.patch.target",
            "node/zz",
            "no node 'zz' at this time (there are: a, b)",
        ),
        ("{id: e, at: 8s, delete: {target: node/zz}}", "spec.events.1.delete.target", "node/zz", "no node 'zz'"),
        # A name that clashes with a node present then.
        (
            "{id: e, at: 8s, create: {target: node/a, object: {cpu: 2, memory: 1Gi}}}",
            "spec.events.1.create.target",
            "node/a",
            "node 'a' exists at this time",
        ),
        # A node group's nodes are the cluster autoscaler's, not events' targets.
        (
            "{id: e, at: 8s, delete: {target: node/burst-0}}",
            "spec.events.1.delete.target",
            "node/burst-0",
            "nodes that node group 'burst' adds are not targets",
        ),
        (
            "{id: e, at: 8s, create: {target: node/burst-3, object: {cpu: 2, memory: 1Gi}}}",
            "spec.events.1.create.target",
            "node/burst-3",
            "a name node group 'burst' gives its nodes",
        ),
        ("{id: e, at: 8s, delete: {target: node}}", "spec.events.1.delete.target", "node", "node/<name>"),
        # The node as written: no name or count, and a valid shape after the patch.
        (
            "{id: e, at: 8s, create: {target: node/c, object: {name: c, cpu: 2, memory: 1Gi}}}",
            "spec.events.1.create.object.name",
            "c",
            "takes no name",
        ),
        (
            "{id: e, at: 8s, create: {target: node/c, object: {cpu: 2, memory: 1Gi, count: 2}}}",
            "spec.events.1.create.object.count",
            2,
            "takes no count",
        ),
        ("{id: e, at: 8s, create: {target: node/c}}", "spec.events.1.create.object", None, "needs an 'object'"),
        (
            "{id: e, at: 8s, create: {target: node/c, object: {cpu: 2}}}",
            "spec.events.1.create.object.memory",
            None,
            "",
        ),
        ("{id: e, at: 8s, patch: {target: node/a, patch: {cpu: -1}}}", "spec.events.1.patch.patch.cpu", -1, ""),
    ],
)
def test_a_node_event_the_timeline_cannot_take_is_refused_at_load(
    event: str, field: str, value: Any, words: str
) -> None:
    error = error_for(event)
    assert error.field == field
    if value is not None:
        assert error.value == value
    assert words in error.message
    assert error.file == "s.yaml" and error.line is not None


def test_the_nodes_of_each_time_are_those_the_earlier_events_leave() -> None:
    # Written out of order: what counts is the time. c is created at 8s and deleted at 9s, so a
    # patch at 10s finds no c; a is deleted at 8s, so a new a may be created at 9s.
    error = error_for(
        "{id: late, at: 10s, patch: {target: node/c, patch: {unschedulable: true}}}",
        "{id: gone, at: 9s, delete: {target: node/c}}",
        "{id: make, at: 8s, create: {target: node/c, object: {cpu: 2, memory: 1Gi}}}",
    )
    assert (error.field, error.value) == ("spec.events.1.patch.target", "node/c")
    assert "no node 'c' at this time (there are: a, b)" in error.message
    parse_scenario(
        text(
            "{id: drain, at: 8s, delete: {target: node/a}}",
            "{id: again, at: 9s, create: {target: node/a, object: {cpu: 2, memory: 1Gi}}}",
            "{id: later, at: 10s, patch: {target: node/a, patch: {labels: {disk: ssd}}}}",
        )
    )
    # A node of a `count` entry is named <name>-<i>.
    counted = text("{id: e, at: 8s, delete: {target: node/w-2}}").replace(
        "      - {name: a,", "      - {name: w, count: 3, cpu: 1, memory: 1Gi}\n      - {name: a,"
    )
    parse_scenario(counted)


def test_a_node_event_added_mid_run_is_checked_against_the_nodes_then() -> None:
    simulation = simulate()
    simulation.run(until="6s")
    with pytest.raises(EventRefused) as info:
        simulation.add_event({"id": "x", "at": "7s", "delete": {"target": "node/zz"}})
    assert "no node 'zz'" in info.value.message
    simulation.add_event({"id": "cordon", "at": "7s", "patch": {"target": "node/a", "patch": {"unschedulable": True}}})
    simulation.run(until="8s")
    assert node(simulation, "a").unschedulable


# -- delete: a drain -----------------------------------------------------------------------------------


def test_a_drain_evicts_as_the_budget_allows_and_removes_the_node_once_empty() -> None:
    # minAvailable 2 of 3 ready pods: one disruption allowed at a time. Hand-computed:
    #  10s  cordon; run-0 evicted (healthy 3 - 2 = 1 allowed); run-1, run-2 refused (429)
    #       run-3 replaces run-0 on b at 10s, ready at 13s; run-0's preStop ends at 12s, its pod goes
    #  15s  retry: healthy run-1, run-2, run-3 = 3, one allowed: run-1 evicted; run-2 refused again
    #       run-4 on b at 15s, ready at 18s; run-1 gone at 17s
    #  20s  retry: run-2 evicted; run-5 on b at 20s; run-2 gone at 22s, and a with it
    simulation = simulate("{id: drain, at: 10s, delete: {target: node/a}}", budget="{minAvailable: 2}")
    simulation.run(until="10s")
    assert pods_on(simulation, "a") == ["run-0", "run-1", "run-2"]
    active: dict[float, int] = {}
    for t in range(11, 41):
        simulation.run(until=f"{t}s")
        active[t] = simulation.model.replicas_active.count()
        if t == 21:
            assert nodes_present(simulation) == ["a", "b"] and pods_on(simulation, "a") == ["run-2"]
            assert node(simulation, "a").unschedulable
    assert min(active.values()) == 2  # the budget held throughout
    assert entries(simulation, "drain") == [
        (
            10.0,
            "node a cordoned; run-0 evicted; eviction of run-1, run-2 refused: the disruption budget allows "
            "no more now; retried every 5 s",
        ),
        (15.0, "run-1 evicted"),
        (20.0, "run-2 evicted"),
        (22.0, "node a removed"),
    ]
    assert scheduled(simulation)[3:] == [(10.0, "run-3", "b"), (15.0, "run-4", "b"), (20.0, "run-5", "b")]
    assert nodes_present(simulation) == ["b"]
    assert simulation.placement is not None
    removed = [(e.at / SECOND, e.node) for e in simulation.placement.controller.timeline if e.kind == "NodeRemoved"]
    assert removed == [(22.0, "a")]
    records = {r["node"]: r for r in simulation.placement.results()["nodes"]}
    assert records["a"]["removed_s"] == 22.0


def test_a_drain_without_a_budget_evicts_every_pod_at_once() -> None:
    simulation = simulate("{id: drain, at: 10s, delete: {target: node/a}}")
    simulation.run()
    assert entries(simulation, "drain") == [
        (10.0, "node a cordoned; run-0, run-1, run-2 evicted"),
        (12.0, "node a removed"),  # the preStop sleeps end together
    ]
    assert [s for s in scheduled(simulation) if s[0] >= 10] == [(10.0, f"run-{i}", "b") for i in (3, 4, 5)]


def test_an_unready_pod_is_evicted_without_the_budget() -> None:
    # replicas 4 at 9s: run-3 launches on a (b is cordoned again at 6s) and is not ready until 12s.
    # At 10s minAvailable 3 leaves no disruption for the three ready pods, but a launching replica
    # counts as a pod still Pending, which the eviction API deletes without the budget (canIgnorePDB;
    # upstream's TestEvictionIgnorePDB, case "pdbs No disruptions allowed, pod pending, first delete
    # conflict, pod still pending, pod deleted successfully").
    simulation = simulate(
        "{id: shut, at: 6s, patch: {target: node/b, patch: {unschedulable: true}}}",
        "{id: more, at: 9s, patch: {target: workload, patch: {replicas: 4}}}",
        "{id: drain, at: 10s, delete: {target: node/a}}",
        budget="{minAvailable: 3}",
    )
    simulation.run(until="11s")
    assert entries(simulation, "drain") == [
        (
            10.0,
            "node a cordoned; run-3 evicted; eviction of run-0, run-1, run-2 refused: the disruption budget "
            "allows no more now; retried every 5 s",
        )
    ]


def test_draining_an_empty_node_removes_it_at_once() -> None:
    simulation = simulate("{id: drain, at: 6s, delete: {target: node/b}}")
    simulation.run(until="7s")
    assert entries(simulation, "drain") == [(6.0, "node b cordoned, no pods on it; node b removed")]
    assert nodes_present(simulation) == ["a"]


def test_a_node_created_while_its_namesake_drains_joins_once_that_one_is_gone() -> None:
    simulation = simulate(
        "{id: drain, at: 10s, delete: {target: node/a}}",
        "{id: anew, at: 11s, create: {target: node/a, object: {cpu: 8, memory: 8Gi}}}",
        budget="{minAvailable: 2}",
    )
    simulation.run(until="21s")
    assert node(simulation, "a").cpu == 4000 and node(simulation, "a").unschedulable
    simulation.run()
    assert entries(simulation, "anew") == [
        (11.0, "node a joins once the node a being drained is gone"),
        (22.0, "node a added"),
    ]
    assert node(simulation, "a").cpu == 8000 and not node(simulation, "a").unschedulable


def test_a_node_created_and_deleted_while_its_namesake_drains_never_joins() -> None:
    simulation = simulate(
        "{id: drain, at: 10s, delete: {target: node/a}}",
        "{id: anew, at: 11s, create: {target: node/a, object: {cpu: 8, memory: 8Gi}}}",
        "{id: relabel, at: 11.5s, patch: {target: node/a, patch: {labels: {disk: ssd}}}}",
        "{id: again, at: 12s, delete: {target: node/a}}",
        budget="{minAvailable: 2}",
    )
    simulation.run()
    assert entries(simulation, "relabel") == [
        (11.5, "node a: changed labels; it joins as patched once the node a being drained is gone")
    ]
    assert entries(simulation, "again") == [(12.0, "node a never joined: the node a before it was still being drained")]
    assert entries(simulation, "anew") == [(11.0, "node a joins once the node a being drained is gone")]
    assert entries(simulation, "drain")[-1] == (22.0, "node a removed")
    assert nodes_present(simulation) == ["b"]


def test_pods_that_came_after_the_cordon_go_with_the_node() -> None:
    # The pods tolerate the cordon's taint and b is too small for them, so each replacement goes back
    # to a. kubectl drain evicts only the pods it listed at the start (GetPodsForDeletion); once they
    # are gone the node is deleted, and the pod garbage collector deletes the three that came after.
    tolerate = "{tolerations: [{key: node.kubernetes.io/unschedulable, operator: Exists}]}"
    spec = text("{id: drain, at: 10s, delete: {target: node/a}}", budget="{minAvailable: 2}", pod=tolerate)
    simulation = Simulation(parse_scenario(spec.replace("{name: b, cpu: 4,", "{name: b, cpu: 500m,")))
    simulation.run()
    assert scheduled(simulation)[3:6] == [(10.0, "run-3", "a"), (15.0, "run-4", "a"), (20.0, "run-5", "a")]
    assert entries(simulation, "drain")[1:] == [
        (15.0, "run-1 evicted"),
        (20.0, "run-2 evicted"),
        (22.0, "node a removed; run-3, run-4, run-5 deleted with it"),
    ]
    assert simulation.placement is not None
    assert simulation.placement.controller.pending.count() == 3  # their replacements fit nowhere


# -- patch ----------------------------------------------------------------------------------------------


def test_a_no_schedule_taint_keeps_the_pods_but_turns_new_ones_away() -> None:
    # b is cordoned again, a tainted: the fourth replica has nowhere to go until c is created.
    simulation = simulate(
        "{id: shut, at: 6s, patch: {target: node/b, patch: {unschedulable: true}}}",
        "{id: taint, at: 7s, patch: {target: node/a, patch: {taints: [{key: maintenance, effect: NoSchedule}]}}}",
        "{id: more, at: 8s, patch: {target: workload, patch: {replicas: 4}}}",
        "{id: c, at: 12s, create: {target: node/c, object: {cpu: 2, memory: 1Gi}}}",
    )
    simulation.run(until="11s")
    assert entries(simulation, "taint") == [(7.0, "node a: changed taints")]
    assert pods_on(simulation, "a") == ["run-0", "run-1", "run-2"]
    assert simulation.placement is not None and simulation.placement.controller.pending.count() == 1
    simulation.run()
    assert entries(simulation, "c") == [(12.0, "node c added")]
    assert scheduled(simulation)[3:] == [(12.0, "run-3", "c")]
    assert pods_on(simulation, "a") == ["run-0", "run-1", "run-2"]


def test_a_no_execute_taint_evicts_the_pods_that_do_not_tolerate_it() -> None:
    # The taint manager deletes them at once, budget or not (minAvailable 3 would refuse any eviction).
    taint = "{id: taint, at: 10s, patch: {target: node/a, patch: {taints: [{key: spot, effect: NoExecute}]}}}"
    simulation = simulate(taint, budget="{minAvailable: 3}")
    simulation.run()
    assert entries(simulation, "taint") == [
        (10.0, "node a: changed taints; run-0, run-1, run-2 evicted: a NoExecute taint they do not tolerate")
    ]
    assert [s for s in scheduled(simulation) if s[0] >= 10] == [(10.0, f"run-{i}", "b") for i in (3, 4, 5)]
    assert pods_on(simulation, "a") == []
    tolerant = simulate(taint, budget="{minAvailable: 3}", pod="{tolerations: [{key: spot, operator: Exists}]}")
    tolerant.run()
    assert entries(tolerant, "taint") == [(10.0, "node a: changed taints")]
    assert pods_on(tolerant, "a") == ["run-0", "run-1", "run-2"]


def test_a_cordon_keeps_the_pods_and_an_uncordon_takes_new_ones_again() -> None:
    simulation = simulate(
        "{id: cordon, at: 6s, patch: {target: node/a, patch: {unschedulable: true}}}",
        "{id: shut, at: 6s, patch: {target: node/b, patch: {unschedulable: true}}}",
        "{id: more, at: 7s, patch: {target: workload, patch: {replicas: 4}}}",
        "{id: uncordon, at: 9s, patch: {target: node/a, patch: {unschedulable: false}}}",
    )
    simulation.run()
    assert entries(simulation, "cordon") == [(6.0, "node a: changed unschedulable")]
    assert scheduled(simulation)[3:] == [(9.0, "run-3", "a")]
    assert pods_on(simulation, "a") == ["run-0", "run-1", "run-2", "run-3"]


def test_an_allocatable_patch_keeps_pods_past_it_and_counts_from_then_on() -> None:
    # a shrinks to 2 cores under its three 1-core pods: they stay. The fourth waits until a has 8.
    simulation = simulate(
        "{id: shut, at: 6s, patch: {target: node/b, patch: {unschedulable: true}}}",
        "{id: shrink, at: 7s, patch: {target: node/a, patch: {cpu: 2, extended: {example.com/dongle: 1}}}}",
        "{id: more, at: 8s, patch: {target: workload, patch: {replicas: 4}}}",
        "{id: grow, at: 9s, patch: {target: node/a, patch: {cpu: 8}}}",
    )
    simulation.run(until="8.5s")
    assert entries(simulation, "shrink") == [(7.0, "node a: changed cpu, extended")]
    assert node(simulation, "a").cpu == 2000 and node(simulation, "a").extended == {"example.com/dongle": 1}
    assert pods_on(simulation, "a") == ["run-0", "run-1", "run-2"]
    simulation.run()
    assert scheduled(simulation)[3:] == [(9.0, "run-3", "a")]
    assert node(simulation, "a").cpu == 8000


def test_labels_merge_key_by_key_and_null_removes_one() -> None:
    simulation = simulate(
        "{id: label, at: 6s, patch: {target: node/a, patch: {labels: {disk: ssd, zone: x}}}}",
        "{id: unlabel, at: 7s, patch: {target: node/a, patch: {labels: {zone: null}}}}",
    )
    simulation.run(until="6.5s")
    assert node(simulation, "a").labels == {"disk": "ssd", "zone": "x", "kubernetes.io/hostname": "a"}
    simulation.run(until="7.5s")
    assert node(simulation, "a").labels == {"disk": "ssd", "kubernetes.io/hostname": "a"}


# -- invariants over random node events ----------------------------------------------------------------

PATCHES: list[dict[str, Any]] = [
    {"unschedulable": True},
    {"unschedulable": False},
    {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]},
    {"taints": [{"key": "spot", "effect": "NoExecute"}]},
    {"taints": None},
    {"cpu": "500m"},
    {"cpu": 4},
    {"labels": {"disk": "ssd"}},
]


@st.composite
def node_timelines(draw: st.DrawFn) -> tuple[str, set[str]]:
    """A scenario with three nodes and a timeline of node events valid at each one's time, and the
    nodes whose last event deletes them."""
    duration_s = draw(st.integers(20, 60))
    present = ["n-0", "n-1", "n-2"]
    gone: list[str] = []
    events = []
    last: dict[str, str] = {}
    times = sorted(draw(st.lists(st.integers(1, (duration_s - 5) * 1000), max_size=8, unique=True)))
    for i, at in enumerate(times):
        choices = ["create"] + (["patch", "patch", "delete"] if present else [])
        operation = draw(st.sampled_from(choices))
        if operation == "create":
            name = draw(st.sampled_from([*gone, f"c{i}"]))
            if name in gone:
                gone.remove(name)
            present.append(name)
            body = f"{{target: node/{name}, object: {{cpu: {draw(st.sampled_from([1, 2]))}, memory: 4Gi}}}}"
        elif operation == "patch":
            name = draw(st.sampled_from(present))
            body = f"{{target: node/{name}, patch: {_flow(draw(st.sampled_from(PATCHES)))}}}"
        else:
            name = draw(st.sampled_from(present))
            present.remove(name)
            gone.append(name)
            body = f"{{target: node/{name}}}"
        events.append(f"{{id: e{i}, at: {at}ms, {operation}: {body}}}")
        last[name] = operation
    budget = draw(
        st.sampled_from(["", "  disruptionBudget: {minAvailable: 1}\n", "  disruptionBudget: {maxUnavailable: 1}\n"])
    )
    toleration = draw(st.sampled_from(["", "    pod: {tolerations: [{key: spot, operator: Exists}]}\n"]))
    head = (
        "apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {name: props}\nspec:\n"
        f"  duration: {duration_s}s\n  seed: {draw(st.integers(0, 2**16))}\n"
        f"  workload:\n    replicas: {draw(st.integers(0, 5))}\n    resources: {{requests: {{cpu: 500m}}}}\n"
        "    request: {cpuTime: {distribution: exponential, mean: 60ms}, timeout: 3s}\n"
        "    terminationGracePeriod: 2s\n    launch: {containerStart: 500ms, readiness: 1s}\n"
        + toleration
        + "  traffic: {type: poisson, rate: 4/s}\n"
        + budget
        + "  cluster:\n    nodes:\n      - {name: n, count: 3, cpu: 2, memory: 4Gi}\n"
    )
    order = draw(st.permutations(range(len(events))))
    text = head + ("  events:\n" + "".join(f"    - {events[i]}\n" for i in order) if events else "")
    return text, {name for name, operation in last.items() if operation == "delete"}


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_flow(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


@settings(max_examples=40, deadline=None)
@given(case=node_timelines())
def test_every_pod_is_in_one_stock_and_every_node_where_the_timeline_says(case: tuple[str, set[str]]) -> None:
    scenario, deleted = case
    simulation = Simulation(parse_scenario(scenario))
    summary = simulation.run()
    placement = simulation.placement
    assert placement is not None
    controller, snapshot, model = placement.controller, placement.snapshot, simulation.model
    now = simulation.env.now()
    # Every pod made is pending, bound or done: in exactly one stock.
    created = [pod for pod in controller.pods.values() if pod.created_at <= now]
    for pod in created:
        places = (pod in controller.pending) + (pod in controller.bound) + (pod.finished_at is not None)
        assert places == 1, pod.name
    assert controller.pending.count() + controller.bound.count() + controller.done.count() == len(created)
    # Every live replica has one pod not gone, and every pod not gone a live replica.
    live = sorted(r.id for r in model.replicas.values() if r.state is not ReplicaState.TERMINATED)
    assert sorted(pod.owner.id for pod in created if pod.finished_at is None) == live
    # Bound pods are on present nodes, where the snapshot counts them; nothing else is counted there.
    bound = {pod.name: pod.node for pod in controller.bound}
    for name, where in bound.items():
        assert where in snapshot.index and name in snapshot.pods_on[snapshot.index[where]]
    counted = {name for i in snapshot.order.tolist() for name in snapshot.pods_on[i]}
    assert counted == set(bound) | {pod.name for pod in controller.pending if pod.node is not None}
    # The nodes present are the static ones with those the timeline says were added and removed.
    expected = {"n-0", "n-1", "n-2"}
    for entry in sorted(simulation.timeline.entries(), key=lambda e: e[0]):
        for part in entry[4].split("; "):
            words = part.split()
            if len(words) == 3 and words[0] == "node" and words[2] in ("added", "removed"):
                (expected.add if words[2] == "added" else expected.discard)(words[1])
    assert nodes_present(simulation) == sorted(expected)
    # A node deleted and still there is cordoned, and waits for pods on it.
    for name in deleted & expected:
        assert node(simulation, name).unschedulable
        assert any(controller.pods[pod].finished_at is None for pod in pods_on(simulation, name)), name
    # Requests are conserved.
    assert summary.requests_arrived == summary.requests_completed + summary.requests_failed + summary.requests_in_flight
