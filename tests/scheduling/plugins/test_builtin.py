"""Which built-in plugins a profile turns off, against upstream's merge worked through by hand.

Each case follows v1's `mergePluginSet` (a profile's sets over `getDefaultPlugins`, which lists every
default under multiPoint) and then `NewFramework`: `updatePluginList` for each point's own
`enabled`, `expandMultiPointPlugins` for the multiPoint plugins. The multiPoint cases restate
upstream's `TestNewFrameworkMultiPointExpansion` ("disable MultiPoint plugin at some extension
points", "disable MultiPoint extension", "disable and enable MultiPoint plugins with '*'") with the
built-in plugins in place of its test plugins.
"""

from __future__ import annotations

import pytest

from skenario.scheduling.plugins.builtin import PointSet, TurnedOff, refusals, turned_off


def sets(**points: tuple[list[str], list[str]]) -> dict[str, PointSet]:
    return {point: PointSet(enabled, disabled) for point, (enabled, disabled) in points.items()}


def test_the_default_profile_turns_nothing_off() -> None:
    assert turned_off({}) == {}
    assert refusals({}) == []


def test_disabling_default_preemption_at_post_filter_turns_it_alone_off() -> None:
    """Upstream's "disable MultiPoint plugin at some extension points": named in one point's disabled, the
    multiPoint plugin is left out of that point only."""
    off = turned_off(sets(postFilter=([], ["DefaultPreemption"])))
    assert off == {"DefaultPreemption": TurnedOff("postFilter", 0, "DefaultPreemption")}
    assert refusals(sets(postFilter=([], ["DefaultPreemption"]))) == []


def test_a_wildcard_at_post_filter_turns_default_preemption_off() -> None:
    """Upstream's "disable MultiPoint extension": `*` in a point's disabled skips the multiPoint expansion there."""
    off = turned_off(sets(postFilter=([], ["NoSuchPlugin", "*"])))
    assert off == {"DefaultPreemption": TurnedOff("postFilter", 1, "*")}


def test_a_point_enabling_what_its_wildcard_disabled_keeps_it() -> None:
    """`updatePluginList` puts the point's own enabled plugins in first, whatever its disabled says."""
    assert turned_off(sets(postFilter=(["DefaultPreemption"], ["*"]))) == {}
    assert turned_off(sets(queueSort=(["PrioritySort"], ["*"]))) == {}


def test_disabling_at_multi_point_turns_a_default_off_and_its_own_point_may_bring_it_back() -> None:
    """`mergePluginSet` drops a default multiPoint disables; a point's enabled list still has it."""
    assert turned_off(sets(multiPoint=([], ["DefaultPreemption"]))) == {
        "DefaultPreemption": TurnedOff("multiPoint", 0, "DefaultPreemption")
    }
    assert turned_off(sets(multiPoint=([], ["DefaultPreemption"]), postFilter=(["DefaultPreemption"], []))) == {}
    # Disabled and enabled again in multiPoint itself: the custom enabled list is appended after the defaults.
    assert turned_off(sets(multiPoint=(["DefaultPreemption"], ["DefaultPreemption"]))) == {}


def test_a_point_disabling_a_plugin_multi_point_enables_wins() -> None:
    """`expandMultiPointPlugins`: "a plugin that's enabled via MultiPoint can still be disabled for
    specific extension points"."""
    off = turned_off(sets(multiPoint=(["DefaultPreemption"], []), postFilter=([], ["DefaultPreemption"])))
    assert set(off) == {"DefaultPreemption"}


def test_a_wildcard_at_multi_point_turns_every_built_in_off_unless_enabled_again() -> None:
    """Upstream's "disable and enable MultiPoint plugins with '*'": only the plugins multiPoint enables stay."""
    off = turned_off(sets(multiPoint=([], ["*"])))
    assert list(off) == ["SchedulingGates", "PrioritySort", "NodeName", "DefaultPreemption", "DefaultBinder"]
    assert all(where == TurnedOff("multiPoint", 0, "*") for where in off.values())
    kept = sets(multiPoint=(["SchedulingGates", "PrioritySort", "DefaultBinder"], ["*"]))
    assert set(turned_off(kept)) == {"NodeName", "DefaultPreemption"}
    assert refusals(kept) == []


def test_a_built_in_disabled_at_a_point_it_does_not_serve_stays_on() -> None:
    """PrioritySort is no Filter plugin: a filter list naming it changes no list it is in."""
    assert turned_off(sets(filter=([], ["PrioritySort", "DefaultBinder"]))) == {}
    assert set(turned_off(sets(filter=([], ["*"])))) == {"NodeName"}


@pytest.mark.parametrize(
    ("points", "name", "why"),
    [
        (sets(queueSort=([], ["*"])), "PrioritySort", "exactly one QueueSort plugin"),
        (sets(queueSort=([], ["PrioritySort"])), "PrioritySort", "exactly one QueueSort plugin"),
        (sets(bind=([], ["DefaultBinder"])), "DefaultBinder", "at least one Bind plugin"),
        (sets(bind=([], ["*"])), "DefaultBinder", "at least one Bind plugin"),
        (sets(preEnqueue=([], ["*"])), "SchedulingGates", "no queue without the gates"),
    ],
)
def test_a_profile_left_without_a_required_built_in_is_refused_by_name(
    points: dict[str, PointSet], name: str, why: str
) -> None:
    [(where, problem)] = refusals(points)
    assert problem.startswith(f"{name} cannot be disabled") and why in problem
    assert where.index == 0
    if where.name == "*":
        assert f"{where.point}.disabled '*' turns it off" in problem


def test_a_wildcard_at_multi_point_names_every_required_plugin_it_turns_off() -> None:
    problems = [problem for _, problem in refusals(sets(multiPoint=([], ["*"])))]
    assert [p.split(" ", 1)[0] for p in problems] == ["SchedulingGates", "PrioritySort", "DefaultBinder"]
    assert all("multiPoint.enabled or" in p for p in problems)
