"""What YARN's schedulers allocate and to whom: applications, their containers, users and nodes.

Shared by the Capacity Scheduler and the Fair Scheduler (`FiCaSchedulerApp` and `FSAppAttempt` keep
the same books): an application asks for containers by priority, each ask a size and a count; what
it holds counts its allocated and its reserved containers. A node's unallocated room excludes
reservations, which are tracked on their own, as upstream's `SchedulerNode` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skenario.scheduling.queues.resources import NONE, Resource

AM_PRIORITY = 0  # the AM container's request priority, ahead of any task's


@dataclass(eq=False)
class Container:
    """One allocated (or reserved) container."""

    id: int
    app: Application
    priority: int
    resource: Resource
    node: Node
    allocated_at: int
    is_am: bool = False


@dataclass(eq=False)
class Application:
    """A YARN application (`FiCaSchedulerApp`): its AM, its outstanding asks and what it holds."""

    id: str
    user: str
    queue: str  # the leaf's path
    submitted_at: int
    am_resource: Resource
    unmanaged_am: bool = False  # its AM runs outside the cluster: it asks no AM container (and counts none)
    order: int = 0  # submission order within the scheduler (FIFO's tie-break)
    asks: dict[int, tuple[Resource, int]] = field(default_factory=dict)  # priority: (size, count outstanding)
    used: Resource = NONE  # allocated and reserved
    reserved: list[Container] = field(default_factory=list)
    active: bool = False  # activated (Capacity) or runnable (Fair): it may be given containers
    am_container: Container | None = None
    finished: bool = False
    asked: int = 0  # containers asked for and not yet given, over every priority

    def outstanding(self) -> int:
        return self.asked


@dataclass(eq=False)
class User:
    name: str
    weight: float = 1.0
    used: Resource = NONE
    am_used: Resource = NONE
    active_apps: int = 0
    asking_apps: int = 0  # activated applications with asks outstanding: the user is active while > 0


@dataclass(eq=False)
class Node:
    name: str
    capability: Resource
    allocated: Resource = NONE
    reservation: Container | None = None

    @property
    def unallocated(self) -> Resource:
        return self.capability - self.allocated
