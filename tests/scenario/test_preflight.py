"""Pre-flight pitfalls, each on a scenario made to have it and one made not to: the warning names the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from skenario.scenario.build.plugins import unloaded
from skenario.scenario.build.prepare import prepare
from skenario.scenario.loader import parse_scenario
from skenario.scenario.preflight import pitfalls
from tests.scenario.build.test_placement import ZONE_SPREAD

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _warnings(text: str, base_dir: Path | None = None, source: str = "s.yaml") -> list[str]:
    """The pitfalls of the scenario as `skenario check` reads it (plugins read, not run)."""
    with unloaded():
        return pitfalls(prepare(parse_scenario(text, source), base_dir=base_dir or Path(".")))


def test_a_template_without_the_topology_key_is_named() -> None:
    (warning,) = _warnings(ZONE_SPREAD)
    assert warning.startswith("spec.cluster.nodeGroups.0 (burst)") and "'topology.kubernetes.io/zone'" in warning
    labelled = ZONE_SPREAD.replace(
        "node: {cpu: 2, memory: 8Gi}", "node: {cpu: 2, memory: 8Gi, labels: {topology.kubernetes.io/zone: a}}"
    )
    assert _warnings(labelled) == []


def test_a_topology_key_on_no_node_leaves_every_pod_pending() -> None:
    text = ZONE_SPREAD.replace("topology.kubernetes.io/zone}]", "rack}]")
    warnings = _warnings(text)
    assert any(w.startswith("spec.workload.pod.topologySpreadConstraints") and "'rack'" in w for w in warnings)


def test_taints_no_pod_tolerates_rule_out_every_node() -> None:
    text = ZONE_SPREAD.replace(
        "labels: {topology.kubernetes.io/zone: a}}",
        "labels: {topology.kubernetes.io/zone: a}, taints: [{key: gpu, effect: NoSchedule}]}",
    )
    text = text.replace(
        "labels: {topology.kubernetes.io/zone: b}}",
        "labels: {topology.kubernetes.io/zone: b}, taints: [{key: gpu, effect: NoSchedule}]}",
    )
    text = text.replace(
        "node: {cpu: 2, memory: 8Gi}", "node: {cpu: 2, memory: 8Gi, taints: [{key: gpu, effect: NoSchedule}]}"
    )
    warnings = _warnings(text)
    assert any(w.startswith("spec.workload.pod: no node or node group template admits the pods") for w in warnings)


HPA = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: hpa}
spec:
  duration: DURATION
  workload: {replicas: 2, resources: {requests: {cpu: 500m}}, request: {cpuTime: 20ms}}
  traffic: {type: poisson, rate: 10}
  autoscalers:
    - type: hpa
      spec: {minReplicas: 1, maxReplicas: MAX}
"""


@pytest.mark.parametrize(
    ("duration", "maximum", "words"),
    [
        # The controller's default downscale stabilisation is 5 minutes: a 5-minute run never scales down.
        ("5m", "10", ["stabilisation window (5m)", "never scale down"]),
        ("6m", "10", []),
        ("1h", "1", ["minReplicas equals maxReplicas"]),
    ],
)
def test_an_hpa_that_cannot_act_in_the_run_is_named(duration: str, maximum: str, words: list[str]) -> None:
    warnings = _warnings(HPA.replace("DURATION", duration).replace("MAX", maximum))
    assert all(any(w in warning for warning in warnings) for w in words)
    assert bool(warnings) == bool(words)
    assert all(warning.startswith("spec.autoscalers.0") for warning in warnings)


KPA = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: kpa}
spec:
  duration: 10m
  workload:
    replicas: 1
    resources: {requests: {cpu: 1000m}}
    request: {cpuTime: 50ms, timeout: 2s}
  traffic: {type: poisson, rate: 10}
  autoscalers:
    - {type: kpa, annotations: ANNOTATIONS}
"""


@pytest.mark.parametrize(
    ("annotations", "words"),
    [
        # 1 core / 50 ms = 20 requests/s per pod; an RPS target of 150 x 70% = 105 is never reached.
        ('{autoscaling.knative.dev/metric: rps, autoscaling.knative.dev/target: "150"}', "beyond what a pod's CPU"),
        # An RPS target of 20 x 70% = 14 is within reach.
        ('{autoscaling.knative.dev/metric: rps, autoscaling.knative.dev/target: "20"}', None),
        # The default concurrency target 100 x 70% = 70 in flight: 70 x 50 ms / 1 core = 3.5 s > 2 s timeout.
        ("{}", "past the timeout"),
        # A target of 10 x 70% = 7 in flight: 0.35 s, inside the timeout.
        ('{autoscaling.knative.dev/target: "10"}', None),
    ],
)
def test_a_kpa_target_beyond_a_pods_cpu_is_named(annotations: str, words: str | None) -> None:
    warnings = _warnings(KPA.replace("ANNOTATIONS", annotations))
    if words is None:
        assert warnings == []
    else:
        (warning,) = warnings
        assert warning.startswith("spec.autoscalers.0") and words in warning


# The one example made to show a pitfall: a node group whose template lacks the spread's zone label.
MEANT = {"cluster-autoscaler-zones.yaml": ["spec.cluster.nodeGroups.2 (unlabelled): it lacks the label"]}


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_the_examples_raise_no_false_alarm(example: str) -> None:
    text = (EXAMPLES / example).read_text()
    warnings = _warnings(text, EXAMPLES, str(EXAMPLES / example))
    meant = MEANT.get(example, [])
    assert len(warnings) == len(meant) and all(w.startswith(m) for w, m in zip(warnings, meant, strict=True))
