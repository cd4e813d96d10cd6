"""Rich tables of a run's summary, its ignored movements, and stored runs."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

from rich.table import Table
from rich.text import Text

from skenario.core.environment import Environment
from skenario.core.time import SECOND, format_duration
from skenario.recording.summary import Summary
from skenario.results.readout import ms, summary_rows


def summary_table(summary: Summary, wall: float | None) -> Table:
    fluid = ", fluid" if summary.mode == "fluid" else ""
    table = Table(title=f"scenario {summary.scenario} (seed {summary.seed}{fluid})", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    rows = summary_rows(summary)
    rows += [
        ("movements completed", f"{summary.movements_completed:,}"),
        ("movements ignored", f"{summary.movements_ignored:,}"),
    ]
    if wall is not None:
        rows.append(("wall time", f"{wall:.3f} s"))
        rows.append(("speed-up (simulated / wall)", f"{summary.simulated_ns / SECOND / wall:,.0f}x"))
    for what, value in rows:
        table.add_row(what, value)
    return table


def workloads_table(summary: Summary) -> Table | None:
    """Each workload of a scenario of several, side by side (the scenario's own first); None with one."""
    if not summary.workloads:
        return None
    table = Table(title="workloads")
    for column in ("workload", "arrived", "completed", "failed", "p50", "p99", "replicas desired / active"):
        table.add_column(column, justify="left" if column == "workload" else "right")
    each = [(f"{summary.scenario} (spec.workload)", summary.as_dict()), *summary.workloads.items()]
    for name, figures in each:
        table.add_row(
            name,
            f"{figures['requests_arrived']:,}",
            f"{figures['requests_completed']:,}",
            f"{figures['requests_failed']:,}",
            ms(figures["latency_p50_ns"]),
            ms(figures["latency_p99_ns"]),
            f"{figures['replicas_desired']:,} / {figures['replicas_active']:,}",
        )
    return table


def class_table(summary: Summary) -> Table | None:
    """Per request class: counts and latency, highest priority first; None without classes."""
    if not summary.classes:
        return None
    table = Table(title="request classes")
    for column in ("class", "priority", "arrived", "completed", "failed", "p50", "p95", "p99", "mean"):
        table.add_column(column, justify="left" if column == "class" else "right")
    ordered = sorted(summary.classes.items(), key=lambda item: -item[1]["priority"])
    for name, c in ordered:
        table.add_row(
            name,
            str(c["priority"]),
            f"{c['arrived']:,}",
            f"{c['completed']:,}",
            f"{c['failed']:,}",
            ms(c["latency_p50_ns"]),
            ms(c["latency_p95_ns"]),
            ms(c["latency_p99_ns"]),
            ms(c["latency_mean_ns"]),
        )
    return table


def ignored_table(env: Environment) -> Table:
    """Ignored movements grouped by kind and reason, with one example route and the first time."""
    groups: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], tuple[str, int]] = {}
    for movement, reason in env.ignored:
        key = (movement.kind, str(reason))
        groups[key] += 1
        route = f"{movement.from_stock.name} -> {movement.to_stock.name}"
        example.setdefault(key, (route, movement.occurs_at))
    kept = len(env.ignored)
    title = "ignored movements"
    if kept < env.movements_ignored:
        title += f" (first {kept:,} of {env.movements_ignored:,})"
    table = Table(title=title)
    table.add_column("kind")
    table.add_column("reason", no_wrap=True)
    table.add_column("count", justify="right")
    table.add_column("first at", justify="right")
    table.add_column("example route", overflow="fold")
    for key, n in groups.most_common():
        route, at = example[key]
        table.add_row(*key, f"{n:,}", f"{at / SECOND:,.3f} s", route)
    if not groups:
        table.add_row("-", "none", "0", "", "")
    return table


def runs_rows(runs: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Stored runs as `runs -o csv` writes them: every column of `-o wide`, one row a run."""
    return [heading for heading, _, _ in _RUN_COLUMNS], [[show(run) for _, show, _ in _RUN_COLUMNS] for run in runs]


def _stored_duration(ns: Any) -> str:
    if isinstance(ns, float) and math.isfinite(ns):
        ns = round(ns)
    return format_duration(ns) if isinstance(ns, int) and not isinstance(ns, bool) else "-"


def _stored_wall(seconds: Any) -> str:
    usable = isinstance(seconds, int | float) and not isinstance(seconds, bool) and math.isfinite(seconds)
    return f"{seconds:.2f} s" if usable else "-"


def _stored_text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


# Each column of `runs`: its heading, how a stored run's field shows in it, and whether only `-o wide` has it.
_RUN_COLUMNS: tuple[tuple[str, Callable[[dict[str, Any]], str], bool], ...] = (
    ("run", lambda run: _stored_text(run["run"]), False),
    ("name", lambda run: _stored_text(run["name"]), True),
    ("tags", lambda run: ", ".join(run["tags"]), True),
    ("scenario", lambda run: _stored_text(run["scenario"]), False),
    ("file", lambda run: _stored_text(run["scenario_file"]), True),
    ("sweep", lambda run: _stored_text(run.get("sweep")), True),
    ("seed", lambda run: _stored_text(run["seed"]), False),
    ("phase", lambda run: _stored_text(run["phase"]), False),
    ("simulated", lambda run: _stored_duration(run["simulated_ns"]), False),
    ("wall", lambda run: _stored_wall(run["wall_s"]), False),
    ("digest", lambda run: _stored_text(run["digest"]) or "-", False),
    ("started", lambda run: _stored_text(run["started_at"]), False),
    ("finished", lambda run: _stored_text(run["finished_at"]), True),
    ("message", lambda run: _stored_text(run["message"]), False),
)


def runs_table(runs: list[dict[str, Any]], title: str, *, wide: bool) -> Table:
    """Stored runs (`RunStore.runs`), one a row, whatever their rows hold; `wide` adds name, tags,
    scenario file, the sweep that made it and finish time. Every cell is plain text: a name such as
    `[/]` is not markup."""
    columns = [(heading, show) for heading, show, only_wide in _RUN_COLUMNS if wide or not only_wide]
    table = Table(title=Text(title))
    for heading, _show in columns:
        table.add_column(heading, overflow="fold")
    for run in runs:
        table.add_row(*(Text(show(run)) for _heading, show in columns))
    return table
