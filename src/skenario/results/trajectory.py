"""How closely a simulated replica count followed an observed one: the replica-trajectory error.

Both counts are step functions: a sample's value holds until the next sample (Prometheus's
samples of a gauge; the recorder's rows). Over a window [start, stop):

- MAE: the time-weighted mean of |simulated - observed|, exact for two step functions (every
  change point of either is a breakpoint), and the largest difference.
- Replica-seconds: the integral of each count; the error is (simulated - observed) / observed, signed.
- Scale events: on the grid of the observed samples, each sample whose count differs from the one
  before is one event (a cascade 3 -> 5 -> 8 is two), up or down. Each observed event is matched to
  a simulated one of the same direction within `tolerance`, the closest pairs first (greedy by
  |Δt|); the matched count and their mean |Δt| say whether the simulation scaled when the cluster did.
- Decision match: at each sync of a grid of `sync` (the HPA's 15 s by default) the decision is
  up, down or hold: where the count went by the next sync. The rate of syncs where both agree, and
  the rate over the syncs where at least one of them moved (holds dominate: a run of 600 syncs with
  20 changes agrees 93% of the time by holding), with the 3 x 3 confusion (observed by row).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from skenario.core.time import SECOND

Times = npt.NDArray[np.int64]
Values = npt.NDArray[np.float64]
DECISIONS = ("down", "hold", "up")


@dataclass(frozen=True)
class TrajectoryError:
    """The replica-trajectory error of one run against its observed counterpart."""

    start_ns: int
    stop_ns: int
    mae: float  # replicas, time-weighted
    max_abs: float
    replica_seconds_observed: float
    replica_seconds_simulated: float
    replica_seconds_error_pct: float | None  # signed; None when nothing was observed
    events_observed: int
    events_simulated: int
    events_matched: int
    timing_error_s: float | None  # mean |Δt| of matched events
    decisions: int
    decision_match: float | None
    decision_match_moving: float | None  # over syncs where at least one side moved
    confusion: tuple[tuple[int, int, int], ...]  # [observed][simulated], in DECISIONS order

    def to_dict(self) -> dict[str, object]:
        """JSON-safe: plain numbers, None for what could not be computed."""
        document = asdict(self)
        document["confusion"] = [list(row) for row in self.confusion]
        return document

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> TrajectoryError:
        """Read back what `to_dict` wrote (a stored replay)."""
        fields = dict(document)
        fields["confusion"] = tuple(tuple(row) for row in fields["confusion"])
        return cls(**fields)

    def lines(self) -> list[str]:
        """The error as a few lines of text."""
        pct = self.replica_seconds_error_pct
        timing = "" if self.timing_error_s is None else f", mean timing error {self.timing_error_s:.0f} s"
        match = self.decision_match
        moving = self.decision_match_moving
        return [
            f"replica MAE {self.mae:.2f} (largest difference {self.max_abs:.0f})",
            f"replica-seconds {self.replica_seconds_simulated:,.0f} simulated, {self.replica_seconds_observed:,.0f} "
            f"observed: {'n/a' if pct is None else f'{pct:+.1f}%'}",
            f"scale events {self.events_observed} observed, {self.events_simulated} simulated, "
            f"{self.events_matched} matched{timing}",
            f"decisions matched {'n/a' if match is None else f'{match:.1%}'} of {self.decisions} syncs, "
            f"{'n/a' if moving is None else f'{moving:.1%}'} of those where either moved",
        ]


def value_at(times: Times, values: Values, at: Times) -> Values:
    """A step function's value at each of `at` (the last sample at or before it; NaN before the first)."""
    index = np.searchsorted(times, at, side="right") - 1
    found = values[np.clip(index, 0, len(values) - 1)].astype(np.float64)
    found[index < 0] = np.nan
    return found


def mean_absolute_error(
    observed: tuple[Times, Values], simulated: tuple[Times, Values], start: int, stop: int
) -> tuple[float, float, float, float]:
    """(MAE, largest |difference|, observed integral, simulated integral) over [start, stop), integrals in
    replica-seconds; exact for step functions."""
    if stop <= start:
        raise ValueError(f"an empty window: [{start}, {stop})")
    inside = [t[(t > start) & (t < stop)] for t, _ in (observed, simulated)]
    breaks = np.unique(np.concatenate([[start], *inside, [stop]]).astype(np.int64))
    lefts, widths = breaks[:-1], np.diff(breaks).astype(np.float64)
    o = value_at(*observed, lefts)
    s = value_at(*simulated, lefts)
    if np.isnan(o).any() or np.isnan(s).any():
        raise ValueError("the window starts before one of the series")
    gap = np.abs(s - o)
    span = float(stop - start)
    return (
        float((gap * widths).sum() / span),
        float(gap.max()),
        float((o * widths).sum() / SECOND),
        float((s * widths).sum() / SECOND),
    )


