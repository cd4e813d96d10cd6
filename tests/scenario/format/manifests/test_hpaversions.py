"""A HorizontalPodAutoscaler of autoscaling/v1, v2beta1, v2beta2 or v2 reads as the API server converts it.

Where upstream has conversion tests, their cases are restated here as data: the pairs of objects they
hold equivalent (`pkg/apis/autoscaling/v1/conversion_test.go`, `v2beta2/conversion_test.go`), the
defaults `v2beta1/defaults_test.go` expects, the annotations `v2beta1/conversion_test.go` expects to be
dropped without an error. Each case is a manifest as a user would keep it, and the autoscaling/v2
spec it must read as, written out in v2's own words.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from skenario.errors import ScenarioError
from skenario.scenario.format.manifests.hpa import HorizontalPodAutoscalerManifest, HPASpecModel
from skenario.scenario.format.manifests.hpaversions import (
    BEHAVIOR_ANNOTATION,
    CONVERSIONS,
    METRICS_ANNOTATION,
    read_hpa,
)
from skenario.scenario.format.manifests.vpa import VerticalPodAutoscalerManifest
from skenario.scenario.io import parse_document, yaml_documents

CPU_60 = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}
CPU_80 = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}


def read(text: str) -> HPASpecModel:
    ((data, root),) = yaml_documents(text, "hpa.yaml")
    return read_hpa(data, root, "hpa.yaml").manifest.spec


def v2(spec: dict[str, Any]) -> HPASpecModel:
    """The spec as autoscaling/v2 writes it."""
    document = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": spec}
    return HorizontalPodAutoscalerManifest.model_validate(document).spec


def manifest(version: str, spec: dict[str, Any], annotations: dict[str, str] | None = None) -> str:
    metadata: dict[str, Any] = {"name": "web"}
    if annotations is not None:
        metadata["annotations"] = annotations
    document = {"apiVersion": version, "kind": "HorizontalPodAutoscaler", "metadata": metadata, "spec": spec}
    return yaml.safe_dump(document, sort_keys=False)


REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def y(text: str) -> Any:
    """A value written in YAML's flow style, as a manifest writes it."""
    return yaml.safe_load(text)


def test_the_four_served_versions_are_the_ones_read() -> None:
    assert set(CONVERSIONS) == {"autoscaling/v1", "autoscaling/v2beta1", "autoscaling/v2beta2", "autoscaling/v2"}


# v1/conversion_test.go, TestConvert_autoscaling_HorizontalPodAutoscalerSpec_To_v1_HorizontalPodAutoscalerSpec:
# "TestConversionWithCPUUtilizationOnly" holds {min 1, max 3, CPU Utilization 60} and v1's {min 1, max 3,
# targetCPUUtilizationPercentage 60} equivalent.
def test_v1s_cpu_target_is_a_cpu_utilization_metric() -> None:
    spec = {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 60}
    assert read(manifest("autoscaling/v1", spec)) == v2(
        {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_60]}
    )


def test_v1_without_a_target_is_cpu_at_80_percent() -> None:
    """ "autoscaling/v1 formerly had an implicit default applied in the controller" (v1/conversion.go);
    minReplicas defaults to 1 (v1/defaults.go)."""
    assert read(manifest("autoscaling/v1", {"scaleTargetRef": REF, "maxReplicas": 5})) == v2(
        {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5, "metrics": [CPU_80]}
    )


# "TestConversionWithCPUAverageValueAndUtilizationBoth1": internal metrics [CPU AverageValue 300m, CPU
# Utilization 70] are v1's targetCPUUtilizationPercentage 70; the other metric is kept, in v1's (v2beta1's)
# shape, in the metrics annotation (Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler).
def test_v1s_other_metrics_come_from_the_annotation_before_the_cpu_target() -> None:
    others = '[{"type":"Resource","resource":{"name":"cpu","targetAverageValue":"300m"}}]'
    spec = {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 70}
    average = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "300m"}},
    }
    utilization = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
    }
    assert read(manifest("autoscaling/v1", spec, {METRICS_ANNOTATION: others})) == v2(
        {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 3, "metrics": [average, utilization]}
    )


def test_v1s_behavior_annotation_is_gos_internal_type_keyed_by_field_names_in_any_case() -> None:
    behavior = {
        "scaleDown": {"stabilizationWindowSeconds": 30, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}
    }
    expected = v2({"maxReplicas": 4, "metrics": [CPU_60], "behavior": behavior})
    for text in (
        '{"ScaleDown":{"StabilizationWindowSeconds":30,"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":60}]}}',
        '{"scaledown":{"stabilizationwindowseconds":30,"policies":[{"type":"Pods","value":1,"periodSeconds":60}]},'
        '"Unknown":1}',
    ):
        spec = {"maxReplicas": 4, "targetCPUUtilizationPercentage": 60}
        assert read(manifest("autoscaling/v1", spec, {BEHAVIOR_ANNOTATION: text})) == expected, text


