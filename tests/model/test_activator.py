"""Knative's activator: a backlog handed to pods slot by slot, the load-balancing policy by
containerConcurrency, and queue-proxy's breaker. Timelines hand-computed from the rules in
knative/serving's throttler and queue-proxy."""

from __future__ import annotations

from collections.abc import Sequence

from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from skenario.model.activator import Activator, dest
from skenario.model.cluster import ClusterModel
from skenario.model.config import ActivatorSpec, ClusterSpec, LaunchStage, ReplicaSpec, RequestSpec, RoutingSpec

MS = MILLISECOND
ARRIVALS = [100 * MS, 200 * MS, 300 * MS, 400 * MS, 500 * MS, 600 * MS]


def knative_model(
    arrivals: Sequence[int],
    container_concurrency: int | None,
    *,
    cpu_time: int = 100 * MS,
    concurrency: int | None = None,
    queue_capacity: int | None = None,
    initial: int = 0,
) -> tuple[Environment, ClusterModel]:
    """Pods of one core (1000m request and limit) that take 1 s to start; an activator with
    `container_concurrency` slots per pod, or a plain buffer when it is None."""
    env = Environment(halt_at=MINUTE)
    spec = ClusterSpec(
        requests=RequestSpec(cpu_time=Constant(cpu_time), timeout=None),
        replica=ReplicaSpec(
            cpu_request=1000,
            cpu_limit=1000,
            concurrency=concurrency,
            queue_capacity=queue_capacity,
            launch=(LaunchStage("containerStart", Constant(SECOND)),),
        ),
        initial_replicas=initial,
        initial_ready=True,
        routing=RoutingSpec(buffer_capacity=10_000),
        activator=ActivatorSpec(container_concurrency) if container_concurrency is not None else None,
    )
    return env, ClusterModel(env, spec, iter(arrivals), RandomStreams(1))


def start_pods(env: Environment, model: ClusterModel) -> None:
    """Pod A is created at 50 ms and ready at 1.05 s, pod B created at 470 ms and ready at 1.47 s."""
    env.call_at(50 * MS, lambda: model.scale_to(1))
    env.call_at(470 * MS, lambda: model.scale_to(2))


def test_the_activator_sends_a_backlog_to_a_pod_one_slot_at_a_time() -> None:
    """CC 1: six requests (at 0.1 ... 0.6 s) wait for pods. A takes the oldest at 1.05 s and the
    next as each finishes (100 ms each): done at 1.15, 1.25, 1.35, 1.45 and 1.55 s. B takes the
    sixth at 1.47 s and is done at 1.57 s. Latencies: five of 1.05 s and one of 0.97 s."""
    env, model = knative_model(ARRIVALS, 1)
    start_pods(env, model)
    env.run()
    latency = model.requests_complete.latency
    assert latency.count == 6
    assert (latency.min, latency.max) == (970 * MS, 1050 * MS)
    assert latency.total == 5 * 1050 * MS + 970 * MS


# Six requests sharing one core from 1.05 s all finish at 1.65 s; processor sharing's float virtual
# time may round each finish up by 1 ns, never more.
FLOOD_TOTAL = 6 * 1650 * MS - sum(ARRIVALS)


def test_without_the_activator_the_first_pod_takes_the_whole_backlog() -> None:
    """The plain buffer flushes all six onto pod A at 1.05 s: they share its core and all finish
    at 1.65 s, so the latencies add up to 6 × 1.65 s − (0.1 + ... + 0.6) s = 7.8 s."""
    env, model = knative_model(ARRIVALS, None)
    start_pods(env, model)
    env.run()
    latency = model.requests_complete.latency
    assert latency.count == 6
    assert 0 <= latency.total - FLOOD_TOTAL <= 6


def test_with_no_concurrency_limit_the_activator_forwards_everything_at_once() -> None:
    """CC 0: the throttler's breaker only waits for a pod; with one pod ready all six go to it."""
    env, model = knative_model(ARRIVALS, 0)
    start_pods(env, model)
    env.run()
    assert 0 <= model.requests_complete.latency.total - FLOOD_TOTAL <= 6


