"""How many new nodes of a group's template some pods need: first fit decreasing, within limits.

Mirrors cluster-autoscaler's `estimator/`: `BinpackingNodeEstimator.Estimate`
(binpacking_estimator.go), the `DecreasingPodOrderer` that sorts the pods for it
(decreasing_pod_orderer.go) and the `thresholdBasedEstimationLimiter` that caps the nodes it may add
(threshold_based_limiter.go).
"""

from __future__ import annotations

from collections.abc import Sequence

from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.clusterautoscaler.simulator import Room
from skenario.scheduling.objects import NodeSpec, PodSpec


def pod_size_score(pod: PodSpec, template: NodeSpec) -> float:
    """Mirrors `DecreasingPodOrderer.calculatePodScore`: CPU and memory requests as shares of the template."""
    score = 0.0
    if template.cpu > 0:
        score += pod.cpu_request / template.cpu
    if template.memory > 0:
        score += pod.memory_request / template.memory
    return score


def estimate(pods: Sequence[PodSpec], template: NodeSpec, limit: int) -> tuple[int, tuple[PodSpec, ...]]:
    """How many new template nodes the pods need, and which pods they take, with at most `limit` nodes.

    Mirrors `BinpackingNodeEstimator.Estimate` (first fit decreasing): pods in decreasing
    `pod_size_score` order (ties keep their order), each onto the first new node with room, else
    onto a fresh node while the limiter allows one more, else left out. As upstream, every pod is
    assumed to fit an empty template (filter with `fits_empty` first); only resources are checked
    here. Returns the number of nodes used and the pods placed, in placement order.
    """
    ordered = sorted(pods, key=lambda p: pod_size_score(p, template), reverse=True)
    rooms: list[Room] = []
    placed: list[PodSpec] = []
    for pod in ordered:
        room = next((r for r in rooms if r.fits(pod)), None)
        if room is None:
            if len(rooms) >= limit:
                continue
            room = Room(template)
            if not room.fits(pod):
                continue  # cannot happen for filtered pods; upstream also stops here
            rooms.append(room)
        room.take(pod)
        placed.append(pod)
    return len(rooms), tuple(placed)


def node_limit(group: NodeGroup, size: int, cluster_size: int, settings: CaSettings) -> int:
    """The estimation limiter: the smallest of the group's room, the cluster's room and the per-scale-up cap.

    Mirrors `thresholdBasedEstimationLimiter` with `sngCapacityThreshold` (this group only),
    `clusterCapacityThreshold` and `staticThreshold` (`--max-nodes-per-scaleup`).
    """
    limit = min(group.max_size - size, settings.max_nodes_per_scale_up)
    if settings.max_nodes_total > 0:
        limit = min(limit, settings.max_nodes_total - cluster_size)
    return limit
