"""Scale-down worked by hand and checked by properties.

Hand cases derive their answers in comments from the rules in cluster-autoscaler's FAQ and code
(utilisation, removal simulation, RemovableAt, budgets, cooldown). The properties check that a
scale-down only picks underutilised nodes whose pods can all be placed on the nodes that stay
(found by exhaustive search), and that what may go keeps min sizes and budgets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.core.time import MINUTE, SECOND
from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.clusterautoscaler.scaledown import (
    ready_to_remove,
    scale_down_in_cooldown,
    underutilised,
    unneeded_nodes,
    update_unneeded_since,
    utilisation,
)
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.taints import Taint, TaintEffect, Toleration
from tests.scheduling.clusterautoscaler.builders import DEFAULTS, GiB, node, pod

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
