"""One run as a single self-contained HTML page: its summary and interactive charts that work offline.

plotly.js is inlined rather than loaded from a CDN, so the page can be archived as a CI artefact,
mailed or opened on a machine with no network, and show the same thing in a year. Every chart
shares the time axis and marks the scenario events, so a cause and its effects line up.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

from skenario.core.time import MILLISECOND, SECOND
from skenario.results import analysis
from skenario.results.files import atomic_path
from skenario.results.rundata import RunData, stated_objectives

CHART_IDS = ("chart-replicas", "chart-requests", "chart-latency", "chart-cpu", "chart-decisions")
# Fields a decision without `desired` (a VPA's, a CPU plugin's) is drawn by, in CPU millicores.
CPU_FIELDS = ("target", "cpu_request", "template_request")

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1300px; color: #222; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; font-weight: 600; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
.chart { height: 420px; margin-bottom: 1.5rem; }
pre { background: #f7f7f7; padding: 1rem; overflow-x: auto; }
"""


def _text(value: Any) -> str:
    """A value as plain text for a table cell or a hover label (escape it afterwards)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {_text(v)}" for k, v in value.items()) or "—"
    return str(value)


def _summary_text(key: str, value: Any) -> str:
    """Nanosecond fields also in ms or s: a reader should not count digits."""
    if key.endswith("_ns") and isinstance(value, int | float) and not isinstance(value, bool):
        unit, scale = ("ms", MILLISECOND) if key.startswith("latency") else ("s", SECOND)
        return f"{_text(value)} ({value / scale:.6g} {unit})"
    return _text(value)


def _label(text: str) -> str:
    """Text for plotly, which reads <b>, <br> and a few entities in labels (not &quot;): shown as written."""
    return html.escape(text, quote=False)


def _table(rows: Iterable[tuple[str, str]], css: str) -> str:
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="{css}">{body}</table>'


def _events_table(events: pd.DataFrame) -> str:
    if events.empty:
        return "<p>No scenario events.</p>"
    head = "<tr><th>time (s)</th><th>id</th><th>operation</th><th>target</th><th>message</th></tr>"
    rows = "".join(
        f'<tr><td class="number">{t:.6g}</td>'
        + "".join(f"<td>{html.escape(_text(row[c]))}</td>" for c in ("id", "operation", "target", "message"))
        + "</tr>"
        for t, row in events.iterrows()
    )
    return f'<table class="events">{head}{rows}</table>'


def _values(column: pd.Series) -> list[float | None]:
    """Plotly wants None, not NaN, for a gap."""
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in column.tolist()]


def _figure(run: RunData, title: str, y_title: str, events: pd.DataFrame) -> go.Figure:
    figure = go.Figure()
    figure.update_layout(
        title={"text": title},
        xaxis={"title": {"text": "time (s)"}, "range": [0, run.simulated_ns / SECOND]},
        yaxis={"title": {"text": y_title}, "rangemode": "tozero"},
        template="plotly_white",
        hovermode="closest",
        margin={"l": 70, "r": 30, "t": 60, "b": 50},
        legend={"orientation": "h", "y": -0.2},
    )
    for time_s, event_id in zip(events.index, events["id"], strict=True):
        figure.add_vline(
            x=time_s,
            line={"dash": "dot", "color": "#777", "width": 1},
            annotation={"text": _label(str(event_id)), "textangle": -90, "font": {"size": 10, "color": "#555"}},
            annotation_position="top left",
        )
    return figure


def _line(frame: pd.DataFrame, column: str, name: str, **kwargs: Any) -> go.Scatter:
    return go.Scatter(x=frame.index.tolist(), y=_values(frame[column]), name=name, mode="lines", **kwargs)


def _replicas_chart(run: RunData, events: pd.DataFrame) -> go.Figure:
    figure = _figure(run, "Replicas", "replicas", events)
    frame = analysis.replicas(run)
    figure.add_trace(_line(frame, "desired", "desired", line={"shape": "hv", "color": "black"}))
    for column, colour in (("launching", "#ff7f0e"), ("active", "#2ca02c"), ("terminating", "#9467bd")):
        figure.add_trace(_line(frame, column, column, line={"color": colour}))
    if frame["restarting"].any():  # containers killed and waiting to start again (memory modelled)
        figure.add_trace(_line(frame, "restarting", "restarting", line={"color": "#d62728"}))
    return figure


def _requests_chart(run: RunData, events: pd.DataFrame) -> go.Figure:
    figure = _figure(run, "Requests", "requests / s", events)
    frame = analysis.request_outcomes(run)
    for column, colour in (("arrived", "#1f77b4"), ("completed", "#2ca02c"), ("failed", "#d62728")):
        figure.add_trace(_line(frame, f"{column}_per_s", column, line={"color": colour}))
    for reason in analysis.failure_reasons(run):
        name = _label(f"failed: {reason}")
        figure.add_trace(_line(frame, f"failed_{reason}_per_s", name, visible="legendonly", line={"dash": "dot"}))
    return figure


def _latency_chart(run: RunData, events: pd.DataFrame, objectives: Mapping[str, Any] | None) -> go.Figure:
    figure = _figure(run, "Latency of the requests completed in each interval", "ms", events)
    frame = analysis.latency(run)
    for column, colour in (("p50_ms", "#2ca02c"), ("p95_ms", "#ff7f0e"), ("p99_ms", "#d62728")):
        figure.add_trace(_line(frame, column, column.removesuffix("_ms"), line={"color": colour}))
    figure.add_trace(_line(frame, "mean_ms", "mean", visible="legendonly", line={"dash": "dash"}))
    if objectives is not None:
        figure.add_hline(
            y=objectives["latency_ms"],
            line={"dash": "dash", "color": "#d62728", "width": 1},
            annotation={"text": f"p{objectives['percentile']} objective", "font": {"size": 10}},
            annotation_position="top right",
        )
    return figure


def _cpu_chart(run: RunData, events: pd.DataFrame) -> go.Figure:
    """Overall utilisation, and every replica's in one trace (gaps between replicas) so thousands stay cheap."""
    figure = _figure(run, "CPU utilisation (busy over held core-time)", "utilisation", events)
    figure.update_yaxes(tickformat=".0%")
    wide = analysis.cpu_per_replica(run)
    xs: list[float | None] = []
    ys: list[float | None] = []
    ids: list[Any] = []
    for replica in wide.columns:
        column = wide[replica].dropna()
        xs += [*column.index.tolist(), None]
        ys += [*column.tolist(), None]
        ids += [replica] * len(column) + [None]
    figure.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            customdata=ids,
            name="per replica",
            mode="lines+markers",
            marker={"size": 3},
            line={"width": 1, "color": "rgba(120, 120, 200, 0.45)"},
            hovertemplate="replica %{customdata}<br>%{x} s: %{y:.1%}<extra></extra>",
        )
    )
    figure.add_trace(_line(analysis.cpu(run), "utilisation", "overall", line={"width": 3, "color": "#6a3d9a"}))
    return figure


