"""Requests: TrafficSource -> RequestsRouting -> RequestsProcessing -> RequestsComplete / Failed.

The request path of seeds 000/002. Each stock's `add` / `remove` carries the model logic and
schedules the next movement, so every step of a request's life is a movement on the schedule.
With no active replica, routing parks requests in RequestsBuffered (as Knative's activator does)
until one becomes active, the buffer is full or their timeout passes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from functools import partial
from itertools import dropwhile
from operator import gt
from typing import Any, Protocol

from mypy_extensions import mypyc_attr

from skenario.core.clock import Clock
from skenario.core.entity import Entity
from skenario.core.environment import Environment
from skenario.core.stats import LatencyHistogram
from skenario.core.stocks import KeyedStock, Sink, SinkStock, Source, ThroughStock

# Where a request is in its life; kept on the request so a timeout knows what to undo.
ROUTING = 0
BUFFERED = 1
WAITING = 2  # on a replica, waiting for a concurrency slot
CPU = 3
IO = 4
DONE = 5


class Request(Entity):
    """A request. `failure` names why it failed, if it did."""

    __slots__ = ("arrived_at", "cls", "failure", "processing", "stage")
    kind = "Request"

    def __init__(self, id: int, arrived_at: int, cls: int = 0) -> None:
        self.id = id
        self.arrived_at = arrived_at
        self.cls = cls  # index of its request class; 0 when the workload has none
        self.stage = ROUTING
        self.processing: Processing | None = None  # where routing sent it, for a timeout to take it from
        self.failure: str | None = None


class Processing(ThroughStock["Request"], Protocol):
    """What the request path needs of a replica's requests (model/processing.RequestsProcessing).

    Routing sends a request to it if it has room (`capacity` None means always); a timeout takes
    the request back out of it.
    """

    @property
    def capacity(self) -> int | None: ...

    @property
    def overflow(self) -> str:
        """The failure cause of a request that finds no room: its queue is full."""
        ...

    def has_room(self) -> bool: ...


class Routable(Protocol):
    """What routing needs of the replica a routing policy picks (model/replicas.Replica)."""

    @property
    def processing(self) -> Processing: ...


@mypyc_attr(allow_interpreted_subclasses=True)
class RequestsComplete(Sink[Request]):
    """Completed requests: counted and their latency recorded, not kept.

    Latencies go to a window histogram that a recorder takes each interval (`take_window`) and
    that is folded into the whole run's histogram then, so each request is recorded once.
    """

    __slots__ = ("_env", "_record", "_total", "abandoned", "abandoned_done", "by_class", "window")

    def __init__(self, env: Environment, classes: int = 0, abandoned: set[Request] | None = None) -> None:
        super().__init__("RequestsComplete", "Request")
        self._env = env
        # Attempts their clients gave up on while a server worked on them: they count apart.
        self.abandoned: set[Request] = abandoned if abandoned is not None else set()
        self.abandoned_done = 0
        self._total = LatencyHistogram()
        self.window = LatencyHistogram()
        self._record = self.window.record
        # With request classes, each class's latencies over the whole run as well.
        self.by_class = [LatencyHistogram() for _ in range(classes)] if classes else None

    def add(self, entity: Request) -> None:
        entity.stage = DONE
        abandoned = self.abandoned
        if abandoned and entity in abandoned:  # nobody waits for this response any more
            abandoned.discard(entity)
            self.abandoned_done += 1
            return
        self._count += 1
        latency = self._env._now - entity.arrived_at
        self._record(latency)
        if self.by_class is not None:
            self.by_class[entity.cls].record(latency)

    def add_many(self, latency: int, count: int) -> None:
        """`count` requests completed now, each after `latency` ns: a fluid run's completions (no entities)."""
        self._count += count
        self.window.record_many(latency, count)

    def take_window(self) -> LatencyHistogram:
        """The latencies since the last call; they stay counted in `latency`."""
        window = self.window
        self._total.merge(window)
        self.window = LatencyHistogram()
        self._record = self.window.record
        return window

    @property
    def latency(self) -> LatencyHistogram:
        """Every completed request's latency so far, as a copy: reading it leaves the window alone."""
        merged = LatencyHistogram()
        merged.merge(self._total)
        merged.merge(self.window)
        return merged


