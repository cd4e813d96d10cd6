"""What fits where: first fit over free room, and the scheduler's static filters, worked by hand."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.affinity import NodeAffinity
from skenario.scheduling.clusterautoscaler.simulator import PredicateChecker, fits_empty, node_filters, place_pods
from skenario.scheduling.framework import default_profile
from skenario.scheduling.objects import LabelSelector, NodeSpec, PodSpec, TopologySpreadConstraint
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import Taint, TaintEffect, Toleration
from tests.scheduling.clusterautoscaler.builders import GiB, node, pod


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


@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", None]), st.integers(0, 6), st.booleans()), min_size=1, max_size=8),
    st.integers(1, 3),
)
@settings(max_examples=60, deadline=None)
def test_the_vectorised_search_finds_the_first_node_every_filter_passes(
    nodes: list[tuple[str | None, int, bool]], max_skew: int
) -> None:
    # Nodes in zones a, b or none, each holding some web pods, some tainted; the search over all of
    # them at once must agree with checking them one by one.
    spread = (TopologySpreadConstraint(max_skew, "zone", label_selector=LabelSelector({"app": "web"})),)
    snap = ClusterSnapshot()
    for i, (zone, held, tainted) in enumerate(nodes):
        labels = {} if zone is None else {"zone": zone}
        taints = (Taint("t", TaintEffect.NO_SCHEDULE),) if tainted else ()
        row = snap.add_node(NodeSpec(f"n{i}", cpu=8000, memory=GiB, labels=labels, taints=taints))
        for k in range(held):
            snap.assume(PodSpec(f"p{i}-{k}", cpu=100, labels={"app": "web"}), row)
    checker = PredicateChecker(default_profile(spread=True).filters)
    pod = PodSpec("new", cpu=100, labels={"app": "web"}, spread=spread)
    rows = snap.order.tolist()
    one_by_one = [r for r in rows if checker.check(pod, snap, r) is None]
    assert checker.feasible(pod, snap, rows) == one_by_one
    assert checker.fits_any(pod, snap, rows) == (one_by_one[0] if one_by_one else None)