def scale_events(grid: Times, counts: Values) -> list[tuple[int, int]]:
    """(time, direction +1 or -1) of each grid sample whose count differs from the sample before."""
    change = np.diff(counts)
    moved = np.flatnonzero(change != 0)
    return [(int(grid[k + 1]), 1 if change[k] > 0 else -1) for k in moved]


def match_events(observed: list[tuple[int, int]], simulated: list[tuple[int, int]], tolerance: int) -> list[int]:
    """|Δt| (ns) of each matched pair: same direction, within `tolerance`, closest pairs first."""
    pairs = sorted(
        (abs(t_o - t_s), i, j)
        for i, (t_o, d_o) in enumerate(observed)
        for j, (t_s, d_s) in enumerate(simulated)
        if d_o == d_s and abs(t_o - t_s) <= tolerance
    )
    used_o: set[int] = set()
    used_s: set[int] = set()
    matched = []
    for gap, i, j in pairs:
        if i not in used_o and j not in used_s:
            used_o.add(i)
            used_s.add(j)
            matched.append(gap)
    return matched


def decisions(counts: Values) -> npt.NDArray[np.int64]:
    """Each sync's decision from the count at it and at the next: 0 down, 1 hold, 2 up."""
    return (np.sign(np.diff(counts)) + 1).astype(np.int64)


def trajectory_error(
    observed: tuple[Times, Values],
    simulated: tuple[Times, Values],
    start: int,
    stop: int,
    *,
    tolerance: int = 120 * SECOND,
    sync: int = 15 * SECOND,
) -> TrajectoryError:
    """The replica-trajectory error of `simulated` against `observed` (each (times ns, counts)) over [start, stop)."""
    mae, largest, seconds_o, seconds_s = mean_absolute_error(observed, simulated, start, stop)
    obs_times = observed[0]
    grid = obs_times[(obs_times >= start) & (obs_times < stop)]
    events_o = scale_events(grid, value_at(*observed, grid))
    events_s = scale_events(grid, value_at(*simulated, grid))
    matched = match_events(events_o, events_s, tolerance)
    syncs = start + sync * np.arange(max(0, (stop - start - 1) // sync + 1), dtype=np.int64)
    d_o = decisions(value_at(*observed, syncs))
    d_s = decisions(value_at(*simulated, syncs))
    confusion = np.zeros((3, 3), dtype=np.int64)
    np.add.at(confusion, (d_o, d_s), 1)
    moving = ~((d_o == 1) & (d_s == 1))
    return TrajectoryError(
        start_ns=start,
        stop_ns=stop,
        mae=mae,
        max_abs=largest,
        replica_seconds_observed=seconds_o,
        replica_seconds_simulated=seconds_s,
        replica_seconds_error_pct=100 * (seconds_s - seconds_o) / seconds_o if seconds_o > 0 else None,
        events_observed=len(events_o),
        events_simulated=len(events_s),
        events_matched=len(matched),
        timing_error_s=float(np.mean(matched)) / SECOND if matched else None,
        decisions=len(d_o),
        decision_match=float(np.mean(d_o == d_s)) if len(d_o) else None,
        decision_match_moving=float(np.mean(d_o[moving] == d_s[moving])) if moving.any() else None,
        confusion=tuple((int(row[0]), int(row[1]), int(row[2])) for row in confusion),
    )


def series_error(
    observed: tuple[Times, Values], simulated: tuple[Times, Values], start: int, stop: int
) -> tuple[float | None, float | None]:
    """(MAE, RMSE) of a simulated series read at the observed samples in [start, stop) (NaN left out): CPU,
    lag or latency. A recorder row holds what happened in the interval ending at its time, so each observed
    sample is compared with the first row at or after it."""
    times, values = observed
    keep = (times >= start) & (times < stop) & np.isfinite(values)
    at = times[keep]
    sim_times, sim_values = simulated
    index = np.searchsorted(sim_times, at, side="left")
    inside = index < len(sim_times)
    found = sim_values[index[inside]].astype(np.float64)
    diff = found - values[keep][inside]
    diff = diff[np.isfinite(diff)]
    if not len(diff):
        return None, None
    return float(np.mean(np.abs(diff))), float(math.sqrt(np.mean(diff**2)))