# v2beta1/conversion_test.go, TestHorizontalPodAutoscalerAnnotations: empty, random and empty-array values of
# the round-trip annotations convert without an error, and leave nothing behind. The behavior annotation's
# "only move well-formed data" (v2beta1/conversion.go) drops a behavior that does not decode, or decodes to
# none (a wrong type in a field, as Go's encoding/json refuses it, too).
@pytest.mark.parametrize("value", ["", "abc", "[]", "{}", '{"ScaleUp": {"Policies": [{"Value": "4"}]}}'])
def test_a_behavior_annotation_that_does_not_decode_is_dropped(value: str) -> None:
    annotations = {
        "autoscaling.alpha.kubernetes.io/conditions": value,
        METRICS_ANNOTATION: value,
        BEHAVIOR_ANNOTATION: value,
        "autoscaling.alpha.kubernetes.io/current-metrics": value,
    }
    spec = read(manifest("autoscaling/v2beta1", {"maxReplicas": 3}, annotations))
    assert spec.behavior is None
    assert spec == v2({"maxReplicas": 3, "metrics": [CPU_80]})


# v2beta1/defaults_test.go, TestSetDefaultHPA: minReplicas defaults to 1 and is kept when set; no metrics is
# CPU at targetAverageUtilization 80 (DefaultCPUUtilization).
CPU_80_V2BETA1 = "[{type: Resource, resource: {name: cpu, targetAverageUtilization: 80}}]"


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (
            f"{{maxReplicas: 3, metrics: {CPU_80_V2BETA1}}}",
            {"minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_80]},
        ),
        (
            f"{{minReplicas: 3, maxReplicas: 5, metrics: {CPU_80_V2BETA1}}}",
            {"minReplicas": 3, "maxReplicas": 5, "metrics": [CPU_80]},
        ),
        ("{minReplicas: 1, maxReplicas: 3}", {"minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_80]}),
    ],
)
def test_v2beta1_defaults(written: str, expected: dict[str, Any]) -> None:
    assert read(manifest("autoscaling/v2beta1", y(written))) == v2(expected)


# v2beta1/conversion.go's per-source conversions: which field set chooses the target type.
METRICS_V2BETA1 = [
    ("{type: Resource, resource: {name: cpu, targetAverageUtilization: 60}}",
     "{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}"),
    ("{type: Resource, resource: {name: cpu, targetAverageValue: 250m}}",
     "{type: Resource, resource: {name: cpu, target: {type: AverageValue, averageValue: 250m}}}"),
    ("{type: ContainerResource, containerResource: {name: cpu, container: app, targetAverageUtilization: 50}}",
     "{type: ContainerResource, containerResource: {name: cpu, container: app,"
     " target: {type: Utilization, averageUtilization: 50}}}"),
    ("{type: Pods, pods: {metricName: in_flight, targetAverageValue: '2'}}",
     "{type: Pods, pods: {metric: {name: in_flight}, target: {type: AverageValue, averageValue: '2'}}}"),
    ("{type: Object, object: {target: {kind: Service, name: web}, metricName: in_flight, targetValue: '10'}}",
     "{type: Object, object: {describedObject: {kind: Service, name: web}, metric: {name: in_flight},"
     " target: {type: Value, value: '10'}}}"),
    ("{type: Object, object: {target: {kind: Service, name: web}, metricName: in_flight, targetValue: '10',"
     " averageValue: '2'}}",
     "{type: Object, object: {describedObject: {kind: Service, name: web}, metric: {name: in_flight},"
     " target: {type: AverageValue, value: '10', averageValue: '2'}}}"),
    ("{type: External, external: {metricName: in_flight, targetValue: '10'}}",
     "{type: External, external: {metric: {name: in_flight}, target: {type: Value, value: '10'}}}"),
    ("{type: External, external: {metricName: in_flight, targetAverageValue: '2'}}",
     "{type: External, external: {metric: {name: in_flight}, target: {type: AverageValue, averageValue: '2'}}}"),
]  # fmt: skip


@pytest.mark.parametrize(("written", "expected"), METRICS_V2BETA1)
def test_v2beta1_metrics_become_v2_targets(written: str, expected: str) -> None:
    assert read(manifest("autoscaling/v2beta1", {"maxReplicas": 3, "metrics": [y(written)]})) == v2(
        {"maxReplicas": 3, "metrics": [y(expected)]}
    )


# v2beta2/conversion_test.go, TestConvertRoundTrip: v2beta2 keeps the tolerances in annotations (written as
# resource.Quantity writes 0.1 and 0.2: 100m and 200m) and the rest of the behavior in its fields.
@pytest.mark.parametrize(
    ("behavior", "annotations", "expected"),
    [
        (  # "Complete HPA with scale-up tolerance"
            {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 2}]}},
            {"autoscaling.alpha.kubernetes.io/scale-up-tolerance": "100m"},
            {"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 2}], "tolerance": "0.1"}},
        ),
        (  # "Scale-down and scale-up tolerances"
            None,
            {
                "autoscaling.alpha.kubernetes.io/scale-up-tolerance": "100m",
                "autoscaling.alpha.kubernetes.io/scale-down-tolerance": "200m",
            },
            {"scaleUp": {"tolerance": "0.1"}, "scaleDown": {"tolerance": "0.2"}},
        ),
        (  # "Scale-down tolerance only"
            None,
            {"autoscaling.alpha.kubernetes.io/scale-down-tolerance": "200m"},
            {"scaleDown": {"tolerance": "0.2"}},
        ),
    ],
)
def test_v2beta2s_tolerances_come_from_its_annotations(
    behavior: dict[str, Any] | None, annotations: dict[str, str], expected: dict[str, Any]
) -> None:
    spec: dict[str, Any] = {"minReplicas": 1, "maxReplicas": 3, "metrics": [CPU_60]}
    if behavior is not None:
        spec["behavior"] = behavior
    assert read(manifest("autoscaling/v2beta2", spec, annotations)) == v2({**spec, "behavior": expected})


