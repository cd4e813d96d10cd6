"""YARN's Capacity Scheduler: which application's container a node gets at its heartbeat.

The ResourceManager allocates on node heartbeats (`CapacityScheduler.allocateContainersToNode`):
1. A node holding a reservation tries to fulfil it first, and does nothing else while it stands.
2. Otherwise, while the node has room for the minimum allocation, the root queue assigns one
   container: each parent checks its own limit (`used >= limit` stops it) and visits its children in
   `utilization` order (least used relative to guarantee first, then the larger guarantee); a leaf
   visits its active applications in its ordering policy's order (`fifo`: priority, then
   submission; `fair`: least used first), skips users above their user limit, and gives the first
   application that asks a container of its most urgent request (lowest priority number) if the
   queue's headroom allows: on this node if it fits, else a reservation of this node.
3. Up to `maximum-container-assignments` containers per heartbeat, of which at most
   `maximum-offswitch-assignments` off-switch (locality is not modelled, so every assignment is
   off-switch: one container per heartbeat by default), and none after a reservation.

Applications wait as *pending* until the queue's and the user's AM resource limits let their
ApplicationMaster start (`LeafQueue.activateApplications`); at least one always starts. Reserved
resources count as used by the queue, the user and the application, as upstream counts them.

Left out, and said so in the docs: node labels (one partition), locality and delay scheduling,
re-reservation starvation (`shouldAllocOrReserveNewContainer`'s starvation term), asynchronous
scheduling, application priorities above 0 and queue priorities (`priority-utilization`).
"""

from __future__ import annotations

from collections.abc import Iterator

from skenario.scheduling.queues.applications import AM_PRIORITY, Application, Container, Node, User
from skenario.scheduling.queues.books import QueueBooks, SchedulerBooks
from skenario.scheduling.queues.capacity_config import CapacityConfig, QueueConfig
from skenario.scheduling.queues.resources import NONE, Resource
from skenario.scheduling.queues.user_limit import (
    UserLimitInputs,
    am_limit,
    can_assign_to_user,
    compute_user_limit,
    user_am_limit,
    user_specific_limit,
)


class Queue(QueueBooks):
    """A queue of the Capacity Scheduler: its configuration beside its books."""

    def __init__(self, config: QueueConfig, parent: ParentQueue | None) -> None:
        super().__init__(parent)
        self.config = config

    @property
    def path(self) -> str:
        return self.config.path

    def guarantee(self, cluster: Resource) -> Resource:
        return cluster.multiply_round_down(self.config.absolute_capacity)

    def maximum(self, cluster: Resource) -> Resource:
        return cluster.multiply_round_down(self.config.absolute_maximum_capacity)


class LeafQueue(Queue):
    def user_weight(self, name: str) -> float:
        return self.config.user_weights.get(name, 1.0)


class ParentQueue(Queue):
    def __init__(self, config: QueueConfig, parent: ParentQueue | None) -> None:
        super().__init__(config, parent)
        self.children: list[Queue] = []


