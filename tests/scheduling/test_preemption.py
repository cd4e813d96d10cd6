"""DefaultPreemption checked against upstream's unit tests, and by properties of the greedy reprieve.

The cases restate, as data, kubernetes/kubernetes
`pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go` @ 5def93b1:
TestDryRunPreemption (named TestSelectNodesForPreemption in older versions) and
TestSelectBestCandidate (formerly TestPickOneNodeForPreemption). Each case carries its upstream
name. Upstream fits pods with the NodeResourcesFit filter; here `resource_fits` below does the same
for cpu, memory and the pod count. How the data map:

- Nodes are `st.MakeNode().Capacity(veryLargeRes)`: 500m CPU, 500 bytes of memory, 32 pods (the
  wrapper's default pod capacity). Requests: smallRes 100m/100, mediumRes 200m/200, largeRes
  300m/300, veryLargeRes 500m/500. Priorities: neg -100, low 0, mid 100, high 1000, veryHigh 10000.
  `StartTime(epochTimeN)` is a start at N ns; a pod without one has not started.
- TestDryRunPreemption expects the candidates (nodes with victims) and their victims; here that is
  `select_victims` on each node in turn. The FalseFilter case uses a `fits` that always refuses;
  the pod topology spread case fits with the PodTopologySpread filter of
  `skenario.scheduling.plugins.podtopologyspread` (nodes named "node-a/zone1" carry labels
  hostname=node-a and zone=zone1, as upstream splits them).
- TestSelectBestCandidate expects the node `pickOneNodeForPreemption` chooses among the candidates
  of the dry run; where upstream allows either of two (map order), ours is the first in node order.

Left out of TestDryRunPreemption: "a pod that fits with no preemption", "a pod that fits on one node
with no preemption" and "get Unschedulable in the preemption phase when the filter plugins filtering
the nodes" (they test the fake filter plugins' bookkeeping, NumFilterCalled); "pod with anti-affinity
is preempted" (inter-pod anti-affinity is not modelled); the four "preemption with violation of ...
pdb ..." cases and "preemption looks past numCandidates until a non-PDB violating node is found"
(PodDisruptionBudgets); "all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
"some nodes are not possible candidates, DefaultPreemptionArgs limits to 2" and "preemption offset
across multiple scheduling cycles and wrap around" (which nodes to try is the caller's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.affinity import Requirement
from skenario.scheduling.objects import NEVER, LabelSelector, NodeSpec, PodSpec, TopologySpreadConstraint
from skenario.scheduling.plugins.podtopologyspread import spread_filter
from skenario.scheduling.preemption import (
    PRIORITY_SHIFT,
    FitsFn,
    PreemptionBudget,
    Victims,
    by_importance,
    eligible,
    filter_pods_with_pdb_violation,
    pick_node,
    select_victims,
    select_victims_with_budgets,
)

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = 100, 200, 300, 500  # m CPU and bytes of memory alike
DRY_RUN = "default_preemption_test.go TestDryRunPreemption"
BEST = "default_preemption_test.go TestSelectBestCandidate"


def resource_fits(pod: PodSpec, node: NodeSpec, others: list[PodSpec]) -> bool:
    """NodeResourcesFit's filter (`fitsRequest`) for cpu, memory and the pod count."""
    if len(others) + 1 > node.pods:
        return False
    for request, allocatable, used in (
        (pod.cpu_request, node.cpu, sum(p.cpu_request for p in others)),
        (pod.memory_request, node.memory, sum(p.memory_request for p in others)),
    ):
        if request > 0 and request > allocatable - used:
            return False
    return True


def never_fits(pod: PodSpec, node: NodeSpec, others: list[PodSpec]) -> bool:
    """Upstream's FalseFilter plugin."""
    return False


def spread_fits(nodes: Sequence[NodeSpec], pods_on: Sequence[list[PodSpec]]) -> FitsFn:
    """The PodTopologySpread filter on the cluster with the node's pods replaced by `remaining`."""
    index = {n.name: i for i, n in enumerate(nodes)}

    def fits(pod: PodSpec, node: NodeSpec, remaining: list[PodSpec]) -> bool:
        i = index[node.name]
        view = [remaining if j == i else pods for j, pods in enumerate(pods_on)]
        return spread_filter(pod, nodes, view, [i])[0] is None

    return fits


