"""A multi-document scenario file: one `kind: Scenario` and the user's Kubernetes manifests, read as one.

```yaml
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: web}
spec:
  workload: {request: {cpuTime: 100ms}}      # replicas and CPU from the Deployment below
  traffic: {type: poisson, rate: 20/s}
  autoscalers:
    - {type: hpa, manifest: HorizontalPodAutoscaler/web, syncPeriod: 30s}   # a reference
---
apiVersion: apps/v1
kind: Deployment
...
---
apiVersion: autoscaling/v2                  # or v2beta2, v2beta1, v1: converted as the API server converts
kind: HorizontalPodAutoscaler
metadata: {name: web}
...
```

A Deployment becomes the workload's `deployment`; each HorizontalPodAutoscaler, VerticalPodAutoscaler,
Knative Service and KEDA ScaledObject or ScaledJob becomes an autoscaler named after its `metadata.name`,
unless an autoscaler entry already refers to it as `<Kind>/<name>` in its `manifest`.
"""

from __future__ import annotations

from typing import Any

import yaml
from pydantic import BaseModel

from skenario.errors import ScenarioError
from skenario.scenario.format.manifests.deployment import DeploymentManifest
from skenario.scenario.format.manifests.hpaversions import read_hpa
from skenario.scenario.format.manifests.keda import ScaledJobManifest, ScaledObjectManifest
from skenario.scenario.format.manifests.kpa import KnativeServiceManifest
from skenario.scenario.format.manifests.pdb import PodDisruptionBudgetManifest
from skenario.scenario.format.manifests.vpa import VerticalPodAutoscalerManifest
from skenario.scenario.io import validate_node

_AUTOSCALER_KINDS = {
    "HorizontalPodAutoscaler": "hpa",
    "VerticalPodAutoscaler": "vpa",
    "Service": "kpa",
    "ScaledObject": "keda",
    "ScaledJob": "keda",
}
_KINDS = ("Scenario", "Deployment", "PodDisruptionBudget", *_AUTOSCALER_KINDS)


def fold_manifests(documents: list[tuple[Any, yaml.Node | None]], source: str) -> tuple[Any, yaml.Node | None]:
    """The Scenario document (and its node tree) with the other documents folded into its spec."""
    scenario: tuple[Any, yaml.Node | None] | None = None
    manifests: dict[str, dict[str, Any]] = {}
    for index, (data, root) in enumerate(documents, start=1):
        where = f"{source} (document {index})"
        kind = data.get("kind") if isinstance(data, dict) else None
        if kind not in _KINDS:
            line = root.start_mark.line + 1 if root is not None else None
            raise ScenarioError(
                f"a document of kind {kind!r} has no place in a scenario; known kinds: {', '.join(_KINDS)}",
                file=where,
                line=line,
            )
        if kind == "Scenario":
            if scenario is not None:
                line = root.start_mark.line + 1 if root is not None else None
                raise ScenarioError("a file holds one Scenario document, found a second", file=where, line=line)
            scenario = (data, root)
            continue
        metadata = data.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        if not isinstance(name, str) or not name:
            raise ScenarioError(f"the {kind} needs a metadata.name", file=where, field="metadata.name")
        key = f"{kind}/{name}"
        if key in manifests:
            raise ScenarioError(f"two documents are {key}", file=where)
        _check_manifest(kind, data, root, f"{where}, {key}")
        manifests[key] = data
    if scenario is None:
        raise ScenarioError("a multi-document file needs one document of kind: Scenario", file=source)
    data, root = scenario
    spec = data.get("spec") if isinstance(data, dict) else None
    if not isinstance(spec, dict):
        return data, root  # validation reports what is missing
    spec = dict(spec)
    referenced = _resolve_references(spec, manifests)
    _fold_unreferenced(spec, {key: doc for key, doc in manifests.items() if key not in referenced}, source)
    return {**data, "spec": spec}, root


def _resolve_references(spec: dict[str, Any], manifests: dict[str, dict[str, Any]]) -> set[str]:
    """Replace `manifest: Kind/name` and `deployment: Deployment/name` by the documents they name."""
    referenced: set[str] = set()
    autoscalers = spec.get("autoscalers")
    if isinstance(autoscalers, list):
        resolved = []
        for entry in autoscalers:
            if isinstance(entry, dict) and isinstance(entry.get("manifest"), str) and entry["manifest"] in manifests:
                referenced.add(entry["manifest"])
                entry = {**entry, "manifest": manifests[entry["manifest"]]}
            resolved.append(entry)
        spec["autoscalers"] = resolved
    workload = spec.get("workload")
    deployment = workload.get("deployment") if isinstance(workload, dict) else None
    if isinstance(workload, dict) and isinstance(deployment, str) and deployment in manifests:
        referenced.add(deployment)
        spec["workload"] = {**workload, "deployment": manifests[deployment]}
    return referenced


def _fold_unreferenced(spec: dict[str, Any], manifests: dict[str, dict[str, Any]], source: str) -> None:
    deployments = [doc for key, doc in manifests.items() if key.startswith("Deployment/")]
    if deployments:
        workload = spec.get("workload")
        if len(deployments) > 1 or not isinstance(workload, dict) or workload.get("deployment") is not None:
            raise ScenarioError(
                "the file has a Deployment the workload does not use; set spec.workload.deployment to "
                "Deployment/<name> to say which",
                file=source,
                field="spec.workload.deployment",
            )
        spec["workload"] = {**workload, "deployment": deployments[0]}
    budgets = [doc for key, doc in manifests.items() if key.startswith("PodDisruptionBudget/")]
    if budgets:
        if len(budgets) > 1 or spec.get("disruptionBudget") is not None:
            raise ScenarioError(
                "the workload takes one disruption budget: one PodDisruptionBudget document, or "
                "spec.disruptionBudget, not more",
                file=source,
                field="spec.disruptionBudget",
            )
        manifest = PodDisruptionBudgetManifest.model_validate(budgets[0])
        spec["disruptionBudget"] = manifest.spec.as_budget()
    added = [
        {"type": _AUTOSCALER_KINDS[key.partition("/")[0]], "manifest": doc}
        for key, doc in manifests.items()
        if key.partition("/")[0] in _AUTOSCALER_KINDS
    ]
    if added:
        existing = spec.get("autoscalers")
        spec["autoscalers"] = [*(existing if isinstance(existing, list) else []), *added]


def _check_manifest(kind: str, data: Any, root: yaml.Node | None, source: str) -> None:
    """Validate a manifest document now, so its mistakes name its own file, document and line."""
    if kind == "HorizontalPodAutoscaler":
        read_hpa(data, root, source)  # of any version the API server serves, converted as it converts
        return
    models: dict[str, type[BaseModel]] = {
        "Deployment": DeploymentManifest,
        "VerticalPodAutoscaler": VerticalPodAutoscalerManifest,
        "Service": KnativeServiceManifest,
        "ScaledObject": ScaledObjectManifest,
        "ScaledJob": ScaledJobManifest,
        "PodDisruptionBudget": PodDisruptionBudgetManifest,
    }
    validate_node(data, root, models[kind], source, f"a {kind} manifest")
