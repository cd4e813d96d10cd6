"""An autoscaling/v2 HorizontalPodAutoscaler, read as the Kubernetes API server reads it.

Field names, defaults (`minReplicas` 1, CPU at 80% when `metrics` is empty, behavior defaults
filled by the controller) and validation follow `pkg/apis/autoscaling/validation` (v2): a
violation is a ScenarioError naming the manifest, the field path and the value, with the API
server's meaning (for example `spec.maxReplicas` must be at least `minReplicas`, a policy's
`periodSeconds` must be in (0, 1800]). `metadata`, `scaleTargetRef` and `status` are read
loosely: skenario scales the scenario's one workload.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from skenario.autoscalers.hpa import (
    AverageValueTarget,
    ContainerResourceMetricSource,
    ExternalMetricSource,
    MetricSpec,
    MetricTarget,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
    UtilizationTarget,
    ValueTarget,
)
from skenario.autoscalers.hpa_behavior import Behavior, PolicyType, ScalingPolicy, ScalingRules, SelectPolicy
from skenario.autoscalers.hpa_controller import HPASpec
from skenario.scenario.base import Loose, Spec
from skenario.scenario.units import MilliQuantity

MAX_PERIOD_SECONDS = 1800  # validation.go: MaxPeriodSeconds
MAX_STABILIZATION_WINDOW_SECONDS = 3600  # validation.go: MaxStabilizationWindowSeconds


class MetricTargetSpec(Spec):
    type: Literal["Utilization", "Value", "AverageValue"]
    average_utilization: int | None = Field(None, gt=0, description="Percent of the pods' requests.")
    average_value: MilliQuantity | None = None
    value: MilliQuantity | None = None

    @model_validator(mode="after")
    def _the_type_names_its_field(self) -> MetricTargetSpec:
        needed = {"Utilization": "averageUtilization", "Value": "value", "AverageValue": "averageValue"}[self.type]
        given = {"Utilization": self.average_utilization, "Value": self.value, "AverageValue": self.average_value}
        if given[self.type] is None:
            raise ValueError(f"must set {needed} when type is {self.type}")
        for quantity in (self.value, self.average_value):
            if quantity is not None and quantity <= 0:
                raise ValueError("must be positive")
        return self

    def build(self) -> MetricTarget:
        if self.type == "Utilization":
            assert self.average_utilization is not None
            return UtilizationTarget(self.average_utilization)
        if self.type == "AverageValue":
            assert self.average_value is not None
            return AverageValueTarget(self.average_value)
        assert self.value is not None
        return ValueTarget(self.value)


class MetricIdentifier(Spec):
    name: str = Field(min_length=1)
    selector: Loose | None = None


class ResourceSource(Spec):
    name: str = Field(min_length=1)
    target: MetricTargetSpec


class ContainerResourceSource(ResourceSource):
    container: str = Field(min_length=1)


class PodsSource(Spec):
    metric: MetricIdentifier
    target: MetricTargetSpec


class ObjectSource(Spec):
    described_object: Loose
    metric: MetricIdentifier
    target: MetricTargetSpec


class ExternalSource(Spec):
    metric: MetricIdentifier
    target: MetricTargetSpec


_SOURCE_FIELDS = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}
# validation.go: which target types each source allows.
_TARGETS = {
    "Resource": ("Utilization", "AverageValue"),
    "ContainerResource": ("Utilization", "AverageValue"),
    "Pods": ("AverageValue",),
    "Object": ("Value", "AverageValue"),
    "External": ("Value", "AverageValue"),
}


class MetricSpecModel(Spec):
    type: Literal["Resource", "ContainerResource", "Pods", "Object", "External"]
    resource: ResourceSource | None = None
    container_resource: ContainerResourceSource | None = None
    pods: PodsSource | None = None
    object: ObjectSource | None = None
    external: ExternalSource | None = None

    @model_validator(mode="after")
    def _exactly_the_named_source(self) -> MetricSpecModel:
        given = [name for name, field in _SOURCE_FIELDS.items() if getattr(self, _snake(field)) is not None]
        if self.type not in given:
            raise ValueError(f"must populate information for the given metric source: {_SOURCE_FIELDS[self.type]}")
        if len(given) > 1:
            raise ValueError("must populate the given metric source only")
        source = getattr(self, _snake(_SOURCE_FIELDS[self.type]))
        if source.target.type not in _TARGETS[self.type]:
            allowed = " or ".join(_TARGETS[self.type])
            raise ValueError(f"target.type must be {allowed} for a {self.type} metric, not {source.target.type}")
        return self

    def build(self) -> MetricSpec:
        if self.resource is not None:
            return ResourceMetricSource(self.resource.name, self.resource.target.build())
        if self.container_resource is not None:
            source = self.container_resource
            return ContainerResourceMetricSource(source.name, source.container, source.target.build())
        if self.pods is not None:
            return PodsMetricSource(self.pods.metric.name, self.pods.target.build())
        if self.object is not None:
            kind = str((self.object.described_object.model_extra or {}).get("kind", ""))
            return ObjectMetricSource(self.object.metric.name, self.object.target.build(), kind)
        assert self.external is not None
        return ExternalMetricSource(self.external.metric.name, self.external.target.build())


class PolicyModel(Spec):
    type: Literal["Pods", "Percent"]
    value: int = Field(gt=0)
    period_seconds: int = Field(gt=0, le=MAX_PERIOD_SECONDS)

    def build(self) -> ScalingPolicy:
        return ScalingPolicy(PolicyType(self.type), self.value, self.period_seconds)


class ScalingRulesModel(Spec):
    stabilization_window_seconds: int | None = Field(None, ge=0, le=MAX_STABILIZATION_WINDOW_SECONDS)
    select_policy: Literal["Max", "Min", "Disabled"] | None = None
    policies: list[PolicyModel] | None = Field(None, min_length=1)
    tolerance: MilliQuantity | None = Field(None, ge=0)

    def build(self) -> ScalingRules:
        return ScalingRules(
            stabilization_window_seconds=self.stabilization_window_seconds,
            select_policy=SelectPolicy(self.select_policy) if self.select_policy is not None else None,
            policies=tuple(p.build() for p in self.policies) if self.policies is not None else None,
            tolerance=self.tolerance / 1000 if self.tolerance is not None else None,
        )


class BehaviorModel(Spec):
    scale_up: ScalingRulesModel | None = None
    scale_down: ScalingRulesModel | None = None

    def build(self) -> Behavior:
        return Behavior(
            scale_up=self.scale_up.build() if self.scale_up is not None else None,
            scale_down=self.scale_down.build() if self.scale_down is not None else None,
        )


class HPASpecModel(Spec):
    """`spec` of a HorizontalPodAutoscaler."""

    scale_target_ref: Loose | None = None
    min_replicas: int = Field(1, ge=1, description="Defaults to 1; 0 needs the alpha HPAScaleToZero gate.")
    max_replicas: int = Field(gt=0)
    metrics: list[MetricSpecModel] = Field(default_factory=list, description="Empty: CPU at 80% utilisation.")
    behavior: BehaviorModel | None = None

    @field_validator("max_replicas")
    @classmethod
    def _max_not_below_min(cls, value: int, info: ValidationInfo) -> int:
        minimum = info.data.get("min_replicas")
        if minimum is not None and value < minimum:
            raise ValueError(f"must be greater than or equal to minReplicas ({minimum})")
        return value

    def build(self) -> HPASpec:
        return HPASpec(
            max_replicas=self.max_replicas,
            min_replicas=self.min_replicas,
            metrics=tuple(m.build() for m in self.metrics),
            behavior=self.behavior.build() if self.behavior is not None else None,
        )


class HorizontalPodAutoscalerManifest(Spec):
    """A whole `kind: HorizontalPodAutoscaler` document of `apiVersion: autoscaling/v2`."""

    api_version: Literal["autoscaling/v2"]
    kind: Literal["HorizontalPodAutoscaler"]
    metadata: Loose | None = None
    spec: HPASpecModel
    status: Loose | None = None


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