def pod(name: str, priority: int, size: int = 0, **labels: str) -> PodSpec:
    """`st.MakePod().Name(name).Priority(priority).Req({cpu: size m, memory: size})`; 0: no requests."""
    return PodSpec(name, cpu=size or None, memory=size or None, priority=priority, labels=labels)


def make_node(spec: str) -> NodeSpec:
    """A veryLargeRes node; "name/zone" also labels hostname=name and zone=zone."""
    parts = spec.split("/")
    labels = dict(zip(("hostname", "zone", "region"), parts, strict=False)) if len(parts) > 1 else {}
    return NodeSpec(parts[0], cpu=VERY_LARGE, memory=VERY_LARGE, pods=32, labels=labels)


FitsFactory = Callable[[Sequence[NodeSpec], Sequence[list[PodSpec]]], FitsFn]


@dataclass(frozen=True)
class PreemptionCase:
    test: str
    name: str
    preemptor: PodSpec
    nodes: tuple[str, ...]
    pods: tuple[tuple[str, PodSpec], ...]  # (node, pod)
    started: Mapping[str, int] = field(default_factory=dict)
    fits: FitsFactory = lambda nodes, pods_on: resource_fits
    victims: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # TestDryRunPreemption: by name
    picked: tuple[str, ...] = ()  # TestSelectBestCandidate: any of these


def dry_run(case: PreemptionCase) -> tuple[dict[str, list[PodSpec]], Mapping[str, int]]:
    nodes = [make_node(n) for n in case.nodes]
    pods_on: list[list[PodSpec]] = [[] for _ in nodes]
    index = {n.name: i for i, n in enumerate(nodes)}
    for node_name, p in case.pods:
        pods_on[index[node_name]].append(p)
    fits = case.fits(nodes, pods_on)
    candidates = {}
    for n, pods in zip(nodes, pods_on, strict=True):
        victims = select_victims(case.preemptor, n, pods, fits, case.started)
        if victims:  # the dry run keeps nodes with at least one victim
            candidates[n.name] = victims
    return candidates, case.started


DRY_RUN_CASES = [
    PreemptionCase(
        DRY_RUN,
        "a pod that does not fit on any node",
        pod("p", HIGH),
        ("node1", "node2"),
        (("node1", pod("p1", MID)), ("node2", pod("p2", MID))),
        fits=lambda nodes, pods_on: never_fits,
    ),
    PreemptionCase(
        DRY_RUN,
        "a pod that fits on both nodes when lower priority pods are preempted",
        pod("p", HIGH, LARGE),
        ("node1", "node2"),
        (("node1", pod("p1", MID, LARGE)), ("node2", pod("p2", MID, LARGE))),
        victims={"node1": ("p1",), "node2": ("p2",)},
    ),
    PreemptionCase(
        DRY_RUN,
        "a pod that would fit on the nodes, but other pods running are higher priority, no preemption would happen",
        pod("p", LOW, LARGE),
        ("node1", "node2"),
        (("node1", pod("p1", MID, LARGE)), ("node2", pod("p2", MID, LARGE))),
    ),
    PreemptionCase(
        DRY_RUN,
        "medium priority pod is preempted, but lower priority one stays as it is small",
        pod("p", HIGH, LARGE),
        ("node1", "node2"),
        (("node1", pod("p1.1", LOW, SMALL)), ("node1", pod("p1.2", MID, LARGE)), ("node2", pod("p2", MID, LARGE))),
        victims={"node1": ("p1.2",), "node2": ("p2",)},
    ),
    PreemptionCase(
        DRY_RUN,
        "mixed priority pods are preempted",
        pod("p", HIGH, LARGE),
        ("node1", "node2"),
        (
            ("node1", pod("p1.1", MID, SMALL)),
            ("node1", pod("p1.2", LOW, SMALL)),
            ("node1", pod("p1.3", MID, MEDIUM)),
            ("node1", pod("p1.4", HIGH, SMALL)),
            ("node2", pod("p2", HIGH, LARGE)),
        ),
        victims={"node1": ("p1.2", "p1.3")},
    ),
    # p1.2 (low, started at 4) is reprieved before p1.1 (low, started at 5): the later one goes.
    PreemptionCase(
        DRY_RUN,
        "mixed priority pods are preempted, pick later StartTime one when priorities are equal",
        pod("p", HIGH, LARGE),
        ("node1", "node2"),
        (
            ("node1", pod("p1.1", LOW, SMALL)),
            ("node1", pod("p1.2", LOW, SMALL)),
            ("node1", pod("p1.3", MID, MEDIUM)),
            ("node1", pod("p1.4", HIGH, SMALL)),
            ("node2", pod("p2", HIGH, LARGE)),
        ),
        started={"p1.1": 5, "p1.2": 4, "p1.3": 3, "p1.4": 2, "p2": 1},
        victims={"node1": ("p1.1", "p1.3")},
    ),
    PreemptionCase(
        DRY_RUN,
        "preemption to resolve pod topology spread filter failure",
        PodSpec(
            "p",
            priority=HIGH,
            labels={"foo": ""},
            spread=tuple(
                TopologySpreadConstraint(
                    1, key, label_selector=LabelSelector(match_expressions=(Requirement("foo", "Exists"),))
                )
                for key in ("zone", "hostname")
            ),
        ),
        ("node-a/zone1", "node-b/zone1", "node-x/zone2"),
        (
            ("node-a", pod("pod-a1", MID, foo="")),
            ("node-a", pod("pod-a2", LOW, foo="")),
            ("node-b", pod("pod-b1", LOW, foo="")),
            ("node-x", pod("pod-x1", HIGH, foo="")),
            ("node-x", pod("pod-x2", HIGH, foo="")),
        ),
        fits=spread_fits,
        victims={"node-a": ("pod-a2",), "node-b": ("pod-b1",)},
    ),
]


