"""What the scheduler remembers of its past: its timeline of events, and every change to a node's requests.

A replay of 150,000 pods writes about half a million timeline events and 300,000 allocation changes.
Nothing the scheduler decides reads them again, so they need not cost what the live pods cost: the
timeline counts every event by kind and keeps the events themselves only when asked (a run that
shows them), handing each to a sink as it happens (a results file); the allocation log keeps its
changes as columns of numbers, 28 bytes a change rather than a tuple of tuples.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]

_FIRST_CAPACITY = 1024


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """KEP-140's PodScheduled / PodUnscheduled / PodPreempted, plus PodCreated / PodFinished."""

    at: int
    kind: str
    pod: str
    node: str | None = None
    detail: str = ""

    def as_dict(self) -> dict[str, object]:
        """The event as a results file has it (a node event names no pod: null)."""
        return {"at": self.at, "kind": self.kind, "pod": self.pod or None, "node": self.node, "detail": self.detail}


class Timeline(list[TimelineEvent]):
    """The events in order, each counted by kind (`counts`) and handed to `sink`; kept unless `keep` is off."""

    def __init__(self, keep: bool = True) -> None:
        super().__init__()
        self.keep = keep
        self.counts: Counter[str] = Counter()
        self.sink: Callable[[TimelineEvent], object] | None = None

    def append(self, event: TimelineEvent) -> None:
        self.counts[event.kind] += 1
        if self.sink is not None:
            self.sink(event)
        if self.keep:
            super().append(event)


class AllocationLog:
    """(time, node row, request deltas) each time a node's requests change, as growing columns.

    Iterating gives the changes back as tuples, the deltas as wide as the snapshot's resources were
    when each was logged (a resource named later was 0 before).
    """

    def __init__(self) -> None:
        self._times = np.zeros(_FIRST_CAPACITY, dtype=np.int64)
        self._nodes = np.zeros(_FIRST_CAPACITY, dtype=np.int64)
        self._deltas = np.zeros((_FIRST_CAPACITY, 2), dtype=np.int64)
        self._widths = np.zeros(_FIRST_CAPACITY, dtype=np.int64)
        self._size = 0

    def append(self, change: tuple[int, int, tuple[int, ...]]) -> None:
        at, node, delta = change
        k = self._size
        if k == len(self._times) or len(delta) > self._deltas.shape[1]:
            self._grow(max(len(delta), self._deltas.shape[1]))
        self._times[k] = at
        self._nodes[k] = node
        self._deltas[k, : len(delta)] = delta
        self._widths[k] = len(delta)
        self._size = k + 1

    def _grow(self, width: int) -> None:
        capacity = len(self._times) * (2 if self._size == len(self._times) else 1)
        size = self._size
        times, nodes, widths = (np.zeros(capacity, dtype=np.int64) for _ in range(3))
        deltas = np.zeros((capacity, width), dtype=np.int64)
        times[:size], nodes[:size], widths[:size] = self._times[:size], self._nodes[:size], self._widths[:size]
        deltas[:size, : self._deltas.shape[1]] = self._deltas[:size]
        self._times, self._nodes, self._deltas, self._widths = times, nodes, deltas, widths

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[tuple[int, int, tuple[int, ...]]]:
        for k in range(self._size):
            width = int(self._widths[k])
            yield int(self._times[k]), int(self._nodes[k]), tuple(self._deltas[k, :width].tolist())

    def logged(self) -> tuple[Ints, Ints]:
        """The times and deltas as logged (as wide as the widest delta), as read-only views: no copy."""
        times, deltas = self._times[: self._size], self._deltas[: self._size]
        times.flags.writeable = deltas.flags.writeable = False
        return times, deltas

    def columns(self, width: int) -> tuple[Ints, Ints, Ints]:
        """The times, node rows and deltas (`width` resources wide, 0 beyond what was logged), as copies."""
        size = self._size
        deltas = np.zeros((size, width), dtype=np.int64)
        have = min(width, self._deltas.shape[1])
        deltas[:, :have] = self._deltas[:size, :have]
        return self._times[:size].copy(), self._nodes[:size].copy(), deltas
