"""Scale-up worked by hand and checked by properties.

Hand cases derive their answers in comments from the rules in cluster-autoscaler's FAQ and code
(the orchestrator's group and pod filtering, the binpacking estimate, the limits). The properties
check the plans against independent arithmetic: a scale-up stays within the limits and every pod
it claims fits its template.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from skenario.scheduling.affinity import NodeAffinity
from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.clusterautoscaler.scaleup import (
    MAX_GROUP_SIZE_REACHED,
    expansion_options,
    not_triggered_message,
    plan_scale_up,
    scale_up_status,
)
from skenario.scheduling.clusterautoscaler.simulator import (
    PredicateChecker,
    SnapshotSimulation,
    fits_empty,
    node_filters,
)
from skenario.scheduling.framework import default_profile
from skenario.scheduling.objects import LabelSelector, NodeSpec, PodSpec, TopologySpreadConstraint
from skenario.scheduling.plugins.podtopologyspread import REASON_NODE_LABEL_NOT_MATCH
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import Taint, TaintEffect, Toleration
from tests.scheduling.clusterautoscaler.builders import DEFAULTS, GiB, group, pod

# --- the estimate, through the plan -------------------------------------------------------------


def test_three_one_cpu_pods_on_two_cpu_templates_need_two_nodes() -> None:
    # First fit: p0 and p1 fill node 1 (2000m), p2 opens node 2.
    pending = [pod(f"p{i}", 1000, GiB) for i in range(3)]
    plan = plan_scale_up(pending, [group("g", 2000)], {"g": 0}, DEFAULTS)
    assert plan is not None
    assert (plan.group, plan.nodes) == ("g", 2)
    assert {p.name for p in plan.pods} == {"p0", "p1", "p2"}


def test_the_kubelet_pod_limit_bounds_a_new_node() -> None:
    # Two pods per node, five tiny pods: ceil(5 / 2) = 3 nodes.
    pending = [pod(f"p{i}", 10) for i in range(5)]
    plan = plan_scale_up(pending, [group("g", 4000, pods=2)], {"g": 0}, DEFAULTS)
    assert plan is not None and plan.nodes == 3


def test_max_size_caps_the_scale_up_and_the_pods_it_helps() -> None:
    # Max 3 with 2 already: room for one node, which takes two of the three 1000m pods.
    pending = [pod(f"p{i}", 1000) for i in range(3)]
    plan = plan_scale_up(pending, [group("g", 2000, max_size=3)], {"g": 2}, DEFAULTS)
    assert plan is not None
    assert plan.nodes == 1 and len(plan.pods) == 2


def test_a_group_at_max_size_is_skipped() -> None:
    assert plan_scale_up([pod("p", 100)], [group("g", 2000, max_size=3)], {"g": 3}, DEFAULTS) is None


def test_max_nodes_total_caps_the_scale_up() -> None:
    # 5 nodes at most; 2 in the group and 2 others: one more node, two pods.
    settings = CaSettings(max_nodes_total=5)
    pending = [pod(f"p{i}", 1000) for i in range(3)]
    plan = plan_scale_up(pending, [group("g", 2000)], {"g": 2}, settings, cluster_size=4)
    assert plan is not None and plan.nodes == 1 and len(plan.pods) == 2
    assert plan_scale_up(pending, [group("g", 2000)], {"g": 2}, settings, cluster_size=5) is None


def test_a_pod_too_big_for_every_template_gets_no_plan() -> None:
    groups = [group("small", 2000), group("large", 4000)]
    assert plan_scale_up([pod("huge", 6000)], groups, {"small": 0, "large": 0}, DEFAULTS) is None


def test_a_pod_no_template_admits_gets_no_plan() -> None:
    # A nodeSelector no template's labels satisfy; a taint the pod does not tolerate.
    picky = pod("picky", 100, affinity=NodeAffinity(node_selector={"disk": "ssd"}))
    tainted = group("gpu", 4000, taints=(Taint("gpu", TaintEffect.NO_SCHEDULE),))
    assert plan_scale_up([picky], [group("g", 4000)], {"g": 0}, DEFAULTS) is None
    assert plan_scale_up([pod("plain", 100)], [tainted], {"gpu": 0}, DEFAULTS) is None
    tolerant = pod("tolerant", 100, tolerations=(Toleration("gpu", "Exists"),))
    assert plan_scale_up([tolerant], [tainted], {"gpu": 0}, DEFAULTS) is not None


def test_pods_that_fit_no_template_of_a_group_do_not_count_for_it() -> None:
    # One 3000m pod and two 1000m pods; the 2000m group can help only the small two.
    pending = [pod("big", 3000), pod("s1", 1000), pod("s2", 1000)]
    (option,) = expansion_options(pending, [group("g", 2000)], {"g": 0}, DEFAULTS)
    assert option.nodes == 1
    assert {p.name for p in option.pods} == {"s1", "s2"}


def test_no_pending_pods_no_plan() -> None:
    assert plan_scale_up([], [group("g", 2000)], {"g": 0}, DEFAULTS) is None


# --- properties ---------------------------------------------------------------------------------

POOLS = ("a", "b")


@st.composite
def pending_pods(draw: st.DrawFn) -> list[PodSpec]:
    count = draw(st.integers(0, 8))
    pods = []
    for i in range(count):
        cpu = draw(st.one_of(st.none(), st.integers(0, 16).map(lambda k: k * 250)))
        memory = draw(st.one_of(st.none(), st.integers(0, 16).map(lambda k: k * GiB // 2)))
        pool = draw(st.sampled_from((None, *POOLS)))
        affinity = NodeAffinity(node_selector={"pool": pool} if pool else {})
        pods.append(PodSpec(f"p{i}", cpu=cpu, memory=memory, affinity=affinity))
    return pods


@st.composite
def node_groups(draw: st.DrawFn) -> tuple[list[NodeGroup], dict[str, int]]:
    groups = []
    sizes = {}
    for i in range(draw(st.integers(1, 3))):
        template = NodeSpec(
            f"t{i}",
            cpu=draw(st.integers(1, 8)) * 1000,
            memory=draw(st.integers(1, 8)) * GiB,
            pods=draw(st.integers(1, 6)),
            labels={"pool": draw(st.sampled_from(POOLS))},
        )
        max_size = draw(st.integers(1, 6))
        groups.append(NodeGroup(f"g{i}", template, 0, max_size))
        sizes[f"g{i}"] = draw(st.integers(0, max_size))
    return groups, sizes


def _fits_alone(p: PodSpec, t: NodeSpec) -> bool:
    """Independent of the module: requests within the empty template, labels matching the selector."""
    if p.cpu_request > t.cpu or p.memory_request > t.memory or t.pods < 1:
        return False
    return all(t.labels.get(k) == v for k, v in p.affinity.node_selector.items())


@given(
    pending_pods(),
    node_groups(),
    st.sampled_from(("least-waste", "most-pods", "least-nodes", "random")),
    st.integers(0, 12),
    st.integers(0, 2**32 - 1),
)
def test_a_scale_up_plan_respects_the_limits_and_helps_only_pods_that_fit(
    pending: list[PodSpec],
    groups_and_sizes: tuple[list[NodeGroup], dict[str, int]],
    expander: str,
    max_total: int,
    seed: int,
) -> None:
    groups, sizes = groups_and_sizes
    settings = CaSettings(expander=expander, max_nodes_total=max_total)
    plan = plan_scale_up(pending, groups, sizes, settings, rng=np.random.default_rng(seed))
    total = sum(sizes.values())
    if plan is None:
        # Nothing could help: every group is full, the cluster is at its cap, or no pod fits any room.
        for g in groups:
            room = g.max_size - sizes[g.name]
            if max_total:
                room = min(room, max_total - total)
            assert room <= 0 or not any(_fits_alone(p, g.template) for p in pending)
        return
    g = next(g for g in groups if g.name == plan.group)
    t = g.template
    assert 1 <= plan.nodes <= len(plan.pods)
    assert sizes[g.name] + plan.nodes <= g.max_size
    if max_total:
        assert total + plan.nodes <= max_total
    assert all(any(p is q for q in pending) for p in plan.pods)
    assert len({id(p) for p in plan.pods}) == len(plan.pods)
    assert all(_fits_alone(p, t) for p in plan.pods)
    assert sum(p.cpu_request for p in plan.pods) <= plan.nodes * t.cpu
    assert sum(p.memory_request for p in plan.pods) <= plan.nodes * t.memory
    assert len(plan.pods) <= plan.nodes * t.pods


@given(pending_pods(), node_groups())
def test_every_option_helps_pods_that_fit_its_template(
    pending: list[PodSpec], groups_and_sizes: tuple[list[NodeGroup], dict[str, int]]
) -> None:
    groups, sizes = groups_and_sizes
    for option in expansion_options(pending, groups, sizes, DEFAULTS):
        assert all(fits_empty(p, option.group.template, node_filters) for p in option.pods)
        assert all(_fits_alone(p, option.group.template) for p in option.pods)


# --- the template check with the scheduler's own filters (SnapshotSimulation) --------------------

ZONE = "topology.kubernetes.io/zone"
SPREAD = (TopologySpreadConstraint(max_skew=1, topology_key=ZONE, label_selector=LabelSelector({"app": "web"})),)


def _web(name: str) -> PodSpec:
    return pod(name, 500, GiB, labels={"app": "web"}, spread=SPREAD)


def _zoned_world(per_zone: int) -> ClusterSnapshot:
    """Zones a and b, one 4-core node each, holding `per_zone` web pods each."""
    world = ClusterSnapshot([NodeSpec(z, cpu=4000, memory=16 * GiB, labels={ZONE: z}) for z in ("a", "b")])
    for row, zone in enumerate(("a", "b")):
        for i in range(per_zone):
            world.assume(_web(f"{zone}{i}"), row)
    return world


def _checker() -> PredicateChecker:
    return PredicateChecker(default_profile(spread=True).filters)


def test_a_template_without_the_topology_key_helps_no_spread_pod() -> None:
    # PodTopologySpread's Filter fails a node without the constraint's key (UnschedulableAndUnresolvable),
    # so upstream's SchedulablePodGroups finds no group for the pods and nothing scales up.
    world = _zoned_world(2)
    sim = SnapshotSimulation(world, _checker())
    status = scale_up_status([_web("p0"), _web("p1")], [group("unlabelled", 4000)], {"unlabelled": 0}, DEFAULTS, sim)
    assert status.plan is None and not status.options
    assert status.rejected == {p: {"unlabelled": REASON_NODE_LABEL_NOT_MATCH} for p in ("p0", "p1")}
    assert not_triggered_message(status.rejected["p0"]) == (
        "pod didn't trigger scale-up: 1 node(s) didn't match pod topology spread constraints (missing required label)"
    )
    # The resource-only simulation, which knows nothing of spreading, would have added a node.
    assert plan_scale_up([_web("p0")], [group("unlabelled", 4000)], {"unlabelled": 0}, DEFAULTS) is not None


def test_a_one_zone_group_takes_only_the_pods_the_skew_allows() -> None:
    # Zones a and b hold 2 web pods each; a group in zone a. Pod 1 there makes a: 3, b: 2, skew 1 (allowed);
    # pod 2 would make 4 - 2 = 2 > maxSkew 1. The estimate opens one node for one pod, though the
    # 4-core template has room for all three by resources.
    world = _zoned_world(2)
    zone_a = group("zone-a", 4000, labels={ZONE: "a"})
    sim = SnapshotSimulation(world, _checker())
    status = scale_up_status([_web(f"p{i}") for i in range(3)], [zone_a], {"zone-a": 0}, DEFAULTS, sim)
    assert status.plan is not None
    assert (status.plan.nodes, len(status.plan.pods)) == (1, 1)
    assert status.rejected == {}  # each pod passed the template check; the estimate left two out


def test_groups_at_max_size_and_failing_templates_are_counted_in_the_message() -> None:
    # Two groups refuse for two reasons: upstream counts each reason's groups.
    world = _zoned_world(0)
    full = group("full", 4000, labels={ZONE: "a"}, max_size=1)
    bare = group("bare", 4000)
    sim = SnapshotSimulation(world, _checker())
    status = scale_up_status([_web("p")], [full, bare], {"full": 1, "bare": 0}, DEFAULTS, sim)
    assert status.plan is None
    assert status.rejected["p"] == {"full": MAX_GROUP_SIZE_REACHED, "bare": REASON_NODE_LABEL_NOT_MATCH}
    assert not_triggered_message(status.rejected["p"]) == (
        "pod didn't trigger scale-up: 1 max node group size reached, "
        "1 node(s) didn't match pod topology spread constraints (missing required label)"
    )


def test_the_simulation_leaves_the_cluster_snapshot_as_it_was() -> None:
    world = _zoned_world(1)
    before = (list(world.names), world.requested.copy(), [dict(p) for p in world.pods_on])
    sim = SnapshotSimulation(world, _checker())
    scale_up_status([_web(f"p{i}") for i in range(4)], [group("zone-b", 4000, labels={ZONE: "b"})], {}, DEFAULTS, sim)
    assert world.names == before[0] and (world.requested == before[1]).all() and world.pods_on == before[2]
