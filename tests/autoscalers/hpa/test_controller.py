"""The HPA controller on the simulated cluster, its manifests as the API server reads them, and plugins."""

from __future__ import annotations

import math
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from skenario.autoscalers.base import PodView
from skenario.autoscalers.cluster import ClusterContext
from skenario.autoscalers.hpa.config import HPAControllerConfig
from skenario.autoscalers.hpa.controller import (
    HorizontalPodAutoscaler,
    HPASpec,
    _pod,
    decision_rule,
    hpa_conditions,
)
from skenario.autoscalers.hpa.normalization import TimestampedRecommendation
from skenario.autoscalers.hpa.reconcile import HPAHistory, Reconciliation, reconcile_desired_replicas
from skenario.autoscalers.hpa.types import (
    AverageValueTarget,
    PodsMetricSource,
    ResourceMetricSource,
    UtilizationTarget,
)
from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from skenario.errors import ScenarioError
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, MetricsSource, MetricsSpec, ReplicaSpec, RequestSpec
from skenario.scenario.format.manifests.hpa import HorizontalPodAutoscalerManifest
from skenario.scenario.io import load_document, parse_document
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from skenario.scenario.wiring.plugins import allowing
from skenario.workloads.patterns import constant_arrivals

SHAPE = "a manifest"


def two_pods_at_sixty_percent() -> tuple[Environment, ClusterModel]:
    """2 pods of 500m; 30 requests/s of exactly 20 ms CPU each, evenly spread: each pod takes 15/s and
    uses 15 × 20 ms = 300m, 60% of its request. Samples tick every 5 s and arrive 4 s later."""
    env = Environment(halt_at=16 * SECOND)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(20 * MILLISECOND), timeout=None),
        replica=ReplicaSpec(500),
        initial_replicas=2,
        metrics=MetricsSpec(MetricsSource.TICKS, interval=5 * SECOND, first_after=5 * SECOND, lag=4 * SECOND),
    )
    return env, ClusterModel(env, spec, constant_arrivals(30, 0, 16 * SECOND), RandomStreams(1))


def test_first_sync_scales_by_the_usage_ratio() -> None:
    # With a 30% target the HPA wants ceil(2 × 60 / 30) = 4 pods at its first sync (15 s: the
    # samples of 5 s ticks, 4 s lag, are in).
    env, model = two_pods_at_sixty_percent()
    target = ResourceMetricSource("cpu", UtilizationTarget(30))
    hpa = HorizontalPodAutoscaler(HPASpec(max_replicas=10, metrics=(target,)), HPAControllerConfig())
    hpa.start(ClusterContext(model))
    env.run()
    [decision] = hpa.decisions
    assert decision.at == 15 * SECOND
    assert decision.proposed == math.ceil(2 * 60 / 30)
    assert model.desired == 4


