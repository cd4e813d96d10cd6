"""The thin cluster model: request path, conservation and agreement with queueing theory."""

from __future__ import annotations

import statistics

from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.environment import Environment, MovementLog
from skenario.core.random import Constant, Exponential, RandomStreams, sampler
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel, WorkloadConfig
from skenario.workloads.patterns import constant_arrivals, poisson_arrivals


def build(
    *,
    replicas: int,
    rate: float,
    service: float,
    duration: int,
    seed: int = 1,
    concurrency: int = 1,
    capacity: int | None = None,
    poisson: bool = True,
    exponential: bool = True,
) -> tuple[Environment, ClusterModel]:
    streams = RandomStreams(seed)
    env = Environment(halt_at=duration)
    arrivals = (
        poisson_arrivals(rate, 0, duration, streams.generator("traffic"))
        if poisson
        else constant_arrivals(rate, 0, duration)
    )
    dist = Exponential(service) if exponential else Constant(service)
    model = ClusterModel(
        env,
        WorkloadConfig(replicas, concurrency, capacity),
        arrivals,
        sampler(dist, streams.generator("service")),
    )
    return env, model


def test_deterministic_service_without_queueing_gives_exact_latency() -> None:
    # One request every 100 ms, each served in exactly 30 ms by one replica: nobody ever waits,
    # so every latency is exactly 30 ms and every arrival but the in-flight last completes.
    env, model = build(
        replicas=1, rate=10, service=30 * MILLISECOND, duration=10 * SECOND, poisson=False, exponential=False
    )
    env.run()
    latency = model.requests_complete.latency
    # Arrivals at 100 ms, 200 ms, ... 9.9 s: 99 of them (10 s itself is the halt).
    assert model.requests_arrived == 99
    assert model.requests_complete.count() == 99
    assert latency.min == latency.max == 30 * MILLISECOND


def test_round_robin_spreads_requests_evenly() -> None:
    # Constant traffic: round robin hands replica k every k-th request, as the movement log shows.
    env, model = build(replicas=3, rate=30, service=10 * MILLISECOND, duration=SECOND, poisson=False, exponential=False)
    log = MovementLog()
    env.observe(log)
    env.run()
    by_stock = {r.processing: r.id for r in model.replicas}
    served = [by_stock[m.to_stock] for m in log.movements if m.kind == "send_to_replica"]
    assert served[:9] == [0, 1, 2, 0, 1, 2, 0, 1, 2]
    assert len(served) == model.requests_arrived


def test_no_replicas_means_every_request_fails() -> None:
    env, model = build(replicas=0, rate=50, service=10 * MILLISECOND, duration=2 * SECOND)
    env.run()
    assert model.requests_arrived > 0
    assert model.requests_failed.count() == model.requests_arrived
    assert model.requests_failed.reasons == {"no_active_replica": model.requests_arrived}


def test_queue_capacity_rejects_when_full() -> None:
    # Service (500 ms) far slower than arrivals (every 10 ms) with room for 2 waiting: by the halt
    # one request finished (at 510 ms), 1 is in service, 2 wait, and everything else failed.
    env, model = build(
        replicas=1,
        rate=100,
        service=500 * MILLISECOND,
        duration=SECOND + 5 * MILLISECOND,
        poisson=False,
        exponential=False,
        capacity=2,
    )
    env.run()
    assert model.requests_complete.count() == 1
    assert model.requests_failed.reasons["replica_queue_full"] == model.requests_arrived - 3 - 1


def test_round_robin_poisson_matches_erlang_k_over_m_over_1() -> None:
    """Round robin over k replicas turns Poisson(λ) into Erlang-k arrivals at each replica.

    For a GI/M/1 queue the mean response time is 1/(μ(1-σ)), σ the root in (0,1) of
    σ = A*(μ(1-σ)) with A*(s) = (kλ/(kλ+s))^k for Erlang-k gaps of total rate λ/k per replica.
    """
    k, lam, mu = 2, 8.0, 5.0  # per-replica utilisation 0.8
    sigma = 0.5
    for _ in range(500):
        sigma = (lam / (lam + mu * (1 - sigma))) ** k
    expected = 1 / (mu * (1 - sigma))
    means = []
    for seed in range(12):
        env, model = build(replicas=k, rate=lam, service=SECOND / mu, duration=3600 * SECOND, seed=seed)
        env.run()
        mean = model.requests_complete.latency.mean()
        assert mean is not None
        means.append(mean / SECOND)
    average = statistics.mean(means)
    stderr = statistics.stdev(means) / len(means) ** 0.5
    assert abs(average - expected) < 4 * stderr + 0.005 * expected, (average, stderr, expected)


@settings(max_examples=40, deadline=None)
@given(
    replicas=st.integers(0, 4),
    rate=st.floats(0.5, 60),
    service_ms=st.integers(1, 400),
    concurrency=st.integers(1, 3),
    capacity=st.one_of(st.none(), st.integers(0, 5)),
    seed=st.integers(0, 2**32 - 1),
    steps=st.integers(1, 7),
)
def test_requests_and_replicas_are_conserved_at_every_pause(
    replicas: int, rate: float, service_ms: int, concurrency: int, capacity: int | None, seed: int, steps: int
) -> None:
    """Arrivals equal completed + failed + in flight, and each replica sits in exactly one stock."""
    duration = 20 * SECOND
    env, model = build(
        replicas=replicas,
        rate=rate,
        service=service_ms * MILLISECOND,
        duration=duration,
        seed=seed,
        concurrency=concurrency,
        capacity=capacity,
    )
    for k in range(1, steps + 1):
        env.run(until=duration * k // (steps + 1))
        arrived = model.requests_arrived
        assert arrived == model.requests_complete.count() + model.requests_failed.count() + model.requests_in_flight
        in_processing = sum(r.processing.count() for r in model.replicas)
        assert in_processing <= sum(
            concurrency + (capacity if capacity is not None else arrived) for _ in model.replicas
        )
        active = list(model.replicas_active)
        assert len(active) == len(set(active)) == (replicas if env.now() >= 1 else 0)
    env.run()
    assert model.requests_arrived == (
        model.requests_complete.count() + model.requests_failed.count() + model.requests_in_flight
    )
    latency = model.requests_complete.latency
    if latency.min is not None:
        assert latency.min >= 0
