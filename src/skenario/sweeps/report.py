"""A study's Pareto plot, as a PNG and in a self-contained HTML page with its trials.

```text
 objective 2 │ x        x                  x  infeasible (a constraint's interval crosses its bound)
             │    •  ●                     •  feasible
             │  •     ●──┐                 ●  the Pareto front: no feasible trial beats it on both
             │           ●─────┐
             │                 ●      ★    ★  best.yaml: the front's best by the first objective
             └──────────────────────── objective 1
```

With one objective the plot shows it by trial, the best starred. Each point's bars span its 95%
interval over the seeds: two settings whose bars overlap are not told apart by these runs.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go  # type: ignore[import-untyped]
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

from skenario.results.files import atomic_path
from skenario.results.report import STYLE
from skenario.sweeps.study import Objective

LABELS = {
    "p99_ms": "p99 latency (ms)",
    "error_rate": "error rate",
    "replica_hours": "replica-hours",
    "cpu_core_hours": "CPU core-hours (request or use, the larger)",
    "node_hours": "node-hours",
    "cost": "cost",
    "slo_met": "share of seeds meeting the SLO",
    "slo_compliance": "share of intervals meeting the SLO",
    "at_max_replicas": "share of time at maxReplicas",
    "pods_pending": "share of time with pods Pending",
    "cluster_full": "share of time with the cluster full",
}


KINDS = ((True, "feasible", "#1f77b4", "o"), (False, "infeasible", "0.6", "x"))
"""How trials are drawn by whether they kept every constraint: (feasible, label, colour, marker)."""


def axis_label(objective: Objective) -> str:
    better = "lower" if objective.direction == "minimize" else "higher"
    return f"{LABELS.get(objective.metric, objective.metric)} ({better} is better)"


def _errors(frame: pd.DataFrame, metric: str) -> list[list[float]]:
    """Matplotlib's asymmetric error bars: distance to the interval's low and high ends (0 without one)."""
    mean, low, high = frame[metric], frame[f"{metric}_low"], frame[f"{metric}_high"]
    return [(mean - low).fillna(0).clip(lower=0).tolist(), (high - mean).fillna(0).clip(lower=0).tolist()]


def write_pareto_png(trials: pd.DataFrame, front: pd.DataFrame, objectives: Sequence[Objective], path: Path) -> None:
    """The study's trials and front as a PNG (matplotlib's Agg canvas: no display, no global state)."""
    figure = Figure(figsize=(9, 6), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    if trials.empty:
        ax.text(0.5, 0.5, "no finished trial", ha="center", va="center", transform=ax.transAxes)
    elif len(objectives) == 1:
        _one_objective(ax, trials, front, objectives[0])
    else:
        _two_objectives(ax, trials, front, objectives[0], objectives[1])
    ax.grid(True, color="0.9")
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png")


def _one_objective(ax: Axes, trials: pd.DataFrame, front: pd.DataFrame, objective: Objective) -> None:
    metric = objective.metric
    for feasible, label, colour, marker in KINDS:
        part = trials[trials["feasible"] == feasible]
        if not part.empty:
            ax.errorbar(
                part["trial"],
                part[metric],
                yerr=_errors(part, metric),
                linestyle="none",
                label=label,
                capsize=2,
                color=colour,
                marker=marker,
            )
    if not front.empty:
        best = front.iloc[0]
        ax.plot(
            [best["trial"]], [best[metric]], marker="*", markersize=18, color="#d62728", linestyle="none", label="best"
        )
    ax.set_xlabel("trial")
    ax.set_ylabel(axis_label(objective))
    ax.set_title("Trials of the study (bars: 95% interval over the seeds)")
    ax.legend()


def _two_objectives(ax: Axes, trials: pd.DataFrame, front: pd.DataFrame, first: Objective, second: Objective) -> None:
    x, y = first.metric, second.metric
    for feasible, label, colour, marker in KINDS:
        part = trials[trials["feasible"] == feasible]
        if not part.empty:
            ax.errorbar(
                part[x],
                part[y],
                xerr=_errors(part, x),
                yerr=_errors(part, y),
                linestyle="none",
                alpha=0.6,
                label=label,
                capsize=2,
                color=colour,
                marker=marker,
            )
    if not front.empty:
        ordered = front.sort_values(x, ascending=first.direction == "minimize")
        ax.plot(ordered[x], ordered[y], marker="o", color="#d62728", drawstyle="steps-post", label="Pareto front")
        best = front.iloc[0]
        ax.plot([best[x]], [best[y]], marker="*", markersize=18, color="#d62728", linestyle="none", label="best")
    ax.set_xlabel(axis_label(first))
    ax.set_ylabel(axis_label(second))
    ax.set_title("Pareto front of the study (bars: 95% interval over the seeds)")
    ax.legend()


def _plotly_values(column: pd.Series) -> list[Any]:
    return [None if isinstance(v, float) and math.isnan(v) else v for v in column.tolist()]


def pareto_figure(
    trials: pd.DataFrame, front: pd.DataFrame, objectives: Sequence[Objective], paths: Sequence[str]
) -> go.Figure:
    """The same plot for the HTML page, each point's settings in its hover label."""
    figure = go.Figure()
    figure.update_layout(template="plotly_white", title={"text": "Pareto front"}, hovermode="closest")
    one = len(objectives) == 1
    x = "trial" if one else objectives[0].metric
    y = objectives[0].metric if one else objectives[1].metric
    for name, part, marker in (
        ("feasible", trials[trials["feasible"]] if not trials.empty else trials, {"color": "#1f77b4"}),
        ("infeasible", trials[~trials["feasible"]] if not trials.empty else trials, {"color": "#999", "symbol": "x"}),
        ("Pareto front", front, {"color": "#d62728", "size": 11}),
    ):
        if part.empty:
            continue
        hover = [
            "<br>".join(html.escape(f"{p}: {record[p]}", quote=False) for p in ["trial", *paths])
            for record in part.to_dict("records")
        ]
        figure.add_trace(
            go.Scatter(
                x=_plotly_values(part[x]),
                y=_plotly_values(part[y]),
                mode="markers",
                name=name,
                marker=marker,
                text=hover,
                hoverinfo="text+x+y",
            )
        )
    figure.update_xaxes(title={"text": "trial" if one else axis_label(objectives[0])})
    figure.update_yaxes(title={"text": axis_label(objectives[0] if one else objectives[1])})
    return figure


