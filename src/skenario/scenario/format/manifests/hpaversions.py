"""A HorizontalPodAutoscaler of any version the API server serves, converted to autoscaling/v2 as it converts it.

Clusters still hold HPAs written in older versions; the API server keeps one internal object and
serves it in each, so `kubectl get hpa web -o yaml` may give any of these:

    autoscaling/v1       spec.targetCPUUtilizationPercentage: 60
                         -> metrics: [{type: Resource, resource: {name: cpu,
                                       target: {type: Utilization, averageUtilization: 60}}}]
                         no target and no metrics annotation -> CPU at 80% (DefaultCPUUtilization)
    autoscaling/v2beta1  resource: {name: cpu, targetAverageUtilization: 60}
                         -> resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
    autoscaling/v2beta2  as v2, without `tolerance` (two annotations carry it)
    autoscaling/v2       as written

What a version cannot say travels in `autoscaling.alpha.kubernetes.io/*` annotations, and is read
as far as upstream reads it into the internal object: v1's `metrics` (the other metrics, in
v2beta1's shape) and `behavior` (Go's internal `HorizontalPodAutoscalerBehavior`, marshalled
without json tags, so keyed by Go field names matched without regard to case; a behavior that does
not decode, or decodes empty, is dropped as upstream drops it), v2beta1's `behavior`, v2beta2's
`scale-up-tolerance` and `scale-down-tolerance`. The status annotations are not read: skenario
has no use for a status. Restated from kubernetes `pkg/apis/autoscaling/{v1,v2beta1,v2beta2,v2}/conversion.go`
and their `defaults.go` (no code copied).

Every mistake names the field the user wrote: the converted object is validated as autoscaling/v2
(`manifests.hpa`), and each of its paths is mapped back to the one it came from
(`spec.metrics.0.resource.target.averageUtilization` is v2beta1's `...resource.targetAverageUtilization`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import yaml
from pydantic import Field

from skenario.errors import ScenarioError
from skenario.scenario.format.base import Loose, Spec
from skenario.scenario.format.manifests.hpa import HorizontalPodAutoscalerManifest
from skenario.scenario.format.units import milli_quantity
from skenario.scenario.io import line_of, validate_node

KIND = "HorizontalPodAutoscaler"
SHAPE = (
    "a manifest is a mapping with apiVersion (autoscaling/v2 or an older version), kind: HorizontalPodAutoscaler "
    "and spec"
)

# `autoscaling.MetricSpecsAnnotation`, `BehaviorSpecsAnnotation`, `ToleranceScaleUpAnnotation`,
# `ToleranceScaleDownAnnotation` (pkg/apis/autoscaling/annotations.go).
METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
TOLERANCE_ANNOTATIONS = {
    "scaleUp": "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
    "scaleDown": "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
}
DEFAULT_CPU_UTILIZATION = 80
"""`autoscaling.DefaultCPUUtilization`: v1's target when it names none (and v2beta1's, v2beta2's, v2's default)."""

Path = tuple[int | str, ...]
S = TypeVar("S", bound=Spec)


class _Origins:
    """Where each path of the converted object was written: the longest noted prefix wins, and the rest of
    the path follows it unless the whole part came from one field (v1's `targetCPUUtilizationPercentage`)."""

    def __init__(self) -> None:
        self._origin: dict[Path, tuple[Path, bool]] = {}

    def note(self, converted: Path, written: Path, *, whole: bool = False) -> None:
        self._origin[converted] = (written, whole)

    def rename(self, path: list[int | str]) -> list[int | str]:
        for cut in range(len(path), 0, -1):
            found = self._origin.get(tuple(path[:cut]))
            if found is not None:
                written, whole = found
                return list(written) if whole else [*written, *path[cut:]]
        return path


@dataclass(frozen=True)
class ReadHPA:
    """A HorizontalPodAutoscaler manifest as autoscaling/v2, and where each of its fields was written."""

    manifest: HorizontalPodAutoscalerManifest
    api_version: str  # as written
    rename: Callable[[list[int | str]], list[int | str]]


# -- the shapes of the older versions: their fields and containers, values left to autoscaling/v2 ---------------


class _Resource(Spec):
    """v2beta1's (and v1's annotation's) `ResourceMetricSource`."""

    name: Any = None
    target_average_utilization: Any = None
    target_average_value: Any = None


class _ContainerResource(_Resource):
    container: Any = None


class _Pods(Spec):
    metric_name: Any = None
    target_average_value: Any  # a Quantity, not a pointer: absent is 0, which validation refuses
    selector: Any = None


class _Object(Spec):
    target: Any = None
    metric_name: Any = None
    target_value: Any  # a Quantity, not a pointer: absent is 0, which validation refuses
    selector: Any = None
    average_value: Any = None


class _External(Spec):
    metric_name: Any = None
    metric_selector: Any = None
    target_value: Any = None
    target_average_value: Any = None


class _Metric(Spec):
    type: Any = None
    object: _Object | None = None
    pods: _Pods | None = None
    resource: _Resource | None = None
    container_resource: _ContainerResource | None = None
    external: _External | None = None


class _V2beta1Spec(Spec):
    scale_target_ref: Any = None
    min_replicas: Any = None
    max_replicas: Any = None
    metrics: list[_Metric] | None = None


class _V1Spec(Spec):
    scale_target_ref: Any = None
    min_replicas: Any = None
    max_replicas: Any = None
    target_cpu_utilization_percentage: Any = Field(None, alias="targetCPUUtilizationPercentage")


class _Older(Spec, Generic[S]):
    """A whole document of an older version (its apiVersion checked before), with that version's spec."""

    api_version: str
    kind: Literal["HorizontalPodAutoscaler"]
    metadata: Loose | None = None
    spec: S
    status: Loose | None = None


# -- metrics of v2beta1's shape ------------------------------------------------------------------------------------


def _given(source: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {key: source[key] for key in keys if key in source}


def _set(**fields: Any) -> dict[str, Any]:
    """The fields that are set (a Go pointer that is not nil)."""
    return {key: value for key, value in fields.items() if value is not None}


def _resource(source: dict[str, Any], at: Path, written: Path, origins: _Origins) -> dict[str, Any]:
    """`Convert_v2beta1_ResourceMetricSource_To_autoscaling_ResourceMetricSource` (and its ContainerResource
    and v1 twins): a utilization makes the target Utilization, else AverageValue."""
    utilization, value = source.get("targetAverageUtilization"), source.get("targetAverageValue")
    kind = "AverageValue" if utilization is None else "Utilization"
    target = {"type": kind, **_set(averageUtilization=utilization, averageValue=value)}
    for part in ((*at, "target"), (*at, "target", "type")):
        origins.note(part, written)
    origins.note((*at, "target", "averageUtilization"), (*written, "targetAverageUtilization"))
    origins.note((*at, "target", "averageValue"), (*written, "targetAverageValue"))
    return {**_given(source, "name", "container"), "target": target}


def _identifier(source: dict[str, Any], selector: str, at: Path, written: Path, origins: _Origins) -> dict[str, Any]:
    """`MetricIdentifier{Name: in.MetricName, Selector: in.<selector>}`."""
    origins.note((*at, "metric"), written)
    origins.note((*at, "metric", "name"), (*written, "metricName"))
    origins.note((*at, "metric", "selector"), (*written, selector))
    metric = _given(source, "metricName")
    if "metricName" in metric:
        metric = {"name": metric["metricName"]}
    if source.get(selector) is not None:
        metric["selector"] = source[selector]
    return metric


def _pods(source: dict[str, Any], at: Path, written: Path, origins: _Origins) -> dict[str, Any]:
    """`Convert_v2beta1_PodsMetricSource_To_autoscaling_PodsMetricSource`: an AverageValue target."""
    origins.note((*at, "target"), written)
    origins.note((*at, "target", "averageValue"), (*written, "targetAverageValue"))
    return {
        "metric": _identifier(source, "selector", at, written, origins),
        "target": {"type": "AverageValue", "averageValue": source.get("targetAverageValue")},
    }


def _object(source: dict[str, Any], at: Path, written: Path, origins: _Origins) -> dict[str, Any]:
    """`Convert_v2beta1_ObjectMetricSource_To_autoscaling_ObjectMetricSource`: AverageValue when an average
    value is given, else Value; the value is always set."""
    average = source.get("averageValue")
    kind = "Value" if average is None else "AverageValue"
    target = {"type": kind, "value": source.get("targetValue"), **_set(averageValue=average)}
    origins.note((*at, "describedObject"), (*written, "target"))
    origins.note((*at, "target"), written)
    origins.note((*at, "target", "value"), (*written, "targetValue"))
    origins.note((*at, "target", "averageValue"), (*written, "averageValue"))
    converted = {"metric": _identifier(source, "selector", at, written, origins), "target": target}
    if "target" in source:
        converted["describedObject"] = source["target"]
    return converted


def _external(source: dict[str, Any], at: Path, written: Path, origins: _Origins) -> dict[str, Any]:
    """`Convert_v2beta1_ExternalMetricSource_To_autoscaling_ExternalMetricSource`: Value when a value is
    given, else AverageValue."""
    value, average = source.get("targetValue"), source.get("targetAverageValue")
    target = {"type": "AverageValue" if value is None else "Value", **_set(value=value, averageValue=average)}
    origins.note((*at, "target"), written)
    origins.note((*at, "target", "value"), (*written, "targetValue"))
    origins.note((*at, "target", "averageValue"), (*written, "targetAverageValue"))
    return {"metric": _identifier(source, "metricSelector", at, written, origins), "target": target}


_SOURCES: dict[str, Callable[[dict[str, Any], Path, Path, _Origins], dict[str, Any]]] = {
    "resource": _resource,
    "containerResource": _resource,
    "pods": _pods,
    "object": _object,
    "external": _external,
}


def _metric(metric: dict[str, Any], at: Path, written: Path, origins: _Origins) -> dict[str, Any]:
    """`Convert_v2beta1_MetricSpec_To_autoscaling_MetricSpec`: the type kept, each source converted."""
    origins.note(at, written)
    converted = _given(metric, "type")
    for key, convert in _SOURCES.items():
        source = metric.get(key)
        if isinstance(source, dict):
            converted[key] = convert(source, (*at, key), (*written, key), origins)
    return converted


def _default_metrics() -> list[dict[str, Any]]:
    """`SetDefaults_HorizontalPodAutoscaler`, and v1's implicit default: CPU at 80% utilisation."""
    target = {"type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}
    return [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]


# -- annotations ---------------------------------------------------------------------------------------------------


def _annotations(document: dict[str, Any]) -> dict[str, Any]:
    metadata = document.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    return annotations if isinstance(annotations, dict) else {}


def _annotation(document: dict[str, Any], key: str, root: yaml.Node | None, source: str) -> str | None:
    """An annotation's value; annotations are strings (`map[string]string`), so another value is refused."""
    value = _annotations(document).get(key)
    if value is None or isinstance(value, str):
        return value
    path = ("metadata", "annotations", key)
    raise _problem("an annotation's value is a string (quote it)", path, value, root, source)


def _problem(message: str, path: Path, value: Any, root: yaml.Node | None, source: str) -> ScenarioError:
    return ScenarioError(
        message, file=source, field=".".join(map(str, path)), value=value, line=line_of(root, list(path))
    )


class _GoJSONError(ValueError):
    """JSON that `encoding/json` would not decode into the Go type."""


# Go's struct fields, by JSON key, for what `encoding/json` reads from an annotation: None is any value kept
# as it is (a selector, an object reference), a str the kind of scalar, a dict a struct, a list a slice of one.
_GoType = Any
_INT32: _GoType = "int32"
_STRING: _GoType = "string"
_QUANTITY: _GoType = "quantity"
_V1_RESOURCE = {"name": _STRING, "targetAverageUtilization": _INT32, "targetAverageValue": _QUANTITY}
_V1_METRIC: dict[str, _GoType] = {
    "type": _STRING,
    "object": {
        "target": None, "metricName": _STRING, "targetValue": _QUANTITY, "selector": None, "averageValue": _QUANTITY,
    },
    "pods": {"metricName": _STRING, "targetAverageValue": _QUANTITY, "selector": None},
    "resource": _V1_RESOURCE,
    "containerResource": {**_V1_RESOURCE, "container": _STRING},
    "external": {
        "metricName": _STRING, "metricSelector": None, "targetValue": _QUANTITY, "targetAverageValue": _QUANTITY,
    },
}  # fmt: skip
_RULES: dict[str, _GoType] = {
    "StabilizationWindowSeconds": _INT32,
    "SelectPolicy": _STRING,
    "Policies": [{"Type": _STRING, "Value": _INT32, "PeriodSeconds": _INT32}],
    "Tolerance": _QUANTITY,
}
_BEHAVIOR: dict[str, _GoType] = {"ScaleUp": _RULES, "ScaleDown": _RULES}
# Go's zero values, for the fields of a struct that are not pointers (a policy's), when absent.
_ZERO = {"Type": "", "Value": 0, "PeriodSeconds": 0}


def _go_decoded(value: Any, kind: _GoType, where: str) -> Any:
    """`value` as `encoding/json` decodes it into a field of Go type `kind`: struct keys matched exactly, else
    regardless of case, unknown keys skipped, null leaving the field unset; a wrong type is a _GoJSONError."""
    if kind is None or value is None:
        return value
    if isinstance(kind, dict):
        if not isinstance(value, dict):
            raise _GoJSONError(f"{where}: expected an object, not {json.dumps(value)}")
        decoded: dict[str, Any] = {}
        for key, item in value.items():
            field = key if key in kind else next((name for name in kind if name.lower() == key.lower()), None)
            if field is not None:
                decoded[field] = _go_decoded(item, kind[field], f"{where}.{field}")
        return {field: item for field, item in decoded.items() if item is not None}
    if isinstance(kind, list):
        if not isinstance(value, list):
            raise _GoJSONError(f"{where}: expected an array, not {json.dumps(value)}")
        return [_go_decoded(item, kind[0], f"{where}.{i}") for i, item in enumerate(value)]
    if kind == _STRING and not isinstance(value, str):
        raise _GoJSONError(f"{where}: expected a string, not {json.dumps(value)}")
    if kind == _INT32 and (isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2**31):
        raise _GoJSONError(f"{where}: expected a whole number (int32), not {json.dumps(value)}")
    if kind == _QUANTITY:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise _GoJSONError(f"{where}: expected a quantity, not {json.dumps(value)}")
        try:
            milli_quantity(value)
        except ValueError as exc:
            raise _GoJSONError(f"{where}: {exc}") from None
    return value


def _metrics_annotation(
    text: str, at: Path, written: Path, origins: _Origins, root: yaml.Node | None, source: str
) -> list[dict[str, Any]]:
    """v1's other metrics: `json.Unmarshal` into `[]autoscalingv1.MetricSpec`, then each converted as
    `Convert_v1_MetricSpec_To_autoscaling_MetricSpec`; JSON that does not decode fails the conversion."""
    try:
        decoded = _go_decoded(json.loads(text), [_V1_METRIC], "")
    except (ValueError, RecursionError) as exc:
        message = f"not the JSON list of autoscaling/v1 metrics upstream keeps here: {str(exc).strip(': ')}"
        raise _problem(message, written, text, root, source) from None
    return [_metric(metric or {}, (*at, i), (*written, i), origins) for i, metric in enumerate(decoded or [])]


def _behavior_annotation(text: str | None) -> dict[str, Any] | None:
    """`json.Unmarshal` of the internal `HorizontalPodAutoscalerBehavior` (Go field names, any case), as v1 and
    v2beta1 read it: None unless it decodes and says something ("only move well-formed data")."""
    if text is None:
        return None
    try:
        decoded = _go_decoded(json.loads(text), _BEHAVIOR, "")
    except (ValueError, RecursionError):
        return None
    if not decoded:
        return None
    behavior: dict[str, Any] = {}
    for rules_key, key in (("ScaleUp", "scaleUp"), ("ScaleDown", "scaleDown")):
        rules = decoded.get(rules_key)
        if rules is None:
            continue
        converted: dict[str, Any] = {}
        for go, camel in (
            ("StabilizationWindowSeconds", "stabilizationWindowSeconds"),
            ("SelectPolicy", "selectPolicy"),
            ("Tolerance", "tolerance"),
        ):
            if go in rules:
                converted[camel] = rules[go]
        if "Policies" in rules:
            converted["policies"] = [
                {"type": p["Type"], "value": p["Value"], "periodSeconds": p["PeriodSeconds"]}
                for p in ({**_ZERO, **policy} for policy in rules["Policies"])
            ]
        behavior[key] = converted
    return behavior


# -- each version --------------------------------------------------------------------------------------------------

Conversion = Callable[[dict[str, Any], yaml.Node | None, str], tuple[dict[str, Any], _Origins]]


def _from_v2(document: dict[str, Any], root: yaml.Node | None, source: str) -> tuple[dict[str, Any], _Origins]:
    """`Convert_v2_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`: as written (the round-trip
    annotations are dropped, so none is read)."""
    return document, _Origins()


def _from_v2beta2(document: dict[str, Any], root: yaml.Node | None, source: str) -> tuple[dict[str, Any], _Origins]:
    """`Convert_v2beta2_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`: v2's fields but no
    `tolerance`, which the scale-up and scale-down tolerance annotations carry (a value that is not a
    quantity fails the conversion)."""
    origins = _Origins()
    spec = document.get("spec")
    behavior = spec.get("behavior") if isinstance(spec, dict) else None
    for key in TOLERANCE_ANNOTATIONS:
        rules = behavior.get(key) if isinstance(behavior, dict) else None
        if isinstance(rules, dict) and "tolerance" in rules:
            path = ("spec", "behavior", key, "tolerance")
            message = (
                f"is not a field of autoscaling/v2beta2 (autoscaling/v2 has it; v2beta2 keeps it in the annotation "
                f"{TOLERANCE_ANNOTATIONS[key]})"
            )
            raise _problem(message, path, None, root, source)
    converted = {**document, "apiVersion": "autoscaling/v2"}  # the fields are v2's
    for key, annotation in TOLERANCE_ANNOTATIONS.items():
        text = _annotation(document, annotation, root, source)
        if text is None:
            continue
        written = ("metadata", "annotations", annotation)
        try:
            milli_quantity(text)
        except ValueError as exc:
            raise _problem(f"failed to parse annotation: {exc}", written, text, root, source) from None
        spec = dict(converted.get("spec") or {})
        behavior = dict(spec.get("behavior") or {})
        behavior[key] = {**(behavior.get(key) or {}), "tolerance": text}
        converted = {**converted, "spec": {**spec, "behavior": behavior}}
        origins.note(("spec", "behavior", key, "tolerance"), written)
    return converted, origins


def _from_v2beta1(document: dict[str, Any], root: yaml.Node | None, source: str) -> tuple[dict[str, Any], _Origins]:
    """`Convert_v2beta1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler` after
    `SetDefaults_HorizontalPodAutoscaler` (v2beta1/defaults.go): each metric converted from v2beta1's
    shape, CPU at 80% when there are none, the behavior from its annotation."""
    validate_node(document, root, _Older[_V2beta1Spec], source, SHAPE)
    origins = _Origins()
    spec: dict[str, Any] = document["spec"]
    converted = _given(spec, "scaleTargetRef", "minReplicas", "maxReplicas")
    metrics = spec.get("metrics") or []
    converted["metrics"] = [
        _metric(metric, ("spec", "metrics", i), ("spec", "metrics", i), origins) for i, metric in enumerate(metrics)
    ] or _default_metrics()
    behavior = _behavior_annotation(_annotation(document, BEHAVIOR_ANNOTATION, root, source))
    if behavior is not None:
        converted["behavior"] = behavior
        origins.note(("spec", "behavior"), ("metadata", "annotations", BEHAVIOR_ANNOTATION))
    return _as_v2(document, converted), origins


def _from_v1(document: dict[str, Any], root: yaml.Node | None, source: str) -> tuple[dict[str, Any], _Origins]:
    """`Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler` with its spec's
    `Convert_v1_HorizontalPodAutoscalerSpec_To_autoscaling_HorizontalPodAutoscalerSpec`: the metrics
    annotation's metrics first, then the CPU target; with neither, CPU at 80% (the implicit default v1
    once applied in the controller); the behavior from its annotation."""
    validate_node(document, root, _Older[_V1Spec], source, SHAPE)
    origins = _Origins()
    spec: dict[str, Any] = document["spec"]
    converted = _given(spec, "scaleTargetRef", "minReplicas", "maxReplicas")
    metrics: list[dict[str, Any]] = []
    others = _annotation(document, METRICS_ANNOTATION, root, source)
    if others is not None:
        written = ("metadata", "annotations", METRICS_ANNOTATION)
        metrics += _metrics_annotation(others, ("spec", "metrics"), written, origins, root, source)
    cpu = spec.get("targetCPUUtilizationPercentage")
    if cpu is not None:
        at = ("spec", "metrics", len(metrics))
        origins.note(at, ("spec", "targetCPUUtilizationPercentage"), whole=True)
        target = {"type": "Utilization", "averageUtilization": cpu}
        metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": target}})
    converted["metrics"] = metrics or _default_metrics()
    behavior = _behavior_annotation(_annotation(document, BEHAVIOR_ANNOTATION, root, source))
    if behavior is not None:
        converted["behavior"] = behavior
        origins.note(("spec", "behavior"), ("metadata", "annotations", BEHAVIOR_ANNOTATION))
    return _as_v2(document, converted), origins


def _as_v2(document: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": KIND, "metadata": document.get("metadata"), "spec": spec}


CONVERSIONS: dict[str, Conversion] = {
    "autoscaling/v2": _from_v2,
    "autoscaling/v2beta2": _from_v2beta2,
    "autoscaling/v2beta1": _from_v2beta1,
    "autoscaling/v1": _from_v1,
}
"""Each apiVersion of a HorizontalPodAutoscaler the API server has served, and how it becomes autoscaling/v2."""


def read_hpa(data: Any, root: yaml.Node | None, source: str) -> ReadHPA:
    """A HorizontalPodAutoscaler manifest (`root` its node tree, for lines) read as the API server reads it:
    converted from its apiVersion to autoscaling/v2, then validated; a mistake names `source`, the field as
    written, its line and the value."""
    if not isinstance(data, dict):
        validate_node(data, root, HorizontalPodAutoscalerManifest, source, SHAPE)  # names what it is instead
    version = data.get("apiVersion")
    if not isinstance(version, str) or version not in CONVERSIONS:
        accepted = ", ".join(CONVERSIONS)
        message = f"a HorizontalPodAutoscaler's apiVersion is one of {accepted}; the API server converts each to v2"
        raise _problem(message, ("apiVersion",), version, root, source)
    converted, origins = CONVERSIONS[version](data, root, source)
    manifest = validate_node(converted, root, HorizontalPodAutoscalerManifest, source, SHAPE, origins.rename)
    return ReadHPA(manifest, version, origins.rename)
