"""How much the Capacity Scheduler's preemption monitor takes back from each leaf queue: a pure calculator.

YARN's `ProportionalCapacityPreemptionPolicy` runs every `monitoring_interval` (3 s). It computes,
level by level from the root, an *ideal* assignment of each parent's share among its children
(`PreemptableResourceCalculator.computeIdealResourceDistribution`, with
`AbstractPreemptableResourceCalculator.computeFixpointAllocation` and `TempQueuePerPartition.offer`):

1. A child starts at its use, or at its guarantee if it uses more (plus what it may not give up:
   the excess of a queue with `disable_preemption`).
2. What the parent has left is offered, round after round, to the most underserved children (the
   smallest ideal over guarantee, ties together), each in proportion to its guarantee among the
   children still asking; a child accepts up to its maximum, its use plus what it asks for, and (a
   leaf) the larger of its guarantee and its use. A child that accepts nothing drops out.
3. Children without a guarantee share what is left the same way, evenly.

A queue using more than its ideal gives up the excess above `max(ideal, min(used + pending,
guarantee))`, scaled down so that a round takes at most `total_preemption_per_round` of the
cluster; a leaf is touched only when it uses more than its guarantee times `1 +
max_ignored_over_capacity`, and then only `natural_termination_factor` of the excess each round.

One resource (memory, as the default calculator compares) and exact fractions: upstream's float
arithmetic can round an offer up by one unit, which these numbers do not reproduce.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction


@dataclass(eq=False)
class PreemptionQueue:
    """One queue as the monitor sees it (`TempQueuePerPartition`), in MB."""

    name: str
    guaranteed: int
    maximum: int
    used: int = 0  # leaves: their own; parents: filled in from their children
    pending: int = 0
    children: list[PreemptionQueue] = field(default_factory=list)
    preemption_disabled: bool = False
    ideal: Fraction = Fraction(0)
    untouchable: int = 0
    preemptable: int = 0
    to_be_preempted: Fraction = Fraction(0)

    def leaves(self) -> list[PreemptionQueue]:
        if not self.children:
            return [self]
        return [leaf for child in self.children for leaf in child.leaves()]


@dataclass(frozen=True)
class PreemptionSettings:
    """`yarn.resourcemanager.monitor.capacity.preemption.*`, with upstream's defaults."""

    monitoring_interval_ms: int = 3000
    max_wait_before_kill_ms: int = 15000
    total_preemption_per_round: float = 0.1
    max_ignored_over_capacity: float = 0.1
    natural_termination_factor: float = 0.2


def _sum_up(queue: PreemptionQueue) -> None:
    """A parent uses and asks what its children do; extras as `updatePreemptableExtras` sets them."""
    for child in queue.children:
        _sum_up(child)
    if queue.children:
        queue.used = sum(c.used for c in queue.children)
        queue.pending = sum(c.pending for c in queue.children)
    over = max(queue.used - queue.guaranteed, 0)
    if not queue.children:
        queue.untouchable, queue.preemptable = (over, 0) if queue.preemption_disabled else (0, over)
    elif queue.preemption_disabled:
        queue.untouchable, queue.preemptable = over, 0
    else:
        queue.preemptable = min(sum(c.preemptable for c in queue.children), over)
        queue.untouchable = over - queue.preemptable


def _ratio(queue: PreemptionQueue) -> Fraction | float:
    """`TQComparator`: ideal over guarantee; a queue without one comes last."""
    return Fraction(queue.ideal) / queue.guaranteed if queue.guaranteed > 0 else math.inf


def _share(queue: PreemptionQueue, needy: list[PreemptionQueue], guarantees: int, even: bool) -> Fraction:
    """`resetCapacity`: the queue's guarantee among the needy ones' (evenly, without guarantees)."""
    if even:
        return Fraction(1, len(needy))
    return Fraction(queue.guaranteed, guarantees) if guarantees else Fraction(0)


