"""The plugins' shared score arithmetic: DefaultNormalizeScore, BuildBrokenLinearFunction, Go's division.

The cases restate kubernetes/kubernetes `pkg/scheduler/framework/plugins/helper/normalize_score_test.go`
@ 0c3d8b97 (TestDefaultNormalizeScore) and TestBrokenLinearFunction, which upstream keeps in
`noderesources/requested_to_capacity_ratio_test.go` @ 8519d339 (there is no shape_score_test.go).
Go's integer division and rounding are checked on values worked by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.scheduling.plugins.helper import (
    broken_linear,
    default_normalize,
    go_div,
    go_div_array,
    go_round,
    normalize_default,
)
from skenario.scheduling.plugins.nodeaffinity import affinity_normalize
from skenario.scheduling.plugins.tainttoleration import taints_normalize
from tests.scheduling.plugins.cases import PROPERTY_SETTINGS

# --------------------------------------------------------------------------------------------------
# requested_to_capacity_ratio_test.go, TestBrokenLinearFunction: raw shapes (no x10 scaling), and
# (utilisation, expected value) pairs. Cases are unnamed upstream; t.Run names them case_<i>.
BROKEN_LINEAR_CASES = [
    # case_0: points (10, 1), (90, 9)
    (
        ((10, 1), (90, 9)),
        [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9), (100, 9), (110, 9)],
    ),
    # case_1: points (0, 2), (40, 10), (100, 0)
    (
        ((0, 2), (40, 10), (100, 0)),
        [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
    ),
    # case_2: points (0, 2), (40, 2), (100, 2)
    (
        ((0, 2), (40, 2), (100, 2)),
        [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
    ),
]


@pytest.mark.parametrize(
    ("shape", "p", "expected"),
    [
        pytest.param(shape, p, expected, id=f"case_{i}/p={p}")
        for i, (shape, assertions) in enumerate(BROKEN_LINEAR_CASES)
        for p, expected in assertions
    ],
)
def test_broken_linear_upstream(shape: tuple[tuple[int, int], ...], p: int, expected: int) -> None:
    assert broken_linear(shape)(p) == expected


def test_broken_linear_truncates_toward_zero_on_falling_segments() -> None:
    # Not an upstream case: Go's `/` truncates toward zero, so on a falling segment (10, 10) -> (13, 0)
    # f(11) = 10 + (-10 * 1) / 3 = 10 + (-3) = 7 (floor division would give 10 + (-4) = 6).
    assert broken_linear(((10, 10), (13, 0)))(11) == 7


# --------------------------------------------------------------------------------------------------
# helper/normalize_score_test.go, TestDefaultNormalizeScore (maxPriority = MaxNodeScore = 100). Cases are
# unnamed upstream; t.Run names them case_<i>. (reverse, scores, expected)
NORMALIZE_CASES = [
    (False, [1, 2, 3, 4], [25, 50, 75, 100]),  # case_0
    (True, [1, 2, 3, 4], [75, 50, 25, 0]),  # case_1
    (False, [1000, 10, 20, 30], [100, 1, 2, 3]),  # case_2
    (True, [1000, 10, 20, 30], [0, 99, 98, 97]),  # case_3
    (False, [1, 1, 1, 1], [100, 100, 100, 100]),  # case_4
    (False, [1000, 1, 1, 1], [100, 0, 0, 0]),  # case_5
    (True, [0, 1, 1, 1], [100, 0, 0, 0]),  # case_6
]


@pytest.mark.parametrize(
    ("reverse", "scores", "expected"),
    [pytest.param(*c, id=f"case_{i}") for i, c in enumerate(NORMALIZE_CASES)],
)
def test_default_normalize_upstream(reverse: bool, scores: list[int], expected: list[int]) -> None:
    assert default_normalize(scores, reverse=reverse) == expected


# --------------------------------------------------------------------------------------------------
# Go's integer arithmetic.


@pytest.mark.parametrize(
    ("a", "b", "quotient"),
    [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, 5, 0), (-1, 3, 0)],
)
def test_go_div_truncates_toward_zero(a: int, b: int, quotient: int) -> None:
    # Python's // floors instead: -7 // 2 == 7 // -2 == -4 and -1 // 3 == -1.
    assert go_div(a, b) == quotient


def test_go_div_array_agrees_with_go_div_element_by_element() -> None:
    a = np.array([7, -7, 7, -7, 0, -1], dtype=np.int64)
    b = np.array([2, 2, -2, -2, 5, 3], dtype=np.int64)
    assert go_div_array(a, b).tolist() == [3, -3, -3, 3, 0, 0]
    assert go_div_array(a, 2).tolist() == [3, -3, 3, -3, 0, 0]


@pytest.mark.parametrize(("x", "rounded"), [(2.5, 3), (-2.5, -3), (0.5, 1), (1.5, 2), (0.49, 0), (-0.51, -1)])
def test_go_round_takes_halves_away_from_zero(x: float, rounded: int) -> None:
    # Python's round() would give 2, -2, 0 and 2 for the first four: halves to even.
    assert go_round(x) == rounded


# --------------------------------------------------------------------------------------------------
# Properties.


@PROPERTY_SETTINGS
@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=20), st.booleans())
def test_default_normalize_range_and_top(scores: list[int], reverse: bool) -> None:
    out = default_normalize(scores, reverse=reverse)
    assert len(out) == len(scores)
    assert all(0 <= s <= 100 for s in out)
    if not reverse:
        assert max(out) == (0 if max(scores) == 0 else 100)
    elif max(scores) == 0:
        assert out == [100] * len(scores)  # reversed, all zero: every node is best
    else:
        assert min(out) == 0  # reversed: the largest cost gets 0
        if min(scores) == 0:
            assert max(out) == 100


@PROPERTY_SETTINGS
@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=20), st.booleans())
def test_the_array_form_normalises_as_the_list_form(scores: list[int], reverse: bool) -> None:
    array = normalize_default(np.array(scores, dtype=np.int64), reverse=reverse)
    assert array.tolist() == default_normalize(scores, reverse=reverse)


@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=20), st.booleans())
def test_normalised_scores_stay_within_0_and_100(scores: list[int], reverse: bool) -> None:
    normalised = taints_normalize(scores) if reverse else affinity_normalize(scores)
    assert all(0 <= s <= 100 for s in normalised)
    top = max(scores)
    for raw, score in zip(scores, normalised, strict=True):
        # Scaled against the maximum: 100 * s // max, subtracted from 100 when reversed.
        if top == 0:
            assert score == (100 if reverse else 0)
        elif raw == top:
            assert score == (0 if reverse else 100)
        elif raw == 0 and reverse:
            assert score == 100
