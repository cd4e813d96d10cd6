"""Rich tables of sweeps: a sweep's points with their intervals, a study's Pareto front, and the stored sweeps.

A figure reads `182 ± 11`: the mean over the point's seeds and the half-width of its 95% interval
(`mean ± t·s/√n`). A difference from the baseline reads `-12.3 ± 7.8` (the mean per-seed
difference and its paired interval's half-width), in bold when the interval leaves out 0: then
the two settings differ by more than the seeds' noise explains.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from skenario.sweeps.space import SweepError, parse_path

if TYPE_CHECKING:
    import pandas as pd

FIGURES: tuple[tuple[str, str], ...] = (
    ("p99_ms", "p99 ms"),
    ("error_rate", "error rate"),
    ("replica_hours", "replica-h"),
    ("cpu_core_hours", "CPU core-h"),
    ("node_hours", "node-h"),
    ("cost", "cost"),
    ("slo_met", "SLO"),
    ("slo_compliance", "in SLO"),
    ("at_max_replicas", "at max"),
    ("pods_pending", "pending"),
    ("cluster_full", "cluster full"),
    ("wait_mean_s", "wait s"),
    ("wait_p95_s", "p95 wait s"),
    ("unfinished", "unfinished"),
    ("preempted", "preempted"),
)
"""Each figure's column and its heading, in the order the tables show them."""

SHARES = frozenset({"slo_compliance", "at_max_replicas", "pods_pending", "cluster_full"})
"""Figures that are shares (of intervals, of the run's time): shown as percentages."""

VERDICT = "slo_met"
"""The figure that is a verdict per run (1 met, 0 missed): a point shows met, missed or how many seeds met."""

FIXED = ("point", "runs", "failed")


def number(value: Any) -> str:
    """A figure with 4 significant digits, thousands grouped; `-` for none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    magnitude = abs(float(value))
    if magnitude >= 10_000 or value == 0:
        return f"{value:,.0f}" if magnitude >= 10_000 else "0"
    return f"{value:.4g}"


def decimals(half_width: float) -> int:
    """The decimals that show a half-width to 2 significant digits: the mean is only as sure as that."""
    if half_width <= 0 or not math.isfinite(half_width):
        return 4
    return max(0, 1 - math.floor(math.log10(half_width)))


def with_interval(mean: Any, low: Any, high: Any) -> str:
    """`mean ± half-width`, both to the half-width's second significant digit; the mean alone (to 4 digits)
    when there is no interval (one seed)."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return number(mean)
    half = (high - low) / 2
    if half == 0:  # every seed gave the same value
        return f"{number(mean)} ± 0"
    # To the half-width's second significant digit, but no finer than the mean's fifth: a tiny
    # interval reads `4.6125 ± 0.0001`, not `4.612506 ± 0.000071`.
    magnitude = math.floor(math.log10(abs(mean))) if mean else 0
    places = min(decimals(half), max(0, 4 - magnitude))
    return f"{mean:,.{places}f} ± {half:,.{places}f}"


def percent(mean: Any, low: Any, high: Any) -> str:
    """A share as `62% ± 4%` (its 95% interval's half-width), `62%` without an interval; `-` for none."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    if low is None or high is None or math.isnan(low) or math.isnan(high) or high == low:
        return f"{mean:.0%}"  # one seed, or every seed the same
    half = (high - low) / 2
    places = max(0, decimals(half * 100) - 1)
    return f"{mean * 100:.{places}f}% ± {half * 100:.{places}f}%"


def verdict(mean: Any, runs: int | None) -> str:
    """A point's SLO verdict over its seeds: met (every run), missed (none), else `met 3/5` (or, not knowing
    how many runs, the share of them: `met 60%`)."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "-"
    if mean >= 1:
        return "met"
    if mean <= 0:
        return "missed"
    return f"met {mean:.0%}" if not runs else f"met {round(mean * runs)}/{runs}"


def figure_cell(metric: str, record: Mapping[str, Any]) -> str:
    """One figure of a point as the tables show it: a verdict, a percentage or a number, each with its interval."""
    mean, low, high = record[metric], record[f"{metric}_low"], record[f"{metric}_high"]
    if metric == VERDICT:
        runs = record.get("runs")
        return verdict(mean, None if runs is None else int(runs) - int(record.get("failed") or 0))
    if metric in SHARES:
        return percent(mean, low, high)
    return with_interval(mean, low, high)


def signed(text: str) -> str:
    """A difference with its sign always shown: `+8.0`, `-20.6`, `0`."""
    return text if text.startswith(("-", "0 ")) or text == "0" else f"+{text}"


def _settings_columns(frame: pd.DataFrame) -> list[str]:
    known = {*FIXED, *(name for metric, _ in FIGURES for name in _family(metric))}
    return [column for column in frame.columns if column not in known and not column.startswith("trial")]


