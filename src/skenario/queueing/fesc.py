"""A memory constraint: a subsystem of centres that admits at most so many jobs, solved as a flow-equivalent server.

PDQ's fesc.c (Gunther, The Practical Performance Analyst, ch. 3; Lazowska, Zahorjan, Graham and Sevcik,
Quantitative System Performance, ch. 9): the subsystem is solved alone, with its closed class and no think
time, for 1 to `max_jobs` jobs; its throughputs x(n) become the rates of one load-dependent centre, which
completes jobs at x(min(n, max_jobs)) with n present (the others wait for memory there), and that composite
network is solved exactly. Norton's theorem for queueing networks (Chandy, Herzog and Woo) makes the
flow-equivalent server exact for a product-form network; a memory constraint is not product form (the
subsystem's time per job is not exponential), so the answer is an approximation, a close one: `skenario
theory` sets it beside the simulated system ("memory-constrained").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from skenario.queueing.network import Centre, Demand, Network, QueueingModelError, WorkloadClass
from skenario.queueing.solution import Method, Solution
from skenario.queueing.solve import solve

APPROXIMATION = "the memory constraint as a flow-equivalent server (exact only for product-form networks)"


def flow_equivalent(network: Network, centres: Sequence[str], max_jobs: int, name: str = "memory") -> Network:
    """`network` with `centres` replaced by the flow-equivalent server `name` of a subsystem that admits at most
    `max_jobs` jobs. Raises QueueingModelError for what it cannot stand for (named by field)."""
    if max_jobs < 1:
        raise QueueingModelError("must be at least 1", field="memoryConstraint.maxJobs", value=max_jobs)
    unknown = [c for c in centres if c not in network.index]
    if unknown:
        known = ", ".join(c.name for c in network.centres)
        raise QueueingModelError(
            f"no centre is named {unknown[0]!r} (centres: {known})", field="memoryConstraint.centres", value=unknown[0]
        )
    if name in network.index and name not in centres:
        raise QueueingModelError("a centre has this name already", field="memoryConstraint.name", value=name)
    if len(network.classes) != 1 or network.classes[0].is_open:
        raise QueueingModelError(
            "a memory constraint is solved for one closed class (the terminals that share the subsystem)",
            field="memoryConstraint",
        )
    [cls] = network.classes
    inside = [network.centre(c) for c in centres]
    throughputs = []
    for jobs in range(1, max_jobs + 1):
        alone = WorkloadClass(cls.name, {c: d for c, d in cls.demands.items() if c in centres}, population=jobs)
        throughputs.append(solve(Network(tuple(inside), (alone,), f"{network.name}/{name}")).throughput(cls.name))
    server = Centre(name, rates=tuple(throughputs))
    outside = tuple(c for c in network.centres if c.name not in centres)
    demands = {c: d for c, d in cls.demands.items() if c not in centres} | {name: Demand(1.0, 1.0)}
    composite = WorkloadClass(cls.name, demands, population=cls.population, think_time=cls.think_time)
    return Network((*outside, server), (composite,), network.name)


def solve_flow_equivalent(
    network: Network, centres: Sequence[str], max_jobs: int, name: str = "memory", method: Method | str | None = None
) -> Solution:
    """The network with its memory constraint, solved through its flow-equivalent server, the approximation said."""
    solution = solve(flow_equivalent(network, centres, max_jobs, name), method)
    return replace(solution, approximations=(*solution.approximations, APPROXIMATION))
