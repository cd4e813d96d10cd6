"""ScaledJob calculators against KEDA's scale_jobs_test.go and scaledjob/metrics.go, restated; the example's Jobs."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from skenario.autoscalers.keda.jobs import (
    ScalerMetrics,
    Strategy,
    jobs_to_create,
    scaled_job_active,
    scaler_metrics,
    scaling_decision,
)
from skenario.scenario.loader import load_scenario
from skenario.scenario.simulation import Simulation


def effective(strategy: Strategy, *args: int) -> int:
    return strategy.effective_max_scale(*args)[0]  # type: ignore[arg-type]


def test_default_strategy() -> None:
    # TestDefaultScalingStrategy: (maxScale, running, pending, maxReplicaCount, scaleTo).
    assert effective(Strategy(), 3, 2, 0, 5, 1) == 1
    assert effective(Strategy(), 2, 0, 0, 5, 1) == 2


def test_custom_strategy() -> None:
    # TestCustomScalingStrategy: deduction 1, running percentage 0.5; then 2 and 0; then -2 and 0.
    assert effective(Strategy("custom", 1, 0.5), 3, 2, 0, 5, 1) == 1
    assert effective(Strategy("custom", 1, 0.5), 10, 0, 0, 10, 1) == 9
    assert effective(Strategy("custom", 2, 0.0), 3, 2, 0, 5, 1) == 1
    assert effective(Strategy("custom", -2, 0.0), 3, 2, 0, 4, 1) == 4
    # TestCustomScalingStrategyNilQueueLengthDeduction: no deduction, percentage 0.5.
    assert effective(Strategy("custom", 0, 0.5), 10, 2, 0, 100, 1) == 9
    assert effective(Strategy("custom", 0, 0.5), 10, 0, 0, 100, 1) == 10


def test_accurate_strategy() -> None:
    # TestAccurateScalingStrategy.
    cases = [((3, 2, 0, 5), 3), ((5, 2, 0, 5), 3), ((3, 4, 2, 10), 1), ((5, 4, 2, 5), 1), ((3, 3, 3, 5), 0)]
    cases += [((15, 15, 15, 20), 0), ((10, 10, 10, 15), 0), ((20, 15, 10, 20), 5)]
    for (max_scale, running, pending, maximum), expected in cases:
        assert effective(Strategy("accurate"), max_scale, running, pending, maximum, 1) == expected


def test_eager_strategy() -> None:
    # TestEagerScalingStrategy: (effective, scaleTo).
    eager = Strategy("eager")
    assert eager.effective_max_scale(4, 3, 0, 10, 1) == (4, 10)
    assert eager.effective_max_scale(4, 0, 3, 10, 1) == (4, 10)
    assert eager.effective_max_scale(4, 7, 0, 10, 1) == (3, 10)
    assert eager.effective_max_scale(4, 1, 6, 10, 1) == (3, 10)
    assert eager.effective_max_scale(15, 0, 0, 10, 1) == (10, 10)


def test_scaling_decision_around_min_replica_count() -> None:
    # TestRunningJobCountSmallerMinReplicaCount, ...IsDeductedFromMinReplicaCount, ...GreaterOrEqual...
    decide = {"pending": 0, "max_replicas": 100}
    assert scaling_decision(Strategy(), running=0, scale_to=0, max_scale=0, min_replicas=2, **decide) == (2, 2)
    assert scaling_decision(Strategy(), running=1, scale_to=0, max_scale=0, min_replicas=2, **decide) == (1, 1)
    assert scaling_decision(Strategy(), running=1, scale_to=2, max_scale=2, min_replicas=1, **decide) == (2, 2)


def test_queue_length_over_target_and_the_multiple_scalers_calculation() -> None:
    # CalculateQueueLengthAndMaxValue: 23 messages at 5 per Job ask for 4.6, at most maxReplicaCount.
    assert scaler_metrics(23, 5, 100, True) == ScalerMetrics(23, 4.6, True)
    assert scaler_metrics(2300, 5, 20, True).max_value == 20
    a, b, idle = ScalerMetrics(10, 2, True), ScalerMetrics(30, 6, True), ScalerMetrics(99, 9, False)
    # IsScaledJobActive: ceil of the picked (or combined) active triggers, the inactive one left out.
    assert scaled_job_active([a, b, idle], "max", 0, 100) == (True, 30, 6)
    assert scaled_job_active([a, b, idle], "min", 0, 100) == (True, 10, 2)
    assert scaled_job_active([a, b, idle], "avg", 0, 100) == (True, 20, 4)
    assert scaled_job_active([a, b, idle], "sum", 0, 100) == (True, 40, 8)
    assert scaled_job_active([idle], "max", 0, 100) == (False, 0, 0)
    assert scaled_job_active([idle], "max", 1, 100) == (True, 0, 0)  # minReplicaCount keeps it active


def test_jobs_to_create() -> None:
    # 30 messages at 5 per Job: 6 asked, 2 running: the default strategy creates 4; inactive, none.
    common = {"scale_to": 30, "max_scale": 6, "running": 2, "pending": 0, "min_replicas": 0, "max_replicas": 20}
    assert jobs_to_create(Strategy(), active=True, **common) == min(30, 6 - 2)
    assert jobs_to_create(Strategy(), active=False, **common) == 0


EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "keda" / "queue-jobs.yaml"


@pytest.mark.parametrize("messages_per_job", [5])
def test_the_example_runs_a_job_per_five_messages_and_never_more_than_twenty(messages_per_job: int) -> None:
    simulation = Simulation(load_scenario(EXAMPLE), base_dir=EXAMPLE.parent)
    simulation.run()
    model = simulation.model
    assert model.requests_arrived == 1200 == model.requests_complete.count()  # every message consumed
    assert model.replicas_started() == 1200 // messages_per_job  # each Job took its five, then completed
    polls = simulation.autoscalers["report-jobs"].decisions  # type: ignore[attr-defined]
    assert all(poll.running + poll.created <= 20 for poll in polls)  # maxReplicaCount
    for poll in polls:  # the default strategy: ceil(min(queue / 5, 20)) Jobs, less those running
        [queue] = poll.triggers.values()
        wanted = math.ceil(min(queue / 5, 20)) - poll.running
        assert poll.created == (max(min(math.ceil(queue), wanted), 0) if poll.active else 0)
    assert sum(poll.created for poll in polls) == 1200 // messages_per_job
