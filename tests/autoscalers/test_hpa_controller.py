"""The HPA controller on the simulated cluster, its manifests as the API server reads them, and plugins."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from skenario.autoscalers.base import ClusterContext
from skenario.autoscalers.hpa import HPAControllerConfig, ResourceMetricSource, UtilizationTarget
from skenario.autoscalers.hpa_controller import HorizontalPodAutoscaler, HPASpec
from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from skenario.errors import ScenarioError
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, MetricsSpec, ReplicaSpec, RequestSpec
from skenario.scenario import Simulation, parse_scenario
from skenario.scenario.hpa_manifest import HorizontalPodAutoscalerManifest
from skenario.scenario.loader import load_document, parse_document
from skenario.workloads.patterns import constant_arrivals

SHAPE = "a manifest"


def test_first_sync_scales_by_the_usage_ratio() -> None:
    # 2 pods of 500m; 30 requests/s of exactly 20 ms CPU each, evenly spread: each pod uses
    # 15 × 20 ms = 300m, 60% of its request. With a 30% target the HPA wants
    # ceil(2 × 60 / 30) = 4 pods at its first sync (15 s: the samples of 5 s ticks, 4 s lag, are in).
    env = Environment(halt_at=16 * SECOND)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(20 * MILLISECOND), timeout=None),
        replica=ReplicaSpec(500),
        initial_replicas=2,
        metrics=MetricsSpec(interval=5 * SECOND, first_after=5 * SECOND, lag=4 * SECOND),
    )
    model = ClusterModel(env, spec, constant_arrivals(30, 0, 16 * SECOND), RandomStreams(1))
    target = ResourceMetricSource("cpu", UtilizationTarget(30))
    hpa = HorizontalPodAutoscaler(HPASpec(max_replicas=10, metrics=(target,)), HPAControllerConfig())
    hpa.start(ClusterContext(model))
    env.run()
    [decision] = hpa.decisions
    assert decision.at == 15 * SECOND
    assert decision.proposed == math.ceil(2 * 60 / 30)
    assert model.desired == 4


def test_desired_stays_within_min_and_max() -> None:
    # Far more load than 3 pods can carry: the HPA asks for more and is capped at maxReplicas.
    env = Environment(halt_at=5 * MINUTE)
    spec = ClusterSpec(requests=RequestSpec(Constant(100 * MILLISECOND)), replica=ReplicaSpec(250), initial_replicas=1)
    model = ClusterModel(env, spec, constant_arrivals(100, 0, 5 * MINUTE), RandomStreams(2))
    hpa = HorizontalPodAutoscaler(HPASpec(max_replicas=3, min_replicas=1))
    hpa.start(ClusterContext(model))
    env.run()
    assert max(d.desired for d in hpa.decisions) == 3
    assert all(1 <= d.desired <= 3 for d in hpa.decisions)


MANIFEST = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  - type: Pods
    pods: {metric: {name: requests_per_second}, target: {type: AverageValue, averageValue: 500m}}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 60
      policies: [{type: Pods, value: 1, periodSeconds: 30}]
"""


def test_a_real_manifest_reads_as_the_api_server_reads_it() -> None:
    spec = parse_document(MANIFEST, HorizontalPodAutoscalerManifest, "hpa.yaml", SHAPE).spec.build()
    assert (spec.min_replicas, spec.max_replicas) == (2, 10)
    assert spec.metrics[0] == ResourceMetricSource("cpu", UtilizationTarget(70))
    assert spec.metrics[1].target.average_value == 500  # type: ignore[union-attr]  # 500m in milli-units
    assert spec.behavior is not None and spec.behavior.scale_down is not None
    assert spec.behavior.scale_down.stabilization_window_seconds == 60
    assert spec.behavior.scale_up is None  # defaults are the controller's to fill


def test_an_absent_min_replicas_defaults_to_one() -> None:
    text = MANIFEST.replace("  minReplicas: 2\n", "")
    assert parse_document(text, HorizontalPodAutoscalerManifest, "hpa.yaml", SHAPE).spec.min_replicas == 1


