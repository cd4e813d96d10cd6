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

if TYPE_CHECKING:
    import pandas as pd

FIGURES: tuple[tuple[str, str], ...] = (
    ("p99_ms", "p99 ms"),
    ("error_rate", "error rate"),
    ("replica_hours", "replica-h"),
    ("cpu_hours", "CPU-h"),
    ("cost", "cost"),
    ("slo_compliance", "SLO met"),
)
"""Each figure's column and its heading, in the order the tables show them."""

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
    places = decimals(half)
    return f"{mean:,.{places}f} ± {half:,.{places}f}"


def signed(text: str) -> str:
    """A difference with its sign always shown: `+8.0`, `-20.6`, `0`."""
    return text if text.startswith(("-", "0 ")) or text == "0" else f"+{text}"


def _settings_columns(frame: pd.DataFrame) -> list[str]:
    known = {*FIXED, *(name for metric, _ in FIGURES for name in _family(metric))}
    return [column for column in frame.columns if column not in known and not column.startswith("trial")]


def _family(metric: str) -> tuple[str, ...]:
    return tuple(f"{metric}{suffix}" for suffix in ("", "_low", "_high", "_diff", "_diff_low", "_diff_high"))


def headings(paths: Sequence[str]) -> dict[str, str]:
    """Each settings path's heading: its last key, or the whole path where two last keys would clash."""
    last = {path: path.rpartition(".")[2].split("[")[0] or path for path in paths}
    counts: dict[str, int] = {}
    for short in last.values():
        counts[short] = counts.get(short, 0) + 1
    return {path: short if counts[short] == 1 else path for path, short in last.items()}


def _present(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """The figures some point has a value of (cost needs prices, SLO needs objectives)."""
    return [(m, h) for m, h in FIGURES if m in frame.columns and frame[m].notna().any()]


def points_table(frame: pd.DataFrame, title: str, baseline: int | None = None) -> list[Table]:
    """The sweep's points with each figure's mean ± 95% half-width; then, with a baseline, the paired differences."""
    paths = _settings_columns(frame)
    names = headings(paths)
    figures = _present(frame)
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
        cells += [with_interval(record[m], record[f"{m}_low"], record[f"{m}_high"]) for m, _ in figures]
        table.add_row(*cells)
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
            shown = signed(with_interval(mean, low, high))
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
