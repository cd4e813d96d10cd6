"""PodDisruptionBudgets: how many of a workload's pods a voluntary eviction may take now.

Two upstream pieces, restated:

1. The disruption controller's status (pkg/controller/disruption/disruption.go:
   `getExpectedPodCount`, `countHealthyPods`, `updatePdbStatus`). With `maxUnavailable` or a
   percentage `minAvailable` the expected count is the controller's scale; with an integer
   `minAvailable` it is the number of pods. `desiredHealthy` is `minAvailable` (a percentage
   rounded up) or `expected - maxUnavailable` (rounded up, at least 0); `disruptionsAllowed` is
   `currentHealthy - desiredHealthy`, and 0 when that or `expected` is not positive.
2. The eviction subresource (pkg/registry/core/pod/storage/eviction.go: `canIgnorePDB`,
   `checkAndDecrement`). A pending pod is deleted without looking at the budget. An unready one
   is deleted without using the budget when the application is whole (`IfHealthyBudget`, the
   default: `currentHealthy >= desiredHealthy > 0`). A ready one needs `disruptionsAllowed > 0`
   and uses one; at 0 the API answers 429 and the caller tries again later.

    minAvailable 3, 5 ready pods of 5: 2 evictions allowed; the third is refused until
    replacements are ready. maxUnavailable "20%" of a scale of 10: desiredHealthy 8.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

_PERCENT = re.compile(r"^(\d+)%$")


def scaled_value(value: int | str, total: int, *, round_up: bool) -> int:
    """An int-or-percent as a count of `total`: `intstr.GetScaledValueFromIntOrPercent`."""
    if isinstance(value, int):
        return value
    match = _PERCENT.match(value)
    if match is None:
        raise ValueError(f"{value!r} is neither a count nor a percentage such as '50%'")
    scaled = int(match.group(1)) * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


@dataclass(frozen=True)
class DisruptionBudget:
    """A PodDisruptionBudget's spec for the workload's pods: `minAvailable` or `maxUnavailable`, not both."""

    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    always_allow_unhealthy: bool = False  # unhealthyPodEvictionPolicy: AlwaysAllow (default IfHealthyBudget)

    def __post_init__(self) -> None:
        if (self.min_available is None) == (self.max_unavailable is None):
            raise ValueError("a disruption budget sets exactly one of minAvailable and maxUnavailable")
        for value in (self.min_available, self.max_unavailable):
            if value is not None:
                scaled_value(value, 0, round_up=True)  # a bad percentage fails now


@dataclass(frozen=True)
class BudgetStatus:
    """What the disruption controller writes into the budget's status."""

    expected: int
    desired_healthy: int
    current_healthy: int

    @property
    def disruptions_allowed(self) -> int:
        allowed = self.current_healthy - self.desired_healthy
        return 0 if self.expected <= 0 or allowed <= 0 else allowed


def budget_status(budget: DisruptionBudget, *, pods: int, scale: int, healthy: int) -> BudgetStatus:
    """The status for `pods` pods of a controller scaled to `scale`, `healthy` of them ready and not deleting."""
    if budget.max_unavailable is not None:
        unavailable = scaled_value(budget.max_unavailable, scale, round_up=True)
        return BudgetStatus(scale, max(0, scale - unavailable), healthy)
    assert budget.min_available is not None
    if isinstance(budget.min_available, int):
        return BudgetStatus(pods, budget.min_available, healthy)
    return BudgetStatus(scale, scaled_value(budget.min_available, scale, round_up=True), healthy)


class EvictionBudget:
    """The eviction API over one budget's status for a pass of evictions (each ready pod evicted uses one)."""

    __slots__ = ("allowed", "always_allow_unhealthy", "status")

    def __init__(self, status: BudgetStatus, *, always_allow_unhealthy: bool = False) -> None:
        self.status = status
        self.allowed = status.disruptions_allowed
        self.always_allow_unhealthy = always_allow_unhealthy

    def evict(self, *, pending: bool, ready: bool) -> bool:
        """Whether the eviction goes through (False: a 429, the pod stays)."""
        if pending:
            return True  # canIgnorePDB
        status = self.status
        if not ready and (self.always_allow_unhealthy or status.current_healthy >= status.desired_healthy > 0):
            return True  # AlwaysAllow, or IfHealthyBudget with the application whole: an unready pod may go
        if self.allowed <= 0:
            return False
        self.allowed -= 1
        return True

    def evict_all(self, pods: Sequence[tuple[bool, bool]]) -> bool:
        """Evict every (pending, ready) pod, or none of them: the cluster autoscaler drains a node whole."""
        allowed = self.allowed
        if all(self.evict(pending=pending, ready=ready) for pending, ready in pods):
            return True
        self.allowed = allowed
        return False
