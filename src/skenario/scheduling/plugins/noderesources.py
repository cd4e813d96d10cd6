"""NodeResourcesFit: whether a node has room for the pod, and how full it would be with it.

Mirrors `pkg/scheduler/framework/plugins/noderesources`: the filter is `fitsRequest` (fit.go); the
score is `resourceAllocationScorer.score` with the `scoringStrategy` LeastAllocated
(least_allocated.go), MostAllocated (most_allocated.go) or RequestedToCapacityRatio
(requested_to_capacity_ratio.go). The strategies are pure integer functions here, tested case by
case against upstream; the plugin class runs the same integer maths over numpy arrays.

Each scorer takes, per configured resource, what the node would have requested with the pod on
it (`requested`, the node's requests plus the pod's) and its allocatable amount; resources with
allocatable 0 are skipped and weigh nothing, as upstream. The scores count requests with the
non-zero defaults (`resourceallocation.scoring_columns`); the filter counts actual requests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.helper import broken_linear, go_div, go_div_array, go_round
from skenario.scheduling.plugins.interface import MAX_NODE_SCORE, FilterResult, Ints
from skenario.scheduling.plugins.resourceallocation import ResourceSpec, default_resources, scoring_columns
from skenario.scheduling.snapshot import ClusterSnapshot

MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore: shape scores are 0..10
MAX_UTILIZATION = 100


@dataclass(frozen=True)
class ShapePoint:
    """A point of RequestedToCapacityRatio's shape: utilisation 0..100 -> score 0..10."""

    utilization: int
    score: int


# -- the strategies as pure functions --------------------------------------------------------------


def _weighted(
    score_one: Callable[[int, int], int], requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
) -> tuple[int, int]:
    total = weight_sum = 0
    for req, cap, weight in zip(requested, allocatable, weights, strict=True):
        if cap == 0:
            continue
        total += score_one(req, cap) * weight
        weight_sum += weight
    return total, weight_sum


def _least_requested(requested: int, capacity: int) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


