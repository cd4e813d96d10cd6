"""Confidence intervals over replications: against hand-computed Student-t intervals, paired and unpaired."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skenario.sweeps.space import SweepError
from skenario.sweeps.stats import Interval, interval, paired

# Values 1, 2, 3, 4, 5 by hand: mean 3; s^2 = (4 + 1 + 0 + 1 + 4) / 4 = 2.5, s = 1.58114;
# s / sqrt(5) = 0.70711. From a t table, t(4, 0.975) = 2.77645 and t(4, 0.995) = 4.60409, so the
# 95% half-width is 2.77645 * 0.70711 = 1.96324 and the 99% one 4.60409 * 0.70711 = 3.25559.
ONE_TO_FIVE = [1.0, 2.0, 3.0, 4.0, 5.0]
HALF_95 = 1.96324
HALF_99 = 3.25559


def test_the_interval_is_the_hand_computed_t_interval() -> None:
    found = interval(ONE_TO_FIVE)
    assert found.n == 5
    assert found.mean == 3.0
    assert found.low == pytest.approx(3 - HALF_95, abs=1e-5)
    assert found.high == pytest.approx(3 + HALF_95, abs=1e-5)
    assert found.half_width == pytest.approx(HALF_95, abs=1e-5)


def test_a_higher_confidence_widens_the_interval_by_the_t_quantile() -> None:
    found = interval(ONE_TO_FIVE, confidence=0.99)
    assert found.low == pytest.approx(3 - HALF_99, abs=1e-5)
    assert found.high == pytest.approx(3 + HALF_99, abs=1e-5)


def test_none_and_nan_are_left_out_and_n_counts_what_remains() -> None:
    assert interval([1.0, None, 2.0, math.nan, 3.0, 4.0, 5.0]) == interval(ONE_TO_FIVE)


def test_one_value_has_a_mean_and_no_interval_and_none_has_neither() -> None:
    one = interval([7.0, None])
    assert (one.mean, one.n) == (7.0, 1)
    assert math.isnan(one.low) and math.isnan(one.high)
    empty = interval([None, math.nan])
    assert empty.n == 0
    assert all(math.isnan(x) for x in (empty.mean, empty.low, empty.high))


def test_equal_values_give_an_interval_of_zero_width() -> None:
    assert interval([2.5, 2.5, 2.5]) == Interval(2.5, 2.5, 2.5, 3)


def test_the_95_percent_interval_covers_the_true_mean_about_95_times_in_100() -> None:
    """Normal replications: 4,000 intervals of 5 values each; a binomial(4000, 0.95) lies within
    0.95 ± 0.011 (3.2 standard deviations of 0.0034) but for one time in a thousand."""
    rng = np.random.default_rng(20)
    draws = rng.normal(10.0, 3.0, (4000, 5))
    covered = [(found := interval(list(row))).low <= 10.0 <= found.high for row in draws]
    assert np.mean(covered) == pytest.approx(0.95, abs=0.011)


# A shared per-seed offset: seed i's traffic makes both points slow or fast together (common random
# numbers). The point is 1..5 above the baseline; the offsets are 100, 200, ..., 500.
OFFSETS = [100.0, 200.0, 300.0, 400.0, 500.0]
BASELINE = OFFSETS
VALUES = [offset + d for offset, d in zip(OFFSETS, ONE_TO_FIVE, strict=True)]


def test_the_paired_interval_is_the_interval_of_the_per_seed_differences() -> None:
    found = paired(VALUES, BASELINE)
    assert found == interval(ONE_TO_FIVE)
    assert found.low == pytest.approx(3 - HALF_95, abs=1e-5)
    assert found.high == pytest.approx(3 + HALF_95, abs=1e-5)


def test_pairing_removes_the_shared_offset_that_swamps_the_unpaired_intervals() -> None:
    """Unpaired, each point's interval spans the offsets' spread (s = 159.7 and 158.1, half-widths
    198.3 and 196.3 by hand), far wider than the difference of 3; paired, the half-width is 1.96."""
    assert interval(VALUES).half_width == pytest.approx(198.28, abs=0.01)
    assert interval(BASELINE).half_width == pytest.approx(196.32, abs=0.01)
    unpaired = interval(VALUES).half_width + interval(BASELINE).half_width
    assert paired(VALUES, BASELINE).half_width < unpaired / 100


def test_a_seed_missing_at_either_point_is_left_out_of_the_pairs() -> None:
    found = paired([1.0, None, 3.0, 5.0], [0.0, 0.0, math.nan, 1.0])
    assert found.n == 2
    assert found.mean == pytest.approx((1.0 + 4.0) / 2)


def test_paired_values_need_one_per_seed_at_both_points() -> None:
    with pytest.raises(ValueError, match="3 and 2"):
        paired([1.0, 2.0, 3.0], [1.0, 2.0])


@pytest.mark.parametrize("confidence", [0.0, 1.0, 95.0, -0.5])
def test_a_confidence_level_outside_0_1_is_refused_naming_it(confidence: float) -> None:
    with pytest.raises(SweepError, match=f"not {confidence}"):
        interval(ONE_TO_FIVE, confidence=confidence)