class RequestsFailed(Sink[Request]):
    """Failed requests, counted by reason."""

    __slots__ = ("abandoned", "abandoned_done", "by_class", "reasons")

    def __init__(self, abandoned: set[Request] | None = None) -> None:
        super().__init__("RequestsFailed", "Request")
        self.reasons: Counter[str] = Counter()
        self.by_class: Counter[int] = Counter()
        self.abandoned: set[Request] = abandoned if abandoned is not None else set()  # as RequestsComplete's
        self.abandoned_done = 0

    def add(self, entity: Request) -> None:
        entity.stage = DONE
        abandoned = self.abandoned
        if abandoned and entity in abandoned:  # its client had given up on it already
            abandoned.discard(entity)
            self.abandoned_done += 1
            return
        self._count += 1
        self.reasons[entity.failure or "unknown"] += 1
        self.by_class[entity.cls] += 1

    def add_many(self, reason: str, count: int) -> None:
        """`count` requests failed now for `reason`: a fluid run's failures (no entities)."""
        if count:
            self._count += count
            self.reasons[reason] += count


@mypyc_attr(allow_interpreted_subclasses=True)
class RequestsBuffered(KeyedStock[Request]):
    """Requests waiting for a replica to become active, in arrival order, up to `capacity`.

    `in_path` is True when routing sends every request here, not only those arriving while no
    replica is active: Knative's activator in Proxy mode (model/activator.py).
    """

    __slots__ = ("_area", "_clock", "capacity", "in_path")

    def __init__(self, clock: Clock, capacity: int) -> None:
        super().__init__("RequestsBuffered", "Request")
        self._clock = clock
        self.capacity = capacity
        self.in_path = False
        self._area = 0  # departure times of those gone minus arrival times of all (see held_area)

    def has_room(self) -> bool:
        return len(self._items) < self.capacity

    def add(self, entity: Request) -> None:
        entity.stage = BUFFERED
        self._items[entity] = None
        self._area -= self._clock.now()

    def remove(self, entity: Request | None = None) -> Request | None:
        request = super().remove(entity)
        if request is not None:
            self._area += self._clock.now()
        return request

    def held_area(self) -> int:
        """Integral of the requests held over time, in request-ns, up to now (its rate is their mean number)."""
        return self._area + len(self._items) * self._clock.now()

    def oldest_first(self) -> list[Request]:
        return list(self._items)


