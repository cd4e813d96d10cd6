"""One run as a single self-contained HTML page: what happened first, in charts, then the figures in tables.

The page reads top down as an operator asks: did the run meet its objectives, what did it cost,
and what did the autoscalers and the cluster do. Charts come first; every one but the latency CDF
shares a time axis in hh:mm from the run's start and marks the scenario events, so a cause and its
effects line up:

    replicas        desired, Pending, launching, active, terminating, and the autoscalers' max
    requests        arrived, completed and failed per second, and failed by each cause that occurred
    latency         p50 / p95 / p99 per interval on a log scale, against the objective
    latency CDF     the share of completed requests within x ms (x on a log scale), exact from
                    the run's latency histogram; for a run stored before it was kept, the bounds
                    each interval's percentiles give
    CPU             used over request (what the HPA reads) and over the nodes' allocatable, and
                    each HPA's CPU utilisation target
    HPA <name>      each metric the HPA read against its target       (one chart per HPA)
    KPA <name>      observed concurrency against the pods' capacity, panic shaded, and the
                    excess burst capacity on its own axis              (one chart per KPA)
    VPA <name>      CPU target within lowerBound and upperBound against the template's
                    request; memory likewise when recorded             (per VPA)
    queues          requests buffered for a pod, held by the pods, the most one pod held,
                    a stream's lag                                     (when anything waited)
    stream          a stream's consumer lag                            (with spec.stream)
    cluster         nodes and pods waiting for one                     (with spec.cluster)
    decisions       every autoscaler decision, its inputs on hover

The tables below use the labels and units `skenario run` and `show` print (`results.readout`).
plotly.js is inlined rather than loaded from a CDN, so the page can be archived, mailed or opened
offline and show the same thing in a year. Each trace is thinned to at most `MAX_POINTS` points
(bucket means; maxima for latency and depths, minima where a dip matters), so a day of
10-second intervals stays a few megabytes.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go  # type: ignore[import-untyped]
from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

from skenario.core.time import DAY, SECOND, format_clock, format_duration
from skenario.recording.summary import Summary
from skenario.results import analysis
from skenario.results.files import atomic_path
from skenario.results.readout import batch_rows, cost_rows, limit_rows, node_cpu_rows, slo_rows, summary_rows, verdict
from skenario.results.rundata import RunData, stated_objectives

CHART_IDS = (
    "chart-replicas",
    "chart-requests",
    "chart-latency",
    "chart-latency-cdf",
    "chart-cpu",
    "chart-decisions",
)
"""The charts every report has; HPA, KPA, VPA, queue, stream and cluster charts come as the run has them."""
UNTIMED = ("chart-latency-cdf",)
"""The charts whose x axis is not the run's time (so they mark no events)."""
MAX_POINTS = 1500
"""The most points a trace keeps: beyond a screen's width, more only makes the page heavier."""
EPOCH = np.datetime64("1970-01-01T00:00:00", "ms")  # the run's start on plotly's date axis
# Fields a decision without `desired` (a VPA's, a CPU plugin's) is drawn by, in CPU millicores.
CPU_FIELDS = ("target", "cpu_request", "template_request")

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1300px; color: #222; padding: 0 1rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; font-weight: 600; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
.chart { height: 400px; margin-bottom: 1rem; }
.verdict { font-size: 1.2rem; padding: 0.4rem 0.8rem; display: inline-block; border-radius: 4px; }
.met { background: #e3f4e3; } .missed { background: #fbe3e3; } .unknown { background: #f4efd8; }
.tables { display: flex; flex-wrap: wrap; gap: 0 2.5rem; }
pre { background: #f7f7f7; padding: 1rem; overflow-x: auto; }
"""


def _label(text: str) -> str:
    """Text for plotly, which reads <b>, <br> and a few entities in labels (not &quot;): shown as written."""
    return html.escape(text, quote=False)


def _table(rows: Iterable[tuple[str, str]], css: str) -> str:
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f'<table class="{css}">{body}</table>'


def _clock(seconds: float) -> str:
    return format_clock(round(seconds * SECOND))


def _times(seconds: Sequence[float] | np.ndarray | pd.Index) -> np.ndarray:
    """Seconds from the run's start as instants on plotly's date axis (read as hh:mm)."""
    return EPOCH + (np.asarray(seconds, dtype=float) * 1000).round().astype("timedelta64[ms]")


def _values(column: pd.Series | np.ndarray) -> list[float | None]:
    """Plotly wants None, not NaN, for a gap; four significant figures are plenty on a chart."""
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(f"{v:.4g}") for v in column]


def thin(frame: pd.DataFrame, peaks: Iterable[str] = (), troughs: Iterable[str] = ()) -> pd.DataFrame:
    """At most MAX_POINTS rows: consecutive rows bucketed, each bucket its mean (its maximum for the
    `peaks` columns, its minimum for the `troughs`, so a spike or a dip is never averaged away),
    indexed by its last row's time."""
    if len(frame) <= MAX_POINTS:
        return frame
    size = math.ceil(len(frame) / MAX_POINTS)
    buckets = np.arange(len(frame)) // size
    numeric = frame.apply(pd.to_numeric, errors="coerce")
    grouped = numeric.groupby(buckets)
    thinned = grouped.mean()
    for column in peaks:
        if column in thinned:
            thinned[column] = grouped[column].max()
    for column in troughs:
        if column in thinned:
            thinned[column] = grouped[column].min()
    last = np.minimum((np.arange(len(thinned)) + 1) * size, len(frame)) - 1
    thinned.index = pd.Index(frame.index.to_numpy()[last], name=frame.index.name)
    return thinned


_OBSERVED_STEP = {"shape": "hv", "color": "black", "dash": "dot", "width": 2}
"""How an observed replica count is drawn: a step, as the counts are held between samples."""
_OBSERVED_LINE = {"color": "black", "dash": "dot"}
"""How another observed series (CPU, lag, latency) is drawn over its simulated counterpart."""


class _Charts:
    """The report's figures, each on the run's time axis with its events marked."""

    def __init__(self, run: RunData, events: pd.DataFrame) -> None:
        self.run = run
        self.events = events
        self.long = run.simulated_ns > DAY

    @cached_property
    def all_decisions(self) -> pd.DataFrame:
        """`analysis.decisions` once per page: a day of a KPA's ticks is 43,200 rows to flatten."""
        return analysis.decisions(self.run)

    @cached_property
    def kinds(self) -> dict[str, list[str]]:
        return _kinds(self.all_decisions)

    def figure(self, title: str, y_title: str) -> go.Figure:
        figure = go.Figure()
        end = _times([max(self.run.simulated_ns / SECOND, 1.0)])[0]
        axis_title = (
            "time from the start (day, hh:mm; day 1 is the first)" if self.long else "time from the start (hh:mm)"
        )
        figure.update_layout(
            title={"text": _label(title)},
            xaxis={
                "title": {"text": axis_title},
                "type": "date",
                "range": [str(EPOCH), str(end)],
                "tickformat": "day %-d, %H:%M" if self.long else "%H:%M",
                "hoverformat": "%H:%M:%S",
            },
            yaxis={"title": {"text": _label(y_title)}, "rangemode": "tozero"},
            template="plotly_white",
            hovermode="x unified",
            margin={"l": 70, "r": 30, "t": 60, "b": 50},
            legend={"orientation": "h", "y": -0.22},
        )
        shapes, notes = [], []
        for time_s, event_id in zip(self.events.index, self.events["id"], strict=True):
            at = str(_times([time_s])[0])
            shapes.append(
                {
                    "type": "line",
                    "xref": "x",
                    "yref": "paper",
                    "x0": at,
                    "x1": at,
                    "y0": 0,
                    "y1": 1,
                    "line": {"dash": "dot", "color": "#777", "width": 1},
                }
            )
            notes.append(
                {
                    "x": at,
                    "xref": "x",
                    "y": 1,
                    "yref": "paper",
                    "text": _label(str(event_id)),
                    "textangle": -90,
                    "showarrow": False,
                    "xanchor": "right",
                    "yanchor": "top",
                    "font": {"size": 10, "color": "#555"},
                }
            )
        figure.update_layout(shapes=shapes, annotations=notes)
        return figure

    def observed(self, role: str, name: str, factor: float = 1.0, **kwargs: Any) -> go.Scatter | None:
        """What the real cluster recorded for `role` (a replay's), times `factor` into the chart's unit, on the
        run's time axis; None if nothing."""
        recorded = self.run.documents.get("replay", {}).get("observed", {}).get(role)
        if not recorded:
            return None
        frame = pd.DataFrame(
            {"value": pd.to_numeric(pd.Series(recorded["value"], dtype=object), errors="coerce").to_numpy() * factor},
            index=pd.Index(np.asarray(recorded["time_s"], dtype=float)),
        )
        frame = thin(frame)  # a week of 15-s samples is 40,000 points: bucket means, as the simulated lines
        return go.Scatter(x=_times(frame.index), y=_values(frame["value"]), name=_label(name), **kwargs)

    @staticmethod
    def line(frame: pd.DataFrame, column: str, name: str, **kwargs: Any) -> go.Scatter:
        kwargs = {"mode": "lines", **kwargs}
        return go.Scatter(x=_times(frame.index), y=_values(frame[column]), name=_label(name), **kwargs)

    def replicas(self) -> go.Figure:
        figure = self.figure("Replicas: what the autoscalers asked for, and what the cluster had", "replicas")
        frame = thin(analysis.replicas(self.run), peaks=("desired", "pending", "max"))
        figure.add_trace(self.line(frame, "desired", "desired", line={"shape": "hv", "color": "black"}))
        if frame["max"].notna().any():
            figure.add_trace(
                self.line(frame, "max", "max (autoscalers)", line={"shape": "hv", "dash": "dash", "color": "#999"})
            )
        for column, colour in (
            ("pending", "#d62728"),
            ("launching", "#ff7f0e"),
            ("active", "#2ca02c"),
            ("terminating", "#9467bd"),
        ):
            if column != "pending" or frame[column].any():
                figure.add_trace(
                    self.line(
                        frame, column, "Pending (no node)" if column == "pending" else column, line={"color": colour}
                    )
                )
        if frame["restarting"].any():  # containers killed and waiting to start again (memory modelled)
            figure.add_trace(self.line(frame, "restarting", "restarting", line={"color": "#8c564b"}))
        observed = self.observed("replicas", "observed (the real cluster)", mode="lines", line=_OBSERVED_STEP)
        if observed is not None:
            figure.add_trace(observed)
        return figure

    def stream(self) -> go.Figure:
        """A stream's consumer lag, simulated and (after a replay) observed, in messages."""
        figure = self.figure("Consumer lag: messages not yet consumed", "messages")
        figure.add_trace(
            go.Scatter(
                x=_times(self.run.series.index), y=_values(self.run.series["consumer_lag"]), name="lag", mode="lines"
            )
        )
        observed = self.observed("lag", "observed lag", mode="lines", line=_OBSERVED_LINE)
        if observed is not None:
            figure.add_trace(observed)
        return figure

    def requests(self) -> go.Figure:
        figure = self.figure("Requests", "requests / s")
        frame = thin(analysis.request_outcomes(self.run))
        for column, colour in (("arrived", "#1f77b4"), ("completed", "#2ca02c"), ("failed", "#d62728")):
            figure.add_trace(self.line(frame, f"{column}_per_s", column, line={"color": colour}))
        for reason in analysis.failure_reasons(self.run):  # the columns of the causes that occurred
            figure.add_trace(self.line(frame, f"failed_{reason}_per_s", f"failed: {reason}", line={"dash": "dot"}))
        return figure

    def latency(self, objectives: Mapping[str, Any] | None) -> go.Figure:
        """Latency on a log scale, where a p99 ten times the p50 and the objective fit one chart; an interval
        with no completion is a gap (None), as a log axis has no 0."""
        figure = self.figure("Latency of the requests completed in each interval", "ms (log scale)")
        figure.update_yaxes(type="log", rangemode="normal")
        frame = thin(analysis.latency(self.run), peaks=("p50_ms", "p95_ms", "p99_ms", "mean_ms"))
        frame = frame.where(frame > 0)
        for column, colour in (("p50_ms", "#2ca02c"), ("p95_ms", "#ff7f0e"), ("p99_ms", "#d62728")):
            figure.add_trace(self.line(frame, column, column.removesuffix("_ms"), line={"color": colour}))
        observed = self.observed("latency", "observed (the real cluster)", 1000.0, mode="lines", line=_OBSERVED_LINE)
        # A replay holds observed latency against the simulated mean: then the mean is shown, not only listed.
        shown: dict[str, Any] = {} if observed is not None else {"visible": "legendonly"}
        figure.add_trace(self.line(frame, "mean_ms", "mean", line={"dash": "dash"}, **shown))
        if observed is not None:
            figure.add_trace(observed)
        if objectives is not None:
            level = float(objectives["latency_ms"])
            # A shape on a log axis is placed by its value, an annotation by the value's log10 (plotly.js).
            figure.add_hline(y=level, line={"dash": "dash", "color": "#d62728", "width": 1})
            figure.add_annotation(
                text=f"p{objectives['percentile']} objective",
                font={"size": 10},
                x=1,
                xref="x domain",
                xanchor="right",
                y=math.log10(level),
                yref="y",
                yanchor="bottom",
                showarrow=False,
            )
        return figure

    def latency_cdf(self, objectives: Mapping[str, Any] | None) -> go.Figure:
        """The share of the run's completed requests within x ms, `analysis.latency_cdf`: one line, exact at
        each bucket's edge, from the run's histogram of every completed request; for a run stored before
        that was kept, the bounds each interval's percentiles prove, as a band (a single line would be
        invented between them)."""
        cdf = analysis.latency_cdf(self.run)
        exact = "share" in cdf
        figure = go.Figure()
        if exact:
            shown = _thin_steps(cdf[cdf.index > 0])
            fluid = self.run.summary.get("mode") == "fluid"
            note = "exact at each bucket's edge, from the run's histogram of every completed request's latency" + (
                " (a fluid run's: each step's completions at their mean latency)" if fluid else ""
            )
            figure.add_trace(
                go.Scatter(
                    x=_values(shown.index.to_numpy()),
                    y=_values(shown["share"]),
                    name="share within x",
                    mode="lines",
                    line={"shape": "hv", "color": "#1f77b4"},
                )
            )
        else:
            shown = _coarsen(cdf[cdf.index > 0])
            note = (
                "bounds from each interval's p50, p95 and p99 (this run keeps no histogram of every request): "
                "the true share lies in the band"
            )
            x = _values(shown.index.to_numpy())
            figure.add_trace(
                go.Scatter(
                    x=x,
                    y=_values(shown["at_least"]),
                    name="at least (surely within x)",
                    mode="lines",
                    line={"shape": "hv", "color": "#1f77b4"},
                )
            )
            figure.add_trace(
                go.Scatter(
                    x=x,
                    y=_values(shown["at_most"]),
                    name="at most (possibly within x)",
                    mode="lines",
                    line={"shape": "hv", "color": "#1f77b4", "dash": "dot"},
                    fill="tonexty",
                    fillcolor="rgba(31, 119, 180, 0.15)",
                )
            )
        title = (
            _label("Latency: the share of the run's completed requests within x")
            + "<br><sup>"
            + _label(note if len(shown) else "no request completed")
            + "</sup>"
        )
        shapes = []
        if objectives is not None:
            level, share = float(objectives["latency_ms"]), objectives["percentile"] / 100
            name = f"p{objectives['percentile']} objective: {share:.0%} within {level:g} ms"
            line = {"dash": "dash", "color": "#d62728", "width": 1}
            # Met when the line (or band) at the objective's latency is above its share: a vertical line there (a
            # trace, as a shape on a log axis is placed differently from an annotation) and the share across.
            figure.add_trace(go.Scatter(x=[level, level], y=[0, 1], name=_label(name), mode="lines", line=line))
            shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y", "y0": share, "y1": share})
            shapes[-1]["line"] = line
        figure.update_layout(
            title={"text": title},
            xaxis={"title": {"text": "latency (ms, log scale)"}, "type": "log"},
            yaxis={"title": {"text": "share of completed requests"}, "range": [0, 1.02], "tickformat": ".0%"},
            template="plotly_white",
            hovermode="x unified",
            margin={"l": 70, "r": 30, "t": 70, "b": 50},
            legend={"orientation": "h", "y": -0.22, "traceorder": "normal"},  # not reversed for the band's fill
            shapes=shapes,
        )
        return figure

    def cpu(self) -> go.Figure:
        figure = self.figure(
            "CPU used: of the pods' request (what the HPA reads) and of the nodes' allocatable", "CPU used"
        )
        figure.update_yaxes(tickformat=".0%")
        frame = thin(analysis.cpu(self.run))
        figure.add_trace(
            self.line(frame, "of_request", "of request (HPA's view)", line={"width": 3, "color": "#6a3d9a"})
        )
        figure.add_trace(
            self.line(frame, "of_nodes", "of the nodes' allocatable", line={"width": 3, "color": "#1f77b4"})
        )
        observed = self.observed("cpu", "observed, of request", mode="lines", line=_OBSERVED_LINE)
        if observed is not None:
            figure.add_trace(observed)
        for index, (name, target) in enumerate(_cpu_targets(self.all_decisions, self.kinds["hpa"]).items()):
            line = {"shape": "hv", "dash": "dash", "color": _PALETTE[(index + 3) % len(_PALETTE)]}
            frame = pd.DataFrame({"target": target / 100}, index=target.index)  # percent of request, as a share
            figure.add_trace(self.line(frame, "target", f"{name}: target", line=line))
        return figure

    def hpa(self, autoscaler: str, decisions: pd.DataFrame) -> go.Figure:
        """Each metric an HPA read, against its target: utilisation in % of request, or usage in its units."""
        figure = self.figure(f"HPA {autoscaler}: each metric against its target", "% of request, or usage")
        metrics = sorted({c.split(".")[1] for c in decisions.columns if c.startswith("metrics.") and c.count(".") >= 2})
        for index, metric in enumerate(metrics):
            colour = _PALETTE[index % len(_PALETTE)]
            value, target = _metric_and_target(decisions, metric)
            if value is None:
                continue
            frame = thin(pd.DataFrame({"value": value, "target": target}, index=decisions.index))
            figure.add_trace(self.line(frame, "value", metric, line={"color": colour}))
            figure.add_trace(
                self.line(frame, "target", f"{metric}: target", line={"color": colour, "dash": "dash", "shape": "hv"})
            )
        return figure

    def kpa(self, autoscaler: str, decisions: pd.DataFrame) -> go.Figure:
        """A KPA's observed concurrency (or RPS) against what its ready pods take at the target; panic shaded."""
        settings = _kpa_settings(self.run, autoscaler)
        metric = str(settings.get("metric") or "concurrency")
        figure = self.figure(
            f"KPA {autoscaler}: observed {metric} against the ready pods' target, panic shaded", metric
        )
        target = settings.get("target")
        columns = {"observed_stable": "stable window", "observed_panic": "panic window"}
        frame = decisions[[c for c in (*columns, "ready", "panic") if c in decisions.columns]].apply(
            pd.to_numeric, errors="coerce"
        )
        if "ready" in frame and target is not None:
            frame["capacity"] = frame["ready"] * float(target)
            columns["capacity"] = f"ready pods × target ({float(target):g})"
        thinned = thin(frame, peaks=("observed_panic", "panic"))
        for (column, name), colour in zip(columns.items(), ("#1f77b4", "#ff7f0e", "#2ca02c"), strict=False):
            if column in thinned:
                dash = "dash" if column == "capacity" else None
                figure.add_trace(self.line(thinned, column, name, line={"color": colour, "dash": dash}))
        if "panic" in frame:
            # Set at once: plotly's add_vrect validates every shape again at each call (quadratic in a day of panics).
            spans = _spans(frame["panic"].fillna(0).to_numpy() > 0, frame.index.to_numpy())
            rects = [
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "paper",
                    "y0": 0,
                    "y1": 1,
                    "x0": str(_times([start])[0]),
                    "x1": str(_times([stop])[0]),
                    "fillcolor": "#d62728",
                    "opacity": 0.12,
                    "line": {"width": 0},
                }
                for start, stop in spans
            ]
            figure.update_layout(shapes=[*figure.layout.shapes, *rects])
        if "ebc" in decisions:
            ebc = pd.DataFrame({"ebc": pd.to_numeric(decisions["ebc"], errors="coerce")}, index=decisions.index)
            if ebc["ebc"].notna().any():
                # Its own axis: ready pods x what a pod takes - target-burst-capacity - the panic average is
                # on another scale than the concurrency (with the default capacity of 211, far below 0).
                name = "excess burst capacity (right axis; below 0 the activator stays in the path)"
                line = {"shape": "hv", "color": "#9467bd", "width": 1}
                figure.add_trace(self.line(thin(ebc, troughs=("ebc",)), "ebc", name, yaxis="y2", line=line))
                axis: dict[str, Any] = {"title": {"text": "excess burst capacity"}, "overlaying": "y"}
                axis |= {"side": "right", "showgrid": False, "zerolinecolor": "#9467bd"}
                figure.update_layout(yaxis2=axis, margin={"r": 70})
        return figure

    def vpa(self, autoscaler: str, decisions: pd.DataFrame, resource: str) -> go.Figure:
        """A VPA's recommendation for `resource` (cpu, millicores, or memory, MiB): its target within its
        bounds, against the template's request it set."""
        prefix, unit, factor = ("", "millicores", 1.0) if resource == "cpu" else ("memory_", "MiB", 1 / 2**20)
        figure = self.figure(
            f"VPA {autoscaler}: its {resource} recommendation, between its bounds, against the template's request",
            f"{resource} ({unit})",
        )
        request = "template_request" if resource == "cpu" else "template_memory_request"
        fields = {
            f"{prefix}lower_bound": "lowerBound",
            f"{prefix}upper_bound": "upperBound",
            f"{prefix}target": "target",
            f"{prefix}uncapped_target": "uncappedTarget",  # if a run records it
            request: "template request",
        }
        frame = pd.DataFrame(
            {c: pd.to_numeric(decisions[c], errors="coerce") * factor for c in fields if c in decisions},
            index=decisions.index,
        )
        frame = thin(frame, peaks=(f"{prefix}upper_bound",), troughs=(f"{prefix}lower_bound",))
        styles: dict[str, dict[str, Any]] = {
            f"{prefix}lower_bound": {"line": {"color": "#9ecae1", "width": 1}},
            f"{prefix}upper_bound": {
                "line": {"color": "#9ecae1", "width": 1},
                "fill": "tonexty",
                "fillcolor": "rgba(158, 202, 225, 0.3)",
            },
            f"{prefix}target": {"line": {"color": "#1f77b4", "width": 3}},
            f"{prefix}uncapped_target": {"line": {"color": "#1f77b4", "dash": "dot"}},
            request: {"line": {"color": "black", "dash": "dash", "shape": "hv"}},
        }
        # A short run's few recommendations (a line through one point is not drawn) as markers too.
        sparse = {"mode": "lines+markers", "marker": {"size": 5}} if len(frame) < 60 else {}
        for column, name in fields.items():
            if column in frame and frame[column].notna().any():
                figure.add_trace(self.line(frame, column, name, **styles[column] | sparse))
        figure.update_layout(legend_traceorder="normal")  # not reversed for the bounds' fill
        return figure

    def queues(self) -> go.Figure | None:
        """Where requests waited at each interval's end; None when nothing ever waited anywhere."""
        frame = analysis.queues(self.run)
        present = [c for c in frame.columns if frame[c].fillna(0).to_numpy().any()]
        if not present:
            return None
        figure = self.figure("Queues: requests waiting for a pod, and held by the pods", "requests (or messages)")
        names = {
            "buffered": ("buffered, waiting for a pod (activator, router or stream backlog)", "#d62728"),
            "in_pods": ("held by the pods (queue-proxy and container)", "#1f77b4"),
            "deepest_pod": ("the most one pod held", "#ff7f0e"),
            "consumer_lag": ("consumer lag (messages)", "#9467bd"),
        }
        thinned = thin(frame[present], peaks=present)  # a depth's spike is what one looks for
        for column in present:
            name, colour = names[column]
            figure.add_trace(self.line(thinned, column, name, line={"color": colour}))
        return figure

    def cluster(self) -> go.Figure:
        figure = self.figure("Cluster: nodes, and pods waiting for one", "count")
        series = self.run.series
        frame = thin(
            pd.DataFrame(
                {c: pd.to_numeric(series[c], errors="coerce") for c in ("nodes", "pods_pending") if c in series},
                index=series.index,
            ),
            peaks=("nodes", "pods_pending"),
        )
        for column, name, colour in (("nodes", "nodes", "#1f77b4"), ("pods_pending", "pods Pending", "#d62728")):
            if column in frame:
                figure.add_trace(self.line(frame, column, name, line={"color": colour, "shape": "hv"}))
        return figure

    def decisions(self) -> go.Figure:
        """What each autoscaler asked for, as markers whose hover shows the inputs it decided from; of a long
        run only the decisions that changed what it asked for (the rest lie on the line), and of those at
        most MAX_POINTS, evenly spread."""
        figure = self.figure("Autoscaler decisions (hover for their inputs)", "desired replicas")
        replicas = thin(analysis.replicas(self.run), peaks=("desired",))
        figure.add_trace(self.line(replicas, "desired", "cluster desired", line={"shape": "hv", "color": "#bbb"}))
        figure.update_layout(hovermode="closest")
        frame = self.all_decisions
        cpu_axis = False
        for autoscaler in pd.unique(frame["autoscaler"]) if not frame.empty else []:
            rows = frame[frame["autoscaler"] == autoscaler].dropna(axis=1, how="all")
            column = "desired" if "desired" in rows.columns else next((c for c in CPU_FIELDS if c in rows.columns), "")
            if not column:
                continue  # nothing to draw it by; its decisions are still in analysis.decisions
            if len(rows) > MAX_POINTS:
                changed = rows[rows[column].ne(rows[column].shift()).to_numpy()]
                rows = changed.iloc[:: math.ceil(len(changed) / MAX_POINTS)]  # evenly over the run
            axis = "y" if column == "desired" else "y2"
            cpu_axis |= axis == "y2"
            hover = [_hover(t, str(autoscaler), row) for t, row in rows.iterrows()]
            name = str(autoscaler) if axis == "y" else f"{autoscaler} ({column}, m)"
            figure.add_trace(
                go.Scatter(
                    x=_times(rows.index),
                    y=_values(rows[column]),
                    name=_label(name),
                    mode="markers",
                    yaxis=axis,
                    marker={"size": 7, "symbol": "circle" if axis == "y" else "diamond"},
                    hovertext=hover,
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
        if cpu_axis:
            axis_layout = {
                "title": {"text": "CPU (millicores)"},
                "side": "right",
                "rangemode": "tozero",
                "showgrid": False,
            }
            figure.update_layout(yaxis2={**axis_layout, "overlaying": "y"})
            cpu = thin(analysis.cpu(self.run))
            line = {"shape": "hv", "color": "#9ecae1", "dash": "dash"}
            figure.add_trace(self.line(cpu, "request_millicores", "template CPU request (m)", yaxis="y2", line=line))
        return figure


_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


def _metric_and_target(decisions: pd.DataFrame, metric: str) -> tuple[np.ndarray | None, np.ndarray]:
    """A metric's reading at each sync and its target, in the target's terms: utilisation in percent of
    request for a Utilization target, else usage in milli-units (a record from before skenario kept
    the target has none)."""

    def column(field: str) -> np.ndarray:
        name = f"metrics.{metric}.{field}"
        if name not in decisions:
            return np.full(len(decisions), np.nan)
        values: np.ndarray = pd.to_numeric(decisions[name], errors="coerce").to_numpy(dtype=float)
        return values

    utilization, usage, target = column("utilization"), column("usage"), column("target")
    value = utilization if not np.isnan(utilization).all() else usage
    return (None if np.isnan(value).all() else value), target


def _thin_steps(cdf: pd.DataFrame) -> pd.DataFrame:
    """At most MAX_POINTS rows of an exact `analysis.latency_cdf`, evenly spread, the first and last always
    kept: each kept row is still exact at its latency; a step drawn from them rises late, never early."""
    if len(cdf) <= MAX_POINTS:
        return cdf
    step = math.ceil((len(cdf) - 1) / (MAX_POINTS - 1))
    return cdf.iloc[np.r_[np.arange(0, len(cdf) - 1, step), len(cdf) - 1]]


def _coarsen(cdf: pd.DataFrame) -> pd.DataFrame:
    """At most MAX_POINTS rows of `analysis.latency_cdf`'s bounds, still bounds: each kept row holds until the
    next, with its own `at_least` (the least over the rows it stands for) and the `at_most` of the last
    of them (the most); the last row is always kept."""
    if len(cdf) <= MAX_POINTS:
        return cdf
    step = math.ceil((len(cdf) - 1) / (MAX_POINTS - 1))
    starts = np.r_[np.arange(0, len(cdf) - 1, step), len(cdf) - 1]
    ends = np.r_[starts[1:] - 1, len(cdf) - 1]
    return pd.DataFrame(
        {"at_least": cdf["at_least"].to_numpy()[starts], "at_most": cdf["at_most"].to_numpy()[ends]},
        index=cdf.index[starts],
    )


def _cpu_metrics(decisions: pd.DataFrame) -> list[str]:
    """The CPU metrics with a Utilization target among an HPA's (`cpu` as skenario's own records name it,
    `cpu resource utilization ...` as a manifest's); a record without target_type has utilisation only then."""
    found = []
    for metric in sorted({c[len("metrics.") : c.rindex(".")] for c in decisions.columns if c.startswith("metrics.")}):
        if metric != "cpu" and not metric.startswith("cpu "):
            continue
        kind = decisions.get(f"metrics.{metric}.target_type")
        utilization = decisions.get(f"metrics.{metric}.utilization")
        if (kind is not None and (kind == "Utilization").any()) or (
            kind is None and utilization is not None and utilization.notna().any()
        ):
            found.append(metric)
    return found


def _cpu_targets(decisions: pd.DataFrame, hpas: Iterable[str]) -> dict[str, pd.Series]:
    """Each HPA's CPU utilisation target (percent of request) at the decisions where it was first held or
    changed, and at its last: all a step line needs, however many syncs."""
    targets: dict[str, pd.Series] = {}
    for autoscaler in hpas:
        rows = decisions[decisions["autoscaler"] == autoscaler]
        metrics = _cpu_metrics(rows)
        for metric in metrics:
            target = pd.to_numeric(rows.get(f"metrics.{metric}.target"), errors="coerce").dropna()
            if target.empty:
                continue
            keep = target.ne(target.shift()).to_numpy().copy()
            keep[-1] = True
            name = f"HPA {autoscaler}" + (f" ({metric})" if len(metrics) > 1 else "")
            targets[name] = target[keep]
    return targets


def _kpa_settings(run: RunData, autoscaler: str) -> Mapping[str, Any]:
    """A KPA's settings, which its first decision carries."""
    timeline = run.timeline
    for detail in timeline[(timeline["operation"] == analysis.DECISION) & (timeline["source"] == autoscaler)]["detail"]:
        settings = detail.get("settings") if isinstance(detail, Mapping) else None
        if isinstance(settings, Mapping):
            return settings
    return {}


def _spans(flags: np.ndarray, times: np.ndarray) -> list[tuple[float, float]]:
    """The stretches where `flags` holds, as (first time, first time after) pairs (the last to the end)."""
    spans = []
    start = None
    for flag, time in zip(flags, times, strict=True):
        if flag and start is None:
            start = time
        elif not flag and start is not None:
            spans.append((float(start), float(time)))
            start = None
    if start is not None:
        spans.append((float(start), float(times[-1])))
    return spans


def _hover(time_s: float, autoscaler: str, row: pd.Series) -> str:
    fields = [f"{_label(autoscaler)} at {_clock(time_s)}"]
    for key, value in row.items():
        if key != "autoscaler" and not (value is None or (isinstance(value, float) and math.isnan(value))):
            shown = f"{value:.4g}" if isinstance(value, float) else str(value)
            fields.append(f"{_label(str(key))}: {_label(shown)}")
    return "<br>".join(fields)


def _kinds(frame: pd.DataFrame) -> dict[str, list[str]]:
    """The run's HPAs, KPAs and VPAs by name (`frame` is `analysis.decisions`), known by what their decisions
    record."""
    kinds: dict[str, list[str]] = {"hpa": [], "kpa": [], "vpa": []}
    for autoscaler in pd.unique(frame["autoscaler"]) if not frame.empty else []:
        rows = frame[frame["autoscaler"] == autoscaler]
        if any(str(c).startswith("metrics.") for c in rows.dropna(axis=1, how="all").columns):
            kinds["hpa"].append(str(autoscaler))
        elif "panic" in rows.columns and rows["panic"].notna().any():
            kinds["kpa"].append(str(autoscaler))
        elif "template_request" in rows.columns and rows["template_request"].notna().any():
            kinds["vpa"].append(str(autoscaler))
    return kinds


def _events_table(events: pd.DataFrame) -> str:
    if events.empty:
        return "<p>No scenario events.</p>"
    head = "<tr><th>time</th><th>id</th><th>operation</th><th>target</th><th>what happened</th></tr>"
    rows = "".join(
        f'<tr><td class="number">{_clock(t)}</td>'
        + "".join(f"<td>{html.escape(str(row[c]))}</td>" for c in ("id", "operation", "target", "message"))
        + "</tr>"
        for t, row in events.iterrows()
    )
    return f'<table class="events">{head}{rows}</table>'


def _objectives_html(run: RunData, objectives: Mapping[str, Any] | None) -> str:
    if objectives is None:
        return "<p>No objectives: the scenario states no <code>spec.slo</code>.</p>"
    result = analysis.slo_summary(run, **objectives)
    return _table(slo_rows(result), f"objectives {verdict(result['met'])}")


def _verdict_html(run: RunData, objectives: Mapping[str, Any] | None) -> str:
    if objectives is None:
        return ""
    word = verdict(analysis.slo_summary(run, **objectives)["met"])
    return f'<p class="verdict {word}">objectives {word}</p>'


def _chart_html(figure: go.Figure, div_id: str) -> str:
    config = {"displaylogo": False, "responsive": True}
    div = figure.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config=config)
    return f'<div class="chart">{div}</div>'


def charts(run: RunData, objectives: Mapping[str, Any] | None = None) -> list[tuple[str, go.Figure]]:
    """The report's charts as (div id, figure), in the order the page shows them."""
    events = analysis.events(run)
    make = _Charts(run, events)
    shown = [
        ("chart-replicas", make.replicas()),
        ("chart-requests", make.requests()),
        ("chart-latency", make.latency(objectives)),
        ("chart-latency-cdf", make.latency_cdf(objectives)),
        ("chart-cpu", make.cpu()),
    ]
    kinds = make.kinds
    decisions = make.all_decisions
    for index, name in enumerate(kinds["hpa"]):
        shown.append((f"chart-hpa-{index}", make.hpa(name, decisions[decisions["autoscaler"] == name])))
    for index, name in enumerate(kinds["kpa"]):
        shown.append((f"chart-kpa-{index}", make.kpa(name, decisions[decisions["autoscaler"] == name])))
    for index, name in enumerate(kinds["vpa"]):
        rows = decisions[decisions["autoscaler"] == name]
        shown.append((f"chart-vpa-{index}", make.vpa(name, rows, "cpu")))
        if "memory_target" in rows and pd.to_numeric(rows["memory_target"], errors="coerce").notna().any():
            shown.append((f"chart-vpa-{index}-memory", make.vpa(name, rows, "memory")))
    queues = make.queues()
    if queues is not None:
        shown.append(("chart-queues", queues))
    if "consumer_lag" in run.series:
        shown.append(("chart-stream", make.stream()))
    if "nodes" in run.series:
        shown.append(("chart-cluster", make.cluster()))
    shown.append(("chart-decisions", make.decisions()))
    return shown


QUEUE_CHARTS = {
    "queue": (
        ("allocated.memory", "memory allocated per queue", "GB", True),
        ("pending.memory", "memory asked for and not yet allocated per queue", "GB", False),
        ("running.applications", "applications running per queue", "applications", False),
        ("pending.applications", "applications waiting for their AM per queue", "applications", False),
        ("preempted.containers", "containers preempted per queue, so far", "containers", False),
    ),
    "clusterQueue": (
        ("cpu", "CPUs admitted per ClusterQueue", "cores", True),
        ("memory", "memory admitted per ClusterQueue", "GiB", True),
        ("admitted.workloads", "workloads admitted per ClusterQueue", "workloads", False),
        ("pending.workloads", "workloads waiting for admission per ClusterQueue", "workloads", False),
        ("evicted.workloads", "workloads evicted per ClusterQueue, so far", "workloads", False),
    ),
}
"""A batch replay's charts: per queue (YARN's, with SLS's names) or per ClusterQueue (Kueue's), one
line or stacked area per queue: (figure, title, unit, stacked)."""


def batch_charts(run: RunData) -> list[tuple[str, go.Figure]]:
    """A batch replay's charts: its queues over time, then the waits of its jobs or workloads."""
    make = _Charts(run, analysis.events(run))
    series = thin(run.series)
    shown = []
    for prefix, figures in QUEUE_CHARTS.items():
        for index, (figure_name, title, unit, stacked) in enumerate(figures):
            suffix = f".{figure_name}"
            columns = [c for c in series.columns if c.startswith(f"{prefix}.") and c.endswith(suffix)]
            if not columns:
                continue
            figure = make.figure(title, unit)
            for column in columns:
                queue = column[len(prefix) + 1 : -len(suffix)]
                extra = {"stackgroup": "queues", "line": {"shape": "hv"}} if stacked else {"line": {"shape": "hv"}}
                figure.add_trace(make.line(series, column, queue, **extra))
            shown.append((f"chart-{prefix}-{index}", figure))
    jobs = run.table("jobs")
    if len(jobs) and "wait_s" in jobs:
        shown.append(("chart-waits", _waits(jobs)))
    return shown


def _waits(jobs: pd.DataFrame) -> go.Figure:
    """Each queue's waits (submit to start, or creation to first admission) as a distribution: the
    share of its jobs that waited at most x; a job that never started is left out (the table lists it)."""
    queue = "queue" if "queue" in jobs else "clusterQueue"
    figure = go.Figure()
    for name, group in jobs.groupby(queue, sort=True):
        waits = np.sort(pd.to_numeric(group["wait_s"], errors="coerce").dropna().to_numpy())
        if not len(waits):
            continue
        shares = np.arange(1, len(waits) + 1) / len(group)
        figure.add_trace(go.Scatter(x=waits, y=shares, name=_label(str(name)), mode="lines", line={"shape": "hv"}))
    figure.update_layout(
        title={"text": "waits per queue: share of jobs started within x"},
        xaxis={"title": {"text": "wait (s)"}, "rangemode": "tozero"},
        yaxis={"title": {"text": "share of the queue's jobs"}, "range": [0, 1.02], "tickformat": ".0%"},
        template="plotly_white",
        margin={"l": 70, "r": 30, "t": 60, "b": 50},
        legend={"orientation": "h", "y": -0.22},
    )
    return figure


def _waiting_html(jobs: pd.DataFrame, limit: int = 50) -> str:
    """The jobs or workloads not finished at the end, oldest first, with why."""
    if not len(jobs) or "why" not in jobs:
        return ""
    key, start = ("job", "submitted_s") if "job" in jobs else ("workload", "created_s")
    waiting = jobs[jobs["why"].notna()].sort_values(start)
    if not len(waiting):
        return "<p>Every job finished.</p>"
    queue = "queue" if "queue" in waiting else "clusterQueue"
    rows = "".join(
        f"<tr><td>{html.escape(str(row[key]))}</td><td>{html.escape(str(row[queue]))}</td>"
        f"<td>{_clock(float(row[start]))}</td><td>{html.escape(str(row['why']))}</td></tr>"
        for _, row in waiting.head(limit).iterrows()
    )
    head = f"<tr><th>{key}</th><th>queue</th><th>since</th><th>why</th></tr>"
    return f"<p>{len(waiting):,} not finished; the {min(limit, len(waiting))} oldest:</p><table>{head}{rows}</table>"


def _page_head(run: RunData) -> list[str]:
    """A page's head, plotly inlined, and its title and line of facts: seed, simulated time, phase."""
    head = f"seed {run.seed} · {format_duration(run.simulated_ns)} simulated · {run.phase}"
    if run.message:
        head += f": {run.message}"
    name = html.escape(run.name)
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>skenario: {name}</title>",
        f"<style>{STYLE}</style>",
        "<script>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>',
        "</head><body>",
        f"<h1>{name}</h1>",
        f"<p>{html.escape(head)}</p>",
    ]


def _facts(run: RunData) -> list[tuple[str, str]]:
    return [("run", "-" if run.id is None else str(run.id)), ("digest", run.digest or "-")]


def render_batch_report(run: RunData) -> str:
    """A batch replay's page: its queues over time, its waits, its figures and what was left waiting."""
    batch = run.documents["batch"]
    parts = [
        *_page_head(run),
        *(_chart_html(figure, div_id) for div_id, figure in batch_charts(run)),
        "<h2>What happened</h2>",
        _table([*batch_rows(batch), *_facts(run)], "summary"),
        "<h2>Left waiting at the end</h2>",
        _waiting_html(run.table("jobs")),
        "<h2>Replay</h2>",
        f"<details><summary>YAML</summary><pre>{html.escape(run.scenario)}</pre></details>",
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part)


def render_report(run: RunData, objectives: Mapping[str, Any] | None = None) -> str:
    """The page's HTML (write_report writes it)."""
    if "batch" in run.documents:
        return render_batch_report(run)
    objectives = stated_objectives(run) if objectives is None else objectives
    events = analysis.events(run)
    summary = (
        summary_rows(Summary.from_dict(run.summary)) if run.summary else [("summary", "none: the run did not start")]
    )
    spend = analysis.cost(run)
    cluster = node_cpu_rows(node.get("cpu_utilisation") for node in run.documents.get("nodes", []))
    parts = [
        *_page_head(run),
        _verdict_html(run, objectives),
        *(_chart_html(figure, div_id) for div_id, figure in charts(run, objectives)),
        '<div class="tables">',
        "<div><h2>What happened</h2>",
        _table([*summary, *cluster, *_facts(run)], "summary"),
        "</div><div><h2>Objectives</h2>",
        _objectives_html(run, objectives),
        "<h2>Cost and limits</h2>",
        _table(cost_rows(spend) + limit_rows(analysis.limits(run)), "cost"),
        "</div></div>",
        "<h2>Scenario events</h2>",
        _events_table(events),
        "<h2>Scenario</h2>",
        f"<details><summary>YAML</summary><pre>{html.escape(run.scenario)}</pre></details>",
        "</body></html>",
    ]
    return "\n".join(part for part in parts if part)


def write_report(run: RunData, path: Path, *, objectives: Mapping[str, Any] | None = None) -> None:
    """Write `run` as one self-contained HTML page to `path`, atomically.

    `objectives` (latency_ms, percentile, error_rate: `analysis.slo_summary`'s arguments) judge the
    run; without them, the scenario's own `spec.slo` does, if it has one.
    """
    page = render_report(run, objectives)
    with atomic_path(path) as temporary:
        temporary.write_text(page, encoding="utf-8")
