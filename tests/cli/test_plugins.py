"""Plugins: only a file the scenario names or a module the user allowed is loaded, and nothing of it runs
before it is checked to be a plugin class the file or module defines; `--no-plugins` refuses them all, on
every command that runs scenarios; a plugin that fails, whatever it raises, is reported in one line naming
it as written, and its run kept as Failed."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from skenario.cli import cli
from tests.docs import blocks, page

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


def error_line(output: str) -> str:
    """The output's one line, which must be an error naming the scenario's plugin field."""
    [line] = output.splitlines()
    assert line.startswith("error: ") and "field 'spec.autoscalers.0.plugin'" in line, output
    return line


def test_a_module_the_user_did_not_allow_is_refused_before_anything_is_called(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    scenario = write(tmp_path, "os:system", f"{{command: 'touch {marker}'}}")
    code, output = run(str(scenario), "--store", str(tmp_path / "store"))
    assert code == 2
    assert "the plugin module 'os' is not allowed" in error_line(output) and "--allow-plugin-module os" in output
    assert not marker.exists()


def test_a_callable_of_an_allowed_module_that_is_not_a_plugin_class_is_refused_before_it_is_called(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "ran"
    scenario = write(tmp_path, "os:system", f"{{command: 'touch {marker}'}}")
    code, output = run(str(scenario), "--store", str(tmp_path / "store"), "--allow-plugin-module", "os")
    assert code == 2
    assert "'system' is not a class" in error_line(output)
    assert not marker.exists()  # os.system was never called


def test_a_class_without_the_methods_of_its_kind_is_refused_before_it_is_made(tmp_path: Path) -> None:
    code, output = run(
        str(write(tmp_path, "collections:Counter")), "--no-store", "--allow-plugin-module", "collections"
    )
    assert code == 2 and "needs a method start" in error_line(output)


MARKING = """\
from pathlib import Path
Path(MARK).write_text("imported")


class Scaler:
    def start(self, context):
        pass
"""


@pytest.fixture
def marking_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module on the path whose import leaves a mark: the mark's path."""
    mark = tmp_path / "imported"
    (tmp_path / "modules").mkdir()
    (tmp_path / "modules" / "marking_plugin.py").write_text(MARKING.replace("MARK", repr(str(mark))))
    monkeypatch.syspath_prepend(str(tmp_path / "modules"))
    monkeypatch.delenv("SKENARIO_PLUGIN_MODULES", raising=False)
    yield mark
    sys.modules.pop("marking_plugin", None)


@pytest.mark.parametrize("command", [["run", "--no-store", "--no-progress"], ["check"], ["run", "--dry-run"]])
def test_a_module_not_allowed_is_not_imported_by_any_command(
    tmp_path: Path, marking_module: Path, command: list[str]
) -> None:
    scenario = write(tmp_path, "marking_plugin:Scaler")
    result = CliRunner().invoke(cli, [command[0], str(scenario), *command[1:]])
    assert result.exit_code == 2
    assert "'marking_plugin' is not allowed" in error_line(result.output)
    assert not marking_module.exists() and "marking_plugin" not in sys.modules


