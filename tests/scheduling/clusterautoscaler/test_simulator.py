"""What fits where: first fit over free room, and the scheduler's static filters, worked by hand."""

from __future__ import annotations

from skenario.scheduling.affinity import NodeAffinity
from skenario.scheduling.clusterautoscaler.simulator import fits_empty, node_filters, place_pods
from skenario.scheduling.taints import Taint, TaintEffect, Toleration
from tests.scheduling.clusterautoscaler.builders import node, pod


def test_place_pods_is_first_fit_over_free_room() -> None:
    # n1 has 500m free, n2 2000m: 400m goes to n1, then 300m no longer fits n1 (100m left).
    nodes = [node("n1", 1000), node("n2", 2000)]
    where = place_pods([pod("a", 400), pod("b", 300), pod("c", 5000)], nodes, {"n1": [pod("x", 500)]})
    assert where == ["n1", "n2", None]


def test_the_static_filters_are_cordoning_taints_and_node_affinity() -> None:
    plain = pod("plain", 100)
    assert node_filters(plain, node("n", 1000))
    assert not node_filters(plain, node("cordoned", 1000, unschedulable=True))
    tolerant = pod("tolerant", 100, tolerations=(Toleration("node.kubernetes.io/unschedulable", "Exists"),))
    assert node_filters(tolerant, node("cordoned", 1000, unschedulable=True))
    assert not node_filters(plain, node("tainted", 1000, taints=(Taint("k", TaintEffect.NO_EXECUTE),)))
    assert node_filters(plain, node("soft", 1000, taints=(Taint("k", TaintEffect.PREFER_NO_SCHEDULE),)))
    picky = pod("picky", 100, affinity=NodeAffinity(node_selector={"disk": "ssd"}))
    assert not node_filters(picky, node("n", 1000))
    assert node_filters(picky, node("ssd", 1000, labels={"disk": "ssd"}))


def test_an_empty_template_takes_a_pod_within_its_whole_room() -> None:
    # 1000m and 8 GiB: 1000m fits exactly, 1001m does not; a zero-pod node takes nothing.
    assert fits_empty(pod("exact", 1000), node("t", 1000))
    assert not fits_empty(pod("over", 1001), node("t", 1000))
    assert not fits_empty(pod("tiny", 1), node("t", 1000, pods=0))
    assert not fits_empty(pod("gpu", 1, extended={"nvidia.com/gpu": 1}), node("t", 1000))
    assert fits_empty(pod("gpu", 1, extended={"nvidia.com/gpu": 1}), node("t", 1000, extended={"nvidia.com/gpu": 1}))
