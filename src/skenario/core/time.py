"""Simulated time: integer nanoseconds from epoch 0, and the duration strings users write.

Integers keep time exact and ordering total (no float drift over a month of trace). Durations in
files are Go-style strings (`250ms`, `15s`, `1h30m`), as in Kubernetes manifests.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

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
    "µs": MICROSECOND,  # U+00B5 micro sign
    "μs": MICROSECOND,  # U+03BC Greek mu; Go accepts both
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
    "d": DAY,
}

_NUMBER = r"(?:\d+(?:\.\d*)?|\.\d+)"
_UNIT = r"(?:ns|us|µs|μs|ms|s|m|h|d)"
_TERM = re.compile(rf"({_NUMBER})\s*({_UNIT})")
_WHOLE = re.compile(rf"^\s*-?\s*(?:{_NUMBER}\s*{_UNIT}\s*)+$")


def parse_duration(text: str) -> int:
    """Parse `250ms`, `1.5s`, `1h30m` or `-2s` into integer nanoseconds, exactly.

    Raises ValueError with a message a user can act on; the caller adds file and field.
    """
    if not isinstance(text, str):
        if isinstance(text, int | float) and not isinstance(text, bool) and math.isfinite(text):
            raise ValueError(f"a duration needs a unit, such as '{text}s' or '{text}ms'")
        raise ValueError("a duration is a string with a unit, such as '250ms' or '1h30m'")
    if not _WHOLE.match(text):
        raise ValueError(
            f"'{text}' is not a duration; write a number and a unit "
            f"(ns, us, ms, s, m, h, d), such as '250ms' or '1h30m'"
        )
    total = sum((Fraction(number) * UNITS[unit] for number, unit in _TERM.findall(text)), Fraction(0))
    ns = round(total)
    return -ns if text.strip().startswith("-") else ns


def format_duration(ns: int) -> str:
    """Render nanoseconds exactly, Go style without zero parts: `1m40s`, `1h1s`, `1.5s`, `250ms`.

    `parse_duration(format_duration(x)) == x` for every integer x.
    """
    if ns < 0:
        return "-" + format_duration(-ns)
    if ns == 0:
        return "0s"
    if ns < SECOND:
        for unit, size in (("ms", MILLISECOND), ("us", MICROSECOND)):
            if ns >= size:
                return _decimal(ns, size) + unit
        return f"{ns}ns"
    hours, rest = divmod(ns, HOUR)
    minutes, rest = divmod(rest, MINUTE)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else ""]
    if rest:
        parts.append(_decimal(rest, SECOND) + "s")
    return "".join(parts)


def _decimal(ns: int, unit: int) -> str:
    """`ns / unit` as an exact decimal string (units are powers of ten of a nanosecond)."""
    whole, fraction = divmod(ns, unit)
    if not fraction:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{str(fraction).rjust(digits, '0').rstrip('0')}"


def seconds(ns: int) -> float:
    """Nanoseconds as float seconds, for reports."""
    return ns / SECOND
