"""The workload with its Deployment manifest read in: replicas, the container's name and its resources.

Fields the scenario sets win over the manifest's, so a scenario can reuse a production
Deployment and change one thing.
"""

from __future__ import annotations

from pathlib import Path

from skenario.errors import ScenarioError
from skenario.scenario.format.autoscalers import KpaAutoscaler
from skenario.scenario.format.manifests.deployment import DeploymentManifest
from skenario.scenario.format.scenario import ProbeSpec, Resources, ScenarioSpec, StartupProbeSpec, Workload
from skenario.scenario.io import file_problem, load_document, validate_document
from skenario.scenario.wiring.autoscalers import knative_service

QUEUE_PROXY_DEPTH_FACTOR = 10
"""queue-proxy's breaker queues 10 requests per slot of containerConcurrency (`buildBreaker`)."""
DEPLOYMENT_SHAPE = "a manifest is a mapping with apiVersion: apps/v1, kind: Deployment and spec"


def with_deployment(workload: Workload, base_dir: Path) -> Workload:
    """The workload with its Deployment manifest read in (fields set here win)."""
    if workload.deployment is None:
        return workload
    if isinstance(workload.deployment, str):
        file = base_dir / workload.deployment
        if problem := file_problem(file, "manifest file"):  # said at the scenario's field, which `located` places
            raise ScenarioError(
                f"{problem}: {str(file)!r}", field="spec.workload.deployment", value=workload.deployment
            )
        path = str(file)
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
    container = manifest.container(workload.container, file=path)
    probe = container.readiness_probe
    if "readiness_probe" not in workload.model_fields_set and probe is not None:
        update["readiness_probe"] = validate_document(
            probe, ProbeSpec, f"{path}: the container's readinessProbe", "a readinessProbe mapping"
        )
    policy = container.image_pull_policy
    if "image_pull_policy" not in workload.model_fields_set and policy is not None:
        update["image_pull_policy"] = "Always" if policy == "Always" else "IfNotPresent"  # Never: the image is there
    startup = container.startup_probe
    if "startup_probe" not in workload.model_fields_set and startup is not None:
        update["startup_probe"] = validate_document(
            startup, StartupProbeSpec, f"{path}: the container's startupProbe", "a startupProbe mapping"
        )
    return workload.model_copy(update=update)


def with_container_concurrency(workload: Workload, declared: list[tuple[str, int | None]]) -> Workload:
    """The workload of a Knative revision, with the one containerConcurrency its KPAs `declared` (field, value).

    queue-proxy admits that many requests at once with a queue of 10 times as many behind
    (`buildBreaker` in knative/serving pkg/queue/sharedmain/main.go); 0 means no limit and no queue.
    The workload's `concurrency` may say the same, not something else.
    """
    concurrency = workload.concurrency  # None: no limit
    source = "spec.workload.concurrency" if concurrency is not None else None
    for field, value in declared:
        if value is None:
            continue
        limit = value or None
        if source is not None and limit != concurrency:
            raise ScenarioError(
                f"containerConcurrency {value} differs from {concurrency or 0} at {source}; one setting drives "
                "the KPA, queue-proxy and the activator",
                field=field,
                value=value,
            )
        concurrency, source = limit, field
    update: dict[str, object] = {"concurrency": concurrency}
    if workload.queue_capacity is None and concurrency is not None:
        update["queue_capacity"] = QUEUE_PROXY_DEPTH_FACTOR * concurrency
    return workload.model_copy(update=update)


def resolve_spec(spec: ScenarioSpec, base_dir: Path) -> ScenarioSpec:
    """The spec as it runs: the Deployment manifest read in (scenario fields win) and, when a KPA scales
    the workload, one containerConcurrency for the KPA, queue-proxy and the activator."""
    workload = with_deployment(spec.workload, base_dir)
    if spec.knative:
        workload = with_container_concurrency(workload, knative_concurrency(spec, base_dir))
    return spec if workload is spec.workload else spec.model_copy(update={"workload": workload})


def knative_concurrency(spec: ScenarioSpec, base_dir: Path) -> list[tuple[str, int | None]]:
    """The containerConcurrency each KPA entry declares (its own field or its manifest's), with where."""
    declared = []
    for index, entry in enumerate(spec.autoscalers):
        if isinstance(entry, KpaAutoscaler):
            field = f"spec.autoscalers.{index}"
            declared.append(
                (f"{field}.containerConcurrency", knative_service(entry, base_dir, field).container_concurrency)
            )
    return declared
