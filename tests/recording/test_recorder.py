"""The recorder's time series: rows add up to the model's counts, utilisation by hand, row count."""

from __future__ import annotations

import math
from collections.abc import Iterable

import pytest

from skenario.core.environment import Environment
from skenario.core.random import Constant, Distribution, Exponential, RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, MetricsSource, MetricsSpec, ReplicaSpec, RequestSpec, RoutingSpec
from skenario.recording.recorder import COLUMNS, Recorder
from skenario.workloads.patterns import poisson_arrivals

MS = MILLISECOND
CPU_30MS = Constant(30 * MILLISECOND)
IO_20MS = Constant(20 * MILLISECOND)


def build(
    *,
    duration: int,
    arrivals: Iterable[int],
    replicas: int = 1,
    cpu_time: Distribution = CPU_30MS,
    io_time: Distribution | None = IO_20MS,
    timeout: int | None = 10 * SECOND,
    concurrency: int | None = None,
    queue_capacity: int | None = None,
    buffer_capacity: int = 1000,
    seed: int = 1,
    metrics: MetricsSpec | None = None,
) -> tuple[Environment, ClusterModel]:
    env = Environment(halt_at=duration)
    spec = ClusterSpec(
        requests=RequestSpec(cpu_time, io_time, timeout),
        replica=ReplicaSpec(cpu_limit=1000, concurrency=concurrency, queue_capacity=queue_capacity),  # one core
        initial_replicas=replicas,
        routing=RoutingSpec(buffer_capacity=buffer_capacity),
        metrics=metrics or MetricsSpec(),
    )
    return env, ClusterModel(env, spec, iter(arrivals), RandomStreams(seed))


def busy_mixed_run() -> tuple[Environment, ClusterModel, Recorder]:
    """Overloaded replicas with short queues and timeouts, then none at all: several failure reasons."""
    duration = 60 * SECOND
    streams = RandomStreams(9)
    env, model = build(
        duration=duration,
        arrivals=poisson_arrivals(40, 0, duration, streams.generator("traffic")),
        replicas=2,
        cpu_time=Exponential(60 * MS),
        io_time=Constant(5 * MS),
        timeout=1 * SECOND,
        concurrency=1,
        queue_capacity=2,
        buffer_capacity=5,
        seed=9,
    )
    env.call_at(40 * SECOND, lambda: model.scale_to(0))
    recorder = Recorder(env, model, 7 * SECOND)
    env.run()
    recorder.record()
    return env, model, recorder


def test_rows_add_up_to_the_model_counts() -> None:
    _, model, recorder = busy_mixed_run()
    columns = recorder.columns
    assert sum(columns["requests_arrived"]) == model.requests_arrived
    assert sum(columns["requests_completed"]) == model.requests_complete.count()
    assert sum(columns["requests_failed"]) == model.requests_failed.count()
    reasons = model.requests_failed.reasons
    assert len(reasons) >= 3, reasons  # the scenario is meant to fail requests several ways
    rows = recorder.rows()
    for reason, count in reasons.items():
        assert sum(row[f"failed_{reason}"] for row in rows) == count
    for row in rows:
        assert row["requests_failed"] == sum(row[f"failed_{reason}"] for reason in reasons)
    # The last row is at the halt and shows the state then.
    assert columns["time_ns"][-1] == 60 * SECOND
    assert columns["replicas_active"][-1] == 0
    assert columns["replicas_desired"][-1] == 0
    assert columns["requests_processing"][-1] == 0
    assert columns["requests_buffered"][-1] == model.requests_buffered.count()


def test_failure_reasons_become_columns_of_the_frame() -> None:
    _, model, recorder = busy_mixed_run()
    frame = recorder.frame()
    reasons = sorted(model.requests_failed.reasons)
    assert list(frame.columns) == [*COLUMNS, *(f"failed_{reason}" for reason in reasons)]
    assert recorder.failure_reasons() == reasons
    assert len(frame) == len(recorder) == math.ceil(60 / 7)
    assert list(frame.index) == [7.0 * k for k in range(1, 9)] + [60.0]
    for reason in reasons:
        assert frame[f"failed_{reason}"].sum() == model.requests_failed.reasons[reason]


