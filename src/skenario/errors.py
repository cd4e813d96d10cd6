"""User-facing errors.

A `SkenarioError` is a mistake in what the user supplied (a scenario, a trace, a unit). It names
the file, the field path and the offending value so the CLI can print one clear line and exit 2.
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations

import signal
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


class RunStop(Exception):
    """A stop from outside the run (a signal, the memory budget), raised wherever the run was, a plugin's code
    too: never the plugin's failure."""


def plugin_failure(exc: BaseException, plugin: str, method: str, when: str) -> PluginError | None:
    """What a plugin's code raised, as its one-line failure: the plugin (as the user wrote it), the method and
    `when` (`at 15s` of simulated time, or `while the run was built`).

    None for what is not the plugin's to answer for: a SkenarioError, already said; a stop from outside
    (`RunStop`); Ctrl-C while Python's own handler of it is in place, which may be the user's. Under
    skenario's handlers (a run under supervision) or where it is ignored (a sweep's worker), a signal never
    raises KeyboardInterrupt, so one then is the plugin's own. `SystemExit` is the plugin's failure: a
    plugin does not end skenario, and least of all with status 0.
    """
    if isinstance(exc, SkenarioError | RunStop | GeneratorExit):
        return None
    if isinstance(exc, KeyboardInterrupt) and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        return None
    said = f"{type(exc).__name__}({exc.code!r})" if isinstance(exc, SystemExit) else type(exc).__name__
    detail = "" if isinstance(exc, SystemExit) or not str(exc) else f": {exc}"
    return PluginError(f"plugin {plugin} raised {said} in {method} {when}{detail}")
