"""The VPA's histograms against upstream kubernetes/autoscaler, case by case.

Each `test_upstream_*` restates one upstream unit test (named in its docstring) with its data, from
`pkg/recommender/util`'s `histogram_options_test.go`, `histogram_test.go` and
`decaying_histogram_test.go`. The CPU bucket scheme is checked against the reference's formulas
(`harness`), and the hypothesis properties check what must hold for any input.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.autoscalers.vpa.histogram import (
    DecayingHistogram,
    ExponentialHistogramOptions,
    Histogram,
    LinearHistogramOptions,
    cpu_histogram_options,
)
from skenario.core.time import DAY, HOUR, MINUTE, SECOND
from tests.autoscalers.vpa.harness import cpu_bucket_of, usage

# histogram_test.go: linear buckets of 1.0 up to 10.0, epsilon 1e-15.
WEIGHT_EPSILON = 1e-15
VALUE_EPSILON = 1e-15
# decaying_histogram_test.go startTime = time.Unix(1234567890, 0).
START = 1234567890 * SECOND


def linear_options() -> LinearHistogramOptions:
    return LinearHistogramOptions(10.0, 1.0, WEIGHT_EPSILON)


# --- bucket schemes (histogram_options_test.go) ----------------------------------------------------


def test_upstream_linear_histogram_options() -> None:
    """TestLinearHistogramOptions: max 5.0, bucket 0.3, epsilon 0.001."""
    o = LinearHistogramOptions(5.0, 0.3, 0.001)
    assert o.epsilon == 0.001
    assert o.num_buckets == 18
    assert o.bucket_start(0) == 0.0
    assert o.bucket_start(17) == pytest.approx(5.1, rel=1e-15)
    assert o.find_bucket(-1.0) == 0
    assert o.find_bucket(0.0) == 0
    assert o.find_bucket(1.3) == 4
    assert o.find_bucket(100.0) == 17


def test_upstream_exponential_histogram_options() -> None:
    """TestExponentialHistogramOptions: max 500, first bucket 40, ratio 1.5, epsilon 0.001."""
    o = ExponentialHistogramOptions(500.0, 40.0, 1.5, 0.001)
    assert o.epsilon == 0.001
    assert o.num_buckets == 6
    assert [o.bucket_start(b) for b in range(6)] == [0.0, 40.0, 100.0, 190.0, 325.0, 527.5]
    assert o.find_bucket(-1.0) == 0
    assert o.find_bucket(39.99) == 0
    assert o.find_bucket(40.0) == 1
    assert o.find_bucket(100.0) == 2
    assert o.find_bucket(900.0) == 5


def test_bad_options_are_rejected() -> None:
    """NewLinear/NewExponentialHistogramOptions return an error for these."""
    with pytest.raises(ValueError):
        LinearHistogramOptions(0.0, 1.0, 0.1)
    with pytest.raises(ValueError):
        ExponentialHistogramOptions(10.0, 1.0, 1.0, 0.1)
    with pytest.raises(IndexError):
        linear_options().bucket_start(11)


def test_cpu_bucket_scheme() -> None:
    """The reference: first bucket 0.01 core (10m), ratio 1.05, max 1000 cores, 176 buckets, epsilon 1e-4."""
    o = cpu_histogram_options()
    assert o.num_buckets == 176
    assert o.epsilon == 1e-4
    assert o.bucket_start(1) == pytest.approx(10.0)
    assert o.bucket_start(2) == pytest.approx(20.5)  # 10 + 10 * 1.05
    assert o.bucket_start(3) == pytest.approx(31.525)  # 20.5 + 10 * 1.05^2
    assert o.find_bucket(9.99) == 0
    assert o.find_bucket(10.0) == 1
    assert o.find_bucket(20.4) == 1
    assert o.find_bucket(20.6) == 2
    assert o.bucket_start(174) < 1_000_000.0 <= o.bucket_start(175)
    assert o.find_bucket(5e9) == 175  # clamped to the last bucket


# --- histogram (histogram_test.go) -----------------------------------------------------------------


def test_upstream_percentiles_empty_histogram() -> None:
    """TestPercentilesEmptyHistogram: 0.0 for any percentile."""
    h = Histogram(linear_options())
    assert h.is_empty
    for p in (-0.5, 0.0, 0.5, 1.0, 1.5):
        assert h.percentile(p) == 0.0


def test_upstream_percentiles() -> None:
    """TestPercentiles: samples {1: 1, 2: 2, 3: 3, 4: 4}; a percentile is the end of its bucket."""
    h = Histogram(linear_options())
    for i in range(1, 5):
        h.add_sample(float(i), float(i), 0)
    expected = {0.0: 2, 0.1: 2, 0.2: 3, 0.3: 3, 0.4: 4, 0.5: 4, 0.6: 4, 0.7: 5, 0.8: 5, 0.9: 5, 1.0: 5}
    for p, value in expected.items():
        assert h.percentile(p) == pytest.approx(value, rel=VALUE_EPSILON), p


def test_upstream_percentile_out_of_bounds() -> None:
    """TestPercentileOutOfBounds: below 0 gives the minimum, above 1 the maximum; the last bucket
    answers with its start."""
    h = Histogram(LinearHistogramOptions(1.0, 0.1, WEIGHT_EPSILON))
    h.add_sample(0.1, 0.1, 0)
    h.add_sample(0.2, 0.2, 0)
    assert h.percentile(-0.1) == pytest.approx(0.2, rel=VALUE_EPSILON)
    assert h.percentile(1.1) == pytest.approx(0.3, rel=VALUE_EPSILON)
    h.add_sample(0.0, 0.1, 0)
    h.add_sample(1.0, 0.2, 0)
    assert h.percentile(-0.1) == pytest.approx(0.1, rel=VALUE_EPSILON)
    assert h.percentile(1.1) == pytest.approx(1.0, rel=VALUE_EPSILON)


def test_upstream_empty_histogram() -> None:
    """TestEmptyHistogram: a bucket under epsilon counts as empty; subtraction floors at zero."""
    h = Histogram(LinearHistogramOptions(1.0, 0.1, WEIGHT_EPSILON))
    assert h.is_empty
    h.add_sample(0.1, WEIGHT_EPSILON * 2.5, 0)
    assert not h.is_empty
    h.subtract_sample(0.1, WEIGHT_EPSILON, 0)
    assert not h.is_empty
    h.subtract_sample(0.1, WEIGHT_EPSILON, 0)
    assert h.is_empty
    # safeSubtract: what falls below epsilon is zeroed, in the bucket and in the total.
    assert h.bucket_weight(1) == 0.0 and h.total_weight == 0.0


def test_subtracting_the_top_sample_lowers_the_maximum() -> None:
    """updateMinAndMaxBucket after SubtractSample: above 1 a percentile is the remaining maximum's end."""
    h = Histogram(linear_options())
    h.add_sample(1.0, 1.0, 0)
    h.add_sample(5.0, 1.0, 0)
    assert h.percentile(1.1) == 6.0
    h.subtract_sample(5.0, 1.0, 0)
    assert h.percentile(1.1) == 2.0
    h.subtract_sample(1.0, 1.0, 0)
    assert h.is_empty and h.percentile(1.1) == 0.0


