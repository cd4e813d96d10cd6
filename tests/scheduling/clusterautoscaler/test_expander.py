"""The expanders, worked by hand: least-waste, most-pods, the chain's ties, and random from the rng.

Each case derives its answer in comments from cluster-autoscaler's expander/ strategies.
"""

from __future__ import annotations

import numpy as np
import pytest

from skenario.scheduling.affinity import NodeAffinity
from skenario.scheduling.clusterautoscaler.config import CaSettings
from skenario.scheduling.clusterautoscaler.expander import ScaleUpOption, best_option, keep_highest_priority
from skenario.scheduling.clusterautoscaler.scaleup import plan_scale_up
from tests.scheduling.clusterautoscaler.builders import DEFAULTS, GiB, group, pod


def test_least_waste_picks_the_group_that_wastes_less() -> None:
    # Three pods of 1000m and 1 GiB.
    # small (2000m, 4 GiB) needs 2 nodes: CPU (4000 - 3000) / 4000 = 0.25, memory (8 - 3) / 8 =
    #   0.625; score 0.875.
    # large (8000m, 16 GiB) needs 1 node: CPU (8000 - 3000) / 8000 = 0.625, memory (16 - 3) / 16 =
    #   0.8125; score 1.4375.
    # small wins, although "large" comes first by name.
    pending = [pod(f"p{i}", 1000, GiB) for i in range(3)]
    groups = [group("large", 8000, 16 * GiB), group("small", 2000, 4 * GiB)]
    plan = plan_scale_up(pending, groups, {"large": 0, "small": 0}, DEFAULTS)
    assert plan is not None
    assert (plan.group, plan.nodes) == ("small", 2)


def test_most_pods_picks_the_group_that_helps_more_pods() -> None:
    # Two pods need pool=b; one goes anywhere. Pool a helps 1 pod, pool b all 3.
    to_b = NodeAffinity(node_selector={"pool": "b"})
    pending = [pod("b1", 500, affinity=to_b), pod("b2", 500, affinity=to_b), pod("any", 500)]
    groups = [group("a", 4000, labels={"pool": "a"}), group("b", 4000, labels={"pool": "b"})]
    plan = plan_scale_up(pending, groups, {"a": 0, "b": 0}, CaSettings(expander="most-pods"))
    assert plan is not None
    assert plan.group == "b" and len(plan.pods) == 3


def test_ties_left_at_the_end_go_by_name_without_an_rng() -> None:
    # Identical groups: the same waste, pods and nodes, whatever the chain.
    pending = [pod("p", 1000)]
    groups = [group("y", 2000), group("x", 2000)]
    settings = CaSettings(expander="least-waste,most-pods,least-nodes")
    plan = plan_scale_up(pending, groups, {"x": 0, "y": 0}, settings)
    assert plan is not None and plan.group == "x"


def test_the_random_expander_draws_from_the_rng() -> None:
    options = [ScaleUpOption(group(name, 2000), 1, (pod("p", 100),)) for name in ("a", "b", "c")]
    settings = CaSettings(expander="random")
    with pytest.raises(ValueError, match="rng"):
        best_option(options, settings)
    first = best_option(options, settings, np.random.default_rng(7))
    again = best_option(options, settings, np.random.default_rng(7))
    assert first is not None and again is not None and first.group.name == again.group.name
    picked = set()
    for seed in range(30):
        chosen = best_option(options, settings, np.random.default_rng(seed))
        assert chosen is not None
        picked.add(chosen.group.name)
    assert picked == {"a", "b", "c"}


# --- priority: the cases of upstream's expander/priority/priority_test.go, restated as data --------

UPSTREAM_PRIORITIES = (
    (5, (r".*t2\.micro.*",)),
    (10, (r".*t2\.large.*", r".*t3\.large.*")),
    (50, (r".*m4\.4xlarge.*",)),
)
WILDCARD_PRIORITIES = ((5, (".*",)), (10, (r".t2\.large.*",)))
NOT_MATCHING_PRIORITIES = ((5, (r".*t\.micro.*",)), (10, (r".*t\.large.*",)))


def _priority_options(*names: str) -> list[ScaleUpOption]:
    return [ScaleUpOption(group(f"my-asg.{name}", 2000), 1, (pod("p", 100),)) for name in names]


@pytest.mark.parametrize(
    ("priorities", "offered", "chosen"),
    [
        # TestPriorityExpanderCorrecltySelectsSingleMatchingOptionOutOfOne
        (UPSTREAM_PRIORITIES, ("t2.large",), {"t2.large"}),
        # ...OutOfMany: m4.4xlarge has the highest priority, 50
        (UPSTREAM_PRIORITIES, ("t2.large", "m4.4xlarge"), {"m4.4xlarge"}),
        # ...SelectsOneOfTwoMatchingOptionsOutOfMany: t2.large and t3.large share priority 10
        (UPSTREAM_PRIORITIES, ("t2.large", "t3.large", "t2.micro"), {"t2.large", "t3.large"}),
        # TestPriorityExpanderDoesNotFallBackToRandomWhenHigherPriorityMatches: ".*" matches both
        # at 5, t2.large also at 10
        (WILDCARD_PRIORITIES, ("t2.large", "t2.micro"), {"t2.large"}),
        # TestPriorityExpanderFallsBackToRandomWhenNoMatchInConfig: nothing matches, all stay
        (NOT_MATCHING_PRIORITIES, ("t2.large", "t2.micro"), {"t2.large", "t2.micro"}),
    ],
)
def test_priority_keeps_the_groups_of_the_highest_matching_priority(
    priorities: tuple[tuple[int, tuple[str, ...]], ...], offered: tuple[str, ...], chosen: set[str]
) -> None:
    options = _priority_options(*offered)
    kept = {o.group.name.removeprefix("my-asg.") for o in keep_highest_priority(options, priorities)}
    assert kept == chosen
    settings = CaSettings(expander="priority,random", priorities=priorities)
    picks = {best_option(options, settings, np.random.default_rng(seed)).group.name for seed in range(40)}  # type: ignore[union-attr]
    assert {name.removeprefix("my-asg.") for name in picks} == chosen


def test_the_priority_expander_needs_its_configuration() -> None:
    with pytest.raises(ValueError, match="priorities"):
        CaSettings(expander="priority")
    with pytest.raises(ValueError, match="regular expression"):
        CaSettings(expander="priority", priorities=((1, ("(",)),))
