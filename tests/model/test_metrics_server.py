"""metrics-server's timing and rates, hand-computed from pkg/storage/pod.go (`Store`, `GetMetrics`) and
pkg/server/server.go (`runScrape`: a tick at once, then one per resolution)."""

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
    phase: int, *, scrape_duration: int = 0, first_scrape: int = RESOLUTION
) -> tuple[Environment, ClusterModel, list[tuple[int, Sample]]]:
    """One pod of one core, ready at 2 s, taking a request of 100 ms CPU every second from 2.5 s
    (0.1 core), scraped by a metrics-server whose housekeeping phase for it is `phase` and whose
    first scrape is at `first_scrape`. Returns what the server served and when."""
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
        env,
        RESOLUTION,
        HOUSEKEEPING,
        lambda: scrape_duration,
        lambda replica: phase,
        model._running,
        sink,
        first_scrape,
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
    served when its scrape ends (2 s after the scrape's instant here)."""
    env, _, served = pod_at_two_seconds(phase=3 * SECOND, scrape_duration=2 * SECOND)
    env.run(until=50 * SECOND)
    assert [(when // SECOND, s.at // SECOND, round(s.window / SECOND)) for when, s in served] == [
        (17, 13, 11),
        (32, 23, 10),
        (47, 43, 20),
    ]


def test_the_model_scrapes_with_metrics_server_by_default_at_its_own_phase() -> None:
    """With the default spec the HPA's samples come from metrics-server every 15 s, from the phase
    of its stream `metrics-server.phase` (in (0, 15 s]). A pod started at 0 has a point read for
    every scrape from the second on (the first may come before its first housekeeping), so it is
    served by the third scrape and every one after."""
    env = Environment(halt_at=MINUTE)
    model = ClusterModel(env, ClusterSpec(initial_replicas=3), iter(()), RandomStreams(1))
    arrived: list[int] = []
    model.metrics_sink.subscribe(lambda sample: arrived.append(env.now()))
    env.run()
    phase = RandomStreams(1).phase("metrics-server.phase", RESOLUTION)
    assert model.metrics_server is not None and 0 < phase < RESOLUTION
    scrapes = [phase + k * RESOLUTION for k in range(4)]  # the last before the halt at 60 s
    assert set(arrived) <= set(scrapes)
    assert arrived.count(scrapes[2]) == arrived.count(scrapes[3]) == 3


def test_a_down_server_serves_nothing_until_it_comes_up() -> None:
    """Scrapes at p, p + 15 s, ... (p its phase). Down from p + 5 s to p + 25 s: the scrape of
    p + 15 s fails and stores nothing, so each pod needs two scrapes again (p + 30 s and p + 45 s;
    its points are too old for a synthetic first one): none is served at p + 15 s or p + 30 s,
    all three at p + 45 s."""
    env = Environment(halt_at=MINUTE + SECOND)
    model = ClusterModel(env, ClusterSpec(initial_replicas=3), iter(()), RandomStreams(1))
    arrived: list[int] = []
    model.metrics_sink.subscribe(lambda sample: arrived.append(env.now()))
    p = RandomStreams(1).phase("metrics-server.phase", RESOLUTION)
    env.call_at(p + 5 * SECOND, model.metrics_down)
    env.call_at(p + 25 * SECOND, model.metrics_up)
    env.run()
    assert p + 15 * SECOND not in arrived and p + 30 * SECOND not in arrived
    assert arrived.count(p + 45 * SECOND) == 3


def test_a_server_started_mid_period_scrapes_a_new_pod_at_its_next_tick() -> None:
    """Phase 4 s: scrapes at 4, 19, 34 s. A pod ready at 2 s with its housekeeping at 3, 13, 23 s
    is first read for the 4 s scrape (the point of 3 s, 1 s into the container: too young for a
    synthetic first point, so nothing is served), then for the 19 s one (the point of 13 s, 11 s
    in: the synthetic point at its start), served then with the 11 s window from its start."""
    env, model, served = pod_at_two_seconds(phase=3 * SECOND, first_scrape=4 * SECOND)
    env.run(until=20 * SECOND)
    [(when, sample)] = served
    [pod] = model.replicas_active
    assert pod.ready_since is not None
    assert (when, sample.at, sample.window) == (19 * SECOND, 13 * SECOND, 13 * SECOND - pod.ready_since)
    assert sample.cpu_millicores == pytest.approx(100)  # 11 requests of 100 ms (2.5 ... 12.5 s) in 11 s


def test_the_first_scrape_is_within_one_resolution() -> None:
    sink = MetricsSink()
    env = Environment(halt_at=MINUTE)
    for phase in (0, RESOLUTION + 1):
        with pytest.raises(ValueError, match="first scrape"):
            MetricsServer(env, RESOLUTION, HOUSEKEEPING, lambda: 0, lambda replica: 0, list, sink, phase)
