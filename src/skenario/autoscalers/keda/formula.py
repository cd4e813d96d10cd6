"""`scalingModifiers.formula`: the expr-lang expressions KEDA composes its triggers' metrics with, evaluated safely.

KEDA compiles the formula with expr-lang (`pkg/scaling/cache` compiles it, `calculateScalingModifiersFormula`
in pkg/scaling/modifiers/formula.go runs it) over one variable per named trigger, each the trigger's metric
as a float, or nil when its fallback is on with `behavior: scalingModifiers`. A formula that gives nil takes
`fallback.replicas × target`; one that fails gives no composite metric.

This reads the part of expr-lang such formulas use, and nothing runs as code: numbers, the trigger names,
`+ - * / % **` (and `^`), comparisons, `&& || !` (and `and or not`), `cond ? a : b`, `a ?? b` (b when a is
nil), parentheses, and the functions `abs ceil floor round min max`. Arithmetic on nil is an error, as in
expr-lang.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Value = float | bool | None

_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|\?\?|&&|\|\||==|!=|<=|>=|[-+*/%^<>!?:(),]))"
)
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "abs": abs,
    "ceil": lambda x: float(math.ceil(x)),
    "floor": lambda x: float(math.floor(x)),
    "round": lambda x: float(math.floor(x + 0.5)) if x >= 0 else -float(math.floor(-x + 0.5)),  # Go's math.Round
    "min": min,
    "max": max,
}
_WORDS = {"and": "&&", "or": "||", "not": "!"}
_CONSTANTS: dict[str, Value] = {"true": True, "false": False, "nil": None}


class FormulaError(ValueError):
    """A formula that does not parse, names an unknown trigger, or fails when run (arithmetic on nil)."""


@dataclass(frozen=True)
class Formula:
    """A parsed formula: `evaluate(values)` runs it over the triggers' values (by trigger name)."""

    text: str
    names: frozenset[str]  # the trigger names it reads
    _tree: tuple[object, ...]

    def evaluate(self, values: Mapping[str, float | None]) -> float | None:
        """The formula's value (None: nil) over `values`; FormulaError if it fails or gives a boolean."""
        result = _run(self._tree, values)
        if isinstance(result, bool):
            raise FormulaError(f"formula {self.text!r} gives a boolean, not a number")
        return result


def parse(text: str, names: frozenset[str] | set[str] | None = None) -> Formula:
    """The formula `text`; with `names`, every variable it reads must be one of them (expr.Env's check)."""
    parser = _Parser(text)
    tree = parser.expression()
    if parser.peek() is not None:
        raise FormulaError(f"formula {text!r}: unexpected {parser.peek()!r}")
    read = frozenset(_variables(tree))
    if names is not None:
        unknown = sorted(read - set(names))
        if unknown:
            raise FormulaError(
                f"formula {text!r} reads {', '.join(unknown)}, which no trigger is named "
                f"(the triggers' names: {', '.join(sorted(names)) or 'none'})"
            )
    return Formula(text, read, tree)


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, at = [], 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise FormulaError(f"formula {text!r}: cannot read {text[at:].strip()[:10]!r}")
        kind = match.lastgroup
        assert kind is not None
        value = match.group(kind)
        if kind == "name" and value in _WORDS:
            kind, value = "op", _WORDS[value]
        tokens.append((kind, value))
        at = match.end()
    return tokens


_BINARY = {  # operator: (left binding power, right binding power)
    "??": (1, 2),
    "||": (3, 4),
    "&&": (5, 6),
    "==": (7, 8),
    "!=": (7, 8),
    "<": (9, 10),
    "<=": (9, 10),
    ">": (9, 10),
    ">=": (9, 10),
    "+": (11, 12),
    "-": (11, 12),
    "*": (13, 14),
    "/": (13, 14),
    "%": (13, 14),
    "**": (18, 17),  # right-associative, above unary minus
    "^": (18, 17),
}
_TERNARY = 0  # `?` binds loosest
_UNARY = 15


