"""Routing policies: which replica each request goes to, by hand-worked schedules and statistics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest

from skenario.core.environment import Environment
from skenario.core.random import Constant
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import LaunchStage, RoutingPolicy, RoutingSpec
from skenario.model.replicas import Replica, ReplicasActive
from skenario.model.requests import Request
from skenario.model.routing import Chooser, least_requests, make_chooser, random_choice, round_robin
from skenario.workloads.patterns import constant_arrivals
from tests.model import Cycle, RequestTrace, build_requests

MS = MILLISECOND

# -- each policy alone, on replicas holding a given number of requests ------------------------------


class Held:
    """Stands in for a replica's RequestsProcessing: only how many requests it holds matters here."""

    def __init__(self, n: int) -> None:
        self.n = n

    def count(self) -> int:
        return self.n


def active(*held: int) -> ReplicasActive:
    """Active replicas 0, 1, ... in that order, holding `held[i]` requests each."""
    replicas = ReplicasActive(Environment(halt_at=SECOND))
    for i, n in enumerate(held):
        replicas.add(Replica(i, Held(n), 0, 1000))  # type: ignore[arg-type]
    return replicas


def draws(*values: float) -> Callable[[], float]:
    """A uniform stream that hands out exactly these values, then fails the test if asked for more."""
    it = iter(values)
    return lambda: next(it)


def picks(choose: Chooser, n: int) -> list[int | None]:
    """The ids of the next `n` replicas `choose` picks (None where it picks none)."""
    return [None if (replica := choose()) is None else replica.id for _ in range(n)]


def test_round_robin_takes_each_active_replica_in_turn() -> None:
    choose = round_robin(active(0, 0, 0))
    assert picks(choose, 7) == [0, 1, 2, 0, 1, 2, 0]


def test_random_choice_cuts_the_unit_interval_into_one_equal_slice_per_replica() -> None:
    # With 4 replicas, u in [k/4, (k+1)/4) picks replica k.
    choose = random_choice(active(0, 0, 0, 0), draws(0.0, 0.2499, 0.25, 0.74, 0.75, 0.9999))
    assert picks(choose, 6) == [0, 0, 1, 2, 3, 3]


def test_no_active_replica_means_no_choice_and_no_draw() -> None:
    for choose in (round_robin(active()), random_choice(active(), draws()), least_requests(active(), draws())):
        assert picks(choose, 1) == [None]


def test_least_requests_keeps_the_drawn_replica_holding_fewer() -> None:
    # Replicas hold 5, 1, 3 and 1 requests. Each pair of draws names two replicas (u * 4); the one
    # holding fewer wins, and on a tie the first drawn: (0, 2) -> 2, (1, 3) -> 1, (3, 1) -> 3,
    # (2, 2) -> 2.
    choose = least_requests(active(5, 1, 3, 1), draws(0.0, 0.5, 0.3, 0.8, 0.8, 0.3, 0.6, 0.6), choices=2)
    assert picks(choose, 4) == [2, 1, 3, 2]


def test_least_requests_scans_every_replica_when_the_choices_cover_them() -> None:
    # Three replicas, three choices: no draw, the fewest held wins, ties to the first in order.
    assert picks(least_requests(active(4, 2, 2), draws(), choices=3), 1) == [1]
    assert picks(least_requests(active(4, 2, 0), draws(), choices=5), 1) == [2]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [(RoutingPolicy.ROUND_ROBIN, [0, 1, 2]), (RoutingPolicy.RANDOM, [2, 0, 1]), (RoutingPolicy.LEAST_REQUESTS, [2])],
)
def test_make_chooser_builds_the_named_policy(policy: RoutingPolicy, expected: list[int]) -> None:
    # Replicas hold 2, 1, 0 requests and the draws are 0.9, 0.1, 0.5: random picks 2, 0, 1; least
    # requests with 3 choices of 3 scans them all and picks 2; round robin ignores both.
    choose = make_chooser(RoutingSpec(policy=policy, choices=3), active(2, 1, 0), draws(0.9, 0.1, 0.5))
    assert picks(choose, len(expected)) == expected


# -- the policies in a running cluster -------------------------------------------------------------


def destinations(model: ClusterModel, trace: RequestTrace) -> list[int]:
    by_stock = {r.processing: r.id for r in model.replicas.values()}
    return [by_stock[t] for _, _, _, t in trace.kind("send_to_replica")]


