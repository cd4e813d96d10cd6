"""Request timeouts with one timer for all requests.

Every request has the same timeout counted from its arrival, so deadlines come in arrival order:
a FIFO of requests and a single timer at the oldest unfinished one's deadline is enough. Finished
requests leave the FIFO lazily when they reach its head, which costs O(1) per request and keeps
at most one timeout's worth of arrivals in memory, instead of a timer per request.

While nothing is watched no timer is armed: the next request watched arms it at its own deadline.
(A timer re-armed one timeout ahead of an empty line fired duration ÷ timeout times: 10^11 for a
1 ns timeout over two idle minutes.)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from skenario.core.clock import Clock, Timer
from skenario.model.requests import DONE, Request


class RequestTimeouts:
    """Calls `expire(request)` for each request still unfinished `timeout` ns after it arrived."""

    __slots__ = ("_clock", "_expire", "_queue", "_timer", "timeout", "watch")

    def __init__(self, clock: Clock, timeout: int, expire: Callable[[Request], object]) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 ns, got {timeout}")
        self._clock = clock
        self.timeout = timeout
        self._expire = expire
        self._queue: deque[Request] = deque()
        self._timer: Timer | None = None  # armed at the oldest watched request's deadline, or none
        self.watch: Callable[[Request], None] = self._watch

    def __len__(self) -> int:
        return len(self._queue)

    def _watch(self, request: Request) -> None:
        if self._timer is None:  # the line was empty: this request's deadline is the first
            self._timer = self._clock.call_at(request.arrived_at + self.timeout, self._fire)
        self._queue.append(request)

    def _fire(self) -> None:
        queue = self._queue
        cutoff = self._clock.now() - self.timeout
        while queue:
            head = queue[0]
            if head.stage == DONE:
                queue.popleft()
            elif head.arrived_at <= cutoff:
                queue.popleft()
                self._expire(head)
            else:
                self._timer = self._clock.call_at(head.arrived_at + self.timeout, self._fire)
                return
        self._timer = None
