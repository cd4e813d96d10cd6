"""Open classes: the canonical solution (PDQ's `canonical()` in `MVA_Canon.c`), with priorities.

An open class's throughput is its arrival rate. At a single-server PS or LCFS centre its residence
is D / (1 - U), U the centre's total utilisation, whatever the service distribution; at a delay
centre it is D. At a single-server FCFS centre PDQ uses the same D / (1 - U), which is exact only
for exponential service with equal means; here each visit waits the M/G/1 FCFS time
W = sum lambda_i E[S_i^2] / (2 (1 - U)) (Pollaczek-Khinchine), exact for any service time and
equal to PDQ's answer in PDQ's case. Unlike PDQ, which refuses several streams at a multi-server
centre, an M/M/c centre uses Erlang C on the total load: R = D (1 + C(c, a) / (c (1 - U))),
exact when service is exponential with equal means. At a priority centre the formulas of
`skenario.queueing.priority` apply per visit.
"""

from __future__ import annotations

import math

import numpy as np

from skenario.queueing.erlang import erlang_c
from skenario.queueing.network import Centre, Demand, Network, QueueingModelError, Scheduling, WorkloadClass
from skenario.queueing.priority import (
    Load,
    nonpreemptive_mg1,
    nonpreemptive_mmc,
    preemptive_resume_mg1,
    preemptive_resume_mmc,
)
from skenario.queueing.solution import demand_matrix
from skenario.queueing.stations import StationResult, open_station


def open_utilization(network: Network) -> np.ndarray:
    """U[k]: per-server utilisation of each centre by the open classes; refuses saturation."""
    demands = demand_matrix(network)
    rates = np.array([c.arrival_rate or 0.0 for c in network.classes])
    by_class = demands * rates  # U[k, c] over all servers
    servers = np.array([1 if k.is_delay else k.servers for k in network.centres], dtype=float)
    total = by_class.sum(axis=1) / servers
    for k, centre in enumerate(network.centres):
        if centre.special:
            total[k] = _station(network, k).throughput * _service(network, k) / _top_rate(centre)
            continue
        if not centre.is_delay and total[k] >= 1:
            j = int(np.argmax(by_class[k]))
            cls = network.classes[j]
            shares = ", ".join(f"{c.name} {by_class[k, i] / servers[k]:.4g}" for i, c in enumerate(network.classes))
            raise QueueingModelError(
                f"the open classes load centre {centre.name!r} to {total[k]:.4g} per server (>= 1, it saturates): "
                f"{shares}",
                field=f"classes.{j}.arrivalRate",
                value=cls.arrival_rate,
            )
    return np.asarray(total, dtype=float)


def open_residence(
    network: Network, closed_queue: np.ndarray | None = None, notes: list[str] | None = None
) -> np.ndarray:
    """R[k, c] of the open classes (0 for closed ones); what is approximate is added to `notes`.

    `closed_queue[k]`, the closed classes' mean queue at centre k in a mixed network, adds
    their work: R = D (1 + Q_closed) / (1 - U_open) (Lazowska et al., ch. 7).
    """
    notes = [] if notes is None else notes
    utilization = open_utilization(network)
    demands = demand_matrix(network)
    residence = np.zeros_like(demands)
    open_ = [j for j, c in enumerate(network.classes) if c.is_open]
    for k, centre in enumerate(network.centres):
        if centre.is_delay:
            residence[k, open_] = demands[k, open_]
            continue
        if centre.special:
            if closed_queue is not None and closed_queue[k] > 0:
                raise QueueingModelError(
                    "a centre with rates or a capacity shared by open and closed classes is not solved",
                    field=f"centres.{k}.{'rates' if centre.rates else 'capacity'}",
                )
            for j, _, demand in _present(network, k):
                residence[k, j] = demand.visits * _station(network, k).response
            if _visits_elsewhere(network, k):
                notes.append(
                    f"the jobs {centre.name} turns away are taken as lost to the other centres too, "
                    "and the other centres' loads as offered"
                )
            continue
        if centre.scheduling.is_priority:
            if closed_queue is not None and closed_queue[k] > 0:
                raise QueueingModelError(
                    "priorities at a centre shared by open and closed classes are not solved; "
                    "give the closed classes a centre of their own or use the shadow server",
                    field=f"centres.{k}.scheduling",
                    value=centre.scheduling.value,
                )
            residence[k] = _priority_residence(network, k)
            if centre.servers > 1 and not _exponential_alike(network, k):
                notes.append(f"M/M/c priority formulas at {centre.name} with non-exponential service")
            continue
        if centre.servers == 1 and centre.scheduling is Scheduling.FCFS and closed_queue is None:
            residence[k] = _fcfs_residence(network, k, utilization[k])
            continue
        factor = 1.0 / (1.0 - utilization[k])
        if centre.servers > 1:
            factor = 1.0 + erlang_c(centre.servers, utilization[k] * centre.servers) * factor / centre.servers
            if not _exponential_alike(network, k):
                notes.append(f"Erlang C at {centre.name}: exact only for exponential service with equal means")
        extra = 1.0 + (closed_queue[k] if closed_queue is not None else 0.0)
        residence[k, open_] = demands[k, open_] * factor * extra
    return residence


