"""Quantities as users write them in scenario files: durations and rates, with their JSON Schema."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

from skenario.core.time import format_duration, parse_duration

_RATE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*/\s*(ms|s|m|h|d)\s*$")
_PER = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _duration(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("a duration is a string with a unit, such as '250ms'")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a duration; write a number and a unit, such as '250ms' or '1h30m'")
    if value == 0:
        return 0
    if isinstance(value, int | float):
        raise ValueError(f"a duration needs a unit, such as '{value}s' or '{value}ms'")
    if not isinstance(value, str):
        raise ValueError(f"a duration is a string with a unit, such as '250ms', not a {type(value).__name__}")
    if len(value) > _LONGEST:  # Python reads no number of over 4,300 digits, and its error suggests a setting
        raise ValueError(f"{_shown(value)} is too long for a duration (at most {_LONGEST} characters)")
    return parse_duration(value)


_LONGEST = 64  # characters in a duration, a quantity or a rate: room for any that means something


def _shown(value: Any) -> str:
    """The value as written, cut short if long: an error line stays one readable line."""
    text = value if isinstance(value, str) else repr(value)
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}… ({len(text):,} characters)"


def _rate(value: Any) -> float:
    """A rate per second: a plain number, or a string such as `15/s`, `300/m`, `2/h`."""
    if isinstance(value, bool):
        raise ValueError("a rate is a number per second or a string such as '15/s'")
    if isinstance(value, int | float):
        try:
            return float(value)
        except OverflowError:  # an integer past a float's range: 10^309 requests a second
            raise ValueError(f"{_shown(value)} is more than a rate can be") from None
    if isinstance(value, str) and len(value) > _LONGEST:
        raise ValueError(f"{_shown(value)} is too long for a rate (at most {_LONGEST} characters)")
    if isinstance(value, str):
        match = _RATE.match(value)
        if match:
            return float(match.group(1)) / _PER[match.group(2)]
    raise ValueError(f"'{value}' is not a rate; write requests per second (15) or with a unit ('15/s', '300/m')")


DURATION_PATTERN = r"^\s*((\d+(\.\d*)?|\.\d+)\s*(ns|us|µs|μs|ms|s|m|h|d)\s*)+$"
DURATION_SCHEMA = {
    "anyOf": [{"type": "string", "pattern": DURATION_PATTERN}, {"const": 0}],  # 0 needs no unit
    "examples": ["250ms", "15s", "1h30m"],
}
# Go's time.Duration, which Kubernetes' durations are: int64 nanoseconds, about 292 years. The model
# keeps times in int64 arrays too (a sinusoid's period of 10^32 minutes was an OverflowError in numpy).
MAX_DURATION = 2**63 - 1


def _go_duration(value: Any) -> int:
    ns = _duration(value)
    if abs(ns) > MAX_DURATION:
        raise ValueError(
            f"{_shown(value)} is longer than a duration can be: {format_duration(MAX_DURATION)} (Go's time.Duration)"
        )
    return ns


Duration = Annotated[int, BeforeValidator(_go_duration), WithJsonSchema(DURATION_SCHEMA)]
"""Integer nanoseconds, written as a Go-style duration string."""

RunLength = Annotated[int, BeforeValidator(_duration), WithJsonSchema(DURATION_SCHEMA)]
"""A run's simulated length: a Duration without Go's bound (the pre-flight refuses a long run unless --force)."""

Rate = Annotated[
    float,
    BeforeValidator(_rate),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "minimum": 0},
                {"type": "string", "pattern": r"^\s*(\d+(\.\d*)?|\.\d+)\s*/\s*(ms|s|m|h|d)\s*$"},
            ],
            "examples": [15, "15/s", "300/m"],
        }
    ),
]
"""Events per second, written as a number or as `N/unit`."""

# Kubernetes' resource.Quantity: "no quantity may represent a number greater than 2^63-1 in magnitude".
MAX_QUANTITY = 2**63 - 1
MAX_QUANTITY_DIGITS = 20  # orders of magnitude past which a number is surely above MAX_QUANTITY (or below 1/1000)
_CPU = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(m?)\s*$")


def _millicores(value: Any) -> int:
    """A Kubernetes CPU quantity: `500m`, `1`, `0.5`, `2` (cores) as whole millicores."""
    if isinstance(value, bool):
        raise ValueError("a CPU quantity is cores (1, 0.5) or millicores ('500m')")
    if isinstance(value, int | float):
        text = repr(value)
    elif isinstance(value, str):
        text = value
    else:
        raise ValueError(f"'{value}' is not a CPU quantity")
    if len(text) > _LONGEST:
        raise ValueError(f"{_shown(value)} is too long for a CPU quantity (at most {_LONGEST} characters)")
    match = _CPU.match(text)
    if not match:
        raise ValueError(f"{_shown(value)} is not a CPU quantity; write cores (1, 0.5) or millicores ('500m')")
    number, milli = Decimal(match.group(1)), match.group(2)
    millicores = Fraction(number) if milli else Fraction(number) * 1000  # exact: at most _LONGEST digits
    if millicores > MAX_QUANTITY * 1000:
        raise ValueError(f"{_shown(value)} is more CPU than a quantity may be ({MAX_QUANTITY:,} cores)")
    if millicores.denominator != 1:
        raise ValueError(f"'{value}' is finer than one millicore")
    return int(millicores)


CpuQuantity = Annotated[
    int,
    BeforeValidator(_millicores),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "minimum": 0},
                {"type": "string", "pattern": r"^\s*(\d+(\.\d*)?|\.\d+)\s*m?\s*$"},
            ],
            "examples": ["500m", 1, "2"],
        }
    ),
]
"""Whole millicores, written as Kubernetes writes CPU: `500m`, `1`, `0.5`."""


_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?\s*$")
_SUFFIX = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    **{suffix: Fraction(1024**power) for power, suffix in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), start=1)},
}


def milli_quantity(value: Any) -> int:
    """A Kubernetes quantity (`100m`, `2`, `1.5k`, `64Mi`, `1e3`) in milli-units, rounded up as `MilliValue`
    (away from zero: `-1e-21` is -1, so that a field that must not be negative refuses it).

    As in Kubernetes, no quantity may be more than 2^63-1 in magnitude. The bound is checked on the
    number's order of magnitude first, so `1e999999999` is refused at once instead of computed.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"'{value}' is not a quantity such as '100m', '2' or '1.5k'")
    text = value if isinstance(value, str) else repr(value)
    if len(text) > _LONGEST:
        raise ValueError(f"{_shown(value)} is too long for a quantity (at most {_LONGEST} characters)")
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(f"{_shown(value)} is not a quantity such as '100m', '2' or '1.5k'")
    number, suffix = Decimal(match.group(1)), match.group(2) or ""
    exponent, scale = 0, _SUFFIX.get(suffix, Fraction(1))
    if suffix[:1] in ("e", "E") and suffix not in _SUFFIX:
        exponent = int(suffix[1:])  # at most _LONGEST digits
    magnitude = number.adjusted() + exponent  # the number is below 10 ** (magnitude + 1)
    if number and magnitude > MAX_QUANTITY_DIGITS:
        raise ValueError(f"{_shown(value)} is more than a quantity may be ({MAX_QUANTITY:,})")
    if number and magnitude < -MAX_QUANTITY_DIGITS:  # under a milli-unit: one, away from zero
        return 1 if number > 0 else -1
    exact = Fraction(number) * Fraction(10) ** exponent * scale
    if abs(exact) > MAX_QUANTITY:
        raise ValueError(f"{_shown(value)} is more than a quantity may be ({MAX_QUANTITY:,})")
    # Away from zero, as Kubernetes rounds (inf.Dec's RoundUp): a negative quantity stays negative.
    return math.ceil(exact * 1000) if exact >= 0 else math.floor(exact * 1000)


