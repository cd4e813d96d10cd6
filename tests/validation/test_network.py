"""The queueing network run as a DES: hand-worked timelines of constant service, one or two jobs.

With constant service times nothing is random, so each run's means are worked out by hand: a job
finishing exactly at the halt is not counted (nothing runs at the halt), and a cycle counts only if
it started at or after the warm-up.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from skenario.queueing import Centre, CentreKind, Demand, Network, Scheduling, WorkloadClass
from skenario.validation.network import MemoryConstraint, NetworkSimulation


def closed(scheduling: Scheduling, population: int) -> Network:
    """`population` jobs cycling with no think time through one single-server centre, 1 unit each."""
    return Network.of(
        [Centre("cpu", scheduling=scheduling)],
        [WorkloadClass("jobs", {"cpu": Demand(1.0, 1.0, scv=0.0)}, population=population)],
    )


@pytest.mark.parametrize("scheduling", [Scheduling.PS, Scheduling.FCFS])
def test_one_job_cycles_back_to_back(scheduling: Scheduling) -> None:
    # Cycles end at 1, 2, ..., 9; the one ending at 10 (the halt) does not. The server is never idle.
    means = NetworkSimulation(closed(scheduling, 1), duration=10, warmup=0, seed=1).run()
    assert means.cycles == {"jobs": 9}
    assert means.response == {"jobs": 1.0}
    assert means.throughput == {"jobs": 0.9}
    assert means.utilization == {"cpu": 1.0}


def test_the_warmup_leaves_out_cycles_begun_before_it() -> None:
    # Of the cycles begun at 0, 1, ..., 8, those begun at 3 or later count: 6 in the 7 units measured.
    means = NetworkSimulation(closed(Scheduling.PS, 1), duration=10, warmup=3, seed=1).run()
    assert means.cycles == {"jobs": 6}
    assert means.response == {"jobs": 1.0}
    assert means.throughput == {"jobs": 6 / 7}
    assert means.utilization == {"cpu": 1.0}


def test_two_jobs_share_a_processor_sharing_server() -> None:
    # Both run at half speed and finish together every 2 units: at 2, 4, 6 and 8, each after 2 units.
    means = NetworkSimulation(closed(Scheduling.PS, 2), duration=10, warmup=0, seed=1).run()
    assert means.cycles == {"jobs": 8}
    assert means.response == {"jobs": 2.0}
    assert means.throughput == {"jobs": 0.8}
    assert means.utilization == {"cpu": 1.0}


def test_two_jobs_take_turns_at_a_fcfs_server() -> None:
    # A is served 0-1 while B waits, then B 1-2 while A (back at 1) waits, and so on: one finishes
    # at each of 1, ..., 9. The first took 1 unit (A never waited), every later one 2.
    means = NetworkSimulation(closed(Scheduling.FCFS, 2), duration=10, warmup=0, seed=1).run()
    assert means.cycles == {"jobs": 9}
    assert means.response["jobs"] == pytest.approx((1 + 8 * 2) / 9)
    assert means.throughput == {"jobs": 0.9}
    assert means.utilization == {"cpu": 1.0}


def test_a_delay_centre_holds_each_job_for_exactly_its_service() -> None:
    # Poisson arrivals, 0.5 units at an infinite server: no waiting, and no utilisation reported.
    network = Network.of(
        [Centre("think", kind=CentreKind.DELAY)],
        [WorkloadClass("visits", {"think": Demand(1.0, 0.5, scv=0.0)}, arrival_rate=2.0)],
    )
    means = NetworkSimulation(network, duration=100, warmup=10, seed=3).run()
    assert means.cycles["visits"] > 0
    assert means.response == {"visits": 0.5}
    assert means.utilization == {}


@pytest.mark.parametrize(("duration", "warmup"), [(10, 10), (10, 12), (10, -1)])
def test_the_warmup_must_fall_inside_the_run(duration: float, warmup: float) -> None:
    with pytest.raises(ValueError, match="warmup"):
        NetworkSimulation(closed(Scheduling.PS, 1), duration=duration, warmup=warmup, seed=1)


def test_a_memory_constraint_of_one_makes_jobs_take_turns() -> None:
    # Two jobs, no think time, a PS centre of 1 unit each, at most one in memory: as two jobs at an FCFS
    # server, one finishes at each of 1, ..., 9; the first took 1 unit, every later one 2 (1 waiting for memory).
    means = NetworkSimulation(
        closed(Scheduling.PS, 2), duration=10, warmup=0, seed=1, memory=MemoryConstraint(("cpu",), 1)
    ).run()
    assert means.cycles == {"jobs": 9}
    assert means.response["jobs"] == pytest.approx((1 + 8 * 2) / 9)


def memory_constrained_exactly(users: int, think: float, demands: list[float], places: int) -> float:
    """The throughput of terminals sharing a tandem of FCFS exponential centres that admits `places` jobs,
    from its Markov chain solved directly (states: jobs at the subsystem, and where those in memory are)."""
    states = []
    for n in range(users + 1):
        inside = min(n, places)
        for split in itertools.product(range(inside + 1), repeat=len(demands)):
            if sum(split) == inside:
                states.append((n, *split))
    index = {state: i for i, state in enumerate(states)}
    q = np.zeros((len(states), len(states)))
    for state in states:
        n, *at = state
        if n < users:  # a user stops thinking: into memory at the first centre, or in line for it
            to = [at[0] + 1, *at[1:]] if n < places else at
            q[index[state], index[(n + 1, *to)]] += (users - n) / think
        for k, count in enumerate(at):
            if count == 0:
                continue
            to = list(at)
            to[k] -= 1
            if k + 1 < len(at):
                to[k + 1] += 1
                q[index[state], index[(n, *to)]] += 1 / demands[k]
            else:  # done: back to thinking, and the first in line takes the place
                if n > places:
                    to[0] += 1
                q[index[state], index[(n - 1, *to)]] += 1 / demands[k]
    np.fill_diagonal(q, -q.sum(axis=1))
    a = np.vstack([q.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1.0
    p = np.linalg.lstsq(a, b, rcond=None)[0]
    return float(sum(p[index[s]] / demands[-1] for s in states if s[-1] > 0))


def test_a_memory_constraint_agrees_with_its_markov_chain() -> None:
    """6 users thinking 4, a tandem of 1 and 1.5, at most 2 in memory: the simulated throughput's 99%
    interval over 10 replications holds the chain's (the flow-equivalent server is 1-2% off here)."""
    network = Network.of(
        [Centre("cpu"), Centre("disk")],
        [WorkloadClass("users", {"cpu": Demand(1.0, 1.0), "disk": Demand(1.0, 1.5)}, population=6, think_time=4.0)],
    )
    exact = memory_constrained_exactly(6, 4.0, [1.0, 1.5], 2)
    runs = [
        NetworkSimulation(network, duration=8_000, warmup=200, seed=seed, memory=MemoryConstraint(("cpu", "disk"), 2))
        .run()
        .throughput["users"]
        for seed in range(10)
    ]
    mean, spread = float(np.mean(runs)), float(np.std(runs, ddof=1)) / math.sqrt(len(runs))
    assert abs(mean - exact) <= 3.25 * spread  # t(0.995, 9)
