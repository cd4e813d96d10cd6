"""The scenario's `scheduler` section: which plugin names a profile's `enabled` and `disabled` lists take."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from skenario.scenario.format.scheduler import SchedulerSpec


def spec(point: str, **sets: list[dict[str, Any]]) -> SchedulerSpec:
    return SchedulerSpec.model_validate({"profiles": [{"plugins": {point: sets}}]})


@pytest.mark.parametrize(
    ("point", "name"),
    [
        ("multiPoint", "PrioritySort"),
        ("queueSort", "PrioritySort"),
        ("multiPoint", "SchedulingGates"),
        ("preEnqueue", "SchedulingGates"),
        ("multiPoint", "DefaultBinder"),
        ("bind", "DefaultBinder"),
    ],
)
def test_disabling_a_required_built_in_plugin_is_refused(point: str, name: str) -> None:
    with pytest.raises(ValidationError, match=f"{name} cannot be disabled: "):
        spec(point, disabled=[{"name": name}])


@pytest.mark.parametrize("name", ["PrioritySort", "SchedulingGates", "DefaultBinder"])
def test_a_built_in_plugin_disabled_at_a_point_it_does_not_serve_stays_on(name: str) -> None:
    """As upstream: a filter list naming a plugin that is no filter changes nothing."""
    assert spec("filter", disabled=[{"name": name}]).profiles[0].plugins is not None


@pytest.mark.parametrize("name", ["PrioritySort", "SchedulingGates", "DefaultBinder", "DefaultPreemption", "NodeName"])
def test_enabling_a_built_in_plugin_is_accepted(name: str) -> None:
    """Upstream's default profile lists them under multiPoint: a configuration that repeats it reads."""
    plugins = spec("multiPoint", enabled=[{"name": name}]).profiles[0].plugins
    assert plugins is not None and plugins.preemption()


def test_enabling_a_built_in_plugin_at_a_point_it_does_not_serve_is_refused() -> None:
    """`updatePluginList`: "plugin %q does not extend %s plugin"."""
    with pytest.raises(ValidationError, match="plugin 'PrioritySort' does not extend filter: it serves queueSort"):
        spec("filter", enabled=[{"name": "PrioritySort"}])
    assert spec("preEnqueue", enabled=[{"name": "DefaultPreemption"}]).profiles[0].plugins is not None


@pytest.mark.parametrize(
    ("point", "disabled"),
    [("postFilter", "DefaultPreemption"), ("postFilter", "*"), ("multiPoint", "DefaultPreemption")],
)
def test_disabling_default_preemption_turns_preemption_off(point: str, disabled: str) -> None:
    plugins = spec(point, disabled=[{"name": disabled}]).profiles[0].plugins
    assert plugins is not None and not plugins.preemption()


def test_preemption_is_on_by_default_and_when_enabled_again() -> None:
    assert SchedulerSpec.model_validate({}).profiles[0].plugins is None
    plugins = spec("postFilter", disabled=[{"name": "*"}], enabled=[{"name": "DefaultPreemption"}]).profiles[0].plugins
    assert plugins is not None and plugins.preemption()


@pytest.mark.parametrize("point", ["filter", "multiPoint"])
def test_node_name_may_be_disabled(point: str) -> None:
    """Upstream's scheduler never queues a pod with spec.nodeName, so turning the filter off changes nothing."""
    plugins = spec(point, disabled=[{"name": "NodeName"}]).profiles[0].plugins
    assert plugins is not None and plugins.preemption()


def test_a_wildcard_at_queue_sort_leaves_no_queue_sort_plugin() -> None:
    """NewFramework: "only one queue sort plugin required for profile", and none is left."""
    with pytest.raises(ValidationError, match=r"PrioritySort cannot be disabled: .*exactly one QueueSort plugin"):
        spec("queueSort", disabled=[{"name": "*"}])
    assert spec("queueSort", disabled=[{"name": "*"}], enabled=[{"name": "PrioritySort"}]).profiles[0].plugins


def test_a_wildcard_at_bind_leaves_no_binder() -> None:
    with pytest.raises(ValidationError, match=r"DefaultBinder cannot be disabled: .*at least one Bind plugin"):
        spec("bind", disabled=[{"name": "*"}])


def test_a_wildcard_at_multi_point_turns_the_built_ins_off_too() -> None:
    """`*` drops every default multiPoint plugin: a profile must name the queue sort, gate and binder
    again, and preemption is off unless it names DefaultPreemption too."""
    with pytest.raises(ValidationError, match=r"SchedulingGates cannot be disabled.*PrioritySort.*DefaultBinder"):
        spec("multiPoint", disabled=[{"name": "*"}])
    kept = [{"name": n} for n in ("SchedulingGates", "PrioritySort", "DefaultBinder")]
    plugins = spec("multiPoint", disabled=[{"name": "*"}, {"name": "VolumeRestrictions"}], enabled=kept)
    assert plugins.profiles[0].plugins is not None and not plugins.profiles[0].plugins.preemption()


def test_an_unknown_plugin_is_still_refused() -> None:
    with pytest.raises(ValidationError, match="unknown plugin 'NoSuchPlugin'"):
        spec("filter", disabled=[{"name": "NoSuchPlugin"}])


def test_a_point_served_by_built_ins_alone_takes_no_other_plugin() -> None:
    with pytest.raises(ValidationError, match="plugin 'NodeResourcesFit' does not extend bind"):
        spec("bind", enabled=[{"name": "NodeResourcesFit"}])
