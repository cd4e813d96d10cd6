"""The HPA's usage ratios in Go's arithmetic.

Expected values follow from the Go specification (integer division truncates toward zero; float64
division by zero gives an infinity, or NaN for 0/0) and from the ratios worked out by hand in each
test; the replica calculator tests (`test_replicas`) cover the same functions through upstream's
cases.
"""

from __future__ import annotations

import math

import pytest

from skenario.autoscalers.hpa.types import HPAMetricError
from skenario.autoscalers.hpa.utilization import get_metric_usage_ratio, get_resource_utilization_ratio, go_fdiv, go_quo


def test_go_quo_truncates_toward_zero() -> None:
    assert [go_quo(7, 2), go_quo(-7, 2), go_quo(7, -2), go_quo(-7, -2)] == [3, -3, -3, 3]


def test_go_fdiv_by_zero() -> None:
    assert go_fdiv(1.0, 0.0) == math.inf
    assert go_fdiv(-1.0, 0.0) == -math.inf
    assert go_fdiv(1.0, -0.0) == -math.inf
    assert math.isnan(go_fdiv(0.0, 0.0))
    assert go_fdiv(3.0, 2.0) == 1.5


def test_resource_utilization_ratio_is_a_ratio_of_sums() -> None:
    """150m + 50m used of 100m + 100m requested is 100 %; against a 50 % target the ratio is 2.

    The pod without a request ("c") is skipped; the raw average is 200m over two pods.
    """
    metrics = {"a": 150, "b": 50, "c": 999}
    requests = {"a": 100, "b": 100}
    assert get_resource_utilization_ratio(metrics, requests, 50) == (2.0, 100, 100)


def test_resource_utilization_truncates_the_percentage() -> None:
    """100m used of 300m requested is 33.3 %, truncated to 33; the ratio against 66 % is 0.5."""
    assert get_resource_utilization_ratio({"a": 100}, {"a": 300}, 66) == (0.5, 33, 100)


def test_resource_utilization_without_requests_fails() -> None:
    with pytest.raises(HPAMetricError):
        get_resource_utilization_ratio({"a": 100}, {}, 50)


def test_metric_usage_ratio_truncates_the_average() -> None:
    """(10 + 11) / 2 = 10.5, truncated to 10; against a target of 4 the ratio is 2.5."""
    assert get_metric_usage_ratio({"a": 10, "b": 11}, 4) == (2.5, 10)
