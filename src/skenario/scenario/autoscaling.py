"""The `spec.autoscalers` section: which autoscalers run, from real manifests or inline specs.

```yaml
autoscalers:
  - type: hpa
    manifest: hpa.yaml            # an autoscaling/v2 HorizontalPodAutoscaler, relative to this file
  - type: hpa
    spec:
      maxReplicas: 10
      metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
    syncPeriod: 15s               # kube-controller-manager flags, with their defaults
  - type: vpa
    spec: {updatePolicy: {updateMode: Recreate}, resourcePolicy: {containerPolicies: [{minAllowed: {cpu: 100m}}]}}
  - type: kpa
    annotations: {autoscaling.knative.dev/target: "10", autoscaling.knative.dev/min-scale: "0"}
    config: {stable-window: 60s, scale-to-zero-grace-period: 30s}
  - type: plugin
    plugin: plugins/my_scaler.py:MyScaler   # or an importable module: package.module:Class
    options: {target: 0.7}        # keyword arguments for the class
```

A plugin is the only way a scenario runs user code, and only the code it names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Self, TypeVar

import yaml
from pydantic import BaseModel, Field, model_validator

from skenario.autoscalers.base import Autoscaler
from skenario.autoscalers.hpa.config import HPAControllerConfig
from skenario.autoscalers.hpa.controller import HorizontalPodAutoscaler
from skenario.autoscalers.kpa.controller import KnativePodAutoscaler
from skenario.autoscalers.vpa.controller import VerticalPodAutoscaler
from skenario.core.time import MINUTE, SECOND
from skenario.errors import ScenarioError
from skenario.scenario.base import Spec
from skenario.scenario.hpa_manifest import HorizontalPodAutoscalerManifest, HPASpecModel
from skenario.scenario.kpa_manifest import KnativeServiceManifest, kpa_config
from skenario.scenario.plugins import load_class
from skenario.scenario.units import Duration
from skenario.scenario.vpa_manifest import VerticalPodAutoscalerManifest, VPASpecModel

M = TypeVar("M", bound=BaseModel)


NAME_PATTERN = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"


class _Autoscaler(Spec):
    """What every autoscaler entry has: a type tag and a name events can refer to."""

    type: str
    name: str | None = Field(
        None,
        pattern=NAME_PATTERN,
        description="How events refer to it (autoscaler/<name>); by default its type, or its manifest's name.",
    )

    def build(self, base_dir: Path, field: str, container: str) -> Autoscaler:
        """The autoscaler, for a workload whose pods' one container is named `container`."""
        raise NotImplementedError


def read_manifest(manifest: str | dict[str, Any], base_dir: Path, document: type[M], shape: str, field: str) -> M:
    """A manifest named by path (relative to the scenario) or given inline (a document of a multi-document file)."""
    from skenario.scenario.loader import load_document, validate_document

    if isinstance(manifest, str):
        return load_document(base_dir / manifest, document, shape)
    return validate_document(manifest, document, f"the manifest at {field}", shape)


class _ManifestOrSpec(_Autoscaler):
    """An autoscaler given by a manifest (a file, or inline) or by the same `spec` inline, exactly one of them."""

    manifest: str | dict[str, Any] | None = None

    @model_validator(mode="after")
    def _manifest_or_spec(self) -> Self:
        if (self.manifest is None) == (getattr(self, "spec", None) is None):
            raise ValueError("give either 'manifest' (a file) or 'spec' (inline), not both or neither")
        return self

    def _spec(self, base_dir: Path, document: type[BaseModel], shape: str, field: str) -> Any:
        """The inline spec, or the `spec` of the manifest as the API server reads it."""
        if self.manifest is None:
            return getattr(self, "spec")  # noqa: B009  (declared by each subclass with its own type)
        manifest: Any = read_manifest(self.manifest, base_dir, document, shape, f"{field}.manifest")
        return manifest.spec

    def _error(self, base_dir: Path, field: str, path: str, message: str, value: object) -> ScenarioError:
        """An error found in the spec after reading it, at `path` within the spec: in its manifest file
        (with the line) when it came from one, else at the scenario's field."""
        if isinstance(self.manifest, str):
            from skenario.scenario.loader import line_of, read_text

            file = base_dir / self.manifest
            parts: list[int | str] = ["spec", *(int(p) if p.isdigit() else p for p in path.split("."))]
            line = line_of(yaml.compose(read_text(file)), parts)
            return ScenarioError(message, file=str(file), line=line, field=f"spec.{path}", value=value)
        where = f"{field}.manifest.spec" if self.manifest is not None else f"{field}.spec"
        return ScenarioError(message, field=f"{where}.{path}", value=value)


