"""Movements: the scheduled transfer of an entity from one stock to another.

The Environment keeps each scheduled movement as one plain tuple laid out like `Movement`, so
the hot path allocates nothing else; `Movement._make(entry)` gives the typed view when someone
looks (observers, the ignored list, the movement log).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple


class Movement(NamedTuple):
    """One movement. `seq` is the scheduling order; `(occurs_at, seq)` orders the schedule.

    `what` names a specific entity to move; None lets the from-stock choose.
    """

    occurs_at: int
    seq: int
    kind: str
    from_stock: Any
    to_stock: Any
    what: Any = None
    note: str | None = None


class IgnoredReason(StrEnum):
    """Why a movement did not happen."""

    FROM_STOCK_EMPTY = "from_stock_empty"
    """At its time the from-stock had nothing, or not the named entity, to give."""
    SCHEDULED_IN_PAST = "scheduled_in_past"
    """Asked for a time before now (or at 0, which belongs to the start movement)."""
    SCHEDULED_AFTER_HALT = "scheduled_after_halt"
    """Asked for the halt time or later (the halt time belongs to the halt movement)."""


class IgnoredMovement(NamedTuple):
    movement: Movement
    reason: IgnoredReason