def test_v2_ignores_the_older_versions_annotations() -> None:
    """Convert_v2_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler drops them unread."""
    annotations = {BEHAVIOR_ANNOTATION: '{"ScaleUp":{"StabilizationWindowSeconds":30}}', METRICS_ANNOTATION: "x"}
    spec = {"maxReplicas": 3, "metrics": [CPU_60]}
    assert read(manifest("autoscaling/v2", spec, annotations)) == v2(spec)


TOLERANCE_UP = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"
MISTAKES = [
    ("autoscaling/v3", "{maxReplicas: 3}", None,
     "apiVersion", "autoscaling/v2, autoscaling/v2beta2, autoscaling/v2beta1, autoscaling/v1"),
    ("autoscaling/v1", "{maxReplicas: 3, targetCPUUtilizationPercentage: 0}", None,
     "spec.targetCPUUtilizationPercentage", "greater than 0"),
    ("autoscaling/v1", "{maxReplicas: 3, targetCPUUtilizationPercentage: 60%}", None,
     "spec.targetCPUUtilizationPercentage", "integer"),
    ("autoscaling/v1", "{maxReplicas: 3, metrics: []}", None, "spec.metrics", "not a known field"),
    ("autoscaling/v2beta1",
     "{maxReplicas: 3, metrics: [{type: Resource, resource: {name: cpu, targetAverageUtilization: 60%}}]}",
     None, "spec.metrics.0.resource.targetAverageUtilization", "integer"),
    ("autoscaling/v2beta1", "{maxReplicas: 3, metrics: [{type: Resource, resource: {name: cpu, target: {}}}]}", None,
     "spec.metrics.0.resource.target", "not a known field"),
    ("autoscaling/v2beta1", "{maxReplicas: 3, metrics: [{type: Pods, pods: {metricName: in_flight}}]}", None,
     "spec.metrics.0.pods.targetAverageValue", "required"),
    ("autoscaling/v2beta1", "{maxReplicas: 3, metrics: [{type: Pods, pods: {targetAverageValue: '1'}}]}", None,
     "spec.metrics.0.pods.metricName", "required"),
    ("autoscaling/v2beta2", "{maxReplicas: 3, behavior: {scaleUp: {tolerance: '0.1'}}}", None,
     "spec.behavior.scaleUp.tolerance", "v2beta2"),
    ("autoscaling/v2beta2", "{maxReplicas: 3}", {TOLERANCE_UP: "ten"},
     f"metadata.annotations.{TOLERANCE_UP}", "failed to parse"),
    ("autoscaling/v1", "{maxReplicas: 3}", {METRICS_ANNOTATION: "{not json"},
     f"metadata.annotations.{METRICS_ANNOTATION}", "JSON list"),
    ("autoscaling/v1", "{maxReplicas: 3}",
     {METRICS_ANNOTATION: '[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":0}}]'},
     f"metadata.annotations.{METRICS_ANNOTATION}.0.resource.targetAverageUtilization", "greater than 0"),
]  # fmt: skip


@pytest.mark.parametrize(("version", "spec", "annotations", "field", "words"), MISTAKES)
def test_a_mistake_names_the_field_as_written(
    version: str, spec: str, annotations: dict[str, str] | None, field: str, words: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        read(manifest(version, y(spec), annotations))
    error = info.value
    assert error.file == "hpa.yaml" and error.field == field and error.line is not None, str(error)
    assert words in str(error), str(error)


def test_another_kinds_apiversion_error_names_its_own_version() -> None:
    """A Literal's error says the value the model takes: a VPA's wrong apiVersion is not told to be
    skenario's (the message that once read "must be 'skenario.dev/v1alpha1', got 'autoscaling/v1'")."""
    text = "apiVersion: autoscaling.k8s.io/v2\nkind: VerticalPodAutoscaler\nspec: {}\n"
    with pytest.raises(ScenarioError) as info:
        parse_document(text, VerticalPodAutoscalerManifest, "vpa.yaml", "a VPA")
    assert "must be 'autoscaling.k8s.io/v1', got 'autoscaling.k8s.io/v2'" in str(info.value)
    assert "skenario.dev" not in str(info.value)