class RequestsRouting:
    """Sends each arriving request on at once, to the replica `choose` picks.

    With no active replica the request goes to the buffer, or fails if it is full; with no room
    on the chosen replica it fails. A request holds this stock only for the instant of arrival.
    `accepts`, when set (endpoints that outlive their pods' readiness), says whether the chosen
    replica still takes connections; a request sent to one that does not fails as `refused`.
    """

    __slots__ = ("_buffer", "_choose", "_env", "_n", "accepts", "failed", "kind_stocked", "name")

    def __init__(
        self,
        env: Environment,
        choose: Callable[[], Routable | None],
        buffer: RequestsBuffered,
        failed: SinkStock[Request],  # RequestsFailed, or the clients when they retry
        accepts: Callable[[Any], bool] | None = None,
    ) -> None:
        self.name = "RequestsRouting"
        self.kind_stocked = "Request"
        self._env = env
        self._choose = choose
        self._buffer = buffer
        self.failed: Any = failed  # where failures go: RequestsFailed, or the clients when they retry
        self._n = 0
        self.accepts = accepts

    def count(self) -> int:
        return self._n

    def add(self, entity: Request) -> None:
        self._n += 1
        entity.stage = ROUTING
        env = self._env
        now = env._now
        if entity.failure is not None:  # it timed out in the instant it left the buffer
            env.schedule("request_failed", now, self, self.failed, entity)
            return
        if self._buffer.in_path:  # the activator takes every request
            self._to_buffer(entity, now)
            return
        replica = self._choose()
        if replica is not None:
            if self.accepts is not None and not self.accepts(replica):
                entity.failure = "refused"
                env.schedule("request_failed", now, self, self.failed, entity)
                return
            processing = replica.processing
            if processing.capacity is None or processing.has_room():
                entity.processing = processing
                env.schedule("send_to_replica", now, self, processing, entity)
                return
            entity.failure = processing.overflow
            env.schedule("request_failed", now, self, self.failed, entity)
        else:
            self._to_buffer(entity, now)

    def _to_buffer(self, entity: Request, now: int) -> None:
        env = self._env
        if self._buffer.has_room():
            env.schedule("buffer_request", now, self, self._buffer, entity)
        else:
            entity.failure = "buffer_full" if self._buffer.capacity else "no_active_replica"
            env.schedule("request_failed", now, self, self.failed, entity)

    def remove(self, entity: Request | None = None) -> Request | None:
        if entity is None or entity.stage != ROUTING:
            return None
        self._n -= 1
        return entity


class TrafficSource(Source[Request]):
    """Makes a request each time one arrives, and schedules the next arrival then.

    Arrival times come lazily from an iterator, so the schedule holds one future arrival at most.
    A new request is handed to `watch` (the timeouts) as it is made.
    """

    __slots__ = ("_arrivals", "_classify", "_env", "_routing", "_token", "_watch", "arrived_by_class")

    def __init__(
        self,
        env: Environment,
        arrivals: Iterator[int],
        routing: RequestsRouting,
        watch: Callable[[Request], object] | None = None,
        classify: Callable[[], int] | None = None,
        classes: int = 0,
    ) -> None:
        super().__init__("TrafficSource", "Request")
        self._env = env
        self._arrivals = arrivals
        self._routing = routing
        self._watch = watch
        self._classify = classify  # draws each request's class; None when there are none
        self.arrived_by_class = [0] * classes
        # Each scheduled arrival carries the token of the arrival stream that made it, so an
        # arrival of a stream since replaced finds nothing to give and is ignored.
        self._token: Any = object()

    def start(self) -> None:
        self._schedule_next()

    def replace(self, arrivals: Iterator[int]) -> None:
        """From now on, arrivals come from `arrivals` (times before now are skipped); the next one
        already scheduled from the old stream will not happen."""
        now = self._env.now()
        self._arrivals = dropwhile(partial(gt, now), arrivals)
        self._token = object()
        self._schedule_next()

    def remove(self, entity: Any = None) -> Request | None:
        if entity is not self._token:
            return None  # an arrival of a stream since replaced
        env = self._env
        if self._classify is None:
            request = Request(self.emitted, env._now)
        else:
            cls = self._classify()
            self.arrived_by_class[cls] += 1
            request = Request(self.emitted, env._now, cls)
        self.emitted += 1
        if self._watch is not None:
            self._watch(request)
        at = next(self._arrivals, None)
        if at is not None:
            if at < env._now:
                raise ValueError(f"arrival times must not decrease: {at} ns came after {env._now} ns")
            env.schedule("arrive_at_routing", at, self, self._routing, self._token)
        return request

    def _schedule_next(self) -> None:
        at = next(self._arrivals, None)
        if at is not None:
            env = self._env
            if at < env._now:
                raise ValueError(f"arrival times must not decrease: {at} ns came after {env._now} ns")
            # Time 0 is the start movement's: an arrival there comes 1 ns later.
            env.schedule("arrive_at_routing", at if at > 0 else 1, self, self._routing, self._token)
