"""YARN's resources and its two resource calculators, as the Capacity Scheduler compares them.

A YARN `Resource` is memory in MB and vcores, both whole numbers. Which of them a queue limit, a
user limit or a fit looks at is the calculator's choice (`yarn.scheduler.capacity.resource-calculator`):

* `DefaultResourceCalculator` (the default) compares memory only: a container asking 1 GB and 8
  vcores fits a node with 1 GB and 1 vcore free.
* `DominantResourceCalculator` compares the dominant share (DRF): each side's largest share of the
  cluster, then the next largest; a fit needs every resource.

The helpers mirror `org.apache.hadoop.yarn.util.resource.Resources` (`roundUp`, `divideAndCeil`,
`multiplyAndNormalizeUp`, ...) with YARN's integer rounding, which the unit tests' numbers depend on.
Ratios are Python floats where Java uses float; the tests restated here do not tell them apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Resource:
    """Memory in MB and vcores (YARN's `Resource`, without the extended resource types)."""

    memory: int
    vcores: int

    def __add__(self, other: Resource) -> Resource:
        return Resource(self.memory + other.memory, self.vcores + other.vcores)

    def __sub__(self, other: Resource) -> Resource:
        return Resource(self.memory - other.memory, self.vcores - other.vcores)

    def times(self, count: int) -> Resource:
        return Resource(self.memory * count, self.vcores * count)

    def componentwise_min(self, other: Resource) -> Resource:
        """`Resources.componentwiseMin`."""
        return Resource(min(self.memory, other.memory), min(self.vcores, other.vcores))

    def multiply_round_down(self, by: float) -> Resource:
        """`Resources.multiplyAndRoundDown`: each component times `by`, truncated."""
        return Resource(math.floor(self.memory * by), math.floor(self.vcores * by))

    def __str__(self) -> str:
        return f"<memory:{self.memory}, vCores:{self.vcores}>"


NONE = Resource(0, 0)


def _round_up(value: int, step: int) -> int:
    return value if step == 0 else -(-value // step) * step


def _round_down(value: int, step: int) -> int:
    return value if step == 0 else (value // step) * step


class ResourceCalculator:
    """What the Capacity Scheduler asks of a calculator (`ResourceCalculator`): memory only here."""

    name = "DefaultResourceCalculator"

    def compare(self, cluster: Resource, a: Resource, b: Resource) -> int:
        """Negative, zero or positive as `a` is less than, equal to or more than `b`."""
        return (a.memory > b.memory) - (a.memory < b.memory)

    def ratio(self, a: Resource, b: Resource) -> float:
        """How many times `b` goes into `a` (`ResourceCalculator.ratio`)."""
        return a.memory / b.memory if b.memory else 0.0

    def fits_in(self, smaller: Resource, bigger: Resource) -> bool:
        return smaller.memory <= bigger.memory

    def divide_and_ceil(self, a: Resource, by: float) -> Resource:
        """`divideAndCeil`: each counted component over `by`, rounded up (0 for a zero divisor)."""
        if by == 0:
            return NONE
        return Resource(math.ceil(a.memory / by), a.vcores)

    def round_up(self, a: Resource, step: Resource) -> Resource:
        return Resource(_round_up(a.memory, step.memory), a.vcores)

    def round_down(self, a: Resource, step: Resource) -> Resource:
        return Resource(_round_down(a.memory, step.memory), a.vcores)

    def multiply_normalize_up(self, a: Resource, by: float, step: Resource) -> Resource:
        """`multiplyAndNormalizeUp`: `a * by`, rounded up to a multiple of `step`."""
        return Resource(_round_up(math.ceil(a.memory * by), step.memory), a.vcores)

    def multiply_normalize_down(self, a: Resource, by: float, step: Resource) -> Resource:
        """`multiplyAndNormalizeDown`: `a * by`, rounded down to a multiple of `step`."""
        return Resource(_round_down(math.floor(a.memory * by), step.memory), a.vcores)

    def is_zero(self, a: Resource) -> bool:
        return a.memory == 0

    # -- derived, as `Resources` builds them from `compare` -------------------------------------

    def less_than(self, cluster: Resource, a: Resource, b: Resource) -> bool:
        return self.compare(cluster, a, b) < 0

    def greater_than(self, cluster: Resource, a: Resource, b: Resource) -> bool:
        return self.compare(cluster, a, b) > 0

    def at_least(self, cluster: Resource, a: Resource, b: Resource) -> bool:
        return self.compare(cluster, a, b) >= 0

    def at_most(self, cluster: Resource, a: Resource, b: Resource) -> bool:
        return self.compare(cluster, a, b) <= 0

    def max(self, cluster: Resource, a: Resource, b: Resource) -> Resource:
        return a if self.compare(cluster, a, b) >= 0 else b

    def min(self, cluster: Resource, a: Resource, b: Resource) -> Resource:
        return a if self.compare(cluster, a, b) <= 0 else b


class DominantResourceCalculator(ResourceCalculator):
    """DRF: compare dominant shares of the cluster, then the next share; fit every resource."""

    name = "DominantResourceCalculator"

    def _shares(self, cluster: Resource, a: Resource) -> tuple[float, float]:
        memory = a.memory / cluster.memory if cluster.memory else 0.0
        vcores = a.vcores / cluster.vcores if cluster.vcores else 0.0
        return max(memory, vcores), min(memory, vcores)

    def compare(self, cluster: Resource, a: Resource, b: Resource) -> int:
        if a == b:
            return 0
        left, right = self._shares(cluster, a), self._shares(cluster, b)
        return (left > right) - (left < right)

    def ratio(self, a: Resource, b: Resource) -> float:
        memory = a.memory / b.memory if b.memory else 0.0
        vcores = a.vcores / b.vcores if b.vcores else 0.0
        return max(memory, vcores)

    def fits_in(self, smaller: Resource, bigger: Resource) -> bool:
        return smaller.memory <= bigger.memory and smaller.vcores <= bigger.vcores

    def divide_and_ceil(self, a: Resource, by: float) -> Resource:
        if by == 0:
            return NONE
        return Resource(math.ceil(a.memory / by), math.ceil(a.vcores / by))

    def round_up(self, a: Resource, step: Resource) -> Resource:
        return Resource(_round_up(a.memory, step.memory), _round_up(a.vcores, step.vcores))

    def round_down(self, a: Resource, step: Resource) -> Resource:
        return Resource(_round_down(a.memory, step.memory), _round_down(a.vcores, step.vcores))

    def multiply_normalize_up(self, a: Resource, by: float, step: Resource) -> Resource:
        return Resource(
            _round_up(math.ceil(a.memory * by), step.memory), _round_up(math.ceil(a.vcores * by), step.vcores)
        )

    def multiply_normalize_down(self, a: Resource, by: float, step: Resource) -> Resource:
        return Resource(
            _round_down(math.floor(a.memory * by), step.memory), _round_down(math.floor(a.vcores * by), step.vcores)
        )

    def is_zero(self, a: Resource) -> bool:
        return a.memory == 0 and a.vcores == 0


# The names `yarn.scheduler.capacity.resource-calculator` accepts: the class's simple or full name.
CALCULATORS: dict[str, type[ResourceCalculator]] = {
    "DefaultResourceCalculator": ResourceCalculator,
    "DominantResourceCalculator": DominantResourceCalculator,
}
