"""A queueing network simulated on the kernel: the model the analytic solver solves, run as a DES.

Each centre is a CPU of the model layer with `servers` cores: processor sharing for PS (and LCFS,
whose mean values are the same), `PriorityCPU` for FCFS (one priority level) and for the priority
disciplines, and a plain timer for a delay centre. A centre with a `capacity` turns away a job that finds
it full (the job is lost: an open class's, since a closed one is never turned away by a capacity the
solver accepts). A memory constraint admits at most `max_jobs` jobs to its centres at once, the others
waiting in line for memory in arrival order, as the system a flow-equivalent server stands for. A
centre with `rates` is not simulated. A job of a class visits the centres it has
demands at, in the order written, each `visits` times per cycle (a fractional part is a coin
toss), with a service time of the given mean and squared coefficient of variation (0 constant,
1 exponential, else lognormal). Open classes arrive as Poisson streams; closed ones think for an
exponential time between cycles. Time is the model's unit scaled to integer nanoseconds.

Only validation runs it (`replications.replicate`, for `skenario validate`; and the queueing
example seed001), so it lives here.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from skenario.core.environment import Environment
from skenario.core.random import Constant, Distribution, Exponential, LogNormal, RandomStreams, sampler
from skenario.model.cpu.base import CPUDiscipline
from skenario.model.cpu.priority import PriorityCPU
from skenario.model.cpu.sharing import ProcessorSharingCPU
from skenario.queueing.network import Centre, Demand, Network, Scheduling

# One model time unit in ns: fine enough that rounding service times to whole ns costs nothing.
UNIT = 1_000_000_000


@dataclass(frozen=True)
class SimulatedMeans:
    """One replication's means over the measured window (after the warm-up)."""

    response: dict[str, float]  # per class: mean time per cycle at the centres (think excluded)
    throughput: dict[str, float]  # per class: cycles completed per unit time
    utilization: dict[str, float]  # per centre, per server
    cycles: dict[str, int]
    lost: dict[str, int] | None = None  # per class: jobs a full centre turned away


class _Job:
    __slots__ = ("cls", "memory", "position", "route", "started")

    def __init__(self, cls: int) -> None:
        self.cls = cls
        self.position = 0
        self.route: tuple[int, ...] = ()
        self.started = 0
        self.memory = False  # whether it holds one of a memory constraint's places


@dataclass(frozen=True)
class MemoryConstraint:
    """At most `max_jobs` jobs at once at `centres` together (`queueing.fesc` solves it as one centre)."""

    centres: tuple[str, ...]
    max_jobs: int


def _distribution(demand: Demand) -> Distribution:
    mean = demand.service * UNIT
    if demand.scv == 0:
        return Constant(mean)
    if demand.scv == 1:
        return Exponential(mean)
    return LogNormal(mean, mean * math.sqrt(demand.scv))


