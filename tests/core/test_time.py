"""Time: integer nanoseconds, and the duration strings users write (`250ms`, `1h30m`).

Expected values are written out from the unit definitions (1 s = 10^9 ns, 1 m = 60 s, ...),
not computed with the module's own constants.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core import format_duration, parse_duration

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
