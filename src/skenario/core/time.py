"""Simulated time: integer nanoseconds from epoch 0, and the duration strings users write.

Integers keep time exact and ordering total (no float drift over a month of trace). Durations in
files are Go-style strings (`250ms`, `15s`, `1h30m`), as in Kubernetes manifests.

Four renderings, for four jobs:

- `format_duration`: exact, for what a user may copy back into a file (`1m0.000365104s`);
  `parse_duration` reads it back to the nanosecond.
- `format_human_duration`: rounded to two or three significant figures, for reading (`6m47s`,
  `407ms`, `2.3s`, `1h05m`, `2d03h`); still a duration `parse_duration` accepts.
- `format_clock`: an instant of the run as a clock reading, `00:05:00` (`1d 02:00:00` past a
  day), whole seconds unless more digits are asked for; `parse_clock` reads it back.
- `format_relative`: an instant against a reference one, `-1m30s` (before it) or `+4s` (after).
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


def _whole(ns: float) -> int:
    """Nanoseconds as a Python int: an int as it is (numpy's too), a float rounded to the nearest."""
    return int(ns) if isinstance(ns, int) or float(ns).is_integer() else round(ns)


def _round_half_up(ns: int, step: int) -> int:
    """`ns` (at least 0) rounded to a multiple of `step`, halves up."""
    return (ns + step // 2) // step * step


# Below a minute: a decimal number of one unit, rounded to three significant figures below a
# second and to two from 1 s to 10 s (hundredths of a second say little to a reader), whole
# seconds to a minute. Each row: (the row holds values below this, round to this, the unit).
_DECIMAL_TIERS: tuple[tuple[int, int, str], ...] = (
    (MICROSECOND, NANOSECOND, "ns"),
    (10 * MICROSECOND, 10, "µs"),
    (100 * MICROSECOND, 100, "µs"),
    (MILLISECOND, MICROSECOND, "µs"),
    (10 * MILLISECOND, 10 * MICROSECOND, "ms"),
    (100 * MILLISECOND, 100 * MICROSECOND, "ms"),
    (SECOND, MILLISECOND, "ms"),
    (10 * SECOND, 100 * MILLISECOND, "s"),
    (MINUTE, SECOND, "s"),
)
# From a minute: two units, the second one zero-padded and left out when it is zero.
_COMPOUND_TIERS: tuple[tuple[int | None, str, str], ...] = (
    (HOUR, "m", "s"),  # 6m47s, rounded to the second
    (DAY, "h", "m"),  # 1h05m, to the minute
    (None, "d", "h"),  # 2d03h, to the hour
)


def format_human_duration(ns: float) -> str:
    """A duration rounded for reading: `407ms`, `2.3s`, `47s`, `6m47s`, `1h05m`, `2d03h`.

    `ns` is nanoseconds; a float (a mean, a pandas value) is first rounded to the nanosecond.

    Three significant figures below a second (`47.1ms`, `2.35ms`), one decimal from 1 s to 10 s,
    whole seconds to an hour, whole minutes to a day, whole hours beyond; halves round up, and a
    value that rounds up to the next unit is written in it (59.6 s is `1m`). The text is a
    duration `parse_duration` accepts, within 5% of `ns` (and within half the last digit). Not
    for files: `format_duration` is exact.
    """
    ns = _whole(ns)
    if ns < 0:
        return "-" + format_human_duration(-ns)
    if ns == 0:
        return "0s"
    for below, step, unit in _DECIMAL_TIERS:
        rounded = _round_half_up(ns, step)
        if rounded < below:
            return _decimal(rounded, UNITS[unit]) + unit
    for limit, big, small in _COMPOUND_TIERS:
        rounded = _round_half_up(ns, UNITS[small])
        if limit is None or rounded < limit:
            whole, rest = divmod(rounded, UNITS[big])
            return f"{whole}{big}" + (f"{rest // UNITS[small]:02d}{small}" if rest else "")
    raise AssertionError("the last tier has no limit")  # pragma: no cover


def format_clock(ns: float, digits: int = 0) -> str:
    """An instant of simulated time (nanoseconds from 0) as a clock reading: `00:05:00`, `1d 02:00:00`.

    Rounded (halves up) to `digits` decimals of a second, 0 to 9: a decision at 60.000365104 s
    reads `00:01:00`, or `00:01:00.000365104` with digits 9. Hours run 00-23 after a day count
    (`1d 02:00:00`); an instant before 0 has a leading `-`. `parse_clock` reads it back, to the
    nanosecond when digits is 9. A float is first rounded to the nanosecond.
    """
    if not 0 <= digits <= 9:
        raise ValueError(f"digits must be 0 to 9, got {digits}")
    ns = _whole(ns)
    if ns < 0:
        return "-" + format_clock(-ns, digits)
    step = 10 ** (9 - digits)
    whole, fraction = divmod(_round_half_up(ns, step), SECOND)
    days, whole = divmod(whole, DAY // SECOND)
    hours, whole = divmod(whole, HOUR // SECOND)
    minutes, secs = divmod(whole, MINUTE // SECOND)
    text = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    if digits:
        text += "." + str(fraction // step).rjust(digits, "0")
    return f"{days}d {text}" if days else text


_CLOCK = re.compile(r"^\s*(-)?\s*(?:(\d+)\s*d\s+)?(\d+):([0-5]\d):([0-5]\d)(?:\.(\d{1,9}))?\s*$")


def parse_clock(text: str) -> int:
    """Read a clock reading (`00:12:30`, `1d 02:00:00`, `00:00:01.5`) as nanoseconds from 0, exactly.

    The inverse of `format_clock`. Raises ValueError naming the text and the form expected.
    """
    match = _CLOCK.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{text!r} is not a clock time; write hh:mm:ss, such as '00:12:30' or '1d 02:00:00'")
    sign, days, hours, minutes, secs, fraction = match.groups()
    whole = ((int(days or 0) * 24 + int(hours)) * 60 + int(minutes)) * 60 + int(secs)
    ns = whole * SECOND + (int(fraction.ljust(9, "0")) if fraction else 0)
    return -ns if sign else ns


def format_relative(ns: float, reference: float) -> str:
    """Instant `ns` against `reference`: `-1m30s` when 90 s before it, `+4s` after, `0s` at it.

    The magnitude is `format_human_duration`'s, so rounded for reading.
    """
    delta = _whole(ns) - _whole(reference)
    if delta == 0:
        return "0s"
    return ("-" if delta < 0 else "+") + format_human_duration(abs(delta))


def seconds(ns: int) -> float:
    """Nanoseconds as float seconds, for reports."""
    return ns / SECOND
