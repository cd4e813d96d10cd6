"""PodTopologySpread checked against upstream's unit tests.

The cases restate, as data, kubernetes/kubernetes `pkg/scheduler/framework/plugins/podtopologyspread`
filtering_test.go @ e7827879 (TestSingleConstraint, TestMultipleConstraints) and scoring_test.go
@ 38f68d59 (TestPodTopologySpreadScore, run upstream with system defaulting). Each case carries its
upstream test function and `name`. How upstream's builders map onto ours:

- `st.MakeNode().Name(n).Label(k, v)` is `NodeSpec(n, ...)` with those labels (ours also carry
  `kubernetes.io/hostname: n`, which the filter cases, spreading over "zone"/"node"/"rack", never read).
- `fooSelector`/`barSelector` (`Exists("foo")`/`Exists("bar")`) are FOO/BAR; a nil selector, which
  upstream parses as `labels.Nothing()`, is NOTHING (a contradictory pair of requirements).
- `NodeAffinityIn/NotIn(key, values)` is one required term with one In/NotIn expression;
  `NodeSelector(m)` is `NodeAffinity(node_selector=m)`; `taints` is the NoSchedule
  `node.kubernetes.io/unschedulable` taint. `nil` inclusion policies default to Honor/Ignore.
- Filter cases upstream ran with `enableNodeInclusionPolicy: false` are kept: none of them sets a
  policy, and with the gate off upstream honours the pod's required node affinity and ignores
  taints for every constraint, which is what the default policies do with it on.
- Upstream's filter unit tests run no NodeAffinity/TaintToleration filter, so some nodes the pod
  could not go to still "fit" here; the expectations are upstream's as written.

Left out, as they rest on what is not modelled:
- TestSingleConstraint and TestPodTopologySpreadScore "terminating Pods should be excluded"
  (pods being deleted; the caller leaves them out of `pods_on`).
- TestPodTopologySpreadScore "one constraint on node, 3 out of 4 nodes are candidates, one node
  doesn't match topology key" (its node-b has no `kubernetes.io/hostname` label; our NodeSpec
  always has one, as the kubelet sets it).
- TestPodTopologySpreadScore "matchLabelKeys ignored when feature gate disabled", "matchLabelKeys
  ANDed with LabelSelector when LabelSelector is empty", "... when LabelSelector isn't empty"
  (matchLabelKeys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.affinity import NodeAffinity, Requirement, Term
from skenario.scheduling.objects import (
    DO_NOT_SCHEDULE,
    HOSTNAME_LABEL,
    SCHEDULE_ANYWAY,
    ZONE_LABEL,
    LabelSelector,
    NodeSpec,
    PodSpec,
    TopologySpreadConstraint,
)
from skenario.scheduling.plugins.podtopologyspread import (
    REASON_CONSTRAINTS_NOT_MATCH,
    REASON_NODE_LABEL_NOT_MATCH,
    PodTopologySpreadPlugin,
    SpreadFailure,
    spread_constraints,
    spread_filter,
    spread_normalize,
    spread_score,
    topology_normalizing_weight,
)
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import Taint, TaintEffect

FOO = LabelSelector(match_expressions=(Requirement("foo", "Exists"),))
BAR = LabelSelector(match_expressions=(Requirement("bar", "Exists"),))
NOTHING = LabelSelector(match_expressions=(Requirement("x", "Exists"), Requirement("x", "DoesNotExist")))
UNSCHEDULABLE_TAINT = (Taint("node.kubernetes.io/unschedulable", TaintEffect.NO_SCHEDULE),)

OK, UNSCHED, UNRESOLVABLE = "Success", "Unschedulable", "UnschedulableAndUnresolvable"
SINGLE = "filtering_test.go TestSingleConstraint"
MULTIPLE = "filtering_test.go TestMultipleConstraints"
SCORE = "scoring_test.go TestPodTopologySpreadScore"


def hard(
    max_skew: int,
    key: str,
    selector: LabelSelector = FOO,
    min_domains: int | None = None,
    node_affinity_policy: str = "Honor",
    node_taints_policy: str = "Ignore",
) -> TopologySpreadConstraint:
    """Upstream's `SpreadConstraint(maxSkew, key, DoNotSchedule, selector, minDomains, affinity, taints, nil)`."""
    return TopologySpreadConstraint(
        max_skew, key, DO_NOT_SCHEDULE, selector, min_domains, node_affinity_policy, node_taints_policy
    )


def soft(
    max_skew: int,
    key: str,
    selector: LabelSelector = FOO,
    min_domains: int | None = None,
    node_affinity_policy: str = "Honor",
    node_taints_policy: str = "Ignore",
) -> TopologySpreadConstraint:
    """The same with ScheduleAnyway."""
    return TopologySpreadConstraint(
        max_skew, key, SCHEDULE_ANYWAY, selector, min_domains, node_affinity_policy, node_taints_policy
    )


