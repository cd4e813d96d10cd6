"""The HPA's usage ratios over pod metrics, in Go's arithmetic.

Restated from kubernetes/kubernetes `pkg/controller/podautoscaler/metrics/utilization.go`; no
upstream code is copied. Upstream's arithmetic is kept to the bit: integer division truncates
toward zero and float64 division by zero gives an infinity or NaN, so `go_quo` and `go_fdiv` stand
in for Python's `//` and `/` wherever the replica calculator divides.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from skenario.autoscalers.hpa.types import MAX_INT32, HPAMetricError


def go_quo(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def go_fdiv(a: float, b: float) -> float:
    """Go's float64 division: IEEE infinities and NaN instead of ZeroDivisionError."""
    if b == 0.0:
        if a == 0.0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def get_resource_utilization_ratio(
    metrics: Mapping[str, int], requests: Mapping[str, int], target_utilization: int
) -> tuple[float, int, int]:
    """Mirrors `metrics.GetResourceUtilizationRatio`: (usage ratio, utilisation %, raw average).

    Utilisation is the ratio of sums, truncated to an integer percent; metrics of pods without a
    request (not in the pod list) are skipped.
    """
    metrics_total = 0
    requests_total = 0
    entries = 0
    for name, value in metrics.items():
        if name not in requests:
            continue
        metrics_total += value
        requests_total += requests[name]
        entries += 1
    if requests_total == 0:
        raise HPAMetricError("no metrics returned matched known pods")
    utilization = go_quo(metrics_total * 100, requests_total)
    if not -(2**31) <= utilization <= MAX_INT32:
        raise HPAMetricError(f"resource utilization {utilization} is outside the int32 range")
    return float(utilization) / float(target_utilization), utilization, go_quo(metrics_total, entries)


def get_metric_usage_ratio(metrics: Mapping[str, int], target_usage: int) -> tuple[float, int]:
    """Mirrors `metrics.GetMetricUsageRatio`: (usage ratio, average truncated to an integer)."""
    usage = go_quo(sum(metrics.values()), len(metrics))
    return go_fdiv(float(usage), float(target_usage)), usage
