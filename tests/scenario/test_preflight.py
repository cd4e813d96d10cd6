"""Pre-flight pitfalls, each on a scenario made to have it and one made not to: the warning names the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from skenario.scenario import preflight
from skenario.scenario.loader import parse_scenario
from skenario.scenario.preflight import estimate, pitfalls
from skenario.scenario.wiring.plugins import unloaded
from skenario.scenario.wiring.prepare import prepare
from tests.scenario.wiring.test_placement import ZONE_SPREAD

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


@pytest.mark.parametrize(
    ("concurrency", "words"),
    [
        # containerConcurrency 1: the target is 1 x 70% = 0.7 in flight (ResolveMetricTarget), 0.7 x 50 ms on
        # one core = 35 ms, far inside the 2 s timeout. Taken for the default's 70 it warned falsely.
        ("1", None),
        # containerConcurrency 50: 50 x 70% = 35 in flight, 35 x 50 ms = 1.75 s, inside 2 s.
        ("50", None),
        # containerConcurrency 100: 70 in flight, 3.5 s, past the timeout.
        ("100", "target of 70 requests in flight"),
    ],
)
def test_the_kpa_warning_uses_its_effective_target(concurrency: str, words: str | None) -> None:
    text = KPA.replace("{type: kpa, annotations: ANNOTATIONS}", f"{{type: kpa, containerConcurrency: {concurrency}}}")
    warnings = _warnings(text)
    assert warnings == [] if words is None else (len(warnings) == 1 and words in warnings[0]), warnings


# The one example made to show a pitfall: a node group whose template lacks the spread's zone label.
MEANT = {"cluster-autoscaler-zones.yaml": ["spec.cluster.nodeGroups.2 (unlabelled): it lacks the label"]}


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_the_examples_raise_no_false_alarm(example: str) -> None:
    text = (EXAMPLES / example).read_text()
    warnings = _warnings(text, EXAMPLES, str(EXAMPLES / example))
    meant = MEANT.get(example, [])
    assert len(warnings) == len(meant) and all(w.startswith(m) for w, m in zip(warnings, meant, strict=True))


ESTIMATED = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: web}
spec:
  duration: 10m
  workload: {replicas: 2, resources: {requests: {cpu: 500m}}, request: {cpuTime: 10ms}}
  traffic: {type: constant, rate: 10/s}
  autoscalers: AUTOSCALERS
  events: EVENTS
"""
HPA_20 = "{type: hpa, name: web, spec: {maxReplicas: 20}}"


@pytest.mark.parametrize(
    ("autoscalers", "events", "most"),
    [
        ("[]", "[]", 2),  # the workload's replicas, nothing to change them
        (f"[{HPA_20}]", "[]", 20),  # the HPA's maxReplicas
        ("[{type: vpa, spec: {}}]", "[]", 2),  # a VPA changes no count
        ("[{type: kpa, annotations: {autoscaling.knative.dev/max-scale: '7'}}]", "[]", 7),  # max-scale
        # An event raising the HPA's bound, or setting the replicas, counts; one lowering it does not lower it.
        (f"[{HPA_20}]", "[{id: more, at: 1m, patch: {target: autoscaler/web, patch: {spec: {maxReplicas: 50}}}}]", 50),
        (f"[{HPA_20}]", "[{id: less, at: 1m, patch: {target: autoscaler/web, patch: {spec: {maxReplicas: 8}}}}]", 20),
        ("[]", "[{id: grow, at: 1m, patch: {target: workload, patch: {replicas: 12}}}]", 12),
        (
            "[]",
            "[{id: hpa, at: 1m, create: {target: autoscaler/late, object: {type: hpa, spec: {maxReplicas: 9}}}}]",
            9,
        ),
    ],
)
def test_the_estimate_takes_every_autoscalers_bound(autoscalers: str, events: str, most: int) -> None:
    text = ESTIMATED.replace("AUTOSCALERS", autoscalers).replace("EVENTS", events)
    cost = estimate(prepare(parse_scenario(text, "s.yaml"), base_dir=Path(".")))
    assert (cost.replicas, cost.unbounded) == (most, ())


def test_a_kpa_without_max_scale_has_no_bound_and_is_counted_at_the_peak() -> None:
    """10 requests/s of 10 ms CPU are 0.1 in flight; at the default target of 100 x 70% = 70 a pod the KPA
    settles on ceil(0.1 / 70) = 1 pod, fewer than the 2 the workload starts with."""
    text = ESTIMATED.replace("AUTOSCALERS", "[{type: kpa}]").replace("EVENTS", "[]")
    cost = estimate(prepare(parse_scenario(text, "s.yaml"), base_dir=Path(".")))
    assert cost.unbounded == ("spec.autoscalers.0: a KPA without max-scale",) and cost.replicas == 2
    rps = ESTIMATED.replace("AUTOSCALERS", "[{type: kpa, annotations: {autoscaling.knative.dev/metric: rps}}]")
    # An RPS target of 200 x 70% = 140 a pod: 1000/s need ceil(1000 / 140) = 8 pods.
    cost = estimate(prepare(parse_scenario(rps.replace("EVENTS", "[]").replace("10/s", "1000/s"), "s.yaml")))
    assert cost.replicas == 8 and cost.expected


FLUID = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: flows}
spec:
  mode: MODE
  duration: 24h
  workload: {replicas: 40, request: {cpuTime: 10ms}}
  traffic: {type: poisson, rate: RATE}
"""


def test_a_fluid_runs_cost_is_per_replica_and_step_not_per_request() -> None:
    """Ten times the rate is ten times a discrete run's estimated wall time, and the same fluid run's; a fluid
    run's is the replicas' steps (a day of 1 s steps, 86,400, and of 15 s scrapes, 5,760) at their prices."""

    def wall(mode: str, rate: str) -> float:
        text = FLUID.replace("MODE", mode).replace("RATE", rate)
        return estimate(prepare(parse_scenario(text, "s.yaml"), base_dir=Path("."))).wall_s

    rows = 24 * 360 * 41  # every 10 s, a row and one per replica
    fluid = 40 * (86_400 * preflight.WALL_PER_REPLICA_STEP_S + 5_760 * preflight.WALL_PER_REPLICA_SCRAPE_S)
    assert wall("fluid", "1000/s") == wall("fluid", "10000/s") == pytest.approx(fluid + rows * preflight.WALL_PER_ROW_S)
    assert wall("discrete", "10000/s") - wall("discrete", "1000/s") == pytest.approx(
        9000 * 86_400 * preflight.WALL_PER_REQUEST_S
    )


def test_a_step_whose_window_is_after_the_run_expects_nothing() -> None:
    """Found by the fuzzer: a step of 1e300/s from 2 h in a 30-minute run had (switch - start) < 0, an
    overflowing negative count."""
    text = FLUID.replace("MODE", "discrete").replace("duration: 24h", "duration: 30m")
    text = text.replace(
        "{type: poisson, rate: RATE}", "{type: step, rate: 1.0e+300, stepTo: 900/s, stepAt: 10m, start: 2h}"
    )
    assert estimate(prepare(parse_scenario(text, "s.yaml"), base_dir=Path("."))).requests == 0
