"""Quantities as written: what each reads as, and the bounds past which they are refused without a crash."""

from __future__ import annotations

import re
import tracemalloc
from typing import Any

import jsonschema
import pytest
from pydantic import TypeAdapter, ValidationError

from skenario.scenario.format.units import (
    MAX_QUANTITY,
    ByteQuantity,
    Duration,
    Ratio,
    RunLength,
    _bytes,
    _duration,
    _millicores,
    _rate,
    milli_quantity,
)


@pytest.mark.parametrize(
    ("written", "milli"),
    [
        ("100m", 100), ("2", 2000), ("1.5k", 1_500_000), ("64Mi", 64 * 2**20 * 1000), ("1e3", 1_000_000),
        ("1e-2", 10), ("1e-21", 1), ("-1e-21", -1), ("-0.1m", -1), ("1e-999999999", 1), ("0e99999", 0),
        ("7Ei", 7 * 2**60 * 1000),
        (MAX_QUANTITY, MAX_QUANTITY * 1000),
    ],
)  # fmt: skip
def test_quantities_read_as_kubernetes_writes_them(written: str | int, milli: int) -> None:
    """MilliValue rounds up: anything above zero, however small, is at least one milli-unit."""
    assert milli_quantity(written) == milli


@pytest.mark.parametrize("written", ["1e999999999", "1e309", "8Ei", "9223372036854775808", 1e300, "1" + "0" * 60])
def test_a_quantity_past_kubernetes_bound_is_refused_at_once(written: str | float) -> None:
    """Kubernetes: no quantity may be more than 2^63-1. `1e999999999` was computed as 10**999999999 (a hang).

    At once means without building the number: the refusal allocates less than 64 KiB at its peak,
    where 10**999999999 alone is 415 MB (a regression would hang here, for the suite's net to end).
    """
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="more than a quantity may be"):
            milli_quantity(written)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**10


def test_huge_bytes_are_refused_not_an_overflow() -> None:
    """`memory: 1e309` was an OverflowError (a float division) and a traceback."""
    with pytest.raises(ValueError, match="more than a quantity may be"):
        _bytes("1e309")
    assert _bytes("512Mi") == 512 * 2**20
    assert _bytes("1.5") == 2  # whole bytes, rounded up
    assert _bytes("-5e-324") == -1  # away from zero: a field that must be positive refuses it


@pytest.mark.parametrize(("written", "needle"), [("1" + "0" * 400, "too long"), ("9223372036854775808", "more CPU")])
def test_huge_cpu_is_refused_not_an_overflow(written: str, needle: str) -> None:
    """A CPU of 401 digits was read as a float, infinite, and `int(inf)` raised OverflowError."""
    with pytest.raises(ValueError, match=needle):
        _millicores(written)
    assert _millicores("9223372036854775807") == (2**63 - 1) * 1000


@pytest.mark.parametrize(
    ("reader", "written"),
    [(_duration, "1" * 5000 + "s"), (milli_quantity, "9" * 5000), (_millicores, "9" * 5000), (_rate, "9" * 5000)],
)
def test_a_number_of_thousands_of_digits_is_refused_in_words_a_user_can_act_on(reader: object, written: str) -> None:
    """Python reads no integer of over 4,300 digits; its message suggested `sys.set_int_max_str_digits()`."""
    with pytest.raises(ValueError) as raised:
        reader(written)  # type: ignore[operator]
    message = str(raised.value)
    assert "too long" in message and "5,00" in message and "sys." not in message and len(message) < 200


@pytest.mark.parametrize("written", [-1, 5, "150%", float("nan"), float("inf"), "-5%"])
def test_a_ratio_is_between_0_and_1_wherever_it_is_used(written: object) -> None:
    """The schema said 0..1, but a field without bounds of its own (a retry budget) took -1, 5 or NaN."""
    with pytest.raises(ValidationError):
        TypeAdapter(Ratio).validate_python(written)
    assert TypeAdapter(Ratio).validate_python("20%") == 0.2


@pytest.mark.parametrize(("kind", "written"), [(Duration, 0), (ByteQuantity, 1.5)])
def test_the_schema_takes_what_the_format_takes(kind: Any, written: object) -> None:
    """A duration of 0 needs no unit and bytes may be a fraction (rounded up): the schema refused both."""
    adapter = TypeAdapter(kind)
    adapter.validate_python(written)
    jsonschema.validate(written, adapter.json_schema())


def test_a_duration_is_at_most_gos_and_a_run_may_be_longer() -> None:
    """Durations are Go's (int64 ns, about 292 years): a sinusoid's period of 10^32 minutes overflowed numpy's
    int64 mid-build. The run's own length is not bounded so (the pre-flight refuses a long run unless --force)."""
    longest = "2562047h47m16.854775807s"
    assert TypeAdapter(Duration).validate_python(longest) == 2**63 - 1
    with pytest.raises(ValidationError, match=f"longer than a duration can be: {re.escape(longest)}"):
        TypeAdapter(Duration).validate_python("99999999999999999999999999999999m")
    assert TypeAdapter(RunLength).validate_python("10000000d") == 10_000_000 * 86_400 * 10**9


def test_a_rate_past_a_floats_range_is_refused_not_an_overflow() -> None:
    """`rate: 10^400` (a YAML integer) was an OverflowError converting it to a float."""
    with pytest.raises(ValueError, match="more than a rate can be"):
        _rate(10**400)
    assert _rate("300/m") == 5.0
