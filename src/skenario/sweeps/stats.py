"""How sure a sweep's figures are: Student-t confidence intervals over the replications of a point.

Each point is run with the same N seeds, so a figure has N values per point, independent across
seeds. Their mean's interval is `mean ± t(N-1, (1+c)/2) · s/√N` with `s` the sample standard
deviation: the textbook interval for replications of a simulation (Law, *Simulation Modeling and
Analysis*, 9.4.1). Two points share their seeds (common random numbers), so their difference is
judged on the per-seed differences (`paired`), which cancels the noise the seeds have in common.

A value that is None or NaN (a failed run, a figure a run did not produce) is left out, and `n`
says how many remained; with one value there is a mean and no interval (low = high = NaN).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t  # type: ignore[import-untyped]  # scipy ships no stubs

from skenario.sweeps.space import SweepError

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    """A mean and its confidence interval over `n` values; NaN where `n` cannot say (n < 2: no interval)."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        """The ± of `mean ± half_width`."""
        return (self.high - self.low) / 2


def interval(values: Sequence[float | None], confidence: float = CONFIDENCE) -> Interval:
    """The Student-t interval of the values' mean, None and NaN left out."""
    return _t_interval(np.array([v for v in values if v is not None], dtype=float), confidence)


def paired(
    values: Sequence[float | None], baseline: Sequence[float | None], confidence: float = CONFIDENCE
) -> Interval:
    """The interval of the mean per-seed difference `values[i] - baseline[i]`: paired, since seed i
    drew the same traffic at both points. A seed missing at either point is left out."""
    if len(values) != len(baseline):
        raise ValueError(f"paired values need one per seed at both points: {len(values)} and {len(baseline)}")
    differences = [v - b for v, b in zip(values, baseline, strict=True) if v is not None and b is not None]
    return _t_interval(np.array(differences, dtype=float), confidence)


def _t_interval(values: np.ndarray, confidence: float) -> Interval:
    values = values[~np.isnan(values)]
    if not 0 < confidence < 1:
        raise SweepError(f"a confidence level is between 0 and 1, such as 0.95, not {confidence}", value=confidence)
    n = len(values)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = float(np.mean(values))
    if n == 1:
        return Interval(mean, math.nan, math.nan, 1)
    half = float(student_t.ppf((1 + confidence) / 2, n - 1)) * float(np.std(values, ddof=1)) / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)
