"""A sweep's points: grid order, the Latin hypercube's strata, Sobol's balance, ranges mapped within bounds."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND, parse_duration
from skenario.sweeps.design import grid, latin_hypercube, points, sobol
from skenario.sweeps.space import Range, Setting, SweepError, parse_range

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
Sampler = Callable[[Sequence[Range], int, int], list[dict[str, Any]]]


def test_the_grid_varies_the_first_setting_slowest() -> None:
    found = grid([Setting("a", (1, 2)), Setting("b", ("x", "y", "z"))])
    assert found == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 1, "b": "z"},
        {"a": 2, "b": "x"},
        {"a": 2, "b": "y"},
        {"a": 2, "b": "z"},
    ]


def test_a_grid_of_no_settings_is_the_scenario_as_written() -> None:
    assert grid([]) == [{}]


@settings(max_examples=60, deadline=None)
@given(
    dimensions=st.integers(min_value=1, max_value=4),
    samples=st.integers(min_value=1, max_value=64),
    seed=SEEDS,
    low=st.floats(min_value=-1e3, max_value=1e3),
    width=st.floats(min_value=1e-2, max_value=1e3),
)
def test_each_of_the_n_strata_of_every_range_holds_exactly_one_lhs_sample(
    dimensions: int, samples: int, seed: int, low: float, width: float
) -> None:
    ranges = [Range(f"r{i}", low, low + width * (i + 1)) for i in range(dimensions)]
    found = latin_hypercube(ranges, samples, seed)
    assert len(found) == samples
    for space in ranges:
        strata = sorted(math.floor((p[space.path] - space.low) / (space.high - space.low) * samples) for p in found)
        assert strata == list(range(samples))


@settings(max_examples=60, deadline=None)
@given(samples=st.integers(min_value=1, max_value=80), first=st.integers(-50, 50), seed=SEEDS)
def test_an_int_range_of_n_values_sampled_n_times_takes_each_value_once(samples: int, first: int, seed: int) -> None:
    """Each whole number of an :int range owns an equal share of [0, 1); with as many strata as numbers,
    a Latin hypercube gives every number once."""
    space = Range("r", first, first + samples - 1 if samples > 1 else first + 1, "int")
    found = [p["r"] for p in latin_hypercube([space], samples, seed)]
    assert all(type(v) is int for v in found)
    if samples > 1:
        assert sorted(found) == list(range(first, first + samples))


@settings(max_examples=40, deadline=None)
@given(exponent=st.integers(min_value=0, max_value=8), seed=SEEDS)
def test_a_power_of_two_of_sobol_points_holds_one_in_each_stratum(exponent: int, seed: int) -> None:
    """Scrambled Sobol points are a (0, m, 1)-net in each coordinate: 2^m points, one per 1/2^m."""
    samples = 2**exponent
    ranges = [Range("a", 0.0, 1.0), Range("b", 0.0, 1.0), Range("c", 0.0, 1.0)]
    found = sobol(ranges, samples, seed)
    for space in ranges:
        assert sorted(math.floor(p[space.path] * samples) for p in found) == list(range(samples))


def test_sobol_takes_any_count_of_points_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = sobol([Range("a", 0.0, 1.0)], 10, seed=3)
    assert len(found) == 10 and all(0.0 <= p["a"] <= 1.0 for p in found)


@settings(max_examples=60, deadline=None)
@given(
    low=st.floats(min_value=1e-6, max_value=1e3),
    ratio=st.floats(min_value=1.001, max_value=1e6),
    samples=st.integers(min_value=1, max_value=40),
    seed=SEEDS,
    design=st.sampled_from([latin_hypercube, sobol]),
)
def test_log_ranges_stay_within_their_bounds(
    low: float, ratio: float, samples: int, seed: int, design: Sampler
) -> None:
    space = Range("r", low, low * ratio, "log")
    found = [p["r"] for p in design([space], samples, seed)]
    assert all(space.low <= v <= space.high for v in found)


def test_a_log_range_is_uniform_in_the_logarithm() -> None:
    """1..10000:log: the middle of 1001 stratified samples sits at 10^(4 * 0.5) = 100, give or take one
    stratum (a factor 10^(4/1001) = 1.009), where a linear range would put it near 5000."""
    found = sorted(p["r"] for p in latin_hypercube([Range("r", 1.0, 10_000.0, "log")], 1001, seed=1))
    assert found[500] == pytest.approx(100.0, rel=0.01)


def test_duration_ranges_give_durations_within_bounds_at_their_ends_precision() -> None:
    space = parse_range("spec.autoscalers[0].syncPeriod=30s..5m")
    found = [p[space.path] for p in latin_hypercube([space], 50, seed=4)]
    assert all(isinstance(v, str) for v in found)
    nanoseconds = [parse_duration(v) for v in found]
    assert all(30 * SECOND <= ns <= 300 * SECOND and ns % SECOND == 0 for ns in nanoseconds)


@pytest.mark.parametrize("design", [latin_hypercube, sobol])
def test_the_same_seed_gives_the_same_design_and_another_seed_another(design: Sampler) -> None:
    ranges = [Range("a", 0.0, 1.0), Range("b", 1.0, 100.0, "log"), Range("c", 1, 9, "int")]
    first = design(ranges, 16, 7)
    assert design(ranges, 16, 7) == first
    assert design(ranges, 16, 8) != first


def test_every_grid_point_is_crossed_with_the_same_sampled_points() -> None:
    settings_ = [Setting("workload.replicas", (2, 4))]
    ranges = [Range("a", 0.0, 1.0)]
    found = points(settings_, ranges, "lhs", samples=3, seed=5)
    sampled = latin_hypercube(ranges, 3, 5)
    assert found == [{"workload.replicas": r, **s} for r in (2, 4) for s in sampled]


def test_points_of_a_grid_are_the_grid() -> None:
    settings_ = [Setting("a", (1, 2)), Setting("b", (3,))]
    assert points(settings_, [], "grid") == grid(settings_)


@pytest.mark.parametrize(
    ("settings_", "ranges", "design", "samples", "message"),
    [
        ([], [Range("a", 0.0, 1.0)], "grid", None, r"a range needs --design lhs or sobol, or give values with --set"),
        ([Setting("a", (1,))], [], "grid", 4, r"--samples 4: only --design lhs or sobol samples"),
        ([], [Range("a", 0.0, 1.0)], "lhs", None, r"--design lhs needs --samples N"),
        ([], [Range("a", 0.0, 1.0)], "sobol", 0, r"--design sobol needs --samples N"),
        ([Setting("a", (1,))], [], "lhs", 4, r"--design lhs samples ranges"),
        ([], [], "random", None, r"--design 'random': write one of grid, lhs, sobol"),
        (
            [Setting("workload.replicas", (1,))],
            [Range("spec.workload.replicas", 1, 4, "int")],
            "lhs",
            4,
            r"spec.workload.replicas is given twice \(also as workload.replicas\)",
        ),
    ],
)
def test_points_refuse_what_cannot_make_a_sweep_naming_the_option(
    settings_: list[Setting], ranges: list[Range], design: str, samples: int | None, message: str
) -> None:
    with pytest.raises(SweepError, match=message):
        points(settings_, ranges, design, samples, seed=0)