def _station(network: Network, k: int) -> StationResult:
    """The birth-death solution of centre k (rates or a capacity) for the one open class that visits it."""
    centre = network.centres[k]
    present = _present(network, k)
    if len(present) != 1:
        field = "rates" if centre.rates else "capacity"
        raise QueueingModelError(
            f"a centre with {field} serves one open class here; {len(present)} visit {centre.name!r}",
            field=f"centres.{k}.{field}",
        )
    _, cls, demand = present[0]
    try:
        return open_station(
            (cls.arrival_rate or 0.0) * demand.visits, demand.service, centre.rates, centre.servers, centre.capacity
        )
    except ValueError as exc:
        j = network.classes.index(cls)
        raise QueueingModelError(
            f"at {centre.name!r}: {exc}", field=f"classes.{j}.arrivalRate", value=cls.arrival_rate
        ) from None


def _service(network: Network, k: int) -> float:
    """The service time of one visit to centre k by the class that visits it."""
    return _present(network, k)[0][2].service


def _top_rate(centre: Centre) -> float:
    """What a centre completes with many jobs present, in servers: the last rate, or its servers."""
    return centre.rates[-1] if centre.rates else float(centre.servers)


def _visits_elsewhere(network: Network, k: int) -> bool:
    """Whether the class visiting finite centre k visits other centres (then losses there are approximate)."""
    if network.centres[k].capacity is None:
        return False
    [(_, cls, _)] = _present(network, k)
    return any(d.demand > 0 for name, d in cls.demands.items() if name != network.centres[k].name)


def open_blocking(network: Network) -> np.ndarray:
    """B[k]: the probability an open arrival finds centre k full (0 without a capacity)."""
    return np.array(
        [_station(network, k).blocking if c.capacity is not None else 0.0 for k, c in enumerate(network.centres)]
    )


def _present(network: Network, k: int) -> list[tuple[int, WorkloadClass, Demand]]:
    name = network.centres[k].name
    return [(j, c, c.demands[name]) for j, c in enumerate(network.classes) if c.is_open and c.demand(name) > 0]


def _exponential_alike(network: Network, k: int) -> bool:
    present = _present(network, k)
    return all(d.scv == 1 and math.isclose(d.service, present[0][2].service) for _, _, d in present)


def _fcfs_residence(network: Network, k: int, utilization: float) -> np.ndarray:
    """M/G/1 FCFS per visit: S + sum lambda_i E[S_i^2] / (2 (1 - U)) (Pollaczek-Khinchine)."""
    present = _present(network, k)
    wait = sum((c.arrival_rate or 0.0) * d.visits * d.second_moment for _, c, d in present) / (2 * (1 - utilization))
    residence = np.zeros(len(network.classes))
    for j, _, d in present:
        residence[j] = d.visits * (d.service + wait)
    return residence


def _priority_residence(network: Network, k: int) -> np.ndarray:
    centre = network.centres[k]
    present = [
        (j, c, c.demands[centre.name]) for j, c in enumerate(network.classes) if c.is_open and c.demand(centre.name) > 0
    ]
    loads = [Load((c.arrival_rate or 0.0) * d.visits, d.service, d.second_moment, c.priority) for _, c, d in present]
    preemptive = centre.scheduling is Scheduling.PRIORITY_PREEMPTIVE
    try:
        if centre.servers == 1:
            per_visit = preemptive_resume_mg1(loads) if preemptive else nonpreemptive_mg1(loads)
        else:
            per_visit = (preemptive_resume_mmc if preemptive else nonpreemptive_mmc)(centre.servers, loads)
    except ValueError as exc:
        raise QueueingModelError(str(exc), field=f"centres.{k}", value=centre.name) from None
    residence = np.zeros(len(network.classes))
    for (j, _, demand), time in zip(present, per_visit, strict=True):
        residence[j] = demand.visits * time
    return residence
