"""Kueue's admission decisions as pure functions: quota left, flavor assignment and preemption targets.

Quota (classic cohorts): a ClusterQueue may use, of each flavor's resource, its nominal quota plus
its `borrowingLimit` (no limit when unset) as long as its cohort has the room: the cohort lends the
sum of its members' lendable quota (their `lendingLimit`, else their nominal quota), and a member's
use above what it does not lend draws on that pool. Without a cohort a queue has its nominal quota.

Flavor assignment (`flavorassigner`): per resource group, the flavors in their listed order; one
whose taints the pod does not tolerate is skipped. A flavor *fits* when every requested resource
fits its quota left (borrowing if above nominal), *preempts* when it would fit within the queue's
nominal quota (or, with `borrowWithinCohort`, its borrowing limit) once others are gone, and is
*no fit* otherwise. With the default flavor fungibility the search stops at the first flavor that
fits, borrowing or not, and otherwise takes the first that could preempt.

Preemption (`preemption.go`, classic): candidates are workloads using the flavors assigned, in the
preemptor's queue as `withinClusterQueue` allows, and in other queues of the cohort that borrow, as
`reclaimWithinCohort` allows (and, when the preemptor would itself borrow, only lower priorities up
to `borrowWithinCohort`'s threshold). They are taken in order (other queues first, lower priority
first, most recently admitted first, then by name) until the preemptor fits; then each but the
last is put back if the preemptor still fits without it (`minimalPreemptions`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from skenario.scheduling.queues.kueue_config import ClusterQueue, KueueConfig
from skenario.scheduling.taints import TaintEffect, Toleration

Mode = Literal["Fit", "Preempt", "NoFit"]
FlavorResource = tuple[str, str]


@dataclass(eq=False)
class Workload:
    """A workload as Kueue queues it: what it asks for, where and at which priority."""

    name: str
    cluster_queue: str
    priority: int
    created_at: int  # the queue-order timestamp
    requests: Mapping[str, int]  # resource: amount (millicores, bytes, counts), for all its pods
    tolerations: tuple[Toleration, ...] = ()
    usage: dict[FlavorResource, int] = field(default_factory=dict)  # while admitted
    admitted_at: int | None = None


@dataclass(frozen=True)
class Assignment:
    mode: Mode
    flavors: Mapping[str, str]  # resource: flavor
    borrows: bool = False
    message: str = ""

    def usage(self, requests: Mapping[str, int]) -> dict[FlavorResource, int]:
        return {(self.flavors[r], r): amount for r, amount in requests.items() if amount > 0}


class QuotaBook:
    """Each ClusterQueue's usage per flavor and resource (the scheduler's snapshot of the cache)."""

    def __init__(self, config: KueueConfig) -> None:
        self.config = config
        self.usage: dict[str, Counter[FlavorResource]] = {name: Counter() for name in config.cluster_queues}
        self.members: dict[str | None, list[ClusterQueue]] = {}
        for queue in config.cluster_queues.values():
            self.members.setdefault(queue.cohort, []).append(queue)

    def cohort_of(self, queue: ClusterQueue) -> list[ClusterQueue]:
        return [queue] if queue.cohort is None else self.members[queue.cohort]

    def add(self, queue: str, usage: Mapping[FlavorResource, int], sign: int = 1) -> None:
        for key, amount in usage.items():
            self.usage[queue][key] += sign * amount

    def available(self, queue: ClusterQueue, key: FlavorResource) -> int:
        """How much more of `key` the queue may use now, borrowing included."""
        quota = queue.quota(*key)
        if quota is None:
            return 0
        used = self.usage[queue.name][key]
        cap = quota.nominal + quota.borrowing_limit if quota.borrowing_limit is not None else None
        if queue.cohort is None:
            return max(quota.nominal - used, 0)
        pool = pool_used = 0
        for member in self.cohort_of(queue):
            q = member.quota(*key)
            if q is None:
                continue
            pool += q.lendable
            pool_used += max(self.usage[member.name][key] - q.guaranteed, 0)
        room = max(quota.guaranteed - used, 0) + max(pool - pool_used, 0)
        return max(min(room, cap - used) if cap is not None else room, 0)

    def borrowing(self, queue: ClusterQueue, key: FlavorResource) -> bool:
        quota = queue.quota(*key)
        return quota is not None and self.usage[queue.name][key] > quota.nominal


def _tolerated(tolerations: Sequence[Toleration], config: KueueConfig, flavor: str) -> bool:
    taints = config.flavors[flavor].node_taints
    return all(
        any(t.tolerates(taint) for t in tolerations)
        for taint in taints
        if taint.effect in (TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE)
    )


def assign_flavors(book: QuotaBook, workload: Workload) -> Assignment:
    """The flavors for each requested resource, and whether they fit, need preemption, or do not fit."""
    queue = book.config.cluster_queues[workload.cluster_queue]
    requested = {r: a for r, a in workload.requests.items() if a > 0}
    flavors: dict[str, str] = {}
    borrows = False
    worst: Mode = "Fit"
    done: set[str] = set()
    messages: list[str] = []
    for resource in requested:
        if resource in done:
            continue
        group = queue.group_of(resource)
        if group is None:
            return Assignment("NoFit", {}, message=f"resource {resource} unavailable in ClusterQueue {queue.name}")
        wanted = [r for r in group.covered if r in requested]
        done.update(wanted)
        choice: tuple[str, Mode, bool] | None = None
        reasons = []
        preempt_reason = ""
        for flavor, _ in group.flavors:
            if not _tolerated(workload.tolerations, book.config, flavor):
                reasons.append(f"untolerated taint in flavor {flavor}")
                continue
            mode, borrow, reason = _flavor_mode(book, queue, flavor, {r: requested[r] for r in wanted})
            if mode == "Fit":
                choice = (flavor, mode, borrow)
                break  # whenCanBorrow: MayStopSearch
            if reason:
                reasons.append(reason)
            if mode == "Preempt" and choice is None:
                choice = (flavor, mode, borrow)  # whenCanPreempt: TryNextFlavor, keep the first
                preempt_reason = reason
        if choice is None:
            return Assignment("NoFit", {}, message="; ".join(reasons))
        flavor, mode, borrow = choice
        for r in wanted:
            flavors[r] = flavor
        borrows = borrows or borrow
        if mode == "Preempt":
            worst = "Preempt"
            messages.append(preempt_reason)
    return Assignment(worst, flavors, borrows, "; ".join(messages))


def _flavor_mode(
    book: QuotaBook, queue: ClusterQueue, flavor: str, requests: Mapping[str, int]
) -> tuple[Mode, bool, str]:
    mode: Mode = "Fit"
    borrow = False
    reason = ""
    for resource, amount in requests.items():
        key = (flavor, resource)
        quota = queue.quota(*key)
        assert quota is not None
        used = book.usage[queue.name][key]
        if amount <= book.available(queue, key):
            borrow = borrow or used + amount > quota.nominal
            continue
        limit = quota.nominal
        if queue.preemption.borrow_within_cohort != "Never" and queue.cohort is not None:
            limit = quota.nominal + quota.borrowing_limit if quota.borrowing_limit is not None else 2**62
        short = amount - book.available(queue, key)
        policies = queue.preemption
        may_preempt = policies.within_cluster_queue != "Never" or policies.reclaim_within_cohort != "Never"
        if amount <= limit and may_preempt:
            mode = "Preempt"
            reason = f"insufficient unused quota for {resource} in flavor {flavor}, {short} more needed"
        else:
            return "NoFit", False, f"insufficient quota for {resource} in flavor {flavor}, {short} more needed"
    return mode, borrow, reason


def _nominal(queue: ClusterQueue, key: FlavorResource) -> int:
    quota = queue.quota(*key)
    return 0 if quota is None else quota.nominal


def fits(book: QuotaBook, workload: Workload, usage: Mapping[FlavorResource, int]) -> bool:
    queue = book.config.cluster_queues[workload.cluster_queue]
    return all(amount <= book.available(queue, key) for key, amount in usage.items())


def preemption_targets(
    book: QuotaBook, preemptor: Workload, assignment: Assignment, admitted: Sequence[Workload]
) -> list[Workload] | None:
    """The workloads to evict so that `preemptor` fits with `assignment` (None: no set does)."""
    config = book.config
    queue = config.cluster_queues[preemptor.cluster_queue]
    usage = assignment.usage(preemptor.requests)
    keys = set(usage)
    must_borrow = any(book.usage[queue.name][k] + a > _nominal(queue, k) for k, a in usage.items())
    candidates = []
    for w in admitted:
        if not keys & set(w.usage):
            continue
        if w.cluster_queue == queue.name:
            policy = queue.preemption.within_cluster_queue
            lower = w.priority < preemptor.priority
            newer_equal = w.priority == preemptor.priority and w.created_at > preemptor.created_at
            if (policy == "LowerPriority" and lower) or (
                policy == "LowerOrNewerEqualPriority" and (lower or newer_equal)
            ):
                candidates.append(w)
            continue
        other = config.cluster_queues[w.cluster_queue]
        if queue.cohort is None or other.cohort != queue.cohort:
            continue
        if not any(book.borrowing(other, k) for k in keys & set(w.usage)):
            continue
        reclaim = queue.preemption.reclaim_within_cohort
        if reclaim == "Never" or (reclaim == "LowerPriority" and w.priority >= preemptor.priority):
            continue
        if must_borrow:
            threshold = queue.preemption.max_priority_threshold
            if queue.preemption.borrow_within_cohort != "LowerPriority" or w.priority >= preemptor.priority:
                continue
            if threshold is not None and w.priority > threshold:
                continue
        candidates.append(w)
    candidates.sort(key=lambda w: (w.cluster_queue == queue.name, w.priority, -(w.admitted_at or 0), w.name))
    removed: list[Workload] = []
    for victim in candidates:
        book.add(victim.cluster_queue, victim.usage, -1)
        removed.append(victim)
        if fits(book, preemptor, usage):
            break
    else:
        for victim in removed:
            book.add(victim.cluster_queue, victim.usage)
        return None
    for victim in reversed(removed[:-1]):  # put back each one not needed
        book.add(victim.cluster_queue, victim.usage)
        if fits(book, preemptor, usage):
            removed.remove(victim)
        else:
            book.add(victim.cluster_queue, victim.usage, -1)
    for victim in removed:
        book.add(victim.cluster_queue, victim.usage)
    return removed