class HpaAutoscaler(_ManifestOrSpec):
    """A HorizontalPodAutoscaler, from a manifest file or an inline `spec`."""

    type: Literal["hpa"]
    manifest: str | dict[str, Any] | None = Field(
        None, description="An autoscaling/v2 HorizontalPodAutoscaler: a YAML file, or the manifest inline."
    )
    spec: HPASpecModel | None = Field(None, description="The HPA's spec, as in a manifest.")
    sync_period: Duration = Field(15 * SECOND, gt=0, description="--horizontal-pod-autoscaler-sync-period")
    tolerance: float = Field(0.1, ge=0, description="--horizontal-pod-autoscaler-tolerance")
    downscale_stabilization: Duration = Field(5 * MINUTE, ge=0, description="...-downscale-stabilization")
    cpu_initialization_period: Duration = Field(5 * MINUTE, ge=0, description="...-cpu-initialization-period")
    initial_readiness_delay: Duration = Field(30 * SECOND, ge=0, description="...-initial-readiness-delay")
    ignore_unsimulated_metrics: bool = Field(
        False,
        description="Drop the manifest's metrics skenario does not produce (such as memory) and scale on the "
        "rest, instead of refusing the HPA.",
    )

    def build(self, base_dir: Path, field: str, container: str) -> HorizontalPodAutoscaler:
        spec: HPASpecModel = self._spec(
            base_dir,
            HorizontalPodAutoscalerManifest,
            "a manifest is a mapping with apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler and spec",
            field,
        )
        if self.ignore_unsimulated_metrics:
            kept = [metric for metric in spec.metrics if metric.unsimulated(container) is None]
            if spec.metrics and not kept:
                message = "skenario produces none of these metrics, so nothing would scale the workload"
                raise self._error(base_dir, field, "metrics", message, None)
            spec = spec.model_copy(update={"metrics": kept})
        problem = spec.unsimulated_metric(container)
        if problem is not None:
            path, message, value = problem
            message += " (ignoreUnsimulatedMetrics: true on the autoscaler drops such metrics)"
            raise self._error(base_dir, field, path, message, value)
        config = HPAControllerConfig(
            sync_period=self.sync_period,
            tolerance=self.tolerance,
            downscale_stabilization=self.downscale_stabilization,
            cpu_initialization_period=self.cpu_initialization_period,
            initial_readiness_delay=self.initial_readiness_delay,
        )
        return HorizontalPodAutoscaler(spec.build(), config)


class VpaAutoscaler(_ManifestOrSpec):
    """A VerticalPodAutoscaler (CPU), from a manifest file or an inline `spec`."""

    type: Literal["vpa"]
    manifest: str | dict[str, Any] | None = Field(
        None, description="An autoscaling.k8s.io/v1 VerticalPodAutoscaler: a YAML file, or the manifest inline."
    )
    spec: VPASpecModel | None = Field(None, description="The VPA's spec, as in a manifest.")
    recommender_interval: Duration = Field(MINUTE, gt=0, description="The recommender's --recommender-interval.")
    updater_interval: Duration = Field(MINUTE, gt=0, description="The updater's --updater-interval.")

    def build(self, base_dir: Path, field: str, container: str) -> VerticalPodAutoscaler:
        spec: VPASpecModel = self._spec(
            base_dir,
            VerticalPodAutoscalerManifest,
            "a manifest is a mapping with apiVersion: autoscaling.k8s.io/v1, kind: VerticalPodAutoscaler and spec",
            field,
        )
        problem = spec.unmatched_policies(container)
        if problem is not None:
            raise self._error(base_dir, field, *problem)
        return VerticalPodAutoscaler(
            spec.build(container),
            recommender_interval=self.recommender_interval,
            updater_interval=self.updater_interval,
        )


