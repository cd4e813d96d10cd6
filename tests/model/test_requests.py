"""Requests: the activator-like buffer, timeouts (buffered and processing), and routing policies."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import pytest

from skenario.core.entity import Entity
from skenario.core.environment import Environment
from skenario.core.movement import IgnoredMovement, Movement
from skenario.core.random import Constant, Distribution, RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import (
    ClusterSpec,
    LaunchStage,
    ReplicaSpec,
    RequestSpec,
    RoutingPolicy,
    RoutingSpec,
)
from skenario.model.requests import Request, RequestsBuffered
from skenario.workloads.patterns import constant_arrivals

MS = MILLISECOND
TEN_MS = Constant(10 * MILLISECOND)


@dataclass(frozen=True)
class Cycle:
    """A test distribution: the given values in turn (each batch starts again from the first)."""

    values: tuple[int, ...]

    def batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.resize(np.array(self.values, dtype=np.float64), size)

    def mean(self) -> float:
        return sum(self.values) / len(self.values)


class Trace:
    """Observer keeping (time, kind, entity, from_stock, to_stock) of every movement that ran."""

    def __init__(self) -> None:
        self.moves: list[tuple[int, str, Entity, Any, Any]] = []

    def on_movement(self, movement: Movement, entity: Entity) -> None:
        self.moves.append((movement.occurs_at, movement.kind, entity, movement.from_stock, movement.to_stock))

    def on_ignored(self, ignored: IgnoredMovement) -> None:
        pass

    def kind(self, kind: str) -> list[tuple[int, Entity, Any, Any]]:
        return [(at, e, f, t) for at, k, e, f, t in self.moves if k == kind]


def build(
    *,
    arrivals: Iterable[int],
    duration: int = 10 * SECOND,
    cpu_time: Distribution = TEN_MS,
    io_time: Distribution | None = None,
    timeout: int | None = 10 * SECOND,
    replicas: int = 0,
    launch: tuple[LaunchStage, ...] = (),
    buffer_capacity: int = 1000,
    concurrency: int | None = None,
    policy: RoutingPolicy = RoutingPolicy.ROUND_ROBIN,
    choices: int = 2,
    seed: int = 1,
) -> tuple[Environment, ClusterModel, Trace]:
    env = Environment(halt_at=duration)
    spec = ClusterSpec(
        requests=RequestSpec(cpu_time, io_time, timeout),
        replica=ReplicaSpec(launch=launch, concurrency=concurrency),
        initial_replicas=replicas,
        routing=RoutingSpec(policy=policy, choices=choices, buffer_capacity=buffer_capacity),
    )
    model = ClusterModel(env, spec, iter(arrivals), RandomStreams(seed))
    trace = Trace()
    env.observe(trace)
    return env, model, trace


def assert_at(actual: int, expected: int) -> None:
    """A processor-sharing finish: never early, at most 1 ns late (its wake-up is a rounded-up float)."""
    assert expected <= actual <= expected + 1, (actual, expected)


# -- the buffer --------------------------------------------------------------------------------


def test_requests_wait_in_the_buffer_until_a_replica_becomes_active() -> None:
    # No replica until one launched at 500 ms finishes its 1 s start stage at 1.5 s. The three
    # requests of 100, 200 and 300 ms wait in the buffer, then go out through routing at 1.5 s,
    # oldest first, and share the CPU: three 10 ms jobs on one core end together at 1.53 s,
    # followed by 20 ms of IO.
    env, model, trace = build(
        arrivals=[100 * MS, 200 * MS, 300 * MS],
        launch=(LaunchStage("start", Constant(1 * SECOND)),),
        io_time=Constant(20 * MS),
    )
    env.call_at(500 * MS, lambda: model.scale_to(1))
    env.run(until=1 * SECOND)
    assert isinstance(model.requests_buffered, RequestsBuffered)
    buffered = list(model.requests_buffered)
    assert [r.arrived_at for r in buffered] == [100 * MS, 200 * MS, 300 * MS]
    assert model.requests_buffered.count() == 3
    assert model.requests_in_flight == 3
    env.run()
    released = trace.kind("route_buffered")
    assert [(at, e) for at, e, _, _ in released] == [(1500 * MS, r) for r in buffered]
    assert all(f is model.requests_buffered and t is model.requests_routing for _, _, f, t in released)
    sent = trace.kind("send_to_replica")
    assert [(at, e) for at, e, _, _ in sent] == [(1500 * MS, r) for r in buffered]
    completed = {e: at for at, e, _, _ in trace.kind("complete_request")}
    for request in buffered:
        assert_at(completed[request], 1550 * MS)
    assert model.requests_complete.count() == 3
    assert model.requests_buffered.count() == 0
    assert model.requests_failed.count() == 0


def test_a_full_buffer_fails_requests_at_once() -> None:
    # Room for 2: of 5 arrivals (100..500 ms) with no replica, 2 wait and 3 fail as they arrive.
    env, model, trace = build(arrivals=[k * 100 * MS for k in range(1, 6)], buffer_capacity=2, duration=SECOND)
    env.run()
    assert model.requests_failed.reasons == {"buffer_full": 3}
    failed = [(at, e.arrived_at) for at, e, _, t in trace.kind("request_failed")]
    assert failed == [(300 * MS, 300 * MS), (400 * MS, 400 * MS), (500 * MS, 500 * MS)]
    assert [r.arrived_at for r in model.requests_buffered] == [100 * MS, 200 * MS]


def test_buffered_requests_time_out() -> None:
    env, model, trace = build(arrivals=[100 * MS, 250 * MS], timeout=1 * SECOND, duration=5 * SECOND)
    env.run()
    failures = [(at, e.arrived_at, e.failure) for at, e, _, t in trace.kind("request_timeout")]
    assert failures == [(1100 * MS, 100 * MS, "timeout"), (1250 * MS, 250 * MS, "timeout")]
    assert model.requests_failed.reasons == {"timeout": 2}
    assert model.requests_buffered.count() == 0
    assert model.requests_in_flight == 0


def test_a_request_leaving_the_buffer_at_its_deadline_still_times_out() -> None:
    # The replica launched at 500 ms becomes active at 3 s, exactly when the request of 1 s
    # reaches its 2 s timeout. Whichever comes first in that instant, the request must not
    # complete 2.1 s after it arrived: a timeout of 2 s means it fails.
    env, model, _ = build(
        arrivals=[1 * SECOND],
        cpu_time=Constant(100 * MS),
        io_time=Constant(0),
        timeout=2 * SECOND,
        launch=(LaunchStage("start", Constant(2500 * MS)),),
    )
    env.call_at(500 * MS, lambda: model.scale_to(1))
    env.run()
    assert model.requests_complete.count() == 0, model.requests_complete.latency.max
    assert model.requests_failed.reasons == {"timeout": 1}


# -- timeouts while processing ------------------------------------------------------------------


def test_a_request_past_its_timeout_fails_and_frees_its_cpu_share() -> None:
    # One replica of one core, no concurrency limit, timeout 1 s. A arrives at 100 ms needing 5 s
    # of CPU; B arrives at 500 ms needing 400 ms, then 50 ms of IO. By hand:
    #   0.1-0.5 s: A alone. 0.5-1.1 s: both at half speed, B gets 300 ms.
    #   1.1 s: A's timeout (100 ms + 1 s): A fails, B runs alone for its last 100 ms: CPU done at
    #   1.2 s, IO done at 1.25 s. (Had A kept its share, B's CPU would end at 1.3 s.)
    env, model, trace = build(
        arrivals=[100 * MS, 500 * MS],
        cpu_time=Cycle((5 * SECOND, 400 * MS)),
        io_time=Constant(50 * MS),
        timeout=1 * SECOND,
        replicas=1,
        duration=5 * SECOND,
    )
    env.run()
    (timed_out,) = trace.kind("request_timeout")
    at, a, _, _ = timed_out
    assert (at, a.arrived_at) == (1100 * MS, 100 * MS)
    assert model.requests_failed.reasons == {"timeout": 1}
    (completed,) = trace.kind("complete_request")
    at, b, _, _ = completed
    assert (at, b.arrived_at) == (1250 * MS, 500 * MS)
    assert model.requests_complete.latency.max == 750 * MS
    # The core was busy from 0.1 s to 1.2 s without a break.
    assert model.replicas[0].processing.cpu.busy_core_ns() == pytest.approx(1100 * MS)
    assert model.requests_in_flight == 0


def test_the_slot_of_a_timed_out_request_goes_to_the_next_in_line() -> None:
    # Concurrency 1, timeout 1 s, 3 s of CPU each. A (100 ms) holds the slot and B (200 ms) waits.
    # A times out at 1.1 s, which hands the slot to B; B times out at 1.2 s on the CPU; C (1.5 s)
    # finds the slot free and times out at 2.5 s.
    env, model, trace = build(
        arrivals=[100 * MS, 200 * MS, 1500 * MS],
        cpu_time=Constant(3 * SECOND),
        io_time=Constant(0),
        timeout=1 * SECOND,
        replicas=1,
        concurrency=1,
        duration=5 * SECOND,
    )
    env.run(until=1050 * MS)
    (replica,) = model.replicas.values()
    assert [r.arrived_at for r in replica.processing] == [100 * MS, 200 * MS]
    assert replica.processing.cpu.in_service == 1
    env.run(until=1150 * MS)
    (replica,) = model.replicas.values()
    assert [r.arrived_at for r in replica.processing] == [200 * MS]
    assert replica.processing.cpu.in_service == 1
    env.run()
    timeouts = [(at, e.arrived_at) for at, e, _, _ in trace.kind("request_timeout")]
    assert timeouts == [(1100 * MS, 100 * MS), (1200 * MS, 200 * MS), (2500 * MS, 1500 * MS)]
    assert replica.processing.cpu.in_service == 0


# -- routing policies ---------------------------------------------------------------------------


def destinations(model: ClusterModel, trace: Trace) -> list[int]:
    by_stock = {r.processing: r.id for r in model.replicas.values()}
    return [by_stock[t] for _, _, _, t in trace.kind("send_to_replica")]


@pytest.mark.parametrize("choices", [3, 5])
def test_least_requests_picks_the_replica_holding_the_fewest(choices: int) -> None:
    # Three replicas; requests at 1..5 s need 10 s, 100 ms, 10 s, 10 s, 10 s of CPU. By hand:
    #   1 s: counts (0,0,0) -> replica 0 (ties go to the first).  2 s: (1,0,0) -> replica 1,
    #   done at 2.1 s.  3 s: (1,0,0) -> replica 1 again (round robin would pick 2).
    #   4 s: (1,1,0) -> replica 2.  5 s: (1,1,1) -> replica 0.
    env, model, trace = build(
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
    env, model, trace = build(
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
    env, model, trace = build(
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
    env, model, trace = build(
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
