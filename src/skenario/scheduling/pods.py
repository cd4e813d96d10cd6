"""Pods as entities in stocks: PodSource -> PodsPending -> PodsBound -> PodsDone.

Every pod is in exactly one of these stocks; pods never leave PodsDone. A pod also carries
KEP-140's `PodResult`: when it was created, bound and preempted, where it went, who preempted
it, and each scheduling attempt (kept only when plugin results are recorded).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Protocol

from skenario.core.entity import Entity
from skenario.core.stocks import KeyedStock, Sink, Source
from skenario.scheduling.attempts import Attempt
from skenario.scheduling.objects import PodSpec


class PodEnd(StrEnum):
    COMPLETED = "completed"  # ran its course (a batch pod's duration; a replica that terminated)
    PREEMPTED = "preempted"
    DELETED = "deleted"  # gone before it was bound
    EVICTED = "evicted"  # its node went away
    REJECTED = "rejected"  # its node's kubelet refused it at admission (phase Failed)


class Pod(Entity):
    """A pod and its scheduling history."""

    __slots__ = (
        "attempts",
        "bound_at",
        "created_at",
        "duration",
        "end",
        "finished_at",
        "node",
        "nominated",
        "owner",
        "preempted_at",
        "preempted_by",
        "spec",
        "tries",
        "unschedulable_since",
    )
    kind = "Pod"

    def __init__(self, id: int, spec: PodSpec, created_at: int, duration: int | None = None, owner: Any = None) -> None:
        self.id = id
        self.spec = spec
        self.created_at = created_at
        self.duration = duration  # ns it runs once bound; None: until something stops it
        self.owner = owner  # the replica it stands for, if any
        self.bound_at: int | None = None
        self.node: str | None = None
        self.nominated: str | None = None
        self.preempted_at: int | None = None
        self.preempted_by: str | None = None
        self.finished_at: int | None = None
        self.end: PodEnd | None = None
        self.unschedulable_since: int | None = None
        # Those that kept their plugin results (see SchedulerSettings); a shared empty tuple until the first.
        self.attempts: list[Attempt] | tuple[()] = ()
        self.tries = 0  # scheduling cycles it went through, kept or not

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def priority(self) -> int:
        return self.spec.priority

    def keep(self, attempt: Attempt) -> None:
        """Keep an attempt with its plugin results (most pods keep none: they share one empty tuple)."""
        if isinstance(self.attempts, tuple):
            self.attempts = [attempt]
        else:
            self.attempts.append(attempt)

    @property
    def wait(self) -> int | None:
        """ns from creation to binding (None while it waits)."""
        return None if self.bound_at is None else self.bound_at - self.created_at

    def wait_until(self, now: int) -> int:
        """ns it waited for a node: until bound, else until deleted, else until `now` (censored)."""
        if self.bound_at is not None:
            return self.bound_at - self.created_at
        end = self.finished_at if self.finished_at is not None else now
        return max(end - self.created_at, 0)

    def result(self) -> dict[str, object]:
        """KEP-140's `PodResult` as plain data."""
        return pod_result(self, [a.to_dict() for a in self.attempts])


class PodFacts(Protocol):
    """What a pod's `PodResult` reads: a `Pod`, or the record of one gone (`departed.PodRecord`)."""

    @property
    def name(self) -> str: ...
    @property
    def created_at(self) -> int: ...
    @property
    def node(self) -> str | None: ...
    @property
    def bound_at(self) -> int | None: ...
    @property
    def preempted_at(self) -> int | None: ...
    @property
    def preempted_by(self) -> str | None: ...
    @property
    def finished_at(self) -> int | None: ...
    @property
    def end(self) -> PodEnd | None: ...


def pod_result(pod: PodFacts, attempts: list[dict[str, object]]) -> dict[str, object]:
    """KEP-140's `PodResult` of a pod, its attempts given as plain data."""
    return {
        "pod": pod.name,
        "createdAt": pod.created_at,
        "boundTo": pod.node,
        "boundAt": pod.bound_at,
        "preemptedAt": pod.preempted_at,
        "preemptedBy": pod.preempted_by,
        "finishedAt": pod.finished_at,
        "end": None if pod.end is None else str(pod.end),
        "scheduleResult": attempts,
    }


class PodSource(Source[Pod]):
    """Makes the next pod with the factory it is given (batch traces or replicas)."""


class PodsPending(KeyedStock[Pod]):
    """Pods waiting for a node. `on_add` tells the scheduler a pod has arrived."""

    __slots__ = ("on_add",)

    def __init__(self) -> None:
        super().__init__("PodsPending", "Pod")
        self.on_add: Callable[[Pod], object] | None = None

    def add(self, entity: Pod) -> None:
        self._items[entity] = None
        if self.on_add is not None:
            self.on_add(entity)


class PodsBound(KeyedStock[Pod]):
    """Pods bound to a node. `on_add` starts what a bound pod does (a batch pod's run, a replica's launch)."""

    __slots__ = ("on_add",)

    def __init__(self) -> None:
        super().__init__("PodsBound", "Pod")
        self.on_add: Callable[[Pod], object] | None = None

    def add(self, entity: Pod) -> None:
        self._items[entity] = None
        if self.on_add is not None:
            self.on_add(entity)


class PodsDone(Sink[Pod]):
    """Pods that are gone, counted by how they ended; `on_add` settles the node's books."""

    __slots__ = ("by_end", "on_add")

    def __init__(self) -> None:
        super().__init__("PodsDone", "Pod")
        self.by_end: dict[PodEnd, int] = dict.fromkeys(PodEnd, 0)
        self.on_add: Callable[[Pod], object] | None = None

    def add(self, entity: Pod) -> None:
        self._count += 1
        if entity.end is not None:
            self.by_end[entity.end] += 1
        if self.on_add is not None:
            self.on_add(entity)
