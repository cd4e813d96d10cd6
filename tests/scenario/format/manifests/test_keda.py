"""ScaledObject manifests read as KEDA's CRD, webhook and scalers read them; mistakes said with file, field, value."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from skenario.cli import cli
from skenario.errors import ScenarioError
from skenario.scenario.loader import load_scenario
from skenario.scenario.wiring.prepare import prepare

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: keda}
spec:
  duration: 10m
  workload:
    replicas: 0
    request: {cpuTime: 50ms}
    stream: {partitions: 4}
  traffic: {type: constant, rate: 5/s}
  autoscalers:
    - type: keda
      manifest: so.yaml
"""
MANIFEST = {
    "apiVersion": "keda.sh/v1alpha1",
    "kind": "ScaledObject",
    "metadata": {"name": "orders"},
    "spec": {
        "scaleTargetRef": {"name": "orders"},
        "triggers": [{"type": "kafka", "metadata": {"topic": "orders", "consumerGroup": "g", "lagThreshold": "5"}}],
    },
}


def write(tmp_path: Path, manifest: dict[str, object], scenario: str = SCENARIO) -> Path:
    (tmp_path / "so.yaml").write_text(yaml.safe_dump(manifest))
    path = tmp_path / "scenario.yaml"
    path.write_text(scenario)
    return path


def with_spec(**changes: object) -> dict[str, object]:
    spec = {**MANIFEST["spec"], **changes}  # type: ignore[dict-item]
    return {**MANIFEST, "spec": spec}


def with_trigger(trigger: dict[str, object]) -> dict[str, object]:
    return with_spec(triggers=[trigger])


def problem(tmp_path: Path, manifest: dict[str, object], scenario: str = SCENARIO) -> ScenarioError:
    path = write(tmp_path, manifest, scenario)
    with pytest.raises(ScenarioError) as caught:
        prepare(load_scenario(path), base_dir=tmp_path)
    return caught.value