def _family(metric: str) -> tuple[str, ...]:
    return tuple(f"{metric}{suffix}" for suffix in ("", "_low", "_high", "_diff", "_diff_low", "_diff_high"))


HADOOP_PREFIX = "yarn.scheduler.capacity."


def _last_key(path: str) -> str:
    """The path's last key (`["a.b"]` is one key), or the whole path when it ends with an index."""
    try:
        parts = parse_path(path)
    except SweepError:
        return path
    if not isinstance(parts[-1], str):
        return path
    return parts[-1].removeprefix(HADOOP_PREFIX)  # a Capacity Scheduler property: its queue path and name


def headings(paths: Sequence[str]) -> dict[str, str]:
    """Each settings path's heading: its last key, or the whole path where two last keys would clash."""
    last = {path: _last_key(path) for path in paths}
    counts: dict[str, int] = {}
    for short in last.values():
        counts[short] = counts.get(short, 0) + 1
    return {path: short if counts[short] == 1 else path for path, short in last.items()}


LIMITS = ("at_max_replicas", "pods_pending", "cluster_full")
"""What kept a setting from acting: shown only where some point was held back by it."""


def present(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """The figures some point has a value of (cost needs prices, SLO needs objectives, node-hours a
    cluster), and of the limits only those that held some point back."""
    shown = []
    for metric, heading in FIGURES:
        if metric not in frame.columns or not frame[metric].notna().any():
            continue
        if metric in LIMITS and not (frame[metric].fillna(0) > 0).any():
            continue
        shown.append((metric, heading))
    return shown


def unlimited(frame: pd.DataFrame) -> list[str]:
    """The limits the sweep could judge that held no point back at any time: said under the table."""
    return [
        metric
        for metric in LIMITS
        if metric in frame.columns and frame[metric].notna().any() and not (frame[metric].fillna(0) > 0).any()
    ]


def points_table(frame: pd.DataFrame, title: str, baseline: int | None = None) -> list[Table]:
    """The sweep's points with each figure's mean ± 95% half-width; then, with a baseline, the paired differences."""
    paths = _settings_columns(frame)
    names = headings(paths)
    figures = present(frame)
    table = Table(title=f"{title} (mean ± 95% interval)")
    table.add_column("point", justify="right")
    for path in paths:
        table.add_column(names[path], justify="right")
    table.add_column("runs", justify="right")
    for _, heading in figures:
        table.add_column(heading, justify="right")
    for record in frame.to_dict("records"):
        runs = f"{record['runs']}" + (f" ({record['failed']} failed)" if record["failed"] else "")
        cells = [number(record["point"]), *(number(record[p]) for p in paths), runs]
        cells += [figure_cell(m, record) for m, _ in figures]
        table.add_row(*cells)
    quiet = unlimited(frame)
    if quiet:
        said = {"at_max_replicas": "at maxReplicas", "pods_pending": "pods Pending", "cluster_full": "cluster full"}
        table.caption = "no point was ever " + ", ".join(said[m] for m in quiet)
    tables = [table]
    if baseline is not None:
        tables.append(_differences(frame, paths, names, figures, baseline))
    return tables


def _differences(
    frame: pd.DataFrame, paths: list[str], names: Mapping[str, str], figures: list[tuple[str, str]], baseline: int
) -> Table:
    table = Table(title=f"difference from point {baseline}, paired by seed (mean ± 95% interval; bold: not 0)")
    table.add_column("point", justify="right")
    for path in paths:
        table.add_column(names[path], justify="right")
    for _, heading in figures:
        table.add_column(f"Δ {heading}", justify="right")
    for record in frame.to_dict("records"):
        cells: list[str | Text] = [number(record["point"]), *(number(record[p]) for p in paths)]
        for metric, _ in figures:
            mean, low, high = record[f"{metric}_diff"], record[f"{metric}_diff_low"], record[f"{metric}_diff_high"]
            if record["point"] == baseline or mean is None or math.isnan(mean):
                cells.append("-")
                continue
            shown = signed(
                percent(mean, low, high) if metric in SHARES or metric == VERDICT else with_interval(mean, low, high)
            )
            cells.append(Text(shown, style="bold" if low > 0 or high < 0 else ""))
        table.add_row(*cells)
    return table


def sweeps_table(found: list[dict[str, Any]], title: str) -> Table:
    table = Table(title=title)
    for heading in ("sweep", "kind", "name", "scenario", "points", "runs", "phase", "started"):
        table.add_column(heading, justify="right" if heading in ("sweep", "points", "runs") else "left")
    for record in found:
        runs = f"{record['runs']}" + (f" ({record['failed']} failed)" if record["failed"] else "")
        table.add_row(
            str(record["sweep"]),
            record["kind"],
            record["name"] or "",
            record["scenario"],
            str(record["points"]),
            runs,
            record["phase"],
            record["started_at"],
        )
    return table
