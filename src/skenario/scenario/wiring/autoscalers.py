"""The scenario's autoscalers built before the run: manifests read, specs checked, controllers made, plugins loaded.

One builder per autoscaler type of `format.autoscalers`, in `BUILDERS`. A problem found only after
a manifest is read (a metric skenario does not produce, a VPA policy for a container the pods
lack) is reported in the manifest's own file, with its line, when it came from one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import yaml
from pydantic import BaseModel

from skenario.autoscalers.base import Autoscaler
from skenario.autoscalers.hpa.controller import HorizontalPodAutoscaler
from skenario.autoscalers.keda.controller import EPOCH, KedaScaledObject
from skenario.autoscalers.keda.scaledjob import KedaScaledJob
from skenario.autoscalers.kpa.controller import KnativePodAutoscaler
from skenario.autoscalers.vpa.controller import VerticalPodAutoscaler
from skenario.autoscalers.vpa.memory import MemoryConfig
from skenario.errors import ScenarioError
from skenario.scenario.format.autoscalers import (
    AutoscalerSpec,
    HpaAutoscaler,
    KedaAutoscaler,
    KpaAutoscaler,
    ManifestOrSpec,
    PluginAutoscaler,
    VpaAutoscaler,
)
from skenario.scenario.format.manifests.hpa import HPASpecModel
from skenario.scenario.format.manifests.hpaversions import SHAPE as HPA_SHAPE
from skenario.scenario.format.manifests.hpaversions import ReadHPA, read_hpa
from skenario.scenario.format.manifests.keda import SHAPE as KEDA_SHAPE
from skenario.scenario.format.manifests.keda import (
    ScaledJobManifest,
    ScaledJobSpecModel,
    ScaledObjectManifest,
    ScaledObjectProblem,
    ScaledObjectSpecModel,
    scaled_job,
    scaled_object,
)
from skenario.scenario.format.manifests.kpa import KnativeServiceManifest, kpa_config
from skenario.scenario.format.manifests.vpa import VerticalPodAutoscalerManifest, VPASpecModel
from skenario.scenario.format.scenario import SimulatedPods
from skenario.scenario.io import Rename, file_problem, line_of, read_document, read_text, validate_node
from skenario.scenario.wiring.plugins import load_class

M = TypeVar("M", bound=BaseModel)

VPA_SHAPE = "a manifest is a mapping with apiVersion: autoscaling.k8s.io/v1, kind: VerticalPodAutoscaler and spec"


def _document(
    manifest: str | dict[str, Any], base_dir: Path, field: str, shape: str
) -> tuple[Any, yaml.Node | None, str]:
    """A manifest named by path (relative to the scenario) or given inline (a document of a multi-document
    file): its data, its node tree (None inline) and how errors name it."""
    if isinstance(manifest, str):
        path = base_dir / manifest
        if problem := file_problem(path, "manifest file"):  # said at the scenario's field, which `located` places
            raise ScenarioError(f"{problem}: {str(path)!r}", field=field, value=manifest)
        data, root = read_document(path, shape)
        return data, root, str(path)
    return manifest, None, f"the manifest at {field}"


def read_manifest(manifest: str | dict[str, Any], base_dir: Path, document: type[M], shape: str, field: str) -> M:
    """A manifest, a file or inline, validated as `document`."""
    data, root, source = _document(manifest, base_dir, field, shape)
    return validate_node(data, root, document, source, shape)


def read_hpa_manifest(entry: HpaAutoscaler, base_dir: Path, field: str) -> ReadHPA | None:
    """The entry's HorizontalPodAutoscaler manifest in whichever version it is written, as autoscaling/v2
    (`format.manifests.hpaversions`); None for an inline spec."""
    if entry.manifest is None:
        return None
    data, root, source = _document(entry.manifest, base_dir, f"{field}.manifest", HPA_SHAPE)
    return read_hpa(data, root, source)


def _spec(entry: ManifestOrSpec, base_dir: Path, document: type[BaseModel], shape: str, field: str) -> Any:
    """The inline spec, or the `spec` of the manifest as the API server reads it."""
    if entry.manifest is None:
        return getattr(entry, "spec")  # noqa: B009  (declared by each subclass with its own type)
    manifest: Any = read_manifest(entry.manifest, base_dir, document, shape, f"{field}.manifest")
    return manifest.spec


def _error(
    entry: ManifestOrSpec,
    base_dir: Path,
    field: str,
    path: str,
    message: str,
    value: object,
    rename: Rename | None = None,
) -> ScenarioError:
    """An error found in the spec after reading it, at `path` within the spec: in its manifest file
    (with the line) when it came from one, else at the scenario's field. `rename` maps the path of a
    manifest converted from an older version to the field written."""
    parts: list[int | str] = ["spec", *(int(p) if p.isdigit() else p for p in path.split("."))]
    if rename is not None:
        parts = rename(parts)
    written = ".".join(map(str, parts))
    if isinstance(entry.manifest, str):
        file = base_dir / entry.manifest
        line = line_of(yaml.compose(read_text(file)), parts)
        return ScenarioError(message, file=str(file), line=line, field=written, value=value)
    where = f"{field}.manifest" if entry.manifest is not None else field
    return ScenarioError(message, field=f"{where}.{written}", value=value)


def hpa_spec(entry: HpaAutoscaler, base_dir: Path, field: str) -> HPASpecModel:
    """The HPA's spec, inline or from its manifest (of any version, converted to autoscaling/v2)."""
    read = read_hpa_manifest(entry, base_dir, field)
    if read is None:
        assert entry.spec is not None
        return entry.spec
    return read.manifest.spec