@pytest.mark.parametrize("choices", [3, 5])
def test_least_requests_picks_the_replica_holding_the_fewest(choices: int) -> None:
    # Three replicas; requests at 1..5 s need 10 s, 100 ms, 10 s, 10 s, 10 s of CPU. By hand:
    #   1 s: counts (0,0,0) -> replica 0 (ties go to the first).  2 s: (1,0,0) -> replica 1,
    #   done at 2.1 s.  3 s: (1,0,0) -> replica 1 again (round robin would pick 2).
    #   4 s: (1,1,0) -> replica 2.  5 s: (1,1,1) -> replica 0.
    env, model, trace = build_requests(
        arrivals=[k * SECOND for k in range(1, 6)],
        cpu_time=Cycle((10 * SECOND, 100 * MS, 10 * SECOND, 10 * SECOND, 10 * SECOND)),
        timeout=None,
        replicas=3,
        policy=RoutingPolicy.LEAST_REQUESTS,
        choices=choices,
    )
    env.run()
    assert destinations(model, trace) == [0, 1, 1, 2, 0]


def run_policy(policy: RoutingPolicy, seed: int, replicas: int = 4, choices: int = 2) -> tuple[ClusterModel, list[int]]:
    duration = 2 * SECOND
    env, model, trace = build_requests(
        arrivals=constant_arrivals(2000, 0, duration),
        cpu_time=Constant(1 * MS),
        replicas=replicas,
        policy=policy,
        choices=choices,
        seed=seed,
        duration=duration,
    )
    env.run()
    return model, destinations(model, trace)


def test_random_routing_spreads_requests_evenly() -> None:
    model, served = run_policy(RoutingPolicy.RANDOM, seed=3)
    n = len(served)
    assert n == model.requests_arrived == 3999
    counts = Counter(served)
    expected = n / 4
    chi2 = sum((counts[i] - expected) ** 2 / expected for i in range(4))
    assert chi2 < 16.27  # the chi-square 0.999 quantile with 3 degrees of freedom
    # And it is not round robin in disguise: consecutive picks repeat about a quarter of the time.
    repeats = sum(a == b for a, b in pairwise(served))
    assert 0.2 < repeats / (n - 1) < 0.3


@pytest.mark.parametrize("policy", [RoutingPolicy.RANDOM, RoutingPolicy.LEAST_REQUESTS])
def test_routing_is_deterministic_for_a_seed(policy: RoutingPolicy) -> None:
    # Least requests with 2 choices of 4 replicas draws at random too. Requests of 1 ms at 2000/s
    # over 4 replicas often find several idle replicas, so the draws decide.
    _, first = run_policy(policy, seed=11)
    _, again = run_policy(policy, seed=11)
    _, other = run_policy(policy, seed=12)
    assert first == again
    assert first != other


def test_least_requests_with_two_choices_shuns_a_busy_replica() -> None:
    # One replica is stuck on a 100 s request from 50 ms on; every later request needs 1 ms and
    # arrives 10 ms apart, so the other two are almost always empty. With two random choices of
    # three, the stuck replica is picked only when both draws hit it (1 time in 9) or when the
    # other drawn replica happens to be busy too: it gets far less traffic than either other one.
    duration = 4 * SECOND
    env, model, trace = build_requests(
        arrivals=[50 * MS, *constant_arrivals(100, 100 * MS, duration)],
        cpu_time=Cycle((100 * SECOND, *([1 * MS] * 99))),
        timeout=None,
        replicas=3,
        policy=RoutingPolicy.LEAST_REQUESTS,
        choices=2,
        seed=4,
        duration=duration,
    )
    env.run()
    served = destinations(model, trace)
    stuck = served[0]
    counts = Counter(served[1:])
    others = [counts[i] for i in range(3) if i != stuck]
    assert counts[stuck] < min(others)


def test_requests_are_never_sent_to_a_replica_that_is_not_active() -> None:
    env, model, trace = build_requests(
        arrivals=constant_arrivals(50, 0, 6 * SECOND),
        replicas=2,
        launch=(LaunchStage("start", Constant(1 * SECOND)),),
        duration=6 * SECOND,
    )
    env.call_at(1 * SECOND, lambda: model.scale_to(4))
    env.call_at(3 * SECOND, lambda: model.scale_to(1))
    env.run()
    stopped = {e: at for at, e, _, _ in trace.kind("terminate_replica")}
    everyone = [e for at, e, _, _ in trace.kind("start_initial_replica") + trace.kind("begin_launch")]
    assert len(everyone) == 4
    active_at: dict[Any, tuple[int, int]] = {}
    for replica in everyone:
        assert replica.activated_at is not None
        active_at[replica.processing] = (replica.activated_at, stopped.get(replica, env.now()))
    assert sorted(stopped.values()) == [3 * SECOND] * 3
    sends = trace.kind("send_to_replica")
    assert len(sends) == model.requests_arrived
    for at, request, _, to in sends:
        assert isinstance(request, Request)
        start, end = active_at[to]
        assert start <= at <= end
    assert model.requests_failed.count() == 0
