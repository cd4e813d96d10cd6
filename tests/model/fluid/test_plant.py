"""The fluid plant's latency distribution with an IO time that varies (`with_spread`)."""

from __future__ import annotations

import math

import pytest

from skenario.core.random import Exponential
from skenario.model.fluid.plant import QUANTILES, with_spread


def test_no_spread_leaves_the_quantiles_as_they_are() -> None:
    sojourn = [0.01 * (1 + q) ** 3 for q in QUANTILES]
    assert with_spread(sojourn, [0.0] * len(QUANTILES)) == pytest.approx(sojourn, abs=1e-15)


def test_a_constant_sojourn_plus_a_random_time_has_that_times_quantiles_shifted() -> None:
    """A sojourn of exactly 50 ms plus an exponential IO of mean 100 ms: the sum's p-quantile is 50 ms plus the
    exponential's, -0.1 ln(1 - p) s, at every band."""
    io = Exponential(0.1)
    spread = [io.quantile(p) - 0.1 for p in QUANTILES]
    summed = with_spread([0.05] * len(QUANTILES), spread)
    assert [s + 0.1 for s in summed] == pytest.approx([0.05 - 0.1 * math.log1p(-p) for p in QUANTILES], rel=1e-12)


def test_two_exponentials_sum_to_an_erlang() -> None:
    """Two independent exponentials of mean 1 s sum to an Erlang-2, whose median solves 1 - e^-x (1 + x) = 1/2
    (x = 1.678...) and whose p99 solves it at 0.99 (x = 6.638...): within the bands' resolution, 2%."""
    exponential = Exponential(1.0)
    quantiles = [exponential.quantile(p) for p in QUANTILES]
    summed = [s + 1.0 for s in with_spread(quantiles, [q - 1.0 for q in quantiles])]

    def erlang2(p: float) -> float:
        low, high = 0.0, 50.0
        for _ in range(200):  # bisection on the CDF
            middle = (low + high) / 2
            low, high = (middle, high) if 1 - math.exp(-middle) * (1 + middle) < p else (low, middle)
        return low

    for p in (0.5, 0.95, 0.99):
        index = min(range(len(QUANTILES)), key=lambda i: abs(QUANTILES[i] - p))
        assert summed[index] == pytest.approx(erlang2(QUANTILES[index]), rel=0.02)
