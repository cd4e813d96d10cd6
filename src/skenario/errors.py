"""User-facing errors.

A `SkenarioError` is a mistake in what the user supplied (a scenario, a trace, a unit). It names
the file, the field path and the offending value so the CLI can print one clear line and exit 2.
Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations

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