class NetworkSimulation:
    """Simulate `network` for `duration` time units, measuring after `warmup`."""

    def __init__(
        self,
        network: Network,
        *,
        duration: float,
        warmup: float,
        seed: int,
        stream: str = "",
        memory: MemoryConstraint | None = None,
    ) -> None:
        if not 0 <= warmup < duration:
            raise ValueError(f"need 0 <= warmup < duration, got warmup={warmup}, duration={duration}")
        if any(centre.rates for centre in network.centres):
            raise ValueError("a centre with rates stands for a subsystem; simulate the subsystem itself")
        self.network = network
        self.env = env = Environment(halt_at=round(duration * UNIT))
        self._warmup = round(warmup * UNIT)
        streams = RandomStreams(seed)
        prefix = f"{stream}/" if stream else ""
        self._stations: list[CPUDiscipline[_Job] | None] = [self._station(k) for k in network.centres]
        self._service: list[dict[int, Callable[[], int]]] = []
        self._routes: list[list[tuple[int, float]]] = []
        for cls in network.classes:
            route = [(network.index[name], d.visits) for name, d in cls.demands.items() if d.demand > 0]
            self._routes.append(route)
            self._service.append(
                {
                    network.index[name]: sampler(
                        _distribution(d), streams.generator(f"{prefix}service/{cls.name}/{name}")
                    )
                    for name, d in cls.demands.items()
                    if d.demand > 0
                }
            )
        self._coins = streams.generator(f"{prefix}visits")
        self._priority = [c.priority for c in network.classes]
        self._gaps: list[Callable[[], int] | None] = []
        for cls in network.classes:
            if cls.is_open:
                rate = cls.arrival_rate or 0.0
                self._gaps.append(sampler(Exponential(UNIT / rate), streams.generator(f"{prefix}arrivals/{cls.name}")))
            elif cls.think_time > 0:
                self._gaps.append(
                    sampler(Exponential(cls.think_time * UNIT), streams.generator(f"{prefix}think/{cls.name}"))
                )
            else:
                self._gaps.append(None)
        classes = len(network.classes)
        self._present = [0] * len(network.centres)  # jobs at each centre
        self._lost = [0] * classes
        self._gate = frozenset(network.index[name] for name in memory.centres) if memory is not None else frozenset()
        self._places = memory.max_jobs if memory is not None else 0  # memory's places left
        self._in_line: deque[_Job] = deque()  # jobs waiting for memory
        self._cycles = [0] * classes
        self._time_sum = [0] * classes
        self._busy_at_warmup: list[float] = [0.0] * len(network.centres)
        for j, cls in enumerate(network.classes):
            if cls.is_open:
                self._arrive_later(j)
            else:
                for _ in range(round(cls.population or 0)):
                    self._think(_Job(j))
        if self._warmup:
            env.call_at(self._warmup, self._mark_warmup)

    def _station(self, centre: Centre) -> CPUDiscipline[_Job] | None:
        if centre.is_delay:
            return None
        millicores = 1000 * centre.servers
        if centre.scheduling in (Scheduling.PS, Scheduling.LCFS):
            return ProcessorSharingCPU(self.env, millicores, self._served, name=centre.name)
        preemptive = centre.scheduling is Scheduling.PRIORITY_PREEMPTIVE
        return PriorityCPU(self.env, millicores, self._served, name=centre.name, preemptive=preemptive)

    def _arrive_later(self, cls: int) -> None:
        gap = self._gaps[cls]
        assert gap is not None
        self.env.call_later(gap(), lambda: self._arrive(cls))

    def _arrive(self, cls: int) -> None:
        self._arrive_later(cls)
        self._start(_Job(cls))

    def _think(self, job: _Job) -> None:
        gap = self._gaps[job.cls]
        if gap is None:
            self._start(job)
        else:
            self.env.call_later(gap(), lambda: self._start(job))

    def _start(self, job: _Job) -> None:
        job.started = self.env._now
        job.position = 0
        job.route = self._route(job.cls)
        self._visit(job)

    def _route(self, cls: int) -> tuple[int, ...]:
        route: list[int] = []
        for centre, visits in self._routes[cls]:
            whole = math.floor(visits)
            extra = 1 if visits > whole and self._coins.random() < visits - whole else 0
            route.extend([centre] * (whole + extra))
        return tuple(route)

    def _visit(self, job: _Job) -> None:
        if job.position == len(job.route):
            self._finish(job)
            return
        centre = job.route[job.position]
        if centre in self._gate and not job.memory:
            if self._places == 0:
                self._in_line.append(job)  # waits for memory; `_release` resumes it
                return
            self._places -= 1
            job.memory = True
        capacity = self.network.centres[centre].capacity
        if capacity is not None and self._present[centre] >= capacity:
            if job.started >= self._warmup:
                self._lost[job.cls] += 1
            if job.memory:
                job.memory = False
                self._release()
            return  # turned away: the job is lost
        self._present[centre] += 1
        work = max(1, self._service[job.cls][centre]())
        station = self._stations[centre]
        if station is None:
            self.env.call_later(work, lambda: self._served(job))
        else:
            station.admit(job, work, self._priority[job.cls])  # the PS CPU ignores the priority

    def _served(self, job: _Job) -> None:
        self._present[job.route[job.position]] -= 1
        job.position += 1
        if job.memory and (job.position == len(job.route) or job.route[job.position] not in self._gate):
            job.memory = False
            self._release()
        self._visit(job)

    def _release(self) -> None:
        """A place in memory is free: the first job in line takes it and goes on."""
        if self._in_line:
            waiting = self._in_line.popleft()
            waiting.memory = True
            self._visit(waiting)
        else:
            self._places += 1

    def _finish(self, job: _Job) -> None:
        env = self.env
        if job.started >= self._warmup:
            self._cycles[job.cls] += 1
            self._time_sum[job.cls] += env._now - job.started
        if not self.network.classes[job.cls].is_open:
            self._think(job)

    def _mark_warmup(self) -> None:
        self._busy_at_warmup = [s.busy_core_ns() if s is not None else 0.0 for s in self._stations]

    def run(self) -> SimulatedMeans:
        self.env.run()
        window = (self.env.halt_at - self._warmup) / UNIT
        classes = self.network.classes
        busy = [s.busy_core_ns() if s is not None else 0.0 for s in self._stations]
        return SimulatedMeans(
            response={
                c.name: self._time_sum[j] / self._cycles[j] / UNIT if self._cycles[j] else math.nan
                for j, c in enumerate(classes)
            },
            throughput={c.name: self._cycles[j] / window for j, c in enumerate(classes)},
            utilization={
                k.name: (busy[i] - self._busy_at_warmup[i]) / UNIT / window / k.servers
                for i, k in enumerate(self.network.centres)
                if not k.is_delay
            },
            cycles=dict(zip((c.name for c in classes), self._cycles, strict=True)),
            lost=dict(zip((c.name for c in classes), self._lost, strict=True)),
        )