def build_hpa(entry: HpaAutoscaler, base_dir: Path, field: str, pods: SimulatedPods) -> HorizontalPodAutoscaler:
    read = read_hpa_manifest(entry, base_dir, field)
    spec = entry.spec if read is None else read.manifest.spec
    assert spec is not None
    rename = None if read is None else read.rename
    container, memory, stream = pods.container, pods.memory, pods.stream
    if entry.ignore_unsimulated_metrics:
        kept = [metric for metric in spec.metrics if metric.unsimulated(container, memory, stream) is None]
        if spec.metrics and not kept:
            message = "skenario produces none of these metrics, so nothing would scale the workload"
            raise _error(entry, base_dir, field, "metrics", message, None, rename)
        spec = spec.model_copy(update={"metrics": kept})
    problem = spec.unsimulated_metric(container, memory, stream)
    if problem is not None:
        path, message, value = problem
        message += " (ignoreUnsimulatedMetrics: true on the autoscaler drops such metrics)"
        raise _error(entry, base_dir, field, path, message, value, rename)
    return HorizontalPodAutoscaler(spec.build(), entry.controller_config())


def build_vpa(entry: VpaAutoscaler, base_dir: Path, field: str, pods: SimulatedPods) -> VerticalPodAutoscaler:
    spec: VPASpecModel = _spec(entry, base_dir, VerticalPodAutoscalerManifest, VPA_SHAPE, field)
    container = pods.container
    problem = spec.unmatched_policies(container)
    if problem is not None:
        raise _error(entry, base_dir, field, *problem)
    return VerticalPodAutoscaler(
        spec.build(container),
        recommender_interval=entry.recommender_interval,
        updater_interval=entry.updater_interval,
        memory=MemoryConfig(aggregation_interval=entry.memory_aggregation_interval),
    )


class KnativeService(NamedTuple):
    """What a KPA entry says of its revision: annotations, containerConcurrency (None: unset) and the manifest file."""

    annotations: dict[str, str]
    container_concurrency: int | None
    file: str | None


def knative_service(entry: KpaAutoscaler, base_dir: Path, field: str) -> KnativeService:
    """The entry's revision settings, its own fields winning over its Knative Service manifest's."""
    annotations = dict(entry.annotations)
    concurrency = entry.container_concurrency
    file = None
    if entry.manifest is not None:
        service = read_manifest(
            entry.manifest, base_dir, KnativeServiceManifest, "a Knative Service manifest", f"{field}.manifest"
        )
        from_file, file_concurrency = service.template()
        annotations = {**from_file, **annotations}
        concurrency = concurrency if concurrency is not None else file_concurrency
        file = str(base_dir / entry.manifest) if isinstance(entry.manifest, str) else None
    return KnativeService(annotations, concurrency, file)


