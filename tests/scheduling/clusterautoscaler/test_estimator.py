"""The binpacking estimator, worked by hand: first fit decreasing, the pod order and the node limit.

Each case derives its answer in comments from cluster-autoscaler's estimator (binpacking_estimator.go,
decreasing_pod_orderer.go, threshold_based_limiter.go).
"""

from __future__ import annotations

from skenario.scheduling.clusterautoscaler.config import CaSettings
from skenario.scheduling.clusterautoscaler.estimator import estimate, node_limit, pod_size_score
from tests.scheduling.clusterautoscaler.builders import DEFAULTS, GiB, group, node, pod


def test_first_fit_decreasing_packs_the_biggest_pods_first() -> None:
    # 4000m nodes; pods 2000, 1000, 3000, 2000 (memory unset). In the given order first fit needs
    # three nodes (2000+1000 | 3000 | 2000). Sorted by size, 3000 | 2000 | 2000 (onto node 2) |
    # 1000 (onto node 1) fills two.
    pods = [pod("a", 2000), pod("b", 1000), pod("c", 3000), pod("d", 2000)]
    nodes, placed = estimate(pods, node("t", 4000), limit=10)
    assert nodes == 2
    assert [p.name for p in placed] == ["c", "a", "d", "b"]


def test_a_pod_outgrowing_the_limit_is_left_out() -> None:
    # Three 3000m pods on 4000m templates need three nodes; with a limit of two the third is left out.
    pods = [pod("a", 3000), pod("b", 3000), pod("c", 3000)]
    nodes, placed = estimate(pods, node("t", 4000), limit=2)
    assert nodes == 2
    assert [p.name for p in placed] == ["a", "b"]


def test_the_pod_size_is_its_cpu_share_plus_its_memory_share_of_the_template() -> None:
    # 1000m of 4000m is 0.25, 2 GiB of 8 GiB is 0.25: 0.5. A request left unset counts 0.
    template = node("t", 4000, 8 * GiB)
    assert pod_size_score(pod("p", 1000, 2 * GiB), template) == 0.5
    assert pod_size_score(pod("cpu-only", 2000), template) == 0.5
    assert pod_size_score(pod("none"), template) == 0.0


def test_the_node_limit_is_the_smallest_of_the_group_cluster_and_per_scale_up_room() -> None:
    g = group("g", 1000, max_size=10)
    # Group room 10 - 4 = 6; no cluster cap; per-scale-up cap 1000: 6.
    assert node_limit(g, 4, 50, DEFAULTS) == 6
    # --max-nodes-total 52 with 50 nodes: 2.
    assert node_limit(g, 4, 50, CaSettings(max_nodes_total=52)) == 2
    # --max-nodes-per-scaleup 3: 3.
    assert node_limit(g, 4, 50, CaSettings(max_nodes_per_scale_up=3)) == 3
    # A full cluster leaves no room, whatever the group's.
    assert node_limit(g, 4, 52, CaSettings(max_nodes_total=52)) == 0