def _most_requested(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return go_div(min(requested, capacity) * MAX_NODE_SCORE, capacity)


def least_allocated(requested: Sequence[int], allocatable: Sequence[int], resources: Sequence[ResourceSpec]) -> int:
    """LeastAllocated: favour emptier nodes. Mirrors `leastResourceScorer`."""
    total, weights = _weighted(_least_requested, requested, allocatable, [r.weight for r in resources])
    return go_div(total, weights) if weights else 0


def most_allocated(requested: Sequence[int], allocatable: Sequence[int], resources: Sequence[ResourceSpec]) -> int:
    """MostAllocated: favour fuller nodes (bin packing). Mirrors `mostResourceScorer`."""
    total, weights = _weighted(_most_requested, requested, allocatable, [r.weight for r in resources])
    return go_div(total, weights) if weights else 0


def requested_to_capacity_ratio(
    requested: Sequence[int],
    allocatable: Sequence[int],
    resources: Sequence[ResourceSpec],
    shape: Sequence[ShapePoint],
) -> int:
    """RequestedToCapacityRatio: score utilisation through the user's shape.

    Mirrors `buildRequestedToCapacityRatioScorerFunction`: shape scores are scaled to 0..100,
    a resource over capacity scores as 100% utilised, and only resources scoring above 0 count
    in the weighted mean, which is rounded (not truncated).
    """
    scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    f = broken_linear([(p.utilization, p.score * scale) for p in shape])
    total = weight_sum = 0
    for req, cap, resource in zip(requested, allocatable, resources, strict=True):
        if cap == 0:
            continue
        score = f(MAX_UTILIZATION) if req > cap else f(go_div(req * MAX_UTILIZATION, cap))
        if score > 0:
            total += score * resource.weight
            weight_sum += resource.weight
    if weight_sum == 0:
        return 0
    return go_round(total / weight_sum)


# -- the plugin ------------------------------------------------------------------------------------


def _weighted_mean(per_resource: Ints, allocatable: Ints, weights: Ints) -> Ints:
    counted = allocatable != 0
    total = (per_resource * weights * counted).sum(axis=1)
    weight_sum = (weights * counted).sum(axis=1)
    return np.where(weight_sum > 0, go_div_array(total, np.maximum(weight_sum, 1)), 0)


@dataclass
class NodeResourcesFit:
    """Filter: pod count, then each requested resource against what the node has left (`fitsRequest`).
    Score: the `scoringStrategy` (LeastAllocated by default) over `resources`.

    A request larger than the node's whole allocatable is unresolvable: no preemption frees it.
    Upstream lists every insufficient resource; the first is reported here.
    """

    strategy: str = "LeastAllocated"  # LeastAllocated | MostAllocated | RequestedToCapacityRatio
    resources: Sequence[ResourceSpec] = field(default_factory=default_resources)
    shape: Sequence[ShapePoint] = ()
    name: str = "NodeResourcesFit"

    def __post_init__(self) -> None:
        self._table: Ints | None = None
        if self.strategy == "RequestedToCapacityRatio":
            if not self.shape:
                raise ValueError("RequestedToCapacityRatio needs a shape")
            scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
            f = broken_linear([(p.utilization, p.score * scale) for p in self.shape])
            self._table = np.array([f(u) for u in range(101)], dtype=np.int64)
        elif self.strategy not in ("LeastAllocated", "MostAllocated"):
            raise ValueError(f"unknown scoring strategy {self.strategy!r}")

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        request = snap.request_of(pod)
        codes = np.zeros(len(nodes), dtype=np.int64)
        reasons = ["", "Too many pods"]
        unresolvable = set()
        too_many = snap.pod_count[nodes] + 1 > snap.max_pods[nodes]
        codes[too_many] = 1
        allocatable = snap.allocatable[nodes]
        free = allocatable - snap.requested[nodes]
        for col in np.flatnonzero(request > 0):
            short = (codes == 0) & (request[col] > free[:, col])
            if short.any():
                reasons.append(f"Insufficient {snap.resources[col]}")
                codes[short] = len(reasons) - 1
        if not codes.any():  # every node fits, none is unresolvable: 48 -> 27 us a call on 1,000 nodes
            return FilterResult(codes, reasons, frozenset())
        # A request above a node's whole allocatable, for any resource, no preemption can meet.
        never = ((request > allocatable) & (request > 0)).any(axis=1) & (codes != 0)
        for code in np.unique(codes[never]).tolist():
            reasons.append(reasons[code])  # the same words; only the status differs
            unresolvable.add(len(reasons) - 1)
            codes[never & (codes == code)] = len(reasons) - 1
        return FilterResult(codes, reasons, frozenset(unresolvable))

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        requested, allocatable, weights = scoring_columns(pod, snap, nodes, self.resources, non_zero=True)
        if not len(weights):
            return np.zeros(len(nodes), dtype=np.int64)
        cap = np.maximum(allocatable, 1)
        if self.strategy == "LeastAllocated":
            s = np.where(requested > allocatable, 0, go_div_array((allocatable - requested) * MAX_NODE_SCORE, cap))
            return _weighted_mean(s, allocatable, weights)
        used = go_div_array(np.minimum(requested, allocatable) * MAX_NODE_SCORE, cap)
        if self.strategy == "MostAllocated":
            return _weighted_mean(used, allocatable, weights)
        assert self._table is not None
        s = np.where(requested > allocatable, self._table[100], self._table[np.clip(used, 0, 100)])
        counted = (allocatable != 0) & (s > 0)
        total = (s * weights * counted).sum(axis=1)
        weight_sum = (weights * counted).sum(axis=1)
        mean = total / np.maximum(weight_sum, 1)
        rounded = np.floor(np.abs(mean) + 0.5) * np.sign(mean)  # Go's math.Round
        return np.where(weight_sum > 0, rounded, 0).astype(np.int64)

    def normalize(self, scores: Ints) -> Ints | None:
        return None
