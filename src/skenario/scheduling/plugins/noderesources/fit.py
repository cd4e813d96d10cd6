"""NodeResourcesFit: whether a node has room for the pod, and how full it would be with it.

Mirrors `fit.go`: the filter is `fitsRequest`; the score is `resourceAllocationScorer.score` with
the scorer the `scoringStrategy` names, looked up once in `SCORING_STRATEGIES` as upstream's
`nodeResourceStrategyTypeMap`. The scores count requests with the non-zero defaults
(`resourceallocation.scoring_columns`); the filter counts actual requests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.interface import FilterResult, Ints
from skenario.scheduling.plugins.noderesources.least_allocated import LeastAllocated
from skenario.scheduling.plugins.noderesources.most_allocated import MostAllocated
from skenario.scheduling.plugins.noderesources.requested_to_capacity_ratio import RequestedToCapacityRatio, ShapePoint
from skenario.scheduling.plugins.noderesources.scorer import Scorer
from skenario.scheduling.plugins.resourceallocation import ResourceSpec, default_resources, scoring_columns
from skenario.scheduling.snapshot import ClusterSnapshot

# Each `scoringStrategy.type` and how its scorer is made from the strategy's resources and shape
# (only RequestedToCapacityRatio reads the shape). Upstream's `nodeResourceStrategyTypeMap`.
SCORING_STRATEGIES: dict[str, Callable[[Sequence[ResourceSpec], Sequence[ShapePoint]], Scorer]] = {
    "LeastAllocated": lambda resources, shape: LeastAllocated(resources),
    "MostAllocated": lambda resources, shape: MostAllocated(resources),
    "RequestedToCapacityRatio": RequestedToCapacityRatio,
}


@dataclass
class NodeResourcesFit:
    """Filter: pod count, then each requested resource against what the node has left (`fitsRequest`).
    Score: the `scoringStrategy` (LeastAllocated by default) over `resources`.

    A request larger than the node's whole allocatable is unresolvable: no preemption frees it.
    Upstream lists every insufficient resource; the first is reported here.
    """

    strategy: str = "LeastAllocated"  # a key of SCORING_STRATEGIES
    resources: Sequence[ResourceSpec] = field(default_factory=default_resources)
    shape: Sequence[ShapePoint] = ()
    name: str = "NodeResourcesFit"

    def __post_init__(self) -> None:
        make = SCORING_STRATEGIES.get(self.strategy)
        if make is None:
            raise ValueError(f"unknown scoring strategy {self.strategy!r}")
        self.scorer = make(self.resources, self.shape)

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        request = snap.request_of(pod)
        codes = np.zeros(len(nodes), dtype=np.int64)
        reasons = ["", "Too many pods"]
        unresolvable = set()
        too_many = snap.pod_count.take(nodes) >= snap.max_pods.take(nodes)  # no room for one pod more
        allocatable = snap.allocatable.take(nodes, axis=0)  # `take`: several times faster than [] on rows
        free = allocatable - snap.requested.take(nodes, axis=0)
        asked = request > 0
        room = free >= request if asked.all() else free[:, asked] >= request[asked]
        if room.all() and not too_many.any():  # the usual case, in a few vector operations
            return FilterResult(codes, reasons, frozenset())
        codes[too_many] = 1
        for col in np.flatnonzero(asked):
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
        return self.scorer.score_nodes(requested, allocatable, weights)

    def normalize(self, scores: Ints) -> Ints | None:
        return None
