"""The cluster autoscaler's calculator, worked by hand and checked by properties.

Hand cases derive their answers in comments from the rules in cluster-autoscaler's FAQ and code
(binpacking estimator, expanders, utilisation, removal simulation, RemovableAt, budgets, cooldown).
The properties check the plans against independent arithmetic: a scale-up stays within the
limits and every pod it claims fits its template; a scale-down only picks underutilised nodes
whose pods can all be placed on the nodes that stay (found by exhaustive search).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.core.time import MINUTE, SECOND
from skenario.scheduling.affinity import NodeAffinity
from skenario.scheduling.clusterautoscaler import (
    CaSettings,
    NodeGroup,
    ScaleUpOption,
    best_option,
    estimate,
    expansion_options,
    fits_empty,
    node_filters,
    place_pods,
    plan_scale_up,
    ready_to_remove,
    scale_down_in_cooldown,
    underutilised,
    unneeded_nodes,
    update_unneeded_since,
    utilisation,
)
from skenario.scheduling.objects import HOSTNAME_LABEL, NodeSpec, PodSpec
from skenario.scheduling.taints import Taint, TaintEffect, Toleration

GiB = 1024**3
DEFAULTS = CaSettings()


def pod(name: str, cpu: int | None = None, memory: int | None = None, **kwargs: Any) -> PodSpec:
    return PodSpec(name, cpu=cpu, memory=memory, **kwargs)


def node(name: str, cpu: int, memory: int = 8 * GiB, **kwargs: Any) -> NodeSpec:
    return NodeSpec(name, cpu=cpu, memory=memory, **kwargs)


def group(name: str, cpu: int, memory: int = 8 * GiB, *, min_size: int = 0, max_size: int = 10, **kw: Any) -> NodeGroup:
    return NodeGroup(name, node(f"{name}-template", cpu, memory, **kw), min_size, max_size)


# --- settings and groups ------------------------------------------------------------------------


def test_defaults_are_upstreams() -> None:
    # config/const.go and config/flags/flags.go of cluster-autoscaler.
    assert DEFAULTS.scan_interval == 10 * SECOND
    assert DEFAULTS.scale_down_utilization_threshold == 0.5
    assert DEFAULTS.scale_down_gpu_utilization_threshold == 0.5
    assert DEFAULTS.scale_down_unneeded_time == 10 * MINUTE
    assert DEFAULTS.scale_down_delay_after_add == 10 * MINUTE
    assert DEFAULTS.scale_down_delay_after_delete == 0
    assert DEFAULTS.scale_down_delay_after_failure == 3 * MINUTE
    assert DEFAULTS.max_node_provision_time == 15 * MINUTE
    assert DEFAULTS.expanders == ("least-waste",)
    assert DEFAULTS.max_nodes_total == 0
    assert DEFAULTS.max_nodes_per_scale_up == 1000
    assert DEFAULTS.scale_down_enabled is True
    assert DEFAULTS.scale_down_parallelism == 10
    assert DEFAULTS.max_drain_parallelism == 1


def test_the_deprecated_bulk_delete_flag_replaces_the_parallelism_when_set() -> None:
    assert CaSettings(max_empty_bulk_delete=3).scale_down_parallelism == 3


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"expander": "priority"}, "expander"),  # not implemented
        ({"expander": "least-waste,least-waste"}, "expander"),
        ({"expander": ""}, "expander"),
        ({"scale_down_utilization_threshold": 1.5}, "scale_down_utilization_threshold"),
        ({"scan_interval": 0}, "scan_interval"),
        ({"scale_down_delay_after_add": -1}, "scale_down_delay_after_add"),
        ({"max_nodes_per_scale_up": 0}, "max_nodes_per_scale_up"),
    ],
)
def test_bad_settings_are_refused_by_name(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        CaSettings(**kwargs)


def test_an_expander_chain_parses() -> None:
    assert CaSettings(expander="most-pods, least-waste").expanders == ("most-pods", "least-waste")


@pytest.mark.parametrize(
    ("min_size", "max_size", "field"),
    [(-1, 3, "min_size"), (0, 0, "max_size"), (4, 3, "min_size")],
)
def test_bad_group_sizes_are_refused_by_name(min_size: int, max_size: int, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        NodeGroup("g", node("t", 1000), min_size, max_size)


def test_a_new_node_is_the_template_under_its_own_name() -> None:
    g = NodeGroup("pool", node("t", 2000, labels={"tier": "web"}), 0, 5)
    n = g.new_node(3)
    assert n.name == "pool-3"
    assert n.labels == {"tier": "web", HOSTNAME_LABEL: "pool-3"}
    assert (n.cpu, n.memory, n.pods) == (2000, 8 * GiB, 110)


# --- scale-up: the estimate ---------------------------------------------------------------------


def test_three_one_cpu_pods_on_two_cpu_templates_need_two_nodes() -> None:
    # First fit: p0 and p1 fill node 1 (2000m), p2 opens node 2.
    pending = [pod(f"p{i}", 1000, GiB) for i in range(3)]
    plan = plan_scale_up(pending, [group("g", 2000)], {"g": 0}, DEFAULTS)
    assert plan is not None
    assert (plan.group, plan.nodes) == ("g", 2)
    assert {p.name for p in plan.pods} == {"p0", "p1", "p2"}


def test_first_fit_decreasing_packs_the_biggest_pods_first() -> None:
    # 4000m nodes; pods 2000, 1000, 3000, 2000 (memory unset). In the given order first fit needs
    # three nodes (2000+1000 | 3000 | 2000). Sorted by size, 3000 | 2000 | 2000 (onto node 2) |
    # 1000 (onto node 1) fills two.
    pods = [pod("a", 2000), pod("b", 1000), pod("c", 3000), pod("d", 2000)]
    nodes, placed = estimate(pods, node("t", 4000), limit=10)
    assert nodes == 2
    assert [p.name for p in placed] == ["c", "a", "d", "b"]


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


# --- scale-up: the expanders --------------------------------------------------------------------


def test_least_waste_picks_the_group_that_wastes_less() -> None:
    # Three pods of 1000m and 1 GiB.
    # small (2000m, 4 GiB) needs 2 nodes: CPU (4000 - 3000) / 4000 = 0.25, memory (8 - 3) / 8 =
    #   0.625; score 0.875.
    # large (8000m, 16 GiB) needs 1 node: CPU (8000 - 3000) / 8000 = 0.625, memory (16 - 3) / 16 =
    #   0.8125; score 1.4375.
    # small wins, although "large" comes first by name.
    pending = [pod(f"p{i}", 1000, GiB) for i in range(3)]
    groups = [group("large", 8000, 16 * GiB), group("small", 2000, 4 * GiB)]
    plan = plan_scale_up(pending, groups, {"large": 0, "small": 0}, DEFAULTS)
    assert plan is not None
    assert (plan.group, plan.nodes) == ("small", 2)


def test_most_pods_picks_the_group_that_helps_more_pods() -> None:
    # Two pods need pool=b; one goes anywhere. Pool a helps 1 pod, pool b all 3.
    to_b = NodeAffinity(node_selector={"pool": "b"})
    pending = [pod("b1", 500, affinity=to_b), pod("b2", 500, affinity=to_b), pod("any", 500)]
    groups = [group("a", 4000, labels={"pool": "a"}), group("b", 4000, labels={"pool": "b"})]
    plan = plan_scale_up(pending, groups, {"a": 0, "b": 0}, CaSettings(expander="most-pods"))
    assert plan is not None
    assert plan.group == "b" and len(plan.pods) == 3


def test_ties_left_at_the_end_go_by_name_without_an_rng() -> None:
    # Identical groups: the same waste, pods and nodes, whatever the chain.
    pending = [pod("p", 1000)]
    groups = [group("y", 2000), group("x", 2000)]
    settings = CaSettings(expander="least-waste,most-pods,least-nodes")
    plan = plan_scale_up(pending, groups, {"x": 0, "y": 0}, settings)
    assert plan is not None and plan.group == "x"


def test_the_random_expander_draws_from_the_rng() -> None:
    options = [ScaleUpOption(group(name, 2000), 1, (pod("p", 100),)) for name in ("a", "b", "c")]
    settings = CaSettings(expander="random")
    with pytest.raises(ValueError, match="rng"):
        best_option(options, settings)
    first = best_option(options, settings, np.random.default_rng(7))
    again = best_option(options, settings, np.random.default_rng(7))
    assert first is not None and again is not None and first.group.name == again.group.name
    picked = set()
    for seed in range(30):
        chosen = best_option(options, settings, np.random.default_rng(seed))
        assert chosen is not None
        picked.add(chosen.group.name)
    assert picked == {"a", "b", "c"}


def test_no_pending_pods_no_plan() -> None:
    assert plan_scale_up([], [group("g", 2000)], {"g": 0}, DEFAULTS) is None


def test_place_pods_is_first_fit_over_free_room() -> None:
    # n1 has 500m free, n2 2000m: 400m goes to n1, then 300m no longer fits n1 (100m left).
    nodes = [node("n1", 1000), node("n2", 2000)]
    where = place_pods([pod("a", 400), pod("b", 300), pod("c", 5000)], nodes, {"n1": [pod("x", 500)]})
    assert where == ["n1", "n2", None]


# --- scale-down: utilisation and the removal simulation -----------------------------------------


def test_utilisation_is_the_larger_of_the_cpu_and_memory_shares() -> None:
    # 4000m, 8 GiB; 2000m and 2 GiB requested: CPU 0.5, memory 0.25 -> 0.5, which is not below 0.5.
    n = node("n", 4000, 8 * GiB)
    pods = [pod("a", 2000, GiB), pod("b", None, GiB)]
    assert utilisation(n, pods) == 0.5
    assert not underutilised(n, pods, DEFAULTS)
    # 1999m: CPU 0.49975, memory 0.125 -> below the threshold.
    assert underutilised(n, [pod("c", 1999, GiB)], DEFAULTS)


def test_a_gpu_node_is_judged_by_its_gpus_alone() -> None:
    # 4 GPUs, one requested: 0.25, although CPU is at 30000 / 32000.
    n = node("gpu", 32000, 64 * GiB, extended={"nvidia.com/gpu": 4})
    busy = [pod("train", 30000, 60 * GiB, extended={"nvidia.com/gpu": 1})]
    assert utilisation(n, busy) == 0.25
    assert underutilised(n, busy, DEFAULTS)
    # GPUs not allocatable yet count as unused.
    assert utilisation(node("booting", 32000, extended={"nvidia.com/gpu": 0}), busy) == 0.0


def test_an_unmovable_pod_blocks_its_node() -> None:
    # a: 200m of 1000m (0.2); b: 600m of 1000m (0.6, above the threshold) with 400m free for a's pod.
    nodes = [node("a", 1000), node("b", 1000)]
    free = {"a": [pod("web", 200)], "b": [pod("db", 600)]}
    stuck = {"a": [pod("web", 200, movable=False)], "b": [pod("db", 600)]}
    assert unneeded_nodes(nodes, free, DEFAULTS) == ["a"]
    assert unneeded_nodes(nodes, stuck, DEFAULTS) == []


def test_pods_that_fit_nowhere_else_block_their_node() -> None:
    # a's 400m pod needs 400m; b has 1000 - 700 = 300m free (and is at 0.7, so stays).
    nodes = [node("a", 1000), node("b", 1000)]
    assert unneeded_nodes(nodes, {"a": [pod("p", 400)], "b": [pod("q", 700)]}, DEFAULTS) == []
    # With b at 600m, 400m is free and a can go.
    assert unneeded_nodes(nodes, {"a": [pod("p", 400)], "b": [pod("q", 600)]}, DEFAULTS) == ["a"]


def test_a_destination_must_pass_the_static_filters() -> None:
    nodes = [node("a", 1000), node("b", 1000, taints=(Taint("dedicated", TaintEffect.NO_SCHEDULE),))]
    on = {"a": [pod("p", 400)], "b": [pod("q", 600)]}
    assert unneeded_nodes(nodes, on, DEFAULTS) == []
    tolerant = {"a": [pod("p", 400, tolerations=(Toleration("dedicated", "Exists"),))], "b": [pod("q", 600)]}
    assert unneeded_nodes(nodes, tolerant, DEFAULTS) == ["a"]


def test_moved_pods_stay_moved_and_a_removed_node_takes_none() -> None:
    # Three 1000m nodes with a 400m pod each (0.4 each, all candidates, tried a, b, c).
    # a: its pod goes to b (first fit), b now holds 800m.
    # b: must move 400m + 400m; c has 600m free, takes one, not both -> b stays.
    # c: a is gone, b has 200m free -> c stays.
    # Indeed three 400m pods need two 1000m nodes, so only one node can go.
    nodes = [node("a", 1000), node("b", 1000), node("c", 1000)]
    on = {name: [pod(f"{name}-pod", 400)] for name in "abc"}
    assert unneeded_nodes(nodes, on, DEFAULTS) == ["a"]


def test_empty_nodes_are_tried_first() -> None:
    # b is empty, so it goes first; a's 300m pod then cannot go to b, but c has 400m free.
    nodes = [node("a", 1000), node("b", 1000), node("c", 1000)]
    on = {"a": [pod("p", 300)], "c": [pod("q", 600)]}
    assert unneeded_nodes(nodes, on, DEFAULTS) == ["b", "a"]


def test_previously_unneeded_nodes_are_tried_before_the_rest() -> None:
    # a1 and a2 hold 300m each (0.3), c 600m (0.6, stays, 400m free).
    # In node order: a1's pod goes to a2 (first fit); a2 must then move 600m, c has room for one
    # pod only -> ["a1"]. With a2 tried first its pod goes to a1 and a1 cannot empty -> ["a2"].
    nodes = [node("a1", 1000), node("a2", 1000), node("c", 1000)]
    on = {"a1": [pod("p1", 300)], "a2": [pod("p2", 300)], "c": [pod("q", 600)]}
    assert unneeded_nodes(nodes, on, DEFAULTS) == ["a1"]
    assert unneeded_nodes(nodes, on, DEFAULTS, previously_unneeded={"a2"}) == ["a2"]


def test_only_candidates_are_removed_but_all_nodes_receive() -> None:
    nodes = [node("a", 1000), node("b", 1000)]
    on = {"a": [pod("p", 100)], "b": [pod("q", 100)]}
    assert unneeded_nodes(nodes, on, DEFAULTS, candidates={"b"}) == ["b"]


# --- scale-down: what may go now ----------------------------------------------------------------


G = NodeGroup("g", node("t", 1000), 0, 10)


def test_a_node_must_be_unneeded_longer_than_the_unneeded_time() -> None:
    # Unneeded since 0: at exactly 10 minutes not yet (0 + 10 min < 10 min is false), 1 ns later yes.
    groups, sizes = {"n": G}, {"g": 3}
    assert ready_to_remove({"n": 0}, 10 * MINUTE, DEFAULTS, node_groups=groups, group_sizes=sizes) == []
    assert ready_to_remove({"n": 0}, 10 * MINUTE + 1, DEFAULTS, node_groups=groups, group_sizes=sizes) == ["n"]


@pytest.mark.parametrize(
    ("event", "delay"),
    [("last_scale_up", 10 * MINUTE), ("last_scale_down_failure", 3 * MINUTE)],
)
def test_scale_down_waits_out_the_delays(event: str, delay: int) -> None:
    # The event at t = 1 h: cooldown while t + delay > now.
    t = 60 * MINUTE
    last: dict[str, Any] = {event: t}
    assert scale_down_in_cooldown(t + delay - 1, DEFAULTS, **last)
    assert not scale_down_in_cooldown(t + delay, DEFAULTS, **last)
    kw: dict[str, Any] = {"node_groups": {"n": G}, "group_sizes": {"g": 3}, **last}
    assert ready_to_remove({"n": 0}, t + delay - 1, DEFAULTS, **kw) == []
    assert ready_to_remove({"n": 0}, t + delay, DEFAULTS, **kw) == ["n"]


def test_the_delay_after_delete_is_zero_by_default() -> None:
    assert not scale_down_in_cooldown(5, DEFAULTS, last_scale_down=5)
    assert scale_down_in_cooldown(5, CaSettings(scale_down_delay_after_delete=10 * SECOND), last_scale_down=5)


def test_disabled_scale_down_removes_nothing() -> None:
    off = CaSettings(scale_down_enabled=False)
    assert ready_to_remove({"n": 0}, 60 * MINUTE, off, node_groups={"n": G}, group_sizes={"g": 3}) == []


def test_min_size_keeps_nodes() -> None:
    # min 2, size 3: one of the two unneeded nodes may go, the one unneeded longer (m, since 0).
    g = NodeGroup("g", node("t", 1000), 2, 10)
    since = {"n": 5, "m": 0}
    got = ready_to_remove(since, 60 * MINUTE, DEFAULTS, node_groups={"n": g, "m": g}, group_sizes={"g": 3})
    assert got == ["m"]
    assert ready_to_remove(since, 60 * MINUTE, DEFAULTS, node_groups={"n": g, "m": g}, group_sizes={"g": 2}) == []


def test_a_node_outside_every_group_is_never_removed() -> None:
    assert ready_to_remove({"n": 0}, 60 * MINUTE, DEFAULTS, node_groups={}, group_sizes={}) == []


def test_budgets_ten_empty_and_one_drained_at_a_time() -> None:
    names = [f"e{i:02d}" for i in range(12)] + ["d0", "d1", "d2"]
    since = dict.fromkeys(names, 0)
    groups = dict.fromkeys(names, G)
    empty = [n for n in names if n.startswith("e")]
    # 12 empty: the first 10 use the whole budget; no drain.
    got = ready_to_remove(since, 60 * MINUTE, DEFAULTS, node_groups=groups, group_sizes={"g": 100}, empty=empty)
    assert got == empty[:10]
    # 3 empty: all 3, then one drain (max-drain-parallelism 1).
    few = {n: 0 for n in [*empty[:3], "d0", "d1", "d2"]}
    got = ready_to_remove(few, 60 * MINUTE, DEFAULTS, node_groups=groups, group_sizes={"g": 100}, empty=empty)
    assert got == [*empty[:3], "d0"]
    # A drain already running uses up the drain budget; 8 deletions running leave room for 2.
    got = ready_to_remove(
        few, 60 * MINUTE, DEFAULTS, node_groups=groups, group_sizes={"g": 100}, empty=empty, deleting_drain=1
    )
    assert got == empty[:3]
    got = ready_to_remove(
        few, 60 * MINUTE, DEFAULTS, node_groups=groups, group_sizes={"g": 100}, empty=empty, deleting_empty=8
    )
    assert got == empty[:2]


def test_unneeded_since_carries_over() -> None:
    assert update_unneeded_since({"a": 1, "b": 2}, ["b", "c"], 9) == {"b": 2, "c": 9}


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


TAINT = Taint("dedicated", TaintEffect.NO_SCHEDULE)
TOLERATION = Toleration("dedicated", "Exists")


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[NodeSpec], dict[str, list[PodSpec]]]:
    nodes = []
    pods_on: dict[str, list[PodSpec]] = {}
    for i in range(draw(st.integers(1, 4))):
        n = NodeSpec(
            f"n{i}",
            cpu=draw(st.integers(2, 8)) * 500,
            memory=draw(st.integers(1, 4)) * GiB,
            pods=draw(st.integers(1, 4)),
            taints=(TAINT,) if draw(st.booleans()) else (),
        )
        nodes.append(n)
        on: list[PodSpec] = []
        cpu = memory = 0
        for j in range(draw(st.integers(0, 3))):
            tolerant = bool(n.taints) or draw(st.booleans())
            p = PodSpec(
                f"n{i}p{j}",
                cpu=draw(st.integers(0, 8)) * 250,
                memory=draw(st.integers(0, 4)) * GiB // 4,
                movable=draw(st.integers(0, 5)) > 0,
                tolerations=(TOLERATION,) if tolerant else (),
            )
            if len(on) < n.pods and cpu + p.cpu_request <= n.cpu and memory + p.memory_request <= n.memory:
                on.append(p)
                cpu += p.cpu_request
                memory += p.memory_request
        pods_on[n.name] = on
    return nodes, pods_on


def _can_rehome(movers: Sequence[PodSpec], stay: Sequence[NodeSpec], pods_on: Mapping[str, Sequence[PodSpec]]) -> bool:
    """Exhaustive search: can every mover be put on some staying node, within its free room and taints?"""
    free = {
        n.name: [
            n.cpu - sum(p.cpu_request for p in pods_on[n.name]),
            n.memory - sum(p.memory_request for p in pods_on[n.name]),
            n.pods - len(pods_on[n.name]),
        ]
        for n in stay
    }

    def admits(n: NodeSpec, p: PodSpec) -> bool:
        room = free[n.name]
        if room[2] < 1 or (p.cpu_request and p.cpu_request > room[0]):
            return False
        if p.memory_request and p.memory_request > room[1]:
            return False
        return not n.taints or any(t.key == "dedicated" for t in p.tolerations)

    def search(i: int) -> bool:
        if i == len(movers):
            return True
        p = movers[i]
        for n in stay:
            if admits(n, p):
                room = free[n.name]
                room[0] -= p.cpu_request
                room[1] -= p.memory_request
                room[2] -= 1
                ok = search(i + 1)
                room[0] += p.cpu_request
                room[1] += p.memory_request
                room[2] += 1
                if ok:
                    return True
        return False

    return search(0)


@given(clusters())
def test_scale_down_picks_only_underused_nodes_whose_pods_can_all_move(
    cluster: tuple[list[NodeSpec], dict[str, list[PodSpec]]],
) -> None:
    nodes, pods_on = cluster
    chosen = unneeded_nodes(nodes, pods_on, DEFAULTS)
    assert len(set(chosen)) == len(chosen)
    by_name = {n.name: n for n in nodes}
    for name in chosen:
        n, pods = by_name[name], pods_on[name]
        cpu_share = sum(p.cpu_request for p in pods) / n.cpu
        memory_share = sum(p.memory_request for p in pods) / n.memory
        assert max(cpu_share, memory_share) < DEFAULTS.scale_down_utilization_threshold
        assert all(p.movable for p in pods)
    movers = [p for name in chosen for p in pods_on[name]]
    stay = [n for n in nodes if n.name not in chosen]
    assert _can_rehome(movers, stay, pods_on)


@given(
    st.dictionaries(st.sampled_from([f"n{i}" for i in range(8)]), st.integers(0, 20 * MINUTE)),
    st.sets(st.sampled_from([f"n{i}" for i in range(8)])),
    st.integers(0, 3),
    st.integers(0, 8),
    st.integers(0, 2),
)
def test_ready_to_remove_keeps_min_sizes_and_budgets(
    since: dict[str, int], empty: set[str], min_size: int, size: int, parallelism: int
) -> None:
    g = NodeGroup("g", NodeSpec("t", cpu=1000, memory=GiB), min_size, max(min_size, 1) + 8)
    settings = CaSettings(max_scale_down_parallelism=parallelism)
    now = 20 * MINUTE
    got = ready_to_remove(
        since, now, settings, node_groups=dict.fromkeys(since, g), group_sizes={"g": size}, empty=empty
    )
    assert all(since[n] + settings.scale_down_unneeded_time < now for n in got)
    assert len(got) <= max(0, size - min_size)
    assert len(got) <= parallelism
    assert sum(1 for n in got if n not in empty) <= settings.max_drain_parallelism