def test_a_valid_scaled_object_builds_its_operator_and_hpa(tmp_path: Path) -> None:
    path = write(tmp_path, MANIFEST)
    prepared = prepare(load_scenario(path), base_dir=tmp_path)
    [(name, keda)] = prepared.workloads[
        "MAIN" if "MAIN" in prepared.workloads else next(iter(prepared.workloads))
    ].autoscalers
    assert name == "keda"  # the autoscaler's name in the scenario (its type: the manifest is a file)
    assert keda.spec.name == "orders" and keda.spec.hpa_name == "keda-hpa-orders"  # type: ignore[attr-defined]
    assert keda.hpa.spec.min_replicas == 1 and keda.hpa.spec.max_replicas == 100  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("manifest", "field", "says"),
    [
        (with_spec(minReplicaCount=20, maxReplicaCount=10), "spec", "minReplicaCount=20 must be less than or equal"),
        (
            with_spec(minReplicaCount=2, idleReplicaCount=2),
            "spec",
            "idleReplicaCount=2 must be less than minReplicaCount=2",
        ),
        (with_spec(idleReplicaCount=0), "spec", "idleReplicaCount=0 must be less than minReplicaCount=0"),
        (with_spec(pollingInterval=0), "spec.pollingInterval", "greater than or equal to 1"),
        (with_spec(triggers=[]), "spec.triggers", "at least 1"),
        (
            with_trigger({"type": "azure-queue", "metadata": {}}),
            "spec.triggers.0.type",
            "does not simulate the 'azure-queue'",
        ),
        (
            with_trigger({"type": "kafka", "metadata": {"topic": "t", "lagThreshold": "many"}}),
            "spec.triggers.0.metadata.lagThreshold",
            "must be a whole number",
        ),
        (
            with_trigger({"type": "kafka", "metadata": {"topic": "t", "lagThreshold": "0"}}),
            "spec.triggers.0.metadata.lagThreshold",
            "must be a positive number",
        ),
        (
            with_trigger(
                {"type": "kafka", "metadata": {"limitToPartitionsWithLag": "true", "allowIdleConsumers": "true"}}
            ),
            "spec.triggers.0.metadata.limitToPartitionsWithLag",
            "cannot be set simultaneously",
        ),
        (
            with_trigger({"type": "kafka", "metricType": "Utilization", "metadata": {"topic": "t"}}),
            "spec.triggers.0.metricType",
            "cpu and memory triggers only",
        ),
        (
            with_trigger(
                {
                    "type": "cron",
                    "metadata": {
                        "timezone": "Etc/UTC",
                        "start": "0 6 * * *",
                        "end": "0 6 * * *",
                        "desiredReplicas": "3",
                    },
                }
            ),
            "spec.triggers.0.metadata.end",
            "can not have exactly same time input",
        ),
        (
            with_trigger(
                {
                    "type": "cron",
                    "metadata": {
                        "timezone": "Etc/UTC",
                        "start": "-30 * * * *",
                        "end": "0 6 * * *",
                        "desiredReplicas": "3",
                    },
                }
            ),
            "spec.triggers.0.metadata.start",
            "error parsing start schedule",
        ),
        (
            with_trigger(
                {
                    "type": "cron",
                    "metadata": {
                        "timezone": "Mars/Olympus",
                        "start": "0 6 * * *",
                        "end": "0 7 * * *",
                        "desiredReplicas": "3",
                    },
                }
            ),
            "spec.triggers.0.metadata.timezone",
            "unknown timezone",
        ),
        (
            with_trigger(
                {"type": "cron", "metadata": {"timezone": "Etc/UTC", "start": "0 6 * * *", "end": "0 7 * * *"}}
            ),
            "spec.triggers.0.metadata.desiredReplicas",
            "no desiredReplicas specified",
        ),
        (
            with_trigger({"type": "prometheus", "metadata": {"query": "sum(rate(x[1m]))", "threshold": "5"}}),
            "spec.triggers.0.metadata.query",
            "say what this query measures",
        ),
        (
            with_trigger({"type": "prometheus", "metadata": {"query": "in_flight"}}),
            "spec.triggers.0.metadata.threshold",
            "'threshold' is required",
        ),
        (
            with_trigger({"type": "cpu", "metricType": "Utilization", "metadata": {"value": "sixty"}}),
            "spec.triggers.0.metadata.value",
            "whole percentage",
        ),
        (
            with_spec(
                fallback={"failureThreshold": 3, "replicas": 5},
                triggers=[{"type": "cpu", "metricType": "Utilization", "metadata": {"value": "60"}}],
            ),
            "spec.fallback",
            "has to have the `AverageValue` type",
        ),
        (
            with_spec(advanced={"scalingModifiers": {"formula": "a + b", "target": "5"}}),
            "spec.advanced.scalingModifiers.formula",
            "reads a, b, which no trigger is named",
        ),
        (
            with_spec(advanced={"scalingModifiers": {"formula": "1", "target": "0"}}),
            "spec.advanced.scalingModifiers.target",
            "above 0",
        ),
    ],
)
def test_mistakes_name_the_file_field_and_value(
    tmp_path: Path, manifest: dict[str, object], field: str, says: str
) -> None:
    error = problem(tmp_path, manifest)
    assert error.file is not None and error.file.endswith("so.yaml")
    assert error.field is not None and error.field.startswith(field), error.field
    assert says in str(error)


def test_a_queue_trigger_needs_a_stream(tmp_path: Path) -> None:
    error = problem(tmp_path, MANIFEST, SCENARIO.replace("    stream: {partitions: 4}\n", ""))
    assert error.field == "spec.triggers.0.type" and "spec.workload.stream" in str(error)


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    path = write(tmp_path, with_trigger({"type": "kafka", "metadata": {"topic": "t", "lagThreshold": "many"}}))
    result = CliRunner().invoke(cli, ["run", str(path), "--no-store", "--no-progress"])
    assert result.exit_code == 2
    assert "so.yaml" in result.output and "lagThreshold" in result.output and "'many'" in result.output
    assert "Traceback" not in result.output
