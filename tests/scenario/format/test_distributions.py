"""Random quantities as written: a constant's shorthand, and a clear error for a mapping without a known kind."""

from __future__ import annotations

import pytest

from skenario.errors import ScenarioError
from skenario.scenario.loader import parse_scenario

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: d}
spec:
  duration: 10s
  workload: {replicas: 1, request: {cpuTime: CPU}}
  traffic: {type: constant, rate: 1}
"""


@pytest.mark.parametrize(
    ("written", "needle"),
    [
        # pydantic's discriminator said "unable to extract tag using discriminator 'distribution'".
        ("{mean: 5ms}", "a distribution needs 'distribution': one of constant, exponential, uniform, normal"),
        ("{distribution: gamma, mean: 5ms}", "'gamma' is not a distribution; use one of constant, exponential"),
        # ... and "input should be a valid dictionary or object to extract fields from", without the value.
        ("[5ms]", "or a mapping with 'distribution', not a list (value: ['5ms'])"),
    ],
)
def test_a_distribution_without_a_known_kind_says_which_kinds_there_are(written: str, needle: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(SCENARIO.replace("CPU", written), "d.yaml")
    assert raised.value.field == "spec.workload.request.cpuTime" and needle in str(raised.value)


def test_a_plain_quantity_is_a_constant() -> None:
    spec = parse_scenario(SCENARIO.replace("CPU", "20ms")).spec
    assert spec.workload.request.cpu_time.distribution == "constant"