MilliQuantity = Annotated[
    int,
    BeforeValidator(milli_quantity),
    WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "string"}], "examples": ["100m", 2, "1.5k"]}),
]
"""A Kubernetes quantity as whole milli-units (what the API calls MilliValue)."""


def _ratio(value: Any) -> Any:
    """A fraction: a number (0.01) or a percentage string ('1%')."""
    if isinstance(value, str) and value.strip().endswith("%"):
        number = value.strip()[:-1].strip()
        try:
            return float(number) / 100
        except ValueError:
            raise ValueError(f"'{value}' is not a percentage; write '1%' or 0.01") from None
    return value


Ratio = Annotated[
    float,
    BeforeValidator(_ratio),
    Field(ge=0, le=1),  # as the schema says: a field of its own may add no bound (a retry budget of -1 ran)
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "minimum": 0, "maximum": 1},
                {"type": "string", "pattern": r"^\s*\d+(\.\d*)?\s*%\s*$"},
            ],
            "examples": [0.01, "1%"],
        }
    ),
]
"""A fraction between 0 and 1, written as a number or a percentage."""


def _bytes(value: Any) -> int:
    """A Kubernetes byte quantity (`512Mi`, `2Gi`, `1G`, a plain number) in whole bytes."""
    milli = milli_quantity(value)  # whole bytes, away from zero, in integers (a float overflows)
    return -(-milli // 1000) if milli >= 0 else milli // 1000


ByteQuantity = Annotated[
    int,
    BeforeValidator(_bytes),
    WithJsonSchema({"anyOf": [{"type": "number", "minimum": 0}, {"type": "string"}], "examples": ["512Mi", "16Gi"]}),
]
"""Bytes, written as Kubernetes writes memory: `512Mi`, `16Gi`, `1G`."""


# -- written back: the value a reader above keeps, as a user writes it -----------------------------------------


def write_cpu(millicores: int) -> str:
    """Millicores as Kubernetes writes CPU: whole cores as `4`, else `250m`."""
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def write_quantity(milli: int) -> str:
    """Milli-units as a quantity: `2`, `100m`."""
    return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"


_BINARY = (("Ei", 1024**6), ("Pi", 1024**5), ("Ti", 1024**4), ("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024))


def write_bytes(size: int) -> str:
    """Bytes as Kubernetes writes memory: the largest binary unit that holds it whole (`16Gi`, `512Mi`), else
    plain bytes."""
    for suffix, unit in _BINARY:
        if size and size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)


WRITTEN: dict[Callable[[Any], Any], Callable[[Any], str]] = {
    _go_duration: format_duration,
    _duration: format_duration,
    _millicores: write_cpu,
    _bytes: write_bytes,
    milli_quantity: write_quantity,
}
"""Each reader of a value kept in other units, and how that value is written: `reader(WRITTEN[reader](x)) == x`."""
