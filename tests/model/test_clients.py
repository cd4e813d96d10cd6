"""Client retries and abandoned requests: back-off ceilings from Envoy's and gRPC's formulas,
retry amplification against the geometric series, and per-try timeouts by hand."""

from __future__ import annotations

import math

import pytest

from skenario.core.entity import Entity
from skenario.core.movement import IgnoredMovement, Movement
from skenario.core.random import Constant
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.clients import backoff_ceiling
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClientSpec, RetryPolicy
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from tests.model import build_requests

MS = MILLISECOND


def test_envoy_back_off_ceilings_grow_as_two_to_the_n_minus_one_times_the_base() -> None:
    policy = RetryPolicy(attempts=6)
    assert [backoff_ceiling(policy, n) for n in range(1, 6)] == [25 * MS, 75 * MS, 175 * MS, 250 * MS, 250 * MS]


def test_grpc_back_off_ceilings_grow_by_the_multiplier() -> None:
    policy = RetryPolicy(attempts=5, backoff_base=100 * MS, backoff_max=SECOND, backoff_multiplier=2.0)
    assert [backoff_ceiling(policy, n) for n in range(1, 6)] == [100 * MS, 200 * MS, 400 * MS, 800 * MS, SECOND]


STALE = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: stale}
spec:
  duration: 2m
  seed: SEED
  workload:
    replicas: 4
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: 20ms}
  traffic: {type: constant, rate: 20/s}
  routing: {policy: random, endpointPropagation: 10m}
  client:
    retries: {attempts: 3}
  events:
    - {id: down, at: 1m, patch: {target: workload, patch: {replicas: 2}}}
"""


@pytest.mark.parametrize("seed", [1, 2])
def test_retry_amplification_follows_the_geometric_series(seed: int) -> None:
    """After the scale-down, routers still know four endpoints, two of them stopped: each attempt
    is refused with p = 1/2, independently (random routing). With 3 attempts a request takes
    1 + p + p² = 1.75 attempts on average and fails only if all three are refused, p³ = 1/8 of
    the 1200 requests of the last minute. Bounds are 4 standard deviations wide."""
    summary = Simulation(parse_scenario(STALE.replace("SEED", str(seed)))).run()
    requests = 1200
    p = 0.5
    retries = summary.clients["retries"]
    assert abs(retries - requests * (p + p * p)) <= 4 * math.sqrt(requests * 1.0)  # Var(retries per request) < 1
    failed = summary.failures.get("retries_exhausted", 0)
    assert abs(failed - requests * p**3) <= 4 * math.sqrt(requests * p**3 * (1 - p**3))
    assert summary.requests_failed == failed  # every refusal was retried; only exhausted ones fail
    assert summary.clients["attempts"] == summary.requests_arrived + retries


def test_without_retries_half_the_requests_are_refused() -> None:
    summary = Simulation(
        parse_scenario(STALE.replace("SEED", "1").replace("    retries: {attempts: 3}\n", "    cancel: false\n"))
    ).run()
    assert abs(summary.failures["refused"] - 600) <= 4 * math.sqrt(1200 * 0.25)
    assert summary.clients == {}


SLOW = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: slow}
spec:
  duration: 10s
  seed: 1
  workload:
    replicas: 1
    resources: {requests: {cpu: 1000m}, limits: {cpu: 1000m}}
    request: {cpuTime: 2s, timeout: 10s}
  traffic: {type: constant, rate: 1/s, start: 0s, stop: 1500ms}  # one request, at 1 s
  client:
    CANCEL
    retries: {attempts: 2, perTryTimeout: 1s}
"""


def test_a_per_try_timeout_abandons_the_attempt_and_the_server_keeps_working() -> None:
    """One request of 2 s CPU at 1 s on one core, 1 s per try, 2 tries. At 2 s its client gives
    up the first attempt (which keeps the core) and retries after at most 25 ms; 1 s later it
    gives up the second too: the request fails as retries_exhausted by 3.025 s, both attempts
    abandoned to the server, which finishes them anyway (4 s of work on one core from 1 s: by 5 s)."""
    simulation = Simulation(parse_scenario(SLOW.replace("CANCEL", "cancel: false")))
    summary = simulation.run()
    assert summary.failures == {"retries_exhausted": 1}
    assert summary.clients == {"attempts": 2, "retries": 1, "abandoned": 2}
    assert simulation.model.requests_complete.abandoned_done == 2
    busy = simulation.model.busy_core_ns()
    assert busy == pytest.approx(4 * SECOND)  # both attempts ran to the end: 2 s of CPU each


