"""Waiting on another process by what it does, never by the wall clock.

A test that waits for another process waits for the real event (its exit, a row in the store, a
file) with no time limit, so a slow or busy machine only makes it wait longer; pytest-timeout
(pyproject.toml) is the one net should the event never come. Where a test must bound what a
process does, it bounds the process's own CPU time, which a busy machine does not inflate.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import psutil
import pytest

POLL_S = 0.02  # how often a condition is looked at again: a pace, not a limit


def wait_until(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    """Look at `condition` until it holds; fail, with the process's output, if the process ends first."""
    while not condition():
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the process ended (exit {process.returncode}) before {what}:\n{out}\n{err}")
        time.sleep(POLL_S)


def cpu_seconds(process: subprocess.Popen[str]) -> float:
    """The CPU time (user and system, all its threads) the process has used so far."""
    times = psutil.Process(process.pid).cpu_times()
    return float(times.user + times.system)


def wait_for_cpu(process: subprocess.Popen[str], seconds: float, what: str) -> None:
    """Wait until the process has used `seconds` more CPU time than now: that much work done,
    however long a busy machine takes to let it."""
    start = cpu_seconds(process)

    def done() -> bool:
        try:
            return cpu_seconds(process) >= start + seconds
        except psutil.NoSuchProcess:  # it ended: wait_until says so, with its output
            return False

    wait_until(done, process, what)


def communicate_within_cpu(process: subprocess.Popen[str], seconds: float, what: str) -> tuple[str, str]:
    """Wait for the process to end and return its output; kill it and fail if it uses more than
    `seconds` of CPU time first (it was meant to end soon, not run on). For a process that prints
    little: its pipes are read once it has ended."""
    start = cpu_seconds(process)
    while process.poll() is None:
        try:
            used = cpu_seconds(process) - start
        except psutil.NoSuchProcess:  # it ended between the two looks
            break
        if used > seconds:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"{what}: still running after {used:.1f} s of CPU time\n{out}\n{err}")
        time.sleep(POLL_S)
    return process.communicate()
