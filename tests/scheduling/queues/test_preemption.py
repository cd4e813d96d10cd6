"""How much preemption takes from each leaf, restated from YARN's TestProportionalCapacityPreemptionPolicy.

The upstream tests set `total_preemption_per_round` and `natural_termination_factor` to 1 and
`max_ignored_over_capacity` to 0 (testDeadzone sets 0.1); the root is 100 units, a queue's maximum
is the whole cluster unless the row says otherwise.
"""

import pytest

from skenario.scheduling.queues.preemption import PreemptionQueue, PreemptionSettings, to_obtain

TEST_SETTINGS = PreemptionSettings(
    total_preemption_per_round=1.0, natural_termination_factor=1.0, max_ignored_over_capacity=0
)
DEADZONE = PreemptionSettings(
    total_preemption_per_round=1.0, natural_termination_factor=1.0, max_ignored_over_capacity=0.1
)


def flat(abs_: list[int], used: list[int], pending: list[int], max_: list[int] | None = None) -> PreemptionQueue:
    """Root first, then its leaves A, B, C, ... as the test's arrays list them."""
    max_ = max_ or [abs_[0]] * len(abs_)
    leaves = [
        PreemptionQueue("ABCDE"[k], abs_[k + 1], max_[k + 1], used[k + 1], pending[k + 1]) for k in range(len(abs_) - 1)
    ]
    return PreemptionQueue("root", abs_[0], max_[0], children=leaves)


@pytest.mark.parametrize(
    ("name", "root", "settings", "expected"),
    [
        ("testIgnore", flat([100, 40, 40, 20], [100, 0, 60, 40], [0, 0, 0, 0]), TEST_SETTINGS, {}),
        (
            "testProportionalPreemption",
            flat([100, 10, 40, 20, 30], [100, 30, 60, 10, 0], [45, 20, 5, 20, 0]),
            TEST_SETTINGS,
            {"A": 10},
        ),
        (
            "testMaxCap",
            flat([100, 40, 40, 20], [100, 55, 45, 0], [20, 10, 10, 0], [100, 100, 45, 100]),
            TEST_SETTINGS,
            {},
        ),
        (
            "testDeadzone",
            flat([100, 40, 40, 20], [100, 39, 43, 21], [10, 10, 0, 0]),
            DEADZONE,
            {},
        ),
        (
            "testPerQueueDisablePreemption (enabled)",
            flat([100, 55, 25, 20], [100, 0, 54, 46], [10, 10, 0, 0]),
            TEST_SETTINGS,
            {"B": 4, "C": 6},
        ),
    ],
)
def test_upstream_cases(
    name: str, root: PreemptionQueue, settings: PreemptionSettings, expected: dict[str, int]
) -> None:
    assert to_obtain(root, 100, settings) == expected, name


def test_per_queue_disable_preemption_takes_from_the_others() -> None:
    root = flat([100, 55, 25, 20], [100, 0, 54, 46], [10, 10, 0, 0])
    root.children[1].preemption_disabled = True  # B
    assert to_obtain(root, 100, TEST_SETTINGS) == {"C": 10}


def test_per_queue_disable_preemption_hierarchical() -> None:
    """Root 200: A 100 (B 50, C 50), D 100 (E 10, F 90); A uses 110 (B 60, C 50), D 90 (E 90); F asks 10.
    A is over its guarantee and D is not, so the 10 come from B."""
    b, c = PreemptionQueue("B", 50, 200, 60), PreemptionQueue("C", 50, 200, 50)
    e, f = PreemptionQueue("E", 10, 200, 90), PreemptionQueue("F", 90, 200, 0, 10)
    a, d = PreemptionQueue("A", 100, 200, children=[b, c]), PreemptionQueue("D", 100, 200, children=[e, f])
    root = PreemptionQueue("root", 200, 200, children=[a, d])
    assert to_obtain(root, 200, TEST_SETTINGS) == {"B": 10}


def test_a_round_takes_at_most_its_share_of_the_cluster_and_the_natural_termination_factor() -> None:
    root = flat([100, 10, 40, 20, 30], [100, 30, 60, 10, 0], [45, 20, 5, 20, 0])
    # Defaults: 10% of the cluster per round (10 of the 10 needed), then 20% of it: ceil(2.0) = 2.
    assert to_obtain(root, 100, PreemptionSettings(max_ignored_over_capacity=0)) == {"A": 2}