def _offer(queue: PreemptionQueue, available: Fraction) -> Fraction:
    """`TempQueuePerPartition.offer`: what the queue accepts of `available`."""
    accepted = min(
        available,
        max(queue.maximum - queue.ideal, Fraction(0)),
        queue.used + queue.pending - queue.ideal,
    )
    if not queue.children:  # a leaf takes no more than the larger of its guarantee and its use
        accepted = min(accepted, max(queue.guaranteed, queue.used) - queue.ideal)
    accepted = max(accepted, Fraction(0))
    queue.ideal += accepted
    return accepted


def _fixpoint(total: Fraction, queues: list[PreemptionQueue], unassigned: Fraction, even: bool) -> Fraction:
    """`computeFixpointAllocation`: returns what is left unassigned."""
    needy = []
    for queue in queues:
        if queue.used > queue.guaranteed:
            queue.ideal = Fraction(min(queue.guaranteed, queue.used) + queue.untouchable)
        else:
            queue.ideal = Fraction(queue.used)
        unassigned -= queue.ideal
        if queue.ideal < queue.used + queue.pending:
            needy.append(queue)
    while needy and unassigned > 0:
        guarantees = sum(q.guaranteed for q in needy)
        share = {
            id(q): Fraction(1, len(needy))
            if even
            else (Fraction(q.guaranteed, guarantees) if guarantees else Fraction(0))
            for q in needy
        }
        lowest = min(_ratio(q) for q in needy)
        underserved = [q for q in needy if _ratio(q) == lowest]
        needy = [q for q in needy if _ratio(q) != lowest]
        this_round = unassigned
        for queue in underserved:
            if unassigned <= 0:
                break
            offered = min(Fraction(math.ceil(this_round * share[id(queue)])), unassigned)
            done = _offer(queue, offered)
            if done > 0:
                needy.append(queue)
            unassigned = max(unassigned - done, Fraction(0))
    return unassigned


def _distribute(parent: PreemptionQueue, allowed: Fraction) -> None:
    """`computeIdealResourceDistribution` among `parent`'s children, then below them."""
    children = parent.children
    total = parent.ideal
    guaranteed = [q for q in children if q.guaranteed > 0]
    unguaranteed = [q for q in children if q.guaranteed <= 0]
    unassigned = _fixpoint(total, guaranteed, Fraction(total), even=False)
    if unguaranteed and unassigned > 0:
        _fixpoint(total, unguaranteed, unassigned, even=True)
    needed = sum((q.used - q.ideal for q in children if q.used > q.ideal), Fraction(0))
    scaling = min(Fraction(1), allowed / needed) if needed > allowed else Fraction(1)
    for queue in children:  # TempQueuePerPartition.assignPreemption
        keep = max(Fraction(min(queue.used + queue.pending, queue.guaranteed)), queue.ideal)
        queue.to_be_preempted = (queue.used - keep) * scaling if queue.used > keep else Fraction(0)
    for queue in children:
        if queue.children:
            _distribute(queue, allowed)


def to_obtain(root: PreemptionQueue, cluster: int, settings: PreemptionSettings) -> dict[str, int]:
    """MB to take back from each leaf this round (`computeIdealAllocation`, then
    `calculateResToObtainByPartitionForLeafQueues`); leaves with nothing to give are left out."""
    _sum_up(root)
    root.ideal = Fraction(root.guaranteed)
    allowed = Fraction(cluster) * _decimal(settings.total_preemption_per_round)
    _distribute(root, allowed)
    out: dict[str, int] = {}
    dead_zone = 1 + _decimal(settings.max_ignored_over_capacity)
    for leaf in root.leaves():
        if leaf.preemption_disabled or not leaf.used > leaf.guaranteed * dead_zone:
            continue
        amount = leaf.to_be_preempted
        if amount > 0:
            amount = Fraction(math.ceil(amount * _decimal(settings.natural_termination_factor)))
        if amount > 0:
            out[leaf.name] = math.ceil(amount)
    return out


def _decimal(value: float) -> Fraction:
    """A setting as the decimal it was written as (0.2, not the binary float nearest it)."""
    return Fraction(str(value))
