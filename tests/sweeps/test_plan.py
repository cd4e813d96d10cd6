"""A sweep's plan: each point's scenario with its settings, checked before any run, and the same seeds
at every point."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skenario.scenario.loader import parse_scenario
from skenario.sweeps.plan import Template, plan, replication_seeds
from skenario.sweeps.space import SweepError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGET = "autoscalers[0].manifest.spec.metrics[0].resource.target.averageUtilization"
WINDOW = "autoscalers[0].manifest.spec.behavior.scaleDown.stabilizationWindowSeconds"


def test_each_point_is_the_scenario_with_its_settings_and_the_rest_as_written() -> None:
    template = Template.from_file(EXAMPLES / "sweep" / "hpa.yaml")
    made = plan(template, [{TARGET: 50, WINDOW: 0}, {TARGET: 70, WINDOW: 600}], replication_seeds(3, 1))
    assert [p.number for p in made.points] == [1, 2]
    for point, (target, window) in zip(made.points, [(50, 0), (70, 600)], strict=True):
        scenario = parse_scenario(point.text)
        manifest = scenario.spec.autoscalers[0].manifest  # the HPA document, folded in and changed
        assert isinstance(manifest, dict)
        assert manifest["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == target
        assert manifest["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == window
        assert manifest["spec"]["maxReplicas"] == 30  # untouched
        assert scenario.spec.duration == template.scenario.spec.duration


def test_a_point_without_settings_is_the_scenario_exactly_as_written() -> None:
    template = Template.from_file(EXAMPLES / "quickstart.yaml")
    assert template.point(1, {}).text == (EXAMPLES / "quickstart.yaml").read_text()


def test_every_point_runs_with_the_same_seeds_point_by_point() -> None:
    template = Template.from_file(EXAMPLES / "quickstart.yaml")
    made = plan(template, [{"workload.replicas": 4}, {"workload.replicas": 8}], replication_seeds(2, 42))
    assert [(job.point, job.seed) for job in made.jobs()] == [(1, 42), (1, 43), (2, 42), (2, 43)]
    assert Path(made.jobs()[0].base_dir).is_absolute()  # a Dask worker's folder is not ours


def test_replication_seeds_count_up_from_the_first() -> None:
    assert replication_seeds(3, 7) == (7, 8, 9)
    with pytest.raises(SweepError, match="--seeds 0"):
        replication_seeds(0, 7)


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ({"workload.replicas": "two"}, ["--set 'workload.replicas=two'", "'two'", "spec.workload.replicas"]),
        ({"workload.replicaz": 3}, ["--set 'workload.replicaz=3'", "spec.workload.replicaz", "not a known field"]),
        ({"workloads.replicas": 3}, ["--set 'workloads.replicas=3'", "spec.workloads"]),  # an unknown key on the way
        # A manifest's own field, refused when the run is built: named from the scenario's root.
        ({WINDOW: -5}, [f"--set '{WINDOW}=-5'", f"spec.{WINDOW.replace('[', '.').replace(']', '')}"]),
    ],
)
def test_a_value_the_scenario_refuses_names_the_option_and_value(settings: dict[str, object], words: list[str]) -> None:
    template = Template.from_file(EXAMPLES / "sweep" / "hpa.yaml")
    options = {path: f"--set '{path}={value}'" for path, value in settings.items()}
    with pytest.raises(SweepError) as caught:
        template.point(1, settings, options)
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_a_multi_document_scenario_is_folded_before_its_paths_are_set() -> None:
    template = Template.from_file(EXAMPLES / "sweep" / "hpa.yaml")
    point = template.point(1, {TARGET: 42})
    assert len(list(yaml.safe_load_all(point.text))) == 1  # one document: the manifests inlined
