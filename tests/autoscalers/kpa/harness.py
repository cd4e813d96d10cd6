"""Upstream's KPA decider test harness, restated for the decider and scaler tests.

knative/serving's decider tests (`pkg/autoscaler/scaling/autoscaler_test.go`, snapshot
98e5ef90aa70) build their spec with a harness of their own (`newTestAutoscaler`: panic threshold
2, rates 10, stable window 60 s, total = target / 0.75, reachable); the production defaults stay
in the product and the harness lives here (`harness_spec`). Where upstream uses `time.Now()`, the
tests use fixed simulated times (`T0`) with the same gaps between calls. No test code is copied.
"""

from __future__ import annotations

import dataclasses
import math

from hypothesis import strategies as st

from skenario.autoscalers.kpa.decider import DeciderSpec, KPADecider, ScaleResult
from skenario.core.time import HOUR, SECOND

# --- upstream test harness (pkg/autoscaler/scaling/autoscaler_test.go) -----------------------------

HARNESS_UTILIZATION = 0.75  # `targetUtilization` of the harness: total = target / 0.75
HARNESS_STABLE_WINDOW = 60 * SECOND
T0 = 10 * HOUR  # "time.Now()" of an upstream test; any instant works, the gaps matter


class FakeMetrics:
    """Upstream's fake `metricClient`: fixed stable and panic values, or no data."""

    def __init__(
        self,
        stable_concurrency: float = 0.0,
        panic_concurrency: float = 0.0,
        stable_rps: float = 0.0,
        panic_rps: float = 0.0,
    ) -> None:
        self.stable_concurrency = stable_concurrency
        self.panic_concurrency = panic_concurrency
        self.stable_rps = stable_rps
        self.panic_rps = panic_rps
        self.no_data = False

    def set_concurrency(self, stable: float, panic: float) -> None:
        self.stable_concurrency, self.panic_concurrency = stable, panic

    def stable_and_panic_concurrency(self, now: int) -> tuple[float, float] | None:
        return None if self.no_data else (self.stable_concurrency, self.panic_concurrency)

    def stable_and_panic_rps(self, now: int) -> tuple[float, float] | None:
        return None if self.no_data else (self.stable_rps, self.panic_rps)


def harness_spec(target: float, tbc: float, **changes: object) -> DeciderSpec:
    """`newTestAutoscalerWithScalingMetric`'s DeciderSpec."""
    spec = DeciderSpec(
        target_value=target,
        total_value=target / HARNESS_UTILIZATION,
        target_burst_capacity=tbc,
        panic_threshold=2.0,
        max_scale_up_rate=10.0,
        max_scale_down_rate=10.0,
        activator_capacity=150.0,
        stable_window=HARNESS_STABLE_WINDOW,
        reachable=True,
    )
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


def harness(target: float, tbc: float, metrics: FakeMetrics, **changes: object) -> KPADecider[FakeMetrics]:
    """A decider created (at T0) while one pod is ready, as `newTestAutoscaler` does."""
    return KPADecider(harness_spec(target, tbc, **changes), metrics, now=T0, ready_pods=1)


def expected_ebc(target: float, tbc: float, panic: float, pods: int) -> int:
    """`expectedEBC`: total capacity (target / 0.75 per pod) minus the TBC minus the panic value, floored."""
    return math.floor(target / HARNESS_UTILIZATION * pods - tbc - panic)


def sr(desired: int, ebc: int) -> ScaleResult:
    return ScaleResult(desired, ebc, True)


observation = st.tuples(
    st.integers(0, 10 * SECOND),  # time since the previous tick
    st.integers(0, 60),  # ready pods
    st.floats(0, 5000, allow_nan=False),  # stable average
    st.floats(0, 10000, allow_nan=False),  # panic average
)