def _hover(time_s: float, autoscaler: str, row: pd.Series) -> str:
    fields = [f"{_label(autoscaler)} at {time_s:.6g} s"]
    for key, value in row.items():
        if key != "autoscaler" and not (value is None or (isinstance(value, float) and math.isnan(value))):
            fields.append(f"{_label(str(key))}: {_label(_text(value))}")
    return "<br>".join(fields)


def _decisions_chart(run: RunData, events: pd.DataFrame) -> go.Figure:
    """What each autoscaler asked for, as markers whose hover shows the inputs it decided from."""
    figure = _figure(run, "Autoscaler decisions", "desired replicas", events)
    replicas = analysis.replicas(run)
    figure.add_trace(_line(replicas, "desired", "cluster desired", line={"shape": "hv", "color": "#bbb"}))
    frame = analysis.decisions(run)
    cpu_axis = False
    for autoscaler in pd.unique(frame["autoscaler"]) if not frame.empty else []:
        rows = frame[frame["autoscaler"] == autoscaler].dropna(axis=1, how="all")
        column = "desired" if "desired" in rows.columns else next((c for c in CPU_FIELDS if c in rows.columns), "")
        if not column:
            continue  # nothing to draw it by; its decisions are still in analysis.decisions
        axis = "y" if column == "desired" else "y2"
        cpu_axis |= axis == "y2"
        hover = [_hover(t, str(autoscaler), row) for t, row in rows.iterrows()]
        name = _label(str(autoscaler) if axis == "y" else f"{autoscaler} ({column}, m)")
        figure.add_trace(
            go.Scatter(
                x=rows.index.tolist(),
                y=_values(rows[column]),
                name=name,
                mode="markers",
                yaxis=axis,
                marker={"size": 8, "symbol": "circle" if axis == "y" else "diamond"},
                hovertext=hover,
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
    if cpu_axis:
        axis_layout = {"title": {"text": "CPU (millicores)"}, "side": "right", "rangemode": "tozero", "showgrid": False}
        figure.update_layout(yaxis2={**axis_layout, "overlaying": "y"})
        cpu = analysis.cpu(run)
        line = {"shape": "hv", "color": "#9ecae1", "dash": "dash"}
        figure.add_trace(_line(cpu, "request_millicores", "template CPU request (m)", yaxis="y2", line=line))
    return figure


def _objectives_html(run: RunData, objectives: Mapping[str, Any] | None) -> str:
    if objectives is None:
        return "<p>No objectives: the scenario states no <code>spec.slo</code>.</p>"
    result = analysis.slo_summary(run, **objectives)
    verdict = "met" if result["met"] else "missed"
    rows = [("verdict", verdict), *((key, _text(value)) for key, value in result.items())]
    return _table(rows, f"objectives {verdict}")


def _chart_html(figure: go.Figure, div_id: str) -> str:
    config = {"displaylogo": False, "responsive": True}
    div = figure.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=config)
    return f'<div class="chart">{div}</div>'


def render_report(run: RunData, objectives: Mapping[str, Any] | None = None) -> str:
    """The page's HTML (write_report writes it)."""
    objectives = stated_objectives(run) if objectives is None else objectives
    events = analysis.events(run)
    charts = (
        _replicas_chart(run, events),
        _requests_chart(run, events),
        _latency_chart(run, events, objectives),
        _cpu_chart(run, events),
        _decisions_chart(run, events),
    )
    facts = [
        ("phase", _text(run.phase)),
        ("message", _text(run.message)),
        ("seed", _text(run.seed)),
        ("digest", _text(run.digest)),
        ("run id", _text(run.id)),
        ("simulated", f"{run.simulated_ns / SECOND:.6g} s"),
    ]
    costs = [(key, _text(value)) for key, value in analysis.cost(run).items() if value is not None]
    summary = [(str(key), _summary_text(str(key), value)) for key, value in run.summary.items()]
    name = html.escape(run.name)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>skenario: {name}</title>",
        f"<style>{STYLE}</style>",
        "<script>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>',
        "</head><body>",
        f"<h1>{name}</h1>",
        _table(facts, "run"),
        "<h2>Summary</h2>",
        _table(summary, "summary"),
        "<h2>Objectives</h2>",
        _objectives_html(run, objectives),
        "<h2>Cost</h2>",
        _table(costs, "cost"),
        "<h2>Charts</h2>",
        *(_chart_html(figure, div_id) for figure, div_id in zip(charts, CHART_IDS, strict=True)),
        "<h2>Scenario events</h2>",
        _events_table(events),
        "<h2>Scenario</h2>",
        f"<details><summary>YAML</summary><pre>{html.escape(run.scenario)}</pre></details>",
        "</body></html>",
    ]
    return "\n".join(parts)


def write_report(run: RunData, path: Path, *, objectives: Mapping[str, Any] | None = None) -> None:
    """Write `run` as one self-contained HTML page to `path`, atomically.

    `objectives` (latency_ms, percentile, error_rate: `analysis.slo_summary`'s arguments) judge the
    run; without them, the scenario's own `spec.slo` does, if it has one.
    """
    page = render_report(run, objectives)
    with atomic_path(path) as temporary:
        temporary.write_text(page, encoding="utf-8")
