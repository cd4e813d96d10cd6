"""The requests waiting for a fluid replica: the routing buffer, or Knative's activator, as a fluid.

While no replica is active the plant's traffic flows in here, as the discrete run's requests go to
`RequestsBuffered` (or to the `Activator`, which is that stock with a KPA). What it holds is a queue
of chunks, each an amount of requests that arrived evenly over a span of time, so that when they
leave, oldest first, each one's wait is known:

- to the replicas, once one is active (`release`: the plant hands them over and records their waits);
- as `timeout`, once they have waited longer than the requests' timeout (their clients give up);
- as `buffer_full`, when the buffer is at its capacity as they arrive (`no_active_replica` with none),
  as `RequestsRouting.add` fails them.

It is read as the discrete stocks are read: `count` and `held_area` (the series, the HPA's
`buffered_requests`), and as the activator: `taken`, `reported_area` (the KPA's activator stat) and
`on_request` (its hooks hear when requests start arriving while none did, as the concurrency
reporter's immediate stat pokes a KPA at zero).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable

from skenario.core.environment import Environment
from skenario.core.time import SECOND


class FluidBuffer:
    """Requests held for want of an active replica, as chunks of (first arrival, last arrival, amount)."""

    kind_stocked = "Request"

    def __init__(
        self, env: Environment, capacity: int, timeout_s: float | None, fail: Callable[[str, float], None]
    ) -> None:
        if capacity < 0:
            raise ValueError(f"a buffer's capacity must be >= 0 requests, got {capacity}")
        self.name = "RequestsBuffered"
        self._env = env
        self.capacity = capacity
        self._timeout = None if timeout_s is None else round(timeout_s * SECOND)
        self._fail = fail  # (reason, how many): the plant's count of failed requests
        self._chunks: deque[list[float]] = deque()  # [first arrival ns, last arrival ns, amount], oldest first
        self._held = 0.0  # what the chunks hold
        self._rate = 0.0  # requests per second flowing in from `_since`
        self._since = env.now()
        self._area = 0.0  # request-s held up to `_since`
        self._arrived = 0.0  # every request that came in, held or failed at the door
        self._announced = False  # `on_request` heard of the inflow since the buffer was last empty
        self._idle_arrived = 0.0  # `_arrived` when the buffer was last empty and idle
        self._token = 0  # which announcement is due (a change of rate moves it)
        self.in_path = True  # the SKS's mode, as the KPA sets it (a fluid replica gets its rate either way)
        self.on_request: list[Callable[[object], object]] = []

    # -- the flow --------------------------------------------------------------------------------

    def flow(self, now: int, rate: float) -> None:
        """From `now` on, `rate` requests per second arrive here; the first request of an inflow into an idle
        buffer is announced when it arrives: once a whole request has flowed in since it was idle."""
        if not rate >= 0:
            raise ValueError(f"an arrival rate must be >= 0 requests per second, got {rate}")
        self.advance(now)
        self._rate = rate
        self._token += 1
        owed = max(1.0 - (self._arrived - self._idle_arrived), 0.0)  # of the first whole request
        first = now + owed * SECOND / rate if rate > 0 else math.inf
        if first < self._env.halt_at and not self._announced:
            token = self._token
            self._env.call_at(math.ceil(first), lambda: self._announce(token))

    def _announce(self, token: int) -> None:
        if token != self._token or self._announced:
            return  # the inflow changed before its first request came
        self._announced = True
        for hook in self.on_request:
            hook(None)

    def advance(self, now: int) -> None:
        """Take in what flowed since the last change, turn away what finds the buffer full, and let go of
        the requests whose clients gave up."""
        start = self._since
        if now <= start:
            return
        seconds = (now - start) / SECOND
        inflow = self._rate * seconds
        room = max(self.capacity - self._held, 0.0)
        taken = min(inflow, room)
        # Held: the level rises at the rate until the capacity stops it (the area of that ramp and plateau).
        filling = taken / self._rate if self._rate > 0 else 0.0
        self._area += self._held * seconds + taken * (seconds - filling / 2)
        if taken > 0:
            self._chunks.append([float(start), start + filling * SECOND, taken])
            self._held += taken
        self._arrived += inflow
        self._since = now
        if inflow > taken:
            self._fail("buffer_full" if self.capacity else "no_active_replica", inflow - taken)
        self._expire(now)

    def _expire(self, now: int) -> None:
        """Requests that arrived longer than the timeout ago fail as `timeout` (in the area until now)."""
        if self._timeout is None:
            return
        cutoff = now - self._timeout
        gone = 0.0
        chunks = self._chunks
        while chunks and chunks[0][0] < cutoff:
            first, last, amount = chunks[0]
            if last <= cutoff:
                chunks.popleft()
                gone += amount
                continue
            share = amount * (cutoff - first) / (last - first)
            chunks[0][0], chunks[0][2] = cutoff, amount - share
            gone += share
            break
        if gone > 0:
            self._held = max(self._held - gone, 0.0)
            self._fail("timeout", gone)

    def release(self, now: int) -> list[tuple[float, float, float]]:
        """Everything held leaves now, oldest first: (first arrival ns, last arrival ns, amount) per chunk."""
        self.advance(now)
        out = [(first, last, amount) for first, last, amount in self._chunks]
        self._chunks.clear()
        self._held = 0.0
        if self._rate == 0:
            self._announced = False  # idle again: the next inflow is announced
            self._idle_arrived = self._arrived
        return out

    # -- readings --------------------------------------------------------------------------------

    def _now(self) -> tuple[float, float]:
        """What it holds now and the area up to now, as `advance` would make them (reading changes nothing)."""
        now = self._env.now()
        seconds = (now - self._since) / SECOND
        taken = min(self._rate * seconds, max(self.capacity - self._held, 0.0))
        filling = taken / self._rate if self._rate > 0 else 0.0
        return self._held + taken, self._area + self._held * seconds + taken * (seconds - filling / 2)

    def held(self) -> float:
        """Requests held now (a real number)."""
        return self._now()[0]

    def count(self) -> int:
        """Requests held now, as a whole number."""
        return math.floor(self._now()[0] + 0.5)

    def held_area(self) -> int:
        """The integral of the requests held up to now, in request-ns (`RequestsBuffered.held_area`)."""
        return round(self._now()[1] * SECOND)

    def reported_area(self) -> int:
        """The activator's concurrency reporter: the requests it holds (a fluid replica's own count the rest)."""
        return self.held_area()

    def arrived(self) -> float:
        """Requests that came in so far (a real number), held or turned away."""
        return self._arrived + self._rate * (self._env.now() - self._since) / SECOND

    @property
    def taken(self) -> int:
        """Requests it took so far, whole (the activator's count)."""
        return math.floor(self.arrived() + 1e-9)

    def has_room(self) -> bool:
        return self._now()[0] < self.capacity
