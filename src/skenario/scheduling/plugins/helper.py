"""Score arithmetic the plugins share, in Go's integer semantics.

Mirrors `pkg/scheduler/framework/plugins/helper`: `DefaultNormalizeScore` (normalize_score.go),
as a list function for the pure calculators and as an array function for the vectorised plugins,
and `BuildBrokenLinearFunction` (shape_score.go). Go's integer division truncates toward zero and
its `math.Round` rounds halves away from zero; Python's `//` and `round()` do neither, so the
helpers that do are named after the semantics (`go_div`, `go_div_array`, `go_round`) and used
wherever upstream divides or rounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from skenario.scheduling.plugins.interface import MAX_NODE_SCORE, Ints


def go_div(a: int, b: int) -> int:
    """Go's integer division: the quotient truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def go_div_array(a: Ints, b: Ints | int) -> Ints:
    """Go's integer division (toward zero) over arrays."""
    q = np.abs(a) // np.abs(b)
    return np.where((a >= 0) == (np.asarray(b) >= 0), q, -q)


def go_round(x: float) -> int:
    """Go's math.Round: halves away from zero (Python's round() goes to even)."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def default_normalize(scores: Sequence[int], *, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> list[int]:
    """Scale scores so the best is `max_priority`; `reverse` turns a cost into a score.

    Mirrors `helper.DefaultNormalizeScore`: when every score is 0 they all become 0, or
    `max_priority` if reversed.
    """
    top = max((s for s in scores), default=0)
    top = max(top, 0)
    if top == 0:
        return [max_priority if reverse else s for s in scores]
    out = []
    for s in scores:
        scaled = go_div(max_priority * s, top)
        out.append(max_priority - scaled if reverse else scaled)
    return out


def normalize_default(scores: Ints, *, reverse: bool) -> Ints:
    """`helper.DefaultNormalizeScore` over an array (see `default_normalize`)."""
    top = max(int(scores.max(initial=0)), 0)
    if top == 0:
        return np.full_like(scores, MAX_NODE_SCORE) if reverse else scores.copy()
    scaled = go_div_array(MAX_NODE_SCORE * scores, top)
    return MAX_NODE_SCORE - scaled if reverse else scaled


def broken_linear(shape: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """The piecewise-linear function through (x, y) points, flat outside them.

    Mirrors `helper.BuildBrokenLinearFunction`, integer arithmetic included.
    """

    def f(p: int) -> int:
        for i, (x, y) in enumerate(shape):
            if p <= x:
                if i == 0:
                    return shape[0][1]
                x0, y0 = shape[i - 1]
                return y0 + go_div((y - y0) * (p - x0), x - x0)
        return shape[-1][1]

    return f