@pytest.mark.parametrize("case", DRY_RUN_CASES, ids=lambda c: c.name)
def test_dry_run_upstream(case: PreemptionCase) -> None:
    candidates, started = dry_run(case)
    assert {n: tuple(sorted(p.name for p in v)) for n, v in candidates.items()} == dict(case.victims)
    for victims in candidates.values():
        assert victims == by_importance(victims, started)  # upstream returns them most important first


def best(
    name: str, nodes: tuple[str, ...], pods: tuple[tuple[str, PodSpec], ...], *picked: str, priority: int = HIGH
) -> PreemptionCase:
    """A TestSelectBestCandidate case: the preemptor requests veryLargeRes; every pod started at 0 (epochTime)."""
    started = dict.fromkeys((p.name for _, p in pods), 0)
    return PreemptionCase(BEST, name, pod("p", priority, VERY_LARGE), nodes, pods, started=started, picked=picked)


N3 = ("node1", "node2", "node3")

BEST_CASES = [
    PreemptionCase(
        BEST,
        "a pod that fits on both nodes when lower priority pods are preempted",
        pod("p", HIGH, LARGE),
        ("node1", "node2"),
        (("node1", pod("p1", MID, LARGE)), ("node2", pod("p2", MID, LARGE))),
        started={"p1": 0, "p2": 0},
        picked=("node1", "node2"),
    ),
    best(
        "node with min highest priority pod is picked",
        N3,
        (
            ("node1", pod("p1.1", MID, MEDIUM)),
            ("node1", pod("p1.2", MID, LARGE)),
            ("node2", pod("p2.1", MID, MEDIUM)),
            ("node2", pod("p2.2", LOW, MEDIUM)),
            ("node3", pod("p3.1", LOW, MEDIUM)),
            ("node3", pod("p3.2", LOW, MEDIUM)),
        ),
        "node3",
    ),
    best(
        "when highest priorities are the same, minimum sum of priorities is picked",
        N3,
        (
            ("node1", pod("p1.1", MID, MEDIUM)),
            ("node1", pod("p1.2", MID, LARGE)),
            ("node2", pod("p2.1", MID, LARGE)),
            ("node2", pod("p2.2", LOW, MEDIUM)),
            ("node3", pod("p3.1", MID, MEDIUM)),
            ("node3", pod("p3.2", MID, MEDIUM)),
        ),
        "node2",
    ),
    # Sums with the shift: node1 4 victims (0 + 4 shifts), node2 2 (0 + 2), node3 3 (0 + 3).
    best(
        "when highest priority and sum are the same, minimum number of pods is picked",
        N3,
        (
            ("node1", pod("p1.1", MID, SMALL)),
            ("node1", pod("p1.2", NEG, SMALL)),
            ("node1", pod("p1.3", MID, SMALL)),
            ("node1", pod("p1.4", NEG, SMALL)),
            ("node2", pod("p2.1", MID, LARGE)),
            ("node2", pod("p2.2", NEG, MEDIUM)),
            ("node3", pod("p3.1", MID, MEDIUM)),
            ("node3", pod("p3.2", NEG, SMALL)),
            ("node3", pod("p3.3", LOW, SMALL)),
        ),
        "node2",
    ),
    # Unshifted, node1's sum (100 - 200 = -100) would beat node2's (0); shifted, its 3 victims lose.
    best(
        "sum of adjusted priorities is considered",
        N3,
        (
            ("node1", pod("p1.1", MID, SMALL)),
            ("node1", pod("p1.2", NEG, SMALL)),
            ("node1", pod("p1.3", NEG, SMALL)),
            ("node2", pod("p2.1", MID, LARGE)),
            ("node2", pod("p2.2", NEG, MEDIUM)),
            ("node3", pod("p3.1", MID, MEDIUM)),
            ("node3", pod("p3.2", NEG, SMALL)),
            ("node3", pod("p3.3", LOW, SMALL)),
        ),
        "node2",
    ),
    best(
        "non-overlapping lowest high priority, sum priorities, and number of pods",
        ("node1", "node2", "node3", "node4"),
        (
            ("node1", pod("p1.1", MID, SMALL)),
            ("node1", pod("p1.2", LOW, SMALL)),
            ("node1", pod("p1.3", LOW, SMALL)),
            ("node2", pod("p2.1", HIGH, LARGE)),
            ("node3", pod("p3.1", MID, MEDIUM)),
            ("node3", pod("p3.2", LOW, SMALL)),
            ("node3", pod("p3.3", LOW, SMALL)),
            ("node3", pod("p3.4", LOW, MEDIUM)),
            ("node4", pod("p4.1", MID, MEDIUM)),
            ("node4", pod("p4.2", MID, SMALL)),
            ("node4", pod("p4.3", MID, SMALL)),
            ("node4", pod("p4.4", NEG, SMALL)),
        ),
        "node1",
        priority=VERY_HIGH,
    ),
    PreemptionCase(
        BEST,
        "same priority, same number of victims, different start time for each node's pod",
        pod("p", HIGH, VERY_LARGE),
        N3,
        tuple((f"node{n}", pod(f"p{n}.{k}", MID, MEDIUM)) for n in (1, 2, 3) for k in (1, 2)),
        started={"p1.1": 2, "p1.2": 2, "p2.1": 3, "p2.2": 3, "p3.1": 1, "p3.2": 1},
        picked=("node2",),
    ),
    PreemptionCase(
        BEST,
        "same priority, same number of victims, different start time for all pods",
        pod("p", HIGH, VERY_LARGE),
        N3,
        tuple((f"node{n}", pod(f"p{n}.{k}", MID, MEDIUM)) for n in (1, 2, 3) for k in (1, 2)),
        started={"p1.1": 4, "p1.2": 2, "p2.1": 5, "p2.2": 1, "p3.1": 3, "p3.2": 6},
        picked=("node3",),
    ),
    PreemptionCase(
        BEST,
        "different priority, same number of victims, different start time for all pods",
        pod("p", HIGH, VERY_LARGE),
        N3,
        (
            ("node1", pod("p1.1", LOW, MEDIUM)),
            ("node1", pod("p1.2", MID, MEDIUM)),
            ("node2", pod("p2.1", MID, MEDIUM)),
            ("node2", pod("p2.2", LOW, MEDIUM)),
            ("node3", pod("p3.1", LOW, MEDIUM)),
            ("node3", pod("p3.2", MID, MEDIUM)),
        ),
        started={"p1.1": 4, "p1.2": 2, "p2.1": 6, "p2.2": 1, "p3.1": 3, "p3.2": 5},
        picked=("node2",),
    ),
]


