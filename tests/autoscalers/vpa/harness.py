"""What the VPA histogram and recommender tests share: the CPU bucket scheme, and CPU usage draws.

The formulas are those of `../shared/reference/autoscaler-algorithms.md` section 2, computed here
independently of `vpa.histogram`, so the tests compare the two.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st


def cpu_bucket_start(n: int) -> float:
    """Bucket n's start by the reference's formula: first * (ratio^n - 1) / (ratio - 1), in millicores."""
    return 0.0 if n == 0 else 10.0 * (1.05**n - 1) / 0.05


def cpu_bucket_of(v: float) -> int:
    """The bucket a value falls in, by the reference's formula floor(log_ratio(v (ratio-1) / first + 1))."""
    return 0 if v < 10.0 else math.floor(math.log(v * 0.05 / 10.0 + 1) / math.log(1.05))


# CPU usage in millicores, up to 200 cores.
usage = st.floats(min_value=0.0, max_value=200_000.0, allow_nan=False)