def test_upstream_non_empty_on_epsilon_addition() -> None:
    """TestNonEmptyOnEpsilonAddition: tiny samples elsewhere do not make a non-empty histogram empty."""
    h = Histogram(LinearHistogramOptions(1.0, 0.1, WEIGHT_EPSILON))
    h.add_sample(9.9, WEIGHT_EPSILON * 3, 0)
    assert not h.is_empty
    h.add_sample(0.1, WEIGHT_EPSILON * 0.3, 0)
    assert not h.is_empty
    h.add_sample(999.9, WEIGHT_EPSILON * 0.3, 0)
    assert not h.is_empty


def test_negative_weight_is_rejected() -> None:
    """AddSample panics on a negative weight."""
    with pytest.raises(ValueError):
        Histogram(linear_options()).add_sample(1.0, -1.0, 0)
    with pytest.raises(ValueError):
        DecayingHistogram(linear_options(), HOUR).add_sample(1.0, -1.0, 0)


# --- decaying histogram (decaying_histogram_test.go) -----------------------------------------------


def test_upstream_percentiles_empty_decaying_histogram() -> None:
    """TestPercentilesEmptyDecayingHistogram."""
    h = DecayingHistogram(linear_options(), HOUR)
    for p in (-0.5, 0.0, 0.5, 1.0, 1.5):
        assert h.percentile(p) == 0.0


def test_upstream_simple_decay() -> None:
    """TestSimpleDecay: weight 1000 decays below a weight-1 sample 20 half-lives later (2^20 x 0.001 > 1)."""
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(2, 1000, START)
    h.add_sample(1, 1, START + 20 * HOUR)
    assert h.percentile(0.999) == pytest.approx(2, rel=VALUE_EPSILON)
    assert h.percentile(1.0) == pytest.approx(3, rel=VALUE_EPSILON)


def test_upstream_longterm_decay() -> None:
    """TestLongtermDecay: after more than 2^100 of relative decay the old sample is gone."""
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(2, 1, START)
    h.add_sample(1, 1, START + 101 * HOUR)
    assert h.percentile(1.0) == pytest.approx(2, rel=VALUE_EPSILON)


def test_upstream_decaying_histogram_percentiles() -> None:
    """TestDecayingHistogramPercentiles: samples 1..4 with weights 1..4, one half-life apart, weigh
    1/8, 2/4, 3/2, 4/1: percentiles 0-2% in [1, 2), 3-10% in [2, 3), 11-34% in [3, 4), 35-100% in [4, 5)."""
    h = DecayingHistogram(linear_options(), HOUR)
    for i in range(1, 5):
        h.add_sample(float(i), float(i), START + (i - 1) * HOUR)
    expected = {0.00: 2, 0.02: 2, 0.03: 3, 0.10: 3, 0.11: 4, 0.34: 4, 0.35: 5, 1.00: 5}
    for p, value in expected.items():
        assert h.percentile(p) == pytest.approx(value, rel=VALUE_EPSILON), p


