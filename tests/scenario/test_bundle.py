"""Multi-document scenario files: a Scenario and the user's Kubernetes manifests, read as one."""

from __future__ import annotations

from pathlib import Path

import pytest

from skenario.core.random import RandomStreams
from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.scenario.loader import load_scenario, parse_scenario
from skenario.scenario.simulation import Simulation

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: web}
spec:
  duration: 2m
  workload: {request: {cpuTime: 100ms}}
  traffic: {type: constant, rate: 20/s}
"""
DEPLOYMENT = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web:1
        resources: {requests: {cpu: 250m}, limits: {cpu: 500m}}
"""
HPA = """\
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: frontend}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 7
"""


def error_for(text: str) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        Simulation(parse_scenario(text, "f.yaml"))
    return info.value


def line_of(text: str, marker: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), start=1) if marker in line)


def hpa_decision_times(simulation: Simulation, name: str) -> list[int]:
    return [e[0] for e in simulation.timeline.entries() if e[1] == name and e[2] == "Decision"]


def first_sync(simulation: Simulation, name: str, period: int) -> int:
    """When the HPA named `name` first syncs: at the phase its own stream draws."""
    return RandomStreams(simulation.seed).phase(f"autoscaler.{name}.sync.phase", period)


def test_a_scenario_with_a_deployment_and_an_hpa_loads_as_one() -> None:
    scenario = parse_scenario(SCENARIO + DEPLOYMENT + HPA)
    [autoscaler] = scenario.spec.autoscalers
    assert autoscaler.type == "hpa"
    simulation = Simulation(scenario)
    model = simulation.model
    assert model.desired == 3
    assert {(r.cpu_request, r.cpu_limit) for r in model.replicas.values()} == {(250, 500)}
    assert list(simulation.autoscalers) == ["frontend"]
    hpa = simulation.autoscalers["frontend"]
    assert (hpa.spec.min_replicas, hpa.spec.max_replicas) == (2, 7)  # type: ignore[attr-defined]
    simulation.run()
    # 20/s x 100ms is 2 cores of work on 3 x 500m: the HPA scales up, to its maximum at most.
    assert hpa_decision_times(simulation, "frontend")[0] == first_sync(simulation, "frontend", 15 * SECOND)
    assert 3 < model.desired <= 7


def test_the_scenario_need_not_come_first() -> None:
    scenario = parse_scenario(HPA.removeprefix("---\n") + DEPLOYMENT + "---\n" + SCENARIO)
    assert scenario.metadata.name == "web"
    assert len(scenario.spec.autoscalers) == 1


def test_events_refer_to_a_folded_autoscaler_by_its_manifests_name() -> None:
    events = "  events:\n    - {id: tune, at: 31s, patch: {target: autoscaler/frontend, patch: {syncPeriod: 40s}}}\n"
    simulation = Simulation(parse_scenario(SCENARIO + events + DEPLOYMENT + HPA))
    simulation.run()
    first = first_sync(simulation, "frontend", 15 * SECOND)
    # Every 15 s from its phase; restarted by the patch at 31 s, every 40 s from then.
    assert hpa_decision_times(simulation, "frontend") == [
        *range(first, 31 * SECOND, 15 * SECOND),
        71 * SECOND,
        111 * SECOND,
    ]
    error = error_for(SCENARIO + events.replace("autoscaler/frontend", "autoscaler/hpa") + DEPLOYMENT + HPA)
    assert "there are: frontend" in error.message


def test_a_reference_to_a_manifest_uses_it_once_with_the_entrys_settings(tmp_path: Path) -> None:
    reference = "  autoscalers:\n    - {type: hpa, manifest: HorizontalPodAutoscaler/frontend, syncPeriod: 45s}\n"
    path = tmp_path / "web.yaml"
    path.write_text(SCENARIO + reference + DEPLOYMENT + HPA)
    scenario = load_scenario(path)
    [autoscaler] = scenario.spec.autoscalers  # not a second one for the same document
    assert autoscaler.sync_period == 45 * SECOND  # type: ignore[union-attr]
    simulation = Simulation(scenario, base_dir=tmp_path)
    assert list(simulation.autoscalers) == ["frontend"]
    simulation.run()
    first = first_sync(simulation, "frontend", 45 * SECOND)
    assert hpa_decision_times(simulation, "frontend") == list(range(first, 120 * SECOND, 45 * SECOND))


