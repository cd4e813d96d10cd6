"""The simulator's confidence intervals: Student's t quantiles, the interval of a mean, and Bonferroni widening."""

from __future__ import annotations

import pytest

from skenario.validation.intervals import confidence_interval, simultaneous, t_quantile


@pytest.mark.parametrize(
    ("p", "df", "table"),
    # Student's t quantiles as printed in any statistics table (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
    [(0.975, 1, 12.706), (0.975, 4, 2.776), (0.975, 19, 2.093), (0.975, 40, 2.021), (0.975, 120, 1.980),
     (0.995, 10, 3.169), (0.995, 30, 2.750), (0.999, 20, 3.552), (0.9995, 19, 3.883), (0.95, 60, 1.671)],
)  # fmt: skip
def test_t_quantiles_match_the_table(p: float, df: int, table: float) -> None:
    assert t_quantile(p, df) == pytest.approx(table, abs=2e-3)


def test_an_interval_of_constant_samples_has_no_width() -> None:
    interval = confidence_interval([2.0, 2.0, 2.0])
    assert (interval.mean, interval.half_width) == (2.0, 0.0)
    assert interval.contains(2.0) and not interval.contains(2.0001)


def test_simultaneous_intervals_are_wider() -> None:
    interval = confidence_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert simultaneous(interval, 1).half_width == pytest.approx(interval.half_width)
    assert simultaneous(interval, 20).half_width > interval.half_width
