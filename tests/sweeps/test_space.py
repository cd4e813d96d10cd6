"""Settings, ranges and paths: parsed as written, put into the scenario document, refused in one line."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from skenario.core.time import SECOND
from skenario.scenario.loader import parse_scenario
from skenario.scenario.wiring.autoscalers import hpa_spec
from skenario.sweeps.space import (
    Range,
    Setting,
    SweepError,
    apply,
    parse_path,
    parse_range,
    parse_set,
    parse_setting,
    value_for,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KNATIVE_TARGET = "autoscaling.knative.dev/target"
HPA_TARGET = "autoscalers[0].spec.metrics[0].resource.target.averageUtilization"


@pytest.mark.parametrize(
    ("path", "parts"),
    [
        ("workload.replicas", ["spec", "workload", "replicas"]),
        ("spec.traffic[1].rate", ["spec", "traffic", 1, "rate"]),
        ("metadata.name", ["metadata", "name"]),
        (HPA_TARGET, ["spec", "autoscalers", 0, "spec", "metrics", 0, "resource", "target", "averageUtilization"]),
        (
            'autoscalers[0].manifest.spec.template.metadata.annotations["autoscaling.knative.dev/target"]',
            [*["spec", "autoscalers", 0, "manifest", "spec", "template", "metadata", "annotations"], KNATIVE_TARGET],
        ),
        ("a['b.c'][2][0].d", ["spec", "a", "b.c", 2, 0, "d"]),
    ],
)
def test_a_path_is_read_from_the_document_root(path: str, parts: list[str | int]) -> None:
    assert parse_path(path) == parts


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("workload..replicas", "cannot read it at '..replicas'"),
        ("workload.", "cannot read it at '.'"),
        (".workload", "cannot read it at '.workload'"),
        ("traffic[x]", "cannot read it at '[x]'"),
        ("traffic[-1]", "[-1] is not an index"),
        ("[0].rate", "a path starts with a key"),
        ("traffic[0]rate", "cannot read it at 'rate'"),
    ],
)
def test_a_malformed_path_is_refused_naming_the_option_and_the_path(path: str, message: str) -> None:
    with pytest.raises(SweepError, match=re.escape(message)) as raised:
        parse_setting(f"{path}=1")
    assert str(raised.value).startswith(f"--set path {path!r}: ")


def test_values_are_yaml_scalars_as_the_scenario_file_reads_them() -> None:
    found = parse_setting("x=50, 0.5,30s,true,'60',null")
    assert found == Setting("x", (50, 0.5, "30s", True, "60", None))
    assert [type(v) for v in found.values] == [int, float, str, bool, str, type(None)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("workload.replicas", "write PATH=V1,V2,..."),
        ("workload.replicas=", "write PATH=V1,V2,..."),
        ("=1,2", "write PATH=V1,V2,..."),
        ("workload.replicas=1,,2", "an empty value"),
        ("workload.replicas=[1", "'[1' is not a YAML value"),
        ("metadata.name=2024-01-01", "reads as a date, not a scalar; quote it"),
        ("workload.replicas=2,4,2", "2 is given twice"),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_option_and_the_text(text: str, message: str) -> None:
    with pytest.raises(SweepError, match=re.escape(message)) as raised:
        parse_setting(text, option="--set")
    assert str(raised.value).startswith(f"--set {text!r}: ")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("x=0.5..2", Range("x", 0.5, 2.0, "float")),
        ("x=-5..5", Range("x", -5.0, 5.0, "float")),
        ("workload.replicas=1..10:int", Range("workload.replicas", 1, 10, "int")),
        ("x=1..1000:log", Range("x", 1.0, 1000.0, "log")),
        ("x=30s..5m", Range("x", 30 * SECOND, 300 * SECOND, "float", duration=True)),
        ("x=0..5m", Range("x", 0, 300 * SECOND, "float", duration=True)),
        ("x=250ms..1m:log", Range("x", SECOND // 4, 60 * SECOND, "log", duration=True)),
    ],
)
def test_a_range_is_read_with_its_scale(text: str, expected: Range) -> None:
    found = parse_range(text)
    assert found == expected
    assert type(found.low) is type(expected.low)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x=10..5", "the low end 10 is not below the high end 5"),
        ("x=5..5", "the low end 5 is not below the high end 5"),
        ("x=a..b", "'a..b' is not a range; write LO..HI with numbers"),
        ("x=1..inf", "'1..inf' is not a range"),
        ("x=1e999..2e999", "'1e999..2e999' is not a range"),
        ("x=5", "'5' is not a range"),
        ("x=0..10:log", "a :log range needs a low end above 0, not 0"),
        ("x=-1..10:log", "a :log range needs a low end above 0, not -1"),
        ("x=1.5..4:int", "an :int range needs whole-number ends, not 1.5"),
        ("x=1..4:foo", "unknown scale ':foo'"),
        ("x=30s..5m:int", "a range of durations takes :log or nothing"),
        ("x=1..5m", "'1..5m' is not a range"),
        ("x=" + "9" * 5000 + "..1", "is not a range"),
    ],
)
def test_a_bad_range_is_one_line_naming_the_option_and_the_text(text: str, message: str) -> None:
    with pytest.raises(SweepError, match=re.escape(message)) as raised:
        parse_range(text, option="--space")
    line = str(raised.value)
    assert line.startswith("--space 'x=") and "\n" not in line and len(line) < 300


def test_a_set_of_one_range_is_a_range_and_anything_else_a_setting() -> None:
    assert parse_set("workload.replicas=1..4:int") == Range("workload.replicas", 1, 4, "int")
    assert parse_set("x=30s..5m") == Range("x", 30 * SECOND, 300 * SECOND, duration=True)
    assert parse_set("workload.deployment=../deployment.yaml") == Setting(
        "workload.deployment", ("../deployment.yaml",)
    )
    assert parse_set("x=1,2") == Setting("x", (1, 2))
    with pytest.raises(SweepError, match=re.escape("--set 'x=10..5': the low end 10")):
        parse_set("x=10..5")


def test_an_int_range_gives_each_whole_number_an_equal_share() -> None:
    space = Range("x", 1, 3, "int")  # 1 on [0, 1/3), 2 on [1/3, 2/3), 3 on [2/3, 1)
    assert [value_for(space, u) for u in (0.0, 0.333, 0.334, 0.666, 0.667, 0.999999)] == [1, 1, 2, 2, 3, 3]


def test_linear_log_and_duration_values() -> None:
    assert value_for(Range("x", 10.0, 20.0), 0.25) == 12.5
    assert value_for(Range("x", 1.0, 100.0, "log"), 0.5) == pytest.approx(10.0)  # 10^(2 * 0.5)
    durations = parse_range("x=30s..5m")
    assert [value_for(durations, u) for u in (0.0, 0.5, 1.0)] == ["30s", "2m45s", "5m"]  # 30 + 0.5 * 270 = 165 s
    assert value_for(parse_range("x=250ms..1s"), 0.5) == "625ms"


# A scenario document as yaml.safe_load reads one: nested mappings and lists, an inline HPA spec.
DOCUMENT: dict[str, Any] = {
    "apiVersion": "skenario.dev/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "web"},
    "spec": {
        "duration": "10m",
        "workload": {"replicas": 2},
        "traffic": [{"type": "poisson", "rate": "10/s"}, {"type": "poisson", "rate": "50/s", "start": "5m"}],
        "autoscalers": [
            {
                "type": "hpa",
                "spec": {
                    "minReplicas": 1,
                    "maxReplicas": 10,
                    "metrics": [
                        {"type": "Resource", "resource": {"name": "cpu", "target": {"averageUtilization": 60}}}
                    ],
                },
            }
        ],
    },
}


def test_apply_sets_nested_paths_on_a_copy() -> None:
    original = copy.deepcopy(DOCUMENT)
    found = apply(
        DOCUMENT,
        {HPA_TARGET: 75, "spec.traffic[1].rate": "80/s", "workload.replicas": 4, "metadata.name": "web-75"},
        base_dir=Path("."),
    )
    assert found["spec"]["autoscalers"][0]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 75
    assert found["spec"]["traffic"] == [
        {"type": "poisson", "rate": "10/s"},
        {"type": "poisson", "rate": "80/s", "start": "5m"},
    ]
    assert (found["spec"]["workload"], found["metadata"]) == ({"replicas": 4}, {"name": "web-75"})
    assert original == DOCUMENT


def test_apply_adds_a_missing_key_and_the_mappings_on_its_way() -> None:
    found = apply(
        DOCUMENT, {"autoscalers[0].spec.behavior.scaleDown.stabilizationWindowSeconds": 30}, base_dir=Path(".")
    )
    assert found["spec"]["autoscalers"][0]["spec"]["behavior"] == {"scaleDown": {"stabilizationWindowSeconds": 30}}


def test_apply_reaches_into_an_inline_manifest() -> None:
    manifest = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": {"maxReplicas": 10}}
    document = {"spec": {"autoscalers": [{"type": "hpa", "manifest": manifest}]}}
    found = apply(document, {"autoscalers[0].manifest.spec.maxReplicas": 20}, base_dir=Path("."))
    assert found["spec"]["autoscalers"][0]["manifest"]["spec"] == {"maxReplicas": 20}
    assert manifest["spec"] == {"maxReplicas": 10}


def test_apply_reads_a_manifest_file_and_inlines_it(tmp_path: Path) -> None:
    (tmp_path / "manifests").mkdir()
    written = (EXAMPLES / "manifests" / "web-hpa.yaml").read_text(encoding="utf-8")
    (tmp_path / "manifests" / "web-hpa.yaml").write_text(written, encoding="utf-8")
    document = yaml.safe_load((EXAMPLES / "hpa-step.yaml").read_text(encoding="utf-8"))
    window = "autoscalers[0].manifest.spec.behavior.scaleDown.stabilizationWindowSeconds"
    target = "autoscalers[0].manifest.spec.metrics[0].resource.target.averageUtilization"
    found = apply(document, {window: 30, target: 75}, base_dir=tmp_path)

    manifest = found["spec"]["autoscalers"][0]["manifest"]
    expected = yaml.safe_load(written)
    expected["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] = 30
    expected["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] = 75
    assert manifest == expected
    assert document["spec"]["autoscalers"][0]["manifest"] == "manifests/web-hpa.yaml"
    assert (tmp_path / "manifests" / "web-hpa.yaml").read_text(encoding="utf-8") == written

    # The scenario loader takes the inlined manifest, and the HPA reads the values set.
    scenario = parse_scenario(yaml.safe_dump(found, sort_keys=False))
    spec = hpa_spec(scenario.spec.autoscalers[0], tmp_path, "spec.autoscalers[0]")  # type: ignore[arg-type]
    assert spec.behavior is not None and spec.behavior.scale_down is not None
    assert spec.behavior.scale_down.stabilization_window_seconds == 30
    assert spec.metrics[0].resource is not None and spec.metrics[0].resource.target.average_utilization == 75


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "autoscalers[3].spec.minReplicas",
            "autoscalers[3] is past the end: there is 1 autoscaler (setting autoscalers[3].spec.minReplicas)",
        ),
        ("traffic[2].rate", "traffic[2] is past the end: traffic has 2 entries (setting traffic[2].rate)"),
        ("workload.replicas.max", "workload.replicas is 2, a value: the path cannot go into it"),
        ("autoscalers[0].type.x", "autoscalers[0].type is 'hpa', neither a mapping nor a manifest file"),
        ("autoscalers.type", "autoscalers is a list: give an index, such as [0], before .type"),
        ("workload[0]", "workload is a mapping, not a list: it has no entry [0]"),
        ("workload.resources[0].cpu", "workload.resources is not in the scenario, so it has no entry [0]"),
        ("spec.traffic[5]", "spec.traffic[5] is past the end: traffic has 2 entries"),
    ],
)
def test_apply_refuses_a_path_the_document_cannot_hold_saying_where_it_broke(path: str, message: str) -> None:
    with pytest.raises(SweepError) as raised:
        apply(DOCUMENT, {path: 1}, base_dir=Path("."))
    assert str(raised.value).startswith(message)


def test_apply_names_a_manifest_file_it_cannot_read(tmp_path: Path) -> None:
    document = {"spec": {"autoscalers": [{"type": "hpa", "manifest": "missing.yaml"}]}}
    with pytest.raises(
        SweepError, match=r"autoscalers\[0\].manifest is 'missing.yaml', neither a mapping nor a manifest"
    ):
        apply(document, {"autoscalers[0].manifest.spec.maxReplicas": 5}, base_dir=tmp_path)
    (tmp_path / "two.yaml").write_text("a: 1\n---\nb: 2\n", encoding="utf-8")
    document = {"spec": {"autoscalers": [{"type": "hpa", "manifest": "two.yaml"}]}}
    with pytest.raises(SweepError, match="is not one YAML mapping"):
        apply(document, {"autoscalers[0].manifest.spec.maxReplicas": 5}, base_dir=tmp_path)
