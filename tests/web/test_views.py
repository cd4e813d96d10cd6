"""The dashboard's pure readings: counts over time, the Pareto front, JSON-safe values."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from skenario.web.views import pareto_mask, plain, step_counts


def test_step_counts_by_hand() -> None:
    """Three intervals: [0, 5), [2, never), [2, 3). After 0: 1; after 2: 3; after 3: 2; after 5: 1."""
    assert step_counts([0, 2, 2], [5, None, 3]) == ([0.0, 2.0, 3.0, 5.0], [1, 3, 2, 1])
    assert step_counts([], None) == ([], [])


@given(st.lists(st.tuples(st.integers(0, 50), st.one_of(st.none(), st.integers(0, 30))), max_size=40))
def test_step_counts_are_the_intervals_open_after_each_instant(spans: list[tuple[int, int | None]]) -> None:
    starts = [float(s) for s, _ in spans]
    stops = [None if d is None else float(s + d) for s, d in spans]
    times, counts = step_counts(starts, stops)
    assert times == sorted(set(times))
    for time, count in zip(times, counts, strict=True):
        assert count == sum(s <= time and (e is None or e > time) for s, e in zip(starts, stops, strict=True))


def test_the_front_of_a_hand_drawn_set() -> None:
    """(1, 5) and (3, 2) and (4, 1) trade off; (3, 3) is beaten by (3, 2); (1, 5) twice: neither beats the other."""
    points = [[1, 5], [3, 2], [3, 3], [4, 1], [1, 5], [2, None]]
    assert pareto_mask(points) == [True, True, False, True, True, False]


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=25))
def test_the_front_is_exactly_the_undominated_points(points: list[tuple[int, int]]) -> None:
    front = pareto_mask([list(p) for p in points])

    def beats(q: tuple[int, int], p: tuple[int, int]) -> bool:
        return q[0] <= p[0] and q[1] <= p[1] and q != p

    for p, on in zip(points, front, strict=True):
        assert on == (not any(beats(q, p) for q in points))
    # Every point off the front is beaten by one on it.
    on_front = [p for p, on in zip(points, front, strict=True) if on]
    assert all(any(beats(q, p) for q in on_front) for p, on in zip(points, front, strict=True) if not on)


def test_plain_values_are_json_safe() -> None:
    value = {"a": np.float64("nan"), "b": [np.int64(3), math.inf], 4: (np.float32(0.5),)}
    assert plain(value) == {"a": None, "b": [3, None], "4": [0.5]}
