"""User-facing errors.

A `SkenarioError` is a mistake in what the user supplied (a scenario, a trace, a unit). It names
the file, the field path and the offending value so the CLI can print one clear line and exit 2.
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


class SkenarioError(Exception):
    """A problem with user input, reported without a traceback."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        value: Any = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.field = field
        self.value = value
        self.line = line

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(self.file if self.line is None else f"{self.file}:{self.line}")
        if self.field is not None:
            where.append(f"field '{self.field}'")
        prefix = ", ".join(where)
        text = f"{prefix}: {self.message}" if prefix else self.message
        if self.value is not None and "value" not in self.message and str(self.value) not in self.message:
            text += f" (value: {self.value!r})"
        return text


class ScenarioError(SkenarioError):
    """The scenario file is unreadable or invalid."""


class UnitError(SkenarioError):
    """A quantity has a missing or unknown unit, such as `5 parsecs`."""


class PluginError(SkenarioError):
    """A user's plugin raised: reported as one line naming the plugin, its method and the simulated time."""


class Halt(SystemExit):
    """The process ends now with this status: a stop was decided and all that is kept is written.

    The command-line entry point ends the process at once (`os._exit`) rather than leave through the
    interpreter's shutdown, which frees the heap object by object: seconds for a heap of a few GB,
    after the process has said it stopped."""


class RunStop(Exception):
    """A stop from outside the run (a signal, the memory budget), raised wherever the run was, a plugin's code
    too: never the plugin's failure."""


_ctrl_c = False  # a SIGINT arrived while a plugin's code ran under `ctrl_c_noted`


@contextmanager
def ctrl_c_noted() -> Iterator[None]:
    """While in it, around a plugin's code where Python's own SIGINT handler is in place (a run being built,
    before its supervision), a real Ctrl-C is noted as it arrives and raised as Python would raise it, so
    that a KeyboardInterrupt the plugin raises itself is told from the user's (`plugin_failure`)."""
    global _ctrl_c
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler or (
        threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def note(signum: int, frame: FrameType | None) -> None:
        global _ctrl_c
        _ctrl_c = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, note)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _ctrl_c = False


def plugin_failure(exc: BaseException, plugin: str, method: str, when: str) -> PluginError | None:
    """What a plugin's code raised, as its one-line failure: the plugin (as the user wrote it), the method and
    `when` (`at 15s` of simulated time, or `while the run was built`).

    None for what is not the plugin's to answer for: a SkenarioError, already said; a stop from outside
    (`RunStop`); the user's Ctrl-C: one noted by `ctrl_c_noted`, or any while Python's own handler is in
    place (which may be the user's). Under skenario's handlers (a run under supervision, `ctrl_c_noted`) or
    where it is ignored (a sweep's worker), a signal raises no KeyboardInterrupt unnoted, so one then is the
    plugin's own. `SystemExit` is the plugin's failure: a plugin does not end skenario, and least of all
    with status 0.
    """
    if isinstance(exc, SkenarioError | RunStop | GeneratorExit):
        return None
    if isinstance(exc, KeyboardInterrupt) and (
        _ctrl_c or signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        return None
    said = f"{type(exc).__name__}({exc.code!r})" if isinstance(exc, SystemExit) else type(exc).__name__
    detail = "" if isinstance(exc, SystemExit) or not str(exc) else f": {exc}"
    return PluginError(f"plugin {plugin} raised {said} in {method} {when}{detail}")
