"""Loading a user's class: the policy (`--no-plugins`, the modules allowed) decides before anything is looked
for, a class must be its file's or module's own, and what its code raises while it is made is its failure,
named as the scenario wrote it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skenario.errors import PluginError, ScenarioError
from skenario.scenario.wiring.plugins import (
    PluginPolicy,
    StandIn,
    allowing,
    applied,
    current_policy,
    load_class,
    modules_of,
    plugin_name,
    refused,
    unloaded,
)

FIELD = "spec.autoscalers.0.plugin"
SCALER = """\
class Scaler:
    def __init__(self, every=1):
        self.every = every
        if every < 0:
            len(5)  # a TypeError of its own making

    def start(self, context):
        pass
"""


def load(plugin: str, base_dir: Path, **options: object) -> object:
    return load_class(plugin, base_dir, FIELD, dict(options), ("start",))


def test_the_policies_nest_and_come_back() -> None:
    assert current_policy() == PluginPolicy()
    with allowing(["a.b", " c ", ""]):
        with refused(), allowing(["d"]):
            assert current_policy() == PluginPolicy(True, frozenset({"a.b", "c", "d"}))
        assert current_policy() == PluginPolicy(False, frozenset({"a.b", "c"}))
    assert current_policy() == PluginPolicy()
    assert modules_of(" a.b, ,c ") == ["a.b", "c"] and modules_of(None) == []


def test_a_module_not_allowed_is_refused_before_it_is_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    looked: list[str] = []

    class Finder:  # sees every name the import system is asked for
        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> None:
            looked.append(name)

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    for mode in (unloaded(), applied(PluginPolicy())):
        with mode, pytest.raises(ScenarioError, match="'not_looked_for' is not allowed") as raised:
            load("not_looked_for:Scaler", tmp_path)
        assert raised.value.field == FIELD
    assert looked == []


def test_a_file_needs_no_allowance_and_is_named_as_written(tmp_path: Path) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "scaler.py").write_text(SCALER)
    instance = load("plugins/scaler.py:Scaler", tmp_path, every=2)
    assert plugin_name(type(instance)) == "plugins/scaler.py:Scaler"
    with unloaded():
        assert isinstance(load("plugins/scaler.py:Scaler", tmp_path), StandIn)


def test_an_allowed_module_loads_and_keeps_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "own_scalers.py").write_text(SCALER)
    monkeypatch.syspath_prepend(str(tmp_path))
    with allowing(["own_scalers"]):
        instance = load("own_scalers:Scaler", tmp_path)
    assert plugin_name(type(instance)) == "own_scalers:Scaler"
    sys.modules.pop("own_scalers")


def test_options_it_does_not_take_are_the_scenarios_mistake_and_what_its_code_raises_is_its_failure(
    tmp_path: Path,
) -> None:
    (tmp_path / "scaler.py").write_text(SCALER)
    with pytest.raises(ScenarioError, match="does not take these options") as mistake:
        load("scaler.py:Scaler", tmp_path, often=True)
    assert not isinstance(mistake.value, PluginError)
    with pytest.raises(PluginError) as failure:
        load("scaler.py:Scaler", tmp_path, every=-1)
    assert failure.value.field == FIELD
    assert failure.value.message == (
        "plugin scaler.py:Scaler raised TypeError in __init__ while the run was built: "
        "object of type 'int' has no len()"
    )


def test_what_a_plugin_file_raises_as_it_is_executed_is_its_failure(tmp_path: Path) -> None:
    (tmp_path / "leaving.py").write_text(
        "raise SystemExit(0)\n\nclass Scaler:\n    def start(self, context):\n        pass\n"
    )
    with pytest.raises(PluginError) as failure:
        load("leaving.py:Scaler", tmp_path)
    assert failure.value.message == "plugin leaving.py raised SystemExit(0) in its import while the run was built"


@pytest.mark.parametrize(
    "source",
    [
        "from collections import Counter as Scaler\n",
        "import collections\nScaler = collections.Counter\n",
    ],
)
def test_a_class_its_file_does_not_define_is_refused(tmp_path: Path, source: str) -> None:
    (tmp_path / "borrowed.py").write_text(source)
    with pytest.raises(ScenarioError, match=r"'Scaler' is not defined in borrowed\.py"):
        load("borrowed.py:Scaler", tmp_path)
