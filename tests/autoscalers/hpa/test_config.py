"""The HPA controller's flags: the product keeps kube-controller-manager's defaults."""

from __future__ import annotations

from skenario.autoscalers.hpa.config import (
    DEFAULT_CPU_INITIALIZATION_PERIOD,
    DEFAULT_INITIAL_READINESS_DELAY,
    DEFAULT_TOLERANCE,
    HPAControllerConfig,
)
from skenario.autoscalers.hpa.types import CPU, DEFAULT_METRICS, ResourceMetricSource, UtilizationTarget
from skenario.core.time import MINUTE, SECOND


def test_production_defaults() -> None:
    """The product keeps kube-controller-manager's flag defaults; only tests use the harness ones."""
    config = HPAControllerConfig()
    assert config.tolerance == DEFAULT_TOLERANCE == 0.1
    assert config.cpu_initialization_period == DEFAULT_CPU_INITIALIZATION_PERIOD == 5 * MINUTE
    assert config.initial_readiness_delay == DEFAULT_INITIAL_READINESS_DELAY == 30 * SECOND
    assert config.sync_period == 15 * SECOND
    assert config.downscale_stabilization == 5 * MINUTE
    assert (ResourceMetricSource(CPU, UtilizationTarget(80)),) == DEFAULT_METRICS
