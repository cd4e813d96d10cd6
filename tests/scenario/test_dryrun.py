"""The checks a scenario passes at load, before anything runs: pods that fit no node (the events' own are in
tests/scenario/format/test_events.py)."""

from __future__ import annotations

import pytest

from skenario.errors import ScenarioError
from skenario.scenario.loader import parse_scenario

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {{name: fits}}
spec:
  duration: 1m
  workload:
    replicas: 2
    resources: {{requests: {{cpu: {cpu}, memory: {memory}}}}}
    request: {{cpuTime: 10ms}}
  traffic: {{type: poisson, rate: 1/s}}
  cluster:
    nodes: [{{name: a, count: 2, cpu: 4, memory: 8Gi}}]
    nodeGroups: [{{name: g, minSize: 0, maxSize: 2, node: {{cpu: 6, memory: 4Gi}}}}]
"""


def test_a_pod_that_fits_a_node_groups_node_is_accepted() -> None:
    # 5 cores fit no static node (4) but the group's (6): the cluster autoscaler can make room.
    parse_scenario(SCENARIO.format(cpu=5, memory="1Gi"))


@pytest.mark.parametrize(
    ("cpu", "memory", "field", "value"),
    [(7, "1Gi", "cpu", 7000), (1, "9Gi", "memory", 9 * 2**30)],
)
def test_a_pod_bigger_than_every_node_is_an_error_at_its_request(cpu: int, memory: str, field: str, value: int) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(SCENARIO.format(cpu=cpu, memory=memory), source="s.yaml")
    error = info.value
    assert (error.file, error.line) == ("s.yaml", 8)
    assert error.field == f"spec.workload.resources.requests.{field}"
    assert error.value == value
    assert "fits no node" in error.message