@pytest.mark.parametrize("case", BEST_CASES, ids=lambda c: c.name)
def test_select_best_candidate_upstream(case: PreemptionCase) -> None:
    candidates, started = dry_run(case)
    assert set(candidates) == set(case.nodes)  # every node is a candidate in these cases
    assert pick_node(candidates, started) in case.picked


# --------------------------------------------------------------------------------------------------
# Our own checks


def test_eligible() -> None:
    assert eligible(pod("p", HIGH))
    assert not eligible(PodSpec("p", priority=HIGH, preemption_policy=NEVER))


def test_no_lower_priority_pod_means_no_candidate() -> None:
    node = make_node("node1")
    assert select_victims(pod("p", MID, LARGE), node, [pod("a", MID, LARGE)], resource_fits) is None
    assert select_victims(pod("p", MID, LARGE), node, [], resource_fits) is None


def test_pick_node_tie_breaks() -> None:
    a, b = [pod("a", LOW)], [pod("b", LOW)]
    assert pick_node({"n1": a, "n2": b}) == "n1"  # full tie: first in order
    assert pick_node({"n1": a, "n2": [], "n3": []}) == "n2"  # no victims wins at once
    assert pick_node({"n1": [pod("a", MID)], "n2": [pod("b", LOW), pod("c", LOW)]}) == "n2"  # highest first
    assert pick_node({"n1": [pod("a", NEG), pod("b", NEG)], "n2": [pod("c", NEG)]}) == "n2"  # shifted sum
    # Latest earliest-start of the highest-priority victims; a pod not started counts as latest.
    assert pick_node({"n1": a, "n2": b}, {"a": 5, "b": 7}) == "n2"
    assert pick_node({"n1": a, "n2": b}, {"a": 5}) == "n2"
    with pytest.raises(ValueError, match="no preemption candidates"):
        pick_node({})
    assert PRIORITY_SHIFT == 2**31


