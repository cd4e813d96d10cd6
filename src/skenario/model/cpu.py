"""Processor-sharing CPU for one replica, in virtual time.

The Go Skenario froze each request's CPU share at arrival (issue #79 there). Here the requests in
their CPU phase share the replica's cores equally and each speeds up when another leaves: each
gets `min(1, cores / n)` of a core (one request is single-threaded). All of them progress at the
same rate, so one virtual clock V (CPU work done by any one of them) serves them all: a request
admitted at V0 with work w finishes when V reaches V0 + w. Finish tags sit in a heap, so each
admission or completion costs O(log n) and only one timer per replica is pending.

When a request arrives everyone slows down, so the pending timer becomes early: it is left alone
and re-armed when it fires. When one leaves, everyone speeds up and the timer is re-armed earlier.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Generic, TypeVar

from skenario.core.clock import Clock, Timer

T = TypeVar("T")

# Finish tags are floats; a tag within this much CPU-ns of V counts as reached (float rounding).
_EPSILON = 1e-3


class ProcessorSharingCPU(Generic[T]):
    """Egalitarian processor sharing with `millicores` of capacity and at most one core per job.

    `admit(job, work_ns)` starts a job needing `work_ns` of CPU time (on one full core); `done(job)`
    is called when it has had all of it. `busy_core_ns()` is the exact integral of cores in use.
    """

    __slots__ = (
        "_armed_for",
        "_busy_core_ns",
        "_clock",
        "_cores",
        "_done",
        "_jobs",
        "_last",
        "_seq",
        "_timer",
        "_virtual",
    )

    def __init__(self, clock: Clock, millicores: int, done: Callable[[T], object]) -> None:
        if millicores <= 0:
            raise ValueError(f"CPU capacity must be > 0 millicores, got {millicores}")
        self._clock = clock
        self._cores = millicores / 1000
        self._done = done
        self._jobs: list[tuple[float, int, T]] = []
        self._seq = 0
        self._virtual = 0.0
        self._last = clock.now()
        self._busy_core_ns = 0.0
        self._timer: Timer | None = None
        self._armed_for = -1

    @property
    def in_service(self) -> int:
        return len(self._jobs)

    def rate(self, n: int | None = None) -> float:
        """CPU-ns each job receives per ns of time with `n` jobs (default: now)."""
        n = len(self._jobs) if n is None else n
        return min(1.0, self._cores / n) if n else 0.0

    def admit(self, job: T, work_ns: int) -> None:
        self._advance()
        entry = (self._virtual + work_ns, self._seq, job)
        heappush(self._jobs, entry)
        self._seq += 1
        if self._timer is None or self._jobs[0] is entry:
            self._arm()
        # Otherwise everyone just slowed down: the pending timer fires early and re-arms then.

    def remove(self, job: T) -> bool:
        """Take a job out before it finishes (a timeout). O(n); returns whether it was there."""
        self._advance()
        for i, (_, _, other) in enumerate(self._jobs):
            if other is job:
                self._jobs[i] = self._jobs[-1]
                self._jobs.pop()
                self._heapify()
                self._arm()
                return True
        return False

    def busy_core_ns(self) -> float:
        """Integral of cores in use (min(n, cores)) over time, up to now."""
        self._advance()
        return self._busy_core_ns

    def _advance(self) -> None:
        now = self._clock.now()
        elapsed = now - self._last
        if elapsed:
            n = len(self._jobs)
            if n:
                self._virtual += elapsed * self.rate(n)
                self._busy_core_ns += elapsed * min(n, self._cores)
            self._last = now

    def _arm(self) -> None:
        """Set the one timer for the earliest finish tag at the current rate."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._jobs:
            return
        remaining = self._jobs[0][0] - self._virtual
        delay = max(0, -int(-remaining // self.rate()))  # ceil: never fire before the tag is reached
        self._timer = self._clock.call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._advance()
        jobs = self._jobs
        finished: list[T] = []
        while jobs and jobs[0][0] <= self._virtual + _EPSILON:
            finished.append(heappop(jobs)[2])
        self._arm()
        for job in finished:
            self._done(job)

    def _heapify(self) -> None:
        heapify(self._jobs)
