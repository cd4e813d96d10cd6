"""Priority-scheduled CPU for one replica, in virtual time: a drop-in alternative to processor sharing.

Processor sharing (`sharing.py`) serves everyone at once, so it cannot model a replica that runs
urgent work first. Here the CPU is a station of `slots = max(1, ceil(cores))` servers:

* The jobs holding a slot share the cores equally, each at `min(1, cores / n_served)` of a core
  (one job is single-threaded). With integer cores c this is c servers of speed 1, an M/M/c
  station; with 500m one job runs at half speed. Cores in use are `min(n_served, cores)`, which
  equals PS's `min(n, cores)`, so `busy_core_ns` means the same on both.
* A higher `priority` number is served first; within a priority, admission order (FCFS).
* Non-preemptive: a job keeps its slot until it is done; a freed slot goes to the best waiting
  job. With one priority level this is plain FCFS with `slots` servers (Cobham's model).
* Preemptive-resume: a newcomer that outranks the lowest job in service while no slot is free
  takes that job's slot (the latest admitted among equals, so FCFS within a priority holds); the
  displaced job waits with its remaining work and, keeping its admission number, resumes ahead of
  later arrivals of its priority. A job finishing at this very instant is not displaced: its
  wake-up, due now, frees the slot for the newcomer without losing a nanosecond.

Each served job keeps its remaining work as a float that every event reduces (O(slots), and
slots is small): unlike a shared virtual clock it never grows, so rounding stays below a
nanosecond however long the run. The waiting line is a heap keyed (-priority, admission number),
O(log n); a withdrawn waiter stays in it as a stale entry, dropped when it surfaces (or when stale
entries outnumber the live ones, by rebuilding the heap).

One wake-up is pending at a time, for the earliest finish among the served at the current rate,
rounded up so no job finishes early. When that changes it is replaced: on an Environment the
wake-up is a numbered `cpu_tick` movement of the CPU to itself and a superseded number does
nothing; on any other Clock it is a timer that is cancelled. None is scheduled at or after the
halt, where it would be ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Generic, TypeVar

from skenario.core.clock import Clock, Timer
from skenario.core.environment import Environment
from skenario.model.cpu.base import OwnWakeups

T = TypeVar("T")

# Remaining work is a float; within this much CPU-ns of zero a job counts as done (float rounding).
_EPSILON = 1e-3

# Where a job is. FINISHING: done, its `done` call not yet made (several finished at once).
_WAITING, _SERVED, _FINISHING, _GONE = 0, 1, 2, 3


class _Job(Generic[T]):
    __slots__ = ("job", "priority", "seq", "state", "work")

    def __init__(self, job: T, priority: int, seq: int, work: float) -> None:
        self.job = job
        self.priority = priority
        self.seq = seq
        self.work = work  # CPU-ns still needed, as of the CPU's `_last`
        self.state = _WAITING


class PriorityCPU(OwnWakeups, Generic[T]):
    """Priority scheduling on `slots` servers sharing `millicores`; at most one core per job.

    `admit(job, work_ns, priority)` starts a job needing `work_ns` of CPU time (on one full core);
    `done(job)` is called when it has had all of it. `withdraw(job)` takes it out early, wherever
    it is. `busy_core_ns()` is the exact integral of cores in use. A job may be in the CPU once.
    """

    __slots__ = (
        "_armed_at",
        "_busy_core_ns",
        "_clock",
        "_cores",
        "_done",
        "_env",
        "_halt_at",
        "_jobs",
        "_last",
        "_live",
        "_now",
        "_seq",
        "_served",
        "_slots",
        "_stale",
        "_ticks",
        "_timer",
        "_waiting",
        "kind_stocked",
        "millicores",
        "name",
        "preemptive",
    )

    def __init__(
        self, clock: Clock, millicores: int, done: Callable[[T], object], name: str = "CPU", *, preemptive: bool
    ) -> None:
        if millicores <= 0:
            raise ValueError(f"CPU capacity must be > 0 millicores, got {millicores}")
        self.name = name
        self.kind_stocked = "CpuTick"
        self.preemptive = preemptive
        self._clock = clock
        self._env = clock if isinstance(clock, Environment) else None
        self._halt_at = self._env.halt_at if self._env is not None else 0
        self._now = clock.now
        self.millicores = millicores
        self._cores = millicores / 1000
        self._slots = max(1, -(-millicores // 1000))
        self._done = done
        self._jobs: dict[T, _Job[T]] = {}  # every job admitted and not yet done or withdrawn
        self._served: list[_Job[T]] = []  # at most `slots`
        self._waiting: list[tuple[int, int, _Job[T]]] = []  # heap of (-priority, seq, job)
        self._stale = 0  # withdrawn jobs still in `_waiting`
        self._live = 0
        self._seq = 0
        self._last = clock.now()
        self._busy_core_ns = 0.0
        self._armed = 0  # number of the pending wake-up; 0 when none
        self._armed_at = 0
        self._ticks = 0  # wake-ups numbered so far
        self._timer: Timer | None = None

    @property
    def in_service(self) -> int:
        """Jobs in their CPU phase now: waiting, preempted or served."""
        return self._live

    @property
    def serving(self) -> int:
        """Jobs holding a slot now."""
        return len(self._served)

    @property
    def cores(self) -> float:
        return self._cores

    @property
    def slots(self) -> int:
        return self._slots

    def rate(self, n: int | None = None) -> float:
        """CPU-ns each job holding a slot receives per ns with `n` jobs in the CPU (default: now).

        Jobs beyond the slots wait and receive nothing.
        """
        n = self._live if n is None else n
        return min(1.0, self._cores / min(n, self._slots)) if n > 0 else 0.0

    def admit(self, job: T, work_ns: int, priority: int = 0) -> None:
        jobs = self._jobs
        if job in jobs:
            raise ValueError(f"{job!r} is already on {self.name}")
        served = self._served
        if served:
            self._advance()
        else:
            self._last = self._env._now if self._env is not None else self._now()  # idle: nothing to integrate
        entry = _Job(job, priority, self._seq, float(work_ns))
        self._seq += 1
        jobs[job] = entry
        self._live += 1
        if len(served) < self._slots:  # a free slot means nobody waits
            entry.state = _SERVED
            served.append(entry)
            self._arm()
            return
        if self.preemptive:
            victim = self._victim()
            if victim is not None and victim.priority < priority:
                self._preempt(victim, entry)
                self._arm()
                return
        heappush(self._waiting, (-priority, entry.seq, entry))

    def withdraw(self, job: T) -> None:
        """Take a job out before it finishes (a timeout), whether waiting, preempted or served."""
        try:
            entry = self._jobs.pop(job)
        except KeyError:
            raise KeyError(f"{job!r} is not on {self.name}") from None
        state = entry.state
        entry.state = _GONE
        if state == _FINISHING:
            return  # it finished this instant and its `done` call is still to come: now it will not
        self._live -= 1
        if state == _WAITING:
            self._stale += 1
            waiting = self._waiting
            if self._stale > 64 and 2 * self._stale > len(waiting):
                waiting[:] = [item for item in waiting if item[2].state == _WAITING]
                heapify(waiting)
                self._stale = 0
            return
        self._advance()
        self._served.remove(entry)
        self._fill()
        self._arm()

    def busy_core_ns(self) -> float:
        """Integral of cores in use (min(n_served, cores)) over time, up to now.

        It only reads: advancing the float sums here would split them wherever someone looks and
        shift later finish times by rounding, so recording would change the run.
        """
        n = len(self._served)
        if not n:
            return self._busy_core_ns
        return self._busy_core_ns + (self._now() - self._last) * min(n, self._cores)

    def _advance(self) -> None:
        env = self._env
        now = env._now if env is not None else self._now()
        elapsed = now - self._last
        if elapsed:
            served = self._served
            n = len(served)
            if n:
                cores = self._cores
                if n <= cores:
                    self._busy_core_ns += elapsed * n
                    done = float(elapsed)
                else:
                    self._busy_core_ns += elapsed * cores
                    done = elapsed * cores / n
                for entry in served:
                    entry.work -= done
            self._last = now

    def _victim(self) -> _Job[T] | None:
        """The served job a newcomer may displace: the lowest priority, latest admitted among equals.

        None when a served job finishes this instant: its slot frees when its wake-up (due now) runs.
        """
        victim: _Job[T] | None = None
        for entry in self._served:
            if entry.work <= _EPSILON:
                return None
            if (
                victim is None
                or entry.priority < victim.priority
                or (entry.priority == victim.priority and entry.seq > victim.seq)
            ):
                victim = entry
        return victim

    def _preempt(self, victim: _Job[T], entry: _Job[T]) -> None:
        served = self._served
        served.remove(victim)
        victim.state = _WAITING  # keeps its remaining work and its admission number
        heappush(self._waiting, (-victim.priority, victim.seq, victim))
        entry.state = _SERVED
        served.append(entry)

    def _fill(self) -> None:
        """Give free slots to the best waiting jobs; when preemptive, let waiters outrank the served."""
        served = self._served
        waiting = self._waiting
        slots = self._slots
        while waiting and len(served) < slots:
            entry = heappop(waiting)[2]
            if entry.state != _WAITING:
                self._stale -= 1
                continue
            entry.state = _SERVED
            served.append(entry)
        if not self.preemptive:
            return
        # Only after a preemption was put off because a served job was finishing at that instant.
        while waiting:
            top = waiting[0][2]
            if top.state != _WAITING:
                heappop(waiting)
                self._stale -= 1
                continue
            victim = self._victim()
            if victim is None or victim.priority >= top.priority:
                return
            heappop(waiting)
            self._preempt(victim, top)

    def _arm(self) -> None:
        """Set the one wake-up for the earliest finish among the served, at the current rate."""
        served = self._served
        if not served:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._armed = 0
            return
        n = len(served)
        least = min(entry.work for entry in served) - _EPSILON  # `_fire` accepts work this close to 0
        rate = 1.0 if n <= self._cores else self._cores / n
        delay = -int(-least // rate)  # ceil: never early
        if delay < 0:
            delay = 0
        env = self._env
        at = self._last + delay
        if at < 1 and env is not None:
            at = 1  # before the run starts: time 0 belongs to the start movement
        if self._armed and at == self._armed_at:
            return  # the pending one is still right
        self._ticks += 1
        self._armed = self._ticks
        self._armed_at = at
        if env is not None:
            if at < self._halt_at:  # a wake-up after the halt would never run
                env.schedule("cpu_tick", at, self, self, self._armed)
        else:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self._clock.call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        self._armed = 0
        self._advance()
        served = self._served
        finished = [entry for entry in served if entry.work <= _EPSILON]
        if finished:
            for entry in finished:
                served.remove(entry)
                entry.state = _FINISHING
            self._live -= len(finished)
            self._fill()
        self._arm()
        jobs = self._jobs
        done = self._done
        for entry in finished:
            if entry.state == _FINISHING:  # unless an earlier `done` call withdrew it
                entry.state = _GONE
                del jobs[entry.job]
                done(entry.job)
