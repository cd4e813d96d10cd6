"""What the scheduler remembers of its past: its timeline of events, and every change to a node's requests.

A replay of 150,000 pods writes about half a million timeline events and 300,000 allocation changes.
Nothing the scheduler decides reads them again, so they need not cost what the live pods cost: the
timeline counts every event by kind and keeps the events themselves only when asked (a run that
shows them), handing each to a sink as it happens (a results file); the allocation log keeps its
changes as columns of numbers, 40 bytes a change rather than a tuple of tuples, and only when asked
(`keep`); the allocation tracker folds every change into what a summary reports (the time-weighted
mean and the peak of requested over allocatable) as it happens, in constant memory.
"""

from __future__ import annotations

import math
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

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep  # off: changes are not kept (the tracker has what a summary needs); reading one fails
        self._times = np.zeros(_FIRST_CAPACITY, dtype=np.int64)
        self._nodes = np.zeros(_FIRST_CAPACITY, dtype=np.int64)
        self._deltas = np.zeros((_FIRST_CAPACITY, 2), dtype=np.int64)
        self._widths = np.zeros(_FIRST_CAPACITY, dtype=np.int64)
        self._size = 0

    def append(self, change: tuple[int, int, tuple[int, ...]]) -> None:
        if not self.keep:
            return
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

    def _kept(self) -> None:
        if not self.keep:
            raise ValueError("this allocation log was not kept (a replay that lets go of its history)")

    def __iter__(self) -> Iterator[tuple[int, int, tuple[int, ...]]]:
        self._kept()
        for k in range(self._size):
            width = int(self._widths[k])
            yield int(self._times[k]), int(self._nodes[k]), tuple(self._deltas[k, :width].tolist())

    def logged(self) -> tuple[Ints, Ints]:
        """The times and deltas as logged (as wide as the widest delta), as read-only views: no copy."""
        self._kept()
        times, deltas = self._times[: self._size], self._deltas[: self._size]
        times.flags.writeable = deltas.flags.writeable = False
        return times, deltas

    def columns(self, width: int) -> tuple[Ints, Ints, Ints]:
        """The times, node rows and deltas (`width` resources wide, 0 beyond what was logged), as copies."""
        self._kept()
        size = self._size
        deltas = np.zeros((size, width), dtype=np.int64)
        have = min(width, self._deltas.shape[1])
        deltas[:, :have] = self._deltas[:size, :have]
        return self._times[:size].copy(), self._nodes[:size].copy(), deltas


class AllocationTracker:
    """The cluster's requested over allocatable, folded as it changes: its time-weighted mean and peak.

    What `analysis.allocation_steps` and `time_weighted_mean` make of the whole allocation and
    capacity logs, without them: each instant's last state holds until the next instant, a resource
    whose allocatable is 0 counts 0, and only resources some node offered at some moment are reported.
    `start` (ns) is where the mean begins; nothing is allocated before the first pod arrives.
    """

    def __init__(self, start: int = 0) -> None:
        self.start = start
        self._used: list[int] = []
        self._total: list[int] = []
        self._offered: list[bool] = []  # some node had the resource at some moment
        self._at: int | None = None  # the instant whose changes are being summed
        self._area: list[float] = []  # the fraction times ns, from `start` to `_at`
        self._peak: list[float] = []

    def allocated(self, at: int, delta: tuple[int, ...]) -> None:
        """Pods' requests on a node changed by `delta` (per resource column) at `at`."""
        if at != self._at or len(delta) > len(self._used):
            self._instant(at, len(delta))
        used = self._used
        for col, amount in enumerate(delta):
            used[col] += amount

    def capacity(self, at: int, delta: tuple[int, ...]) -> None:
        """The allocatable of the nodes present changed by `delta` at `at` (a node came, went or changed)."""
        if at != self._at or len(delta) > len(self._used):
            self._instant(at, len(delta))
        total, offered = self._total, self._offered
        for col, amount in enumerate(delta):
            total[col] += amount
            if total[col]:
                offered[col] = True

    def _instant(self, at: int, width: int) -> None:
        if width > len(self._used):
            grow = width - len(self._used)
            self._used += [0] * grow
            self._total += [0] * grow
            self._offered += [False] * grow
            self._area += [0.0] * grow
            self._peak += [-math.inf] * grow
        if self._at is not None and at != self._at:
            self._close(self._at, at, self._area, self._peak)
        self._at = at

    def _close(self, since: int, until: int, area: list[float], peak: list[float]) -> None:
        """The state at the end of instant `since` held until `until`: into `area` and `peak`."""
        span = max(until, self.start) - max(since, self.start)
        for col, (used, total) in enumerate(zip(self._used, self._total, strict=True)):
            fraction = used / total if total > 0 else 0.0
            area[col] += fraction * span
            if fraction > peak[col]:
                peak[col] = fraction

    def summary(self, resources: list[str], end: int) -> tuple[dict[str, float], dict[str, float]]:
        """The mean over [start, end] and the peak of each offered resource (`resources`: column names)."""
        area, peak = list(self._area), list(self._peak)
        if self._at is not None:
            self._close(self._at, max(end, self._at), area, peak)
        span = end - self.start
        names = [(col, name) for col, name in enumerate(resources) if col < len(area) and self._offered[col]]
        means = {name: area[col] / span if span > 0 else 0.0 for col, name in names}
        return means, {name: peak[col] for col, name in names}
