"""A real-time Clock: the same `now` / `call_at` / `call_later` on the wall clock.

Like SimPy's `rt.py`, it maps simulated nanoseconds to wall time through a speed factor
(speed 2.0 runs twice as fast as real time), so policy code written against `Clock` runs live.
It is single-threaded: `run()` sleeps until the next call is due, then makes it.

It serves `MovingClock` too, so the scheduling controllers run live: "when settled" means once no
call is due any more (nothing scheduled at or before the wall clock's now), and a movement is a
call that takes from one stock and gives to the other (no movement log: nothing records it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from heapq import heappop, heappush

from skenario.core.clock import Timer
from skenario.core.stocks import E, SinkStock, SourceStock


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
        self._settled: list[tuple[int, int, Callable[[], object]]] = []  # (order, seq, fn)
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

    def call_when_settled(self, fn: Callable[[], object], order: int = 0) -> None:
        """Call `fn` once no call is due any more: those due now (and any they schedule for now) first.

        Callbacks waiting together run by `order`, then first come first served; one that schedules
        a call for now lets it run before the next callback, as on the Environment.
        """
        heappush(self._settled, (order, self._seq, fn))
        self._seq += 1

    def schedule(
        self,
        kind: str,
        occurs_at: int,
        from_stock: SourceStock[E],
        to_stock: SinkStock[E],
        what: E | None = None,
        note: str | None = None,
    ) -> bool:
        """Move `what` (or what `from_stock` gives) into `to_stock` at `occurs_at`; a time past, as soon as possible."""

        def move() -> None:
            entity = from_stock.remove(what)
            if entity is not None:  # an empty stock gives nothing: nothing moves, as on the Environment
                to_stock.add(entity)

        self.call_at(occurs_at, move)
        return True

    def run(self, until: int) -> None:
        """Make every call due before `until` (in clock time), sleeping in between, then return.

        Each time nothing is due any more, the settled callbacks run, before sleeping or returning.
        """
        heap = self._heap
        settled = self._settled
        while True:
            due = heap[0][0] if heap else until
            if settled and (due >= until or due > self.now()):
                _, _, fn = heappop(settled)
                fn()
                continue
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
