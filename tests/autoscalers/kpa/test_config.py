"""The KPA's settings against upstream: defaults, per-pod target resolution, validation.

Cases restate the data of knative/serving's unit tests (snapshot 98e5ef90aa70: `config_test.go`,
`target_test.go`); no test code is copied.
"""

from __future__ import annotations

import pytest

from skenario.autoscalers.kpa.config import KPAConfig, KPAConfigError, resolve_metric_target
from skenario.autoscalers.kpa.decider import make_decider_spec, panic_window
from skenario.core.time import HOUR, MILLISECOND, SECOND

# --- defaults and resolution (config.go, target.go / target_test.go, metric.go / metric_test.go) ---


def test_defaults_are_upstreams() -> None:
    c = KPAConfig()
    assert c.stable_window == 60 * SECOND
    assert c.panic_window_percentage == 10.0
    assert c.panic_threshold_percentage == 200.0
    assert c.container_concurrency_target_percentage == 70.0
    assert c.container_concurrency_target_default == 100.0
    assert c.rps_target_default == 200.0
    assert c.target_burst_capacity == 211.0
    assert c.activator_capacity == 100.0
    assert c.max_scale_up_rate == 1000.0
    assert c.max_scale_down_rate == 2.0
    assert c.scale_to_zero_grace_period == 30 * SECOND
    assert c.scale_to_zero_pod_retention_period == 0
    assert c.scale_down_delay == 0
    assert c.enable_scale_to_zero is True
    assert c.initial_scale == 1
    assert (c.min_scale, c.max_scale) == (0, 0)
    assert c.activation_scale == 0
    assert c.tick_interval == 2 * SECOND
    assert panic_window(c) == 6 * SECOND
    spec = make_decider_spec(c)
    assert (spec.target_value, spec.total_value) == (70.0, 100.0)  # 70 concurrent requests per pod
    assert spec.panic_threshold == 2.0
    assert make_decider_spec(KPAConfig(scaling_metric="rps")).target_value == 140.0  # 140 RPS per pod


@pytest.mark.parametrize(
    ("config", "want_target", "want_total"),
    [
        # TestResolveMetricTarget; its config has a concurrency fraction of 1.0 and RPS 0.7.
        (KPAConfig(container_concurrency_target_percentage=100), 100, 100),
        (KPAConfig(container_concurrency_target_percentage=80), 80, 100),
        (KPAConfig(container_concurrency_target_percentage=30, container_concurrency_target_default=2), 0.6, 2),
        (
            KPAConfig(
                container_concurrency_target_percentage=80, container_concurrency=12, target_utilization_percentage=75
            ),
            9,
            12,
        ),
        (KPAConfig(container_concurrency_target_percentage=80, container_concurrency=10), 8, 10),
        (KPAConfig(container_concurrency_target_percentage=80, container_concurrency=1), 0.8, 1),
        (KPAConfig(container_concurrency_target_percentage=100, container_concurrency=1), 1, 1),
        (KPAConfig(container_concurrency_target_percentage=100, target=1), 1, 1),
        (KPAConfig(container_concurrency_target_percentage=0.1, target=1), 0.01, 1),  # TargetMin
        (KPAConfig(container_concurrency_target_percentage=75, target=1), 0.75, 1),
        (KPAConfig(container_concurrency_target_percentage=75, target=10), 7.5, 10),
        (KPAConfig(container_concurrency_target_percentage=100, container_concurrency=10, target=1), 1, 1),
        (KPAConfig(container_concurrency_target_percentage=100, target=500), 500, 500),
        (KPAConfig(container_concurrency_target_percentage=100, container_concurrency=1, target=10), 1, 1),
        (
            KPAConfig(container_concurrency_target_percentage=100, scaling_metric="rps", container_concurrency=1),
            140,
            200,
        ),
        (KPAConfig(container_concurrency_target_percentage=100, scaling_metric="rps", target=1), 0.7, 1),
        (
            KPAConfig(
                container_concurrency_target_percentage=100, scaling_metric="rps", target_utilization_percentage=75
            ),
            150,
            200,
        ),
        (KPAConfig(container_concurrency_target_percentage=100, scaling_metric="rps", target=300), 210, 300),
    ],
)
def test_resolve_metric_target(config: KPAConfig, want_target: float, want_total: float) -> None:
    target, total = resolve_metric_target(config)
    assert target == pytest.approx(want_target, rel=1e-12)
    assert total == want_total


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"scale_to_zero_grace_period": 0}, "scale-to-zero-grace-period"),
        ({"scale_down_delay": -SECOND}, "scale-down-delay"),
        ({"scale_down_delay": 1500 * MILLISECOND}, "scale-down-delay"),
        ({"scale_to_zero_pod_retention_period": -SECOND}, "scale-to-zero-pod-retention-period"),
        ({"target_burst_capacity": -2.0}, "target-burst-capacity"),
        ({"container_concurrency_target_percentage": 0.0}, "container-concurrency-target-percentage"),
        ({"container_concurrency_target_percentage": 101.0}, "container-concurrency-target-percentage"),
        ({"target_utilization_percentage": 0.5}, "target-utilization-percentage"),
        ({"container_concurrency_target_default": 0.001}, "container-concurrency-target-default"),
        ({"rps_target_default": 0.001}, "requests-per-second-target-default"),
        ({"activator_capacity": 0.5}, "activator-capacity"),
        ({"max_scale_up_rate": 1.0}, "max-scale-up-rate"),
        ({"max_scale_down_rate": 1.0}, "max-scale-down-rate"),
        ({"stable_window": 5 * SECOND}, "stable-window"),
        ({"stable_window": HOUR + SECOND}, "stable-window"),
        ({"stable_window": 6500 * MILLISECOND}, "stable-window"),
        ({"panic_window_percentage": 0.5}, "panic-window-percentage"),
        ({"panic_window_percentage": 101.0}, "panic-window-percentage"),
        ({"initial_scale": 0}, "initial-scale"),
        ({"min_scale": -1}, "min-scale"),
        ({"min_scale": 3, "max_scale": 2}, "max-scale"),
        ({"activation_scale": 1}, "activation-scale"),
        ({"activation_scale": 2, "min_scale": 3}, "activation-scale"),
        ({"activation_scale": 4, "max_scale": 3}, "activation-scale"),
        ({"target": 0.001}, "target"),
    ],
)
def test_invalid_settings_are_rejected_naming_the_key(changes: dict[str, object], field: str) -> None:
    with pytest.raises(KPAConfigError) as info:
        KPAConfig(**changes)  # type: ignore[arg-type]
    assert info.value.field == field


def test_valid_edge_settings() -> None:
    # config_test.go "minimum" and "with -1 tbc"; a zero initial scale when the cluster allows it.
    KPAConfig(max_scale_up_rate=1.001, container_concurrency_target_percentage=50, target_burst_capacity=0)
    KPAConfig(panic_threshold_percentage=105)  # config.go's validate does not range-check the ConfigMap key
    KPAConfig(target_burst_capacity=-1)
    KPAConfig(initial_scale=0, allow_zero_initial_scale=True)
    KPAConfig(min_scale=2, max_scale=2, activation_scale=2)
