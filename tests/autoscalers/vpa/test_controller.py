"""The VPA on the simulated cluster, by update mode, and its manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from skenario.autoscalers.cluster import ClusterContext
from skenario.autoscalers.vpa.controller import VerticalPodAutoscaler, VPASpec
from skenario.autoscalers.vpa.updater import UpdateMode
from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import HOUR, MILLISECOND, MINUTE, SECOND
from skenario.errors import ScenarioError
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, ReplicaSpec, RequestSpec
from skenario.model.disruption import DisruptionBudget
from skenario.scenario.format.manifests.vpa import VerticalPodAutoscalerManifest
from skenario.scenario.io import parse_document
from skenario.scenario.loader import load_scenario, parse_scenario
from skenario.scenario.simulation import Simulation
from skenario.workloads.patterns import constant_arrivals


def undersized(mode: UpdateMode, budget: DisruptionBudget | None = None) -> tuple[ClusterModel, VerticalPodAutoscaler]:
    """4 pods asking for 100m (limit 400m) while each uses 250m: 20/s × 50 ms spread over 4."""
    env = Environment(halt_at=HOUR)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(50 * MILLISECOND), timeout=None),
        replica=ReplicaSpec(100, cpu_limit=400),
        initial_replicas=4,
        disruption_budget=budget,
    )
    model = ClusterModel(env, spec, constant_arrivals(20, 0, HOUR), RandomStreams(4))
    vpa = VerticalPodAutoscaler(VPASpec(update_mode=mode))
    vpa.start(ClusterContext(model))
    env.run()
    return model, vpa


def test_recreate_evicts_the_undersized_pods_and_their_replacements_get_the_target() -> None:
    model, vpa = undersized(UpdateMode.RECREATE)
    rec = vpa.recommendation
    assert rec is not None
    # Usage is 250m per pod: the target (p90 + 15%) is above it and the lower bound near it.
    assert 250 <= rec.target <= 250 * 1.15 * 1.1
    assert rec.lower_bound <= rec.target <= rec.upper_bound
    requests = sorted(r.cpu_request for r in model.replicas_active)
    assert all(request > 100 for request in requests)  # every undersized pod was replaced
    assert model.replica_source.emitted == 8
    assert model.desired == 4
    # The limit keeps its 4:1 ratio to the request (controlledValues: RequestsAndLimits).
    assert all(r.cpu_limit == 4 * r.cpu_request for r in model.replicas_active)


def test_a_disruption_budget_of_all_replicas_stops_every_eviction() -> None:
    # minAvailable 4 of 4: disruptionsAllowed is 0 whenever all are ready, so the eviction API
    # refuses every ready pod and the undersized pods stay.
    model, vpa = undersized(UpdateMode.RECREATE, DisruptionBudget(min_available=4))
    assert vpa.recommendation is not None and vpa.recommendation.target > 100
    assert model.replica_source.emitted == 4
    assert all(r.cpu_request == 100 for r in model.replicas_active)


def test_a_disruption_budget_of_one_unavailable_lets_one_pod_go_at_a_time() -> None:
    # maxUnavailable 1: one eviction per pass while all 4 are ready; the updater's own tolerance
    # (half of 4) would allow 2. Every pod is still replaced in the end, one pass after another.
    model, vpa = undersized(UpdateMode.RECREATE, DisruptionBudget(max_unavailable=1))
    assert [d.evicted for d in vpa.decisions if d.evicted] == [1, 1, 1, 1]
    assert model.replica_source.emitted == 8
    assert all(r.cpu_request > 100 for r in model.replicas_active)


def test_initial_sizes_new_pods_but_never_evicts() -> None:
    model, vpa = undersized(UpdateMode.INITIAL)
    assert vpa.recommendation is not None
    assert model.cpu_request == vpa.recommendation.target
    assert model.replica_source.emitted == 4
    assert sorted(r.cpu_request for r in model.replicas_active) == [100] * 4


def test_off_only_recommends() -> None:
    model, vpa = undersized(UpdateMode.OFF)
    assert vpa.recommendation is not None
    assert model.cpu_request == 100
    assert model.replica_source.emitted == 4


MANIFEST = """\
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: web}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  updatePolicy: {updateMode: Initial}
  resourcePolicy:
    containerPolicies:
    - {containerName: "*", minAllowed: {cpu: 50m, memory: 64Mi}, maxAllowed: {cpu: "2"}}
