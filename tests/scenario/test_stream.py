"""A stream-consuming workload from a scenario file: its lag recorded, an HPA scaling on it, and what a stream
cannot be combined with."""

from __future__ import annotations

import math

import pytest

from skenario.autoscalers.hpa.controller import HorizontalPodAutoscaler
from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: stream}
spec:
  duration: 2m
  workload:
    replicas: 1
    resources: {requests: {cpu: 1000m}, limits: {cpu: 1000m}}
    request: {cpuTime: 10ms}
    stream: {rebalancePause: 5s}
  traffic: {type: constant, rate: 300}
  recording: {interval: 10s}
"""

LAG_HPA = """\
  autoscalers:
  - type: hpa
    spec:
      maxReplicas: 8
      metrics:
      - type: External
        external: {metric: {name: consumer_lag}, target: {type: AverageValue, averageValue: 1000}}
"""


def test_the_lag_is_recorded_with_the_pause() -> None:
    """One consumer of 100 messages/s under 300/s falls behind 200/s: 2 000 more each 10-s row."""
    simulation = Simulation(parse_scenario(SCENARIO))
    simulation.run()
    frame = simulation.series()
    at_30 = frame.loc[frame["time_ns"] == 30 * SECOND, "consumer_lag"].item()
    assert abs(at_30 - 6_000) <= 3
    assert set(frame["consumers_paused"]) == {0}  # one consumer from the start: never a rebalance


def test_an_hpa_scales_on_the_consumer_lag() -> None:
    """An External consumer_lag target of 1 000 per pod: the first sync proposes ceil(lag / 1 000), the lag
    then having grown 200/s since the start (within the messages in flight)."""
    simulation = Simulation(parse_scenario(SCENARIO + LAG_HPA))
    simulation.run()
    [hpa] = [a for a in simulation.main.autoscalers.values() if isinstance(a, HorizontalPodAutoscaler)]
    first = hpa.decisions[0]
    lag = 200 * first.at / SECOND
    assert first.proposed in {min(8, math.ceil((lag - 3) / 1000)), min(8, math.ceil((lag + 3) / 1000))}
    assert simulation.model.desired >= 3  # 300/s needs three consumers


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (SCENARIO.replace("cpuTime: 10ms}", "cpuTime: 10ms, timeout: 5s}"), "spec.workload", "timeout must be null"),
        (
            SCENARIO + "  autoscalers: [{type: kpa}]\n",
            "spec",
            "scale a stream with an HPA",
        ),
        (SCENARIO.replace("    stream: {rebalancePause: 5s}\n", "") + LAG_HPA, "consumer_lag", "consumes no stream"),
    ],
)
def test_what_a_stream_cannot_be_combined_with_is_refused(text: str, field: str, message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        Simulation(parse_scenario(text))
    assert message in info.value.message
    assert field in f"{info.value.field} {info.value.value}"
