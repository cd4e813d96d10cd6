"""kube-scheduler's resource scores and score normalisation, as pure integer functions.

Mirrors `pkg/scheduler/framework/plugins/noderesources`: `resourceAllocationScorer.score` with
the LeastAllocated, MostAllocated and RequestedToCapacityRatio strategies of NodeResourcesFit
and NodeResourcesBalancedAllocation's standard-deviation score, plus `helper.DefaultNormalizeScore`
and `helper.BuildBrokenLinearFunction`. Go's integer division truncates toward zero, so it is
done with `_div` here, never `//` (they differ for negative slopes in a broken-linear shape).

Each scorer takes, per configured resource, what the node would have requested with the pod on
it (`requested`, the node's requests plus the pod's) and its allocatable amount; resources with
allocatable 0 are skipped and weigh nothing, as upstream. Whether requests count with the
non-zero defaults (100m CPU, 200 MiB memory for a container that sets none) is the caller's
choice: NodeResourcesFit uses them, BalancedAllocation does not (`non_zero_request`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_NODE_SCORE = 100  # framework.MaxNodeScore
MAX_CUSTOM_PRIORITY_SCORE = 10  # config.MaxCustomPriorityScore: shape scores are 0..10
MAX_UTILIZATION = 100

DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest


@dataclass(frozen=True)
class ResourceSpec:
    """A resource a strategy scores, with its weight (1..100, as the API validates)."""

    name: str
    weight: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.weight <= 100:
            raise ValueError(f"resource weight of {self.name} must be in 1..100, got {self.weight}")


@dataclass(frozen=True)
class ShapePoint:
    """A point of RequestedToCapacityRatio's shape: utilisation 0..100 -> score 0..10."""

    utilization: int
    score: int


def _div(a: int, b: int) -> int:
    """Go's integer division: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def non_zero_request(value: int | None, default: int) -> int:
    """A container's request as the scoring plugins count it: unset means the default, 0 stays 0.

    Mirrors `schedutil.GetNonzeroRequestForResource`.
    """
    return default if value is None else value


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
    return _div((capacity - requested) * MAX_NODE_SCORE, capacity)


def _most_requested(requested: int, capacity: int) -> int:
    if capacity == 0:
        return 0
    return _div(min(requested, capacity) * MAX_NODE_SCORE, capacity)


def least_allocated(requested: Sequence[int], allocatable: Sequence[int], resources: Sequence[ResourceSpec]) -> int:
    """LeastAllocated: favour emptier nodes. Mirrors `leastResourceScorer`."""
    total, weights = _weighted(_least_requested, requested, allocatable, [r.weight for r in resources])
    return _div(total, weights) if weights else 0


def most_allocated(requested: Sequence[int], allocatable: Sequence[int], resources: Sequence[ResourceSpec]) -> int:
    """MostAllocated: favour fuller nodes (bin packing). Mirrors `mostResourceScorer`."""
    total, weights = _weighted(_most_requested, requested, allocatable, [r.weight for r in resources])
    return _div(total, weights) if weights else 0


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The piecewise-linear function through (x, y) points, flat outside them.

    Mirrors `helper.BuildBrokenLinearFunction`, integer arithmetic included.
    """

    def f(p: int) -> int:
        for i, (x, y) in enumerate(shape):
            if p <= x:
                if i == 0:
                    return shape[0][1]
                x0, y0 = shape[i - 1]
                return y0 + _div((y - y0) * (p - x0), x - x0)
        return shape[-1][1]

    return f


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
        score = f(MAX_UTILIZATION) if req > cap else f(_div(req * MAX_UTILIZATION, cap))
        if score > 0:
            total += score * resource.weight
            weight_sum += resource.weight
    if weight_sum == 0:
        return 0
    return _round_half_away(total / weight_sum)


def _round_half_away(x: float) -> int:
    """Go's math.Round: halves away from zero (Python's round() goes to even)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def balanced_allocation(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """NodeResourcesBalancedAllocation: 100 x (1 - the spread of the resources' fractions used).

    Mirrors `balancedResourceScorer` as of v1.24-v1.35: fractions capped at 1; with two resources
    the spread is half their difference, with more the population standard deviation; weights play
    no part. (kubernetes PR #135573, Dec 2025, moves to comparing the balance with and without the
    pod, in 50..100; not followed yet.)
    """
    fractions = [min(req / cap, 1.0) for req, cap in zip(requested, allocatable, strict=True) if cap != 0]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def default_normalize(scores: Sequence[int], *, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> list[int]:
    """Scale scores so the best is `max_priority`; `reverse` turns a cost into a score.

    Mirrors `helper.DefaultNormalizeScore`: when every score is 0 they all become 0, or
    `max_priority` if reversed.
    """
    top = max((s for s in scores), default=0)
    top = max(top, 0)
    if top == 0:
        return [max_priority if reverse else s for s in scores]
    out = []
    for s in scores:
        scaled = _div(max_priority * s, top)
        out.append(max_priority - scaled if reverse else scaled)
    return out
