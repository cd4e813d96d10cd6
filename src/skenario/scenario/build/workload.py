"""The workload with its Deployment manifest read in: replicas, the container's name and its resources.

Fields the scenario sets win over the manifest's, so a scenario can reuse a production
Deployment and change one thing.
"""

from __future__ import annotations

from pathlib import Path

from skenario.scenario.format.manifests.deployment import DeploymentManifest
from skenario.scenario.format.scenario import ProbeSpec, Resources, ScenarioSpec, Workload
from skenario.scenario.io import load_document, validate_document

DEPLOYMENT_SHAPE = "a manifest is a mapping with apiVersion: apps/v1, kind: Deployment and spec"


def with_deployment(workload: Workload, base_dir: Path) -> Workload:
    """The workload with its Deployment manifest read in (fields set here win)."""
    if workload.deployment is None:
        return workload
    if isinstance(workload.deployment, str):
        path = str(base_dir / workload.deployment)
        manifest = load_document(path, DeploymentManifest, DEPLOYMENT_SHAPE)
    else:
        path = "the Deployment at spec.workload.deployment"
        manifest = validate_document(workload.deployment, DeploymentManifest, path, DEPLOYMENT_SHAPE)
    read = manifest.resources(workload.container, file=path)
    update: dict[str, object] = {"container": manifest.container_name(workload.container)}
    if workload.replicas is None:
        update["replicas"] = manifest.spec.replicas
    if "resources" not in workload.model_fields_set and read.cpu_request is not None:
        requests = {"cpu": f"{read.cpu_request}m", "memory": read.memory_request}
        limits = {"cpu": f"{read.cpu_limit}m" if read.cpu_limit else None, "memory": read.memory_limit}
        resources: dict[str, object] = {"requests": {k: v for k, v in requests.items() if v is not None}}
        if any(v is not None for v in limits.values()):
            resources["limits"] = {k: v for k, v in limits.items() if v is not None}
        update["resources"] = Resources.model_validate(resources)
    probe = manifest.container(workload.container, file=path).readiness_probe
    if "readiness_probe" not in workload.model_fields_set and probe is not None:
        update["readiness_probe"] = validate_document(
            probe, ProbeSpec, f"{path}: the container's readinessProbe", "a readinessProbe mapping"
        )
    return workload.model_copy(update=update)


def spec_with_deployment(spec: ScenarioSpec, base_dir: Path) -> ScenarioSpec:
    """The spec with the workload's Deployment manifest read in (scenario fields win)."""
    workload = with_deployment(spec.workload, base_dir)
    return spec if workload is spec.workload else spec.model_copy(update={"workload": workload})