def test_by_importance() -> None:
    pods = [pod("a", LOW), pod("b", MID), pod("c", LOW), pod("d", MID)]
    assert [p.name for p in by_importance(pods, {"a": 9, "c": 1, "d": 3})] == ["d", "b", "c", "a"]


# Properties, with the resource fit -----------------------------------------------------------------

PROPERTY_SETTINGS = settings(max_examples=300, deadline=None)


@st.composite
def node_and_pods(draw: st.DrawFn) -> tuple[PodSpec, NodeSpec, list[PodSpec], dict[str, int]]:
    cpu = draw(st.integers(0, 2000))
    memory = draw(st.integers(0, 2000))
    node = NodeSpec("n", cpu=cpu, memory=memory, pods=draw(st.integers(1, 12)))
    size = st.one_of(st.none(), st.integers(0, 800))
    count = draw(st.integers(0, 10))
    pods = [
        PodSpec(f"p{i}", cpu=draw(size), memory=draw(size), priority=draw(st.integers(-2, 3))) for i in range(count)
    ]
    started = {p.name: draw(st.integers(0, 5)) for p in pods if draw(st.booleans())}
    preemptor = PodSpec("new", cpu=draw(size), memory=draw(size), priority=draw(st.integers(-2, 4)))
    return preemptor, node, pods, started


@PROPERTY_SETTINGS
@given(node_and_pods())
def test_victims_are_lower_priority_minimal_and_make_room(
    drawn: tuple[PodSpec, NodeSpec, list[PodSpec], dict[str, int]],
) -> None:
    preemptor, node, pods, started = drawn
    victims = select_victims(preemptor, node, pods, resource_fits, started)
    lower = [p for p in pods if p.priority < preemptor.priority]
    if victims is None:
        higher = [p for p in pods if p.priority >= preemptor.priority]
        assert not lower or not resource_fits(preemptor, node, higher)
        return
    names = {p.name for p in victims}
    assert len(names) == len(victims)
    assert all(v.priority < preemptor.priority for v in victims)
    remaining = [p for p in pods if p.name not in names]
    assert resource_fits(preemptor, node, remaining)
    for v in victims:  # minimal: no single victim can be put back
        assert not resource_fits(preemptor, node, [*remaining, v])
    assert victims == by_importance(victims, started)


