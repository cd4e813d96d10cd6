"""The scenario's `scheduler` section: which plugin names a profile's `enabled` and `disabled` lists take."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from skenario.scenario.format.scheduler import SchedulerSpec


def spec(point: str, **sets: list[dict[str, Any]]) -> SchedulerSpec:
    return SchedulerSpec.model_validate({"profiles": [{"plugins": {point: sets}}]})


@pytest.mark.parametrize("point", ["multiPoint", "filter", "score"])
@pytest.mark.parametrize("name", ["PrioritySort", "SchedulingGates"])
def test_disabling_a_built_in_plugin_is_refused(point: str, name: str) -> None:
    with pytest.raises(ValidationError, match=f"{name} cannot be disabled: it is built into"):
        spec(point, disabled=[{"name": name}])


@pytest.mark.parametrize("name", ["PrioritySort", "SchedulingGates"])
def test_enabling_a_built_in_plugin_is_accepted(name: str) -> None:
    """Upstream's default profile lists both under multiPoint: a configuration that repeats it reads."""
    assert spec("multiPoint", enabled=[{"name": name}]).profiles[0].plugins is not None


def test_a_wildcard_and_a_plugin_not_modelled_may_still_be_disabled() -> None:
    spec("multiPoint", disabled=[{"name": "*"}, {"name": "VolumeRestrictions"}])


def test_an_unknown_plugin_is_still_refused() -> None:
    with pytest.raises(ValidationError, match="unknown plugin 'NoSuchPlugin'"):
        spec("filter", disabled=[{"name": "NoSuchPlugin"}])