class KpaAutoscaler(_Autoscaler):
    """Knative's Pod Autoscaler, from revision annotations, `config-autoscaler` keys or a Service."""

    type: Literal["kpa"]
    manifest: str | dict[str, Any] | None = Field(
        None, description="A Knative Service (serving.knative.dev/v1): a YAML file, or the manifest inline."
    )
    annotations: dict[str, Any] = Field(default_factory=dict, description="autoscaling.knative.dev/* annotations.")
    config: dict[str, Any] = Field(default_factory=dict, description="Keys of the config-autoscaler ConfigMap.")
    container_concurrency: int | None = Field(None, ge=0, description="The revision's containerConcurrency.")

    def build(self, base_dir: Path, field: str, container: str) -> KnativePodAutoscaler:
        annotations = dict(self.annotations)
        concurrency = self.container_concurrency
        file = None
        if self.manifest is not None:
            service = read_manifest(
                self.manifest, base_dir, KnativeServiceManifest, "a Knative Service manifest", f"{field}.manifest"
            )
            from_file, file_concurrency = service.template()
            annotations = {**from_file, **annotations}
            concurrency = concurrency if concurrency is not None else file_concurrency
            file = str(base_dir / self.manifest) if isinstance(self.manifest, str) else None
        return KnativePodAutoscaler(
            kpa_config(annotations, self.config, container_concurrency=concurrency, field=field, file=file)
        )


class PluginAutoscaler(_Autoscaler):
    """A user's autoscaler class: any class with `start(context)` (see skenario.autoscalers.base)."""

    type: Literal["plugin"]
    plugin: str = Field(
        pattern=r"^[^:]+:[A-Za-z_][A-Za-z0-9_]*$",
        description="'path/to/file.py:Class' (relative to the scenario) or 'package.module:Class'.",
    )
    options: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for the class.")

    def build(self, base_dir: Path, field: str, container: str) -> Autoscaler:
        field = f"{field}.plugin"
        instance = load_class(self.plugin, base_dir, field, self.options)
        if not isinstance(instance, Autoscaler):
            raise ScenarioError("a plugin needs a start(context) method", field=field, value=self.plugin)
        return instance


AutoscalerSpec = Annotated[
    HpaAutoscaler | VpaAutoscaler | KpaAutoscaler | PluginAutoscaler, Field(discriminator="type")
]


def autoscaler_names(specs: tuple[AutoscalerSpec, ...] | list[AutoscalerSpec]) -> list[str]:
    """Each autoscaler's name: its own, else its inline manifest's, else its type (unique, or an error)."""
    names = []
    for index, spec in enumerate(specs):
        name = spec.name
        manifest = getattr(spec, "manifest", None)
        if name is None and isinstance(manifest, dict):
            metadata = manifest.get("metadata")
            name = metadata.get("name") if isinstance(metadata, dict) else None
        name = name or spec.type
        if name in names:
            raise ScenarioError(
                f"two autoscalers are named '{name}'; give each a distinct 'name'",
                field=f"spec.autoscalers.{index}.name",
            )
        names.append(name)
    return names


def build_autoscalers(specs: tuple[AutoscalerSpec, ...], base_dir: Path, container: str) -> list[Autoscaler]:
    """Every autoscaler of the scenario, built (manifests read, plugins loaded) before the run."""
    return [spec.build(base_dir, f"spec.autoscalers.{index}", container) for index, spec in enumerate(specs)]
