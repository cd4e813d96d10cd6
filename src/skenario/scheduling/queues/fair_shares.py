"""The Fair Scheduler's fair shares: water-filling by weight between each queue's minimum and maximum.

`ComputeFairShares.computeShares` finds the weight-to-resource ratio R at which the shares
`min(max(weight * R, minShare), maxShare)` of the schedulables add up to what there is to share
(less any fixed shares), by doubling R until the shares cover it and then 25 steps of bisection;
each share is truncated to a whole number. Fixed shares (`getFairShareIfFixed`): a maximum of 0
gives 0; a weight of 0 gives the minimum share; in the instantaneous computation an inactive
queue (no runnable applications) gives 0. The steady share treats every queue as active.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

ITERATIONS = 25  # ComputeFairShares.COMPUTE_FAIR_SHARES_ITERATIONS


@dataclass(frozen=True)
class Schedulable:
    """What the computation reads of a queue or an application, for one resource."""

    weight: float
    min_share: int = 0
    max_share: int = 2**63 - 1
    active: bool = True


def _share(s: Schedulable, ratio: float) -> int:
    """`computeShare`: weight times the ratio, within the minimum and maximum, truncated."""
    return int(min(max(s.weight * ratio, s.min_share), s.max_share))


def _fixed(s: Schedulable, steady: bool) -> int | None:
    """`getFairShareIfFixed`: the share when it does not depend on the ratio (None when it does)."""
    if s.max_share <= 0:
        return 0
    if not steady and not s.active:
        return 0
    if s.weight <= 0:
        return max(s.min_share, 0)
    return None


def compute_shares(schedulables: Sequence[Schedulable], total: int, *, steady: bool = False) -> list[int]:
    """Each schedulable's fair share of `total` (`computeShares`, or `computeSteadyShares` with `steady`)."""
    shares: list[int | None] = [_fixed(s, steady) for s in schedulables]
    taken = sum(share for share in shares if share is not None)
    flexible = [s for s, share in zip(schedulables, shares, strict=True) if share is None]
    if flexible:
        max_total = sum(s.max_share for s in flexible)
        target = min(max(total - taken, 0), max_total)
        r_max = 1.0
        while sum(_share(s, r_max) for s in flexible) < target and math.isfinite(r_max):
            r_max *= 2.0
        left, right = 0.0, r_max
        for _ in range(ITERATIONS):
            mid = (left + right) / 2.0
            planned = sum(_share(s, mid) for s in flexible)
            if planned == target:
                right = mid
                break
            if planned < target:
                left = mid
            else:
                right = mid
        computed = iter([_share(s, right) for s in flexible])
        shares = [next(computed) if share is None else share for share in shares]
    return [share or 0 for share in shares]
