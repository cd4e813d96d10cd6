"""What a NodeResourcesFit scoring strategy promises, and the weighted mean two of them share.

Upstream's `resourceAllocationScorer` holds a `scorer func(requested, allocatable []int64) int64`
built from the configured resources; here a `Scorer` is that function as an object, with a second
method scoring every node at once over numpy arrays by the same integer maths.

A strategy sees, per configured resource, what the node would have requested with the pod on it
(`requested`, the node's requests plus the pod's, counted with the non-zero defaults) and its
allocatable amount; a resource with allocatable 0 is skipped and weighs nothing, as upstream.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from skenario.scheduling.plugins.helper import go_div, go_div_array
from skenario.scheduling.plugins.interface import Ints


class Scorer(Protocol):
    """One scoring strategy, made for the configured resources (and their weights)."""

    def score(self, requested: Sequence[int], allocatable: Sequence[int]) -> int:
        """One node's score, 0..100; `requested` and `allocatable` follow the configured resources."""
        ...

    def score_nodes(self, requested: Ints, allocatable: Ints, weights: Ints) -> Ints:
        """Every node's score: rows are nodes, columns the resources scored for this pod, `weights`
        theirs (a resource the pod does not ask for may be left out: `scoring_columns`)."""
        ...


def weighted_truncated_mean(
    score_one: Callable[[int, int], int], requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
) -> int:
    """The weighted mean of `score_one` over the resources a node has, truncated as Go's `/`;
    0 when it has none. LeastAllocated's and MostAllocated's `nodeScore / weightSum`."""
    total = weight_sum = 0
    for req, cap, weight in zip(requested, allocatable, weights, strict=True):
        if cap == 0:
            continue
        total += score_one(req, cap) * weight
        weight_sum += weight
    return go_div(total, weight_sum) if weight_sum else 0


def weighted_truncated_means(per_resource: Ints, allocatable: Ints, weights: Ints) -> Ints:
    """`weighted_truncated_mean` of every node (rows) at once, from each resource's score."""
    if allocatable.all():  # every node has every resource: one weight sum, and scores 0..100 floor as Go truncates
        return (per_resource @ weights) // max(int(weights.sum()), 1)
    counted = allocatable != 0
    total = (per_resource * weights * counted).sum(axis=1)
    weight_sum = (weights * counted).sum(axis=1)
    return np.where(weight_sum > 0, go_div_array(total, np.maximum(weight_sum, 1)), 0)
