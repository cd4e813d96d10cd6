"""Arrival patterns: iterators of absolute arrival times in nanoseconds, generated lazily.

The traffic source pulls one time per arrival, so no pattern ever pre-schedules a whole run into
the heap (the Go original did, which made memory grow with the duration).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from skenario.core.random import Exponential, sampler
from skenario.core.time import SECOND


def constant_arrivals(rate_per_s: float, start: int, stop: int) -> Iterator[int]:
    """Evenly spaced arrivals at `rate_per_s`, the first one interval after `start`.

    Times are computed from the start, not accumulated, so rounding never drifts.
    """
    if rate_per_s <= 0:
        return
    interval = SECOND / rate_per_s
    k = 1
    while True:
        at = start + round(k * interval)
        if at >= stop:
            return
        yield at
        k += 1


def poisson_arrivals(rate_per_s: float, start: int, stop: int, rng: np.random.Generator) -> Iterator[int]:
    """A Poisson process: exponential gaps with mean 1/rate, drawn in numpy batches."""
    if rate_per_s <= 0:
        return
    gap = sampler(Exponential(SECOND / rate_per_s), rng)
    at = start
    while True:
        at += gap()
        if at >= stop:
            return
        yield at
