"""Processor-sharing CPU for one replica, in virtual time.

The Go Skenario froze each request's CPU share at arrival (issue #79 there). Here the requests in
their CPU phase share the replica's cores equally and each speeds up when another leaves: each
gets `min(1, cores / n)` of a core (one request is single-threaded). All of them progress at the
same rate, so one virtual clock V (CPU work done by any one of them) serves them all: a job
admitted at V0 with work w finishes when V reaches V0 + w. Finish tags sit in a heap, so each
admission, completion or removal costs O(log n) and only one wake-up per replica is pending.

When a job arrives everyone slows down, so the pending wake-up becomes early: it is left alone and
re-armed when it fires. When one leaves early, everyone may speed up and it is re-armed earlier.
A job taken out early stays in the heap as a dead entry and is dropped when it reaches the top.

On an Environment the wake-up is a `cpu_tick` movement of the CPU to itself, numbered so a
superseded one is recognised and does nothing; on any other Clock it is a timer.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import Generic, TypeVar

from skenario.core.clock import Clock, Timer
from skenario.core.environment import Environment
from skenario.model.cpu.base import CapacityOwner, OwnWakeups

T = TypeVar("T")

# Finish tags are floats; a tag within this much CPU-ns of V counts as reached (float rounding).
_EPSILON = 1e-3


class ProcessorSharingCPU(OwnWakeups, Generic[T]):
    """Egalitarian processor sharing with `millicores` of capacity and at most one core per job.

    `admit(job, work_ns)` starts a job needing `work_ns` of CPU time (on one full core); `done(job)`
    is called when it has had all of it. `withdraw(job)` takes it out early. `busy_core_ns()` is the
    exact integral of cores in use. A job may be admitted only once.
    """

    __slots__ = (
        "_busy_core_ns",
        "_clock",
        "_cores",
        "_dead",
        "_done",
        "_env",
        "_halt_at",
        "_jobs",
        "_last",
        "_live",
        "_now",
        "_owner",
        "_seq",
        "_ticks",
        "_timer",
        "_virtual",
        "kind_stocked",
        "millicores",
        "name",
    )

    def __init__(self, clock: Clock, millicores: int, done: Callable[[T], object], name: str = "CPU") -> None:
        if millicores <= 0:
            raise ValueError(f"CPU capacity must be > 0 millicores, got {millicores}")
        self.name = name
        self.kind_stocked = "CpuTick"
        self._clock = clock
        self._env = clock if isinstance(clock, Environment) else None
        self._halt_at = self._env.halt_at if self._env is not None else 0
        self._now = clock.now
        self.millicores = millicores
        self._cores = millicores / 1000
        self._done = done
        self._jobs: list[tuple[float, int, T]] = []
        self._dead: set[T] = set()
        self._live = 0
        self._seq = 0
        self._virtual = 0.0
        self._last = clock.now()
        self._busy_core_ns = 0.0
        self._armed = 0  # number of the pending wake-up; 0 when none
        self._ticks = 0  # wake-ups numbered so far
        self._timer: Timer | None = None
        self._owner: CapacityOwner | None = None  # what sets its capacity (its node, its CFS quota), if anything

    @property
    def in_service(self) -> int:
        """Jobs in their CPU phase now."""
        return self._live

    @property
    def cores(self) -> float:
        return self._cores

    def rate(self, n: int | None = None) -> float:
        """CPU-ns each job receives per ns of time with `n` jobs (default: now)."""
        n = self._live if n is None else n
        return min(1.0, self._cores / n) if n else 0.0

    def admit(self, job: T, work_ns: int, priority: int = 0) -> None:
        """Start `job`; `priority` is accepted for `PriorityCPU`'s sake and means nothing here."""
        env = self._env
        if env is not None and not self._live:
            self._last = env._now  # idle until now: nothing to integrate
        elif env is None or env._now != self._last:
            self._advance()
        seq = self._seq
        self._seq = seq + 1
        jobs = self._jobs
        heappush(jobs, (self._virtual + work_ns, seq, job))
        self._live += 1
        if env is not None and not self._armed and len(jobs) == 1:
            # Alone on an idle CPU (the common case below saturation): it runs at full speed.
            self._ticks += 1
            self._armed = self._ticks
            at = self._last + work_ns
            if at < self._halt_at:
                env.schedule("cpu_tick", at, self, self, self._armed)
        elif not self._armed or jobs[0][1] == seq:  # its own tag is the earliest (seq: a compiled build copies tuples)
            self._arm()
        # Otherwise everyone just slowed down: the pending wake-up is early and re-arms then.
        if self._owner is not None:
            self._owner.demand_changed(self)

    def withdraw(self, job: T) -> None:
        """Take a job out before it finishes (a timeout). O(1) now, O(log n) when it surfaces."""
        self._advance()
        self._dead.add(job)
        self._live -= 1
        # Everyone ran at full speed and still does (the wake-up is early or exact), or re-arm;
        # either way the wake-up now matches the current rate, which the node may then change.
        if self._live + 1 > self._cores:
            self._arm()
        if self._owner is not None:
            self._owner.demand_changed(self)

    @property
    def owner(self) -> CapacityOwner | None:
        """What sets its capacity now (its node's sharing, a CFS quota), or None."""
        return self._owner

    def share(self, owner: CapacityOwner | None) -> None:
        """From now on `owner` (a node's sharing, a CFS quota) sets `cores` as the demand changes; None: no one."""
        self._owner = owner

    def set_cores(self, cores: float) -> None:
        """Change the capacity from now on (its node's share or its quota changed). A wake-up made late by a
        faster rate is re-armed; one made early by a slower rate re-arms itself when it fires."""
        if cores == self._cores:
            return
        self._advance()
        faster = self.rate() < min(1.0, cores / self._live) if self._live else False
        self._cores = cores
        if faster:
            self._arm()

    def busy_core_ns(self) -> float:
        """Integral of cores in use (min(n, cores)) over time, up to now.

        It only reads: advancing the float sums here would split them wherever someone looks and
        shift later finish times by rounding, so recording would change the run.
        """
        n = self._live
        if not n:
            return self._busy_core_ns
        return self._busy_core_ns + (self._now() - self._last) * min(n, self._cores)

    def _advance(self) -> None:
        env = self._env
        now = env._now if env is not None else self._now()
        elapsed = now - self._last
        if elapsed:
            n = self._live
            if n:
                cores = self._cores
                if n <= cores:
                    self._virtual += elapsed
                    self._busy_core_ns += elapsed * n
                else:
                    self._virtual += elapsed * cores / n
                    self._busy_core_ns += elapsed * cores
            self._last = now

    def _arm(self) -> None:
        """Set the one wake-up for the earliest live finish tag at the current rate."""
        jobs = self._jobs
        dead = self._dead
        while dead and jobs and jobs[0][2] in dead:
            dead.discard(heappop(jobs)[2])
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not jobs or self._cores <= 0:  # nothing to serve, or throttled: no progress until set_cores
            self._armed = 0
            return
        remaining = jobs[0][0] - self._virtual - _EPSILON  # `_fire` accepts tags this close
        n = self._live
        delay = -int(-remaining // (1.0 if n <= self._cores else self._cores / n))  # ceil: never early
        if delay < 0:
            delay = 0
        self._ticks += 1
        self._armed = self._ticks
        env = self._env
        if env is not None:
            at = self._last + delay
            if at < self._halt_at:  # a wake-up after the halt would never run
                env.schedule("cpu_tick", at, self, self, self._armed)
        else:
            self._timer = self._clock.call_later(delay, self._fire)

    def _fire(self) -> None:
        self.add(self._armed)

    def add(self, tick: int) -> None:
        """A wake-up arrives: only the latest armed one fires (`OwnWakeups.add`, with `_fire` in line:
        this runs once per completion)."""
        if tick != self._armed:
            return
        self._timer = None
        # `_advance`, in line as well.
        env = self._env
        now = env._now if env is not None else self._clock.now()
        n = self._live
        elapsed = now - self._last
        if elapsed and n:
            cores = self._cores
            if n <= cores:
                self._virtual += elapsed
                self._busy_core_ns += elapsed * n
            else:
                self._virtual += elapsed * cores / n
                self._busy_core_ns += elapsed * cores
        self._last = now
        jobs = self._jobs
        dead = self._dead
        limit = self._virtual + _EPSILON
        if not jobs or jobs[0][0] > limit:  # early: someone arrived since it was armed
            self._arm()
            return
        job = heappop(jobs)[2]
        if not jobs and not dead:  # the usual case below saturation: the only job finished
            self._live = 0
            self._armed = 0
            if self._owner is not None:
                self._owner.demand_changed(self)
            self._done(job)
            return
        if not jobs or jobs[0][0] > limit:  # exactly one finished
            if dead and job in dead:
                dead.discard(job)
                self._arm()
                return
            self._live -= 1
            self._arm()
            if self._owner is not None:
                self._owner.demand_changed(self)
            self._done(job)
            return
        popped = [job]
        while jobs and jobs[0][0] <= limit:
            popped.append(heappop(jobs)[2])
        finished: list[T] = []
        for job in popped:
            if job in dead:
                dead.discard(job)
            else:
                finished.append(job)
        self._live -= len(finished)
        self._arm()
        if self._owner is not None:
            self._owner.demand_changed(self)
        for job in finished:
            self._done(job)
