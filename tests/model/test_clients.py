"""Client retries and abandoned requests: back-off ceilings from Envoy's and gRPC's formulas,
retry amplification against the geometric series, and per-try timeouts by hand."""

from __future__ import annotations

import math

import pytest

from skenario.core.time import MILLISECOND, SECOND
from skenario.model.clients import backoff_ceiling
from skenario.model.config import RetryPolicy
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

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
