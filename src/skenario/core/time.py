"""Simulated time: integer nanoseconds from epoch 0, and the duration strings users write.

Integers keep time exact and ordering total (no float drift over a month of trace). Durations in
files are Go-style strings (`250ms`, `15s`, `1h30m`), as in Kubernetes manifests.
"""

from __future__ import annotations

import re

NANOSECOND = 1
MICROSECOND = 1_000
MILLISECOND = 1_000_000
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR

UNITS: dict[str, int] = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "µs": MICROSECOND,
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
    "d": DAY,
}

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_UNIT = r"(?:ns|us|µs|ms|s|m|h|d)"
_TERM = re.compile(rf"({_NUMBER})\s*({_UNIT})")
_WHOLE = re.compile(rf"^\s*(?:{_NUMBER}\s*{_UNIT}\s*)+$")


def parse_duration(text: str) -> int:
    """Parse `250ms`, `1.5s` or `1h30m` into integer nanoseconds.

    Raises ValueError with a message a user can act on; the caller adds file and field.
    """
    if not isinstance(text, str):
        raise ValueError(f"a duration needs a unit, such as '{text}s' or '{text}ms'")
    if not _WHOLE.match(text):
        raise ValueError(
            f"'{text}' is not a duration; write a number and a unit "
            f"({', '.join(u for u in UNITS if u != 'µs')}), such as '250ms' or '1h30m'"
        )
    total = 0.0
    for number, unit in _TERM.findall(text):
        total += float(number) * UNITS[unit]
    return round(total)


def format_duration(ns: int) -> str:
    """Render nanoseconds in the largest unit that keeps it readable (`1.5s`, `250ms`)."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    for unit, size in (("h", HOUR), ("m", MINUTE), ("s", SECOND), ("ms", MILLISECOND), ("us", MICROSECOND)):
        if ns >= size:
            value = ns / size
            return f"{sign}{value:.6g}{unit}"
    return f"{sign}{ns}ns"


def seconds(ns: int) -> float:
    """Nanoseconds as float seconds, for reports."""
    return ns / SECOND
