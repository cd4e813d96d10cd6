"""metrics-server's timing and rates, hand-computed from pkg/storage/pod.go (`Store`, `GetMetrics`)."""

from __future__ import annotations

import pytest

from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, LaunchStage, MetricsSource, MetricsSpec, ReplicaSpec, RequestSpec
from skenario.model.metrics import MetricsSink, Sample
from skenario.model.metrics_server import MetricsServer

RESOLUTION = 15 * SECOND
HOUSEKEEPING = 10 * SECOND


def pod_at_two_seconds(
    phase: int, *, scrape_duration: int = 0
) -> tuple[Environment, ClusterModel, list[tuple[int, Sample]]]:
    """One pod of one core, ready at 2 s, taking a request of 100 ms CPU every second from 2.5 s
    (0.1 core), scraped by a metrics-server whose housekeeping phase for it is `phase`. Returns
    what the server served and when."""
    env = Environment(halt_at=MINUTE)
    arrivals = iter(range(2500 * MILLISECOND, MINUTE, SECOND))
    spec = ClusterSpec(
        requests=RequestSpec(cpu_time=Constant(100 * MILLISECOND), timeout=None),
        replica=ReplicaSpec(
            cpu_request=500, cpu_limit=1000, launch=(LaunchStage("containerStart", Constant(2 * SECOND)),)
        ),
        initial_replicas=1,
        initial_ready=False,
        metrics=MetricsSpec(MetricsSource.TICKS),  # the model's own pipeline stays out of the way
    )
    model = ClusterModel(env, spec, arrivals, RandomStreams(1))
    sink = MetricsSink()
    served: list[tuple[int, Sample]] = []
    sink.subscribe(lambda sample: served.append((env.now(), sample)))
    server = MetricsServer(
        env, RESOLUTION, HOUSEKEEPING, lambda: scrape_duration, lambda replica: phase, model._running, sink
    )
    model.replicas_active.on_activate.append(server.started)
    return env, model, served


def test_a_pod_needs_two_scrapes_unless_its_first_point_is_at_least_ten_seconds_old() -> None:
    """Housekeeping at 0, 10, 20, 30 s: the 15 s scrape gets the point of 10 s, 8 s after the
    container started (under `freshContainerMinMetricsResolution`, so no synthetic first point);
    the 30 s scrape gets the point of 30 s, and the pod is served with the 20 s window between."""
    env, _, served = pod_at_two_seconds(phase=0)
    env.run(until=31 * SECOND)
    [(when, sample)] = served
    assert (when, sample.at, sample.window) == (30 * SECOND, 30 * SECOND, 20 * SECOND)
    assert sample.cpu_millicores == 100  # 20 requests of 100 ms in 20 s


def test_a_point_ten_seconds_into_the_container_is_served_at_the_first_scrape() -> None:
    """Housekeeping at 3, 13, 23 s: the 15 s scrape gets the point of 13 s, 11 s after the start,
    so the start gets a synthetic point with nothing used; the pod is served at once with an 11 s
    window: 11 requests of 100 ms (2.5 ... 12.5 s) in 11 s."""
    env, model, served = pod_at_two_seconds(phase=3 * SECOND)
    env.run(until=16 * SECOND)
    [(when, sample)] = served
    [pod] = model.replicas_active
    assert pod.ready_since is not None and 0 <= pod.ready_since - 2 * SECOND <= 1  # a launch at 0 starts at 1 ns
    assert (when, sample.at, sample.window) == (15 * SECOND, 13 * SECOND, 13 * SECOND - pod.ready_since)
    assert sample.cpu_millicores == pytest.approx(100)


def test_later_scrapes_rate_the_last_two_points() -> None:
    """Scrapes at 15, 30, 45 s read the points of 13, 23 and 43 s: windows 11, 10 and 20 s, each
    served when its scrape ends (2 s after the aligned instant here)."""
    env, _, served = pod_at_two_seconds(phase=3 * SECOND, scrape_duration=2 * SECOND)
    env.run(until=50 * SECOND)
    assert [(when // SECOND, s.at // SECOND, round(s.window / SECOND)) for when, s in served] == [
        (17, 13, 11),
        (32, 23, 10),
        (47, 43, 20),
    ]


def test_the_model_scrapes_with_metrics_server_by_default() -> None:
    """With the default spec the HPA's samples come from metrics-server every 15 s, aligned."""
    env = Environment(halt_at=MINUTE)
    model = ClusterModel(env, ClusterSpec(initial_replicas=3), iter(()), RandomStreams(1))
    arrived: list[int] = []
    model.metrics_sink.subscribe(lambda sample: arrived.append(env.now()))
    env.run()
    assert model.metrics_server is not None
    assert set(arrived) <= {15 * SECOND, 30 * SECOND, 45 * SECOND}
    assert arrived.count(30 * SECOND) == arrived.count(45 * SECOND) == 3  # every pod, from its second scrape


def test_a_down_server_serves_nothing_until_it_comes_up() -> None:
    """Down from 20 s to 40 s: the scrape of 30 s fails and stores nothing, so each pod needs two
    scrapes again (45 and 60 s; its points are too old for a synthetic first one): none is
    served at 30 or 45 s, all three at 60 s."""
    env = Environment(halt_at=MINUTE + SECOND)
    model = ClusterModel(env, ClusterSpec(initial_replicas=3), iter(()), RandomStreams(1))
    arrived: list[int] = []
    model.metrics_sink.subscribe(lambda sample: arrived.append(env.now()))
    env.call_at(20 * SECOND, model.metrics_down)
    env.call_at(40 * SECOND, model.metrics_up)
    env.run()
    assert 30 * SECOND not in arrived and 45 * SECOND not in arrived
    assert arrived.count(MINUTE) == 3
