"""Endpoint propagation and preStop sleeps: a scale-down's refused requests, and the sleep that prevents them."""

from __future__ import annotations

import pytest

from skenario.core.environment import Environment
from skenario.core.time import MINUTE, SECOND
from skenario.model.endpoints import StaleEndpoints
from skenario.model.replicas import ReplicaState
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

SCALE_DOWN = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: scale-down}
spec:
  duration: 2m
  seed: SEED
  workload:
    replicas: 4
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: 20ms}
  traffic: {type: constant, rate: 20/s}
  routing: {endpointPropagation: 2s}
  events:
    - {id: down, at: 1m, patch: {target: workload, patch: {replicas: 2}}}
"""


def run(text: str) -> Simulation:
    simulation = Simulation(parse_scenario(text))
    simulation.run()
    return simulation


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_without_pre_stop_a_scale_down_refuses_the_requests_routed_to_the_stopped_pods(seed: int) -> None:
    """For the 2 s after the scale-down, routers know 4 endpoints, 2 of them stopped: each of the
    40 requests of that window goes to a stopped one with probability 1/2 and is refused. Nothing
    fails before or after the window."""
    model = run(SCALE_DOWN.replace("SEED", str(seed))).model
    refused = model.requests_failed.reasons["refused"]
    assert 0 < refused <= 40
    assert model.requests_failed.count() == refused
    # Binomial(40, 1/2): 99.99% of draws lie within 20 +- 13.
    assert abs(refused - 20) <= 13


def test_a_pre_stop_sleep_as_long_as_the_propagation_closes_the_window() -> None:
    text = SCALE_DOWN.replace("SEED", "2").replace("    replicas: 4\n", "    replicas: 4\n    preStopSleep: 2s\n")
    model = run(text).model
    assert model.requests_failed.count() == 0
    assert model.requests_complete.count() == model.requests_arrived


def test_without_propagation_a_scale_down_loses_nothing() -> None:
    model = run(SCALE_DOWN.replace("SEED", "2").replace("  routing: {endpointPropagation: 2s}\n", "")).model
    assert model.requests_failed.count() == 0


def test_a_stopping_replica_accepts_only_during_its_pre_stop_sleep() -> None:
    env = Environment(halt_at=MINUTE)
    stale = StaleEndpoints(env, lambda: 5 * SECOND, pre_stop=3 * SECOND)

    class Pod:
        state = ReplicaState.TERMINATING

    pod = Pod()
    stale.deleted(pod)  # type: ignore[arg-type]
    assert stale.replicas == [pod]
    accepted: list[tuple[int, bool]] = []
    for at in (1, 2, 3, 4):
        env.call_at(at * SECOND, lambda: accepted.append((env.now() // SECOND, stale.accepts(pod))))  # type: ignore[arg-type]
    env.call_at(6 * SECOND, lambda: accepted.append((6, pod in stale.replicas)))
    env.run()
    # Accepting until 3 s (the sleep), refusing after; gone from the routers at 5 s.
    assert accepted == [(1, True), (2, True), (3, False), (4, False), (6, False)]
