"""The `spec.autoscalers` section: which autoscalers run, from real manifests or inline specs.

```yaml
autoscalers:
  - type: hpa
    manifest: hpa.yaml            # a HorizontalPodAutoscaler (autoscaling/v2 or older), relative to this file
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
  - type: keda
    manifest: scaledobject.yaml   # a keda.sh/v1alpha1 ScaledObject; its HPA syncs under the HPA flags above
    queries: {"sum(rate(http_requests_total[1m]))": requests_per_second}   # what a prometheus trigger measures
  - type: plugin
    plugin: plugins/my_scaler.py:MyScaler   # or a module you allow (--allow-plugin-module): package.module:Class
    options: {target: 0.7}        # keyword arguments for the class
```

A plugin is the only way a scenario runs user code, and only the code it names.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from skenario.autoscalers.hpa.config import HPAControllerConfig
from skenario.autoscalers.keda.scalers import QUERYABLE
from skenario.core.time import DAY, MINUTE, SECOND
from skenario.errors import ScenarioError
from skenario.scenario.format.base import Spec
from skenario.scenario.format.manifests.hpa import HPASpecModel
from skenario.scenario.format.manifests.keda import ScaledObjectSpecModel
from skenario.scenario.format.manifests.vpa import VPASpecModel
from skenario.scenario.format.units import Duration

NAME_PATTERN = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"


class _Autoscaler(Spec):
    """What every autoscaler entry has: a type tag and a name events can refer to."""

    type: str
    name: str | None = Field(
        None,
        pattern=NAME_PATTERN,
        description="How events refer to it (autoscaler/<name>); by default its type, or its manifest's name.",
    )


class ManifestOrSpec(_Autoscaler):
    """An autoscaler given by a manifest (a file, or inline) or by the same `spec` inline, exactly one of them."""

    manifest: str | dict[str, Any] | None = None

    @model_validator(mode="after")
    def _manifest_or_spec(self) -> Self:
        if (self.manifest is None) == (getattr(self, "spec", None) is None):
            raise ValueError("give either 'manifest' (a file) or 'spec' (inline), not both or neither")
        return self


class HpaControllerFlags(Spec):
    """kube-controller-manager's flags for the HPA controller, with their defaults: the HPAs a scenario runs
    (its own, and those KEDA makes) sync under them."""

    sync_period: Duration = Field(
        15 * SECOND,
        gt=0,
        description="The controller's --horizontal-pod-autoscaler-sync-period: how often it syncs each HPA.",
    )
    tolerance: float = Field(
        0.1,
        ge=0,
        description="The controller's --horizontal-pod-autoscaler-tolerance: a usage ratio within it of 1 changes "
        "nothing (a behavior's own tolerance wins).",
    )
    downscale_stabilization: Duration = Field(
        5 * MINUTE,
        ge=0,
        description="The controller's --horizontal-pod-autoscaler-downscale-stabilization: a scale-down goes no "
        "lower than the highest recommendation of this window (a behavior's scaleDown.stabilizationWindowSeconds "
        "wins).",
    )
    cpu_initialization_period: Duration = Field(
        5 * MINUTE,
        ge=0,
        description="The controller's --horizontal-pod-autoscaler-cpu-initialization-period: a pod younger than "
        "this counts its CPU only when ready and sampled a metric window after it turned ready.",
    )
    initial_readiness_delay: Duration = Field(
        30 * SECOND,
        ge=0,
        description="The controller's --horizontal-pod-autoscaler-initial-readiness-delay: an older pod that is not "
        "ready, and last changed readiness within this long of its start, counts as never ready.",
    )

    def controller_config(self) -> HPAControllerConfig:
        """The HPA controller's configuration these flags set."""
        return HPAControllerConfig(
            sync_period=self.sync_period,
            tolerance=self.tolerance,
            downscale_stabilization=self.downscale_stabilization,
            cpu_initialization_period=self.cpu_initialization_period,
            initial_readiness_delay=self.initial_readiness_delay,
        )


