"""How many new nodes of a group's template some pods need: first fit decreasing, within limits.

Mirrors cluster-autoscaler's `estimator/`: `BinpackingNodeEstimator.Estimate`
(binpacking_estimator.go), the `DecreasingPodOrderer` that sorts the pods for it
(decreasing_pod_orderer.go) and the `thresholdBasedEstimationLimiter` that caps the nodes it may add
(threshold_based_limiter.go).
"""

from __future__ import annotations

from collections.abc import Sequence

from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.clusterautoscaler.simulator import NewNodes, ResourceSimulation, equivalence
from skenario.scheduling.objects import NodeSpec, PodSpec


def pod_size_score(pod: PodSpec, template: NodeSpec) -> float:
    """Mirrors `DecreasingPodOrderer.calculatePodScore`: CPU and memory requests as shares of the template."""
    score = 0.0
    if template.cpu > 0:
        score += pod.cpu_request / template.cpu
    if template.memory > 0:
        score += pod.memory_request / template.memory
    return score


def estimate(
    pods: Sequence[PodSpec], template: NodeSpec, limit: int, nodes: NewNodes | None = None
) -> tuple[int, tuple[PodSpec, ...]]:
    """How many new template nodes the pods need, and which pods they take, with at most `limit` nodes.

    Mirrors `BinpackingNodeEstimator.Estimate` (first fit decreasing): pods in decreasing
    `pod_size_score` order (ties keep their order), each onto the first new node it fits, else
    onto a fresh node while the limiter allows one more, else left out; a fresh node the pod does
    not fit either is taken back, and the rest of the pod's equivalence group skipped, as
    upstream's estimator stops on a group that fails a new node. `nodes` simulates the new
    nodes (default: resources only, for pods already checked against the template with
    `fits_empty`); a `SnapshotSimulation`'s run the scheduler's filters, so that topology spread
    counts the pods placed so far. Returns the
    number of nodes used and the pods placed, in placement order.
    """
    ordered = sorted(pods, key=lambda p: pod_size_score(p, template), reverse=True)
    new = ResourceSimulation().new_nodes(template) if nodes is None else nodes
    count = 0
    placed: list[PodSpec] = []
    hopeless: set[str] = set()  # equivalence groups a pod of which fitted no fresh node
    for pod in ordered:
        group = equivalence(pod)
        if group in hopeless:
            continue
        k = new.first_fit(pod) if count else None
        if k is None:
            if count >= limit:
                continue
            k = new.add()
            if not new.fits(pod, k):
                new.drop_last()
                hopeless.add(group)  # its likes would not fit one either
                continue
            count += 1
        new.take(pod, k)
        placed.append(pod)
    return count, tuple(placed)


def node_limit(group: NodeGroup, size: int, cluster_size: int, settings: CaSettings) -> int:
    """The estimation limiter: the smallest of the group's room, the cluster's room and the per-scale-up cap.

    Mirrors `thresholdBasedEstimationLimiter` with `sngCapacityThreshold` (this group only),
    `clusterCapacityThreshold` and `staticThreshold` (`--max-nodes-per-scaleup`).
    """
    limit = min(group.max_size - size, settings.max_nodes_per_scale_up)
    if settings.max_nodes_total > 0:
        limit = min(limit, settings.max_nodes_total - cluster_size)
    return limit
