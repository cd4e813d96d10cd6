"""Upstream's HPA controller test harness (horizontal_test.go), restated for the HPA tests.

kubernetes/kubernetes pkg/controller/podautoscaler/horizontal_test.go; no test code is copied:

- `generateScalingRules(pods, podsPeriod, percent, percentPeriod, window)` builds rules with
  selectPolicy Max and a Pods and/or a Percent policy (a zero value leaves that policy out);
- `generateEventsUniformDistribution(changes, period)` spreads the events over the last
  `period` seconds, each in the middle of its slice, the age truncated to whole seconds;
- `init()` sets the legacy scale-up limit factor to 8 (production: 2);
- the controller-level harness (`controller_sync` in `test_reconcile`) gives each pod two
  containers sharing its CPU request and its reported usage by integer halves, sets each pod's
  Ready transition to its start time, stamps samples now with a 1 min window, and runs the
  controller with a 2 min CPU initialisation period, a 10 s readiness delay, a 0.1 tolerance and
  a 5 min downscale stabilisation.
"""

from __future__ import annotations

from collections.abc import Sequence

from skenario.autoscalers.hpa.behavior import PolicyType, ScalingPolicy, ScalingRules, SelectPolicy
from skenario.autoscalers.hpa.config import HPAControllerConfig
from skenario.autoscalers.hpa.normalization import ScaleEvent, TimestampedRecommendation
from skenario.core.time import HOUR, MINUTE, SECOND

NOW = 10 * HOUR
HARNESS_SCALE_UP_LIMIT_FACTOR = 8.0  # horizontal_test.go init()
TEST_CONFIG = HPAControllerConfig(cpu_initialization_period=2 * MINUTE, initial_readiness_delay=10 * SECOND)


def rules(pods: int, pods_period: int, percent: int, percent_period: int, window: int) -> ScalingRules:
    """generateScalingRules."""
    policies = []
    if pods:
        policies.append(ScalingPolicy(PolicyType.PODS, pods, pods_period))
    if percent:
        policies.append(ScalingPolicy(PolicyType.PERCENT, percent, percent_period))
    return ScalingRules(window, SelectPolicy.MAX, tuple(policies) if policies else None)


def uniform_events(changes: Sequence[int], period: int) -> tuple[ScaleEvent, ...]:
    """generateEventsUniformDistribution: event i aged period - slice*(i+1) + slice/2 seconds, truncated."""
    slice_ = period / len(changes)
    ages = [int(period - slice_ * (i + 1) + slice_ / 2) for i in range(len(changes))]
    return tuple(ScaleEvent(change, NOW - age * SECOND) for change, age in zip(changes, ages, strict=True))


def recs(*pairs: tuple[int, int]) -> tuple[TimestampedRecommendation, ...]:
    return tuple(TimestampedRecommendation(value, NOW - age) for value, age in pairs)
