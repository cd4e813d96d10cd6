"""An autoscaling/v2 HorizontalPodAutoscaler, read as the Kubernetes API server reads it.

Field names, defaults (`minReplicas` 1, CPU at 80% when `metrics` is empty, behavior defaults
filled by the controller) and validation follow `pkg/apis/autoscaling/validation` (v2): a
violation is a ScenarioError naming the manifest, the field path and the value, with the API
server's meaning (for example `spec.maxReplicas` must be at least `minReplicas`, a policy's
`periodSeconds` must be in (0, 1800]). `metadata`, `scaleTargetRef` and `status` are read
loosely: skenario scales the scenario's one workload.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from skenario.autoscalers.hpa.behavior import Behavior, PolicyType, ScalingPolicy, ScalingRules, SelectPolicy
from skenario.autoscalers.hpa.controller import METRIC_NAMES, POD_METRIC_NAMES, HPASpec
from skenario.autoscalers.hpa.types import (
    CPU,
    MEMORY,
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
from skenario.scenario.format.base import Loose, Spec
from skenario.scenario.format.units import MilliQuantity

MAX_PERIOD_SECONDS = 1800  # validation.go: MaxPeriodSeconds
MAX_STABILIZATION_WINDOW_SECONDS = 3600  # validation.go: MaxStabilizationWindowSeconds


class MetricTargetSpec(Spec):
    """A target as `validateMetricTarget` checks it; which field counts is the source's business."""

    type: Literal["Utilization", "Value", "AverageValue"]
    average_utilization: int | None = Field(None, gt=0, description="Percent of the pods' requests.")
    average_value: MilliQuantity | None = Field(None, gt=0)
    value: MilliQuantity | None = Field(None, gt=0)


class MetricIdentifier(Spec):
    name: str = Field(min_length=1)
    selector: Loose | None = None


class ResourceSource(Spec):
    """`validateResourceSource`: a utilization or a raw average value, not both (the type is not consulted)."""

    name: str = Field(min_length=1)
    target: MetricTargetSpec

    @model_validator(mode="after")
    def _utilization_or_value(self) -> Self:
        target = self.target
        if target.average_utilization is None and target.average_value is None:
            raise ValueError("target: must set either a target raw value or a target utilization")
        if target.average_utilization is not None and target.average_value is not None:
            raise ValueError("target.averageValue: may not set both a target raw value and a target utilization")
        return self

    def build_target(self) -> MetricTarget:
        """`computeStatusForResourceMetricGeneric`: a raw value when set, else the utilization."""
        if self.target.average_value is not None:
            return AverageValueTarget(self.target.average_value)
        assert self.target.average_utilization is not None
        return UtilizationTarget(self.target.average_utilization)