"""


def test_a_real_manifest_reads_its_cpu_policy() -> None:
    spec = parse_document(MANIFEST, VerticalPodAutoscalerManifest, "vpa.yaml", "a manifest").spec.build()
    assert spec.update_mode is UpdateMode.INITIAL
    assert spec.policy is not None
    assert (spec.policy.min_allowed, spec.policy.max_allowed) == (50, 2000)


@pytest.mark.parametrize(
    ("policies", "container", "minimum", "mode"),
    [
        # GetContainerResourcePolicy: the policy naming the container wins over '*', wherever it is.
        (
            '[{containerName: "*", minAllowed: {cpu: 50m}}, {containerName: web, minAllowed: {cpu: 70m}}]',
            "web",
            70,
            None,
        ),
        (
            '[{containerName: "*", minAllowed: {cpu: 50m}}, {containerName: web, minAllowed: {cpu: 70m}}]',
            "app",
            50,
            None,
        ),
        # A policy for another container only: none applies.
        ("[{containerName: sidecar, minAllowed: {cpu: 70m}}]", "app", None, None),
        # A container's mode Off: the VPA leaves it alone.
        ("[{containerName: web, mode: 'Off'}]", "web", None, UpdateMode.OFF),
    ],
)
def test_the_policy_of_the_workloads_container_applies(
    policies: str, container: str, minimum: int | None, mode: UpdateMode | None
) -> None:
    text = MANIFEST.replace(
        """    containerPolicies:
    - {containerName: "*", minAllowed: {cpu: 50m, memory: 64Mi}, maxAllowed: {cpu: "2"}}
""",
        f"    containerPolicies: {policies}\n",
    )
    spec = parse_document(text, VerticalPodAutoscalerManifest, "vpa.yaml", "a manifest").spec.build(container)
    assert (spec.policy.min_allowed if spec.policy is not None else None) == minimum
    assert spec.update_mode is (mode or UpdateMode.INITIAL)


@pytest.mark.parametrize(
    ("controlled", "resources", "mode"),
    [
        ("", {"cpu", "memory"}, UpdateMode.INITIAL),  # the default: both
        ("controlledResources: [memory]", {"memory"}, UpdateMode.INITIAL),  # CPU left alone
        ("controlledResources: [cpu]", {"cpu"}, UpdateMode.INITIAL),
        ("controlledResources: []", set(), UpdateMode.OFF),  # nothing to control
    ],
)
def test_controlled_resources_say_what_the_vpa_changes(controlled: str, resources: set[str], mode: UpdateMode) -> None:
    policy = f"[{{containerName: web, minAllowed: {{memory: 300Mi}}, {controlled}}}]".replace(", }", "}")
    text = MANIFEST.replace(
        """    containerPolicies:
    - {containerName: "*", minAllowed: {cpu: 50m, memory: 64Mi}, maxAllowed: {cpu: "2"}}
""",
        f"    containerPolicies: {policy}\n",
    )
    spec = parse_document(text, VerticalPodAutoscalerManifest, "vpa.yaml", "a manifest").spec.build("web")
    assert spec.controlled_resources == resources
    assert spec.update_mode is mode
    assert spec.memory_policy is not None and spec.memory_policy.min_allowed == 300 * 2**20


def test_policies_for_other_containers_only_are_refused_in_a_scenario(tmp_path: Path) -> None:
    """Upstream applies none of them; in a simulation that is a misnamed container, so it is refused."""
    text = MANIFEST.replace('containerName: "*"', "containerName: sidecar")
    (tmp_path / "vpa.yaml").write_text(text)
    scenario = parse_scenario(
        """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: vpa}