@PROPERTY_SETTINGS
@given(st.lists(node_and_pods(), min_size=1, max_size=5))
def test_pick_node_is_deterministic_and_picks_a_candidate(
    drawn: list[tuple[PodSpec, NodeSpec, list[PodSpec], dict[str, int]]],
) -> None:
    candidates: dict[str, list[PodSpec]] = {}
    started: dict[str, int] = {}
    for k, (preemptor, node, pods, node_started) in enumerate(drawn):
        renamed = [PodSpec(f"n{k}-{p.name}", cpu=p.cpu, memory=p.memory, priority=p.priority) for p in pods]
        started |= {f"n{k}-{name}": t for name, t in node_started.items()}
        victims = select_victims(preemptor, node, renamed, resource_fits, started)
        if victims is not None:
            candidates[f"node{k}"] = victims
    if not candidates:
        return
    chosen = pick_node(candidates, started)
    assert chosen in candidates
    assert pick_node(dict(candidates), dict(started)) == chosen
    if all(candidates.values()):
        lowest_top = min(max(p.priority for p in v) for v in candidates.values())
        assert max(p.priority for p in candidates[chosen]) == lowest_top


# --------------------------------------------------------------------------------------------------
# PodDisruptionBudgets: filterPodsWithPDBViolation, the reprieve order and the first tie-break


def app_foo(allowed: int) -> PreemptionBudget:
    """A budget selecting `app: foo` with `status.disruptionsAllowed` = allowed."""
    return PreemptionBudget(lambda p: p.labels.get("app") == "foo", allowed)


def test_preemption_with_violation_of_same_pdb() -> None:
    # TestDryRunPreemption "preemption with violation of same pdb": both 200m pods must go for the
    # 500m preemptor; the budget allows one disruption, so the second (less important) violates it.
    p11, p12 = pod("p1.1", MID, MEDIUM, app="foo"), pod("p1.2", LOW, MEDIUM, app="foo")
    chosen = select_victims_with_budgets(
        pod("p", HIGH, VERY_LARGE), make_node("node1"), [p11, p12], resource_fits, budgets=[app_foo(1)]
    )
    assert chosen is not None
    assert {p.name for p in chosen.pods} == {"p1.1", "p1.2"} and chosen.pdb_violations == 1


def test_each_pod_takes_a_disruption_from_every_budget_covering_it_in_order() -> None:
    pods = [pod("a", MID, app="foo"), pod("b", LOW, app="foo"), pod("c", LOW), pod("d", NEG, app="foo")]
    violating, non_violating = filter_pods_with_pdb_violation(pods, [app_foo(1)])
    # a takes the one disruption; b and d take the budget below zero; c is not covered.
    assert [p.name for p in violating] == ["b", "d"]
    assert [p.name for p in non_violating] == ["a", "c"]
    unlabelled = PodSpec("u", priority=LOW)
    assert filter_pods_with_pdb_violation([unlabelled], [PreemptionBudget(lambda p: True, 0)]) == ([], [unlabelled])


def test_a_covered_pod_is_reprieved_first_so_an_uncovered_one_goes_instead() -> None:
    # Room for one 300m pod after one of two 300m pods leaves. By importance alone the later-started
    # `covered` goes; with a budget allowing no disruption it is reprieved first and `free` goes.
    covered, free = pod("covered", LOW, LARGE, app="foo"), pod("free", LOW, LARGE)
    node, preemptor = make_node("node1"), pod("p", HIGH, SMALL)
    started = {"free": 1, "covered": 2}
    assert select_victims(preemptor, node, [covered, free], resource_fits, started) == [covered]
    with_budget = select_victims_with_budgets(preemptor, node, [covered, free], resource_fits, started, [app_foo(0)])
    assert with_budget == Victims([free], 0)


def test_the_node_with_fewest_violations_wins_before_any_priority() -> None:
    # n1's victim is of the lowest priority but violates a budget; n2's victims violate none.
    candidates = {"n1": [pod("a", NEG, app="foo")], "n2": [pod("b", MID), pod("c", MID)]}
    assert pick_node(candidates) == "n1"
    assert pick_node(candidates, pdb_violations={"n1": 1, "n2": 0}) == "n2"