class ContainerResourceSource(ResourceSource):
    container: str = Field(min_length=1, max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


class PodsSource(Spec):
    """`validatePodsSource`: an average value per pod."""

    metric: MetricIdentifier
    target: MetricTargetSpec

    @model_validator(mode="after")
    def _average_value(self) -> Self:
        if self.target.average_value is None:
            raise ValueError("target.averageValue: must specify a positive target averageValue")
        return self


class ObjectSource(Spec):
    """`validateObjectSource`, and what `computeStatusForObjectMetric` can use: the field its type names."""

    described_object: Loose
    metric: MetricIdentifier
    target: MetricTargetSpec

    @model_validator(mode="after")
    def _value_or_average(self) -> Self:
        target = self.target
        if target.value is None and target.average_value is None:
            raise ValueError("target: must set either a target value or averageValue")
        # The API server accepts these; the controller then fails every sync with this message.
        usable = (target.type == "Value" and target.value is not None) or (
            target.type == "AverageValue" and target.average_value is not None
        )
        if not usable:
            raise ValueError(
                f"target.type {target.type}: the HPA controller would fail every sync with 'invalid object metric "
                "source: neither a value target nor an average value target was set'; set type Value with value, "
                "or AverageValue with averageValue"
            )
        return self


class ExternalSource(Spec):
    """`validateExternalSource`: a value or an average value per pod, not both."""

    metric: MetricIdentifier
    target: MetricTargetSpec

    @model_validator(mode="after")
    def _value_or_average(self) -> Self:
        target = self.target
        if target.value is None and target.average_value is None:
            raise ValueError("target: must set either a target value for metric or a per-pod target")
        if target.value is not None and target.average_value is not None:
            raise ValueError("target.value: may not set both a target value for metric and a per-pod target")
        return self


_SOURCE_FIELDS = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
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
        return self

    def build(self) -> MetricSpec:
        if self.resource is not None:
            return ResourceMetricSource(self.resource.name, self.resource.build_target())
        if self.container_resource is not None:
            source = self.container_resource
            return ContainerResourceMetricSource(source.name, source.container, source.build_target())
        if self.pods is not None:
            assert self.pods.target.average_value is not None
            return PodsMetricSource(self.pods.metric.name, AverageValueTarget(self.pods.target.average_value))
        if self.object is not None:
            kind = str((self.object.described_object.model_extra or {}).get("kind", ""))
            return ObjectMetricSource(self.object.metric.name, _value_or_average(self.object.target), kind)
        assert self.external is not None
        return ExternalMetricSource(self.external.metric.name, _value_or_average(self.external.target))

    def unsimulated(self, container: str, memory: bool = False, stream: bool = False) -> tuple[str, str, str] | None:
        """Why skenario cannot produce this metric, as (field path, message, value); None when it can.

        `memory`: the workload models memory use (spec.workload.memory), so memory is a metric too;
        `stream`: the pods consume a stream (spec.workload.stream), so its consumer_lag is one."""
        source = _SOURCE_FIELDS[self.type]
        if self.resource is not None or self.container_resource is not None:
            resource = self.resource or self.container_resource
            assert resource is not None
            if resource.name == MEMORY and not memory:
                message = (
                    "the workload does not model memory use, so the HPA would never get this metric "
                    "(set spec.workload.memory to model it)"
                )
                return f"{source}.name", message, resource.name
            if resource.name not in (CPU, MEMORY):
                message = "skenario simulates CPU and memory only, so the HPA would never get this metric"
                return f"{source}.name", message, resource.name
            if self.container_resource is not None and self.container_resource.container != container:
                return (
                    f"{source}.container",
                    f"the workload's pods have one container, '{container}' (set workload.container to name it); "
                    "the HPA would find no such container and never scale",
                    self.container_resource.container,
                )
            return None
        metric = (self.pods or self.object or self.external).metric  # type: ignore[union-attr]
        names = POD_METRIC_NAMES if self.pods is not None else METRIC_NAMES
        if metric.name not in names:
            return (
                f"{source}.metric.name",
                f"skenario produces the {self.type} metrics {', '.join(names)}; the HPA would never get this one",
                metric.name,
            )
        if metric.name == "consumer_lag" and not stream:
            message = "the workload consumes no stream, so there is no lag (set spec.workload.stream)"
            return f"{source}.metric.name", message, metric.name
        return None


def _value_or_average(target: MetricTargetSpec) -> MetricTarget:
    """An Object or External target: the average per pod when that is what counts, else the value."""
    if target.average_value is not None and (target.type == "AverageValue" or target.value is None):
        return AverageValueTarget(target.average_value)
    assert target.value is not None
    return ValueTarget(target.value)


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

    def unsimulated_metric(
        self, container: str, memory: bool = False, stream: bool = False
    ) -> tuple[str, str, str] | None:
        """The first metric skenario cannot produce (field path within the spec, message, value), if any."""
        for index, metric in enumerate(self.metrics):
            problem = metric.unsimulated(container, memory, stream)
            if problem is not None:
                path, message, value = problem
                return f"metrics.{index}.{path}", message, value
        return None

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
