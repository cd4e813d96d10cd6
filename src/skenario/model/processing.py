"""RequestsProcessing: one replica's requests, from arrival on the replica to completion.

A request takes a concurrency slot (or waits for one in FIFO order), spends its CPU time on the
replica's CPU (processor sharing, or a priority discipline when the scenario names one: model/cpu/),
then its IO time holding the slot but no CPU, and completes. A request that leaves early (a
timeout, or the grace period of a terminating replica running out) gives back whatever it held.
The stock also integrates the number of requests in it over time, which is the average
concurrency Knative's autoscaler reads. When the workload models memory, each request holds some
of its replica's memory (`memory`, model/memory.py) from arrival on the replica until it leaves."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from sys import maxsize
from typing import NamedTuple

from skenario.core.environment import Environment
from skenario.core.stocks import SinkStock
from skenario.model.config import CpuScheduling
from skenario.model.cpu.base import CPUDiscipline
from skenario.model.cpu.priority import PriorityCPU
from skenario.model.cpu.sharing import ProcessorSharingCPU
from skenario.model.memory import PodMemory
from skenario.model.requests import CPU, IO, WAITING, Request, RequestsComplete

WARM_UP_WORK = Request(-1, 0)
"""Stands for a container's own warm-up work on its CPU: a job that is no request."""


class ClassWork(NamedTuple):
    """What requests of one class need (samplers of ns) and their priority on the CPU."""

    cpu_time: Callable[[], int]
    io_time: Callable[[], int] | None
    priority: int = 0


