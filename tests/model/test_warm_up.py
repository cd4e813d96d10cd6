"""A container's warm-up after it turns ready: slower requests and CPU work of its own, by hand."""

from __future__ import annotations

import pytest

from skenario.core.time import MILLISECOND, SECOND
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

MS = MILLISECOND
SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: warm-up}
spec:
  duration: 20s
  workload:
    replicas: 1
    resources: {requests: {cpu: 1000m}, limits: {cpu: 1000m}}
    request: {cpuTime: 100ms}
    warmUp: WARM_UP
  traffic: {type: constant, rate: RATE}
"""


def test_requests_admitted_during_the_warm_up_need_slowdown_times_their_cpu() -> None:
    """One request a second, 100 ms each, alone on one core: those arriving in the first 10 s
    after the pod turned ready take 200 ms, the rest 100 ms."""
    text = SCENARIO.replace("WARM_UP", "{duration: 10s, slowdown: 2}").replace("RATE", "1/s")
    simulation = Simulation(parse_scenario(text))
    summary = simulation.run()
    (replica,) = simulation.model.replicas.values()
    assert replica.ready_since is not None
    arrivals = [k * SECOND for k in range(1, 20)]
    slow = sum(1 for at in arrivals if at < replica.ready_since + 10 * SECOND)
    latency = simulation.model.requests_complete.latency
    assert summary.requests_completed == len(arrivals)
    assert latency.total == slow * 200 * MS + (len(arrivals) - slow) * 100 * MS


def test_the_warm_up_burns_its_cpu_on_the_pods_core() -> None:
    """No requests; 500m for 30 s is 15 s of CPU work, done alone at a full core in 15 s."""
    text = SCENARIO.replace("WARM_UP", "{duration: 30s, cpu: 500m}").replace("RATE", "0/s").replace("20s", "40s")
    simulation = Simulation(parse_scenario(text))
    simulation.run()
    assert simulation.model.busy_core_ns() == pytest.approx(15 * SECOND, abs=1)
