"""scalingModifiers formulas: expr-lang's arithmetic, comparisons, ternaries and `??`, worked by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.autoscalers.keda.formula import FormulaError, parse


@pytest.mark.parametrize(
    ("text", "values", "expected"),
    [
        ("(q1 + q2) / 2", {"q1": 10.0, "q2": 30.0}, 20.0),  # the docs' average of two queues
        ("max(q, 10)", {"q": 4.0}, 10.0),
        ("a > 100 ? a : b", {"a": 150.0, "b": 7.0}, 150.0),
        ("a > 100 ? a : b", {"a": 50.0, "b": 7.0}, 7.0),
        ("2 + 3 * 4", {}, 14.0),  # precedence
        ("(2 + 3) * 4", {}, 20.0),
        ("2 ** 3 ** 2", {}, 512.0),  # right-associative power
        ("-2 ** 2", {}, -4.0),  # the power binds tighter than the minus
        ("10 - 4 - 3", {}, 3.0),  # left-associative
        ("a ?? 5", {"a": None}, 5.0),  # nil-coalescing: a trigger past its fallback threshold
        ("a ?? 5", {"a": 2.0}, 2.0),
        ("a > 1 && b > 1 ? 1 : 0", {"a": 2.0, "b": 0.0}, 0.0),
        ("a > 1 or b > 1 ? 1 : 0", {"a": 2.0, "b": 0.0}, 1.0),
        ("!(a > 1) ? 1 : 0", {"a": 2.0}, 0.0),
        ("abs(a - b)", {"a": 3.0, "b": 8.0}, 5.0),
        ("ceil(a / 4)", {"a": 9.0}, 3.0),
        ("floor(a / 4)", {"a": 9.0}, 2.0),
        ("round(2.5) + round(-2.5)", {}, 0.0),  # Go's math.Round: halves away from zero
        ("min(a, b, 3)", {"a": 5.0, "b": 4.0}, 3.0),
        ("1.5e2 + .5", {}, 150.5),
        ("a / 0", {"a": 3.0}, math.inf),  # Go's float division
    ],
)
def test_evaluates_as_expr_lang(text: str, values: dict[str, float | None], expected: float) -> None:
    assert parse(text).evaluate(values) == expected


def test_a_nil_that_is_not_coalesced_is_an_error() -> None:
    # expr-lang fails on arithmetic with nil; KEDA then has no composite metric this time.
    with pytest.raises(FormulaError, match="nil"):
        parse("a + 1").evaluate({"a": None})


def test_a_formula_giving_nil_gives_none() -> None:
    # calculateScalingModifiersFormula then uses fallback.replicas x target.
    assert parse("a ?? nil").evaluate({"a": None}) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a +", "ends too soon"),
        ("(a + b", "ends too soon"),
        ("a b", "unexpected"),
        ("exp(a)", "no function 'exp'"),
        ("a $ b", "cannot read"),
        ("__import__(a)", "no function"),  # nothing runs as code
    ],
)
def test_malformed_formulas_are_refused(text: str, message: str) -> None:
    with pytest.raises(FormulaError, match=message):
        parse(text, {"a", "b"})


def test_a_formula_may_read_only_named_triggers() -> None:
    # expr.Compile with expr.Env: an unknown variable is a compile error, said with the names there are.
    with pytest.raises(FormulaError, match=r"reads c, which no trigger is named \(the triggers' names: a, b\)"):
        parse("a + c", {"a", "b"})
    assert parse("a + b", {"a", "b"}).names == frozenset({"a", "b"})


def test_a_boolean_result_is_refused() -> None:
    with pytest.raises(FormulaError, match="boolean"):
        parse("a > 1").evaluate({"a": 2.0})


finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@given(finite, finite, finite)
def test_arithmetic_agrees_with_python(a: float, b: float, c: float) -> None:
    formula = parse("a * b + c - (a - b) / 2", {"a", "b", "c"})
    assert formula.evaluate({"a": a, "b": b, "c": c}) == pytest.approx(a * b + c - (a - b) / 2)