class RequestsProcessing:
    """The requests one replica holds: waiting for a slot, on the CPU, or in IO."""

    __slots__ = (
        "_area",
        "_complete",
        "_env",
        "_failed",
        "_free",
        "_held",
        "_items",
        "_on_drained",
        "_proxied_area",
        "_proxied_held",
        "_request_memory",
        "_waiting",
        "_work",
        "arrived",
        "capacity",
        "concurrency",
        "cpu",
        "kind_stocked",
        "memory",
        "name",
        "on_leave",
        "overflow",
        "proxied",
        "_slowdown",
        "_warm_until",
    )

    def __init__(
        self,
        name: str,
        env: Environment,
        *,
        millicores: int,
        work: Sequence[ClassWork],
        complete: RequestsComplete,
        failed: SinkStock[Request],  # RequestsFailed, or the clients when they retry
        concurrency: int | None = None,
        capacity: int | None = None,
        scheduling: CpuScheduling = CpuScheduling.PROCESSOR_SHARING,
        overflow: str = "replica_queue_full",
        on_leave: Callable[[Request], object] | None = None,
    ) -> None:
        self.name = name
        self.kind_stocked = "Request"
        self._env = env
        self._items: dict[Request, None] = {}
        self._waiting: deque[Request] = deque()
        self._work = work  # by request class
        self._complete = complete
        self._failed = failed
        self.concurrency = concurrency
        self.capacity = capacity
        self._free = maxsize if concurrency is None else concurrency
        self.cpu: CPUDiscipline[Request]
        if scheduling is CpuScheduling.PROCESSOR_SHARING:
            self.cpu = ProcessorSharingCPU(env, millicores, self._cpu_done, name=f"CPU[{name}]")
        else:
            preemptive = scheduling is CpuScheduling.PRIORITY_PREEMPTIVE
            self.cpu = PriorityCPU(env, millicores, self._cpu_done, name=f"CPU[{name}]", preemptive=preemptive)
        self.arrived = 0
        # The integral of requests held is the sum of each one's time here: the departure times of
        # those gone minus the arrival times of all, plus now for each still here (in_flight_area).
        self._area = 0
        self._on_drained: Callable[[], object] | None = None
        self.memory: PodMemory | None = None
        self._request_memory: Callable[[], int] | None = None
        self._held: dict[Request, int] | None = None  # bytes each request holds, with memory per request
        self.overflow = overflow  # the cause of a request that finds the queue full
        self._warm_until = 0  # until then (a warm-up after start) requests need `_slowdown` times their CPU
        self._slowdown = 1.0
        self.on_leave = on_leave  # told of each request that leaves
        # Requests Knative's activator proxied here, which queue-proxy counts apart (`ProxiedIn`).
        self.proxied = 0
        self._proxied_held = 0
        self._proxied_area = 0

    def hold_memory(self, memory: PodMemory, per_request: Callable[[], int] | None) -> None:
        """Account the replica's working set here: each request adds a draw of `per_request` while held."""
        self.memory = memory
        self._request_memory = per_request
        self._held = {} if per_request is not None else None

    def count(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Request]:
        return iter(self._items)

    def __contains__(self, entity: object) -> bool:
        return entity in self._items

    def has_room(self) -> bool:
        """Whether a new request may join: `capacity` bounds the line waiting for a slot."""
        return self.capacity is None or self._free > 0 or len(self._waiting) < self.capacity

    def in_flight_area(self) -> int:
        """Integral of the number of requests held, in request-ns, up to now."""
        return self._area + len(self._items) * self._env.now()

    def proxied_in(self) -> None:
        """A request the activator proxied arrives now: queue-proxy's `ProxiedIn` event."""
        self.proxied += 1
        self._proxied_held += 1
        self._proxied_area -= self._env._now

    def proxied_out(self) -> None:
        """A proxied request left: `ProxiedOut`."""
        self._proxied_held -= 1
        self._proxied_area += self._env._now

    def proxied_area(self) -> int:
        """Integral of the proxied requests held, in request-ns, up to now (part of `in_flight_area`)."""
        return self._proxied_area + self._proxied_held * self._env._now

    def add(self, entity: Request) -> None:
        self._items[entity] = None
        self._area -= self._env._now
        self.arrived += 1
        held = self._held
        if held is not None:
            assert self.memory is not None and self._request_memory is not None
            held[entity] = amount = self._request_memory()
            self.memory.grow(amount)
        if self._free:
            self._free -= 1
            entity.stage = CPU
            work = self._work[entity.cls]
            if self._warm_until:
                self.cpu.admit(entity, self._warming(work.cpu_time()), work.priority)
            else:
                self.cpu.admit(entity, work.cpu_time(), work.priority)
        else:
            entity.stage = WAITING
            self._waiting.append(entity)

    def remove(self, entity: Request | None = None) -> Request | None:
        """Take a request out: it completed, timed out or was cut off by termination."""
        items = self._items
        if entity is None or entity not in items:
            return None
        del items[entity]
        self._area += self._env._now
        held = self._held
        if held is not None:
            assert self.memory is not None
            self.memory.shrink(held.pop(entity, 0))
        stage = entity.stage
        if stage != WAITING:  # it held a slot; a waiting one is skipped when its turn comes
            if stage == CPU:
                self.cpu.withdraw(entity)
            if self._waiting:
                self._release_slot()
            else:
                self._free += 1
        if self.on_leave is not None:
            self.on_leave(entity)
        if self._on_drained is not None and not items:
            on_drained, self._on_drained = self._on_drained, None
            on_drained()
        return entity

    def _release_slot(self) -> None:
        waiting = self._waiting
        items = self._items
        while waiting:
            request = waiting.popleft()
            if request in items:
                request.stage = CPU
                work = self._work[request.cls]
                cpu_time = work.cpu_time()
                self.cpu.admit(request, self._warming(cpu_time) if self._warm_until else cpu_time, work.priority)
                return
        self._free += 1

    def warm_up(self, duration: int, slowdown: float, cpu_work: int) -> None:
        """From now for `duration`, requests need `slowdown` times their CPU; `cpu_work` core-ns of the
        container's own work (loading, compiling) share the CPU with them until done."""
        self._warm_until = self._env.now() + duration
        self._slowdown = slowdown
        if cpu_work > 0:
            self.cpu.admit(WARM_UP_WORK, cpu_work)

    def _warming(self, cpu_time: int) -> int:
        if self._env._now < self._warm_until:
            return round(cpu_time * self._slowdown)
        self._warm_until = 0
        return cpu_time

    def _cpu_done(self, request: Request) -> None:
        if request is WARM_UP_WORK:
            return  # the container's own warm-up work: no request to complete
        env = self._env
        request.stage = IO  # off the CPU, which has already counted it out; it holds only its slot
        io_time = self._work[request.cls].io_time
        if io_time is None:
            env.schedule("complete_request", env._now, self, self._complete, request)
        else:
            env.schedule("complete_request", env._now + io_time(), self, self._complete, request)

    def set_work(self, work: Sequence[ClassWork]) -> None:
        """Draw the work of requests admitted from now on from these samplers (by request class)."""
        self._work = work

    def drain(self, on_drained: Callable[[], object]) -> None:
        """Call `on_drained` once no request is left (at once if none is)."""
        if self._items:
            self._on_drained = on_drained
        else:
            on_drained()

    def fail_all(self, reason: str) -> None:
        """Fail every request still held, now (a terminating replica's grace period ran out)."""
        env = self._env
        self._on_drained = None
        for request in list(self._items):
            request.failure = reason
            env.schedule("request_failed", env.now(), self, self._failed, request)
