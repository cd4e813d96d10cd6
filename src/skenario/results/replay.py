"""A finished run held against what its real cluster recorded (`spec.observed`): the figures replay prints.

The simulated replica count is, at each recording row, the one the observed series counts (`COUNTS`):
by default `active`, the pods ready (kube-state-metrics' `kube_deployment_status_replicas_ready`, an
HPA's `status.currentReplicas`, a Flink job's registered TaskManagers); `pods`, every pod not
terminating, ready or not (`kube_deployment_status_replicas`); `desired`, what the autoscalers asked
for (`kube_horizontalpodautoscaler_status_desired_replicas`). The observed one is the series the
scenario names. The window is where both exist, after the scenario's `warmUp`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from skenario.core.time import SECOND
from skenario.results.rundata import RunData
from skenario.results.trajectory import Times, TrajectoryError, Values, series_error, trajectory_error
from skenario.scenario.wiring.observed import ObservedRun
from skenario.workloads.observed import Series

TRAJECTORY_FIGURES = (
    "replica_mae",
    "replica_seconds_error_pct",
    "scale_events_observed",
    "scale_events_simulated",
    "scale_events_matched",
    "decision_match",
    "decision_match_moving",
)
"""A replayed run's figures, in a sweep's or calibration's row."""

COUNTS: dict[str, tuple[str, ...]] = {
    "active": ("replicas_active",),
    "pods": ("replicas_pending", "replicas_launching", "replicas_active", "replicas_restarting"),
    "desired": ("replicas_desired",),
}
"""Which simulated replica count an observed one is held against: the recorder's columns that add up to it."""

# Each observed series beside the simulated column it is held against, and the factor into its unit.
_SECONDARY = {
    "cpu": ("cpu_request_utilisation", 1.0),
    "lag": ("consumer_lag", 1.0),
    "latency": ("latency_mean_ms", 1e-3),
}


@dataclass(frozen=True)
class Comparison:
    """A run against its observed counterpart: the replica trajectory's error and, where recorded, the
    MAE and RMSE of CPU, lag and latency (in the observed series' units)."""

    replicas: TrajectoryError
    secondary: dict[str, tuple[float | None, float | None]]
    count: str = "active"  # which simulated count (COUNTS) the replicas were held against

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "replicas": self.replicas.to_dict(),
            **{name: {"mae": mae, "rmse": rmse} for name, (mae, rmse) in self.secondary.items()},
        }


def simulated(run: RunData, column: str) -> tuple[Times, Values]:
    """A recorded column as (times ns, values), the rows in order."""
    series = run.series
    times = (series.index.to_numpy(dtype=np.float64) * SECOND).round().astype(np.int64)
    return times, series[column].to_numpy(dtype=np.float64, na_value=np.nan)


def compare(run: RunData, observed: ObservedRun, count: str = "active", sync: int = 15 * SECOND) -> Comparison:
    """The run's replica trajectory (the simulated `count`, one of COUNTS; decisions on a grid of `sync` ns, the
    autoscaler's period) and recorded series against the observed ones."""
    if count not in COUNTS:
        raise ValueError(f"unknown replica count {count!r}; one of {', '.join(COUNTS)}")
    times, _ = simulated(run, "replicas_active")
    replicas = times, sum((simulated(run, column)[1] for column in COUNTS[count]), np.zeros(len(times)))
    obs = _pair(observed.replicas)
    start, stop = window(observed, int(replicas[0][0]) if len(replicas[0]) else run.simulated_ns, run.simulated_ns)
    error = trajectory_error(obs, replicas, start, stop, tolerance=observed.tolerance, sync=sync)
    secondary = {}
    for name, (column, factor) in _SECONDARY.items():
        series: Series | None = getattr(observed, name)
        if series is None or column not in run.series:
            continue
        times, values = simulated(run, column)
        secondary[name] = series_error(_pair(series), (times, values * factor), start, stop)
    return Comparison(error, secondary, count)


def window(observed: ObservedRun, first_row: int, end: int) -> tuple[int, int]:
    """[start, stop) of the comparison: where the observed replicas (each sample held for the series' step) and
    a run recorded from `first_row` to `end` (ns) both exist, after the warm-up. Known before the run from its
    duration and recording interval, so a replay that could not compare is refused before anything is kept."""
    times = observed.replicas.times_ns
    start = max(int(times[0]), first_row, observed.warm_up)
    stop = min(int(times[-1]) + observed.replicas.interval_ns, end)
    if stop <= start:
        raise ValueError(
            f"the run ({end / SECOND:.0f} s) and the observed replicas (from {times[0] / SECOND:.0f} s to "
            f"{times[-1] / SECOND:.0f} s of simulated time) do not overlap after the warm-up "
            f"({observed.warm_up / SECOND:.0f} s)"
        )
    return start, stop


def trajectory_figures(run: RunData, observed: ObservedRun) -> dict[str, Any]:
    """TRAJECTORY_FIGURES of a run, for a sweep's row."""
    error = compare(run, observed).replicas
    return {
        "replica_mae": error.mae,
        "replica_seconds_error_pct": error.replica_seconds_error_pct,
        "scale_events_observed": error.events_observed,
        "scale_events_simulated": error.events_simulated,
        "scale_events_matched": error.events_matched,
        "decision_match": error.decision_match,
        "decision_match_moving": error.decision_match_moving,
    }


def _pair(series: Series) -> tuple[Times, Values]:
    return series.times_ns, series.values
