"""The KPA on the simulated cluster, and Knative's settings read as Knative reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from skenario.autoscalers.kpa.config import KPAConfig
from skenario.core.time import MINUTE, SECOND
from skenario.errors import ScenarioError
from skenario.scenario.format.manifests.kpa import kpa_config
from skenario.scenario.loader import load_scenario, parse_scenario
from skenario.scenario.simulation import Simulation

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
KEY = "autoscaling.knative.dev/"


def test_annotations_override_the_configmap_and_durations_read_as_go_durations() -> None:
    config = kpa_config(
        {f"{KEY}target": "10", f"{KEY}window": "2m", f"{KEY}min-scale": "1", "unrelated/annotation": "x"},
        {"stable-window": "30s", "scale-to-zero-grace-period": "45s", "max-scale-down-rate": 4},
        container_concurrency=20,
        field="spec.autoscalers.0",
    )
    assert config == KPAConfig(
        target=10.0,
        stable_window=2 * MINUTE,
        min_scale=1,
        scale_to_zero_grace_period=45 * SECOND,
        max_scale_down_rate=4.0,
        container_concurrency=20,
    )


@pytest.mark.parametrize(
    ("annotations", "config", "field", "needle"),
    [
        ({f"{KEY}targett": "10"}, {}, "spec.autoscalers.0.annotations.autoscaling.knative.dev/targett", "unknown"),
        ({}, {"stable-window": "forever"}, "spec.autoscalers.0.config.stable-window", "forever"),
        ({f"{KEY}class": "hpa.autoscaling.knative.dev"}, {}, "spec.autoscalers.0.annotations", "type: hpa"),
        ({f"{KEY}min-scale": "5", f"{KEY}max-scale": "2"}, {}, "spec.autoscalers.0 (max-scale)", "min-scale"),
        ({}, {"stable-window": "2s"}, "spec.autoscalers.0 (stable-window)", "[6s, 1h]"),
        ({}, {"max-scale-down-rate": "1"}, "spec.autoscalers.0 (max-scale-down-rate)", "greater than 1"),
        # annotation_validation.go: the annotation's threshold is in [110, 1000].
        (
            {f"{KEY}panic-threshold-percentage": "109"},
            {},
            f"spec.autoscalers.0.annotations.{KEY}panic-threshold-percentage",
            "[110, 1000]",
        ),
        (
            {f"{KEY}panic-threshold-percentage": "1001"},
            {},
            f"spec.autoscalers.0.annotations.{KEY}panic-threshold-percentage",
            "[110, 1000]",
        ),
    ],
)
def test_bad_settings_name_the_key(
    annotations: dict[str, str], config: dict[str, str], field: str, needle: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        kpa_config(annotations, config, field="spec.autoscalers.0")
    assert info.value.field == field
    assert needle in str(info.value)


def test_the_panic_threshold_range_binds_the_annotation_only() -> None:
    """Knative range-checks the annotation, not the config-autoscaler key (config.go's validate)."""
    assert kpa_config({}, {"panic-threshold-percentage": 105}, field="f").panic_threshold_percentage == 105
    annotation = {f"{KEY}panic-threshold-percentage": "110"}
    assert kpa_config(annotation, {}, field="f").panic_threshold_percentage == 110


def test_the_example_scales_from_zero_for_each_burst_and_back_to_zero() -> None:
    simulation = Simulation(load_scenario(EXAMPLES / "kpa-scale-from-zero.yaml"), base_dir=EXAMPLES)
    summary = simulation.run()
    frame = simulation.recorder.frame()
    quiet = frame.loc[frame.index < 120, "replicas_active"]
    first_burst = frame.loc[(frame.index > 150) & (frame.index <= 300), "replicas_active"]
    between = frame.loc[(frame.index > 480) & (frame.index < 600), "replicas_active"]
    second_burst = frame.loc[(frame.index > 630) & (frame.index <= 720), "replicas_active"]
    assert quiet.max() == 0  # nothing before the first request
    assert first_burst.min() >= 1
    assert between.max() == 0  # scaled to zero after the burst and the grace period
    assert second_burst.min() >= 1
    assert second_burst.max() <= 50  # the manifest's max-scale
    assert frame["replicas_active"].iloc[-1] == 0
    # Requests that came while no pod was ready waited in the activator instead of failing at once.
    assert "buffer_full" not in summary.failures and "no_active_replica" not in summary.failures
    assert summary.requests_completed > 0.99 * summary.requests_arrived


def test_kpa_runs_from_inline_annotations() -> None:
    scenario = parse_scenario(
        """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: kpa}
spec:
  duration: 5m
  workload:
    replicas: 1
    request: {cpuTime: 10ms, ioTime: 190ms}
  traffic: {type: constant, rate: 100/s}
  autoscalers:
    - type: kpa
      annotations: {autoscaling.knative.dev/target: "5", autoscaling.knative.dev/max-scale: "8"}
"""
    )
    simulation = Simulation(scenario)
    simulation.run()
    # 100/s × 200 ms = 20 requests in flight; at 70% of a target of 5 that is ceil(20 / 3.5) = 6 pods.
    assert simulation.model.desired == 6