def incoming(
    *spread: TopologySpreadConstraint, labels: tuple[str, ...] = ("foo",), affinity: NodeAffinity | None = None
) -> PodSpec:
    """The pod to place, "p", with empty-valued labels (upstream's `.Label("foo", "")`)."""
    return PodSpec("p", labels=dict.fromkeys(labels, ""), spread=spread, affinity=affinity or NodeAffinity())


def node(name: str, taints: tuple[Taint, ...] = (), **labels: str) -> NodeSpec:
    return NodeSpec(name, cpu=1000, memory=1000, labels=labels, taints=taints)


def zn(name: str, zone: str, **labels: str) -> NodeSpec:
    """Upstream's usual `.Label("zone", zone).Label("node", name)` node."""
    return node(name, zone=zone, node=name, **labels)


def on(node_name: str, pod_name: str, *labels: str, namespace: str = "default") -> tuple[str, PodSpec]:
    """An existing pod bound to `node_name`; labels empty-valued; default namespace."""
    return node_name, PodSpec(pod_name, labels=dict.fromkeys(labels, ""), namespace=namespace)


def foo_pods(counts: Mapping[str, int]) -> tuple[tuple[str, PodSpec], ...]:
    """`counts[n]` pods labelled foo on node n, named p-<last letter of n><i> as upstream."""
    return tuple(on(n, f"p-{n[-1]}{i + 1}", "foo") for n, k in counts.items() for i in range(k))


def required(key: str, operator: str, *values: str) -> NodeAffinity:
    return NodeAffinity(required=(Term(match_expressions=(Requirement(key, operator, values),)),))


def cluster(
    nodes: tuple[NodeSpec, ...], existing: tuple[tuple[str, PodSpec], ...]
) -> tuple[list[NodeSpec], list[list[PodSpec]]]:
    index = {n.name: i for i, n in enumerate(nodes)}
    pods_on: list[list[PodSpec]] = [[] for _ in nodes]
    for node_name, pod in existing:
        pods_on[index[node_name]].append(pod)
    return list(nodes), pods_on


@dataclass(frozen=True)
class FilterCase:
    test: str
    name: str
    pod: PodSpec
    nodes: tuple[NodeSpec, ...]
    existing: tuple[tuple[str, PodSpec], ...]
    want: Mapping[str, str]


