"""A user's own Filter and Score plugins, adapted to the framework: verdicts, scores and the 0..100 contract.

Each case is worked by hand: which node the user's filter refuses, and the raw, normalised and
final (normalised x weight) scores the framework records for the user's score, as
kube-scheduler-simulator's result maps give them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from skenario.scheduling.framework import Framework, Profile, WeightedScore, default_profile
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.custom import NodeView, PluginError, UserPlugin
from skenario.scheduling.snapshot import ClusterSnapshot


def _framework(nodes: list[NodeSpec], profile: Profile) -> Framework:
    return Framework(profile, ClusterSnapshot(nodes), np.random.default_rng(0))


class Picky:
    """Refuses node "b"; scores a node by the number in its "rank" label."""

    def filter(self, pod: PodSpec, node: NodeView) -> str | None:
        return "b is not for me" if node.name == "b" else None

    def score(self, pod: PodSpec, node: NodeView) -> int:
        return int(node.labels.get("rank", "0"))


class Loud:
    """Scores outside 0..100 and has no normalize."""

    def score(self, pod: PodSpec, node: NodeView) -> int:
        return 150 if node.name == "a" else 10


class LoudButNormalized(Loud):
    def normalize(self, scores: list[int]) -> list[int]:
        top = max(scores)
        return [100 * s // top for s in scores]


def _ranked_nodes() -> list[NodeSpec]:
    return [
        NodeSpec(name, cpu=1000, memory=1000, labels={"rank": str(rank)})
        for name, rank in zip("abc", (70, 90, 20), strict=True)
    ]


def test_a_user_plugin_appears_in_filter_and_score_results() -> None:
    profile = default_profile()
    picky = UserPlugin("Picky", Picky(), "test")
    profile.filters.append(picky)
    profile.scores.append(WeightedScore(picky, 2))
    attempt, _ = _framework(_ranked_nodes(), profile).schedule(PodSpec("p", cpu=100, memory=100), now=1)
    filters = attempt.filter_results()
    assert filters["b"]["Picky"] == "b is not for me"
    assert filters["a"]["Picky"] == "passed"
    assert filters["c"]["Picky"] == "passed"
    assert attempt.filtered_nodes == ["a", "c"]
    scores = attempt.score_results()
    assert set(scores) == {"a", "c"}
    assert scores["a"]["Picky"] == {"raw": 70, "normalized": 70, "final": 140}
    assert scores["c"]["Picky"] == {"raw": 20, "normalized": 20, "final": 40}
    assert attempt.selected == "a"  # every other score ties between the identical nodes a and c


def test_a_user_score_outside_0_to_100_without_normalize_is_an_error() -> None:
    profile = default_profile()
    profile.scores.append(WeightedScore(UserPlugin("Loud", Loud(), "test"), 1))
    with pytest.raises(PluginError):
        _framework(_ranked_nodes(), profile).schedule(PodSpec("p", cpu=100, memory=100), now=1)


def test_a_user_score_brought_into_range_by_normalize_is_accepted() -> None:
    profile = default_profile()
    profile.scores.append(WeightedScore(UserPlugin("Loud", LoudButNormalized(), "test"), 1))
    attempt, _ = _framework(_ranked_nodes(), profile).schedule(PodSpec("p", cpu=100, memory=100), now=1)
    scores = attempt.score_results()
    assert scores["a"]["Loud"] == {"raw": 150, "normalized": 100, "final": 100}
    assert scores["b"]["Loud"] == {"raw": 10, "normalized": 6, "final": 6}  # 100 * 10 // 150


class Broken:
    """Fails as a user's code may: a filter that raises, and a score that ends the process it runs in."""

    def filter(self, pod: PodSpec, node: NodeView) -> str | None:
        raise LookupError("no such zone")

    def score(self, pod: PodSpec, node: NodeView) -> int:
        raise SystemExit(0)


@pytest.mark.parametrize(("clock", "when"), [(None, "while scheduling"), (lambda: 90_000_000_000, "at 1m30s")])
def test_what_a_user_plugin_raises_is_one_error_naming_it_the_method_and_the_time(clock: Any, when: str) -> None:
    user = UserPlugin("Broken", Broken(), "spec.scheduler.customPlugins.0.plugin", "plugins/broken.py:Broken")
    user.now = clock
    framework = _framework(_ranked_nodes(), Profile(filters=[user]))
    with pytest.raises(PluginError) as raised:
        framework.schedule(PodSpec("p", cpu=100, memory=100), 0)
    assert raised.value.message == (
        f"plugin Broken (plugins/broken.py:Broken) raised LookupError in filter {when}: no such zone"
    )
    assert raised.value.field == "spec.scheduler.customPlugins.0.plugin"
    scoring = _framework(_ranked_nodes(), Profile(scores=[WeightedScore(user, 1)]))
    with pytest.raises(PluginError, match=r"raised SystemExit\(0\) in score"):
        scoring.schedule(PodSpec("p", cpu=100, memory=100), 0)
