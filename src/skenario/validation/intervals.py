"""Confidence intervals from independent replications: mean +- t(1 - alpha/2, n-1) s / sqrt(n).

With many values checked at once, some 95% intervals miss by chance (about 1 in 20);
`simultaneous` widens them (Bonferroni) so that all hold together with 95% confidence.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

# Student's t, two-sided 95% (the 0.975 quantile), for 1..30 degrees of freedom (any statistics table).
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_quantile(p: float, df: int) -> float:
    """The `p` quantile of Student's t with `df` degrees of freedom.

    The 0.975 quantile comes from the table up to 30 degrees of freedom; otherwise the
    Cornish-Fisher expansion of t about the normal quantile in powers of 1/df (Abramowitz &
    Stegun 26.7.5), within 0.5% for df >= 10 even in the far tail Bonferroni needs.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if not 0.5 <= p < 1:
        raise ValueError(f"need 0.5 <= p < 1, got {p}")
    if p == 0.975 and df <= len(_T975):
        return _T975[df - 1]
    z = NormalDist().inv_cdf(p)
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


@dataclass(frozen=True)
class Interval:
    mean: float
    half_width: float
    replications: int
    standard_error: float

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def confidence_interval(samples: Sequence[float]) -> Interval:
    """The 95% interval of the mean of independent, identically distributed replications."""
    n = len(samples)
    if n < 2:
        raise ValueError("a confidence interval needs at least 2 replications")
    error = statistics.stdev(samples) / math.sqrt(n)
    return Interval(statistics.fmean(samples), t_quantile(0.975, n - 1) * error, n, error)


def simultaneous(interval: Interval, family: int) -> Interval:
    """The interval widened so that `family` of them hold together with 95% confidence (Bonferroni)."""
    t = t_quantile(1 - 0.05 / (2 * family), interval.replications - 1)
    return Interval(interval.mean, t * interval.standard_error, interval.replications, interval.standard_error)
