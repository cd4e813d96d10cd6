"""The metrics pipeline: tick times, lag, and the values of the samples, worked out by hand."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, LaunchStage, MetricsSource, MetricsSpec, ReplicaSpec, RequestSpec
from skenario.model.metrics import Sample

TICKS = MetricsSpec(
    MetricsSource.TICKS
)  # these are the Go Skenario pipeline's tests (metrics-server's: test_metrics_server)

MS = MILLISECOND


def build(
    *,
    duration: int,
    arrivals: Iterable[int] = (),
    replicas: int = 1,
    metrics: MetricsSpec | None = None,
    launch: tuple[LaunchStage, ...] = (),
    cpu_request: int = 1000,
    cpu_limit: int | None = None,
    cpu_time: int = 30 * MS,
    io_time: int = 20 * MS,
) -> tuple[Environment, ClusterModel, list[tuple[int, Sample]]]:
    env = Environment(halt_at=duration)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(cpu_time), Constant(io_time), 10 * SECOND),
        replica=ReplicaSpec(cpu_request=cpu_request, cpu_limit=cpu_limit, launch=launch),
        initial_replicas=replicas,
        metrics=metrics or TICKS,
    )
    model = ClusterModel(env, spec, iter(list(arrivals)), RandomStreams(1))
    received: list[tuple[int, Sample]] = []
    model.metrics_sink.subscribe(lambda sample: received.append((env.now(), sample)))
    return env, model, received


def test_ticks_start_first_after_activation_then_every_interval_and_arrive_after_the_lag() -> None:
    # Defaults: first tick 5 s after activation, then every 10 s; 4 s of lag. The initial replica
    # is active at 1 ns, so it ticks at 5 s + 1 ns, 15 s + 1 ns, ... 55 s + 1 ns (65 s is past the
    # halt), and each sample reaches the sink 4 s later, the last at 59 s + 1 ns.
    env, _, received = build(duration=60 * SECOND)
    env.run()
    ticks = [5 * SECOND + 1 + k * 10 * SECOND for k in range(6)]
    assert [s.at for _, s in received] == ticks
    assert [at for at, _ in received] == [t + 4 * SECOND for t in ticks]
    assert [s.window for _, s in received] == [5 * SECOND] + [10 * SECOND] * 5
    assert {s.replica_id for _, s in received} == {0}


def test_a_replica_launched_later_ticks_from_its_own_activation() -> None:
    metrics = MetricsSpec(MetricsSource.TICKS, interval=7 * SECOND, first_after=3 * SECOND, lag=2 * SECOND)
    env, model, received = build(
        duration=30 * SECOND, metrics=metrics, launch=(LaunchStage("start", Constant(2 * SECOND)),)
    )
    env.call_at(4 * SECOND, lambda: model.scale_to(2))  # replica-1 active at 6 s
    env.run()
    by_replica: dict[int, list[tuple[int, int]]] = {}
    for arrived, sample in received:
        by_replica.setdefault(sample.replica_id, []).append((sample.at, arrived))
    # replica-0 (active at 1 ns): ticks at 3, 10, 17, 24 s (+1 ns); 31 s is past the halt.
    assert by_replica[0] == [
        (t, t + 2 * SECOND) for t in (3 * SECOND + 1, 10 * SECOND + 1, 17 * SECOND + 1, 24 * SECOND + 1)
    ]
    # replica-1: ticks at 9, 16, 23 s; the one at 30 s would be the halt. Its sample of 23 s
    # arrives at 25 s.
    assert by_replica[1] == [(t, t + 2 * SECOND) for t in (9 * SECOND, 16 * SECOND, 23 * SECOND)]


def test_no_sample_arrives_at_or_after_the_halt() -> None:
    # Ticks at 5 s + 1 ns and 15 s + 1 ns; the second one's sample would reach the sink at
    # 19 s + 1 ns, after the halt at 19 s, so only the first arrives.
    env, _, received = build(duration=19 * SECOND)
    env.run()
    assert [(at, s.at) for at, s in received] == [(9 * SECOND + 1, 5 * SECOND + 1)]


def test_sample_values_for_constant_traffic() -> None:
    # Requests at 50, 150, 250, ... ms, each 30 ms of CPU then 20 ms of IO, never overlapping.
    # Window 1, (1 ns, 5 s + 1 ns]: arrivals 50 .. 4950 ms, 50 of them, all done by 5 s. CPU busy
    # 50 x 30 ms = 1.5 s of 5 s: 300 millicores; held 50 x 50 ms = 2.5 request-s over 5 s: a mean
    # concurrency of 0.5; 50 arrivals in 5 s: 10/s. Window 2, (5 s + 1, 15 s + 1]: 100 arrivals,
    # 3 s busy of 10 s: the same figures. The CPU request is 500m (limit 1000m), so utilisation
    # against the request (what an HPA target means) is 300 / 500 = 0.6.
    duration = 20 * SECOND
    env, _, received = build(
        duration=duration,
        arrivals=[k * 100 * MS + 50 * MS for k in range(200)],
        cpu_request=500,
        cpu_limit=1000,
    )
    env.run()
    first, second = received[0][1], received[1][1]
    for sample, window in ((first, 5 * SECOND), (second, 10 * SECOND)):
        assert sample.window == window
        assert sample.cpu_millicores == pytest.approx(300.0)
        assert sample.cpu_utilisation == pytest.approx(0.6)
        assert sample.cpu_request == 500
        assert sample.concurrency == pytest.approx(0.5)
        assert sample.rps == pytest.approx(10.0)
        assert sample.in_flight == 0


def test_sample_values_when_a_request_straddles_a_tick() -> None:
    # One request at 4.99 s: CPU 4.99 - 5.02 s, IO to 5.04 s. The tick at 5 s + 1 ns cuts it.
    env, _, received = build(duration=20 * SECOND, arrivals=[4990 * MS])
    env.run()
    first, second = received[0][1], received[1][1]
    # Window 1 is 5 s long and saw 10 ms + 1 ns of it, on the CPU all the while.
    assert first.cpu_millicores == pytest.approx((10 * MS + 1) * 1000 / (5 * SECOND))
    assert first.concurrency == pytest.approx((10 * MS + 1) / (5 * SECOND))
    assert first.in_flight == 1
    assert first.rps == pytest.approx(1 / 5)
    # Window 2 saw the rest: 20 ms - 1 ns of CPU, 40 ms - 1 ns held, no arrival.
    assert second.cpu_millicores == pytest.approx((20 * MS - 1) * 1000 / (10 * SECOND))
    assert second.concurrency == pytest.approx((40 * MS - 1) / (10 * SECOND))
    assert second.in_flight == 0
    assert second.rps == 0


def test_a_two_core_replica_reports_both_cores_busy() -> None:
    # Two requests at 1 s on a 2000m replica, each 4 s of CPU (and 20 ms IO): both cores busy
    # from 1 s to 5 s. The tick at 5 s + 1 ns sees 2 x 4 s of core time in 5 s: 1600 millicores.
    env, _, received = build(
        duration=10 * SECOND, arrivals=[1 * SECOND, 1 * SECOND], cpu_request=2000, cpu_time=4 * SECOND
    )
    env.run()
    first = received[0][1]
    assert first.cpu_millicores == pytest.approx(2 * 4 * SECOND * 1000 / (5 * SECOND))
    assert first.cpu_utilisation == pytest.approx(0.8)
    assert first.in_flight == 2  # in their IO phase until 5.02 s


def test_samples_stop_when_the_replica_goes_and_the_sink_forgets_it() -> None:
    # Two replicas; at 17 s the scale-down stops replica-1 (the newer one), which is empty and so
    # terminates at once. Its tick of 5 s + 1 ns reaches the sink at 9 s + 1 ns; the one of
    # 15 s + 1 ns would arrive at 19 s + 1 ns, after the replica is gone, and is dropped; it ticks
    # no more. replica-0 goes on: ticks at 5, 15, 25, 35 s (+1 ns).
    env, model, received = build(duration=40 * SECOND, replicas=2)
    env.call_at(17 * SECOND, lambda: model.scale_to(1))
    env.run(until=12 * SECOND)
    assert set(model.metrics_sink.latest) == {0, 1}
    env.run(until=26 * SECOND)
    assert set(model.metrics_sink.latest) == {0}
    assert model.metrics_ticker.count() == 1
    env.run()
    gone = [(at, s.at) for at, s in received if s.replica_id == 1]
    assert gone == [(9 * SECOND + 1, 5 * SECOND + 1)]
    kept = [s.at for _, s in received if s.replica_id == 0]
    assert kept == [5 * SECOND + 1, 15 * SECOND + 1, 25 * SECOND + 1, 35 * SECOND + 1]
    assert set(model.metrics_sink.latest) == {0}
    assert model.metrics_sink.latest[0].at == 35 * SECOND + 1
