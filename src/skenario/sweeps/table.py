"""A sweep's results as tables: one row per run, and one per point with each figure's mean and interval.

```text
point  averageUtilization  runs  failed  p99_ms  p99_ms_low  p99_ms_high  ...  p99_ms_diff  p99_ms_diff_low ...
1      50                  5     0       182.0   171.3       192.7             -            -
2      70                  5     0       240.5   228.0       253.0             58.5         49.9
```

A point's figure is the mean over its seeds with the Student-t interval (`stats.interval`); against
a baseline point, `_diff` is the mean per-seed difference with its paired interval
(`stats.paired`), the sharper measure because both points drew the same traffic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from skenario.sweeps.runner import METRICS
from skenario.sweeps.space import SweepError
from skenario.sweeps.stats import CONFIDENCE, Interval, interval, paired

RUN_COLUMNS = ("point", "seed", *METRICS, "digest", "phase", "error", "wall_s", "run")
"""The per-run table's columns, after which come the settings' paths."""


def runs_frame(settings: Mapping[int, Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per run: RUN_COLUMNS, then each setting's value at the run's point (a column per path)."""
    paths = _paths(settings)
    frame = pd.DataFrame([{column: row.get(column) for column in RUN_COLUMNS} for row in rows], columns=RUN_COLUMNS)
    for path in paths:
        frame[path] = _column([settings[int(point)].get(path) for point in frame["point"]])
    for metric in METRICS:
        frame[metric] = pd.to_numeric(frame[metric], errors="coerce").astype(float)
    return frame


def points_frame(
    settings: Mapping[int, Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    baseline: int | None = None,
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """One row per point: `point`, its settings, `runs`, `failed`, and per figure its mean, `_low` and
    `_high`; with a baseline point, `_diff`, `_diff_low` and `_diff_high` too (the baseline's are 0)."""
    if baseline is not None and baseline not in settings:
        raise SweepError(f"--baseline {baseline}: the sweep's points are 1 to {len(settings)}", value=baseline)
    by_point: dict[int, list[Mapping[str, Any]]] = {point: [] for point in settings}
    for row in rows:
        by_point[int(row["point"])].append(row)
    reference = {row["seed"]: row for row in by_point[baseline]} if baseline is not None else {}
    records = []
    for point, values in settings.items():
        done = sorted(by_point[point], key=lambda row: row["seed"])
        record: dict[str, Any] = {"point": point, **values}
        record |= {"runs": len(done), "failed": sum(row.get("error") is not None for row in done)}
        for metric in METRICS:
            record |= _columns(metric, interval([row.get(metric) for row in done], confidence))
            if baseline is not None:
                seeds = [row["seed"] for row in done if row["seed"] in reference]
                mine = {row["seed"]: row.get(metric) for row in done}
                difference = paired([mine[s] for s in seeds], [reference[s].get(metric) for s in seeds], confidence)
                record |= _columns(f"{metric}_diff", difference)
        records.append(record)
    frame = pd.DataFrame(records)
    for path in _paths(settings):
        frame[path] = _column(list(frame[path]))
    return frame


def _columns(name: str, found: Interval) -> dict[str, float]:
    return {name: found.mean, f"{name}_low": found.low, f"{name}_high": found.high}


def _paths(settings: Mapping[int, Mapping[str, Any]]) -> list[str]:
    """Every path any point sets, in the order they first appear."""
    return list(dict.fromkeys(path for values in settings.values() for path in values))


def _column(values: list[Any]) -> list[Any]:
    """A settings column Parquet can hold: its values as they are if all are numbers (or all text), else as text."""
    present = [value for value in values if value is not None]
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in present)
    if numbers or all(isinstance(v, str) for v in present) or all(isinstance(v, bool) for v in present):
        return values
    return [None if value is None else str(value) for value in values]
