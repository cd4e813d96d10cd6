"""A real-time Clock: the same `now` / `call_at` / `call_later` on the wall clock.

Like SimPy's `rt.py`, it maps simulated nanoseconds to wall time through a speed factor
(speed 2.0 runs twice as fast as real time), so policy code written against `Clock` runs live.
It is single-threaded: `run()` sleeps until the next call is due, then makes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from heapq import heappop, heappush

from skenario.core.clock import Timer


class RealtimeClock:
    """Wall-clock time in nanoseconds since the clock was made, scaled by `speed`."""

    def __init__(
        self,
        speed: float = 1.0,
        *,
        wall_ns: Callable[[], int] = time.monotonic_ns,
        sleep: Callable[[float], object] = time.sleep,
    ) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be > 0, got {speed}")
        self.speed = speed
        self._wall_ns = wall_ns
        self._sleep = sleep
        self._epoch = wall_ns()
        self._heap: list[tuple[int, int, Timer]] = []
        self._seq = 0

    def now(self) -> int:
        return int((self._wall_ns() - self._epoch) * self.speed)

    def call_at(self, at: int, fn: Callable[[], object]) -> Timer:
        """Call `fn` once the clock reads `at`; a time already past is called as soon as possible."""
        timer = Timer(self._seq, fn)
        heappush(self._heap, (at, self._seq, timer))
        self._seq += 1
        return timer

    def call_later(self, delay: int, fn: Callable[[], object]) -> Timer:
        return self.call_at(self.now() + delay, fn)

    def run(self, until: int) -> None:
        """Make every call due before `until` (in clock time), sleeping in between, then return."""
        heap = self._heap
        while True:
            due = heap[0][0] if heap else until
            if due >= until:
                self._sleep_until(until)
                return
            self._sleep_until(due)
            _, _, timer = heappop(heap)
            timer.fire()

    def _sleep_until(self, at: int) -> None:
        remaining = (at - self.now()) / self.speed / 1e9
        if remaining > 0:
            self._sleep(remaining)