spec:
  duration: 1m
  workload: {replicas: 1, container: web, request: {cpuTime: 20ms}}
  traffic: {type: poisson, rate: 5/s}
  autoscalers: [{type: vpa, manifest: vpa.yaml}]
"""
    )
    with pytest.raises(ScenarioError) as info:
        Simulation(scenario, base_dir=tmp_path)
    assert info.value.file == str(tmp_path / "vpa.yaml")
    assert info.value.field == "spec.resourcePolicy.containerPolicies.0.containerName"
    assert info.value.value == "sidecar" and "'web'" in info.value.message
    lines = text.splitlines()
    assert info.value.line == next(i for i, line in enumerate(lines, 1) if "sidecar" in line)


def test_the_update_mode_defaults_to_auto() -> None:
    text = MANIFEST.replace("  updatePolicy: {updateMode: Initial}\n", "")
    spec = parse_document(text, VerticalPodAutoscalerManifest, "vpa.yaml", "a manifest").spec.build()
    assert spec.update_mode is UpdateMode.AUTO


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (("updateMode: Initial", "updateMode: Sometimes"), "spec.updatePolicy.updateMode"),
        (('maxAllowed: {cpu: "2"}', "maxAllowed: {cpu: 10m}"), "spec.resourcePolicy.containerPolicies.0"),
        (("kind: VerticalPodAutoscaler", "kind: Vpa"), "kind"),
    ],
)
def test_invalid_manifests_name_the_field(change: tuple[str, str], field: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_document(MANIFEST.replace(*change), VerticalPodAutoscalerManifest, "vpa.yaml", "a manifest")
    assert info.value.file == "vpa.yaml"
    assert info.value.field is not None and info.value.field.startswith(field)


def test_hpa_and_vpa_run_together_in_a_scenario(tmp_path: Path) -> None:
    (tmp_path / "vpa.yaml").write_text(MANIFEST.replace("updateMode: Initial", "updateMode: Recreate"))
    scenario = parse_scenario(
        """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: both}
spec:
  duration: 30m
  workload:
    replicas: 2
    resources: {requests: {cpu: 100m}, limits: {cpu: 1}}
    request: {cpuTime: 20ms}
  traffic: {type: poisson, rate: 50/s}
  autoscalers:
    - type: hpa
      spec: {minReplicas: 2, maxReplicas: 6}
    - {type: vpa, manifest: vpa.yaml}
"""
    )
    simulation = Simulation(scenario, base_dir=tmp_path)
    simulation.run()
    hpa, vpa = simulation.autoscalers.values()
    assert vpa.recommendation is not None  # type: ignore[attr-defined]
    # Each ticks at a phase of its own stream: the HPA every 15 s, the VPA's recommender every minute
    # (recording a decision once it has a sample).
    streams = RandomStreams(simulation.seed)
    sync = streams.phase("autoscaler.hpa.sync.phase", 15 * SECOND)
    recommend = streams.phase("vpa-recommender.phase", MINUTE)
    assert [d.at for d in hpa.decisions] == list(range(sync, 30 * MINUTE, 15 * SECOND))  # type: ignore[attr-defined]
    vpa_ticks = [decision.at for decision in vpa.decisions]  # type: ignore[attr-defined]
    assert len(vpa_ticks) >= 29 and vpa_ticks == list(range(recommend, 30 * MINUTE, MINUTE))[-len(vpa_ticks) :]
    assert simulation.model.cpu_request > 100  # 50/s × 20 ms = 1 core over 2-6 pods: more than 100m each
    assert 2 <= simulation.model.desired <= 6
    assert simulation.recorder.frame()["cpu_request_millicores"].iloc[-1] == simulation.model.cpu_request


def test_the_example_resizes_its_pods() -> None:
    examples = Path(__file__).resolve().parents[3] / "examples"
    simulation = Simulation(load_scenario(examples / "vpa-resize.yaml"), base_dir=examples)
    simulation.run()
    assert simulation.model.replica_source.emitted > 4
    assert all(r.cpu_request > 100 for r in simulation.model.replicas_active)  # none left at 100m