def test_with_cancel_a_given_up_attempt_stops_at_the_server() -> None:
    """The same with cancelling clients: the first attempt leaves the server at 2 s, the second
    runs alone and is cancelled 1 s after it starts: 2 s of CPU in all, nothing abandoned."""
    simulation = Simulation(parse_scenario(SLOW.replace("CANCEL", "cancel: true")))
    summary = simulation.run()
    assert summary.failures == {"retries_exhausted": 1}
    assert summary.clients == {"attempts": 2, "retries": 1, "abandoned": 0}
    assert simulation.model.busy_core_ns() == pytest.approx(2 * SECOND)


def test_a_retry_budget_holds_retries_back() -> None:
    """With no pod to take them every attempt fails at once; a 20% budget with one retry always
    allowed keeps at most one retry waiting at a time, so far fewer than the 2 per request
    that three attempts would give."""
    text = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: budget}
spec:
  duration: 10s
  workload:
    replicas: 0
    request: {cpuTime: 10ms}
  routing: {bufferCapacity: 0}
  traffic: {type: constant, rate: 100/s}
  client:
    retries: {attempts: 3, budget: 20%, minRetryConcurrency: 1}
"""
    summary = Simulation(parse_scenario(text)).run()
    unbounded = Simulation(parse_scenario(text.replace(", budget: 20%, minRetryConcurrency: 1", ""))).run()
    assert unbounded.clients["retries"] >= 2 * unbounded.requests_arrived - 2  # the last ones' may fall after the end
    assert summary.clients["retries"] < unbounded.clients["retries"] / 2


class Conservation:
    """After every movement: each request arrived is completed, failed or still in flight, by the model's counts."""

    def __init__(self, model: ClusterModel) -> None:
        self.model = model
        self.broken: list[tuple[int, str]] = []

    def on_movement(self, movement: Movement, entity: Entity) -> None:
        model = self.model
        finished = model.requests_complete.count() + model.requests_failed.count()
        if model.requests_arrived != finished + model.requests_in_flight:
            self.broken.append((movement.occurs_at, movement.kind))

    def on_ignored(self, ignored: IgnoredMovement) -> None:
        pass


@pytest.mark.parametrize("cancel", [False, True])
def test_a_response_due_the_instant_a_timeout_fires_wins_if_it_was_due_first(cancel: bool) -> None:
    """Two replicas of one core, 100 ms of CPU and a 100 ms timeout: A at 1 s and B at 1.05 s, one per
    replica, each ends its CPU at its deadline. Ties run in the order they were scheduled:
      A: its deadline's timer was armed as A arrived, before its CPU finish was: at 1.1 s the timer
         runs first, and its client's giving up is scheduled before A's response: A times out.
      B: its timer was armed at 1.1 s, when A's fired, after B's CPU finish (set at 1.05 s): at 1.15 s
         B's response is due before its client gives up, so B completes in 100 ms, its timeout, and
         there is nothing left to give up.
    The same whether or not clients cancel; and every request is completed, failed or in flight
    after every movement, those instants included."""
    env, model, trace = build_requests(
        arrivals=[1000 * MS, 1050 * MS],
        cpu_time=Constant(100 * MS),
        timeout=100 * MS,
        replicas=2,
        duration=2 * SECOND,
        client=ClientSpec(cancel=cancel),
    )
    conservation = Conservation(model)
    env.observe(conservation)
    env.run()
    assert model.requests_failed.reasons == {"timeout": 1}
    (timed_out,) = trace.kind("request_timeout")
    assert timed_out[0] == 1100 * MS
    assert model.requests_complete.count() == 1
    assert model.requests_complete.latency.max == 100 * MS
    responses = [(at, e.arrived_at) for at, e, _, _ in trace.kind("complete_request")]
    # Without cancel, A stayed on its replica to the end of its CPU, abandoned; B was never given up.
    assert responses == ([] if cancel else [(1100 * MS, 1000 * MS)]) + [(1150 * MS, 1050 * MS)]
    assert model.requests_in_flight == 0
    assert model.clients.abandoned_total == (0 if cancel else 1)
    assert model.requests_complete.abandoned_done == (0 if cancel else 1)
    assert conservation.broken == []
