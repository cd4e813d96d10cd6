"""NodeResourcesFit, as upstream's `pkg/scheduler/framework/plugins/noderesources`: the plugin and its
three scoring strategies, one module each.

- `fit`: the plugin (`fit.go`): the filter `fitsRequest`, and the score by the strategy the
  `scoringStrategy` names, looked up once in `SCORING_STRATEGIES` (upstream's
  `nodeResourceStrategyTypeMap`).
- `scorer`: what a strategy promises (`Scorer`): a node's score from what it would have requested
  with the pod and its allocatable, as pure integers (tested case by case against upstream) and over
  numpy arrays for every node at once (the same integer maths).
- `least_allocated`, `most_allocated`, `requested_to_capacity_ratio`: the three strategies, as
  `least_allocated.go`, `most_allocated.go` and `requested_to_capacity_ratio.go`.

Adding a strategy: one module with a `Scorer`, and one line in `fit.SCORING_STRATEGIES`.
"""

from __future__ import annotations

from skenario.scheduling.plugins.noderesources.fit import SCORING_STRATEGIES, NodeResourcesFit
from skenario.scheduling.plugins.noderesources.least_allocated import LeastAllocated
from skenario.scheduling.plugins.noderesources.most_allocated import MostAllocated
from skenario.scheduling.plugins.noderesources.requested_to_capacity_ratio import (
    RequestedToCapacityRatio,
    ShapePoint,
)
from skenario.scheduling.plugins.noderesources.scorer import Scorer

__all__ = [
    "SCORING_STRATEGIES",
    "LeastAllocated",
    "MostAllocated",
    "NodeResourcesFit",
    "RequestedToCapacityRatio",
    "Scorer",
    "ShapePoint",
]