class _Parser:
    """A Pratt parser into nested tuples: ("num", x), ("var", name), ("call", f, args), ("un", op, x),
    ("bin", op, a, b), ("if", c, a, b)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.at >= len(self.tokens):
            raise FormulaError(f"formula {self.text!r} ends too soon")
        token = self.tokens[self.at]
        if expected is not None and token[1] != expected:
            raise FormulaError(f"formula {self.text!r}: expected {expected!r}, found {token[1]!r}")
        self.at += 1
        return token

    def expression(self, floor: int = -1) -> tuple[object, ...]:
        left = self.prefix()
        while True:
            op = self.peek()
            if op == "?" and floor < _TERNARY:
                self.take()
                then = self.expression()
                self.take(":")
                otherwise = self.expression(_TERNARY - 1)
                left = ("if", left, then, otherwise)
                continue
            if op not in _BINARY or self.tokens[self.at][0] != "op":
                return left
            left_power, right_power = _BINARY[op]
            if left_power <= floor:
                return left
            self.take()
            left = ("bin", op, left, self.expression(right_power - 1))

    def prefix(self) -> tuple[object, ...]:
        kind, value = self.take()
        if kind == "number":
            return ("num", float(value))
        if kind == "name":
            if value in _CONSTANTS:
                return ("const", _CONSTANTS[value])
            if self.peek() == "(":
                if value not in _FUNCTIONS:
                    raise FormulaError(
                        f"formula {self.text!r}: no function {value!r} (there are {', '.join(_FUNCTIONS)})"
                    )
                self.take("(")
                args = [self.expression()]
                while self.peek() == ",":
                    self.take()
                    args.append(self.expression())
                self.take(")")
                return ("call", value, tuple(args))
            return ("var", value)
        if value == "(":
            inner = self.expression()
            self.take(")")
            return inner
        if value in ("-", "+", "!"):
            return ("un", value, self.expression(_UNARY))
        raise FormulaError(f"formula {self.text!r}: unexpected {value!r}")


def _variables(tree: tuple[object, ...]) -> list[str]:
    kind = tree[0]
    if kind == "var":
        return [str(tree[1])]
    children: list[object] = []
    if kind == "call":
        children = list(tree[2])  # type: ignore[call-overload]
    elif kind == "un":
        children = [tree[2]]
    elif kind == "bin":
        children = [tree[2], tree[3]]
    elif kind == "if":
        children = list(tree[1:])
    return [name for child in children for name in _variables(child)]  # type: ignore[arg-type]


def _number(value: Value, where: str) -> float:
    if value is None or isinstance(value, bool):
        raise FormulaError(f"{where}: needs numbers, got {'nil' if value is None else str(value).lower()}")
    return value


def _run(tree: tuple[object, ...], values: Mapping[str, float | None]) -> Value:
    kind = tree[0]
    if kind in ("num", "const"):
        return tree[1]  # type: ignore[return-value]
    if kind == "var":
        return values.get(str(tree[1]))
    if kind == "call":
        name = str(tree[1])
        args = [_number(_run(arg, values), name) for arg in tree[2]]  # type: ignore[attr-defined]
        try:
            return float(_FUNCTIONS[name](*args))
        except TypeError as exc:
            raise FormulaError(f"{name}: {exc}") from exc
    if kind == "un":
        operand = _run(tree[2], values)  # type: ignore[arg-type]
        if tree[1] == "!":
            if not isinstance(operand, bool):
                raise FormulaError("!: needs a boolean")
            return not operand
        number = _number(operand, str(tree[1]))
        return -number if tree[1] == "-" else number
    if kind == "if":
        condition = _run(tree[1], values)  # type: ignore[arg-type]
        if not isinstance(condition, bool):
            raise FormulaError("?: needs a boolean condition")
        return _run(tree[2] if condition else tree[3], values)  # type: ignore[arg-type]
    op, left_tree, right_tree = str(tree[1]), tree[2], tree[3]
    left = _run(left_tree, values)  # type: ignore[arg-type]
    if op == "??":
        return left if left is not None else _run(right_tree, values)  # type: ignore[arg-type]
    if op in ("&&", "||"):
        if not isinstance(left, bool):
            raise FormulaError(f"{op}: needs booleans")
        if (op == "&&") != left:
            return left
        right = _run(right_tree, values)  # type: ignore[arg-type]
        if not isinstance(right, bool):
            raise FormulaError(f"{op}: needs booleans")
        return right
    right = _run(right_tree, values)  # type: ignore[arg-type]
    if op == "==":
        return left == right
    if op == "!=":
        return left != right
    a, b = _number(left, op), _number(right, op)
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    if op == ">=":
        return a >= b
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b if b != 0 else (math.copysign(math.inf, a) if a != 0 else math.nan)  # Go's float division
    if op == "%":
        if b == 0:
            raise FormulaError("%: division by zero")
        return math.fmod(a, b)
    try:  # ** and ^, as Go's math.Pow: NaN for a negative base and a fractional power
        return math.pow(a, b)
    except ValueError:
        return math.nan
    except OverflowError:
        return math.inf