def test_a_named_deployment_reference() -> None:
    reference = SCENARIO.replace("workload: {", "workload: {deployment: Deployment/web, ")
    other = DEPLOYMENT.replace("name: web}", "name: other}").replace("replicas: 3", "replicas: 5")
    # Referenced by name, the Deployment is the workload's; another Deployment is then one too many.
    assert Simulation(parse_scenario(reference + DEPLOYMENT)).model.desired == 3
    error = error_for(reference + DEPLOYMENT + other)
    assert error.field == "spec.workload.deployment"
    # Unreferenced, two Deployments leave the workload ambiguous.
    error = error_for(SCENARIO + DEPLOYMENT + other)
    assert error.field == "spec.workload.deployment"


def test_an_unknown_kind_names_the_document_and_its_line() -> None:
    configmap = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"
    text = SCENARIO + DEPLOYMENT + configmap
    error = error_for(text)
    assert error.file == "f.yaml (document 3)"
    assert error.line == line_of(text, "kind: ConfigMap") - 1  # the document starts at its apiVersion
    assert "'ConfigMap'" in error.message
    assert "HorizontalPodAutoscaler" in error.message  # and says which kinds are known


def test_two_scenario_documents_are_an_error() -> None:
    error = error_for(SCENARIO + DEPLOYMENT + "---\n" + SCENARIO)
    assert error.file == "f.yaml (document 3)"
    assert "one Scenario" in error.message


def test_a_file_of_manifests_only_needs_a_scenario() -> None:
    error = error_for(DEPLOYMENT + HPA)
    assert error.file == "f.yaml"
    assert "kind: Scenario" in error.message


def test_a_manifest_needs_a_name_and_names_are_unique() -> None:
    error = error_for(SCENARIO + HPA.replace("metadata: {name: frontend}", "metadata: {}"))
    assert error.field == "metadata.name"
    assert error.file == "f.yaml (document 2)"
    error = error_for(SCENARIO + HPA + HPA)
    assert "HorizontalPodAutoscaler/frontend" in error.message
    assert error.file == "f.yaml (document 3)"


@pytest.mark.parametrize(
    ("change", "field"),
    [(("maxReplicas: 7", "maxReplicas: -7"), "spec.maxReplicas"), (("minReplicas: 2", "minReplica: 2"), "spec")],
)
def test_an_invalid_field_in_the_hpa_document_is_an_error(change: tuple[str, str], field: str) -> None:
    error = error_for(SCENARIO + DEPLOYMENT + HPA.replace(*change))
    assert error.field is not None and error.field.startswith(field)
    assert change[1].split(":")[0] in str(error)


def test_an_invalid_field_in_the_hpa_document_names_the_file_and_the_document() -> None:
    text = SCENARIO + DEPLOYMENT + HPA.replace("maxReplicas: 7", "maxReplicas: -7")
    error = error_for(text)
    assert error.field == "spec.maxReplicas"
    # The user wrote no spec.autoscalers.0.manifest: the error says where the HPA really is.
    assert "f.yaml" in str(error) and "document 3" in str(error), str(error)


PDB = """\
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
  unhealthyPodEvictionPolicy: AlwaysAllow
"""


def test_a_pod_disruption_budget_document_becomes_the_workloads_budget() -> None:
    spec = parse_scenario(SCENARIO + DEPLOYMENT + PDB).spec
    assert spec.disruption_budget is not None
    budget = spec.disruption_budget.build()
    assert (budget.min_available, budget.max_unavailable, budget.always_allow_unhealthy) == (None, 1, True)


@pytest.mark.parametrize(
    "text",
    [
        SCENARIO + PDB + PDB.replace("name: web", "name: other"),  # two budgets
        SCENARIO.replace("  duration: 2m\n", "  duration: 2m\n  disruptionBudget: {minAvailable: 1}\n") + PDB,
    ],
)
def test_the_workload_takes_one_disruption_budget(text: str) -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "s.yaml")
    assert info.value.field == "spec.disruptionBudget"


def test_a_bad_pod_disruption_budget_names_its_document() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(SCENARIO + PDB.replace("policy/v1", "policy/v1beta1"), "s.yaml")
    assert "PodDisruptionBudget/web" in (info.value.file or "")
    assert info.value.field == "apiVersion"
