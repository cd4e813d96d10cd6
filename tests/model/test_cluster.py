"""The cluster model's request path: exact latencies, routing order, failures, and queueing theory."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator

import pytest

from skenario.core.environment import Environment, MovementLog
from skenario.core.random import Constant, Distribution, Exponential, RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, ReplicaSpec, RequestSpec, RoutingSpec
from skenario.workloads.patterns import constant_arrivals, poisson_arrivals


def build(
    *,
    arrivals: Iterator[int],
    duration: int,
    cpu_time: Distribution,
    io_time: Distribution | None = None,
    timeout: int | None = 10 * SECOND,
    replicas: int = 1,
    millicores: int = 1000,
    concurrency: int | None = None,
    queue_capacity: int | None = None,
    buffer_capacity: int = 1000,
    seed: int = 1,
) -> tuple[Environment, ClusterModel]:
    env = Environment(halt_at=duration)
    spec = ClusterSpec(
        requests=RequestSpec(cpu_time, io_time, timeout),
        replica=ReplicaSpec(cpu_request=millicores, concurrency=concurrency, queue_capacity=queue_capacity),
        initial_replicas=replicas,
        routing=RoutingSpec(buffer_capacity=buffer_capacity),
    )
    return env, ClusterModel(env, spec, arrivals, RandomStreams(seed))


@pytest.mark.parametrize(
    ("io_time", "millicores"),
    [(None, 1000), (20 * MILLISECOND, 1000), (None, 4000), (20 * MILLISECOND, 4000)],
)
def test_constant_work_without_queueing_gives_exact_latency(io_time: int | None, millicores: int) -> None:
    # One request every 100 ms, each needing 30 ms of CPU then io_time of IO: a request's CPU
    # phase ends long before the next one arrives, so nobody ever shares the CPU and every
    # latency is exactly 30 ms + io_time. A request is single-threaded, so 4 cores change nothing.
    duration = 10 * SECOND
    env, model = build(
        arrivals=constant_arrivals(10, 0, duration),
        duration=duration,
        cpu_time=Constant(30 * MILLISECOND),
        io_time=None if io_time is None else Constant(io_time),
        millicores=millicores,
    )
    env.run()
    expected = 30 * MILLISECOND + (io_time or 0)
    # Arrivals at 100 ms, 200 ms, ..., 9.9 s: 99 of them (10 s itself is the halt), and the last
    # one is done at 9.9 s + 50 ms at the latest, before the halt.
    assert model.requests_arrived == 99
    assert model.requests_complete.count() == 99
    assert model.requests_failed.count() == 0
    assert model.requests_in_flight == 0
    latency = model.requests_complete.latency
    assert latency.min == latency.max == expected
    # The CPU was busy 30 ms per request, on one core at a time.
    assert model.busy_core_ns() == pytest.approx(99 * 30 * MILLISECOND)
    cpu = model.replicas[0].processing.cpu
    assert cpu.in_service == 0


def test_round_robin_order_is_visible_in_the_movement_log() -> None:
    # Constant traffic: round robin hands replica k every k-th request, in activation order.
    env, model = build(
        arrivals=constant_arrivals(30, 0, SECOND),
        duration=SECOND,
        cpu_time=Constant(10 * MILLISECOND),
        replicas=3,
    )
    log = MovementLog()
    env.observe(log)
    env.run()
    by_stock = {r.processing: r.id for r in model.replicas.values()}
    served = [by_stock[m.to_stock] for m in log.movements if m.kind == "send_to_replica"]
    # Arrivals at k/30 s for k = 1..29.
    assert model.requests_arrived == 29
    assert served == [k % 3 for k in range(29)]
    assert Counter(served) == {0: 10, 1: 10, 2: 9}


def test_no_replicas_and_no_buffer_means_every_request_fails() -> None:
    streams = RandomStreams(5)
    env, model = build(
        arrivals=poisson_arrivals(50, 0, 2 * SECOND, streams.generator("traffic")),
        duration=2 * SECOND,
        cpu_time=Constant(10 * MILLISECOND),
        replicas=0,
        buffer_capacity=0,
    )
    env.run()
    assert model.requests_arrived > 50
    assert model.requests_failed.count() == model.requests_arrived
    assert model.requests_failed.reasons == {"no_active_replica": model.requests_arrived}
    assert model.requests_complete.count() == 0
    assert model.requests_in_flight == 0


def test_queue_capacity_rejects_when_full() -> None:
    # One slot (concurrency 1), room for 2 waiting, 505 ms of CPU per request, an arrival every
    # 10 ms (10, 20, ..., 1000 ms: 100 of them). By hand:
    #   10 ms: #1 takes the slot (done at 515 ms); 20 and 30 ms wait; 40..510 ms are rejected (48).
    #   515 ms: #1 completes; the 20 ms request takes the slot (done at 1020 ms, after the halt);
    #   520 ms: joins the line (30, 520); 530..1000 ms are rejected (48).
    # At the halt (1005 ms): 1 completed, 1 in service, 2 waiting, 96 rejected.
    duration = SECOND + 5 * MILLISECOND
    env, model = build(
        arrivals=constant_arrivals(100, 0, duration),
        duration=duration,
        cpu_time=Constant(505 * MILLISECOND),
        concurrency=1,
        queue_capacity=2,
    )
    env.run()
    assert model.requests_arrived == 100
    assert model.requests_complete.count() == 1
    assert model.requests_complete.latency.max == 505 * MILLISECOND
    assert model.requests_failed.reasons == {"replica_queue_full": 96}
    assert model.requests_in_flight == 3
    held = sorted(r.arrived_at for r in model.replicas[0].processing)
    assert held == [20 * MILLISECOND, 30 * MILLISECOND, 520 * MILLISECOND]


def erlang_k_m_1_mean_response(k: int, lam: float, mu: float) -> float:
    """Mean response time of one of k round-robin replicas fed Poisson(lam): an E_k/M/1 queue.

    For a GI/M/1 queue the mean response time is 1/(mu(1-sigma)), sigma the root in (0,1) of
    sigma = A*(mu(1-sigma)), where A* is the Laplace-Stieltjes transform of the inter-arrival
    time. Each replica sees every k-th arrival: a sum of k exponential gaps of rate lam, so
    A*(s) = (lam/(lam+s))^k.
    """
    sigma = 0.5
    for _ in range(2000):
        sigma = (lam / (lam + mu * (1 - sigma))) ** k
    return 1 / (mu * (1 - sigma))


def test_fixed_point_gives_m_m_1_for_k_equal_one() -> None:
    # Sanity check of the formula: k = 1 is M/M/1, whose sigma is rho and response 1/(mu - lam).
    assert erlang_k_m_1_mean_response(1, 4.0, 5.0) == pytest.approx(1 / (5.0 - 4.0))


def test_round_robin_poisson_matches_erlang_k_over_m_over_1() -> None:
    """Round robin over k replicas with concurrency 1 and exponential CPU time: each is E_k/M/1.

    A replica of 1000m serves one request at a time at full speed, so it is a FIFO single
    server with exponential service; there is no IO and no timeout to cut the tail.
    """
    k, lam, mu = 2, 8.0, 5.0  # each replica gets 4/s and serves 5/s: utilisation 0.8
    expected = erlang_k_m_1_mean_response(k, lam, mu)
    duration = 3600 * SECOND
    means = []
    for seed in range(12):
        streams = RandomStreams(seed)
        env, model = build(
            arrivals=poisson_arrivals(lam, 0, duration, streams.generator("traffic")),
            duration=duration,
            cpu_time=Exponential(SECOND / mu),
            io_time=None,
            timeout=None,
            replicas=k,
            concurrency=1,
            seed=seed,
        )
        env.run()
        assert model.requests_failed.count() == 0
        mean = model.requests_complete.latency.mean()
        assert mean is not None
        means.append(mean / SECOND)
    average = statistics.mean(means)
    stderr = statistics.stdev(means) / len(means) ** 0.5
    assert abs(average - expected) < 4 * stderr + 0.01 * expected, (average, stderr, expected)
