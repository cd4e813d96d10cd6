"""What reaches the terminal: text as it was given, never instructions to the terminal or to Rich.

A value a user wrote (a scenario's key, a file's line, a run's name) can hold escape sequences that
clear the screen or retitle the window, bidirectional overrides that reorder what is shown, and
`:code:` names Rich would turn into emoji. `Terminal` is the one console class the commands print
through: it shows every control character as an escape (`\\x1b`, `\\u202e`) and turns emoji codes
off. Rich markup is off unless a print asks for it (`markup=True`), and there each user value is
escaped (`rich.markup.escape`): a name such as `[red]x[/]` prints as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TextIO

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 but tab and line feed, DEL, C1, and the bidirectional marks, embeddings, overrides and isolates."""


def shown(text: str) -> str:
    """`text` with each control character written as its escape, as Python writes it in a string."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class ShownWriter:
    """A text stream whose writes are `shown` first: for what click writes itself (a usage error)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(shown(text))

    def flush(self) -> None:
        self.stream.flush()


class Terminal(Console):
    """A Rich console that prints control characters as escapes and knows no emoji codes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("emoji", False)
        kwargs.setdefault("markup", False)
        super().__init__(*args, **kwargs)

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """A string, its control characters escaped before it is laid out (so widths stay right)."""
        return super().render_str(shown(text), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        """Every segment of text (Text made elsewhere too), escaped; the console's own controls (a
        progress bar's cursor moves) pass as they are."""
        for segment in super().render(renderable, options):
            if segment.control is None and _CONTROL.search(segment.text):
                yield Segment(shown(segment.text), segment.style)
            else:
                yield segment