def arrivals_every_100ms(duration: int) -> list[int]:
    # 20, 120, 220, ... ms: each request (50 ms at most alone) is done by 70, 170, 270, ... ms,
    # never on a recording boundary.
    return [k * 100 * MS + 20 * MS for k in range(duration // (100 * MS))]


def test_cpu_utilisation_for_constant_load() -> None:
    # Two replicas (active from 1 ns) requesting one core each, round robin, a request every 100 ms
    # needing 30 ms of CPU and 20 ms of IO: 100 requests per 10 s row, 3 s of busy core time. Row 1
    # covers (0, 10 s] with both replicas requesting from 1 ns: 3 s / (2 x (10 s - 1 ns)). At 15.08 s
    # (both replicas idle) the scale-down stops replica-1, which terminates at once: row 2 holds
    # 10 s + 5.08 s of requested core time for the same 3 s busy; row 3 one core for 10 s: 3 s / 10 s.
    # Without spec.cluster each pod has a 4-core node to itself from its binding (1 ns): the nodes'
    # utilisation is the same busy time over four times the cores.
    duration = 30 * SECOND
    env, model = build(duration=duration, arrivals=arrivals_every_100ms(duration), replicas=2)
    env.call_at(15080 * MS, lambda: model.scale_to(1))
    recorder = Recorder(env, model, 10 * SECOND)
    env.run()
    recorder.record()
    columns = recorder.columns
    assert columns["time_ns"] == [10 * SECOND, 20 * SECOND, 30 * SECOND]
    assert columns["requests_arrived"] == [100, 100, 100]
    assert columns["requests_completed"] == [100, 100, 100]
    expected = [3 * SECOND / (2 * (10 * SECOND - 1)), 3 / 15.08, 0.3]
    assert columns["cpu_request_utilisation"] == pytest.approx(expected)
    assert columns["node_cpu_utilisation"] == pytest.approx([share / 4 for share in expected])
    assert columns["replicas_active"] == [2, 1, 1]
    assert columns["replicas_terminated"] == [0, 1, 1]
    # Every latency is exactly 50 ms, so every percentile is too.
    for name in ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_mean_ms"):
        assert columns[name] == [50.0, 50.0, 50.0]
    held = 2 * (15080 * MS - 1) + (30 * SECOND - 15080 * MS)
    assert model.busy_core_ns() / model.requested_core_ns() == pytest.approx(9 * SECOND / held)
    busy, nodes = model.node_cpu_core_ns()
    assert busy == model.busy_core_ns() and nodes == pytest.approx(4 * held)


def test_a_row_with_no_replica_held_has_no_utilisation() -> None:
    env, model = build(duration=30 * SECOND, arrivals=[], replicas=0)
    recorder = Recorder(env, model, 10 * SECOND)
    env.run()
    recorder.record()
    assert recorder.columns["cpu_request_utilisation"] == [None, None, None]
    assert recorder.columns["node_cpu_utilisation"] == [None, None, None]
    assert recorder.columns["latency_p50_ms"] == [None, None, None]


@pytest.mark.parametrize(
    ("duration", "interval"),
    [
        (60 * SECOND, 10 * SECOND),
        (65 * SECOND, 10 * SECOND),
        (10 * SECOND, 3 * SECOND),
        (5 * SECOND, 10 * SECOND),
        (1 * SECOND, 1 * SECOND),
        (10 * SECOND + 1, 1 * SECOND),
    ],
)
def test_one_row_per_interval_started(duration: int, interval: int) -> None:
    env, model = build(duration=duration, arrivals=arrivals_every_100ms(duration))
    recorder = Recorder(env, model, interval)
    env.run()
    recorder.record()
    rows = math.ceil(duration / interval)
    assert len(recorder) == rows
    assert recorder.columns["time_ns"] == [min(k * interval, duration) for k in range(1, rows + 1)]
    # Recording again at the same instant adds nothing.
    recorder.record()
    assert len(recorder) == rows


def test_row_count_does_not_grow_with_traffic() -> None:
    lengths = []
    for rate_scale in (1, 20):
        duration = 20 * SECOND
        streams = RandomStreams(2)
        env, model = build(
            duration=duration,
            arrivals=poisson_arrivals(10 * rate_scale, 0, duration, streams.generator("traffic")),
            replicas=4,
            cpu_time=Constant(1 * MS),
        )
        recorder = Recorder(env, model, 5 * SECOND)
        env.run()
        recorder.record()
        lengths.append(len(recorder))
    assert lengths == [4, 4]


def test_recording_does_not_change_the_run() -> None:
    # The recorder only reads the model. Reading must not move it: the same seed must give the
    # same latencies with or without a recorder, whatever its interval.
    def run(interval: int | None) -> tuple[int, list[tuple[int, int]]]:
        duration = 20 * SECOND
        streams = RandomStreams(0)
        env = Environment(halt_at=duration)
        spec = ClusterSpec(
            requests=RequestSpec(Exponential(50 * MS), Constant(1 * MS), None),
            replica=ReplicaSpec(cpu_request=250),
        )
        arrivals = poisson_arrivals(15, 0, duration, streams.generator("traffic"))
        model = ClusterModel(env, spec, arrivals, streams)
        if interval is not None:
            Recorder(env, model, interval)
        env.run()
        latency = model.requests_complete.latency
        return latency.total, list(latency.buckets())

    alone = run(None)
    assert run(7 * SECOND) == alone
    assert run(100 * MS) == alone


def test_reading_the_run_latency_mid_run_does_not_take_latencies_from_the_interval() -> None:
    from skenario.core.environment import Environment
    from skenario.core.random import Constant, RandomStreams
    from skenario.core.time import MILLISECOND, SECOND
    from skenario.model.cluster import ClusterModel
    from skenario.model.config import ClusterSpec, ReplicaSpec, RequestSpec
    from skenario.recording.recorder import Recorder
    from skenario.workloads.patterns import constant_arrivals

    env = Environment(halt_at=20 * SECOND)
    spec = ClusterSpec(requests=RequestSpec(Constant(MILLISECOND)), replica=ReplicaSpec(1000), initial_replicas=1)
    model = ClusterModel(env, spec, constant_arrivals(10, 0, 20 * SECOND), RandomStreams(1))
    Recorder(env, model, 10 * SECOND)
    env.run(until=5 * SECOND)
    complete = model.requests_complete
    assert complete.latency.count == complete.count()  # a look mid-interval sees every completion
    # ... and the recorder's interval still holds them all: 10/s for 5 s, each 1 ms.
    assert complete.window.count == complete.count() == 49


def test_metrics_in_transit_follow_the_tick_and_the_lag() -> None:
    """Samples tick 5 s after activation, then every 10 s, and take 4 s to reach the sink (the ticks' defaults)."""
    duration = 40 * SECOND
    env, model = build(duration=duration, arrivals=iter(()), replicas=3, metrics=MetricsSpec(MetricsSource.TICKS))
    recorder = Recorder(env, model, 1 * SECOND)
    env.run()
    recorder.record()
    [activated] = {replica.activated_at for replica in model.replicas.values()}
    assert activated is not None
    for at, in_transit in zip(recorder.columns["time_ns"], recorder.columns["metrics_in_transit"], strict=True):
        since_first_tick = at - (activated + 5 * SECOND)
        expected = 3 if since_first_tick >= 0 and since_first_tick % (10 * SECOND) < 4 * SECOND else 0
        assert in_transit == expected, (at, in_transit)
    assert sum(recorder.columns["metrics_in_transit"]) > 0
