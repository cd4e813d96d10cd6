"""The Clock: the only view of time that policy code (autoscalers, schedulers, plugins) gets.

YARN-1187's lesson: inject the clock, and the same policy code runs in a simulation (the
Environment) or live (`skenario.core.rt.RealtimeClock`) without change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from skenario.core.entity import Entity


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
