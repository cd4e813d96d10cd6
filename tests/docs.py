"""The documentation's pages, read as the tests that run their examples read them: README.md and docs/**/*.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SITE = ROOT / "docs"
PAGES = [README, *sorted(SITE.rglob("*.md"))]
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```$", re.S | re.M)


def page(name: str) -> str:
    """A page's text by its path from the repository's top (`docs/how-to/results.md`)."""
    return (ROOT / name).read_text(encoding="utf-8")


def section(name: str, start: str, end: str | None = None) -> str:
    """A page's text from `start` to `end` (or the end of the page): each must occur on it."""
    text = page(name)
    begin = text.index(start)
    return text[begin : text.index(end, begin) if end is not None else len(text)]


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced code blocks of a text, as (language, body); the language is empty for printed output."""
    return [(match["lang"], match["body"]) for match in FENCE.finditer(text)]
