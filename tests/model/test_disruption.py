"""PodDisruptionBudgets: the disruption controller's status and the eviction API's answer, worked by hand
from the upstream rules (getExpectedPodCount, updatePdbStatus, canIgnorePDB, checkAndDecrement)."""

from __future__ import annotations

import pytest

from skenario.model.disruption import BudgetStatus, DisruptionBudget, EvictionBudget, budget_status, scaled_value


@pytest.mark.parametrize(
    ("value", "total", "up", "expected"),
    [(3, 10, True, 3), ("50%", 5, True, 3), ("50%", 5, False, 2), ("20%", 10, True, 2), ("100%", 7, False, 7)],
)
def test_int_or_percent_scaled_as_intstr_does(value: int | str, total: int, up: bool, expected: int) -> None:
    assert scaled_value(value, total, round_up=up) == expected


@pytest.mark.parametrize(
    ("budget", "pods", "scale", "healthy", "status", "allowed"),
    [
        # minAvailable as a count: expected is the number of pods.
        (DisruptionBudget(min_available=3), 5, 5, 5, BudgetStatus(5, 3, 5), 2),
        (DisruptionBudget(min_available=3), 5, 5, 4, BudgetStatus(5, 3, 4), 1),
        (DisruptionBudget(min_available=3), 5, 5, 2, BudgetStatus(5, 3, 2), 0),  # never negative
        # minAvailable as a percentage of the scale, rounded up.
        (DisruptionBudget(min_available="80%"), 10, 10, 10, BudgetStatus(10, 8, 10), 2),
        (DisruptionBudget(min_available="100%"), 5, 5, 5, BudgetStatus(5, 5, 5), 0),
        # maxUnavailable of the scale: while scaling up from 5 to 10, 9 must be healthy and 5 are.
        (DisruptionBudget(max_unavailable=1), 5, 10, 5, BudgetStatus(10, 9, 5), 0),
        (DisruptionBudget(max_unavailable="20%"), 10, 10, 10, BudgetStatus(10, 8, 10), 2),
        # No pods expected: nothing may go, whatever the arithmetic says.
        (DisruptionBudget(min_available=0), 0, 0, 0, BudgetStatus(0, 0, 0), 0),
    ],
)
def test_status_as_the_disruption_controller_writes_it(
    budget: DisruptionBudget, pods: int, scale: int, healthy: int, status: BudgetStatus, allowed: int
) -> None:
    assert budget_status(budget, pods=pods, scale=scale, healthy=healthy) == status
    assert status.disruptions_allowed == allowed


def test_each_ready_eviction_uses_one_disruption_and_the_next_is_refused() -> None:
    budget = EvictionBudget(budget_status(DisruptionBudget(min_available=3), pods=5, scale=5, healthy=5))
    assert [budget.evict(pending=False, ready=True) for _ in range(3)] == [True, True, False]


def test_pending_pods_ignore_the_budget_and_unready_ones_go_while_the_application_is_whole() -> None:
    exhausted = EvictionBudget(BudgetStatus(expected=3, desired_healthy=3, current_healthy=3))
    assert exhausted.evict(pending=True, ready=False)  # canIgnorePDB
    assert exhausted.evict(pending=False, ready=False)  # IfHealthyBudget: 3 >= 3 > 0
    assert not exhausted.evict(pending=False, ready=True)  # no disruption left for a ready one
    short = EvictionBudget(BudgetStatus(expected=3, desired_healthy=3, current_healthy=2))
    assert not short.evict(pending=False, ready=False)  # the application is already short


@pytest.mark.parametrize("kwargs", [{}, {"min_available": 1, "max_unavailable": 1}, {"min_available": "half"}])
def test_a_budget_needs_exactly_one_valid_bound(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        DisruptionBudget(**kwargs)  # type: ignore[arg-type]


def test_a_whole_drain_is_allowed_or_refused_at_once() -> None:
    budget = EvictionBudget(BudgetStatus(expected=5, desired_healthy=3, current_healthy=5))  # 2 to spare
    three_ready = [(False, True)] * 3
    assert not budget.evict_all(three_ready)
    assert budget.allowed == 2  # a refused drain uses nothing
    assert budget.evict_all([(False, True), (True, False), (False, True)])  # the pending one is free
    assert budget.allowed == 0


def test_always_allow_lets_an_unready_pod_go_even_when_the_application_is_short() -> None:
    short = BudgetStatus(expected=3, desired_healthy=3, current_healthy=2)
    assert EvictionBudget(short, always_allow_unhealthy=True).evict(pending=False, ready=False)
    assert not EvictionBudget(short, always_allow_unhealthy=True).evict(pending=False, ready=True)
