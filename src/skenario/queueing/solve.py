"""`solve(network)`: pick and run the method, and say what made the answer approximate.

Open classes get the canonical solution; closed classes exact MVA (or, for one closed class
with multi-server centres, its load-dependent form) or Bard-Schweitzer; a mixed network solves
the closed classes on centres slowed by the open load, then the open ones around them. Priority
centres in an open network use Cobham's and the preemptive-resume formulas; in a closed one the
shadow server (`skenario.queueing.shadow`), as PDQ does it.
"""

from __future__ import annotations

import math
from enum import StrEnum

import numpy as np

from skenario.queueing.canonical import open_blocking, open_residence, open_utilization
from skenario.queueing.loaddependent import single_class_load_dependent
from skenario.queueing.mva import exact_mva, schweitzer_mva
from skenario.queueing.network import Network, QueueingModelError
from skenario.queueing.shadow import solve_with_shadow_servers
from skenario.queueing.solution import Method, Solution, demand_matrix
from skenario.queueing.stations import multipliers

PDQ_TOLERANCE = 0.001


class Priorities(StrEnum):
    FORMULAS = "formulas"  # Cobham / preemptive-resume per centre: open classes only
    SHADOW = "shadow"  # the shadow-server technique: closed or open


def solve(
    network: Network,
    method: Method | str | None = None,
    *,
    tolerance: float = PDQ_TOLERANCE,
    priorities: Priorities | str | None = None,
) -> Solution:
    """Solve `network`. By default: canonical when every class is open, else exact MVA.

    `tolerance` is Bard-Schweitzer's stopping rule (PDQ's 0.001 reproduces its published figures;
    1e-10 gives the converged fixed point). `priorities` picks how priority centres are solved:
    `formulas` (the default for open networks) or `shadow` (the default, and the only way, for
    closed and mixed ones).
    """
    method = _method(network, method)
    closed = bool(network.closed_classes)
    if priorities is None:
        priorities = Priorities.SHADOW if closed else Priorities.FORMULAS
    priorities = Priorities(priorities)
    if any(c.scheduling.is_priority for c in network.centres) and (priorities is Priorities.SHADOW or closed):
        if priorities is Priorities.FORMULAS:
            raise QueueingModelError(
                "priority formulas (Cobham, preemptive-resume) hold for open classes only; "
                "a closed or mixed network takes priorities: shadow",
                field="priorities",
                value=priorities.value,
            )
        return solve_with_shadow_servers(
            network, lambda n: solve(n, method, tolerance=tolerance, priorities=priorities)
        )
    if not closed:
        notes: list[str] = []
        residence = open_residence(network, notes=notes)
        blocking = open_blocking(network)
        return Solution.of(
            network, method, _admitted(network, blocking), residence, approximations=notes, blocking=blocking
        )
    return _solve_closed(network, method, tolerance)


def _admitted(network: Network, blocking: np.ndarray) -> np.ndarray:
    """Each open class's throughput: its arrival rate less what the centres with a capacity turn away, each
    visit lost with its centre's blocking probability."""
    rates = _rates(network)
    for j, cls in enumerate(network.classes):
        for k, centre in enumerate(network.centres):
            visits = cls.demands[centre.name].visits if cls.demand(centre.name) > 0 else 0.0
            if blocking[k] > 0 and visits > 0:
                rates[j] *= (1.0 - blocking[k]) ** visits
    return rates


def _check_closed_capacities(network: Network, populations: np.ndarray) -> None:
    """A capacity no closed class's jobs can reach changes nothing; a smaller one would block them (not solved)."""
    jobs = float(populations.sum())
    for k, centre in enumerate(network.centres):
        if centre.capacity is not None and centre.capacity < jobs:
            raise QueueingModelError(
                f"closed classes of {jobs:g} jobs would be blocked at a capacity of {centre.capacity}: a closed "
                "network with blocking is not solved (give a capacity of at least the population, or none)",
                field=f"centres.{k}.capacity",
                value=centre.capacity,
            )


def _method(network: Network, method: Method | str | None) -> Method:
    if method is None:
        return Method.EXACT if network.closed_classes else Method.CANONICAL
    try:
        method = Method(method)
    except ValueError:
        names = ", ".join(m.value for m in Method)
        raise QueueingModelError(f"unknown method (methods: {names})", field="method", value=method) from None
    if method is Method.CANONICAL and network.closed_classes:
        raise QueueingModelError(
            "the canonical solution is for open classes; a model with closed classes takes exact or approx",
            field="method",
            value=method.value,
        )
    if method is not Method.CANONICAL and not network.closed_classes:
        raise QueueingModelError(
            "MVA solves closed classes; a model of open classes only takes canonical",
            field="method",
            value=method.value,
        )
    return method