def test_upstream_no_decay() -> None:
    """TestNoDecay: at one timestamp a decaying histogram answers as a plain one."""
    h = DecayingHistogram(linear_options(), HOUR)
    for i in range(1, 5):
        h.add_sample(float(i), float(i), START)
    expected = {0.0: 2, 0.1: 2, 0.2: 3, 0.3: 3, 0.4: 4, 0.5: 4, 0.6: 4, 0.7: 5, 0.8: 5, 0.9: 5, 1.0: 5}
    for p, value in expected.items():
        assert h.percentile(p) == pytest.approx(value, rel=VALUE_EPSILON), p


def test_decay_halves_weight_per_half_life() -> None:
    """The reference: weight x 2^((t - ref) / halfLife); one half-life older counts half, two a quarter."""
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(1.5, 1.0, 3 * HOUR)
    h.add_sample(2.5, 1.0, 2 * HOUR)
    h.add_sample(3.5, 1.0, 1 * HOUR)
    assert h.bucket_weight(2) == h.bucket_weight(1) / 2
    assert h.bucket_weight(3) == h.bucket_weight(1) / 4


def test_reference_timestamp_shifts_to_a_rounded_half_life() -> None:
    """decayFactor: a sample more than 100 half-lives past the reference moves the reference to the
    sample time rounded to a whole half-life (Go Time.Round: halves up). 1234567890 s is
    342935 h + 1890 s, so it rounds up to 342936 h; 1200 s later still rounds to 342936 h."""
    h = DecayingHistogram(linear_options(), HOUR)
    assert h.reference_timestamp == 0
    h.add_sample(1.0, 1.0, 50 * HOUR)
    assert h.reference_timestamp == 0  # within 100 half-lives: no shift
    h.add_sample(1.0, 1.0, START)
    assert h.reference_timestamp == 342936 * HOUR
    h.add_sample(1.0, 1.0, START + 1200 * SECOND)
    assert h.reference_timestamp == 342936 * HOUR
    h.add_sample(2.0, 1.0, 342936 * HOUR + 100 * HOUR + 1)  # 1 ns past the limit, rounds down
    assert h.reference_timestamp == (342936 + 100) * HOUR
    # Weights are relative: the three samples at ~START now weigh ~2^-100 each, far below epsilon.
    assert h.percentile(0.0) == pytest.approx(3.0)


def test_reference_timestamp_rounds_halves_up() -> None:
    """Go's Time.Round rounds a halfway value up: 200 h 30 min becomes 201 h, 200 h 29 min 59 s 200 h."""
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(1.0, 1.0, 200 * HOUR + 30 * MINUTE)
    assert h.reference_timestamp == 201 * HOUR
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(1.0, 1.0, 200 * HOUR + 30 * MINUTE - SECOND)
    assert h.reference_timestamp == 200 * HOUR


# --- properties -------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(usage, st.floats(min_value=0.01, max_value=10.0), st.integers(min_value=0, max_value=400 * HOUR)),
        min_size=1,
        max_size=40,
    ),
    st.floats(min_value=-0.2, max_value=1.2),
    st.floats(min_value=-0.2, max_value=1.2),
)
def test_percentile_is_monotone(data: list[tuple[float, float, int]], p: float, q: float) -> None:
    """percentile(p) <= percentile(q) whenever p <= q, whatever the weights and ages."""
    h = DecayingHistogram(cpu_histogram_options(), DAY)
    for value, weight, t in data:
        h.add_sample(value, weight, t)
    lo, hi = min(p, q), max(p, q)
    assert h.percentile(lo) <= h.percentile(hi)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(usage, min_size=1, max_size=30),
    st.integers(min_value=0, max_value=200),
    st.integers(min_value=1, max_value=10),
    st.integers(min_value=0, max_value=64),
)
def test_more_recent_copies_leave_percentiles_unchanged(values: list[float], start: int, later: int, k: int) -> None:
    """Samples taken at one time, then the same values again some half-lives later: every bucket's
    weight is multiplied by the same factor, so percentiles do not move. Times are whole half-lives
    and percentiles k/64 so that the comparison involves no rounding."""
    h = DecayingHistogram(cpu_histogram_options(), DAY)
    for v in values:
        h.add_sample(v, 1.0, start * DAY)
    before = h.percentile(k / 64)
    for v in values:
        h.add_sample(v, 1.0, (start + later) * DAY)
    assert h.percentile(k / 64) == before


@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=0, max_value=10_000 * HOUR),
    st.integers(min_value=1, max_value=8),
    st.floats(min_value=0.01, max_value=100.0),
)
def test_older_sample_counts_half_per_half_life(t: int, k: int, weight: float) -> None:
    """A sample k half-lives older than another of the same weight counts 2^-k as much."""
    h = DecayingHistogram(cpu_histogram_options(), DAY)
    h.add_sample(1000.0, weight, t + k * DAY)  # bucket of 1000m
    h.add_sample(20.0, weight, t)  # bucket 1
    newer = h.bucket_weight(cpu_bucket_of(1000.0))
    assert h.bucket_weight(1) == pytest.approx(newer * 2.0**-k, rel=1e-12)
