"""A plugin's failure, told as one line: what is the plugin's to answer for, and what is not."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from skenario.errors import PluginError, RunStop, ScenarioError, ctrl_c_noted, plugin_failure


@pytest.fixture
def skenario_handles_ctrl_c() -> Iterator[None]:
    """SIGINT handled by a handler of skenario's (as a run under supervision has): a signal raises no
    KeyboardInterrupt then."""
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_exception_names_the_plugin_the_method_the_time_and_what_it_said() -> None:
    failure = plugin_failure(ZeroDivisionError("division by zero"), "p.py:C", "tick", "at 15s")
    assert isinstance(failure, PluginError)
    assert failure.message == "plugin p.py:C raised ZeroDivisionError in tick at 15s: division by zero"


def test_system_exit_is_a_failure_whatever_its_code() -> None:
    for code in (0, 3, "bye"):
        failure = plugin_failure(SystemExit(code), "p.py:C", "start", "at 0s")
        assert failure is not None and failure.message == f"plugin p.py:C raised SystemExit({code!r}) in start at 0s"


def test_what_is_not_the_plugins_to_answer_for_goes_through() -> None:
    for exc in (ScenarioError("bad field"), PluginError("said already"), RunStop("stopped by signal SIGTERM")):
        assert plugin_failure(exc, "p.py:C", "tick", "at 1s") is None


def test_keyboard_interrupt_is_the_users_under_pythons_handler_and_the_plugins_under_skenarios(
    skenario_handles_ctrl_c: None,
) -> None:
    failure = plugin_failure(KeyboardInterrupt(), "p.py:C", "tick", "at 1s")
    assert failure is not None and failure.message == "plugin p.py:C raised KeyboardInterrupt in tick at 1s"
    signal.signal(signal.SIGINT, signal.default_int_handler)
    assert plugin_failure(KeyboardInterrupt(), "p.py:C", "tick", "at 1s") is None


def test_around_a_plugins_code_a_real_ctrl_c_is_told_from_one_the_plugin_raises() -> None:
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with ctrl_c_noted():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as raised:
            failure = plugin_failure(raised, "p.py:C", "start", "at 0s")
    assert failure is not None and failure.message == "plugin p.py:C raised KeyboardInterrupt in start at 0s"
    with ctrl_c_noted():
        try:
            os.kill(os.getpid(), signal.SIGINT)  # pending once kill returns (POSIX, sent to itself)
            for _ in range(1_000_000):  # Python runs the handler at one of these jumps back, the first
                pass
        except KeyboardInterrupt as raised:
            assert plugin_failure(raised, "p.py:C", "start", "at 0s") is None
        else:
            raise AssertionError("the signal raised nothing")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
