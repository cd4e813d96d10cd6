"""Whole scenarios on shared and implicit nodes, checked against what a real node does and against formulas.

The cases are issue #16's: pods without limits on an idle node use its idle cores; an
overcommitted node serves no more than its cores; the HPA reads utilisation above 100% of the
request and jumps as far as its policies allow; and a work-conserving node with exponential work
has M/M/1's mean response time whatever the split between its pods.
"""

from __future__ import annotations

import pytest

from skenario.core.time import HOUR, MINUTE, SECOND
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation


def run(spec: str) -> Simulation:
    text = f"apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {{name: node-cpu}}\nspec:\n{spec}"
    simulation = Simulation(parse_scenario(text))
    simulation.run()
    return simulation


# 4 pods of request 100m and no limit; requests of 250 ms of CPU arriving 4/s in all: 1 core of
# work. Held to their requests (0.4 core in all) they would fail most requests on timeouts.
IDLE_NODE_WORKLOAD = """\
  duration: 10m
  seed: 3
  workload:
    replicas: 4
    resources: {requests: {cpu: 100m}}
    request: {cpuTime: 250ms, timeout: 10s}
  traffic: {type: poisson, rate: 4/s}
"""


def test_pods_without_limits_on_an_implicit_node_never_time_out_at_one_core_of_demand() -> None:
    summary = run(IDLE_NODE_WORKLOAD).summary()
    assert summary.requests_arrived > 2000
    assert summary.requests_failed == 0
    # Each pod has a 4-core node to itself: concurrent requests each run on a core of their own,
    # so every request takes exactly its 250 ms of CPU.
    assert summary.latency_p99_ns == pytest.approx(250e6, rel=0.02)


def test_pods_without_limits_on_one_idle_8_core_node_never_time_out() -> None:
    cluster = "  cluster:\n    nodes: [{name: big, cpu: 8, memory: 32Gi}]\n"
    simulation = run(IDLE_NODE_WORKLOAD + cluster)
    summary = simulation.summary()
    # What each pod could use alone there, its utilisation's denominator: the whole 8-core node.
    assert [r.millicores for r in simulation.model.replicas.values()] == [8000] * 4
    assert summary.requests_failed == 0
    # 8 cores, and at 1 core of demand rarely more than 8 requests at once: each runs on its own core.
    assert summary.latency_p50_ns == pytest.approx(250e6, rel=0.02)


def test_an_overcommitted_node_serves_no_more_than_its_cores() -> None:
    """4 pods of 250m request / 1000m limit on a 1-core node, 3 cores of work: the node saturates."""
    simulation = run(
        """\
  duration: 5m
  seed: 5
  workload:
    replicas: 4
    resources: {requests: {cpu: 250m}, limits: {cpu: 1000m}}
    request: {cpuTime: 100ms, timeout: 5s}
  traffic: {type: poisson, rate: 30/s}
  cluster:
    nodes: [{name: small, cpu: 1, memory: 8Gi}]
"""
    )
    model = simulation.model
    busy_core_s = model.busy_core_ns() / SECOND
    # Never more than 1 core over the run (the node), and close to it: it stays saturated.
    assert busy_core_s <= 5 * MINUTE / SECOND * (1 + 1e-9)
    assert busy_core_s > 0.95 * 5 * MINUTE / SECOND
    summary = simulation.summary()
    # 3 cores of work on 1 core: at most a third can complete, the rest time out.
    assert summary.requests_completed <= summary.requests_arrived / 3 * 1.05
    assert summary.failures.get("timeout", 0) > summary.requests_arrived / 2


def test_the_hpa_on_pods_without_limits_reads_more_than_100_percent_and_jumps_to_its_limit() -> None:
    """3 pods of 500m request, no limit; demand steps to 4 cores at 1 min.

    A pod held to its request measures at most 100% of it, so with a 50% target the calculator
    could propose at most 2 x 3 = 6. On 4-core implicit nodes the pods burst above their request:
    the first scale-up's proposal is above 6, and the scale-up limit (no `behavior`, so upstream's
    legacy max(2 x current, 4) = 6) is what holds it back, as in a real cluster.
    """
    simulation = run(
        """\
  duration: 3m
  seed: 11
  workload:
    replicas: 3
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: 100ms, timeout: 30s}
  traffic:
    - {type: poisson, rate: 1/s}
    - {type: poisson, rate: 40/s, start: 1m}
  autoscalers:
    - type: hpa
      spec:
        minReplicas: 3
        maxReplicas: 20
        metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
"""
    )
    decisions = [
        entry
        for entry in simulation.timeline.entries()
        if entry[2] == "Decision" and entry[5].get("desired", 0) > entry[5].get("current", 0)
    ]
    assert decisions, "the HPA scaled up"
    first = decisions[0][5]
    assert first["current"] == 3
    assert first["proposed"] > 6  # utilisation above 100% of the request
    assert first["desired"] == 6  # the legacy scale-up limit: max(2 x 3, 4)


def test_a_work_conserving_node_has_mm1_mean_response_time() -> None:
    """Two pods without limits on a 1-core node, Poisson arrivals, exponential work, no timeouts.

    Whatever the split between the pods (weights, round robin), the node is a work-conserving
    server of exponential work that picks nothing by size, so the number of requests on it is
    M/M/1's and by Little's law the mean response is S / (1 - rho) = 100 ms / 0.5 = 200 ms.
    """
    simulation = run(
        """\
  duration: 2h
  seed: 17
  workload:
    replicas: 2
    resources: {requests: {cpu: 300m}}
    request: {cpuTime: {distribution: exponential, mean: 100ms}, timeout: null}
  traffic: {type: poisson, rate: 5/s}
  cluster:
    nodes: [{name: one, cpu: 1, memory: 8Gi}]
"""
    )
    summary = simulation.summary()
    assert summary.requests_failed == 0
    assert summary.latency_mean_ns is not None
    assert summary.latency_mean_ns == pytest.approx(200e6, rel=0.08)
    assert simulation.env.now() == 2 * HOUR
