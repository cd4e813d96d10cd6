"""RequestedToCapacityRatio: score each resource's utilisation through the user's shape.

Mirrors `requested_to_capacity_ratio.go`: the shape's scores (0..10, `MaxCustomPriorityScore`) are
scaled to 0..100 (`requestedToCapacityRatioScorer`) and joined by `BuildBrokenLinearFunction`; a
resource over capacity scores as 100% utilised; only resources scoring above 0 count in the
weighted mean, which is rounded, not truncated (`buildRequestedToCapacityRatioScorerFunction`).
With the shape {0: 0, 100: 10}, a node at 25% CPU scores 25; with {0: 10, 100: 0}, 75.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from skenario.scheduling.plugins.helper import broken_linear, go_div, go_round
from skenario.scheduling.plugins.interface import MAX_NODE_SCORE, Ints
from skenario.scheduling.plugins.noderesources.most_allocated import used_shares
from skenario.scheduling.plugins.resourceallocation import ResourceSpec

MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore: shape scores are 0..10
MAX_UTILIZATION = 100


@dataclass(frozen=True)
class ShapePoint:
    """A point of RequestedToCapacityRatio's shape: utilisation 0..100 -> score 0..10."""

    utilization: int
    score: int


class RequestedToCapacityRatio:
    """Score utilisation through a shape. Mirrors `requestedToCapacityRatioScorer`."""

    def __init__(self, resources: Sequence[ResourceSpec], shape: Sequence[ShapePoint]) -> None:
        if not shape:
            raise ValueError("RequestedToCapacityRatio needs a shape")
        self.weights = [resource.weight for resource in resources]
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        self._shape = broken_linear([(p.utilization, p.score * scale) for p in shape])
        # The shape at every whole utilisation, for the batch path: utilisations are truncated to 0..100.
        self._table = np.array([self._shape(u) for u in range(MAX_UTILIZATION + 1)], dtype=np.int64)

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        f = self._shape
        total = weight_sum = 0
        for req, cap, weight in zip(requested, allocatable, self.weights, strict=True):
            if cap == 0:
                continue
            score = f(MAX_UTILIZATION) if req > cap else f(go_div(req * MAX_UTILIZATION, cap))
            if score > 0:
                total += score * weight
                weight_sum += weight
        if weight_sum == 0:
            return 0
        return go_round(total / weight_sum)

    def score_nodes(self, requested: Ints, allocatable: Ints, weights: Ints) -> Ints:
        table = self._table
        used = used_shares(requested, allocatable)  # MAX_NODE_SCORE == MAX_UTILIZATION: the same percent
        s = np.where(requested > allocatable, table[MAX_UTILIZATION], table[np.clip(used, 0, MAX_UTILIZATION)])
        counted = (allocatable != 0) & (s > 0)
        total = (s * weights * counted).sum(axis=1)
        weight_sum = (weights * counted).sum(axis=1)
        mean = total / np.maximum(weight_sum, 1)
        rounded = np.floor(np.abs(mean) + 0.5) * np.sign(mean)  # Go's math.Round
        return np.where(weight_sum > 0, rounded, 0).astype(np.int64)
