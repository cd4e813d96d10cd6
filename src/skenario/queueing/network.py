"""A queueing network as plain data: centres, workload classes and their demands.

The vocabulary is PDQ's (`CreateNode`, `CreateOpen`, `CreateClosed`, `SetDemand`, `SetVisits`):
a queueing centre or a delay centre, an open class with an arrival rate or a closed class with a
population and a think time, and per class and centre either a demand D or visits V with a
service time S (D = V * S). Times are in any one unit, as in PDQ. Nothing here knows the
simulator; the solvers and the network simulator both read this.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from skenario.errors import SkenarioError


class QueueingModelError(SkenarioError):
    """A queueing model that cannot be solved as written: names the field and the value."""


class CentreKind(StrEnum):
    QUEUE = "queue"  # PDQ CEN: jobs queue for `servers` servers
    DELAY = "delay"  # PDQ DLY: an infinite server; residence equals demand


class Scheduling(StrEnum):
    FCFS = "FCFS"
    PS = "PS"
    LCFS = "LCFS"  # preemptive-resume LCFS, product form like PS
    PRIORITY_PREEMPTIVE = "PriorityPreemptive"  # preemptive-resume priority, FCFS within a priority
    PRIORITY_NON_PREEMPTIVE = "PriorityNonPreemptive"  # head-of-line priority (Cobham)

    @property
    def is_priority(self) -> bool:
        return self in (Scheduling.PRIORITY_PREEMPTIVE, Scheduling.PRIORITY_NON_PREEMPTIVE)


@dataclass(frozen=True)
class Centre:
    """A centre: `servers` servers, or `rates`, its service rate multipliers alpha(1), alpha(2), ... with that many
    jobs present (the last repeated: a load-dependent centre, such as a flow-equivalent server); at most
    `capacity` jobs present, those in service included (None: no limit), an arrival finding it full lost."""

    name: str
    kind: CentreKind = CentreKind.QUEUE
    scheduling: Scheduling = Scheduling.FCFS
    servers: int = 1
    rates: tuple[float, ...] = ()
    capacity: int | None = None

    @property
    def is_delay(self) -> bool:
        return self.kind is CentreKind.DELAY

    @property
    def load_dependent(self) -> bool:
        """Whether its rate depends on the jobs present other than as one server: `rates`, or several servers."""
        return not self.is_delay and (bool(self.rates) or self.servers > 1)

    @property
    def special(self) -> bool:
        """A centre the product-form formulas of one server do not cover: `rates` or `capacity`."""
        return bool(self.rates) or self.capacity is not None


@dataclass(frozen=True)
class Demand:
    """What one class asks of one centre per cycle: `visits` of `service` each.

    `scv` is the squared coefficient of variation of one service time (1 exponential, 0
    deterministic); only the M/G/1 formulas and the simulator read it.
    """

    visits: float
    service: float
    scv: float = 1.0

    @property
    def demand(self) -> float:
        return self.visits * self.service

    @property
    def second_moment(self) -> float:
        """E[S^2] of one service time."""
        return self.service * self.service * (1.0 + self.scv)


@dataclass(frozen=True)
class WorkloadClass:
    """An open class (`arrival_rate`) or a closed one (`population`, `think_time`)."""

    name: str
    demands: Mapping[str, Demand]
    arrival_rate: float | None = None
    population: float | None = None
    think_time: float = 0.0
    priority: int = 0  # a higher number is served first at priority centres

    @property
    def is_open(self) -> bool:
        return self.arrival_rate is not None

    def demand(self, centre: str) -> float:
        d = self.demands.get(centre)
        return d.demand if d is not None else 0.0


@dataclass(frozen=True)
class Network:
    """Centres and classes, checked on construction so solvers can trust them."""

    centres: tuple[Centre, ...]
    classes: tuple[WorkloadClass, ...]
    name: str = "model"
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {c.name: i for i, c in enumerate(self.centres)})
        _check(self)

    @classmethod
    def of(cls, centres: Iterable[Centre], classes: Iterable[WorkloadClass], name: str = "model") -> Network:
        return cls(tuple(centres), tuple(classes), name)

    @property
    def open_classes(self) -> tuple[WorkloadClass, ...]:
        return tuple(c for c in self.classes if c.is_open)

    @property
    def closed_classes(self) -> tuple[WorkloadClass, ...]:
        return tuple(c for c in self.classes if not c.is_open)

    def centre(self, name: str) -> Centre:
        return self.centres[self.index[name]]

    def with_classes(self, classes: Iterable[WorkloadClass]) -> Network:
        return Network(self.centres, tuple(classes), self.name)

    def with_centres(self, centres: Iterable[Centre]) -> Network:
        return Network(tuple(centres), self.classes, self.name)


def _check(network: Network) -> None:
    if not network.centres:
        raise QueueingModelError("a model needs at least one centre", field="centres")
    if not network.classes:
        raise QueueingModelError("a model needs at least one class", field="classes")
    seen: set[str] = set()
    for i, centre in enumerate(network.centres):
        if centre.name in seen:
            raise QueueingModelError("two centres share this name", field=f"centres.{i}.name", value=centre.name)
        seen.add(centre.name)
        if centre.servers < 1:
            raise QueueingModelError("must be at least 1", field=f"centres.{i}.servers", value=centre.servers)
        if centre.rates and centre.servers > 1:
            raise QueueingModelError(
                "give servers or rates, not both (m servers are the rates 1, 2, ..., m)",
                field=f"centres.{i}.rates",
                value=list(centre.rates),
            )
        if any(not (rate > 0 and math.isfinite(rate)) for rate in centre.rates):
            raise QueueingModelError(
                "every rate must be a finite number > 0", field=f"centres.{i}.rates", value=list(centre.rates)
            )
        if centre.capacity is not None and centre.capacity < 1:
            raise QueueingModelError("must be at least 1", field=f"centres.{i}.capacity", value=centre.capacity)
        if centre.is_delay and centre.special:
            field = "rates" if centre.rates else "capacity"
            raise QueueingModelError("a delay centre has neither rates nor a capacity", field=f"centres.{i}.{field}")
    names: set[str] = set()
    for i, cls in enumerate(network.classes):
        where = f"classes.{i}"
        if cls.name in names:
            raise QueueingModelError("two classes share this name", field=f"{where}.name", value=cls.name)
        names.add(cls.name)
        if (cls.arrival_rate is None) == (cls.population is None):
            raise QueueingModelError("give exactly one of arrivalRate (open) and population (closed)", field=where)
        if cls.arrival_rate is not None and not (cls.arrival_rate > 0 and math.isfinite(cls.arrival_rate)):
            raise QueueingModelError("must be > 0", field=f"{where}.arrivalRate", value=cls.arrival_rate)
        if cls.population is not None and not (cls.population >= 0 and math.isfinite(cls.population)):
            raise QueueingModelError("must not be negative", field=f"{where}.population", value=cls.population)
        if not (cls.think_time >= 0 and math.isfinite(cls.think_time)):
            raise QueueingModelError("must not be negative", field=f"{where}.thinkTime", value=cls.think_time)
        if cls.is_open and cls.think_time:
            raise QueueingModelError("only a closed class thinks", field=f"{where}.thinkTime", value=cls.think_time)
        for target, demand in cls.demands.items():
            at = f"{where}.demands.{target}"
            if target not in network.index:
                known = ", ".join(c.name for c in network.centres)
                raise QueueingModelError(f"no centre is named {target!r} (centres: {known})", field=at, value=target)
            for name, value in (("visits", demand.visits), ("service", demand.service), ("scv", demand.scv)):
                if not (value >= 0 and math.isfinite(value)):
                    raise QueueingModelError("must be a finite number >= 0", field=f"{at}.{name}", value=value)
        if not any(d.demand > 0 for d in cls.demands.values()) and cls.is_open:
            raise QueueingModelError("an open class needs a demand > 0 somewhere", field=f"{where}.demands")