def test_a_module_allowed_by_the_option_or_the_environment_runs(
    tmp_path: Path, marking_module: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = write(tmp_path, "marking_plugin:Scaler")
    code, output = run(str(scenario), "--no-store", "--allow-plugin-module", "marking_plugin")
    assert code == 0, output
    assert marking_module.read_text() == "imported"
    marking_module.unlink()
    sys.modules.pop("marking_plugin")
    monkeypatch.setenv("SKENARIO_PLUGIN_MODULES", "json, marking_plugin")
    code, output = run(str(scenario), "--no-store", "--allow-plugin-module", "json")  # the option replaces it
    assert code == 2 and "'marking_plugin' is not allowed" in error_line(output)
    assert not marking_module.exists()
    code, output = run(str(scenario), "--no-store")
    assert code == 0, output
    assert marking_module.exists()


def test_allowing_a_package_does_not_allow_its_modules(tmp_path: Path) -> None:
    code, output = run(
        str(write(tmp_path, "logging.handlers:SysLogHandler")), "--no-store", "--allow-plugin-module", "logging"
    )
    assert code == 2 and "'logging.handlers' is not allowed" in error_line(output)


def test_antigravity_is_not_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its import opens a browser ($BROWSER): here a command that would leave a mark.
    mark = tmp_path / "browsed"
    monkeypatch.setenv("BROWSER", f"touch {mark} %s")
    monkeypatch.delenv("SKENARIO_PLUGIN_MODULES", raising=False)
    for command in (["run", "--no-store", "--no-progress"], ["check"]):
        result = CliRunner().invoke(cli, [command[0], str(write(tmp_path, "antigravity:X")), *command[1:]])
        assert result.exit_code == 2 and "'antigravity' is not allowed" in error_line(result.output)
    assert "antigravity" not in sys.modules and not mark.exists()


def test_a_class_imported_into_a_plugin_file_is_refused_by_check_and_run(tmp_path: Path) -> None:
    (tmp_path / "counted.py").write_text("from collections import Counter as C\n")
    scenario = write(tmp_path, "counted.py:C")
    for command in (["check"], ["run", "--no-store", "--no-progress"]):
        result = CliRunner().invoke(cli, [command[0], str(scenario), *command[1:]])
        assert result.exit_code == 2
        assert "'C' is not defined in counted.py" in error_line(result.output)


@pytest.mark.parametrize("plugin", ["..evil:Evil", ".evil:Evil", "ev il:Evil", "evil.:Evil", "1evil:E"])
def test_a_malformed_plugin_name_is_one_line(tmp_path: Path, plugin: str) -> None:
    for command in (["check"], ["run", "--no-store", "--no-progress"]):
        result = CliRunner().invoke(cli, [command[0], str(write(tmp_path, repr(plugin))), *command[1:]])
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert plugin in error_line(result.output)


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


RAN = "raise SystemExit('this file ran')\n"
SLS = Path(__file__).resolve().parents[2] / "examples" / "traces" / "sls"


@pytest.mark.parametrize(
    "command",
    [
        ["sweep", "SCENARIO", "--seeds", "1", "--no-store"],
        ["sweep", "SCENARIO", "--set", "workload.replicas=1,2", "--seeds", "1", "--no-store"],
        ["tune", "SCENARIO", "--space", "workload.replicas=1..2:int", "--objective", "min:replica_hours", "--no-store"],
        ["check", "SCENARIO"],
        ["run", "SCENARIO", "--dry-run"],
    ],
)
def test_no_plugins_refuses_before_reading_their_code_on_every_command(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "faulty.py").write_text(RAN)
    scenario = str(write(tmp_path, "faulty.py:Faulty"))
    result = CliRunner().invoke(cli, [scenario if arg == "SCENARIO" else arg for arg in command] + ["--no-plugins"])
    assert result.exit_code == 2 and "this file ran" not in result.output
    assert "plugins are refused (--no-plugins)" in error_line(result.output)


def schedule(tmp_path: Path, source: str, *options: str) -> Result:
    """`skenario schedule` of the SLS example with a scheduler file naming avoid.py:Avoid, whose source is given."""
    (tmp_path / "avoid.py").write_text(source)
    config = tmp_path / "scheduler.yaml"
    config.write_text("customPlugins:\n  - {name: Avoid, plugin: avoid.py:Avoid}\n")
    trace = [str(SLS / "inputsls.json"), "--format", "sls", "--nodes", str(SLS / "nodes-with-resources.json")]
    return CliRunner().invoke(cli, ["schedule", *trace, "--scheduler", str(config), *options])


def test_schedule_refuses_the_scheduler_files_plugins_with_no_plugins(tmp_path: Path) -> None:
    result = schedule(tmp_path, RAN, "--no-plugins")
    assert result.exit_code == 2 and "this file ran" not in result.output
    [line] = result.output.splitlines()
    assert "plugins are refused (--no-plugins)" in line and "customPlugins.0.plugin" in line


FAILING = """\
import os


class InInit:
    def __init__(self):
        raise ValueError("no options suit me")

    def start(self, context):
        pass


class ExitsInStart:
    def start(self, context):
        raise SystemExit(0)


class InterruptsItself:
    def start(self, context):
        context.clock.call_later(5_000_000_000, self.tick)

    def tick(self):
        raise KeyboardInterrupt


class EndsItsProcess:
    def start(self, context):
        os._exit(3)


class InterruptsItsStart:
    def start(self, context):
        raise KeyboardInterrupt
"""


def stored(store: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(store / "runs.sqlite") as db:
        return db.execute("SELECT phase, message FROM runs ORDER BY id").fetchall()


def test_a_plugin_failing_in_init_is_one_line_naming_its_file_and_the_build_and_the_run_is_kept(
    tmp_path: Path,
) -> None:
    (tmp_path / "failing.py").write_text(FAILING)
    store = tmp_path / "store"
    code, output = run(str(write(tmp_path, "failing.py:InInit")), "--store", str(store))
    assert code == 2
    line = error_line(output)
    assert "plugin failing.py:InInit raised ValueError in __init__ while the run was built: no options suit me" in line
    assert "skenario_plugin_" not in line and line.endswith("(run 1 kept in the store as Failed)")
    [(phase, message)] = stored(store)
    assert phase == "Failed" and "raised ValueError in __init__" in message


@pytest.mark.parametrize(
    ("plugin", "raised"),
    [
        ("ExitsInStart", "SystemExit(0)"),  # not an exit, least of all with status 0
        ("InterruptsItsStart", "KeyboardInterrupt"),  # no key pressed: skenario notes a real one (ctrl_c_noted)
    ],
)
def test_what_start_raises_as_the_run_is_built_is_the_plugins_failure_and_the_run_is_kept(
    tmp_path: Path, plugin: str, raised: str
) -> None:
    (tmp_path / "failing.py").write_text(FAILING)
    store = tmp_path / "store"
    code, output = run(str(write(tmp_path, f"failing.py:{plugin}")), "--store", str(store))
    assert code == 2
    failure = f"plugin 'plugin' (failing.py:{plugin}) raised {raised} in start at 0s"
    assert output.splitlines() == [f"error: {failure} (run 1 kept in the store as Failed)"]
    assert stored(store) == [("Failed", failure)]
    code, output = run(str(write(tmp_path, f"failing.py:{plugin}")), "--no-store")
    assert (code, output.splitlines()) == (2, [f"error: {failure}"])


def test_a_keyboard_interrupt_a_plugin_raises_during_the_run_is_its_failure_and_the_run_is_kept(
    tmp_path: Path,
) -> None:
    # The run is under skenario's own signal handlers: Ctrl-C there stops the run, it raises no KeyboardInterrupt.
    (tmp_path / "failing.py").write_text(FAILING)
    store = tmp_path / "store"
    code, output = run(str(write(tmp_path, "failing.py:InterruptsItself")), "--store", str(store))
    assert code == 2
    assert output.splitlines() == [
        "error: plugin 'plugin' (failing.py:InterruptsItself) raised KeyboardInterrupt in InterruptsItself.tick at 5s"
    ]
    [(phase, _)] = stored(store)
    assert phase == "Failed"


def test_a_scheduler_plugin_failing_in_filter_is_one_line_with_the_time(tmp_path: Path) -> None:
    result = schedule(tmp_path, "class Avoid:\n    def filter(self, pod, node):\n        return {}['x']\n")
    assert result.exit_code == 2
    [line] = result.output.splitlines()
    assert "plugin Avoid (avoid.py:Avoid) raised KeyError in filter at " in line and line.endswith(": 'x'")
    assert "customPlugins.0.plugin" in line


@pytest.mark.parametrize(
    ("plugin", "settings"),
    [
        ("failing.py:EndsItsProcess", []),  # in start, in the worker
        ("leaving.py:Scaler", ["--set", "workload.replicas=1"]),  # as its file is executed: never in the planning
    ],
)
def test_a_plugin_that_ends_its_worker_fails_its_runs_in_one_line_and_the_sweep_goes_on(
    tmp_path: Path, plugin: str, settings: list[str]
) -> None:
    (tmp_path / "failing.py").write_text(FAILING)
    (tmp_path / "leaving.py").write_text("import os\nos._exit(3)\n\n" + MARKING.split("\n\n\n")[1])
    scenario = write(tmp_path, plugin)
    options = ["--seeds", "2", "--workers", "1", "--no-store", "--no-progress", "-o", "json"]
    result = CliRunner().invoke(cli, ["sweep", str(scenario), *settings, *options])
    assert result.exit_code == 0, result.output
    [line] = result.stderr.splitlines()
    assert line == (
        "failed: point 1, seed 0 and 1 more: its worker process died twice (killed by a signal, out of "
        f"memory, or a plugin that ended its process: {plugin})"
    )


def test_a_sweep_plans_without_running_plugins_and_its_workers_keep_the_modules_allowed(
    tmp_path: Path, marking_module: Path
) -> None:
    scenario = str(write(tmp_path, "marking_plugin:Scaler"))
    refused = CliRunner().invoke(cli, ["sweep", scenario, "--seeds", "1", "--no-store", "--no-progress"])
    assert refused.exit_code == 2 and "'marking_plugin' is not allowed" in error_line(refused.output)
    args = ["sweep", scenario, "--set", "workload.replicas=1,2", "--seeds", "1", "--workers", "1", "--no-store"]
    allowed = CliRunner().invoke(cli, [*args, "--no-progress", "--allow-plugin-module", "marking_plugin", "-o", "json"])
    assert allowed.exit_code == 0 and allowed.stderr == "", allowed.output
    assert marking_module.exists() and "marking_plugin" not in sys.modules  # imported by the workers only


def test_the_failure_line_the_plugins_page_shows_is_what_run_prints(tmp_path: Path) -> None:
    [shown] = [body for lang, body in blocks(page("docs/how-to/plugins.md")) if lang == "" and "error:" in body]
    (tmp_path / "failing.py").write_text(FAULTY.replace("Faulty", "Scaler"))
    code, output = run(str(write(tmp_path, "failing.py:Scaler")), "--no-store")
    assert code == 2 and output == shown


def test_a_study_says_why_its_trials_failed_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "failing.py").write_text(FAILING)
    scenario = str(write(tmp_path, "failing.py:ExitsInStart"))
    space = ["--space", "workload.replicas=1..2:int", "--objective", "min:replica_hours"]
    options = ["--trials", "1", "--batch", "1", "--seeds", "1", "--workers", "1", "--no-store", "--no-progress"]
    result = CliRunner().invoke(cli, ["tune", scenario, *space, *options, "--to", str(tmp_path / "study")])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "failed: trial 0: PluginFailed: plugin 'plugin' (failing.py:ExitsInStart) raised SystemExit(0) in start at 0s"
    ]
