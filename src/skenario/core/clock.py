"""The Clock: the only view of time that policy code (autoscalers, schedulers, plugins) gets.

YARN-1187's lesson: inject the clock, and the same policy code runs in a simulation (the
Environment) or live (`skenario.core.rt.RealtimeClock`) without change.

Controllers that need more than time name the narrow protocol they need: `SettlingClock` adds
"once this instant has settled" (the cluster autoscaler, the API server's controllers), and
`MovingClock` adds moving entities between stocks at a time (the scheduler, whose pods live in
stocks). The Environment and the RealtimeClock serve all three.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from skenario.core.entity import Entity
from skenario.core.stocks import E, SinkStock, SourceStock


class Timer(Entity):
    """A pending call. `cancel()` stops it from firing; the clock keeps no other reference."""

    __slots__ = ("fn", "cancelled")
    kind = "Timer"

    def __init__(self, id: int, fn: Callable[[], object]) -> None:
        self.id = id
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        if not self.cancelled:
            self.fn()


class Clock(Protocol):
    """Time in integer nanoseconds, and calls at or after a time.

    A call for a time already past is made as soon as possible, on every clock.
    """

    def now(self) -> int: ...

    def call_at(self, at: int, fn: Callable[[], object]) -> Timer: ...

    def call_later(self, delay: int, fn: Callable[[], object]) -> Timer: ...


class SettlingClock(Clock, Protocol):
    """A Clock that can also call back once the current instant has settled.

    What a controller needs to act on an instant as a whole (KEP-140's "after the step's
    operations"): the scheduler's pass sees every pod created at that instant, whatever order
    they were written in.
    """

    def call_when_settled(self, fn: Callable[[], object], order: int = 0) -> None:
        """Call `fn` once everything else due now has run, those scheduled for now meanwhile
        included; callbacks waiting together run by `order`, then first come first served."""
        ...


class MovingClock(SettlingClock, Protocol):
    """A SettlingClock that also moves entities between stocks at a time, in order with its calls."""

    def schedule(
        self,
        kind: str,
        occurs_at: int,
        from_stock: SourceStock[E],
        to_stock: SinkStock[E],
        what: E | None = None,
        note: str | None = None,
    ) -> bool:
        """Move `what` (or whatever `from_stock` gives) into `to_stock` at `occurs_at`; False if refused."""
        ...
