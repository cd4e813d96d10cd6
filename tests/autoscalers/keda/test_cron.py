"""Cron windows as KEDA's cron scaler finds them: robfig/cron's five-field schedules and the window test."""

from __future__ import annotations

from datetime import datetime

import pytest

from skenario.autoscalers.keda.cron import CronError, in_window, parse_schedule, timezone


def test_next_after_steps_month_day_hour_minute() -> None:
    schedule = parse_schedule("30 9 * * 1-5")  # 09:30 on weekdays
    friday = datetime(2024, 1, 5, 9, 30)  # a Friday, at the time itself: the next is strictly after
    assert schedule.next_after(friday) == datetime(2024, 1, 8, 9, 30)  # Monday
    assert schedule.next_after(datetime(2024, 1, 8, 9, 29, 59)) == datetime(2024, 1, 8, 9, 30)


def test_steps_ranges_lists_and_names() -> None:
    assert parse_schedule("*/15 * * * *").minutes == frozenset({0, 15, 30, 45})
    assert parse_schedule("0 1-23/2 * * *").hours == frozenset(range(1, 24, 2))
    assert parse_schedule("0,30 * * * *").minutes == frozenset({0, 30})
    assert parse_schedule("0 0 1 jan,JUL *").months == frozenset({1, 7})
    assert parse_schedule("0 0 * * sun,sat").weekdays == frozenset({0, 6})
    assert parse_schedule("5/20 * * * *").minutes == frozenset({5, 25, 45})  # a/n: from a to the end


def test_restricted_day_fields_match_either() -> None:
    # robfig/cron's dayMatches: the 13th or any Friday when both are restricted.
    schedule = parse_schedule("0 0 13 * 5")
    assert schedule.next_after(datetime(2024, 1, 1)) == datetime(2024, 1, 5)  # Friday the 5th
    assert schedule.next_after(datetime(2024, 1, 12)) == datetime(2024, 1, 13)  # Saturday the 13th


@pytest.mark.parametrize("text", ["-30 * * * *", "50 * * -3 *", "60 * * * *", "* * * *", "0 0 * * 7", "*/0 * * * *"])
def test_malformed_schedules_are_refused(text: str) -> None:
    # cron_scaler_test's parse cases ("-30", "-3" fail), out-of-range values, the wrong number of fields.
    with pytest.raises(CronError):
        parse_schedule(text)


def test_a_window_within_a_day() -> None:
    start, end = parse_schedule("30 * * * *"), parse_schedule("45 * * * *")
    assert in_window(start, end, datetime(2024, 1, 1, 10, 35))
    assert not in_window(start, end, datetime(2024, 1, 1, 10, 50))
    assert not in_window(start, end, datetime(2024, 1, 1, 10, 29))


def test_a_window_across_midnight() -> None:
    # 22:00 to 06:00: the next end comes before the next start from 22:00 until 06:00.
    start, end = parse_schedule("0 22 * * *"), parse_schedule("0 6 * * *")
    assert in_window(start, end, datetime(2024, 1, 1, 23, 0))
    assert in_window(start, end, datetime(2024, 1, 2, 3, 0))
    assert not in_window(start, end, datetime(2024, 1, 2, 12, 0))


def test_the_thursday_window_of_upstreams_tests() -> None:
    # cron_scaler_test's validCronMetadata: all of Thursday, 00:00 to 23:59.
    start, end = parse_schedule("0 0 * * Thu"), parse_schedule("59 23 * * Thu")
    assert in_window(start, end, datetime(2024, 1, 4, 12, 0))  # a Thursday
    assert not in_window(start, end, datetime(2024, 1, 5, 12, 0))  # a Friday


def test_timezones_are_iana_names() -> None:
    assert str(timezone("Asia/Kolkata")) == "Asia/Kolkata"
    with pytest.raises(CronError, match="unknown timezone"):
        timezone("Mars/Olympus")
