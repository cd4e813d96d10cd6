"""MostAllocated: favour the fullest node that fits, to pack pods (bin packing).

Mirrors `most_allocated.go`: per resource `mostRequestedScore`, min(requested, capacity) x 100 /
capacity truncated (a node over capacity counts as full); the node's score is their weighted mean,
truncated (`mostResourceScorer`). A node of 4000m with 1000m requested scores 25 on CPU.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from skenario.scheduling.plugins.helper import go_div, go_div_array
from skenario.scheduling.plugins.interface import MAX_NODE_SCORE, Ints
from skenario.scheduling.plugins.noderesources.scorer import weighted_truncated_mean, weighted_truncated_means
from skenario.scheduling.plugins.resourceallocation import ResourceSpec


def most_requested_score(requested: int, capacity: int) -> int:
    """The used share of one resource, 0..100. Mirrors `mostRequestedScore`."""
    if capacity == 0:
        return 0
    return go_div(min(requested, capacity) * MAX_NODE_SCORE, capacity)


def used_shares(requested: Ints, allocatable: Ints) -> Ints:
    """`most_requested_score` of every node and resource at once (0 where allocatable is 0)."""
    return go_div_array(np.minimum(requested, allocatable) * MAX_NODE_SCORE, np.maximum(allocatable, 1))


class MostAllocated:
    """Favour fuller nodes. Mirrors `mostResourceScorer`."""

    def __init__(self, resources: Sequence[ResourceSpec]) -> None:
        self.weights = [resource.weight for resource in resources]

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        return weighted_truncated_mean(most_requested_score, requested, allocatable, self.weights)

    def score_nodes(self, requested: Ints, allocatable: Ints, weights: Ints) -> Ints:
        return weighted_truncated_means(used_shares(requested, allocatable), allocatable, weights)