@pytest.mark.parametrize(
    ("change", "field", "needle"),
    [
        (("minReplicas: 2", "minReplicas: 12"), "spec.maxReplicas", "minReplicas"),
        (("maxReplicas: 10", "maxReplicas: 0"), "spec.maxReplicas", "greater than 0"),
        (("minReplicas: 2", "minReplicas: 0"), "spec.minReplicas", "greater than or equal to 1"),
        (("- type: Pods", "- type: Memory"), "spec.metrics.1.type", "Memory"),
        (("periodSeconds: 30", "periodSeconds: 0"), "spec.behavior.scaleDown.policies.0.periodSeconds", "0"),
        (("periodSeconds: 30", "periodSeconds: 1801"), "spec.behavior.scaleDown.policies.0.periodSeconds", "1800"),
        (("stabilizationWindowSeconds: 60", "stabilizationWindowSeconds: 3601"), "spec.behavior.scaleDown", "3600"),
        (("averageUtilization: 70", "averageUtilization: 0"), "spec.metrics.0.resource.target", "greater than 0"),
        (("type: Utilization, averageUtilization: 70", "type: Value, value: 5"), "spec.metrics.0", "AverageValue"),
        (("type: Utilization", "type: Value"), "spec.metrics.0.resource.target", "must set value"),
    ],
)
def test_invalid_manifests_are_rejected_naming_the_field(change: tuple[str, str], field: str, needle: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_document(MANIFEST.replace(*change), HorizontalPodAutoscalerManifest, "hpa.yaml", SHAPE)
    error = info.value
    assert error.file == "hpa.yaml"
    assert error.field is not None and error.field.startswith(field), error.field
    assert needle in str(error), str(error)


SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: hpa}
spec:
  duration: 10m
  workload:
    replicas: 1
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: 50ms}
  traffic: {type: step, rate: 2/s, stepTo: 40/s, stepAt: 1m}
  autoscalers:
"""


def test_a_scenario_runs_the_hpa_of_a_manifest_file(tmp_path: Path) -> None:
    (tmp_path / "hpa.yaml").write_text(MANIFEST.replace("minReplicas: 2", "minReplicas: 1"))
    scenario = parse_scenario(SCENARIO + "  - {type: hpa, manifest: hpa.yaml}\n")
    simulation = Simulation(scenario, base_dir=tmp_path)
    simulation.run()
    # 40/s × 50 ms = 2 cores; at 70% of 500m that is ceil(2000 / 350) = 6 pods at least.
    assert simulation.model.desired >= 6
    assert simulation.model.desired <= 10


def test_a_missing_manifest_names_the_file(tmp_path: Path) -> None:
    scenario = parse_scenario(SCENARIO + "  - {type: hpa, manifest: nowhere.yaml}\n")
    with pytest.raises(ScenarioError) as info:
        Simulation(scenario, base_dir=tmp_path)
    assert "nowhere.yaml" in str(info.value)


def test_manifest_and_inline_spec_are_exclusive() -> None:
    with pytest.raises(ScenarioError):
        parse_scenario(SCENARIO + "  - {type: hpa}\n")


PLUGIN = """\
class Doubler:
    def __init__(self, every="30s", limit=8):
        self.every = every
        self.limit = limit

    def start(self, context):
        self.context = context
        context.clock.call_later(30_000_000_000, self.tick)

    def tick(self):
        self.context.scale_to(min(self.limit, 2 * self.context.desired))
        self.context.clock.call_later(30_000_000_000, self.tick)
"""


def test_a_plugin_by_path_drives_the_workload(tmp_path: Path) -> None:
    (tmp_path / "doubler.py").write_text(PLUGIN)
    scenario = parse_scenario(SCENARIO + "  - {type: plugin, plugin: doubler.py:Doubler, options: {limit: 4}}\n")
    simulation = Simulation(scenario, base_dir=tmp_path)
    simulation.run()
    assert simulation.model.desired == 4  # 1 -> 2 -> 4, then held at the limit


@pytest.mark.parametrize(
    ("plugin", "needle"),
    [("missing.py:Doubler", "no such plugin file"), ("doubler.py:Tripler", "Tripler"), ("doubler.py:Bad", "start")],
)
def test_bad_plugins_are_user_errors(tmp_path: Path, plugin: str, needle: str) -> None:
    (tmp_path / "doubler.py").write_text(PLUGIN + "\n\nclass Bad:\n    pass\n")
    scenario = parse_scenario(SCENARIO + f"  - {{type: plugin, plugin: '{plugin}'}}\n")
    with pytest.raises(ScenarioError) as info:
        Simulation(scenario, base_dir=tmp_path)
    assert needle in str(info.value)
    assert info.value.field == "spec.autoscalers.0.plugin"


def test_load_document_reads_a_file(tmp_path: Path) -> None:
    (tmp_path / "hpa.yaml").write_text(MANIFEST)
    assert load_document(tmp_path / "hpa.yaml", HorizontalPodAutoscalerManifest, SHAPE).spec.max_replicas == 10


def test_a_plugin_by_module_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "myscalers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "doubling.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    plugin = "  - {type: plugin, plugin: 'myscalers.doubling:Doubler', options: {limit: 2}}\n"
    scenario = parse_scenario(SCENARIO + plugin)
    simulation = Simulation(scenario, base_dir=tmp_path)
    simulation.run()
    assert simulation.model.desired == 2


def test_an_unimportable_plugin_module_is_a_user_error() -> None:
    scenario = parse_scenario(SCENARIO + "  - {type: plugin, plugin: 'no_such_package.scalers:Doubler'}\n")
    with pytest.raises(ScenarioError) as info:
        Simulation(scenario)
    assert "no_such_package" in str(info.value)
