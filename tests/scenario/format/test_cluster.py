"""The cluster section's own checks: node names unique, a node count that is checked at once, and the pods'
nodeSelector validated as labels."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from skenario.errors import ScenarioError
from skenario.scenario.format.cluster import MAX_NODES_PER_ENTRY, Cluster, PodSchedulingSpec
from skenario.scenario.loader import parse_scenario


def test_names_made_from_counts_clash_with_named_nodes() -> None:
    # `web` with count 3 names web-0, web-1, web-2: a node called web-1 clashes with it.
    with pytest.raises(ValidationError, match="names must be unique: web-1"):
        Cluster.model_validate(
            {
                "nodes": [
                    {"name": "web", "count": 3, "cpu": 1, "memory": "1Gi"},
                    {"name": "web-1", "cpu": 1, "memory": "1Gi"},
                ]
            }
        )


def test_a_count_past_the_bound_is_refused_without_making_the_nodes() -> None:
    entry = {"name": "n", "count": MAX_NODES_PER_ENTRY + 1, "cpu": 1, "memory": "1Gi"}
    with pytest.raises(ValidationError, match="less than or equal to 100000"):
        Cluster.model_validate({"nodes": [entry]})
    assert len(Cluster.model_validate({"nodes": [{**entry, "count": 20_000}]}).static_nodes()) == 20_000


SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: selector}
spec:
  duration: 1m
  workload:
    replicas: 1
    resources: {requests: {cpu: 1, memory: 1Gi}}
    request: {cpuTime: 10ms}
    pod: {nodeSelector: SELECTOR}
  traffic: {type: poisson, rate: 1/s}
  cluster:
    nodes: [{name: a, cpu: 4, memory: 8Gi, labels: {disktype: ssd}}]
"""


def test_the_pods_node_selector_is_validated_as_labels() -> None:
    """As `ValidatePodSpec`'s `ValidateLabels`: values of at most 63 characters, empty or alphanumeric
    at both ends with `-`, `_`, `.` between; keys qualified names."""
    assert PodSchedulingSpec.model_validate({"nodeSelector": {"disktype": "ssd", "zone": ""}}).node_selector == {
        "disktype": "ssd",
        "zone": "",
    }
    for bad in ({"app": "bad value!"}, {"app": "x" * 64}, {"bad key!": "x"}):
        with pytest.raises(ValidationError, match="label"):
            PodSchedulingSpec.model_validate({"nodeSelector": bad})


def test_a_bad_node_selector_value_is_one_error_naming_file_field_and_value() -> None:
    parse_scenario(SCENARIO.replace("SELECTOR", "{disktype: ssd}"), "s.yaml")
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(SCENARIO.replace("SELECTOR", '{disktype: "bad value!"}'), "s.yaml")
    error = caught.value
    assert (error.file, error.field) == ("s.yaml", "spec.workload.pod.nodeSelector.disktype")
    assert "bad value!" in str(error) and "\n" not in str(error)