def test_a_decision_records_each_metric_target_and_the_bounds() -> None:
    """What explain shows beside the usage: each metric's target as the spec writes it (Utilization in
    percent, AverageValue in milli-units) and the spec's min and max replicas."""
    env, model = two_pods_at_sixty_percent()
    metrics = (
        ResourceMetricSource("cpu", UtilizationTarget(30)),
        PodsMetricSource("in_flight", AverageValueTarget(500)),
    )
    hpa = HorizontalPodAutoscaler(HPASpec(max_replicas=10, min_replicas=2, metrics=metrics), HPAControllerConfig())
    hpa.start(ClusterContext(model))
    env.run()
    [decision] = hpa.decisions
    targets = {name: (values["target_type"], values["target"]) for name, values in decision.metrics.items()}
    assert sorted(targets.values()) == [("AverageValue", 500), ("Utilization", 30)]
    assert (decision.min_replicas, decision.max_replicas) == (2, 10)


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
        # validateResourceSource: a utilization or a raw average value, and not both.
        (
            ("type: Utilization, averageUtilization: 70", "type: Value, value: 5"),
            "spec.metrics.0.resource",
            "must set either a target raw value or a target utilization",
        ),
        (
            ("averageUtilization: 70", "averageUtilization: 70, averageValue: 300m"),
            "spec.metrics.0.resource",
            "may not set both a target raw value and a target utilization",
        ),
        # validatePodsSource: an average value.
        (("type: AverageValue, averageValue: 500m", "type: Value, value: 1"), "spec.metrics.1.pods", "averageValue"),
        # validateMetricTarget: the type is one of three.
        (("type: Utilization", "type: Percent"), "spec.metrics.0.resource.target.type", "Percent"),
    ],
)
def test_invalid_manifests_are_rejected_naming_the_field(change: tuple[str, str], field: str, needle: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_document(MANIFEST.replace(*change), HorizontalPodAutoscalerManifest, "hpa.yaml", SHAPE)
    error = info.value
    assert error.file == "hpa.yaml"
    assert error.field is not None and error.field.startswith(field), error.field
    assert needle in str(error), str(error)


def _one_metric(metric: str) -> str:
    return MANIFEST.replace(
        "  - type: Pods\n    pods: {metric: {name: requests_per_second},"
        " target: {type: AverageValue, averageValue: 500m}}\n",
        metric,
    )


@pytest.mark.parametrize(
    ("metric", "field", "needle"),
    [
        # validateExternalSource: a value or a per-pod average, not both.
        (
            "  - type: External\n    external: {metric: {name: in_flight},"
            " target: {type: Value, value: 2, averageValue: 1}}\n",
            "spec.metrics.1.external",
            "may not set both a target value for metric and a per-pod target",
        ),
        # validateObjectSource: a value or an average value.
        (
            "  - type: Object\n    object: {describedObject: {kind: Service, name: web}, metric: {name: in_flight},"
            " target: {type: Value, averageUtilization: 5}}\n",
            "spec.metrics.1.object",
            "must set either a target value or averageValue",
        ),
        # Valid to the API server, but computeStatusForObjectMetric uses only the field the type names.
        (
            "  - type: Object\n    object: {describedObject: {kind: Service, name: web}, metric: {name: in_flight},"
            " target: {type: Value, averageValue: 5}}\n",
            "spec.metrics.1.object",
            "neither a value target nor an average value target was set",
        ),
    ],
)
def test_object_and_external_targets_are_checked_as_upstream(metric: str, field: str, needle: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_document(_one_metric(metric), HorizontalPodAutoscalerManifest, "hpa.yaml", SHAPE)
    assert info.value.field is not None and info.value.field.startswith(field), info.value.field
    assert needle in str(info.value)


def test_the_fields_set_choose_the_target_not_its_type() -> None:
    """The API server checks only that the type is one of three; the controller reads the fields set."""
    text = MANIFEST.replace("type: Utilization, averageUtilization: 70", "type: Value, averageUtilization: 70")
    spec = parse_document(text, HorizontalPodAutoscalerManifest, "hpa.yaml", SHAPE).spec.build()
    assert spec.metrics[0] == ResourceMetricSource("cpu", UtilizationTarget(70))
    text = MANIFEST.replace("type: Utilization, averageUtilization: 70", "type: Utilization, averageValue: 300m")
    spec = parse_document(text, HorizontalPodAutoscalerManifest, "hpa.yaml", SHAPE).spec.build()
    assert spec.metrics[0] == ResourceMetricSource("cpu", AverageValueTarget(300))
    external = "  - type: External\n    external: {metric: {name: in_flight}, target: {type: Value, averageValue: 2}}\n"
    spec = parse_document(_one_metric(external), HorizontalPodAutoscalerManifest, "hpa.yaml", SHAPE).spec.build()
    assert spec.metrics[1].target == AverageValueTarget(2000)


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
    with pytest.raises(ScenarioError, match=r"'myscalers\.doubling' is not allowed"):
        Simulation(scenario, base_dir=tmp_path)  # a module is loaded only once the user allows it
    assert "myscalers.doubling" not in sys.modules
    with allowing(["myscalers.doubling"]):
        simulation = Simulation(scenario, base_dir=tmp_path)
    simulation.run()
    assert simulation.model.desired == 2


def test_an_unimportable_plugin_module_is_a_user_error() -> None:
    scenario = parse_scenario(SCENARIO + "  - {type: plugin, plugin: 'no_such_package.scalers:Doubler'}\n")
    with pytest.raises(ScenarioError) as info, allowing(["no_such_package.scalers"]):
        Simulation(scenario)
    assert "no module named 'no_such_package.scalers'" in str(info.value)


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  template:
    spec:
      containers:
      - {name: istio-proxy, resources: {requests: {cpu: 100m}}}
      - {name: nginx, resources: {requests: {cpu: 500m}}}
"""

CONTAINER_HPA = """\
  - type: hpa
    spec:
      maxReplicas: 10
      metrics:
      - type: ContainerResource
        containerResource: {name: cpu, container: nginx, target: {type: Utilization, averageUtilization: 70}}
"""


def test_a_container_resource_metric_reads_the_container_the_workload_names(tmp_path: Path) -> None:
    """The simulated pod's container carries the Deployment container's name, so the HPA finds it."""
    (tmp_path / "deployment.yaml").write_text(DEPLOYMENT)
    text = SCENARIO.replace("    replicas: 1\n    resources: {requests: {cpu: 500m}}\n", "") + CONTAINER_HPA
    text = text.replace("  workload:\n", "  workload:\n    deployment: deployment.yaml\n    container: nginx\n")
    simulation = Simulation(parse_scenario(text), base_dir=tmp_path)
    assert simulation.model.cpu_request == 500
    simulation.run()
    hpa = simulation.autoscalers["hpa"]
    assert isinstance(hpa, HorizontalPodAutoscaler)
    # metrics-server serves a pod after one or two scrapes (15 s apart): from 30 s every sync has its metric.
    assert all(decision.error is None for decision in hpa.decisions if decision.at >= 30 * SECOND)
    assert simulation.model.desired >= 6  # ceil(2000m / 350m), as with a Resource metric


@pytest.mark.parametrize(
    ("workload", "field"),
    [
        ("    container: envoy\n", "spec.autoscalers.0.spec.metrics.0.containerResource.container"),
        ("", "spec.autoscalers.0.spec.metrics.0.containerResource.container"),  # the default container is 'app'
    ],
)
def test_a_container_the_pods_do_not_have_is_refused(workload: str, field: str) -> None:
    text = (SCENARIO + CONTAINER_HPA).replace("    replicas: 1\n", "    replicas: 1\n" + workload)
    with pytest.raises(ScenarioError) as info:
        Simulation(parse_scenario(text))
    assert info.value.field == field
    assert info.value.value == "nginx"


@pytest.mark.parametrize(
    ("metric", "field", "value"),
    [
        (
            "{type: Resource, resource: {name: memory, target: {type: Utilization, averageUtilization: 70}}}",
            "spec.autoscalers.0.spec.metrics.0.resource.name",
            "memory",
        ),
        (
            "{type: Pods, pods: {metric: {name: http_requests}, target: {type: AverageValue, averageValue: 10}}}",
            "spec.autoscalers.0.spec.metrics.0.pods.metric.name",
            "http_requests",
        ),
        (
            "{type: External, external: {metric: {name: queue_depth}, target: {type: Value, value: 10}}}",
            "spec.autoscalers.0.spec.metrics.0.external.metric.name",
            "queue_depth",
        ),
    ],
)
def test_a_metric_skenario_does_not_produce_is_refused(metric: str, field: str, value: str) -> None:
    """Upstream such an HPA would fail every sync; here the scenario says so before it runs."""
    text = SCENARIO + f"  - {{type: hpa, spec: {{maxReplicas: 5, metrics: [{metric}]}}}}\n"
    with pytest.raises(ScenarioError) as info:
        Simulation(parse_scenario(text))
    assert info.value.field == field
    assert info.value.value == value


def test_a_manifest_file_error_names_the_file_and_the_field_in_it(tmp_path: Path) -> None:
    (tmp_path / "hpa.yaml").write_text(MANIFEST.replace("name: requests_per_second", "name: rps"))
    with pytest.raises(ScenarioError) as info:
        Simulation(parse_scenario(SCENARIO + "  - {type: hpa, manifest: hpa.yaml}\n"), base_dir=tmp_path)
    assert info.value.file == str(tmp_path / "hpa.yaml")
    assert info.value.field == "spec.metrics.1.pods.metric.name"
    expected_line = (
        MANIFEST.splitlines().index(
            "    pods: {metric: {name: requests_per_second}, target: {type: AverageValue, averageValue: 500m}}"
        )
        + 1
    )
    assert info.value.line == expected_line
    assert "in_flight" in info.value.message  # it lists what skenario does produce


def test_ignore_unsimulated_metrics_scales_on_the_rest(tmp_path: Path) -> None:
    """A real cpu + memory HPA: with the memory metric dropped, CPU scales it as a cpu-only HPA would."""
    memory = "  - type: Resource\n    resource: {name: memory, target: {type: Utilization, averageUtilization: 70}}\n"
    both = _one_metric(memory).replace("minReplicas: 2", "minReplicas: 1")
    (tmp_path / "hpa.yaml").write_text(both)
    with pytest.raises(ScenarioError, match="ignoreUnsimulatedMetrics"):
        Simulation(parse_scenario(SCENARIO + "  - {type: hpa, manifest: hpa.yaml}\n"), base_dir=tmp_path)
    entry = "  - {type: hpa, manifest: hpa.yaml, ignoreUnsimulatedMetrics: true}\n"
    simulation = Simulation(parse_scenario(SCENARIO + entry), base_dir=tmp_path)
    hpa = simulation.autoscalers["hpa"]
    assert isinstance(hpa, HorizontalPodAutoscaler)
    assert hpa.spec.metrics == (ResourceMetricSource("cpu", UtilizationTarget(70)),)
    simulation.run()
    assert 6 <= simulation.model.desired <= 10  # as test_a_scenario_runs_the_hpa_of_a_manifest_file
    only_memory = "  - {type: hpa, ignoreUnsimulatedMetrics: true, spec: {maxReplicas: 5, metrics: [" + (
        "{type: Resource, resource: {name: memory, target: {type: Utilization, averageUtilization: 70}}}]}}\n"
    )
    with pytest.raises(ScenarioError, match="none of these metrics"):
        Simulation(parse_scenario(SCENARIO + only_memory))


def test_a_plugin_reads_the_metrics_it_asks_for_by_name() -> None:
    env, model = two_pods_at_sixty_percent()
    context = ClusterContext(model)
    assert context.metric("cpu_millicores") == {}  # nothing has reached the sink yet
    env.run()
    pods = {view.id for view in context.pods()}
    cpu = context.metric("cpu_millicores")
    assert set(cpu) == pods
    assert all(math.isclose(value, 300, rel_tol=1e-6) for value in cpu.values())
    assert all(math.isclose(value, 0.6, rel_tol=1e-6) for value in context.metric("cpu_utilization").values())
    assert all(math.isclose(value, 15, rel_tol=1e-6) for value in context.metric("requests_per_second").values())
    with pytest.raises(ValueError, match="cpu_millicores"):
        context.metric("memory")


MEMORY_SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: hpa-memory}
spec:
  duration: 2m
  workload:
    replicas: 2
    resources: {requests: {cpu: 500m, memory: 256Mi}}
    memory: {baseline: 200Mi}
    request: {cpuTime: 10ms}
  traffic: {type: poisson, rate: 1/s}
  metrics: {source: ticks, interval: 5s, firstAfter: 5s, lag: 4s}
  autoscalers:
    - type: hpa
      spec:
        maxReplicas: 12
        metrics: [{type: Resource, resource: {name: memory, target: {type: Utilization, averageUtilization: 50}}}]
"""


def test_a_memory_metric_reads_the_working_set_over_the_memory_request() -> None:
    """Each pod's working set is its 200Mi baseline, 78.125% of its 256Mi request, whatever the load.

    The first sync with a metric proposes ceil(2 × 78.125 / 50) = 4; every new pod brings its own
    baseline, so the ratio never falls and the HPA climbs to maxReplicas: the classic memory-HPA
    pitfall on a workload whose memory does not follow its load.
    """
    simulation = Simulation(parse_scenario(MEMORY_SCENARIO))
    simulation.run()
    hpa = simulation.autoscalers["hpa"]
    assert isinstance(hpa, HorizontalPodAutoscaler)
    first = next(decision for decision in hpa.decisions if decision.error is None)
    assert first.proposed == math.ceil(2 * (200 / 256 * 100) / 50)
    assert simulation.model.desired == 12


def test_a_cpu_metric_on_best_effort_pods_fails_for_the_missing_request() -> None:
    """`resources: {}` makes BestEffort pods with no CPU request: upstream's calculateRequests fails
    with "missing request for cpu", ScalingActive turns False and the replicas stay as they are."""
    text = MEMORY_SCENARIO.replace("resources: {requests: {cpu: 500m, memory: 256Mi}}", "resources: {}")
    text = text.replace("name: memory, target", "name: cpu, target")
    simulation = Simulation(parse_scenario(text))
    simulation.run()
    hpa = simulation.autoscalers["hpa"]
    assert isinstance(hpa, HorizontalPodAutoscaler)
    assert hpa.decisions and all(d.proposed is None for d in hpa.decisions)
    # Once the pods have samples (their first tick at 5 s, 4 s of lag), each sync fails for the request.
    with_samples = [d for d in hpa.decisions if d.at >= 9 * SECOND]
    assert with_samples and all("missing request for cpu" in (d.error or "") for d in with_samples)
    assert hpa.decisions[-1].conditions["ScalingActive"] == "False FailedGetMetric"
    assert simulation.model.desired == 2


def test_a_memory_metric_needs_the_workload_to_model_memory() -> None:
    text = MEMORY_SCENARIO.replace("    memory: {baseline: 200Mi}\n", "")
    with pytest.raises(ScenarioError, match=r"spec\.workload\.memory") as info:
        Simulation(parse_scenario(text))
    assert info.value.field == "spec.autoscalers.0.spec.metrics.0.resource.name"
    assert info.value.value == "memory"


# --- the first scale-up after a load step, over the loops' phases -----------------------------------

STEP_AT = MINUTE
STEP = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: step}
spec:
  duration: 110s
  workload:
    replicas: 1
    resources: {requests: {cpu: 500m}, limits: {cpu: 1000m}}
    request: {cpuTime: 10ms}
  traffic:
    - {type: constant, rate: 10/s}
    - {type: constant, rate: 40/s, start: 60s}
  autoscalers:
    - type: hpa
      spec:
        minReplicas: 1
        maxReplicas: 10
        metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
"""
RESOLUTION, HOUSEKEEPING, SYNC = 15 * SECOND, 10 * SECOND, 15 * SECOND
STEP_SEEDS = range(40)


def _millicore_ns_used(t: int) -> int:
    """The pod's CPU used by `t`, as a fluid: 100m (10/s of 10 ms) until the step, 500m after."""
    return 100 * t if t <= STEP_AT else 100 * STEP_AT + 500 * (t - STEP_AT)


def _first_scrape_over(threshold: int, housekeeping: int, scrape: int) -> int:
    """The first scrape after the step whose rate crosses `threshold` millicores: scrapes fall at
    `scrape` + k × 15 s; each reads the pod's last housekeeping point (at `housekeeping` + j × 10 s)
    and rates it against the point the scrape before read (`resourceUsage`)."""

    def point(at: int) -> int:
        return at - (at - housekeeping) % HOUSEKEEPING

    at = scrape + -(-(STEP_AT - scrape) // RESOLUTION) * RESOLUTION
    while True:
        last, prev = point(at), point(at - RESOLUTION)
        if (_millicore_ns_used(last) - _millicore_ns_used(prev)) >= threshold * (last - prev):
            return at
        at += RESOLUTION


def _delays(housekeeping: int, scrape: int, sync: int) -> set[int]:
    """The hand-computed delay from the step to the first scale-up: the first scrape whose window holds
    enough of the new load, then the next sync (at `sync` + k × 15 s). The HPA scales up at 56% of
    the request (tolerance 0.1 on 50%, in whole percent): 280m. Requests of 10 ms, not a fluid, move
    a 10 s window's rate by under 2m, so a scrape that close to 280m may go either way."""
    out = set()
    for threshold in (278, 282):
        seen = _first_scrape_over(threshold, housekeeping, scrape)
        out.add(sync + -(-(seen - sync) // SYNC) * SYNC - STEP_AT)
    return out


@cache
def _step_runs() -> list[tuple[int, set[int]]]:
    """Each seed's first scale-up after the step, and what the hand computation says from its phases:
    metrics-server's scrapes, the HPA's syncs and the pod's housekeeping, each from its stream."""
    runs = []
    for seed in STEP_SEEDS:
        simulation = Simulation(parse_scenario(STEP), seed=seed)
        simulation.run()
        hpa = simulation.autoscalers["hpa"]
        assert isinstance(hpa, HorizontalPodAutoscaler)
        first = next(d for d in hpa.decisions if d.desired > d.current)
        streams = RandomStreams(seed)
        housekeeping = int(streams.generator("metrics.housekeeping").random() * HOUSEKEEPING)
        scrape = streams.phase("metrics-server.phase", RESOLUTION)
        sync = streams.phase("autoscaler.hpa.sync.phase", SYNC)
        runs.append((first.at - STEP_AT, _delays(housekeeping, scrape, sync)))
    return runs


def test_the_first_scale_up_after_a_step_waits_for_a_scrape_and_then_the_next_sync() -> None:
    for delay, expected in _step_runs():
        assert delay in expected


def test_over_random_phases_the_first_scale_up_spreads_as_uniform_phases_predict() -> None:
    """Over phases uniform in their periods (housekeeping in [0, 10 s), the scrape in (0, 15 s]), the
    wait for the first scrape that shows the step, W, has the distribution of `_first_scrape_over` on
    a grid of phases; the sync after it adds a wait uniform on (0, 15 s], independent of W. The
    median of the delays over the seeds is within 3 standard errors (1 / (2 f √n), f the density at
    the median) of that distribution's, every delay is inside its range, and no two seeds agree.
    Aligned loops gave the same delay, +30 s, for every seed."""
    grid = 60
    waits = np.array(
        [
            _first_scrape_over(280, (i * 2 + 1) * HOUSEKEEPING // (2 * grid), (j * 2 + 1) * RESOLUTION // (2 * grid))
            - STEP_AT
            for i in range(grid)
            for j in range(grid)
        ]
    )

    def cdf(x: float) -> float:
        return float(np.clip((x - waits) / SYNC, 0, 1).mean())

    low, high = float(waits.min()), float(waits.max() + SYNC)
    a, b = low, high
    for _ in range(60):
        a, b = ((a + b) / 2, b) if cdf((a + b) / 2) < 0.5 else (a, (a + b) / 2)
    median = (a + b) / 2
    density = (cdf(median + SECOND) - cdf(median - SECOND)) / (2 * SECOND)
    delays = sorted(delay for delay, _ in _step_runs())
    n = len(delays)
    assert abs(float(np.median(delays)) - median) <= 3 / (2 * density * math.sqrt(n))
    assert low - 2 * SECOND <= delays[0] and delays[-1] <= high + 2 * SECOND  # the grid's cells, either side
    assert len(set(delays)) == n
    assert delays[-1] - delays[0] >= (high - low) / 2


# --- what explain shows: the conditions and the rule that set the result ----------------------------


def _reconciled(
    current: int, proposed: int | None, *, history: HPAHistory | None = None, max_replicas: int = 10
) -> Reconciliation:
    return reconcile_desired_replicas(
        history or HPAHistory(),
        current_replicas=current,
        metric_desired_replicas=proposed,
        min_replicas=1,
        max_replicas=max_replicas,
        behavior=None,
        now=10 * MINUTE,
    )


def test_a_recent_higher_recommendation_holds_a_scale_down() -> None:
    # The legacy downscale window (5 min) still holds a recommendation of 5 from 1 min ago: metrics ask
    # for 2, the HPA keeps 5 (ScaleDownStabilized), as `kubectl describe hpa` would say.
    history = HPAHistory(recommendations=(TimestampedRecommendation(5, 9 * MINUTE),))
    reconciled = _reconciled(5, 2, history=history)
    assert reconciled.desired_replicas == 5
    conditions = hpa_conditions(5, 2, None, reconciled)
    assert conditions["AbleToScale"] == "True ScaleDownStabilized"
    assert conditions["ScalingActive"] == "True ValidMetricFound"
    rule = decision_rule(5, 2, None, reconciled, {"cpu": 0.4})
    assert rule.startswith("ScaleDownStabilized") and "recommendation 5" in rule and "metrics' 2" in rule


def test_max_replicas_limits_a_scale_up() -> None:
    # Metrics want 20 from 8; the legacy scale-up limit is max(2 x 8, 4) = 16, maxReplicas 10 is lower.
    reconciled = _reconciled(8, 20)
    assert reconciled.desired_replicas == 10
    assert hpa_conditions(8, 20, None, reconciled)["ScalingLimited"] == "True TooManyReplicas"
    assert decision_rule(8, 20, None, reconciled, {"cpu": 2.5}) == (
        "TooManyReplicas: the recommendation 20 was limited to 10"
    )


def test_a_ratio_inside_the_tolerance_changes_nothing() -> None:
    # Usage over target 1.05 is inside the default 0.9..1.1 band: the proposal is the current 4.
    reconciled = _reconciled(4, 4)
    rule = decision_rule(4, 4, None, reconciled, {"cpu": 1.05})
    assert rule.startswith("within tolerance") and "1.050" in rule
    # 0.9 is on the band's edge (inclusive), 0.8 outside it: with 0.8 a proposal of 4 is not the tolerance's doing.
    assert decision_rule(4, 4, None, _reconciled(4, 4), {"cpu": 0.9}).startswith("within tolerance")
    assert not decision_rule(4, 4, None, _reconciled(4, 4), {"cpu": 0.8}).startswith("within tolerance")


def test_a_failed_metric_turns_scaling_inactive() -> None:
    reconciled = _reconciled(3, None)
    assert hpa_conditions(3, None, "unable to get metric cpu", reconciled)["ScalingActive"] == "False FailedGetMetric"
    assert decision_rule(3, None, "unable to get metric cpu", reconciled, {}) == (
        "no usable metric: unable to get metric cpu"
    )


def test_a_pod_listed_again_from_the_same_view_is_the_same_and_a_terminating_one_is_listed_at_each_sync() -> None:
    """The HPA lists a pod once per view (`HorizontalPodAutoscaler._list`): what it lists equals what the lister
    makes afresh, and a pod being deleted carries each sync's instant as its deletion time."""
    hpa = HorizontalPodAutoscaler(HPASpec(max_replicas=10, metrics=()), HPAControllerConfig())
    running = PodView(1, "web-1", "Running", True, 0, SECOND, 500, None)
    going = PodView(2, "web-2", "Terminating", False, 0, SECOND, 500, None)
    first = hpa._list([running, going], 10 * SECOND)
    assert first == [_pod(running, 10 * SECOND), _pod(going, 10 * SECOND)]
    again = hpa._list([running, going], 25 * SECOND)
    assert again[0] is first[0]
    assert again[1].deletion_time == 25 * SECOND
    resized = PodView(1, "web-1", "Running", True, 0, SECOND, 750, None)
    [pod] = hpa._list([resized], 40 * SECOND)
    assert pod == _pod(resized, 40 * SECOND) and pod.containers[0].requests == {"cpu": 750}
