"""What each page of the dashboard shows, as plain JSON data: one function per view, read from the store.

The functions here are the dashboard's whole reading of a run: the API (`web.api`) only finds the
run and returns what they give, and the pages draw it. Every figure comes from the code the CLI
and the static report use (`results.readout` rows, `results.analysis`, `results.explain`,
`results.report.charts`), so a number reads the same in the terminal, the report and the browser.
Values are JSON-safe: NaN and infinities become null, numpy scalars plain numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from skenario.core.time import SECOND, format_clock, format_duration
from skenario.recording.summary import Summary
from skenario.results import analysis, report
from skenario.results.explain import decision_records, explain
from skenario.results.readout import (
    batch_rows,
    cost_rows,
    figure_text,
    limit_rows,
    node_cpu_rows,
    slo_rows,
    summary_rows,
    verdict,
)
from skenario.results.rundata import RunData, stated_objectives
from skenario.runs.batch import replay_to

COMPARED = (
    ("requests arrived", "requests_arrived", "count"),
    ("requests failed", "requests_failed", "count"),
    ("error rate", "error_rate", "share"),
    ("latency p50 (ms)", "latency_p50_ms", "ms"),
    ("latency p95 (ms)", "latency_p95_ms", "ms"),
    ("latency p99 (ms)", "latency_p99_ms", "ms"),
    ("CPU of request", "cpu_request_utilisation", "share"),
    ("replicas started", "replicas_started", "count"),
    ("pod-hours", "replica_hours", "hours"),
    ("CPU core-hours", "cpu_core_hours", "hours"),
    ("node-hours", "node_hours", "hours"),
    ("cost", "total_cost", "money"),
)
"""The figures `compare` sets side by side: (label, key, unit); lower is not always better, so no colour."""


def plain(value: Any) -> Any:
    """`value` with NaN and infinities as None and numpy scalars and arrays as Python's, recursively."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray | pd.Index):
        return [plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def safe(value: Mapping[str, Any]) -> dict[str, Any]:
    """A mapping made `plain`: what every view returns."""
    made = plain(value)
    assert isinstance(made, dict)
    return made


def rows(pairs: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """Label-value rows as the pages' tables take them."""
    return [{"label": label, "value": value} for label, value in pairs]


def kind_of(run: RunData) -> str:
    """What the run was: a batch replay, a KEP-140 timeline, or a scenario (with or without a cluster)."""
    if "batch" in run.documents:
        return "batch"
    if "kep140" in run.documents and not run.summary:
        return "kep140"
    return "scenario"


def run_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A store's row as the runs list shows it: its figures, the headline ones lifted out of its summary."""
    summary = record.get("summary") or {}
    arrived = summary.get("requests_arrived")
    failed = summary.get("requests_failed")
    p99 = summary.get("latency_p99_ns")
    return safe(
        {
            key: record.get(key)
            for key in ("run", "name", "tags", "scenario", "seed", "phase", "message", "digest", "wall_s", "sweep")
        }
        | {
            "started_at": record.get("started_at"),
            "simulated": format_duration(int(record.get("simulated_ns") or 0)),
            "simulated_s": (record.get("simulated_ns") or 0) / SECOND,
            "requests": arrived,
            "error_rate": (failed / arrived) if arrived else None,
            "p99_ms": None if p99 is None else p99 / 1e6,
            "mode": summary.get("mode"),
        }
    )


def run_overview(run: RunData, record: Mapping[str, Any]) -> dict[str, Any]:
    """A run's page, above its charts: what it is, whether it met its objectives, what happened, what it cost."""
    kind = kind_of(run)
    head: dict[str, Any] = {
        "run": run.id,
        "name": run.name,
        "kind": kind,
        "seed": run.seed,
        "phase": run.phase,
        "message": run.message,
        "digest": run.digest,
        "simulated": format_duration(run.simulated_ns),
        "tags": list(record.get("tags") or []),
        "scenario": run.scenario,
        "has_cluster": "pods" in run.documents or "kep140" in run.documents,
        "has_replay": "replay" in run.documents,
        "has_jobs": kind == "batch",
        "damaged": list(run.damaged),
    }
    if kind == "batch":
        batch = run.documents["batch"]
        head["sections"] = [{"title": "What happened", "rows": rows(batch_rows(batch))}]
        return safe(head)
    if kind == "kep140":
        head["sections"] = [{"title": "Scheduling", "rows": rows(scheduling_rows(run.documents.get("scheduling", {})))}]
        return safe(head)
    objectives = stated_objectives(run)
    sections = []
    if run.summary:
        summary = summary_rows(Summary.from_dict(run.summary))
        nodes = node_cpu_rows(node.get("cpu_utilisation") for node in run.documents.get("nodes", []))
        sections.append({"title": "What happened", "rows": rows([*summary, *nodes])})
    if objectives is not None:
        result = analysis.slo_summary(run, **objectives)
        head["verdict"] = verdict(result["met"])
        sections.append({"title": "Objectives", "rows": rows(slo_rows(result))})
    else:
        head["verdict"] = None
    sections.append(
        {"title": "Cost and limits", "rows": rows(cost_rows(analysis.cost(run)) + limit_rows(analysis.limits(run)))}
    )
    if "scheduling" in run.documents:
        sections.append({"title": "Scheduling", "rows": rows(scheduling_rows(run.documents["scheduling"]))})
    head["sections"] = sections
    head["events"] = events(run)
    return safe(head)


def scheduling_rows(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The scheduler's summary (KEP-140's figures and the cluster autoscaler's), one row a figure."""
    out = []
    for key, value in summary.items():
        if isinstance(value, Mapping):
            out += [(f"{key} {inner}", figure_text(v)) for inner, v in value.items()]
        else:
            out.append((key, figure_text(value)))
    return out


def events(run: RunData) -> list[dict[str, Any]]:
    """The scenario's events as they happened: time, clock, id, operation, target, what happened."""
    frame = analysis.events(run)
    return [
        {"time_s": float(t), "clock": format_clock(round(float(t) * SECOND))}
        | {c: None if row[c] is None else str(row[c]) for c in ("id", "operation", "target", "message")}
        for t, row in frame.iterrows()
    ]


def charts_json(run: RunData) -> str:
    """The run's charts, as the static report draws them (`report.charts`, `report.batch_charts`), as one
    JSON list of `{"id", "figure"}`: plotly's own serialisation, which knows numpy and dates."""
    made = report.batch_charts(run) if kind_of(run) == "batch" else report.charts(run, stated_objectives(run))
    if kind_of(run) == "kep140":
        made = [("chart-pods", pods_figure(run))]
    elif "pods" in run.documents:  # a scenario on nodes: the scheduler's charts too
        made = [*made, ("chart-pods", pods_figure(run))]
        if ALLOCATION[0] in run.series:
            made.append(("chart-allocation", allocation_figure(run)))
    return "[" + ",".join(f'{{"id": {json.dumps(div)}, "figure": {figure.to_json()}}}' for div, figure in made) + "]"


def decisions(run: RunData, at_s: float | None = None, autoscaler: str | None = None) -> dict[str, Any]:
    """Every autoscaler decision (time, autoscaler, what it asked for, its message), and what `skenario explain`
    says of each autoscaler as of `at_s` (default: the run's end): its inputs and the rule that set each result."""
    at = None if at_s is None else round(at_s * SECOND)
    listed = [
        {
            "time_s": record["time_s"],
            "clock": format_clock(round(record["time_s"] * SECOND)),
            "autoscaler": record["autoscaler"],
            "desired": record.get("desired"),
            "message": record["message"],
        }
        for record in decision_records(run, autoscaler)
    ]
    explained = [
        {
            "autoscaler": e.autoscaler,
            "kind": e.kind,
            "at": format_clock(e.at),
            "sections": [
                {"title": s.title, "columns": list(s.columns), "rows": [list(r) for r in s.rows]} for s in e.sections
            ],
        }
        for e in explain(run, at, autoscaler)
    ]
    return safe({"decisions": listed, "explained": explained})


def scheduler(run: RunData) -> dict[str, Any]:
    """The scheduler's view: every node (added, removed, capacity, CPU used) and every pod (created, bound,
    where, how long it waited, how many attempts), with the scheduler's summary."""
    pods = run.table("pods")
    nodes = run.table("nodes")
    if "kep140" in run.documents and pods.empty:
        pods = pd.DataFrame([_pod_row(p) for p in run.documents["kep140"].get("pods", [])])
    return safe(
        {
            "summary": rows(scheduling_rows(run.documents.get("scheduling", {}))),
            "pods": pods.replace({np.nan: None}).to_dict("records"),
            "nodes": nodes.replace({np.nan: None}).to_dict("records"),
            "has_verdicts": "kep140" in run.documents,
        }
    )


def _pod_row(result: Mapping[str, Any]) -> dict[str, Any]:
    """A KEP-140 PodResult as a row of the pods table (FakeTime steps for times)."""
    return {
        "pod": result.get("pod"),
        "created_s": result.get("createdAt"),
        "bound_s": result.get("boundAt"),
        "node": result.get("boundTo"),
        "attempts": len(result.get("scheduleResult") or []),
        "end": result.get("end"),
    }


def pod_results(run: RunData) -> dict[str, Mapping[str, Any]]:
    """Each pod's KEP-140 PodResult by name: a scenario's cluster keeps them as a list (`kep140.pods`); a
    KEP-140 run writes one into its timeline at each PodScheduled or PodUnscheduled, the last one whole."""
    kep = run.documents.get("kep140", {})
    found = {str(p.get("pod")): p for p in kep.get("pods", []) if isinstance(p, Mapping)}
    for entries in (kep.get("scenarioResult", {}).get("timeline") or {}).values():
        for entry in entries:
            result = entry.get("podScheduled") or entry.get("podUnscheduled")
            if isinstance(result, Mapping):
                name = str(result.get("pod", {}).get("metadata", {}).get("name"))
                found[name] = dict(result) | {"pod": name}
    return found


def pod_attempts(run: RunData, pod: str) -> dict[str, Any] | None:
    """One pod's KEP-140 PodResult: each scheduling attempt with every plugin's filter and score result per
    node (`pluginResults`), as kube-scheduler-simulator shows it; None if the run has no such pod."""
    found = pod_results(run).get(pod)
    if found is None:
        return None
    attempts = []
    for attempt in found.get("scheduleResult") or []:
        plugins = attempt.get("pluginResults") or {}
        candidates = attempt.get("allCandidateNodes")
        attempts.append(
            {
                "at": attempt.get("at", attempt.get("time")),
                "candidates": len(candidates) if isinstance(candidates, list) else candidates,
                "feasible": attempt.get("allFilteredNodes"),
                "selected": attempt.get("selectedNode"),
                "nominated": attempt.get("nominatedNode"),
                "message": attempt.get("message"),
                "filter": _per_node(plugins.get("filter")),
                "score": _per_node(plugins.get("score")),
                "finalScore": _per_node(plugins.get("finalScore")),
                "kept": bool(plugins),
            }
        )
    head = {k: v for k, v in found.items() if k not in ("scheduleResult", "pod")}
    return safe({"pod": pod, **{k: v for k, v in head.items() if not isinstance(v, Mapping)}, "attempts": attempts})


def _per_node(results: Any) -> dict[str, Any]:
    """`{node: {plugin: result}}` as KEP-140 writes it, with the plugins in one order for a table."""
    if not isinstance(results, Mapping):
        return {"plugins": [], "nodes": []}
    plugins = list(dict.fromkeys(p for verdicts in results.values() if isinstance(verdicts, Mapping) for p in verdicts))
    return {
        "plugins": plugins,
        "nodes": [
            {"node": node, "results": [verdicts.get(p) if isinstance(verdicts, Mapping) else None for p in plugins]}
            for node, verdicts in results.items()
        ],
    }


def pods_figure(run: RunData) -> Any:
    """Nodes and pods over time from the pods' and nodes' records: nodes present, pods waiting for a node,
    pods bound (each a step where one was added, bound, removed or finished)."""
    import plotly.graph_objects as go  # type: ignore[import-untyped]

    figure = go.Figure()
    figure.update_layout(
        title={"text": "Scheduler: nodes, and pods waiting and bound"},
        template="plotly_white",
        xaxis={"title": {"text": "time (s)"}, "rangemode": "tozero"},
        yaxis={"title": {"text": "count"}, "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.22},
        margin={"l": 70, "r": 30, "t": 60, "b": 50},
    )
    pods = run.table("pods")
    if pods.empty and "kep140" in run.documents:
        pods = pd.DataFrame([_pod_row(p) for p in run.documents["kep140"].get("pods", [])])
    nodes = run.table("nodes")
    if not nodes.empty and "added_s" in nodes:
        times, counts = step_counts(nodes["added_s"], nodes.get("removed_s"))
        figure.add_trace(go.Scatter(x=times, y=counts, name="nodes", mode="lines", line={"shape": "hv"}))
    if not pods.empty and "created_s" in pods:
        bound = pd.to_numeric(pods.get("bound_s"), errors="coerce")
        ended = pd.to_numeric(pods.get("finished_s", pd.Series(np.nan, index=pods.index)), errors="coerce")
        preempted = pd.to_numeric(pods.get("preempted_s", pd.Series(np.nan, index=pods.index)), errors="coerce")
        waiting_end = bound.fillna(ended)  # a pod deleted before it was bound stops waiting then
        times, counts = step_counts(pods["created_s"], waiting_end)
        figure.add_trace(
            go.Scatter(x=times, y=counts, name="pods waiting", mode="lines", line={"shape": "hv", "color": "#d62728"})
        )
        times, counts = step_counts(bound.dropna(), ended.where(ended.notna(), preempted)[bound.notna()])
        figure.add_trace(
            go.Scatter(x=times, y=counts, name="pods bound", mode="lines", line={"shape": "hv", "color": "#2ca02c"})
        )
    return figure


ALLOCATION = ("node_cpu_allocation", "node_memory_allocation")
"""The series of what the bound pods ask for, as a share of the nodes' allocatable CPU and memory."""


def allocation_figure(run: RunData) -> Any:
    """The nodes' allocatable CPU and memory that bound pods ask for, over time: what the scheduler fills,
    and what the cluster autoscaler adds nodes for (`report.thin`'s peaks, so no full moment is averaged away)."""
    import plotly.graph_objects as go

    figure = go.Figure()
    figure.update_layout(
        title={"text": "Scheduler: the nodes' allocatable asked for by bound pods"},
        template="plotly_white",
        xaxis={"title": {"text": "time (s)"}, "rangemode": "tozero"},
        yaxis={"title": {"text": "share of allocatable"}, "tickformat": ".0%", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.22},
        margin={"l": 70, "r": 30, "t": 60, "b": 50},
    )
    columns = [c for c in ALLOCATION if c in run.series]
    frame = report.thin(run.series[columns].apply(pd.to_numeric, errors="coerce"), peaks=columns)
    for column, name in zip(columns, ("CPU", "memory"), strict=False):
        values = [None if not math.isfinite(v) else float(v) for v in frame[column]]
        figure.add_trace(go.Scatter(x=list(frame.index), y=values, name=name, mode="lines", line={"shape": "hv"}))
    return figure


def step_counts(
    starts: Sequence[Any] | pd.Series, stops: Sequence[Any] | pd.Series | None
) -> tuple[list[float], list[int]]:
    """How many of the intervals [start, stop) are open at each instant one opens or closes (a stop of None
    never closes): the instants in order, and the count just after each."""
    start = pd.to_numeric(pd.Series(list(starts)), errors="coerce").to_numpy(dtype=float)
    stop = (
        np.full(len(start), np.nan)
        if stops is None
        else pd.to_numeric(pd.Series(list(stops)), errors="coerce").to_numpy(dtype=float)
    )
    keep = ~np.isnan(start)
    start, stop = start[keep], stop[keep]
    changes = np.concatenate([start, stop[~np.isnan(stop)]])
    steps = np.concatenate([np.ones(len(start), dtype=int), -np.ones(int((~np.isnan(stop)).sum()), dtype=int)])
    order = np.argsort(changes, kind="stable")
    instants, totals = changes[order], np.cumsum(steps[order])
    if not len(instants):
        return [], []
    last = np.r_[instants[1:] != instants[:-1], True]  # the count after every change at one instant
    return [float(t) for t in instants[last]], [int(c) for c in totals[last]]


def jobs(run: RunData) -> dict[str, Any]:
    """A batch replay's jobs (YARN's applications or Kueue's workloads), each with its queue and wait."""
    table = run.table("jobs")
    return safe({"jobs": table.replace({np.nan: None}).to_dict("records"), "queues": queue_names(run)})


def queue_names(run: RunData) -> list[str]:
    """The queues (or ClusterQueues) a batch replay's series has figures for."""
    found: list[str] = []
    for prefix, figures in report.QUEUE_CHARTS.items():
        for figure_name, *_ in figures:
            suffix = f".{figure_name}"
            found += [
                c[len(prefix) + 1 : -len(suffix)]
                for c in run.series.columns
                if c.startswith(f"{prefix}.") and c.endswith(suffix)
            ]
    return list(dict.fromkeys(found))


def job_detail(run: RunData, job: str) -> dict[str, Any] | None:
    """Why one job (or workload) waited, in its scheduler's terms, as `skenario explain --job --at` says it: for
    one that waited and then started, the stored replay run again with its seed to the instant before it
    started (the same decisions up to there); for one that never started, its reason at the end. With its
    queue's figures at the last recording before it was submitted and before it started."""
    table = run.table("jobs")
    key = "job" if "job" in table else "workload"
    if table.empty or key not in table:
        return None
    match = table[table[key].astype(str) == job]
    if match.empty:
        return None
    record = match.iloc[0].replace({np.nan: None}).to_dict()
    submitted = record.get("submitted_s", record.get("created_s"))
    started = record.get("started_s", record.get("admitted_s"))
    why, asked = record.get("why"), None
    if why is None and started is not None and submitted is not None and started > submitted:
        asked = max(round(started * SECOND) - 1, 0)
        replayed = replay_to(run.scenario, f"run {run.id}", seed=run.seed, until=asked)
        found = next((r for r in replayed.jobs() if str(r.get(key)) == job), {})
        why = found.get("why")
    elif why is None:
        why = "it did not wait: it started when it was submitted"
    queue = str(record.get("queue") or record.get("clusterQueue") or "")
    prefix = "queue" if "queue" in record else "clusterQueue"
    columns = [c for c in run.series.columns if c.startswith(f"{prefix}.{queue}.")]
    states = {}
    for moment, time_s in (("submitted", submitted), ("started", started)):
        before = run.series[run.series.index <= float(time_s)] if time_s is not None and columns else None
        if before is None or before.empty:
            continue
        last = before.iloc[-1]
        states[moment] = {
            "time_s": float(before.index[-1]),
            "figures": {c[len(prefix) + len(queue) + 2 :]: last[c] for c in columns},
        }
    at = None if asked is None else format_clock(asked)
    return safe({"job": record, "queue": queue, "why": why, "why_at": at, "queue_state": states})


def replay(run: RunData) -> dict[str, Any] | None:
    """A replay's comparison with the real cluster it replays: the figures `skenario replay` printed (the
    observed series are drawn on the run's charts)."""
    document = run.documents.get("replay")
    if document is None:
        return None
    figures = {k: v for k, v in document.items() if k != "observed"}
    listed = []
    for key, value in figures.items():
        inner = value.items() if isinstance(value, Mapping) else [("", value)]
        for name, figure in inner:
            if not isinstance(figure, list):  # a confusion matrix is for `skenario replay -o json`
                listed.append((f"{key}: {name}" if name else key, figure_text(figure)))
    return safe({"figures": figures, "rows": rows(listed), "observed": sorted(document.get("observed", {}))})


def compare(datas: Sequence[RunData], baseline: int | None = None) -> dict[str, Any]:
    """Runs side by side: each run's figures (`COMPARED`) and, against the `baseline` run (an index into `datas`),
    each figure's difference; and the charts overlaying their replicas, latency, requests and CPU."""
    figures = [run_figures(d) for d in datas]
    table = []
    for label, key, unit in COMPARED:
        values = [f.get(key) for f in figures]
        if all(v is None for v in values):
            continue
        entry: dict[str, Any] = {"label": label, "key": key, "unit": unit, "values": values}
        if baseline is not None:
            base = values[baseline]
            entry["deltas"] = [None if v is None or base is None else v - base for v in values]
        table.append(entry)
    return safe(
        {
            "runs": [{"run": d.id, "name": d.name, "seed": d.seed, "phase": d.phase} for d in datas],
            "baseline": baseline,
            "figures": table,
        }
    )


def run_figures(run: RunData) -> dict[str, float | None]:
    """A run's headline figures by `COMPARED` key."""
    summary = run.summary or {}
    arrived = summary.get("requests_arrived") or 0
    spend = analysis.cost(run) if summary else {}

    def ms(key: str) -> float | None:
        value = summary.get(key)
        return None if value is None else value / 1e6

    return {
        "requests_arrived": summary.get("requests_arrived"),
        "requests_failed": summary.get("requests_failed"),
        "error_rate": (summary.get("requests_failed", 0) / arrived) if arrived else None,
        "latency_p50_ms": ms("latency_p50_ns"),
        "latency_p95_ms": ms("latency_p95_ns"),
        "latency_p99_ms": ms("latency_p99_ns"),
        "cpu_request_utilisation": summary.get("cpu_request_utilisation"),
        "replicas_started": summary.get("replicas_started"),
        "replica_hours": spend.get("replica_hours"),
        "cpu_core_hours": spend.get("cpu_core_hours"),
        "node_hours": spend.get("node_hours"),
        "total_cost": spend.get("total_cost"),
    }


OVERLAID: tuple[tuple[str, str, str, Callable[[RunData], pd.Series]], ...] = (
    ("chart-compare-replicas", "Active replicas", "replicas", lambda d: analysis.replicas(d)["active"]),
    ("chart-compare-desired", "Desired replicas", "replicas", lambda d: analysis.replicas(d)["desired"]),
    ("chart-compare-latency", "Latency p95", "ms", lambda d: analysis.latency(d)["p95_ms"]),
    ("chart-compare-failed", "Failed requests", "requests / s", lambda d: analysis.request_outcomes(d)["failed_per_s"]),
    ("chart-compare-cpu", "CPU used of request", "share", lambda d: analysis.cpu(d)["of_request"]),
)
"""The charts `compare` overlays, one line per run: (div id, title, unit, the series read from a run)."""


def compare_charts_json(datas: Sequence[RunData]) -> str:
    """The overlaid charts as one JSON list of `{"id", "figure"}`, each run's line thinned as the report's."""
    import plotly.graph_objects as go

    made = []
    for div, title, unit, read in OVERLAID:
        figure = go.Figure()
        figure.update_layout(
            title={"text": title},
            template="plotly_white",
            xaxis={"title": {"text": "time from the start (s)"}, "rangemode": "tozero"},
            yaxis={"title": {"text": unit}, "rangemode": "tozero", "type": "log" if unit == "ms" else "linear"},
            legend={"orientation": "h", "y": -0.22},
            margin={"l": 70, "r": 30, "t": 60, "b": 50},
            hovermode="x unified",
        )
        for data in datas:
            if not data.summary:
                continue
            series = report.thin(read(data).to_frame("value"), peaks=("value",))
            values = [None if not math.isfinite(v) or (unit == "ms" and v <= 0) else float(v) for v in series["value"]]
            figure.add_trace(
                go.Scatter(x=list(series.index), y=values, name=f"run {data.id}: {data.name}", mode="lines")
            )
        made.append((div, figure))
    return "[" + ",".join(f'{{"id": {json.dumps(div)}, "figure": {figure.to_json()}}}' for div, figure in made) + "]"


def pareto_mask(points: Sequence[Sequence[float | None]]) -> list[bool]:
    """Which points no other point dominates, every coordinate minimised: another point dominates one when it
    is no worse in every coordinate and better in one. A point with a missing coordinate is never on the front."""
    known = [all(v is not None and math.isfinite(v) for v in p) for p in points]
    front = []
    for i, p in enumerate(points):
        if not known[i]:
            front.append(False)
            continue
        dominated = any(
            known[j]
            and j != i
            and all(b <= a for a, b in zip(p, q, strict=True))  # type: ignore[operator]
            and any(b < a for a, b in zip(p, q, strict=True))  # type: ignore[operator]
            for j, q in enumerate(points)
        )
        front.append(not dominated)
    return front