class HpaAutoscaler(ManifestOrSpec, HpaControllerFlags):
    """A HorizontalPodAutoscaler, from a manifest file or an inline `spec`."""

    type: Literal["hpa"]
    manifest: str | dict[str, Any] | None = Field(
        None,
        description="A HorizontalPodAutoscaler (autoscaling/v2, or v2beta2, v2beta1 or v1, converted as the API "
        "server converts them): a YAML file, or the manifest inline.",
    )
    spec: HPASpecModel | None = Field(None, description="The HPA's spec, as in a manifest.")
    ignore_unsimulated_metrics: bool = Field(
        False,
        description="Drop the manifest's metrics skenario does not produce (such as memory) and scale on the "
        "rest, instead of refusing the HPA.",
    )


class VpaAutoscaler(ManifestOrSpec):
    """A VerticalPodAutoscaler (CPU, and memory when the workload models it), from a manifest or an inline `spec`."""

    type: Literal["vpa"]
    manifest: str | dict[str, Any] | None = Field(
        None, description="An autoscaling.k8s.io/v1 VerticalPodAutoscaler: a YAML file, or the manifest inline."
    )
    spec: VPASpecModel | None = Field(None, description="The VPA's spec, as in a manifest.")
    recommender_interval: Duration = Field(MINUTE, gt=0, description="The recommender's --recommender-interval.")
    updater_interval: Duration = Field(MINUTE, gt=0, description="The updater's --updater-interval.")
    memory_aggregation_interval: Duration = Field(
        DAY,
        gt=0,
        description="The recommender's --memory-aggregation-interval: each pod adds one memory peak per "
        "interval (24h upstream; shorten it for runs of hours).",
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


class KedaAutoscaler(ManifestOrSpec, HpaControllerFlags):
    """A KEDA ScaledObject (keda.sh/v1alpha1): KEDA's operator and the HPA it makes, from a manifest or `spec`."""

    type: Literal["keda"]
    manifest: str | dict[str, Any] | None = Field(
        None, description="A keda.sh/v1alpha1 ScaledObject or ScaledJob: a YAML file, or the manifest inline."
    )
    spec: ScaledObjectSpecModel | None = Field(None, description="The ScaledObject's spec, as in a manifest.")
    queries: dict[str, str] = Field(
        default_factory=dict,
        description="What each prometheus trigger's query measures, by the query's text: one of "
        f"{', '.join(QUERYABLE)} (a query may also be one of these names itself).",
    )
    messages_per_job: int = Field(
        1, ge=1, description="With a ScaledJob: the messages one Job's pod consumes before it completes."
    )
    clock: datetime | None = Field(
        None,
        description="The wall-clock time at the run's start (ISO 8601, with its offset), which cron triggers "
        "read: by default Monday 2024-01-01 00:00 UTC.",
    )

    @field_validator("clock")
    @classmethod
    def _with_offset(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("give the time's offset, such as 2024-01-01T00:00:00Z or +02:00")
        return value


class PluginAutoscaler(_Autoscaler):
    """A user's autoscaler class: any class with `start(context)` (see skenario.autoscalers.base)."""

    type: Literal["plugin"]
    plugin: str = Field(
        pattern=r"^[^:]+:[A-Za-z_][A-Za-z0-9_]*$",
        description="'path/to/file.py:Class' (relative to the scenario) or 'package.module:Class' (a module the "
        "user allows: --allow-plugin-module); the class must be defined there.",
    )
    options: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for the class.")


AutoscalerSpec = Annotated[
    HpaAutoscaler | VpaAutoscaler | KpaAutoscaler | KedaAutoscaler | PluginAutoscaler, Field(discriminator="type")
]


def autoscaler_names(specs: tuple[AutoscalerSpec, ...] | list[AutoscalerSpec]) -> list[str]:
    """Each autoscaler's name: its own, else its inline manifest's, else its type (unique, or an error)."""
    names = []
    for index, spec in enumerate(specs):
        name = spec.name
        manifest = getattr(spec, "manifest", None)
        if name is None and isinstance(manifest, dict):
            metadata = manifest.get("metadata")
            written = metadata.get("name") if isinstance(metadata, dict) else None
            name = written if isinstance(written, str) else None  # a malformed one is the manifest's to report
        name = name or spec.type
        if name in names:
            raise ScenarioError(
                f"two autoscalers are named '{name}'; give each a distinct 'name'",
                field=f"spec.autoscalers.{index}.name",
            )
        names.append(name)
    return names