def build_kpa(entry: KpaAutoscaler, base_dir: Path, field: str, pods: SimulatedPods) -> KnativePodAutoscaler:
    service = knative_service(entry, base_dir, field)
    # One containerConcurrency for the revision: the workload's, which resolve_spec set from this entry.
    concurrency = pods.concurrency or 0
    if service.container_concurrency not in (None, concurrency):
        raise ScenarioError(
            f"containerConcurrency {service.container_concurrency} differs from the workload's concurrency "
            f"({pods.concurrency or 'no limit'}); one setting drives the KPA, queue-proxy and the activator",
            field=f"{field}.containerConcurrency",
            value=service.container_concurrency,
        )
    return KnativePodAutoscaler(
        kpa_config(service.annotations, entry.config, container_concurrency=concurrency, field=field, file=service.file)
    )


def build_keda(
    entry: KedaAutoscaler, base_dir: Path, field: str, pods: SimulatedPods
) -> KedaScaledObject | KedaScaledJob:
    """KEDA's operator for the entry's ScaledObject (with the HPA it makes, syncing under the entry's HPA flags)
    or ScaledJob."""
    name, annotations = entry.name or "keda", dict[str, Any]()
    spec: ScaledObjectSpecModel | ScaledJobSpecModel | None = entry.spec
    if entry.manifest is not None:
        data, root, source = _document(entry.manifest, base_dir, f"{field}.manifest", KEDA_SHAPE)
        manifest: ScaledJobManifest | ScaledObjectManifest
        if isinstance(data, dict) and data.get("kind") == "ScaledJob":
            manifest = validate_node(data, root, ScaledJobManifest, source, KEDA_SHAPE)
        else:
            manifest = validate_node(data, root, ScaledObjectManifest, source, KEDA_SHAPE)
        spec = manifest.spec
        metadata = manifest.metadata.model_dump()
        name = entry.name or str(metadata.get("name") or name)
        annotations = metadata.get("annotations") or {}
    assert spec is not None
    epoch = entry.clock or EPOCH
    try:
        if isinstance(spec, ScaledJobSpecModel):
            return KedaScaledJob(
                scaled_job(
                    spec,
                    name,
                    queries=entry.queries,
                    stream=pods.stream,
                    messages_per_job=entry.messages_per_job,
                    epoch=epoch,
                )
            )
        scaled = scaled_object(
            spec, name, annotations=annotations, queries=entry.queries, stream=pods.stream, epoch=epoch
        )
    except ScaledObjectProblem as problem:
        if problem.path.startswith("metadata."):  # an annotation: outside the spec
            if isinstance(entry.manifest, str):
                file = str(base_dir / entry.manifest)
                raise ScenarioError(problem.message, file=file, field=problem.path, value=problem.value) from None
            where = f"{field}.manifest.{problem.path}"
            raise ScenarioError(problem.message, field=where, value=problem.value) from None
        raise _error(entry, base_dir, field, problem.path, problem.message, problem.value) from None
    return KedaScaledObject(scaled, entry.controller_config())


def build_plugin(entry: PluginAutoscaler, base_dir: Path, field: str, pods: SimulatedPods) -> Autoscaler:
    field = f"{field}.plugin"
    instance = load_class(entry.plugin, base_dir, field, entry.options, ("start",))
    assert isinstance(instance, Autoscaler)
    return instance


Builder = Callable[[Any, Path, str, SimulatedPods], Autoscaler]

BUILDERS: dict[type[BaseModel], Builder] = {
    HpaAutoscaler: build_hpa,
    VpaAutoscaler: build_vpa,
    KpaAutoscaler: build_kpa,
    KedaAutoscaler: build_keda,
    PluginAutoscaler: build_plugin,
}
"""Each autoscaler type's builder: (entry, the scenario's folder, the entry's field, what the pods simulate)."""


def build_autoscaler(entry: AutoscalerSpec, base_dir: Path, field: str, pods: SimulatedPods) -> Autoscaler:
    """The autoscaler, for a workload whose pods' one container and resources are `pods`."""
    return BUILDERS[type(entry)](entry, base_dir, field, pods)


def build_autoscalers(specs: tuple[AutoscalerSpec, ...], base_dir: Path, pods: SimulatedPods) -> list[Autoscaler]:
    """Every autoscaler of the scenario, built (manifests read, plugins loaded) before the run."""
    return [build_autoscaler(spec, base_dir, f"spec.autoscalers.{index}", pods) for index, spec in enumerate(specs)]