class CapacityScheduler(SchedulerBooks):
    """The Capacity Scheduler's state and its allocation on a node heartbeat (one partition)."""

    def __init__(self, config: CapacityConfig, nodes: list[Node]) -> None:
        super().__init__(config.calculator, config.minimum_allocation, nodes)
        self.config = config
        self.leaves: dict[str, LeafQueue] = {}  # type: ignore[assignment]
        self.root = self._build(config.root, None)

    def _build(self, config: QueueConfig, parent: ParentQueue | None) -> Queue:
        if config.is_leaf:
            leaf = LeafQueue(config, parent)
            self.leaves[config.path] = leaf
            return leaf
        queue = ParentQueue(config, parent)
        queue.children = [self._build(child, queue) for child in config.children]
        return queue

    # -- applications ----------------------------------------------------------------------------

    def submit(self, app: Application) -> str | None:
        """Add an application to its leaf; returns why it is rejected (None if accepted)."""
        leaf = self.leaves[app.queue]
        if leaf.apps >= leaf.config.maximum_applications:
            return (
                f"queue {leaf.path} already has {leaf.apps} applications "
                f"(maximum-applications {leaf.config.maximum_applications})"
            )
        self._enqueue(app)
        self.activate(leaf)
        return None

    def activate(self, leaf: LeafQueue) -> list[Application]:
        """Start the AMs the queue's and users' AM limits allow: `LeafQueue.activateApplications`."""
        started = []
        rc, cluster, config = self.rc, self.cluster, leaf.config
        guarantee = leaf.guarantee(cluster)
        limit = am_limit(rc, guarantee, config.maximum_am_resource_percent, self.minimum)
        for app in list(leaf.pending):
            user = leaf.user(app.user)
            am = NONE if app.unmanaged_am else app.am_resource
            if_started = leaf.am_used + am
            lone = not leaf.active or rc.is_zero(leaf.am_used)  # at least one AM always starts
            if rc.greater_than(cluster, if_started, limit) and not lone:
                continue
            active_users = sum(1 for u in leaf.users.values() if u.active_apps > 0) or 1
            user_limit = user_am_limit(
                rc,
                guarantee,
                config.maximum_am_resource_percent,
                config.minimum_user_limit_percent,
                active_users,
                user.weight,
                config.user_limit_factor,
                self.minimum,
                limit,
                cluster,
            )
            user_lone = user.active_apps == 0 or rc.is_zero(user.am_used)
            if rc.greater_than(cluster, user.am_used + am, user_limit) and not user_lone:
                continue
            leaf.pending.remove(app)
            leaf.pending_am -= app.am_resource
            leaf.active.append(app)
            leaf.am_used = leaf.am_used + am
            user.am_used = user.am_used + am
            user.active_apps += 1
            self._started(app)
            if not app.unmanaged_am:
                self.ask(app, AM_PRIORITY, app.am_resource, 1)
            started.append(app)
        return started

    def finish(self, app: Application) -> None:
        """The application is done: its reservations go, its AM's share is returned, others may start."""
        leaf = self.leaves[app.queue]
        self._drop(app)
        if app.active:
            leaf.active.remove(app)
            user = leaf.user(app.user)
            am = NONE if app.unmanaged_am else app.am_resource
            leaf.am_used = leaf.am_used - am
            user.am_used = user.am_used - am
            user.active_apps -= 1
        self.activate(leaf)

    # -- a node heartbeat ------------------------------------------------------------------------

    def node_update(self, node: Node, now: int) -> list[Container]:
        """Allocate on `node` as its heartbeat does; returns the containers allocated (not reservations)."""
        self.now = now
        allocated: list[Container] = []
        offswitch = 0
        config = self.config
        while True:
            if node.reservation is not None:
                container = self._fulfil(node)
                if container is None:
                    return allocated
                allocated.append(container)
            else:
                if not self.rc.fits_in(self.minimum, node.unallocated) or self.rc.is_zero(node.unallocated):
                    return allocated
                outcome = self._assign(self.root, node, self.cluster)
                if not isinstance(outcome, Container):
                    return allocated
                if outcome is node.reservation:
                    return allocated  # a reservation ends the heartbeat
                allocated.append(outcome)
                offswitch += 1  # every ask is ANY: an off-switch assignment
            assignments = len(allocated)
            if not config.multiple_assignments or offswitch >= config.maximum_offswitch_assignments:
                return allocated
            if config.maximum_container_assignments != -1 and assignments >= config.maximum_container_assignments:
                return allocated

    def _fulfil(self, node: Node) -> Container | None:
        """`allocateFromReservedContainer`: the reservation becomes a container once the node has room."""
        reserved = node.reservation
        assert reserved is not None
        if not self._fits(reserved.resource, node.unallocated):
            return None
        self._unreserve(reserved)
        app = reserved.app
        if reserved.priority not in app.asks:
            return None
        return self._allocate(app, reserved.priority, app.asks[reserved.priority][0], node)

    def _assign(self, queue: Queue, node: Node, limit: Resource) -> Container | None:
        if isinstance(queue, LeafQueue):
            return self._assign_leaf(queue, node, limit)
        assert isinstance(queue, ParentQueue)
        rc, cluster = self.rc, self.cluster
        if rc.at_least(cluster, queue.used, limit):
            return None  # canAssignToThisQueue: this queue is at its limit
        for child in self.children_in_order(queue):
            # ParentQueue.getResourceLimitsOfChild: min(my limit - my used + child used, child max), rounded down.
            child_limit = (limit - queue.used + child.used).componentwise_min(child.maximum(cluster))
            child_limit = rc.round_down(child_limit, self.minimum)
            outcome = self._assign(child, node, child_limit)
            if outcome is not None:
                return outcome
        return None

    def children_in_order(self, queue: ParentQueue) -> list[Queue]:
        """`utilization` ordering: the smaller used capacity first, then the larger guarantee (stable)."""
        return sorted(queue.children, key=lambda q: (self.used_capacity(q), -q.config.absolute_capacity))

    def used_capacity(self, queue: Queue) -> float:
        """Used over guarantee (`QueueCapacities.usedCapacity`); a queue without a guarantee that uses anything is 1."""
        guarantee = queue.guarantee(self.cluster)
        if self.rc.is_zero(guarantee):
            return 0.0 if self.rc.is_zero(queue.used) else 1.0
        if self.rc.name == "DominantResourceCalculator":
            shares = self.rc.ratio(queue.used, self.cluster), self.rc.ratio(guarantee, self.cluster)
            return shares[0] / shares[1] if shares[1] else 0.0
        return self.rc.ratio(queue.used, guarantee)

    def _apps_in_order(self, leaf: LeafQueue) -> Iterator[Application]:
        # Only applications that ask: the others would be skipped (`hasPendingResourceRequest`).
        if leaf.config.ordering_policy == "fair":
            # FairOrderingPolicy: less used first (memory, as its comparator reads it), then submission.
            yield from sorted(leaf.asking, key=lambda a: (a.used.memory, a.order))
        else:
            yield from sorted(leaf.asking, key=lambda a: a.order)

    def user_limit(self, leaf: LeafQueue, user: User) -> Resource:
        """The user's own limit now: `computeUserLimit`, then its weight."""
        rc, cluster = self.rc, self.cluster
        active = [u for u in leaf.users.values() if u.asking_apps > 0]
        active_used = NONE
        for u in active:
            active_used = active_used + u.used
        inputs = UserLimitInputs(
            cluster=cluster,
            guarantee=leaf.guarantee(cluster),
            max_capacity=leaf.maximum(cluster),
            minimum_allocation=self.minimum,
            consumed_ratio=sum(rc.ratio(u.used, cluster) for u in leaf.users.values()),
            active_used=active_used,
            active_weights=sum(u.weight for u in active),
            user_limit_percent=leaf.config.minimum_user_limit_percent,
            user_limit_factor=leaf.config.user_limit_factor,
        )
        return user_specific_limit(rc, compute_user_limit(rc, inputs), user.weight, self.minimum)

    def _assign_leaf(self, leaf: LeafQueue, node: Node, limit: Resource) -> Container | None:
        rc, cluster = self.rc, self.cluster
        limit = limit.componentwise_min(leaf.maximum(cluster))
        for app in self._apps_in_order(leaf):
            if rc.at_least(cluster, leaf.used, limit):
                return None  # the queue's maximum capacity (or its parent's) is reached
            user = leaf.user(app.user)
            if not can_assign_to_user(rc, cluster, user.used, self.user_limit(leaf, user)):
                continue
            priority = min(p for p, (_, count) in app.asks.items() if count > 0)
            size = app.asks[priority][0]
            if not rc.at_least(cluster, limit - leaf.used, size):
                return None  # the queue's headroom is short of the ask (SkippedType.QUEUE_LIMIT)
            if not self._fits(size, node.capability):
                continue  # this node can never hold it
            if self._fits(size, node.unallocated):
                return self._allocate(app, priority, size, node)
            reserved = sum(1 for c in app.reserved if c.priority == priority)
            if app.asks[priority][1] > reserved:
                return self._reserve(app, priority, size, node)
            return None  # respect FIFO: the first application that could not be served ends the visit
        return None

    def _fits(self, size: Resource, free: Resource) -> bool:
        """The calculator's `fitsIn`: memory only by default, so vcores may be overcommitted as YARN does."""
        return self.rc.fits_in(size, free)

    # -- why an application waits ----------------------------------------------------------------

    def why_waiting(self, app: Application) -> str:
        """What stops the application now, in the Capacity Scheduler's terms (its AM diagnostics)."""
        rc, cluster, leaf = self.rc, self.cluster, self.leaves[app.queue]
        config = leaf.config
        user = leaf.user(app.user)
        if app in leaf.pending:
            limit = am_limit(rc, leaf.guarantee(cluster), config.maximum_am_resource_percent, self.minimum)
            if rc.greater_than(cluster, leaf.am_used + app.am_resource, limit):
                return (
                    f"pending: queue {leaf.path}'s AMs use {leaf.am_used.memory} MB of its AM limit of "
                    f"{limit.memory} MB (maximum-am-resource-percent {config.maximum_am_resource_percent:g}), "
                    f"and this AM needs {app.am_resource.memory} MB"
                )
            return f"pending: user {app.user}'s AMs use {user.am_used.memory} MB, its AM limit in {leaf.path}"
        priority = min(p for p, (_, count) in app.asks.items() if count > 0)
        size = app.asks[priority][0]
        what = "its AM container" if priority == AM_PRIORITY else f"a container of {size.memory} MB"
        for queue in leaf.ancestry():
            assert isinstance(queue, Queue)
            maximum = queue.maximum(cluster)
            if not rc.fits_in(queue.used + size, maximum):
                return (
                    f"waiting for {what}: queue {queue.path} uses {queue.used.memory} MB of its maximum "
                    f"{maximum.memory} MB (maximum-capacity {queue.config.maximum_capacity:g}%)"
                )
        limit = self.user_limit(leaf, user)
        if rc.greater_than(cluster, user.used, limit):
            return (
                f"waiting for {what}: user {app.user} uses {user.used.memory} MB in {leaf.path}, above its user "
                f"limit of {limit.memory} MB (minimum-user-limit-percent {config.minimum_user_limit_percent:g}, "
                f"user-limit-factor {config.user_limit_factor:g})"
            )
        if app.reserved:
            node = app.reserved[0].node
            free = node.unallocated.memory
            return f"waiting for {what}: it holds a reservation on {node.name}, which has {free} MB free"
        return f"waiting for {what}: no node has {size.memory} MB free at its heartbeat"
