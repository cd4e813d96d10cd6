"""Requests: TrafficSource -> RequestsRouting -> RequestsProcessing -> RequestsComplete / Failed.

The request path of seeds 000/002. Each stock's `add` / `remove` carries the model logic and
schedules the next movement, so every step of a request's life is a movement on the schedule.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from skenario.core.entity import Entity
from skenario.core.environment import Environment
from skenario.core.stats import LatencyHistogram
from skenario.core.stocks import KeyedStock, Sink, Source

if TYPE_CHECKING:
    from skenario.model.replicas import Replica, ReplicasActive


class Request(Entity):
    """A request. `failure` names why it failed, if it did."""

    __slots__ = ("arrived_at", "failure", "started_at")
    kind = "Request"

    def __init__(self, id: int, arrived_at: int) -> None:
        self.id = id
        self.arrived_at = arrived_at
        self.started_at = -1
        self.failure: str | None = None


class RequestsComplete(Sink[Request]):
    """Completed requests: counted and their latency recorded, not kept."""

    __slots__ = ("_env", "latency")

    def __init__(self, env: Environment) -> None:
        super().__init__("RequestsComplete", "Request")
        self._env = env
        self.latency = LatencyHistogram()

    def add(self, entity: Request) -> None:
        self._count += 1
        self.latency.record(self._env.now() - entity.arrived_at)


class RequestsFailed(Sink[Request]):
    """Failed requests, counted by reason."""

    __slots__ = ("reasons",)

    def __init__(self) -> None:
        super().__init__("RequestsFailed", "Request")
        self.reasons: Counter[str] = Counter()

    def add(self, entity: Request) -> None:
        self._count += 1
        self.reasons[entity.failure or "unknown"] += 1


class RequestsProcessing(KeyedStock[Request]):
    """One replica's requests: up to `concurrency` in service, the rest waiting in FIFO order.

    A request in service completes after a service time drawn from the replica's distribution.
    """

    __slots__ = ("_busy", "_complete", "_env", "_service", "_waiting", "capacity", "concurrency")

    def __init__(
        self,
        name: str,
        env: Environment,
        service_time: Callable[[], int],
        complete: RequestsComplete,
        *,
        concurrency: int = 1,
        capacity: int | None = None,
    ) -> None:
        super().__init__(name, "Request")
        self._env = env
        self._service = service_time
        self._complete = complete
        self._waiting: deque[Request] = deque()
        self._busy = 0
        self.concurrency = concurrency
        self.capacity = capacity

    def has_room(self) -> bool:
        """Whether a new request may join: `capacity` bounds the waiting line, None is unbounded."""
        return self.capacity is None or self._busy < self.concurrency or len(self._waiting) < self.capacity

    def add(self, entity: Request) -> None:
        self._items[entity] = None
        if self._busy < self.concurrency:
            self._busy += 1
            self._start(entity)
        else:
            self._waiting.append(entity)

    def remove(self, entity: Request | None = None) -> Request | None:
        # Only completions take requests out, and they always name the request.
        if entity is None or entity not in self._items:
            return None
        del self._items[entity]
        if self._waiting:
            self._start(self._waiting.popleft())
        else:
            self._busy -= 1
        return entity

    def _start(self, request: Request) -> None:
        env = self._env
        now = env.now()
        request.started_at = now
        env.schedule("complete_request", now + self._service(), self, self._complete, request)


class RequestsRouting(KeyedStock[Request]):
    """Sends each arriving request on at once: round robin over active replicas.

    With no active replica, or no room on the chosen one, the request fails right away.
    """

    __slots__ = ("_active", "_env", "_failed")

    def __init__(self, env: Environment, active: ReplicasActive, failed: RequestsFailed) -> None:
        super().__init__("RequestsRouting", "Request")
        self._env = env
        self._active = active
        self._failed = failed

    def add(self, entity: Request) -> None:
        self._items[entity] = None
        replica: Replica | None = self._active.rotate()
        env = self._env
        if replica is None:
            entity.failure = "no_active_replica"
            env.schedule("request_failed", env.now(), self, self._failed, entity)
        elif not replica.processing.has_room():
            entity.failure = "replica_queue_full"
            env.schedule("request_failed", env.now(), self, self._failed, entity)
        else:
            env.schedule("send_to_replica", env.now(), self, replica.processing, entity)


class TrafficSource(Source[Request]):
    """Makes a request each time one arrives, and schedules the next arrival then.

    Arrival times come lazily from an iterator, so the schedule holds one future arrival at most.
    """

    __slots__ = ("_arrivals", "_env", "_routing")

    def __init__(self, env: Environment, arrivals: Iterator[int], routing: RequestsRouting) -> None:
        super().__init__("TrafficSource", "Request")
        self._env = env
        self._arrivals = arrivals
        self._routing = routing

    def start(self) -> None:
        self._schedule_next()

    def remove(self, entity: Request | None = None) -> Request:
        request = Request(self.emitted, self._env.now())
        self.emitted += 1
        self._schedule_next()
        return request

    def _schedule_next(self) -> None:
        at = next(self._arrivals, None)
        if at is not None:
            self._env.schedule("arrive_at_routing", at, self, self._routing)