def _rates(network: Network) -> np.ndarray:
    return np.array([c.arrival_rate or 0.0 for c in network.classes])


def _solve_closed(network: Network, method: Method, tolerance: float) -> Solution:
    notes: list[str] = []
    demands = demand_matrix(network)
    open_load = open_utilization(network) if network.open_classes else np.zeros(len(network.centres))
    closed = [j for j, c in enumerate(network.classes) if not c.is_open]
    delay = np.array([k.is_delay for k in network.centres])
    servers = np.array([k.servers for k in network.centres])
    slowed = demands[:, closed] / np.where(delay, 1.0, 1.0 - open_load)[:, None]
    populations = np.array([network.classes[j].population or 0.0 for j in closed])
    think = np.array([network.classes[j].think_time for j in closed])
    for i, j in enumerate(closed):
        if populations[i] > 0 and think[i] + slowed[:, i].sum() == 0:
            raise QueueingModelError(
                "a closed class needs a think time or a demand > 0, else its throughput is infinite",
                field=f"classes.{j}",
                value=network.classes[j].name,
            )
    multi = np.array([k.load_dependent for k in network.centres], dtype=bool)
    _check_closed_capacities(network, populations)
    if network.open_classes and multi.any():
        # Slowing a centre by 1/(1 - U_open) is exact for single-server product-form centres only.
        notes.append("mixed network with multi-server centres: the open load's slowdown is approximate there")
    iterations = None
    if method is Method.EXACT:
        whole = np.round(populations)
        for i, j in enumerate(closed):
            if not math.isclose(populations[i], whole[i]):
                raise QueueingModelError(
                    "exact MVA needs a whole population; use method approx for a fractional one",
                    field=f"classes.{j}.population",
                    value=populations[i],
                )
        if multi.any() and len(closed) > 1:
            k = int(np.argmax(multi))
            rated = bool(network.centres[k].rates)
            raise QueueingModelError(
                "exact MVA solves multi-server and load-dependent centres for one closed class only"
                + ("" if rated else "; use method approx"),
                field=f"centres.{k}.{'rates' if rated else 'servers'}",
                value=list(network.centres[k].rates) if rated else int(servers[k]),
            )
        try:
            if multi.any():
                population = int(whole[0])
                alphas = [
                    None if centre.is_delay else multipliers(centre.rates, centre.servers, max(population, 1))
                    for centre in network.centres
                ]
                x1, r1 = single_class_load_dependent(slowed[:, 0], alphas, population, float(think[0]))
                x, r = np.array([x1]), r1[:, None]
            else:
                x, r = exact_mva(slowed, delay, whole.astype(np.int64), think)
        except ValueError as exc:
            raise QueueingModelError(str(exc), field="method", value=method.value) from None
    else:
        with_rates = [k for k, centre in enumerate(network.centres) if centre.rates]
        if with_rates:
            raise QueueingModelError(
                "a load-dependent centre (rates) is solved exactly, for one closed class: use method exact",
                field=f"centres.{with_rates[0]}.rates",
                value=list(network.centres[with_rates[0]].rates),
            )
        queue_part, delay_part = slowed, np.zeros_like(slowed)
        if multi.any():
            names = ", ".join(network.centres[k].name for k in np.flatnonzero(multi))
            notes.append(
                f"Seidmann's approximation for the multi-server centres {names}: D/m queueing + D(m-1)/m delay"
            )
            m = servers[:, None].astype(float)
            queue_part = np.where(multi[:, None], slowed / m, slowed)
            delay_part = np.where(multi[:, None], slowed * (m - 1) / m, 0.0)
        notes.append(f"Bard-Schweitzer approximate MVA (stops when no queue moves by more than {tolerance:g})")
        # Only split centres when some are multi-server: PDQ starts with N/K at each of K centres.
        stacked, stacked_delay = slowed, delay
        if multi.any():
            stacked = np.vstack([queue_part, delay_part])
            stacked_delay = np.concatenate([delay, np.ones(len(delay), dtype=bool)])
        try:
            x, r_stacked, iterations = schweitzer_mva(stacked, stacked_delay, populations, think, tolerance=tolerance)
        except ValueError as exc:
            raise QueueingModelError(str(exc), field="method", value=method.value) from None
        r = r_stacked[: len(delay)] + r_stacked[len(delay) :] if multi.any() else r_stacked
    throughput = _rates(network)
    residence = np.zeros_like(demands)
    throughput[closed] = x
    residence[:, closed] = r
    if network.open_classes:
        closed_queue = (r * x).sum(axis=1)
        residence += open_residence(network, np.where(delay, 0.0, closed_queue), notes)
    return Solution.of(network, method, throughput, residence, iterations=iterations, approximations=notes)
