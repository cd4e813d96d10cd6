"""The process's entry (`skenario.__main__`): Ctrl-C while the command line loads ends quietly, and a
stopped run leaves at once, without the interpreter's shutdown."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from tests.cli.test_run_lifecycle import ENDLESS
from tests.processes import wait_for_cpu, wait_until

ROOT = Path(__file__).resolve().parents[1]

# Sends this process SIGINT as the command line's first library (click) is imported: the moment
# a Ctrl-C at the prompt would cut an import short.
INTERRUPT_DURING_IMPORT = """\
import os, runpy, signal, sys

class Interrupting:
    def find_spec(self, name, path=None, target=None):
        if name == "click":
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupting())
sys.argv = ["skenario", "--help"]
runpy.run_module("skenario", run_name="__main__")
"""

# The entry point run with an exit hook that says whether the interpreter's shutdown ran.
WITH_SHUTDOWN_HOOK = """\
import atexit, runpy, sys
atexit.register(lambda: print("interpreter shutdown", file=sys.stderr, flush=True))
sys.argv = ["skenario", *sys.argv[1:]]
runpy.run_module("skenario", run_name="__main__")
"""


def _runs(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with closing(sqlite3.connect(store)) as db:
            return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])
    except sqlite3.OperationalError:  # not made yet, or locked for a moment
        return 0


def test_ctrl_c_while_the_command_line_loads_ends_with_status_130_and_no_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-c", INTERRUPT_DURING_IMPORT], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 128 + signal.SIGINT, result.stderr
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr
    assert "Usage" not in result.stdout  # it stopped there, before the command ran


def test_a_run_stopped_by_sigterm_ends_the_process_without_the_interpreter_shutdown(tmp_path: Path) -> None:
    """The shutdown frees the heap object by object (seconds for a heap of gigabytes) after the
    process said it stopped; a stopped run's process leaves without it, its output flushed."""
    scenario = tmp_path / "endless.yaml"
    scenario.write_text(ENDLESS)
    store = tmp_path / "runs.sqlite"
    command = ["run", str(scenario), "--store", str(tmp_path), "--no-progress", "--force"]
    process = subprocess.Popen(
        [sys.executable, "-c", WITH_SHUTDOWN_HOOK, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    wait_until(lambda: _runs(store) == 1, process, "the run in the store")
    wait_for_cpu(process, 0.3, "a third of a second of work into the run")
    process.send_signal(signal.SIGTERM)
    _out, err = process.communicate()
    assert process.returncode == 128 + signal.SIGTERM, err
    assert "stopped by signal SIGTERM" in err  # said, and flushed
    assert "interpreter shutdown" not in err and "Traceback" not in err
    with closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT phase FROM runs").fetchall() == [("Failed",)]  # kept before it left


def test_a_command_that_ends_normally_leaves_through_the_interpreter_shutdown(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", WITH_SHUTDOWN_HOOK, "--version"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0 and "skenario" in result.stdout
    assert "interpreter shutdown" in result.stderr


def test_ctrl_c_while_a_command_loads_is_one_word_and_status_130() -> None:
    """The command's module loads when the command runs; a Ctrl-C then is click's `Aborted!`, as a shell
    reports SIGINT."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            INTERRUPT_DURING_IMPORT.replace('"click"', '"skenario.cli.check"').replace(
                '["skenario", "--help"]', '["skenario", "check", "--help"]'
            ),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 128 + signal.SIGINT, result.stderr
    assert result.stderr.strip() == "Aborted!" and "Traceback" not in result.stderr