def test_above_three_slots_the_activator_goes_round_robin_over_pods_with_a_free_slot() -> None:
    """Three ready pods and ten long requests, all through the activator. CC 4: A, B, C, A, B, C,
    A, B, C, A, so the first pod gets four and the others three (`newRoundRobinPolicy`). CC 3: the
    first pod with a free slot (`firstAvailableLBPolicy`): A, A, A, B, B, B, C, C, C, and the tenth
    waits in the activator."""
    ten = [i * 10 * MS for i in range(1, 11)]
    env, model = knative_model(ten, 4, cpu_time=10 * SECOND, initial=3)
    env.run(until=SECOND)
    in_order = sorted(model.replicas_active, key=dest)
    assert [r.processing.arrived for r in in_order] == [4, 3, 3]
    assert model.requests_buffered.count() == 0

    env, model = knative_model(ten, 3, cpu_time=10 * SECOND, initial=3)
    env.run(until=SECOND)
    in_order = sorted(model.replicas_active, key=dest)
    assert [r.processing.arrived for r in in_order] == [3, 3, 3]
    assert model.requests_buffered.count() == 1


def test_first_available_fills_pods_in_the_order_of_their_dest_strings_not_their_age() -> None:
    """Four pods made in this order with these IPs: 10.0.1.2, 10.0.0.9, 10.0.0.10, 10.0.0.100. The
    throttler sorts the strings "IP:8012" (`updateCapacity`), so ".100:" < ".10:" (the '0' before the
    ':') < ".9:" < "10.0.1.": with CC 1 and four long requests at 1, 2, 3 and 4 ms through the
    activator, the n-th goes to the n-th pod in that order, the youngest pod first."""
    env, model = knative_model([MS, 2 * MS, 3 * MS, 4 * MS], 1, cpu_time=10 * SECOND)
    activator = model.activator
    assert isinstance(activator, Activator)
    pods = [model.replica_source.remove() for _ in range(4)]
    for pod, address in zip(pods, ["10.0.1.2", "10.0.0.9", "10.0.0.10", "10.0.0.100"], strict=True):
        pod.address = address
        activator.pod_ready(pod)
    assert [pod.address for pod in sorted(pods, key=dest)] == ["10.0.0.100", "10.0.0.10", "10.0.0.9", "10.0.1.2"]
    order = []
    for k in range(1, 5):
        env.run(until=k * MS + MS // 2)
        order.append(next(pod.address for pod in pods if pod.processing.arrived and pod.address not in order))
    assert order == ["10.0.0.100", "10.0.0.10", "10.0.0.9", "10.0.1.2"]


def test_queue_proxy_takes_cc_at_once_and_queues_ten_times_that_then_refuses() -> None:
    """CC 1 with queue-proxy's queue of 10: of 12 requests sent straight to one pod (the activator
    out of the path), one is served, ten wait and the twelfth fails as queue_proxy_overflow."""
    twelve = [SECOND + i * MS for i in range(12)]
    env, model = knative_model(twelve, 1, cpu_time=SECOND, concurrency=1, queue_capacity=10, initial=1)
    assert isinstance(model.activator, Activator)
    model.activator.in_path = False
    env.run(until=2 * SECOND - 1)
    assert model.requests_failed.reasons == {"queue_proxy_overflow": 1}
    processing = next(iter(model.replicas_active)).processing
    assert processing.count() == 11


def test_in_proxy_mode_every_request_goes_through_the_activator() -> None:
    """CC 1 and one ready pod: in Proxy mode the second request waits in the activator (the pod's
    slot is taken) rather than in queue-proxy, and goes when the first finishes: latencies 1 s and
    1 s + (1 s − 1 ms)."""
    env, model = knative_model([SECOND, SECOND + MS], 1, cpu_time=SECOND, concurrency=1, queue_capacity=10, initial=1)
    env.run(until=SECOND + 2 * MS)
    assert model.requests_buffered.count() == 1
    env.run()
    latency = model.requests_complete.latency
    assert (latency.min, latency.max) == (SECOND, 2 * SECOND - MS)
