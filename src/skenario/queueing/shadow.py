"""The shadow-server technique for priority centres (Sevcik 1977, as PDQ's `shadowcpu` uses it).

Each priority level below the top one moves its demand at a priority centre to a shadow centre
of its own, inflated by 1 / (1 - U_higher): U_higher is what the higher levels use of the real
centre, taken from a submodel of the higher classes alone (PDQ's `GetProdU()`). The transformed
network has no priority centres and is solved by the usual method.

It is an approximation, and a poor one in open networks: there R* = D* / (1 - lambda D*) with
D* = D / (1 - rho_a) equals D / (1 - rho_a - rho_b), the FCFS response exactly (Gunther, seed 001),
so the low class looks unharmed. Cobham's formulas are the answer for open classes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from skenario.queueing.network import Centre, Demand, Network, Scheduling, WorkloadClass
from skenario.queueing.solution import Solution


def shadow_name(centre: str, priority: int) -> str:
    return f"{centre}~shadow{priority}"


def shadow_network(network: Network, solve: Callable[[Network], Solution]) -> tuple[Network, dict[str, str]]:
    """The transformed network and, for each shadow centre, the real centre it stands for."""
    priority_centres = [k for k in network.centres if k.scheduling.is_priority]
    levels = sorted({c.priority for c in network.classes}, reverse=True)
    higher_use: dict[tuple[str, int], float] = {}
    for level in levels[1:]:
        higher = [c for c in network.classes if c.priority > level]
        sub = solve(network.with_classes(higher))
        for centre in priority_centres:
            higher_use[centre.name, level] = sub.utilization(centre.name)
    centres = [
        Centre(k.name, k.kind, Scheduling.FCFS if k.scheduling.is_priority else k.scheduling, k.servers)
        for k in network.centres
    ]
    stands_for: dict[str, str] = {}
    classes = []
    for cls in network.classes:
        demands = dict(cls.demands)
        for centre in priority_centres:
            demand = demands.get(centre.name)
            if demand is None or cls.priority == levels[0] or demand.demand == 0:
                continue
            name = shadow_name(centre.name, cls.priority)
            if name not in stands_for:
                stands_for[name] = centre.name
                centres.append(Centre(name, centre.kind, Scheduling.FCFS, centre.servers))
            slowdown = 1.0 - higher_use[centre.name, cls.priority]
            del demands[centre.name]
            demands[name] = Demand(demand.visits, demand.service / slowdown, demand.scv)
        classes.append(WorkloadClass(cls.name, demands, cls.arrival_rate, cls.population, cls.think_time, cls.priority))
    return Network(tuple(centres), tuple(classes), network.name), stands_for


def solve_with_shadow_servers(network: Network, solve: Callable[[Network], Solution]) -> Solution:
    """Solve through shadow centres, then report residence at the real centres."""
    transformed, stands_for = shadow_network(network, solve)
    inner = solve(transformed)
    residence = np.zeros((len(network.centres), len(network.classes)))
    for centre in transformed.centres:
        real = network.index[stands_for.get(centre.name, centre.name)]
        for j, cls in enumerate(network.classes):
            residence[real, j] += inner.residence(centre.name, cls.name)
    throughput = [inner.throughput(c.name) for c in network.classes]
    shadows = ", ".join(sorted(set(stands_for.values())))
    note = f"shadow server at {shadows}: lower priorities' demand inflated by 1/(1 - U of the higher ones); " + (
        "approximate in a closed network" if network.closed_classes else "in an open network it gives FCFS's answer"
    )
    return Solution.of(
        network,
        inner.method,
        throughput,
        residence,
        iterations=inner.iterations,
        approximations=(note, *inner.approximations),
    )
