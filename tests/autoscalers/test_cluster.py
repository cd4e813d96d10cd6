"""The autoscaler's context: where its loops start in their periods, and the activator's report."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.autoscalers.base import PodCounters
from skenario.autoscalers.cluster import ClusterContext
from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ActivatorSpec, ClusterSpec, ReplicaSpec, RequestSpec, RoutingSpec
from skenario.model.replicas import ReplicaState

PERIOD = 15 * SECOND


def model(streams: RandomStreams, spec: ClusterSpec | None = None, arrivals: list[int] | None = None) -> ClusterModel:
    env = Environment(halt_at=10 * MINUTE)
    return ClusterModel(env, spec or ClusterSpec(initial_replicas=1), iter(arrivals or ()), streams)


def test_without_streams_every_loop_is_aligned_with_the_start() -> None:
    context = ClusterContext(model(RandomStreams(1)))
    assert context.phase("sync", PERIOD) == PERIOD
    assert context.phase("vpa-recommender", MINUTE, shared=True) == MINUTE


def test_each_loop_of_each_autoscaler_draws_from_a_stream_of_its_own() -> None:
    streams = RandomStreams(4)
    hpa = ClusterContext(model(streams), phases=(streams, "hpa"))
    other = ClusterContext(model(streams), phases=(streams, "hpa-2"))
    assert hpa.phase("sync", PERIOD) == RandomStreams(4).phase("autoscaler.hpa.sync.phase", PERIOD)
    assert other.phase("sync", PERIOD) == RandomStreams(4).phase("autoscaler.hpa-2.sync.phase", PERIOD)
    assert hpa.phase("sync", PERIOD) != other.phase("sync", PERIOD)
    # Asking again, or asking for another loop first, gives the same phase: no loop moves another.
    assert hpa.phase("sync", PERIOD) == hpa.phase("sync", PERIOD)


def test_a_shared_loop_ticks_at_one_phase_for_every_workload() -> None:
    # The VPA recommender serves the cluster: two workloads' VPAs (scoped streams) share its phase.
    root = RandomStreams(6)
    web = ClusterContext(model(root), phases=(root, "vpa"))
    batch_streams = root.scoped("batch/")
    batch = ClusterContext(model(batch_streams), phases=(batch_streams, "vpa"))
    expected = RandomStreams(6).phase("vpa-recommender.phase", MINUTE)
    assert web.phase("vpa-recommender", MINUTE, shared=True) == expected
    assert batch.phase("vpa-recommender", MINUTE, shared=True) == expected
    assert batch.phase("scrape", SECOND) != web.phase("scrape", SECOND)  # loops of their own differ


def test_an_autoscaler_started_during_the_run_is_new_but_a_shared_process_keeps_its_ticks() -> None:
    streams = RandomStreams(8)
    cluster = model(streams)
    context = ClusterContext(cluster, phases=(streams, "hpa"))
    process = RandomStreams(8).phase("vpa-recommender.phase", MINUTE)  # its ticks: process + k minutes
    now = 100 * SECOND + 7 * MILLISECOND
    answers: list[tuple[int, int]] = []
    cluster.env.call_at(now, lambda: answers.append((context.phase("sync", PERIOD), context.phase("r", MINUTE))))
    cluster.env.call_at(now, lambda: answers.append((0, context.phase("vpa-recommender", MINUTE, shared=True))))
    cluster.env.run(until=now + 1)
    [(sync, own), (_, shared)] = answers
    assert (sync, own) == (PERIOD, MINUTE)  # created now: the informer's first sync comes one period later
    next_tick = next(process + k * MINUTE for k in range(10) if process + k * MINUTE > now)
    assert now + shared == next_tick


def test_the_activator_reports_what_it_holds_and_what_it_proxies_until_the_pod_answers() -> None:
    """CC 1, one pod ready from the start, requests of 1 s of CPU at 1 s and 1.5 s: the first goes
    to the pod at once (proxied, answered at 2 s), the second waits in the activator until then and
    is answered at 3 s. The activator handles the first over [1 s, 2 s) and the second over
    [1.5 s, 3 s), held then proxied; the pod holds the first over [1 s, 2 s), the second over
    [2 s, 3 s), both proxied."""
    spec = ClusterSpec(
        requests=RequestSpec(cpu_time=Constant(SECOND), timeout=None),
        replica=ReplicaSpec(cpu_request=1000, cpu_limit=1000),
        initial_replicas=1,
        routing=RoutingSpec(buffer_capacity=100),
        activator=ActivatorSpec(1),
    )
    cluster = model(RandomStreams(1), spec, [SECOND, 3 * SECOND // 2])
    context = ClusterContext(cluster)
    seen: dict[int, tuple[PodCounters, dict[int, PodCounters]]] = {}
    for t in (SECOND, 2 * SECOND, 4 * SECOND):
        cluster.env.call_at(t, lambda t=t: seen.update({t: (context.activator_counters(), context.counters())}))  # type: ignore[misc]
    cluster.env.run(until=5 * SECOND)
    activator = {t: counters for t, (counters, _) in seen.items()}
    assert activator[2 * SECOND].requests == 2
    # Request 1 from 1 s to 2 s, request 2 from 1.5 s to 3 s: 1 + 0.5 request-seconds by 2 s, 2.5 by 4 s.
    assert activator[2 * SECOND].request_ns - activator[SECOND].request_ns == 3 * SECOND // 2
    assert activator[4 * SECOND].request_ns - activator[SECOND].request_ns == 5 * SECOND // 2
    # The pod counts both as proxied: all it holds came through the activator.
    [pod] = seen[4 * SECOND][1].values()
    assert (pod.proxied_requests, pod.proxied_request_ns) == (pod.requests, pod.request_ns) == (2, 2 * SECOND)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 40),  # seconds to run on
            st.sampled_from(["scale", "resize", "kill", "none"]),
            st.integers(0, 5),  # the replicas to scale to, or which live replica to change
        ),
        min_size=1,
        max_size=12,
    )
)
def test_the_views_kept_between_listings_are_those_a_fresh_listing_makes(
    steps: list[tuple[int, str, int]],
) -> None:
    """The context keeps each pod's view while it shows the same (`ClusterContext.pods`): after any run of
    scalings, in-place resizes and kills, its listing equals that of a context listing for the first time."""
    spec = ClusterSpec(replica=ReplicaSpec(cpu_request=500, cpu_limit=1000), initial_replicas=2)
    cluster = model(RandomStreams(3), spec)
    context = ClusterContext(cluster)
    now = 0
    for seconds, change, k in steps:
        now += seconds * SECOND
        cluster.env.run(until=now)
        assert context.pods() == ClusterContext(cluster).pods()
        live = [r for r in cluster.replicas.values() if r.state is not ReplicaState.TERMINATED]
        if change == "scale":
            cluster.scale_to(k)
        elif live and change == "resize":
            cluster.resize(live[k % len(live)], 250 * (k + 1), 1000)
        elif live and change == "kill":
            cluster.kill(live[k % len(live)])
        assert context.pods() == ClusterContext(cluster).pods()
