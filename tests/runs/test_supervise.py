"""Supervision's promises across processes: a sweep's workers end with their parent, however it ends."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from skenario.runs.supervise import MemoryGuard, Stopped, loading
from tests.processes import wait_until
from tests.runs.inputs import EXAMPLES


def _gone(pid: int) -> None:
    """Wait, with no limit, for process `pid` (not a child of ours) to end."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        select.select([handle], [], [])
    finally:
        os.close(handle)


def test_a_sweeps_workers_end_when_its_parent_is_killed(tmp_path: Path) -> None:
    """The parent killed by SIGKILL (it cannot clean up) while its workers are mid-run on ten-hour runs:
    the workers end at once, instead of running their jobs to the end for nobody."""
    sweep = tmp_path / "long.yaml"
    sweep.write_text((EXAMPLES / "sweep" / "hpa.yaml").read_text().replace("duration: 1h", "duration: 10h", 1))
    parent = subprocess.Popen(
        [sys.executable, "-m", "skenario", "sweep", str(sweep), "--seeds", "4", "--workers", "2", "--no-store"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    workers: list[psutil.Process] = []

    def started() -> bool:
        workers[:] = psutil.Process(parent.pid).children()
        return len(workers) == 2 and all(w.cpu_times().user > 0.5 for w in workers)  # each well into its run

    wait_until(started, parent, "its two workers were running")
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    for worker in workers:
        _gone(worker.pid)
    assert not any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers)


def test_a_signal_while_the_input_is_read_stops_it_where_it_is() -> None:
    reached_after = []
    with pytest.raises(Stopped) as stopped, loading():
        os.kill(os.getpid(), signal.SIGTERM)
        reached_after.append(True)  # the next bytecode runs the handler, which raises: never reached
    assert reached_after == []
    assert str(stopped.value) == "stopped by signal SIGTERM" and stopped.value.exit_code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler was put back


def test_the_memory_budget_holds_while_the_input_is_read() -> None:
    """A budget already passed (any process is past 1 byte) stops reading at the guard's first look."""
    with pytest.raises(Stopped) as stopped, loading(budget=1):
        while True:  # reading an endless input: the guard's stop arrives between two bytecodes
            sum(range(100))
    assert stopped.value.exit_code == MemoryGuard.EXIT_CODE
    reason = str(stopped.value)
    assert reason.startswith("memory budget 1 B exceeded") and reason.endswith("while reading the input")
