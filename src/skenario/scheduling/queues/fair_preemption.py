"""How starved a Fair Scheduler queue is: a pure calculator.

A leaf queue is starved for its fair share when its usage has stayed below
`fairSharePreemptionThreshold` times its (instantaneous) fair share for `fairSharePreemptionTimeout`,
and for its minimum share when it has stayed below `min(minResources, demand)` for
`minSharePreemptionTimeout` (`FSLeafQueue`'s `fairshareStarvation` and `minshareStarvation`). What it
is owed is the larger shortfall, and never more than it asks for. The preemption thread then takes
containers from queues that stay at or above their fair share, and only while the cluster is more
than `preemption.cluster-utilization-threshold` used (`FSPreemptionThread`).
"""

from __future__ import annotations

from skenario.core.time import SECOND
from skenario.scheduling.queues.fair_config import Starvation


def starved_amount(
    used: int,
    fair_share: int,
    min_share: int,
    asked: int,
    starvation: Starvation,
    below_fair_since: int | None,
    below_min_since: int | None,
    now: int,
) -> int:
    """MB the queue is owed now (0 when it is not starved): its shortfalls held past their timeouts."""
    owed = 0
    timeout = starvation.fair_share_timeout_s
    if below_fair_since is not None and timeout is not None and now - below_fair_since >= timeout * SECOND:
        owed = max(owed, int(fair_share * starvation.fair_share_threshold) - used)
    timeout = starvation.min_share_timeout_s
    if below_min_since is not None and timeout is not None and now - below_min_since >= timeout * SECOND:
        owed = max(owed, min_share - used)
    return max(min(owed, asked), 0)
