"""A run at a glance as one PNG: what the autoscaler did, what traffic got, and why, on one time axis.

It draws with matplotlib's Agg canvas directly (no pyplot), so it needs no display, touches no
global backend state and is safe in a server or a test run.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, PercentFormatter

from skenario.core.time import SECOND, format_clock
from skenario.results import analysis
from skenario.results.files import atomic_path
from skenario.results.rundata import RunData

WIDTH_PX = 1400
HEIGHT_PX = 1100
DPI = 100


def _mark_events(ax: Axes, events: pd.DataFrame) -> None:
    """Each scenario event as a dotted vertical line labelled with its id, so causes line up with effects."""
    for time_s, event_id in zip(events.index, events["id"], strict=True):
        ax.axvline(time_s, color="0.35", linestyle=":", linewidth=1)
        ax.text(
            time_s,
            0.97,
            f" {event_id}",
            transform=ax.get_xaxis_transform(),
            rotation=90,
            va="top",
            ha="right",
            fontsize=8,
            color="0.25",
            parse_math=False,
        )


def _hh_mm(seconds: float, _position: object = None) -> str:
    """An axis tick as a clock reading from the run's start, to the minute: `00:05`, `1d 02:00`."""
    return format_clock(round(seconds * SECOND))[:-3]


def plot_run(run: RunData, path: Path) -> None:
    """Write `run` as a PNG of WIDTH_PX × HEIGHT_PX: replicas, request rates, latency and CPU, events on each."""
    figure = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(4, 1, sharex=True)
    title = f"{run.name} · seed {run.seed} · {run.phase}"
    figure.suptitle(title if not run.message else f"{title}: {run.message}", parse_math=False)

    replicas = analysis.replicas(run)
    ax = axes[0]
    ax.plot(replicas.index, replicas["desired"], drawstyle="steps-post", color="black", label="desired")
    if replicas["max"].notna().any():
        ax.plot(replicas.index, replicas["max"], drawstyle="steps-post", color="0.6", linestyle="--", label="max")
    if replicas["pending"].any():
        ax.plot(replicas.index, replicas["pending"], color="tab:red", label="Pending (no node)")
    ax.plot(replicas.index, replicas["launching"], color="tab:orange", label="launching")
    ax.plot(replicas.index, replicas["active"], color="tab:green", label="active")
    observed = run.documents.get("replay", {}).get("observed", {})
    if "replicas" in observed:  # a replay: what the real cluster had, held between its samples
        seen = observed["replicas"]
        ax.plot(seen["time_s"], seen["value"], drawstyle="steps-post", color="black", linestyle=":", label="observed")
    ax.set_ylabel("replicas")
    ax.set_ylim(bottom=0)

    outcomes = analysis.request_outcomes(run)
    ax = axes[1]
    ax.plot(outcomes.index, outcomes["arrived_per_s"], color="tab:blue", label="arrived")
    ax.plot(outcomes.index, outcomes["completed_per_s"], color="tab:green", label="completed")
    ax.plot(outcomes.index, outcomes["failed_per_s"], color="tab:red", label="failed")
    ax.set_ylabel("requests / s")
    ax.set_ylim(bottom=0)

    latency = analysis.latency(run)
    ax = axes[2]
    for column, colour in (("p50_ms", "tab:green"), ("p95_ms", "tab:orange"), ("p99_ms", "tab:red")):
        ax.plot(latency.index, latency[column], color=colour, label=column.removesuffix("_ms"))
    ax.set_ylabel("latency (ms)")
    ax.set_ylim(bottom=0)

    cpu = analysis.cpu(run)
    ax = axes[3]
    ax.plot(cpu.index, cpu["of_request"], color="tab:purple", label="of request (HPA's view)")
    ax.plot(cpu.index, cpu["of_nodes"], color="tab:blue", label="of the nodes' allocatable")
    if "cpu" in observed:
        seen = observed["cpu"]
        ax.plot(seen["time_s"], seen["value"], color="black", linestyle=":", linewidth=1, label="observed, of request")
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel("CPU used")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time from the start (hh:mm)")
    ax.set_xlim(0, max(run.simulated_ns / SECOND, 1.0))
    ax.xaxis.set_major_formatter(FuncFormatter(_hh_mm))

    events = analysis.events(run)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8)
        _mark_events(ax, events)

    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=DPI)
