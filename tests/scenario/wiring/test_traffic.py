"""The `spec.traffic` section: what each type means, the arrivals it builds, and the errors it gives.

Trace types and bad trace files are in test_traffic_traces.py.

Count tolerances. A Poisson-based type puts N arrivals in a window, N Poisson with mean mu = the
integral of its rate over the window (worked out by hand below), sd sqrt(mu). |N - mu| <= 5 sqrt(mu)
fails with probability below 1e-6, and the seeds are fixed, so these pass reproducibly while a
wrong rate or window (say 5 % off, or the ramp measured over the wrong span) fails by far.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError

from skenario.core.random import RandomStreams
from skenario.core.time import MILLISECOND, MINUTE, SECOND, UNITS
from skenario.scenario.format.traffic import (
    AzureLlmTraffic,
    ConstantTraffic,
    CountsTraffic,
    NasaTraffic,
    ObservedTraffic,
    PoissonTraffic,
    RampTraffic,
    SinusoidalTraffic,
    StepTraffic,
    TimeUnit,
    TraceTraffic,
    TrafficItem,
    TrafficSpec,
    UniformTraffic,
)
from skenario.scenario.wiring.traffic import arrivals, build_arrivals, build_rate
from skenario.workloads.patterns import poisson_arrivals

SECTION: TypeAdapter[Any] = TypeAdapter(TrafficSpec)
ALL_TYPES = [ConstantTraffic, PoissonTraffic, UniformTraffic, StepTraffic, RampTraffic, SinusoidalTraffic]
ALL_TYPES += [TraceTraffic, CountsTraffic, AzureLlmTraffic, NasaTraffic, ObservedTraffic]


def parse(text: str) -> Any:
    """A traffic section written as YAML, as a user would."""
    return SECTION.validate_python(yaml.safe_load(text))


def build(traffic: Any, duration: int, seed: int = 1, base_dir: Path = Path(".")) -> list[int]:
    return list(build_arrivals(traffic, duration=duration, streams=RandomStreams(seed), base_dir=base_dir))


def within(count: int, mean: float, sds: float = 5.0) -> bool:
    return abs(count - mean) <= sds * math.sqrt(mean)


# --- parsing -------------------------------------------------------------------------------------


def test_each_type_parses_with_units() -> None:
    assert parse("{type: constant, rate: 300/m}") == ConstantTraffic(type="constant", rate=5.0)
    poisson = parse("{type: poisson, rate: 12, start: 1m, stop: 90s}")
    assert isinstance(poisson, PoissonTraffic) and (poisson.rate, poisson.start, poisson.stop) == (
        12,
        MINUTE,
        90 * SECOND,
    )
    assert parse("{type: uniform, count: 7}") == UniformTraffic(type="uniform", count=7)
    step = parse("{type: step, rate: 2/s, stepTo: 7200/h, stepAt: 5m}")
    assert (step.rate, step.step_to, step.step_at) == (2.0, 2.0, 5 * MINUTE)
    ramp = parse("{type: ramp, from: 1, to: 60/s}")
    assert isinstance(ramp, RampTraffic) and (ramp.rate_from, ramp.rate_to) == (1.0, 60.0)
    sine = parse("{type: sinusoidal, mean: 275, amplitude: 225, period: 10m}")
    assert (sine.mean, sine.amplitude, sine.period) == (275.0, 225.0, 10 * MINUTE)
    trace = parse("{type: trace, file: t.csv, column: at, unit: ms, timeScale: 2, rateScale: 0.5}")
    assert (trace.file, trace.column, trace.unit, trace.time_scale, trace.rate_scale) == ("t.csv", "at", "ms", 2, 0.5)
    counts = parse("{type: counts, file: c.csv, timeColumn: minute, countColumn: n, interval: 1m}")
    assert (counts.time_column, counts.count_column, counts.interval, counts.unit) == ("minute", "n", MINUTE, "s")
    azure = parse("{type: azureLlm, file: a.csv}")
    assert isinstance(azure, AzureLlmTraffic) and (azure.time_scale, azure.rate_scale) == (1.0, 1.0)
    nasa = parse("{type: nasa, file: n.tbz2, rateScale: 100, stop: 1h}")
    assert isinstance(nasa, NasaTraffic) and nasa.rate_scale == 100 and nasa.stop == 60 * MINUTE


def test_defaults_are_the_whole_run() -> None:
    traffic = parse("{type: poisson, rate: 1}")
    assert (traffic.start, traffic.stop) == (0, None)


def test_a_list_is_a_tuple_of_items() -> None:
    section = parse("[{type: constant, rate: 1}, {type: nasa, file: n.tbz2}]")
    assert isinstance(section, tuple) and [type(item) for item in section] == [ConstantTraffic, NasaTraffic]


def test_every_field_is_described() -> None:
    for cls in ALL_TYPES:
        for name, field in cls.model_fields.items():
            assert name == "type" or field.description, f"{cls.__name__}.{name} has no description"


def test_time_units_are_the_kernels() -> None:
    assert set(get_args(TimeUnit)) == set(UNITS)


def test_json_schema_lists_every_type() -> None:
    schema = str(SECTION.json_schema())
    for cls in ALL_TYPES:
        assert cls.__name__ in schema


def rejected(text: str) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        parse(text)
    return info.value


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("{type: poisson, rate: 1, burst: 3}", "extra_forbidden"),
        ("{type: ramp, from: 1, to: 2, slope: 1}", "extra_forbidden"),
        ("{type: azureLlm, file: a.csv, column: TIMESTAMP}", "extra_forbidden"),  # fixed by the type
        ("[{type: constant, rate: 1}, {type: uniform, count: 3, rate: 1}]", "extra_forbidden"),
        ("{type: poisson, rate: -1}", "greater_than_equal"),
        ("{type: poisson, rate: .inf}", "finite_number"),
        ("{type: trace, file: t.csv, column: t, timeScale: 0}", "greater_than"),
        ("{type: trace, file: t.csv, column: t, unit: parsec}", "literal_error"),
        ("{type: sinusoidal, mean: 5, amplitude: 1, period: 0s}", "greater_than"),
        ("{type: step, rate: 1, stepTo: 2}", "missing"),
        ("{type: counts, file: c.csv, timeColumn: t}", "missing"),
        ("{type: poisson, rate: 1, start: 1m, stop: 30s}", "value_error"),
        ("{type: poisson, rate: 1, start: 1m, stop: 1m}", "value_error"),
        ("{type: gamma, rate: 1}", "value_error"),
        ("{rate: 1}", "value_error"),
        ("[{type: gamma}]", "value_error"),
        ("[]", "value_error"),
        ("5", "traffic_type"),
    ],
)
def test_bad_sections_are_rejected(text: str, kind: str) -> None:
    assert rejected(text).errors()[0]["type"] == kind


def test_unknown_and_missing_types_are_named() -> None:
    assert "'gamma' is not a traffic type" in str(rejected("{type: gamma, rate: 1}"))
    assert "'gamma' is not a traffic type" in str(rejected("[{type: poisson, rate: 1}, {type: gamma}]"))
    assert "needs a 'type'" in str(rejected("{rate: 1}"))


def test_errors_are_located_as_written() -> None:
    # The tags of the unions are the users' own `type` values, so the loader can drop them.
    one = rejected("{type: poisson, rate: -1}").errors()[0]["loc"]
    assert one == ("poisson", "rate")
    listed = rejected("[{type: constant, rate: 1}, {type: ramp, from: 1, to: -2}]").errors()[0]["loc"]
    assert listed == ("list", 1, "ramp", "to")


# --- arrivals of the generated types -------------------------------------------------------------


def test_constant_is_evenly_spaced() -> None:
    # 4 per second from 0: one every 250 ms, the first at 250 ms, none at 10 s itself.
    assert build(parse("{type: constant, rate: 4}"), 10 * SECOND) == [k * 250 * MILLISECOND for k in range(1, 40)]


def test_poisson_count_and_seed_compatibility() -> None:
    times = build(parse("{type: poisson, rate: 40/s}"), 100 * SECOND, seed=3)
    assert within(len(times), 40 * 100)
    # One traffic object draws from the stream "traffic", as the simulation did before this section.
    previous = poisson_arrivals(40.0, 0, 100 * SECOND, RandomStreams(3).generator("traffic"))
    assert times == list(previous)


def test_uniform_places_exactly_count_in_its_window() -> None:
    times = build(parse("{type: uniform, count: 1000, start: 10s, stop: 20s}"), MINUTE)
    assert len(times) == 1000 and all(10 * SECOND <= t < 20 * SECOND for t in times)


def test_step_rates_before_and_after() -> None:
    times = np.array(build(parse("{type: step, rate: 30, stepTo: 90, stepAt: 100s}"), 300 * SECOND, seed=11))
    before = int(np.sum(times < 100 * SECOND))
    assert within(before, 30 * 100) and within(times.size - before, 90 * 200)


def test_ramp_follows_its_declared_window_not_the_run() -> None:
    # Rate 0 at 0 rising to 100/s at stop = 100 s: rate(t) = t per second. The run ends at 50 s,
    # so the count is the integral over [0, 50] = 1250. Had the slope been fitted to the run
    # (0 to 100 over 50 s, rate 2t) it would be 2500.
    times = build(parse("{type: ramp, from: 0, to: 100, stop: 100s}"), 50 * SECOND, seed=5)
    assert within(len(times), 1250) and all(t < 50 * SECOND for t in times)


def test_sinusoid_mean_and_phase() -> None:
    # Over whole periods the sine integrates to zero: the count is mean * duration. The first half
    # of each period is the busy one: mean P/2 + amplitude P/pi arrivals in it.
    mean, amplitude, period, periods = 275.0, 225.0, 10 * SECOND, 6
    times = np.array(build(parse("{type: sinusoidal, mean: 275, amplitude: 225, period: 10s}"), periods * period))
    assert within(times.size, mean * periods * 10)
    busy = int(np.sum(times % period < period // 2))
    assert within(busy, periods * (mean * 5 + amplitude * 10 / math.pi))


def test_window_limits_arrivals() -> None:
    times = build(parse("{type: poisson, rate: 50, start: 20s, stop: 40s}"), MINUTE, seed=2)
    assert all(20 * SECOND <= t < 40 * SECOND for t in times)
    assert within(len(times), 50 * 20)


def test_a_window_after_the_run_gives_nothing() -> None:
    assert build(parse("{type: uniform, count: 5, start: 2m}"), MINUTE) == []
    assert build(parse("{type: poisson, rate: 100, start: 1m}"), MINUTE) == []


SIMPLE = st.sampled_from(
    [
        "{type: constant, rate: 7}",
        "{type: poisson, rate: 30}",
        "{type: uniform, count: 200}",
        "{type: step, rate: 5, stepTo: 40, stepAt: 3s}",
        "{type: ramp, from: 50, to: 0}",
        "{type: sinusoidal, mean: 10, amplitude: 30, period: 2s}",
    ]
)


@settings(max_examples=60, deadline=None)
@given(
    text=SIMPLE,
    duration=st.integers(1, 1000) | st.integers(SECOND, 20 * SECOND),
    window=st.tuples(
        st.integers(0, 10) | st.integers(0, 10 * SECOND), st.integers(1, 10) | st.integers(1, 30 * SECOND)
    ),
    seed=st.integers(0, 2**32),
)
def test_arrivals_are_sorted_inside_the_run_and_window(
    text: str, duration: int, window: tuple[int, int], seed: int
) -> None:
    start, length = window
    traffic = parse(text).model_copy(update={"start": start, "stop": start + length})
    times = build(traffic, duration, seed)
    assert times == build(traffic, duration, seed)  # deterministic per seed
    assert all(type(t) is int for t in times)
    assert all(0 < t < duration for t in times)
    # inside the window, except that an arrival at 0 moves to 1 ns (0 is the kernel's start)
    assert all(max(start, 1) <= t and (t < start + length or t == 1) for t in times)
    assert all(a <= b for a, b in pairwise(times))


def test_builder_rejects_an_empty_run() -> None:
    with pytest.raises(ValueError):
        build(parse("{type: poisson, rate: 1}"), 0)


# --- sums ----------------------------------------------------------------------------------------


def test_a_list_is_the_merged_sum_of_its_items() -> None:
    section = parse("[{type: poisson, rate: 20}, {type: constant, rate: 3}, {type: uniform, count: 50, stop: 5s}]")
    duration = 30 * SECOND
    merged = build(section, duration, seed=9)
    assert merged == sorted(merged)
    # Item i draws from the stream "traffic[i]", whatever the other items are.
    streams = RandomStreams(9)
    parts = [
        list(arrivals(item, duration=duration, rng=streams.generator(f"traffic[{i}]"), base_dir=Path("."), field="f"))
        for i, item in enumerate(section)
    ]
    assert Counter(merged) == Counter(t for part in parts for t in part)
    assert len(parts[1]) == 3 * 30 - 1 and len(parts[2]) == 50


def test_adding_an_item_keeps_the_others_draws() -> None:
    two = build(parse("[{type: poisson, rate: 20}, {type: ramp, from: 0, to: 9}]"), MINUTE, seed=4)
    three = build(
        parse("[{type: poisson, rate: 20}, {type: ramp, from: 0, to: 9}, {type: poisson, rate: 5}]"), MINUTE, 4
    )
    assert not Counter(two) - Counter(three)  # every arrival of the two is among the three's
    assert within(len(three) - len(two), 5 * 60)


def test_the_tests_cover_every_type() -> None:
    members = [get_args(member)[0] for member in get_args(get_args(TrafficItem)[0])]
    assert members == ALL_TYPES and all(issubclass(cls, BaseModel) for cls in members)


FLUID_TRAFFIC = """
- {type: sinusoidal, mean: 70/s, amplitude: 50/s, period: 10m}
- {type: poisson, rate: 10/s, start: 5m, stop: 15m}
- {type: step, rate: 5/s, stepTo: 25/s, stepAt: 10m}
- {type: ramp, from: 0/s, to: 30/s, start: 10m}
- {type: uniform, count: 600, start: 2m, stop: 12m}
- {type: constant, rate: 2/s, stop: 10m}
"""


def test_the_fluid_rate_integrates_to_the_arrivals_expected_and_drawn() -> None:
    """Twenty minutes of six items, by hand: the sinusoid's two whole periods 70 x 1200; Poisson 10 x 600;
    the step 5 x 600 + 25 x 600; the ramp from 0 to 30 over its 10 minutes, 15 x 600; uniform's 600;
    constant 2 x 600. The rate's integral is that sum, and the discrete run's arrivals within 4 sigma."""
    traffic = parse(FLUID_TRAFFIC)
    duration = 20 * MINUTE
    expected = 70 * 1200 + 10 * 600 + 5 * 600 + 25 * 600 + 15 * 600 + 600 + 2 * 600
    rate = build_rate(traffic, duration=duration, base_dir=Path("."))
    step = SECOND // 20
    grid = np.arange(step // 2, duration, step, dtype=np.int64)  # midpoints
    assert float(rate(grid).sum()) * step / SECOND == pytest.approx(expected, rel=1e-3)
    assert sum(rate.mean(t, t + 15 * SECOND) * 15 for t in range(0, duration, 15 * SECOND)) == pytest.approx(
        expected, rel=1e-3
    )
    drawn = len(build(traffic, duration))
    assert abs(drawn - expected) < 4 * math.sqrt(expected)


# --- a run that starts into the scenario's time (spec.offset) ---------------------------------------


def test_an_offset_run_gets_the_patterns_traffic_of_its_stretch() -> None:
    """From 15 minutes on, for a minute: Poisson's 10/s gives 600; the sinusoid (mean 70/s, amplitude 50/s, period
    1h, phase zero at 0) is at its peak a quarter period in, so about 120/s, 7,200; the ramp from 0 to 30/s over
    the hour is at 7.5 to 8/s, 465 by hand; a step at 10 minutes is past it: 25/s, 1,500. Each within 5 sigma,
    all inside the run's own minute."""
    duration, offset = MINUTE, 15 * MINUTE
    cases = [
        ("{type: poisson, rate: 10/s}", 600.0),
        ("{type: sinusoidal, mean: 70/s, amplitude: 50/s, period: 1h}", None),
        ("{type: ramp, from: 0/s, to: 30/s, stop: 1h}", 465.0),
        ("{type: step, rate: 5/s, stepTo: 25/s, stepAt: 10m}", 1500.0),
    ]
    for text, expected in cases:
        traffic = parse(text)
        if expected is None:  # the sinusoid's integral over [15m, 16m), numerically
            grid = np.linspace(15 * 60, 16 * 60, 60_001)
            expected = float(np.trapezoid(70 + 50 * np.sin(2 * np.pi * grid / 3600), grid))
        times = list(
            build_arrivals(traffic, duration=duration, streams=RandomStreams(3), base_dir=Path("."), offset=offset)
        )
        assert all(0 < t < duration for t in times) and times == sorted(times), text
        assert within(len(times), expected), (text, len(times), expected)
        rate = build_rate(traffic, duration=duration, base_dir=Path("."), offset=offset)
        assert rate.mean(0, duration) * 60 == pytest.approx(expected, rel=2e-3), text


def test_an_item_that_starts_inside_the_stretch_keeps_its_own_start() -> None:
    """A Poisson item from 20 minutes on, seen from an offset of 15 minutes for 10 minutes: its 5 minutes, 3,000."""
    traffic = parse("{type: poisson, rate: 10/s, start: 20m}")
    times = list(
        build_arrivals(traffic, duration=10 * MINUTE, streams=RandomStreams(4), base_dir=Path("."), offset=15 * MINUTE)
    )
    assert min(times) >= 5 * MINUTE and within(len(times), 3000)
