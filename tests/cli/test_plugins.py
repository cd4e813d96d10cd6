"""Plugins: nothing a scenario names runs before it is checked to be a plugin class; `--no-plugins`
refuses them all; a plugin that raises is reported in one line and its run kept as Failed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner

from skenario.cli import cli

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: plugged}
spec:
  duration: 1m
  workload: {replicas: 1, request: {cpuTime: 10ms}}
  traffic: {type: constant, rate: 5/s}
  autoscalers:
    - type: plugin
      plugin: PLUGIN
      options: OPTIONS
"""

FAULTY = """\
class Faulty:
    def start(self, context):
        self.context = context
        context.clock.call_later(15_000_000_000, self.tick)

    def tick(self):
        return 1 / 0
"""


def write(tmp_path: Path, plugin: str, options: str = "{}") -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO.replace("PLUGIN", plugin).replace("OPTIONS", options))
    return path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["run", *args, "--no-progress"])
    return result.exit_code, result.output


def test_a_callable_that_is_not_a_plugin_class_is_refused_before_it_is_called(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    scenario = write(tmp_path, "os:system", f"{{command: 'touch {marker}'}}")
    code, output = run(str(scenario), "--store", str(tmp_path / "store"))
    assert code == 2
    assert "'system' is not a class" in output and "spec.autoscalers.0.plugin" in output
    assert not marker.exists()  # os.system was never called


def test_a_class_without_the_methods_of_its_kind_is_refused_before_it_is_made(tmp_path: Path) -> None:
    code, output = run(str(write(tmp_path, "collections:Counter")), "--no-store")
    assert code == 2 and "needs a method start" in output


def test_no_plugins_refuses_a_scenario_with_plugins_before_reading_their_code(tmp_path: Path) -> None:
    (tmp_path / "faulty.py").write_text("raise SystemExit('this file ran')\n")
    code, output = run(str(write(tmp_path, "faulty.py:Faulty")), "--no-store", "--no-plugins")
    assert code == 2 and "--no-plugins" in output and "this file ran" not in output


def test_a_plugin_that_raises_is_named_with_its_method_and_the_time_and_the_run_is_kept_as_failed(
    tmp_path: Path,
) -> None:
    (tmp_path / "faulty.py").write_text(FAULTY)
    store = tmp_path / "store"
    code, output = run(str(write(tmp_path, "faulty.py:Faulty")), "--store", str(store))
    assert code == 2
    assert "Traceback" not in output
    assert "plugin 'plugin' (" in output and "ZeroDivisionError in Faulty.tick at 15s" in output
    with sqlite3.connect(store / "runs.sqlite") as db:
        [(phase,)] = db.execute("SELECT phase FROM runs").fetchall()
    assert phase == "Failed"
