"""What every CPU discipline shares: the interface its users see, and `OwnWakeups`, its wake-up stock.

A replica's RequestsProcessing builds its CPU with the discipline the scenario names and from then
on, like the cluster's CPU accounts and the validation network, uses it only through
`CPUDiscipline`. That is a `typing.Protocol`: the disciplines do not inherit from it, so the
per-request calls (`admit`, `withdraw`) cost exactly what they did.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from mypy_extensions import mypyc_attr

J = TypeVar("J", contravariant=True)


class CPUDiscipline(Protocol[J]):
    """A CPU of `millicores` running jobs of type J; a job never gets more than one core.

    `admit(job, work_ns, priority)` starts a job needing `work_ns` of CPU time (on one full core);
    the CPU calls the `done` callback it was built with once the job has had all of it.
    `withdraw(job)` takes a job out before that. `busy_core_ns()` is the exact integral of cores in
    use, up to now, and only reads.
    """

    @property
    def millicores(self) -> int: ...

    @property
    def cores(self) -> float: ...

    @property
    def in_service(self) -> int:
        """Jobs in their CPU phase now (served or, where the discipline queues, waiting)."""

    def rate(self, n: int | None = None) -> float:
        """CPU-ns a job being served receives per ns of time with `n` jobs in the CPU (default: now)."""

    def admit(self, job: J, work_ns: int, priority: int = 0) -> None: ...

    def withdraw(self, job: J) -> None: ...

    def busy_core_ns(self) -> float: ...


class CapacityOwner(Protocol):
    """Who sets a CPU's capacity as it goes (its node's share, its CFS quota): told when its demand changes."""

    def demand_changed(self, cpu: Any) -> None: ...


@mypyc_attr(allow_interpreted_subclasses=True)
class OwnWakeups:
    """A CPU is its own stock for its wake-up movements: the entity is the wake-up's number.

    Only the latest (`_armed`) fires; a superseded one arrives and does nothing.
    """

    __slots__ = ("_armed",)  # declared here, not in each CPU's slots, so compiled code reads the same one
    _armed: int

    def remove(self, tick: Any = None) -> Any:
        return tick

    def add(self, tick: Any) -> None:
        if tick == self._armed:
            self._fire()

    def count(self) -> int:
        return 0

    def _fire(self) -> None:
        raise NotImplementedError