ABXY = (zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2"))
ABC_NODE = (node("node-a", node="node-a"), node("node-b", node="node-b"), node("node-c", node="node-c"))
ABXY_FOO = (  # node-y lacks the foo label
    node("node-a", node="node-a", foo=""),
    node("node-b", node="node-b", foo=""),
    node("node-x", node="node-x", foo=""),
    node("node-y", node="node-y"),
)
ABXY_TAINTED = (
    node("node-a", node="node-a", foo=""),
    node("node-b", node="node-b", foo=""),
    node("node-x", node="node-x", foo=""),
    node("node-y", UNSCHEDULABLE_TAINT, node="node-y"),
)
EXISTING_1_1_0_1 = (on("node-a", "p-b1", "foo"), on("node-b", "p-b2", "foo"), on("node-y", "p-y1", "foo"))
SPREAD_2_1_0_3 = foo_pods({"node-a": 2, "node-b": 1, "node-y": 3})


def want(a: str, b: str, x: str, y: str) -> dict[str, str]:
    return {"node-a": a, "node-b": b, "node-x": x, "node-y": y}


FILTER_CASES = [
    FilterCase(SINGLE, "no existing pods", incoming(hard(1, "zone")), ABXY, (), want(OK, OK, OK, OK)),
    FilterCase(
        SINGLE,
        "no existing pods, incoming pod doesn't match itself",
        incoming(hard(1, "zone", BAR)),
        ABXY,
        (),
        want(OK, OK, OK, OK),
    ),
    # zone1 counts 0 (both node-a pods are in other namespaces), zone2 2: only zone1 fits.
    FilterCase(
        SINGLE,
        "existing pods in a different namespace do not count",
        incoming(hard(1, "zone")),
        ABXY,
        (
            on("node-a", "p-a1", "foo", namespace="ns1"),
            on("node-a", "p-b1", "foo", namespace="ns2"),
            on("node-x", "p-x1", "foo"),
            on("node-y", "p-y1", "foo"),
        ),
        want(OK, OK, UNSCHED, UNSCHED),
    ),
    FilterCase(
        SINGLE,
        "existing pods do not match null selector",
        incoming(hard(1, "zone", NOTHING)),
        ABXY,
        (on("node-x", "p-x1", "foo"), on("node-y", "p-y1", "foo")),
        want(OK, OK, OK, OK),
    ),
    FilterCase(
        SINGLE,
        "pods spread across zones as 3/3, all nodes fit",
        incoming(hard(1, "zone")),
        ABXY,
        SPREAD_2_1_0_3,
        want(OK, OK, OK, OK),
    ),
    # node-b's label is "zon": it is not counted, and fails for want of the key.
    FilterCase(
        SINGLE,
        "pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
        incoming(hard(1, "zone")),
        (
            zn("node-a", "zone1"),
            node("node-b", zon="zone1", node="node-b"),
            zn("node-x", "zone2"),
            zn("node-y", "zone2"),
        ),
        foo_pods({"node-a": 1, "node-b": 1, "node-x": 1, "node-y": 1}),
        want(OK, UNRESOLVABLE, UNSCHED, UNSCHED),
    ),
    FilterCase(
        SINGLE,
        "pod cannot be scheduled as all nodes don't have label 'rack'",
        incoming(hard(1, "rack")),
        (zn("node-a", "zone1"), zn("node-x", "zone2")),
        (),
        {"node-a": UNRESOLVABLE, "node-x": UNRESOLVABLE},
    ),
    FilterCase(
        SINGLE,
        "pods spread across nodes as 2/1/0/3, only node-x fits",
        incoming(hard(1, "node")),
        ABXY,
        SPREAD_2_1_0_3,
        want(UNSCHED, UNSCHED, OK, UNSCHED),
    ),
    FilterCase(
        SINGLE,
        "pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
        incoming(hard(2, "node")),
        ABXY,
        SPREAD_2_1_0_3,
        want(UNSCHED, OK, OK, UNSCHED),
    ),
    FilterCase(
        SINGLE,
        "pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
        incoming(hard(1, "node"), labels=("bar",)),
        ABXY,
        SPREAD_2_1_0_3,
        want(UNSCHED, OK, OK, UNSCHED),
    ),
    # Only node-a and node-y count (2/~1~/~0~/3), so the minimum is 2.
    FilterCase(
        SINGLE,
        "incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
        incoming(hard(1, "node"), affinity=required("node", "In", "node-a", "node-y")),
        ABXY,
        SPREAD_2_1_0_3,
        want(OK, OK, OK, UNSCHED),
    ),
    FilterCase(
        SINGLE,
        "incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
        incoming(hard(1, "zone"), affinity=required("node", "NotIn", "node-b")),
        ABXY,
        foo_pods({"node-b": 2, "node-y": 1}),
        want(OK, OK, UNSCHED, UNSCHED),
    ),
    FilterCase(
        SINGLE,
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
        "then the third node fits",
        incoming(hard(2, "node", min_domains=4)),
        ABC_NODE,
        foo_pods({"node-a": 2, "node-b": 2, "node-c": 1}),
        {"node-a": UNSCHED, "node-b": UNSCHED, "node-c": OK},
    ),
    FilterCase(
        SINGLE,
        "pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
        "then the all nodes fit",
        incoming(hard(2, "node", min_domains=2)),
        ABC_NODE,
        foo_pods({"node-a": 2, "node-b": 2, "node-c": 1}),
        {"node-a": OK, "node-b": OK, "node-c": OK},
    ),
    FilterCase(
        SINGLE,
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, "
        "then the third and fourth nodes fit",
        incoming(hard(2, "zone", min_domains=3)),
        ABXY,
        (on("node-a", "p-b1", "foo"), on("node-b", "p-b2", "foo"), on("node-y", "p-y1", "foo")),
        want(UNSCHED, UNSCHED, OK, OK),
    ),
    FilterCase(
        SINGLE,
        "pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the all nodes fit",
        incoming(hard(2, "zone", min_domains=1)),
        ABXY,
        (on("node-a", "p-b1", "foo"), on("node-b", "p-b2", "foo"), on("node-y", "p-y1", "foo")),
        want(OK, OK, OK, OK),
    ),
    FilterCase(
        SINGLE,
        "NodeAffinityPolicy honored with labelSelectors",
        incoming(hard(1, "node"), affinity=NodeAffinity(node_selector={"foo": ""})),
        ABXY_FOO,
        EXISTING_1_1_0_1,
        want(UNSCHED, UNSCHED, OK, OK),
    ),
    FilterCase(
        SINGLE,
        "NodeAffinityPolicy ignored with labelSelectors",
        incoming(hard(1, "node", node_affinity_policy="Ignore"), affinity=NodeAffinity(node_selector={"foo": ""})),
        ABXY_FOO,
        EXISTING_1_1_0_1,
        want(UNSCHED, UNSCHED, OK, UNSCHED),
    ),
    FilterCase(
        SINGLE,
        "NodeAffinityPolicy honored with nodeAffinity",
        incoming(hard(1, "node"), affinity=required("foo", "In", "")),
        ABXY_FOO,
        EXISTING_1_1_0_1,
        want(UNSCHED, UNSCHED, OK, OK),
    ),
    FilterCase(
        SINGLE,
        "NodeAffinityPolicy ignored with labelSelectors (the second case of that name, with nodeAffinity)",
        incoming(hard(1, "node", node_affinity_policy="Ignore"), affinity=required("foo", "In", "")),
        ABXY_FOO,
        EXISTING_1_1_0_1,
        want(UNSCHED, UNSCHED, OK, UNSCHED),
    ),
    FilterCase(
        SINGLE,
        "NodeTaintsPolicy honored",
        incoming(hard(1, "node", node_taints_policy="Honor")),
        ABXY_TAINTED,
        EXISTING_1_1_0_1,
        want(UNSCHED, UNSCHED, OK, OK),
    ),
    FilterCase(
        SINGLE,
        "NodeTaintsPolicy ignored",
        incoming(hard(1, "node")),
        ABXY_TAINTED,
        EXISTING_1_1_0_1,
        want(UNSCHED, UNSCHED, OK, UNSCHED),
    ),
    # ---------------------------------------------------------------------------------------------
    FilterCase(
        MULTIPLE,
        "two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
        incoming(hard(1, "zone"), hard(1, "node")),
        ABXY,
        SPREAD_2_1_0_3,
        want(UNSCHED, UNSCHED, OK, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
        incoming(hard(1, "zone"), hard(1, "node")),
        ABXY,
        foo_pods({"node-a": 2, "node-b": 1, "node-y": 4}),
        want(UNSCHED, UNSCHED, UNSCHED, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
        incoming(hard(1, "zone"), hard(1, "node", BAR), labels=("foo", "bar")),
        ABXY,
        (on("node-a", "p-a1", "foo"), on("node-y", "p-y1", "bar")),
        want(UNSCHED, UNSCHED, OK, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
        incoming(hard(1, "zone"), hard(1, "node", BAR), labels=("foo", "bar")),
        ABXY,
        (on("node-a", "p-a1", "foo"), on("node-x", "p-x1", "bar"), on("node-y", "p-y1", "bar")),
        want(UNSCHED, UNSCHED, UNSCHED, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
        incoming(hard(1, "zone"), hard(1, "node", BAR), labels=("foo", "bar")),
        ABXY,
        (
            on("node-a", "p-a1", "foo"),
            on("node-a", "p-a2", "foo", "bar"),
            on("node-y", "p-y1", "foo"),
            on("node-y", "p-y2", "foo", "bar"),
            on("node-y", "p-y3", "foo"),
        ),
        want(UNSCHED, OK, UNSCHED, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
        incoming(hard(1, "zone"), hard(1, "node", BAR), labels=("bar",)),
        ABXY,
        (on("node-a", "p-a1", "foo"), on("node-x", "p-x1", "bar"), on("node-y", "p-y1", "bar")),
        want(OK, OK, UNSCHED, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
        incoming(hard(1, "zone"), hard(1, "node")),
        (zn("node-a", "zone1"), zn("node-b", "zone1"), node("node-x", zone="zone2"), zn("node-y", "zone2")),
        (on("node-a", "p-a1", "foo"), on("node-y", "p-y3", "foo")),
        want(UNSCHED, OK, UNRESOLVABLE, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
        incoming(
            hard(1, "zone"),
            hard(1, "node", node_affinity_policy="Ignore"),
            affinity=NodeAffinity(node_selector={"foo": ""}),
        ),
        (
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            zn("node-y", "zone2"),
        ),
        (on("node-a", "p-a1", "foo"), on("node-b", "p-b1", "foo"), on("node-y", "p-y1", "foo")),
        want(UNSCHED, UNSCHED, OK, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
        incoming(hard(1, "zone", node_taints_policy="Honor"), hard(1, "node")),
        (
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1", foo=""),
            zn("node-x", "zone2", foo=""),
            node("node-y", UNSCHEDULABLE_TAINT, zone="zone2", node="node-y"),
        ),
        (on("node-a", "p-a1", "foo"), on("node-b", "p-b1", "foo"), on("node-y", "p-y1", "foo")),
        want(UNSCHED, UNSCHED, OK, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
        incoming(hard(1, "zone"), hard(1, "node"), affinity=NodeAffinity(node_selector={"foo": ""})),
        (
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            node("node-y", UNSCHEDULABLE_TAINT, zone="zone2", node="node-y", foo=""),
        ),
        (on("node-a", "p-a1", "foo"), on("node-b", "p-b1", "foo"), on("node-y", "p-y1", "foo")),
        want(UNSCHED, OK, OK, UNSCHED),
    ),
    FilterCase(
        MULTIPLE,
        "two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
        incoming(
            hard(1, "zone", node_taints_policy="Honor"),
            hard(1, "node", node_affinity_policy="Ignore"),
            affinity=NodeAffinity(node_selector={"foo": ""}),
        ),
        (
            zn("node-a", "zone1", foo=""),
            zn("node-b", "zone1"),
            zn("node-x", "zone2", foo=""),
            node("node-y", UNSCHEDULABLE_TAINT, zone="zone2", node="node-y", foo=""),
        ),
        (on("node-a", "p-a1", "foo"), on("node-b", "p-b1", "foo"), on("node-y", "p-y1", "foo")),
        want(UNSCHED, UNSCHED, OK, UNSCHED),
    ),
]


def _code(result: SpreadFailure | None) -> str:
    if result is None:
        return OK
    return UNSCHED if result.resolvable else UNRESOLVABLE


@pytest.mark.parametrize("case", FILTER_CASES, ids=lambda c: c.name)
def test_filter_upstream(case: FilterCase) -> None:
    nodes, pods_on = cluster(case.nodes, case.existing)
    got = spread_filter(case.pod, nodes, pods_on)
    assert {n.name: _code(r) for n, r in zip(nodes, got, strict=True)} == dict(case.want)


def test_filter_reasons_and_subset() -> None:
    """The reason strings are upstream's; `evaluate` picks the nodes, counting still uses all."""
    case = FILTER_CASES[5]  # node-b lacks "zone"
    nodes, pods_on = cluster(case.nodes, case.existing)
    got = spread_filter(case.pod, nodes, pods_on, [2, 1, 0])
    assert got == [
        SpreadFailure(REASON_CONSTRAINTS_NOT_MATCH, resolvable=True),
        SpreadFailure(REASON_NODE_LABEL_NOT_MATCH, resolvable=False),
        None,
    ]


def test_pod_without_hard_constraints_passes_everywhere() -> None:
    nodes, pods_on = cluster(ABXY, SPREAD_2_1_0_3)
    assert spread_filter(incoming(soft(1, "node")), nodes, pods_on) == [None] * 4
    assert spread_filter(incoming(), nodes, pods_on) == [None] * 4  # system defaults are all soft


# --------------------------------------------------------------------------------------------------
# Score


@dataclass(frozen=True)
class ScoreCase:
    name: str
    pod: PodSpec
    nodes: tuple[NodeSpec, ...]  # the filtered nodes, scored in this order
    existing: tuple[tuple[str, PodSpec], ...]
    want: tuple[int, ...]
    failed: tuple[NodeSpec, ...] = field(default=())  # nodes that did not pass the filters


def h(name: str, **labels: str) -> NodeSpec:
    """A node that, as in the score tests, carries `kubernetes.io/hostname` (ours always do)."""
    return node(name, **labels)


HOST = HOSTNAME_LABEL
ABCD = (h("node-a"), h("node-b"), h("node-c"), h("node-d"))
SPREAD_4_3_2_1 = foo_pods({"node-a": 4, "node-b": 3, "node-c": 2, "node-d": 1})
SPREAD_4_2_1_3 = foo_pods({"node-a": 4, "node-b": 2, "node-x": 1, "node-y": 3})
ZONED = (
    h("node-a", zone="zone1"),
    h("node-b", zone="zone1"),
    h("node-x", zone="zone2"),
    h("node-y", zone="zone2"),
)
MIXED_LABELS = (  # zone: 2/2/1/1 foo; node: 0/1/0/1 bar
    on("node-a", "p-a1", "foo"),
    on("node-b", "p-b1", "foo", "bar"),
    on("node-y", "p-y1", "foo"),
    on("node-y", "p-y2", "bar"),
)
POLICY_NODES = (
    node("node-a", node="node-a", foo=""),
    node("node-b", node="node-b", foo=""),
    node("node-c", node="node-c"),
)
POLICY_PODS = foo_pods({"node-a": 2, "node-b": 1, "node-c": 1})
TAINT_NODES = (
    node("node-a", node="node-a"),
    node("node-b", node="node-b"),
    node("node-c", UNSCHEDULABLE_TAINT, node="node-c"),
)

SCORE_CASES = [
    ScoreCase("one constraint on node, no existing pods", incoming(soft(1, HOST)), ABCD[:2], (), (100, 100)),
    ScoreCase(
        "one constraint on node, only one node is candidate",
        incoming(soft(1, HOST)),
        (h("node-a"),),
        foo_pods({"node-a": 2, "node-b": 1}),
        (100,),
        failed=(h("node-b"),),
    ),
    ScoreCase(
        "one constraint on node, all nodes have the same number of matching pods",
        incoming(soft(1, HOST)),
        ABCD[:2],
        foo_pods({"node-a": 1, "node-b": 1}),
        (100, 100),
    ),
    # log(6) = 1.79: raw 4/2/0/5 (2×, 1×, 0×, 3× rounded), max 5 + min 0.
    ScoreCase(
        "one constraint on node, all 4 nodes are candidates",
        incoming(soft(1, HOST)),
        ABCD,
        foo_pods({"node-a": 2, "node-b": 1, "node-d": 3}),
        (20, 60, 100, 0),
    ),
    ScoreCase(
        "one constraint on node, null selector",
        incoming(soft(1, HOST, NOTHING)),
        ABCD,
        foo_pods({"node-a": 2, "node-b": 1, "node-d": 3}),
        (100, 100, 100, 100),
    ),
    ScoreCase(
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        incoming(soft(2, HOST)),
        ABCD,
        foo_pods({"node-a": 2, "node-b": 1, "node-d": 3}),
        (33, 66, 100, 16),
    ),
    ScoreCase(
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        incoming(soft(3, HOST)),
        ABCD,
        SPREAD_4_3_2_1,
        (44, 66, 77, 100),
    ),
    # Upstream's Service selects foo=""; our default selector is the pod's labels, the same here.
    # No node has a zone: all are in zone "" (one domain), and the zone constraint adds nothing.
    ScoreCase(
        "system defaulting, nodes don't have zone, pods match service",
        incoming(),
        ABCD,
        SPREAD_4_3_2_1,
        (44, 66, 77, 100),
    ),
    ScoreCase(
        "one constraint on node, 3 out of 4 nodes are candidates",
        incoming(soft(1, HOST)),
        (h("node-a"), h("node-b"), h("node-x")),
        SPREAD_4_2_1_3,
        (33, 83, 100),
        failed=(h("node-y"),),
    ),
    ScoreCase(
        "one constraint on zone, 3 out of 4 nodes are candidates",
        incoming(soft(1, "zone")),
        ZONED[:3],
        SPREAD_4_2_1_3,
        (75, 75, 100),
        failed=ZONED[3:],
    ),
    ScoreCase(
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        incoming(soft(1, "zone"), soft(1, HOST)),
        (ZONED[0], ZONED[2]),
        foo_pods({"node-a": 2, "node-b": 1, "node-x": 2, "node-y": 4}),
        (100, 63),
        failed=(ZONED[1], ZONED[3]),
    ),
    ScoreCase(
        "two Constraints on zone and node, with different labelSelectors",
        incoming(soft(1, "zone"), soft(1, HOST, BAR), labels=("foo", "bar")),
        ZONED,
        MIXED_LABELS,
        (60, 20, 100, 60),
    ),
    ScoreCase(
        "two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
        incoming(soft(1, "zone"), soft(1, HOST, BAR), labels=("foo", "bar")),
        ZONED,
        (on("node-b", "p-b1", "bar"), on("node-x", "p-x1", "foo"), on("node-y", "p-y1", "foo", "bar")),
        (100, 60, 40, 0),
    ),
    ScoreCase(
        "two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
        incoming(soft(1, "zone"), soft(1, HOST, BAR), labels=("foo", "bar")),
        ZONED[:3],
        MIXED_LABELS,
        (50, 25, 100),
        failed=ZONED[3:],
    ),
    ScoreCase(
        "existing pods in a different namespace do not count",
        incoming(soft(1, HOST)),
        ABCD[:2],
        (
            on("node-a", "p-a1", "foo", namespace="ns1"),
            on("node-a", "p-a2", "foo"),
            on("node-b", "p-b1", "foo"),
            on("node-b", "p-b2", "foo"),
        ),
        (100, 33),
    ),
    ScoreCase(
        "minDomains has no effect when ScheduleAnyway",
        incoming(soft(2, "node", min_domains=10)),
        ABC_NODE,
        foo_pods({"node-a": 2, "node-b": 2, "node-c": 1}),
        (75, 75, 100),
    ),
    ScoreCase(
        "NodeAffinityPolicy honoed with labelSelectors",
        incoming(soft(1, "node"), affinity=NodeAffinity(node_selector={"foo": ""})),
        POLICY_NODES,
        POLICY_PODS,
        (0, 33, 100),
    ),
    ScoreCase(
        "NodeAffinityPolicy ignored with labelSelectors",
        incoming(soft(1, "node", node_affinity_policy="Ignore"), affinity=NodeAffinity(node_selector={"foo": ""})),
        POLICY_NODES,
        POLICY_PODS,
        (66, 100, 100),
    ),
    ScoreCase(
        "NodeAffinityPolicy honoed with nodeAffinity",
        incoming(soft(1, "node"), affinity=required("foo", "In", "")),
        POLICY_NODES,
        POLICY_PODS,
        (0, 33, 100),
    ),
    ScoreCase(
        "NodeAffinityPolicy ignored with nodeAffinity",
        incoming(soft(1, "node", node_affinity_policy="Ignore"), affinity=required("foo", "In", "")),
        POLICY_NODES,
        POLICY_PODS,
        (66, 100, 100),
    ),
    ScoreCase(
        "NodeTaintsPolicy honored",
        incoming(soft(1, "node", node_taints_policy="Honor")),
        TAINT_NODES,
        POLICY_PODS,
        (0, 33, 100),
    ),
    ScoreCase("NodeTaintsPolicy ignored", incoming(soft(1, "node")), TAINT_NODES, POLICY_PODS, (66, 100, 100)),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=lambda c: c.name)
def test_score_upstream(case: ScoreCase) -> None:
    nodes, pods_on = cluster(case.nodes + case.failed, case.existing)
    got = spread_score(case.pod, nodes, pods_on, list(range(len(case.nodes))))
    assert tuple(got) == case.want


# --------------------------------------------------------------------------------------------------
# Our own checks


def test_default_constraints_use_the_pods_labels() -> None:
    pod = PodSpec("p", labels={"app": "web"})
    soft_defaults = spread_constraints(pod, SCHEDULE_ANYWAY)
    assert [(c.topology_key, c.max_skew) for c in soft_defaults] == [(HOSTNAME_LABEL, 3), (ZONE_LABEL, 5)]
    assert all(c.label_selector == LabelSelector(match_labels={"app": "web"}) for c in soft_defaults)
    assert spread_constraints(pod, DO_NOT_SCHEDULE) == ()
    assert spread_constraints(pod, SCHEDULE_ANYWAY, defaulting=False) == ()
    assert spread_constraints(PodSpec("bare"), SCHEDULE_ANYWAY) == ()  # no labels, no defaults
    own = PodSpec("q", labels={"app": "web"}, spread=(hard(1, "zone"),))
    assert spread_constraints(own, SCHEDULE_ANYWAY) == ()  # own constraints replace the defaults
    with pytest.raises(ValueError, match="kind"):
        spread_constraints(pod, "Sometimes")


def test_score_ignores_nodes_missing_a_key_and_skips_without_constraints() -> None:
    nodes, pods_on = cluster((h("node-a", zone="z1"), h("node-b")), foo_pods({"node-a": 1}))
    assert spread_score(incoming(soft(1, "zone")), nodes, pods_on) == [100, 0]  # node-b: ignored, 0
    assert spread_score(PodSpec("bare"), nodes, pods_on) == [0, 0]  # PreScore skips


def test_topology_normalizing_weight() -> None:
    assert topology_normalizing_weight(1) == pytest.approx(1.0986, abs=1e-4)  # upstream's lower bound
    assert topology_normalizing_weight(5000) == pytest.approx(8.5175, abs=1e-4)  # its upper bound


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.booleans()), min_size=1, max_size=20))
def test_normalize_range(rows: list[tuple[int, bool]]) -> None:
    scores = [s for s, _ in rows]
    ignored = [skip for _, skip in rows]
    out = spread_normalize(scores, ignored)
    assert all(0 <= v <= 100 for v in out)
    assert all(v == 0 for v, skip in zip(out, ignored, strict=True) if skip)
    live = [(s, v) for s, v, skip in zip(scores, out, ignored, strict=True) if not skip]
    if live:
        assert max(v for _, v in live) == 100
        best = min(s for s, _ in live)
        assert all(v == 100 for s, v in live if s == best)  # the fewest matching pods score best


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=6), st.integers(1, 3))
def test_filter_admits_a_least_loaded_domain(per_node: list[int], max_skew: int) -> None:
    """With every node eligible, a node of a least-loaded domain always passes (skew = 1 ≤ maxSkew)."""
    names = [f"n{i}" for i in range(len(per_node))]
    nodes_ = tuple(node(n, node=n) for n in names)
    existing = foo_pods(dict(zip(names, per_node, strict=True)))
    nodes, pods_on = cluster(nodes_, existing)
    got = spread_filter(incoming(hard(max_skew, "node")), nodes, pods_on)
    low = min(per_node)
    assert all(r is None for r, k in zip(got, per_node, strict=True) if k == low)
    assert all((r is None) == (k + 1 - low <= max_skew) for r, k in zip(got, per_node, strict=True))


# --------------------------------------------------------------------------------------------------
# The plugin over a snapshot


def snapshot(nodes: tuple[NodeSpec, ...], existing: tuple[tuple[str, PodSpec], ...]) -> ClusterSnapshot:
    snap = ClusterSnapshot(nodes)
    for node_name, pod in existing:
        snap.assume(pod, snap.index[node_name])
    return snap


def test_the_plugin_filter_gives_each_failure_its_reason_and_status() -> None:
    """Zone z1 holds 2 foo pods (on a), z2 none; node d has no zone label. maxSkew 1 on "zone".

    The global minimum is 0 (z2), so a and b (z1) have skew 2 + 1 - 0 = 3 > 1: Unschedulable,
    resolvable by preemption. c (z2) has skew 1: passes. d lacks the key: UnschedulableAndUnresolvable.
    """
    nodes = (zn("a", "z1"), zn("b", "z1"), zn("c", "z2"), node("d", node="d"))
    snap = snapshot(nodes, foo_pods({"a": 2}))
    result = PodTopologySpreadPlugin().filter(incoming(hard(1, "zone")), snap, np.arange(4))
    reasons = [result.reasons[code] if code else None for code in result.codes.tolist()]
    assert reasons == [REASON_CONSTRAINTS_NOT_MATCH, REASON_CONSTRAINTS_NOT_MATCH, None, REASON_NODE_LABEL_NOT_MATCH]
    unresolvable = [code in result.unresolvable for code in result.codes.tolist()]
    assert unresolvable == [False, False, False, True]


def test_the_plugin_scores_fewest_matching_pods_best_and_skips_a_pod_without_constraints() -> None:
    """Soft maxSkew 1 on "zone": z1 holds 3 foo pods, z2 1; two zones, so the weight is log(2 + 2).

    Raw scores (count x weight + maxSkew - 1, rounded): z1 round(3 x 1.386) = 4, z2 round(1.386) = 1.
    Normalised 100 x (max + min - s) / max: z1 100 x 1 / 4 = 25, z2 100 x 4 / 4 = 100. A pod with no
    constraints and no owner scores 0 everywhere, normalised to 0 (a skipped PreScore).
    """
    nodes = (zn("a", "z1"), zn("b", "z2"))
    snap = snapshot(nodes, foo_pods({"a": 3, "b": 1}))
    plugin = PodTopologySpreadPlugin()
    raw = plugin.score(incoming(soft(1, "zone")), snap, np.arange(2))
    assert raw.tolist() == [4, 1]
    normalized = plugin.normalize(raw)
    assert normalized is not None and normalized.tolist() == [25, 100]
    bare = plugin.score(PodSpec("bare"), snap, np.arange(2))
    assert bare.tolist() == [0, 0]
    normalized = plugin.normalize(bare)
    assert normalized is not None and normalized.tolist() == [0, 0]


@st.composite
def zoned_clusters(draw: st.DrawFn) -> tuple[tuple[NodeSpec, ...], tuple[tuple[str, PodSpec], ...]]:
    """Up to five nodes, a zone label on most, and up to three pods each, some labelled foo."""
    nodes, existing = [], []
    for i in range(draw(st.integers(1, 5))):
        zone = draw(st.sampled_from(("z1", "z2", "z3", None)))
        nodes.append(node(f"n{i}") if zone is None else zn(f"n{i}", zone))
        for k in range(draw(st.integers(0, 3))):
            existing.append(on(f"n{i}", f"p{i}-{k}", *(("foo",) if draw(st.booleans()) else ())))
    return tuple(nodes), tuple(existing)


spread_pods = st.sampled_from(
    (
        incoming(hard(1, "zone")),
        incoming(hard(2, "zone"), hard(1, "node")),
        incoming(soft(1, "zone")),
        incoming(soft(1, "zone"), hard(1, "zone")),
        PodSpec("owned", labels={"foo": ""}, controlled=True),  # the system defaults apply
        PodSpec("bare"),
    )
)


@settings(max_examples=200, deadline=None)
@given(zoned_clusters(), spread_pods, st.data())
def test_the_plugin_agrees_with_the_pure_functions_over_the_same_cluster(
    cluster_: tuple[tuple[NodeSpec, ...], tuple[tuple[str, PodSpec], ...]], pod: PodSpec, data: st.DataObject
) -> None:
    """Over any subset of the nodes, the plugin's verdicts and final scores are those of `spread_filter`
    and `spread_score` given the same nodes and pods as plain lists (the snapshot orders nodes by name)."""
    nodes_, existing = cluster_
    snap = snapshot(nodes_, existing)
    subset = data.draw(st.lists(st.sampled_from(range(len(nodes_))), min_size=1, unique=True))
    nodes, pods_on = cluster(tuple(sorted(nodes_, key=lambda n: n.name)), existing)
    position = {n.name: k for k, n in enumerate(nodes)}
    chosen = [position[nodes_[i].name] for i in subset]
    plugin = PodTopologySpreadPlugin()
    result = plugin.filter(pod, snap, np.array(subset, dtype=np.int64))
    want = spread_filter(pod, nodes, pods_on, chosen, defaulting=pod.controlled)
    got = [None if code == 0 else (result.reasons[code], code not in result.unresolvable) for code in result.codes]
    assert got == [None if f is None else (f.reason, f.resolvable) for f in want]
    normalized = plugin.normalize(plugin.score(pod, snap, np.array(subset, dtype=np.int64)))
    assert normalized is not None
    assert normalized.tolist() == spread_score(pod, nodes, pods_on, chosen, defaulting=pod.controlled)
