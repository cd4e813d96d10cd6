"""KEDA's fallback values (pkg/fallback/fallback.go doFallback), worked by hand."""

from __future__ import annotations

import pytest

from skenario.autoscalers.keda.fallback import Fallback, exceeded, fallback_replicas, fallback_value


@pytest.mark.parametrize(
    ("behavior", "current", "replicas"),
    [
        ("static", 2, 5),
        ("currentReplicas", 2, 2),
        ("currentReplicasIfHigher", 2, 5),
        ("currentReplicasIfHigher", 8, 8),
        ("currentReplicasIfLower", 2, 2),
        ("currentReplicasIfLower", 8, 5),
    ],
)
def test_the_replicas_each_behavior_stands_for(behavior: str, current: int, replicas: int) -> None:
    assert fallback_replicas(Fallback(3, 5, behavior), current) == replicas


def test_the_value_makes_the_hpa_ask_for_those_replicas() -> None:
    # AverageValue target 10: 5 replicas -> 50 (50000m); the HPA divides by 10 and asks for 5.
    assert fallback_value(Fallback(3, 5), target=10.0, current=1) == 50_000
    # A Value target is divided by the ready pods: 5 x 10 / 4 ready.
    assert fallback_value(Fallback(3, 5), target=10.0, current=1, ready=4) == 12_500
    assert fallback_value(Fallback(3, 5), target=10.0, current=1, ready=0) is None
    assert fallback_value(Fallback(3, 5, "scalingModifiers"), target=10.0, current=1) is None


def test_the_threshold_is_strict() -> None:
    # fallback_test: numberOfFailures must be greater than failureThreshold.
    assert not exceeded(Fallback(3, 5), 3)
    assert exceeded(Fallback(3, 5), 4)
    assert not exceeded(None, 100)
