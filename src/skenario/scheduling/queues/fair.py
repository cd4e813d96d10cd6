"""YARN's Fair Scheduler: which application's container a node gets at its heartbeat.

At a node heartbeat (`FairScheduler.attemptScheduling`) a node holding a reservation tries to fulfil
it first; otherwise the root queue assigns one container (more with `assignmultiple`):
1. A queue whose usage already exceeds its `maxResources`, or a node holding a reservation, gets
   nothing (`assignContainerPreCheck`).
2. A parent visits its children in its policy's order; `fair` (`FairShareComparator`, memory): a
   child below its minimum share (capped at its demand) first, the one furthest below it first;
   then the smaller usage over weight; then the earlier start and the name. `drf` compares dominant
   shares of the cluster the same way; `fifo` (leaves) orders applications by submission.
3. A leaf visits its runnable applications that ask, in its policy's order, and stops at the first
   that takes a container. An application whose AM has not started may start it only while the
   leaf's AM usage stays within `maxAMShare` of its instantaneous fair share (`canRunAppAM`).
4. The application's most urgent ask (lowest priority number) is placed on the node if it fits
   every resource there and the queue and its parents stay within `maxResources`; else, within
   `maxResources`, the node is reserved for it.

Applications beyond `maxRunningApps` (of the queue, any parent, or the user) wait non-runnable, in
submission order, until one ends (`MaxRunningAppsEnforcer`).

Left out, and said so in the docs: fair-share and min-share preemption, locality and delay
scheduling, continuous scheduling, size-based weights, queue placement rules (a job names an
existing leaf), and dynamic queues.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from skenario.scheduling.queues.applications import AM_PRIORITY, Application, Container, Node
from skenario.scheduling.queues.books import QueueBooks, SchedulerBooks, total_asked
from skenario.scheduling.queues.fair_config import FairConfig, FairQueueConfig
from skenario.scheduling.queues.fair_shares import Schedulable, compute_shares
from skenario.scheduling.queues.resources import NONE, DominantResourceCalculator, Resource


class FairQueue(QueueBooks):
    """An FSQueue: a parent with children, or a leaf with applications (`pending`: non-runnable)."""

    def __init__(self, config: FairQueueConfig, parent: FairQueue | None) -> None:
        super().__init__(parent)
        self.config = config
        self.children: list[FairQueue] = []
        self.running = 0  # runnable applications in this queue and below (maxRunningApps counts them)
        self.fair_share = NONE

    @property
    def path(self) -> str:
        return self.config.path

    def lineage(self) -> Iterator[FairQueue]:
        """This queue and its parents up to the root."""
        queue: FairQueue | None = self
        while queue is not None:
            yield queue
            queue = queue.parent if isinstance(queue.parent, FairQueue) else None


class FairScheduler(SchedulerBooks):
    """The Fair Scheduler's state and its allocation on a node heartbeat."""

    reservations_used = False  # a reservation is held on its node, not counted in the queue's usage

    def __init__(self, config: FairConfig, nodes: list[Node]) -> None:
        # A node fits a container when every resource does (`Resources.fitsIn`): the dominant calculator's fit.
        super().__init__(DominantResourceCalculator(), config.minimum_allocation, nodes)
        self.config = config
        self.leaves: dict[str, FairQueue] = {}  # type: ignore[assignment]
        self.root = self._build(config.root, None)
        self._running_by_user: dict[str, int] = {}
        self._shares_stale = True

    def _build(self, config: FairQueueConfig, parent: FairQueue | None) -> FairQueue:
        queue = FairQueue(config, parent)
        if config.is_leaf:
            self.leaves[config.path] = queue
        queue.children = [self._build(child, queue) for child in config.children]
        return queue

    def maximum(self, queue: FairQueue) -> Resource:
        return queue.config.max_resources.resolve(self.cluster)

    def minimum_share(self, queue: FairQueue) -> Resource:
        return queue.config.min_resources.resolve(self.cluster)

    # -- applications ----------------------------------------------------------------------------

    def submit(self, app: Application) -> str | None:
        self._enqueue(app)
        self._promote()
        return None

    def _can_run(self, app: Application) -> bool:
        """`MaxRunningAppsEnforcer.canAppBeRunnable`: the user's and every queue's limit up to the root."""
        limit = self.config.user_max_apps.get(app.user, self.config.user_max_apps_default)
        if self._running_by_user.get(app.user, 0) >= limit:
            return False
        return all(q.running < q.config.max_running_apps for q in self.leaves[app.queue].lineage())

    def _promote(self) -> None:
        """Make runnable, in submission order, the waiting applications the limits now allow."""
        waiting = sorted((a for leaf in self.leaves.values() for a in leaf.pending), key=lambda a: a.order)
        for app in waiting:
            if not self._can_run(app):
                continue
            leaf = self.leaves[app.queue]
            leaf.pending.remove(app)
            leaf.pending_am -= app.am_resource
            leaf.active.append(app)
            for queue in leaf.lineage():
                queue.running += 1
            self._running_by_user[app.user] = self._running_by_user.get(app.user, 0) + 1
            leaf.user(app.user).active_apps += 1
            self._shares_stale = True
            self._started(app)
            if not app.unmanaged_am:
                self.ask(app, AM_PRIORITY, app.am_resource, 1)

    def finish(self, app: Application) -> None:
        leaf = self.leaves[app.queue]
        self._drop(app)
        if app.active:
            leaf.active.remove(app)
            for queue in leaf.lineage():
                queue.running -= 1
            self._running_by_user[app.user] -= 1
            leaf.user(app.user).active_apps -= 1
            if app.am_container is not None and not app.unmanaged_am:
                leaf.am_used -= app.am_resource
            self._shares_stale = True
        self._promote()

    # -- fair shares -----------------------------------------------------------------------------

    def update_fair_shares(self) -> None:
        """Instantaneous fair shares top-down (`FSQueue.recomputeShares`): only active queues share."""
        self.root.fair_share = self.cluster
        self._split(self.root)
        self._shares_stale = False

    def _split(self, parent: FairQueue) -> None:
        if not parent.children:
            return
        memory = compute_shares(
            [
                Schedulable(c.config.weight, self.minimum_share(c).memory, self.maximum(c).memory, active=c.running > 0)
                for c in parent.children
            ],
            parent.fair_share.memory,
        )
        vcores = compute_shares(
            [
                Schedulable(c.config.weight, self.minimum_share(c).vcores, self.maximum(c).vcores, active=c.running > 0)
                for c in parent.children
            ],
            parent.fair_share.vcores,
        )
        for child, m, v in zip(parent.children, memory, vcores, strict=True):
            child.fair_share = Resource(m, v)
            self._split(child)

    def _can_run_am(self, leaf: FairQueue, am: Resource) -> bool:
        """`FSLeafQueue.canRunAppAM`: the leaf's AM usage stays within `maxAMShare` of its fair share (memory)."""
        share = leaf.config.max_am_share
        if share == -1:
            return True
        if self._shares_stale:
            self.update_fair_shares()
        base = leaf.fair_share.memory
        if base == 0:  # computeMaxAMResource: no fair share yet, so what is free, within the queue's maximum
            free = self.cluster.memory - self.root.used.memory
            base = min(free, self.maximum(leaf).memory)
        return leaf.am_used.memory + am.memory <= base * share

    # -- a node heartbeat ------------------------------------------------------------------------

    def node_update(self, node: Node, now: int) -> list[Container]:
        self.now = now
        allocated: list[Container] = []
        if node.reservation is not None:
            container = self._fulfil(node)
            if container is not None:
                allocated.append(container)
            if node.reservation is not None:
                return allocated
            if container is not None:
                return allocated  # the reserved container was this heartbeat's assignment
        while node.reservation is None:
            if not self.rc.fits_in(self.minimum, node.unallocated):
                break
            outcome = self._assign(self.root, node)
            if outcome is None or outcome is node.reservation:
                break
            allocated.append(outcome)
            if not self.config.assign_multiple:
                break
        return allocated

    def _fulfil(self, node: Node) -> Container | None:
        """`FSAppAttempt.assignReservedContainer`: kept while the app still asks and the queue may hold it."""
        reserved = node.reservation
        assert reserved is not None
        app = reserved.app
        if reserved.priority not in app.asks or not self._fits_max_share(self.leaves[app.queue], reserved.resource):
            self._unreserve(reserved)
            return None
        if not self.rc.fits_in(reserved.resource, node.unallocated):
            return None
        self._unreserve(reserved)
        return self._allocate(app, reserved.priority, app.asks[reserved.priority][0], node)

    def _fits_max_share(self, leaf: FairQueue, size: Resource) -> bool:
        """`FairScheduler.fitsInMaxShare`: the queue and each parent stay within their maxResources."""
        return all(self.rc.fits_in(q.used + size, self.maximum(q)) for q in leaf.lineage())

    def _assign(self, queue: FairQueue, node: Node) -> Container | None:
        if node.reservation is not None or not self.rc.fits_in(queue.used, self.maximum(queue)):
            return None
        if queue.children:
            for child in sorted(queue.children, key=functools.cmp_to_key(self._comparator(queue))):
                outcome = self._assign(child, node)
                if outcome is not None:
                    return outcome
            return None
        for app in self._apps_in_order(queue):
            outcome = self._assign_app(queue, app, node)
            if outcome is not None:
                return outcome
        return None

    def _apps_in_order(self, leaf: FairQueue) -> list[Application]:
        apps = list(leaf.asking)
        if leaf.config.policy == "fifo":
            return sorted(apps, key=lambda a: a.order)  # FifoPolicy: priority (all 0 here), then submission
        return sorted(apps, key=functools.cmp_to_key(self._comparator(leaf)))

    def _assign_app(self, leaf: FairQueue, app: Application, node: Node) -> Container | None:
        priority = min(p for p, (_, count) in app.asks.items() if count > 0)
        size = app.asks[priority][0]
        if priority == AM_PRIORITY and app.am_container is None and not self._can_run_am(leaf, size):
            return None
        if not self._fits_max_share(leaf, size):
            return None
        if self.rc.fits_in(size, node.unallocated):
            return self._allocate(app, priority, size, node)
        if not self.rc.fits_in(size, node.capability):
            return None
        reserved = sum(1 for c in app.reserved if c.priority == priority)
        if app.asks[priority][1] > reserved:
            return self._reserve(app, priority, size, node)
        return None

    # -- ordering --------------------------------------------------------------------------------

    def _demand(self, item: FairQueue | Application) -> Resource:
        if isinstance(item, Application):
            return item.used + total_asked(item)
        if not item.children:
            demand = item.used + item.asked
        else:
            demand = NONE
            for child in item.children:
                demand = demand + self._demand(child)
        return demand.componentwise_min(self.maximum(item))

    def _comparator(self, parent: FairQueue) -> Callable[[FairQueue | Application, FairQueue | Application], int]:
        drf = parent.config.policy == "drf"

        def facts(item: FairQueue | Application) -> tuple[Resource, Resource, Resource, float, int, str]:
            if isinstance(item, Application):
                return item.used, NONE, self._demand(item), 1.0, item.order, item.id
            return item.used, self.minimum_share(item), self._demand(item), item.config.weight, 0, item.config.name

        def compare(a: FairQueue | Application, b: FairQueue | Application) -> int:
            used_a, min_a, demand_a, weight_a, start_a, name_a = facts(a)
            used_b, min_b, demand_b, weight_b, start_b, name_b = facts(b)
            if (demand_a == NONE) != (demand_b == NONE):  # asking before not asking
                return 1 if demand_a == NONE else -1
            value = self._dominant if drf else _memory
            share_a = value(min_a.componentwise_min(demand_a))
            share_b = value(min_b.componentwise_min(demand_b))
            needy_a, needy_b = value(used_a) < share_a, value(used_b) < share_b
            if needy_a != needy_b:
                return -1 if needy_a else 1
            if needy_a:
                res = _sign(value(used_a) / max(share_a, _one(drf)) - value(used_b) / max(share_b, _one(drf)))
            elif weight_a > 0 and weight_b > 0:
                res = _sign(value(used_a) / weight_a - value(used_b) / weight_b)
            elif weight_a > 0 or weight_b > 0:
                res = -1 if weight_a > 0 else 1
            else:
                res = _sign(value(used_a) - value(used_b))
            if res == 0:
                res = _sign(start_a - start_b)
            if res == 0:
                res = (name_a > name_b) - (name_a < name_b)
            return res

        return compare

    def _dominant(self, amount: Resource) -> float:
        memory = amount.memory / self.cluster.memory if self.cluster.memory else 0.0
        vcores = amount.vcores / self.cluster.vcores if self.cluster.vcores else 0.0
        return max(memory, vcores)

    def am_allocated(self, app: Application, size: Resource) -> None:
        """`FSAppAttempt`: the leaf's AM usage counts from the AM container's allocation."""
        if not app.unmanaged_am:
            self.leaves[app.queue].am_used += size

    # -- why an application waits ----------------------------------------------------------------

    def why_waiting(self, app: Application) -> str:
        """What stops the application now, in the Fair Scheduler's terms."""
        leaf = self.leaves[app.queue]
        if app in leaf.pending:
            limit = self.config.user_max_apps.get(app.user, self.config.user_max_apps_default)
            if self._running_by_user.get(app.user, 0) >= limit:
                return f"non-runnable: user {app.user} runs {limit} applications (maxRunningApps)"
            full = next(q for q in leaf.lineage() if q.running >= q.config.max_running_apps)
            return f"non-runnable: queue {full.path} runs {full.running} applications (maxRunningApps)"
        priority = min(p for p, (_, count) in app.asks.items() if count > 0)
        size = app.asks[priority][0]
        what = "its AM container" if priority == AM_PRIORITY else f"a container of {size.memory} MB"
        if priority == AM_PRIORITY and app.am_container is None and not self._can_run_am(leaf, size):
            return (
                f"waiting for {what}: queue {leaf.path}'s AMs use {leaf.am_used.memory} MB, at its maxAMShare "
                f"{leaf.config.max_am_share:g} of its fair share of {leaf.fair_share.memory} MB"
            )
        for queue in leaf.lineage():
            maximum = self.maximum(queue)
            if not self.rc.fits_in(queue.used + size, maximum):
                return f"waiting for {what}: queue {queue.path} uses {queue.used.memory} MB of its maxResources"
        if app.reserved:
            node = app.reserved[0].node
            free = node.unallocated.memory
            return f"waiting for {what}: it holds a reservation on {node.name}, which has {free} MB free"
        return f"waiting for {what}: other queues and applications come first, or no node has room"


def _memory(amount: Resource) -> float:
    return float(amount.memory)


def _one(drf: bool) -> float:
    return 1e-9 if drf else 1.0


def _sign(value: float) -> int:
    return (value > 0) - (value < 0)
