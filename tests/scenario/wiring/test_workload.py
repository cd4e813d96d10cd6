"""A workload read from the user's own Deployment manifest."""

from __future__ import annotations

from pathlib import Path

import pytest

from skenario.errors import ScenarioError
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: sidecar
        image: envoy
        resources: {requests: {cpu: 100m, memory: 64Mi}}
      - name: web
        image: web:1.2
        resources:
          requests: {cpu: 250m, memory: 256Mi}
          limits: {cpu: "1", memory: 512Mi}
"""

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: deployed}
spec:
  duration: 1m
  workload:
    deployment: web.yaml
    container: web
    request: {cpuTime: 10ms}
  traffic: {type: constant, rate: 10/s}
"""


def simulate(tmp_path: Path, scenario: str) -> Simulation:
    (tmp_path / "web.yaml").write_text(DEPLOYMENT)
    simulation = Simulation(parse_scenario(scenario), base_dir=tmp_path)
    simulation.run()
    return simulation


def test_replicas_and_the_named_containers_cpu_come_from_the_deployment(tmp_path: Path) -> None:
    model = simulate(tmp_path, SCENARIO).model
    assert model.desired == 3
    assert {(r.cpu_request, r.cpu_limit, r.millicores) for r in model.replicas_active} == {(250, 1000, 1000)}


def test_the_containers_memory_comes_from_the_deployment_and_its_limit_kills(tmp_path: Path) -> None:
    model = simulate(tmp_path, SCENARIO).model
    assert {(r.memory_request, r.memory_limit) for r in model.replicas_active} == {(256 * 2**20, 512 * 2**20)}
    # With a working set above the manifest's 512Mi limit, every pod is OOM-killed as it starts.
    crashing = simulate(
        tmp_path, SCENARIO.replace("    container: web\n", "    container: web\n    memory: {baseline: 600Mi}\n")
    )
    assert crashing.model.oom_kills >= 3 and crashing.model.replicas_active.count() == 0


def test_the_first_container_when_none_is_named(tmp_path: Path) -> None:
    model = simulate(tmp_path, SCENARIO.replace("    container: web\n", "")).model
    assert {r.cpu_request for r in model.replicas_active} == {100}


def test_what_the_scenario_sets_wins(tmp_path: Path) -> None:
    text = SCENARIO.replace("    deployment: web.yaml\n", "    deployment: web.yaml\n    replicas: 1\n")
    text = text.replace("    container: web\n", "    container: web\n    resources: {requests: {cpu: 2}}\n")
    model = simulate(tmp_path, text).model
    assert model.desired == 1
    assert [r.cpu_request for r in model.replicas_active] == [2000]


def test_a_missing_container_names_the_ones_there(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        simulate(tmp_path, SCENARIO.replace("container: web", "container: api"))
    assert "sidecar, web" in str(info.value) and "api" in str(info.value)


def test_replicas_are_required_without_a_deployment() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(SCENARIO.replace("    deployment: web.yaml\n", ""))
    assert "replicas" in str(info.value)
