"""The books both YARN schedulers keep: each queue's usage and asks, and each application's containers.

`SchedulerApplicationAttempt` and `AppSchedulingInfo` keep the same accounts under the Capacity and
the Fair Scheduler: an application's asks by priority (each a size and a count), what it uses, its
reservations, and each queue's usage up to the root. What differs is said by a flag and two hooks:
whether a reservation counts as used (`SchedulerBooks.reservations_used`: it does in the Capacity
Scheduler's queue accounts, not in the Fair Scheduler's), how an ask is rounded (`normalise`), and
what an AM container's allocation adds (`am_allocated`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from skenario.scheduling.queues.applications import AM_PRIORITY, Application, Container, Node, User
from skenario.scheduling.queues.resources import NONE, Resource, ResourceCalculator


class QueueBooks:
    """A queue's accounts; a leaf's also hold its applications and users."""

    def __init__(self, parent: QueueBooks | None) -> None:
        self.parent = parent
        self.used = NONE
        self.pending: list[Application] = []  # not yet activated (Capacity) or runnable (Fair), in order
        self.active: list[Application] = []
        self.asking: dict[Application, None] = {}  # active applications with asks outstanding
        self.asked = NONE  # what they ask for, together
        self.pending_am = NONE  # the AM containers of the pending applications, together
        self.am_used = NONE
        self.apps = 0  # submitted and not finished
        self.users: dict[str, User] = {}

    def user(self, name: str) -> User:
        user = self.users.get(name)
        if user is None:
            user = self.users[name] = User(name, self.user_weight(name))
        return user

    def user_weight(self, name: str) -> float:
        return 1.0

    def ancestry(self) -> Iterator[QueueBooks]:
        queue: QueueBooks | None = self
        while queue is not None:
            yield queue
            queue = queue.parent


class SchedulerBooks:
    """Asks, allocations, reservations and releases, as both schedulers book them."""

    reservations_used: ClassVar[bool] = True

    def __init__(self, rc: ResourceCalculator, minimum: Resource, nodes: list[Node]) -> None:
        self.rc = rc
        self.minimum = minimum
        self.nodes = {node.name: node for node in nodes}
        self.cluster = NONE
        for node in nodes:
            self.cluster = self.cluster + node.capability
        self.leaves: dict[str, QueueBooks] = {}
        self.asking = 0  # active applications with asks outstanding, in every leaf
        self.now = 0
        self._ids = 0
        self._submitted = 0

    def _enqueue(self, app: Application) -> QueueBooks:
        """The application joins its leaf, waiting to be started; returns the leaf."""
        leaf = self.leaves[app.queue]
        app.order = self._submitted
        self._submitted += 1
        leaf.apps += 1
        leaf.user(app.user)
        leaf.pending.append(app)
        leaf.pending_am += app.am_resource
        return leaf

    def normalise(self, size: Resource) -> Resource:
        """An ask rounded up to a multiple of the minimum allocation, and at least that."""
        rounded = self.rc.round_up(size, self.minimum)
        return Resource(max(rounded.memory, self.minimum.memory), max(rounded.vcores, self.minimum.vcores))

    def ask(self, app: Application, priority: int, size: Resource, count: int) -> None:
        """The application asks for `count` more containers of `size` at `priority` (normalised up)."""
        if count <= 0:
            return
        size = self.normalise(size)
        old = app.asks.get(priority)
        if old is not None and old[0] != size:
            raise ValueError(f"{app.id} asks {size} at priority {priority}, where it asked {old[0]}")
        app.asks[priority] = (size, count + (old[1] if old else 0))
        app.asked += count
        if app.active:
            self.leaves[app.queue].asked += size.times(count)
            if app.asked == count:
                self._asking(app, True)

    def _started(self, app: Application) -> None:
        """The application may now be given containers: asks it made before count from now."""
        app.active = True
        if app.asked:
            self.leaves[app.queue].asked += total_asked(app)
            self._asking(app, True)

    def _asking(self, app: Application, now: bool) -> None:
        """The application starts (or stops) asking: its user is active while one of its applications asks."""
        leaf = self.leaves[app.queue]
        user = leaf.user(app.user)
        if now:
            leaf.asking[app] = None
            user.asking_apps += 1
            self.asking += 1
        else:
            del leaf.asking[app]
            user.asking_apps -= 1
            self.asking -= 1

    def _drop(self, app: Application) -> None:
        """The application is done: its reservations and asks go."""
        for container in list(app.reserved):
            self._unreserve(container)
        if app.asked and app.active:
            self.leaves[app.queue].asked -= total_asked(app)
            self._asking(app, False)
        app.asks.clear()
        app.asked = 0
        app.finished = True
        leaf = self.leaves[app.queue]
        leaf.apps -= 1
        if app in leaf.pending:
            leaf.pending.remove(app)
            leaf.pending_am -= app.am_resource

    def release(self, container: Container) -> None:
        """A container ended: its node, application, user and queues get its resources back."""
        container.node.allocated = container.node.allocated - container.resource
        self._charge(container.app, NONE - container.resource)

    def unreserve(self, container: Container) -> None:
        """Drop a reservation (the Capacity Scheduler's preemption takes reservations first)."""
        self._unreserve(container)

    def _charge(self, app: Application, amount: Resource) -> None:
        app.used = app.used + amount
        leaf = self.leaves[app.queue]
        user = leaf.user(app.user)
        user.used = user.used + amount
        for queue in leaf.ancestry():
            queue.used = queue.used + amount

    def _allocate(self, app: Application, priority: int, size: Resource, node: Node) -> Container:
        self._ids += 1
        container = Container(self._ids, app, priority, size, node, self.now, is_am=priority == AM_PRIORITY)
        node.allocated = node.allocated + size
        self._charge(app, size)
        asked, count = app.asks[priority]
        if count <= 1:
            del app.asks[priority]
        else:
            app.asks[priority] = (asked, count - 1)
        app.asked -= 1
        self.leaves[app.queue].asked -= asked
        if not app.asked:
            self._asking(app, False)
        extra = sum(1 for c in app.reserved if c.priority == priority) - app.asks.get(priority, (size, 0))[1]
        for reserved in [c for c in app.reserved if c.priority == priority][: max(extra, 0)]:
            self._unreserve(reserved)  # an ask served elsewhere frees the reservation held for it
        if container.is_am:
            app.am_container = container
            self.am_allocated(app, size)
        return container

    def am_allocated(self, app: Application, size: Resource) -> None:
        """What an AM container's allocation adds to the books (the Fair Scheduler counts AM usage then)."""

    def _reserve(self, app: Application, priority: int, size: Resource, node: Node) -> Container:
        self._ids += 1
        container = Container(self._ids, app, priority, size, node, self.now)
        node.reservation = container
        app.reserved.append(container)
        if self.reservations_used:
            self._charge(app, size)
        return container

    def _unreserve(self, container: Container) -> None:
        container.node.reservation = None
        container.app.reserved.remove(container)
        if self.reservations_used:
            self._charge(container.app, NONE - container.resource)

    def pending_demand(self, leaf: QueueBooks) -> Resource:
        """What the leaf's applications still ask for, started or not (their AMs included)."""
        return leaf.asked + leaf.pending_am

    def has_demand(self) -> bool:
        """Whether any started application asks for a container."""
        return self.asking > 0


def total_asked(app: Application) -> Resource:
    total = NONE
    for size, count in app.asks.values():
        total = total + size.times(count)
    return total
