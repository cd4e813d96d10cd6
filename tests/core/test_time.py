"""Time: integer nanoseconds, and the duration strings users write (`250ms`, `1h30m`).

Expected values are written out from the unit definitions (1 s = 10^9 ns, 1 m = 60 s, ...),
not computed with the module's own constants.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core import format_duration, parse_duration
from skenario.core.time import format_clock, format_human_duration, format_relative, parse_clock

NS_PER_S = 10**9


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1ns", 1),
        ("1us", 1_000),
        ("1µs", 1_000),  # U+00B5 MICRO SIGN
        ("1ms", 1_000_000),
        ("1s", NS_PER_S),
        ("1m", 60 * NS_PER_S),
        ("1h", 3_600 * NS_PER_S),
        ("1d", 86_400 * NS_PER_S),
        ("250ms", 250_000_000),
        ("15s", 15 * NS_PER_S),
        ("5m", 300 * NS_PER_S),
        ("0s", 0),
        ("100ns", 100),
        ("7us", 7_000),
        ("2d", 172_800 * NS_PER_S),
    ],
)
def test_each_unit(text: str, expected: int) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.5s", 1_500_000_000),
        ("0.5s", 500_000_000),
        (".5s", 500_000_000),
        ("2.5ms", 2_500_000),
        ("1.5us", 1_500),
        ("0.25h", 900 * NS_PER_S),
        ("1.5m", 90 * NS_PER_S),
        ("0.5d", 43_200 * NS_PER_S),
        ("1.1s", 1_100_000_000),
    ],
)
def test_fractions(text: str, expected: int) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1h30m", 5_400 * NS_PER_S),
        ("1h30m15s", 5_415 * NS_PER_S),
        ("2m3.5s", 123_500_000_000),
        ("1s500ms", 1_500_000_000),
        ("1d12h", 129_600 * NS_PER_S),
        ("1m1s1ms1us1ns", 61 * NS_PER_S + 1_000_000 + 1_000 + 1),
    ],
)
def test_composites_add_up(text: str, expected: int) -> None:
    assert parse_duration(text) == expected


def test_result_is_an_int() -> None:
    value = parse_duration("1.5s")
    assert type(value) is int


def test_micro_as_greek_mu_like_go() -> None:
    """Go's time.ParseDuration (which the module calls the model for its strings) accepts
    microseconds written with U+00B5 MICRO SIGN *and* U+03BC GREEK SMALL LETTER MU; most
    keyboards and editors produce the latter."""
    assert parse_duration("3\u03bcs") == 3_000


@pytest.mark.parametrize("text", ["5 parsecs", "", "5", "1.5", "   ", "s", "5x", "ms5", "1h30", "five seconds"])
def test_rejects_what_is_not_a_duration(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_duration(text)
    message = str(info.value)
    # A clear message quotes what the user wrote and shows what a duration looks like.
    assert repr(text) in message or f"'{text}'" in message
    assert "unit" in message


@pytest.mark.parametrize("value", [5, 1.5, None])
def test_rejects_non_strings_with_a_hint(value: object) -> None:
    with pytest.raises(ValueError, match="unit"):
        parse_duration(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "ns",
    [
        0,
        1,
        999,
        1_000,
        1_500,
        250_000_000,
        2_500_000,
        1_500_000_000,
        15 * NS_PER_S,
        300 * NS_PER_S,
        3_600 * NS_PER_S,
        5_400 * NS_PER_S,
        86_400 * NS_PER_S,
        129_600 * NS_PER_S,
    ],
)
def test_format_round_trips(ns: int) -> None:
    assert parse_duration(format_duration(ns)) == ns


@pytest.mark.parametrize(
    "ns",
    [
        61 * NS_PER_S,  # 1m1s
        100 * NS_PER_S,  # 1m40s
        3_660 * NS_PER_S,  # 1h1m
        3_601 * NS_PER_S,  # 1h0m1s
    ],
)
def test_format_round_trips_for_durations_that_do_not_divide_the_unit(ns: int) -> None:
    """Whole seconds past a minute (or minutes past an hour) are everyday durations; written
    back through format_duration they must parse to the same nanoseconds."""
    assert parse_duration(format_duration(ns)) == ns


def test_format_examples_from_its_docstring() -> None:
    assert format_duration(1_500_000_000) == "1.5s"
    assert format_duration(250_000_000) == "250ms"


# Any whole number (up to three digits) of any unit, optionally plus a half unit, is a value a
# user would write; formatting it and parsing it back must give the same nanoseconds.
_UNIT_NS = [1, 1_000, 1_000_000, NS_PER_S, 60 * NS_PER_S, 3_600 * NS_PER_S]


@settings(max_examples=200, deadline=None)
@given(
    count=st.integers(min_value=0, max_value=999),
    unit=st.sampled_from(_UNIT_NS),
    half=st.booleans(),
)
def test_format_round_trips_for_written_durations(count: int, unit: int, half: bool) -> None:
    ns = count * unit + (unit // 2 if half and unit > 1 else 0)
    assert parse_duration(format_duration(ns)) == ns


# -- readings for people: rounded durations, clock times, relative times ---------------------------

NS_PER_MS = 10**6
NS_PER_MIN = 60 * NS_PER_S
NS_PER_H = 3_600 * NS_PER_S
NS_PER_DAY = 86_400 * NS_PER_S


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "0s"),
        (999, "999ns"),  # below a microsecond: whole nanoseconds
        (1_500, "1.5µs"),
        (47_149_999, "47.1ms"),  # three significant figures
        (47_150_000, "47.2ms"),  # a half rounds up
        (407 * NS_PER_MS, "407ms"),
        (999_499_999, "999ms"),
        (999_500_000, "1s"),  # rounds up into the next unit, and is written in it
        (2_340 * NS_PER_MS, "2.3s"),  # one decimal from 1 s to 10 s
        (9_950 * NS_PER_MS, "10s"),
        (47 * NS_PER_S + 400 * NS_PER_MS, "47s"),  # whole seconds to a minute
        (59_600 * NS_PER_MS, "1m"),
        (6 * NS_PER_MIN + 47 * NS_PER_S, "6m47s"),
        (6 * NS_PER_MIN + 7 * NS_PER_S, "6m07s"),  # the second unit keeps two digits
        (NS_PER_H + 5 * NS_PER_MIN + 29 * NS_PER_S, "1h05m"),  # whole minutes from an hour
        (NS_PER_H + 5 * NS_PER_MIN + 30 * NS_PER_S, "1h06m"),
        (NS_PER_DAY - 1, "1d"),
        (2 * NS_PER_DAY + 3 * NS_PER_H + 29 * NS_PER_MIN, "2d03h"),  # whole hours from a day
        (-90 * NS_PER_S, "-1m30s"),
    ],
)
def test_human_durations_by_hand(ns: int, text: str) -> None:
    assert format_human_duration(ns) == text


@pytest.mark.parametrize(
    ("ns", "digits", "text"),
    [
        (0, 0, "00:00:00"),
        (5 * NS_PER_MIN, 0, "00:05:00"),
        (60 * NS_PER_S + 365_104, 0, "00:01:00"),  # the KPA's poke at 1m0.000365104s
        (60 * NS_PER_S + 365_104, 9, "00:01:00.000365104"),
        (59 * NS_PER_S + 500 * NS_PER_MS, 0, "00:01:00"),  # halves round up
        (59 * NS_PER_S + 499_999_999, 0, "00:00:59"),
        (12 * NS_PER_MIN + 30 * NS_PER_S + 250 * NS_PER_MS, 3, "00:12:30.250"),
        (23 * NS_PER_H + 59 * NS_PER_MIN + 59 * NS_PER_S, 0, "23:59:59"),
        (26 * NS_PER_H, 0, "1d 02:00:00"),
        (3 * NS_PER_DAY + NS_PER_H + NS_PER_MIN + NS_PER_S + 5 * NS_PER_MS, 2, "3d 01:01:01.01"),
        (-5 * NS_PER_S, 0, "-00:00:05"),
    ],
)
def test_clock_times_by_hand(ns: int, digits: int, text: str) -> None:
    assert format_clock(ns, digits) == text


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("00:12:30", 12 * NS_PER_MIN + 30 * NS_PER_S),
        ("1d 02:00:00", 26 * NS_PER_H),
        ("00:00:01.5", 1_500 * NS_PER_MS),
        ("30:00:00", 30 * NS_PER_H),  # hours past a day without the day count are read as written
    ],
)
def test_clock_times_read_by_hand(text: str, ns: int) -> None:
    assert parse_clock(text) == ns


@pytest.mark.parametrize("text", ["12:30", "00:60:00", "00:00:61", "1h", "", "00:00:00.1234567890"])
def test_a_clock_time_that_is_not_one_is_refused_with_the_form(text: str) -> None:
    with pytest.raises(ValueError, match="hh:mm:ss"):
        parse_clock(text)


@pytest.mark.parametrize(
    ("ns", "reference", "text"),
    [
        (90 * NS_PER_S, 180 * NS_PER_S, "-1m30s"),
        (180 * NS_PER_S, 180 * NS_PER_S, "0s"),
        (182_500 * NS_PER_MS, 180 * NS_PER_S, "+2.5s"),
        (0, NS_PER_H + 5 * NS_PER_MIN, "-1h05m"),
    ],
)
def test_relative_times_by_hand(ns: int, reference: int, text: str) -> None:
    assert format_relative(ns, reference) == text


def test_floats_and_numpy_values_are_read_as_nanoseconds_rounded() -> None:
    """The report hands in means and pandas values: 47_149_999.6 ns is 47_150_000 ns, which is 47.2ms."""
    assert format_human_duration(47_149_999.6) == "47.2ms"
    assert format_human_duration(np.float64(1.5e9)) == "1.5s"
    assert format_clock(np.int64(5 * NS_PER_MIN)) == format_clock(5 * NS_PER_MIN + 0.4) == "00:05:00"
    assert format_relative(90e9, np.int64(180 * NS_PER_S)) == "-1m30s"


durations = st.integers(min_value=0, max_value=400 * NS_PER_DAY)


@settings(max_examples=300, deadline=None)
@given(ns=durations)
def test_a_human_duration_is_a_duration_close_to_the_value(ns: int) -> None:
    back = parse_duration(format_human_duration(ns))
    assert abs(back - ns) * 20 <= ns  # within 5%


@settings(max_examples=300, deadline=None)
@given(a=durations, b=durations)
def test_human_durations_keep_their_order(a: int, b: int) -> None:
    low, high = sorted((a, b))
    assert parse_duration(format_human_duration(low)) <= parse_duration(format_human_duration(high))


@settings(max_examples=300, deadline=None)
@given(ns=st.integers(min_value=-400 * NS_PER_DAY, max_value=400 * NS_PER_DAY))
def test_a_clock_time_with_nine_digits_reads_back_exactly(ns: int) -> None:
    assert parse_clock(format_clock(ns, 9)) == ns


@settings(max_examples=300, deadline=None)
@given(ns=durations, digits=st.integers(0, 9))
def test_a_clock_time_is_within_half_its_last_digit(ns: int, digits: int) -> None:
    step = 10 ** (9 - digits)
    assert abs(parse_clock(format_clock(ns, digits)) - ns) * 2 <= step


@settings(max_examples=300, deadline=None)
@given(a=durations, b=durations)
def test_clock_times_keep_their_order(a: int, b: int) -> None:
    low, high = sorted((a, b))
    assert parse_clock(format_clock(low)) <= parse_clock(format_clock(high))


@settings(max_examples=200, deadline=None)
@given(ns=durations, reference=durations)
def test_a_relative_time_is_the_signed_human_gap(ns: int, reference: int) -> None:
    text = format_relative(ns, reference)
    back = parse_duration(text.removeprefix("+"))
    assert (back > 0) == (ns > reference) and (back < 0) == (ns < reference)
    assert abs(back) == parse_duration(format_human_duration(abs(ns - reference)))
