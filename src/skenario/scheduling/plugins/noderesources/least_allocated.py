"""LeastAllocated, NodeResourcesFit's default strategy: favour the node with the most room left.

Mirrors `least_allocated.go`: per resource `leastRequestedScore`, (capacity - requested) x 100 /
capacity truncated, 0 when over capacity; the node's score is their weighted mean, truncated
(`leastResourceScorer`). A node of 4000m with 1000m requested scores 75 on CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from skenario.scheduling.plugins.helper import go_div
from skenario.scheduling.plugins.interface import MAX_NODE_SCORE, Ints
from skenario.scheduling.plugins.noderesources.scorer import weighted_truncated_mean, weighted_truncated_means
from skenario.scheduling.plugins.resourceallocation import ResourceSpec


def least_requested_score(requested: int, capacity: int) -> int:
    """The unused share of one resource, 0..100. Mirrors `leastRequestedScore`."""
    if capacity == 0 or requested > capacity:
        return 0
    return go_div((capacity - requested) * MAX_NODE_SCORE, capacity)


class LeastAllocated:
    """Favour emptier nodes. Mirrors `leastResourceScorer`."""

    def __init__(self, resources: Sequence[ResourceSpec]) -> None:
        self.weights = [resource.weight for resource in resources]

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        return weighted_truncated_mean(least_requested_score, requested, allocatable, self.weights)

    def score_nodes(self, requested: Ints, allocatable: Ints, weights: Ints) -> Ints:
        # Over capacity scores 0; below it the numerator is >= 0, so floor division is Go's truncation.
        free = np.maximum(allocatable - requested, 0) * MAX_NODE_SCORE // np.maximum(allocatable, 1)
        return weighted_truncated_means(free, allocatable, weights)