def _frame_html(frame: pd.DataFrame, columns: Sequence[str]) -> str:
    if frame.empty:
        return "<p>None.</p>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(record.get(c)))}</td>" for c in columns) + "</tr>"
        for record in frame.to_dict("records")
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def write_study_html(
    path: Path,
    *,
    title: str,
    trials: pd.DataFrame,
    front: pd.DataFrame,
    objectives: Sequence[Objective],
    constraints: Sequence[str],
    paths: Sequence[str],
    best_text: str | None,
) -> None:
    """One self-contained page: the Pareto plot (plotly.js inlined), the front, every trial and best.yaml."""
    figures = [o.metric for o in objectives]
    columns = ["trial", *paths, *figures, *(f"{m}_{end}" for m in figures for end in ("low", "high")), "feasible"]
    shown = [c for c in columns if trials.empty or c in trials.columns]
    chart = pareto_figure(trials, front, objectives, paths).to_html(
        full_html=False, include_plotlyjs=False, div_id="chart-pareto", config={"displaylogo": False}
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>skenario: {html.escape(title)}</title>",
        f"<style>{STYLE}</style>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>',
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Objectives: {html.escape(', '.join(str(o) for o in objectives))}. "
        f"Constraints, judged on each 95% interval's far end: {html.escape(', '.join(constraints) or 'none')}.</p>",
        f'<div class="chart">{chart}</div>',
        "<h2>Pareto front</h2>",
        _frame_html(front, shown),
        "<h2>Every trial</h2>",
        _frame_html(trials, [*shown, "error"] if not trials.empty and "error" in trials.columns else shown),
        "<h2>best.yaml</h2>",
        f"<pre>{html.escape(best_text)}</pre>" if best_text else "<p>No feasible trial.</p>",
        "</body></html>",
    ]
    with atomic_path(path) as temporary:
        temporary.write_text("\n".join(parts), encoding="utf-8")
