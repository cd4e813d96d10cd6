"""Cron schedules as KEDA's cron scaler reads them, and whether an instant is inside a start/end window.

KEDA parses `start` and `end` with robfig/cron's parser for five fields (minute, hour, day of month, month,
day of week; no seconds, no descriptors), and finds each one's next time after now in the trigger's
timezone (`SpecSchedule.Next`). `cronScaler.GetMetricsAndActivity` (pkg/scalers/cron_scaler.go) is
active when the next end comes before the next start (if the next start came first, now would be
outside the window), which handles windows across midnight.

Fields take `*` (or `?`), numbers, names (JAN-DEC, SUN-SAT), ranges `a-b`, steps `*/n` and `a-b/n` (`a/n`:
from a to the field's end), and lists. As in robfig/cron, when both day fields are restricted a day
matches either; when one is `*`, the other decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# Each field: its name, lowest and highest value, and the names it accepts (their values from `lowest`).
_FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 6, _DAYS),
)
YEARS_SEARCHED = 5  # robfig/cron gives up after five years without a match


class CronError(ValueError):
    """A schedule that does not parse, or a timezone that does not exist."""


@dataclass(frozen=True)
class CronSchedule:
    """A five-field schedule: the values each field allows, and whether each day field was `*`."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool
    any_weekday: bool

    def _day_matches(self, moment: datetime) -> bool:
        """robfig/cron's `dayMatches`: either day field when both are restricted, else both."""
        in_month = moment.day in self.days
        in_week = (moment.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week

    def next_after(self, moment: datetime) -> datetime | None:
        """The first whole minute strictly after `moment` (a wall-clock time, naive) the schedule fires at, as
        `SpecSchedule.Next` searches: month, then day, then hour, then minute; None past five years."""
        t = moment.replace(second=0, microsecond=0) + timedelta(minutes=1)
        limit = moment.year + YEARS_SEARCHED
        while t.year <= limit:
            if t.month not in self.months:
                t = (t.replace(day=1) + timedelta(days=32)).replace(day=1, hour=0, minute=0)
                continue
            if not self._day_matches(t):
                t = (t + timedelta(days=1)).replace(hour=0, minute=0)
                continue
            if t.hour not in self.hours:
                t = (t + timedelta(hours=1)).replace(minute=0)
                continue
            if t.minute not in self.minutes:
                t += timedelta(minutes=1)
                continue
            return t
        return None


def parse_schedule(text: str) -> CronSchedule:
    """`text` as robfig/cron's parser with Minute | Hour | Dom | Month | Dow reads it."""
    fields = text.split()
    if len(fields) != len(_FIELDS):
        raise CronError(
            f"expected exactly 5 fields (minute hour day-of-month month day-of-week), found {len(fields)}: {text!r}"
        )
    minutes, hours, days, months, weekdays = (_field(field, *spec) for field, spec in zip(fields, _FIELDS, strict=True))
    return CronSchedule(
        text,
        minutes,
        hours,
        days,
        months,
        weekdays,
        any_day=fields[2] in ("*", "?"),
        any_weekday=fields[4] in ("*", "?"),
    )


def _value(text: str, name: str, lowest: int, highest: int, names: tuple[str, ...]) -> int:
    lowered = text.lower()
    if lowered in names:
        return names.index(lowered) + lowest
    if not text.isdigit():
        raise CronError(f"{name}: {text!r} is not a number{' or a name' if names else ''}")
    value = int(text)
    if not lowest <= value <= highest:
        raise CronError(f"{name}: {value} is outside {lowest}-{highest}")
    return value


def _field(text: str, name: str, lowest: int, highest: int, names: tuple[str, ...]) -> frozenset[int]:
    chosen: set[int] = set()
    for part in text.split(","):
        span, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"{name}: the step {step_text!r} must be a whole number above 0")
            step = int(step_text)
        if span in ("*", "?"):
            low, high = lowest, highest
        elif "-" in span:
            first, _, last = span.partition("-")
            low, high = _value(first, name, lowest, highest, names), _value(last, name, lowest, highest, names)
            if low > high:
                raise CronError(f"{name}: the range {span!r} runs backwards")
        else:
            low = _value(span, name, lowest, highest, names)
            high = highest if step_text else low
        chosen.update(range(low, high + 1, step))
    return frozenset(chosen)


def timezone(name: str) -> ZoneInfo:
    """The IANA timezone `name` (Go's `time.LoadLocation`); "" and "UTC" are UTC."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise CronError(f"unknown timezone {name!r}") from exc


def in_window(start: CronSchedule, end: CronSchedule, now: datetime) -> bool:
    """Whether `now` (a wall-clock time in the trigger's timezone, naive) is inside the start/end window:
    `cronScaler.GetMetricsAndActivity`'s test, true when the next end comes no later than the next start."""
    next_start, next_end = start.next_after(now), end.next_after(now)
    if next_end is None:
        return False
    if next_start is None:
        return True
    return not next_start < next_end
