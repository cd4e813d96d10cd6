"""Questions asked of one run's results, each answered as a pandas DataFrame (or a dict of totals).

The CLI, the plots and the HTML report all read a run through these functions, so a number means
the same thing wherever it is shown. Frames are indexed by `time_s`, the end of each recording
interval in seconds (the recorder's convention: a row holds the stocks at the end of its interval
and what happened during it), unless a docstring says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from skenario.core.time import MILLISECOND, SECOND
from skenario.recording.summary import LATENCY_HISTOGRAM
from skenario.results.rundata import RunData

HOUR_NS = 3600 * SECOND
PERCENTILES = (50, 95, 99)
DECISION = "Decision"


def _numbers(frame: pd.DataFrame, columns: Mapping[str, str]) -> pd.DataFrame:
    """`frame`'s columns renamed and as floats: the recorder writes None where a value is undefined."""
    return pd.DataFrame(
        {new: pd.to_numeric(frame[old], errors="coerce").astype(float) for old, new in columns.items()},
        index=_time_index(frame),
    )


def _time_index(frame: pd.DataFrame) -> pd.Index:
    return pd.Index(np.asarray(frame.index, dtype=float), name="time_s")


def _counts(frame: pd.DataFrame, columns: Mapping[str, str]) -> pd.DataFrame:
    """Count columns renamed; one a run stored before it existed reads as zeros."""
    return pd.DataFrame(
        {new: np.asarray(frame[old].fillna(0), dtype=np.int64) for old, new in columns.items()},
        index=_time_index(frame),
    )


def interval_seconds(run: RunData) -> pd.Series:
    """Each row's interval length: from the previous row (or 0, the start of the run) to this one."""
    ends = np.asarray(run.series["time_ns"], dtype=np.int64)
    starts = np.concatenate([[0], ends[:-1]])
    return pd.Series((ends - starts) / SECOND, index=_time_index(run.series), name="interval_s")


def failure_reasons(run: RunData) -> list[str]:
    """The failure reasons the series has a `failed_<reason>` column for, in column order."""
    return [str(c).removeprefix("failed_") for c in run.series.columns if str(c).startswith("failed_")]


def stocks(run: RunData) -> pd.DataFrame:
    """How many entities each stock held at the end of every interval: where replicas and requests were.

    Completed and failed requests are stocks that only grow, so theirs are running totals.
    """
    series = run.series
    frame = _counts(
        series,
        {
            "replicas_pending": "replicas_pending",
            "replicas_launching": "replicas_launching",
            "replicas_active": "replicas_active",
            "replicas_restarting": "replicas_restarting",
            "replicas_terminating": "replicas_terminating",
            "replicas_terminated": "replicas_terminated",
            "requests_buffered": "requests_buffered",
            "requests_processing": "requests_processing",
        },
    )
    frame["requests_completed"] = np.cumsum(np.asarray(series["requests_completed"], dtype=np.int64))
    frame["requests_failed"] = np.cumsum(np.asarray(series["requests_failed"], dtype=np.int64))
    return frame


def replicas(run: RunData) -> pd.DataFrame:
    """What the autoscalers asked for against what the cluster had: columns desired, pending (pods no node
    took yet), launching (bound, not ready), active, restarting (a killed container waiting to start
    again), terminating, and max, the most the autoscalers allowed (NaN where none set a bound)."""
    frame = _counts(
        run.series,
        {
            "replicas_desired": "desired",
            "replicas_pending": "pending",
            "replicas_launching": "launching",
            "replicas_active": "active",
            "replicas_restarting": "restarting",
            "replicas_terminating": "terminating",
        },
    )
    frame["max"] = _column(run.series, "replicas_max").to_numpy()
    return frame


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column as floats, NaN where empty, all NaN where a run stored before it existed lacks it."""
    if name not in frame:
        return pd.Series(np.nan, index=frame.index, dtype=float)
    return pd.to_numeric(frame[name], errors="coerce").astype(float)


def request_outcomes(run: RunData) -> pd.DataFrame:
    """What happened to requests in each interval, as counts and as rates (so intervals of any length compare).

    Columns: arrived, completed, failed, `failed_<reason>` per reason, interval_s, then each count
    again as `<count>_per_s` (the count over interval_s).
    """
    series = run.series
    names = {"requests_arrived": "arrived", "requests_completed": "completed", "requests_failed": "failed"}
    names.update({f"failed_{reason}": f"failed_{reason}" for reason in failure_reasons(run)})
    frame = _counts(series, names)
    interval = interval_seconds(run)
    frame["interval_s"] = interval
    for name in names.values():
        frame[f"{name}_per_s"] = frame[name] / interval
    return frame


def latency(run: RunData) -> pd.DataFrame:
    """Latency of the requests completed in each interval, in ms: p50_ms, p95_ms, p99_ms, mean_ms (NaN if none)."""
    return _numbers(
        run.series,
        {
            "latency_p50_ms": "p50_ms",
            "latency_p95_ms": "p95_ms",
            "latency_p99_ms": "p99_ms",
            "latency_mean_ms": "mean_ms",
        },
    )


def cpu(run: RunData) -> pd.DataFrame:
    """CPU per interval, used over held core-time two ways: of_request, over what the serving replicas
    requested (what the HPA reads; NaN when no replica served), and of_nodes, over the nodes' allocatable
    CPU (a cluster's nodes, or the node each pod has to itself; NaN when no node stood); and the
    template's request_millicores (which a VPA moves)."""
    series = run.series
    return pd.DataFrame(
        {
            "of_request": _column(series, "cpu_request_utilisation").to_numpy(),
            "of_nodes": _column(series, "node_cpu_utilisation").to_numpy(),
            "request_millicores": _column(series, "cpu_request_millicores").to_numpy(),
        },
        index=_time_index(series),
    )


def cpu_per_replica(run: RunData) -> pd.DataFrame:
    """Each replica's CPU utilisation per interval, one column per replica id, to spot hot or idle replicas.

    A replica that terminated mid-interval has a row at that moment; it is put in the interval that
    contains it. NaN where the replica did not exist or had not served yet.
    """
    rows = run.replica_series
    index = _time_index(run.series)
    if rows.empty or index.empty:
        return pd.DataFrame(index=index, columns=pd.Index([], name="replica"), dtype=float)
    ends = np.asarray(run.series["time_ns"], dtype=np.int64)
    at = np.searchsorted(ends, np.asarray(rows["time_ns"], dtype=np.int64), side="left")
    inside = at < len(ends)  # rows after the last recorded interval (a paused run) belong to none yet
    frame = pd.DataFrame(
        {
            "time_s": index.to_numpy()[at[inside]],
            "replica": np.asarray(rows["replica"])[inside],
            "utilisation": pd.to_numeric(rows["cpu_utilisation"], errors="coerce").astype(float).to_numpy()[inside],
        }
    )
    wide = frame.pivot_table(index="time_s", columns="replica", values="utilisation", aggfunc="last", dropna=False)
    return wide.reindex(index=index, columns=sorted(frame["replica"].unique())).rename_axis(columns="replica")


def _flatten(detail: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Scalars of a nested dict under dotted names (metrics.cpu.usage); lists are left out."""
    flat: dict[str, Any] = {}
    for key, value in detail.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}."))
        elif value is None or isinstance(value, bool | int | float | str):
            flat[name] = value
    return flat


def _timeline_rows(run: RunData, decisions: bool) -> pd.DataFrame:
    timeline = run.timeline
    if timeline.empty:
        return timeline
    return timeline[(timeline["operation"] == DECISION) == decisions]


def decisions(run: RunData, autoscaler: str | None = None) -> pd.DataFrame:
    """Every autoscaler decision (or one autoscaler's), to see what it asked for and from what inputs.

    Columns: autoscaler, desired (NaN where the decision has none, as a VPA's), then the detail's
    scalar fields, nested ones under dotted names (an HPA's `metrics.<name>.utilization`). The
    index (time_s) repeats when several autoscalers decide at once.
    """
    rows = _timeline_rows(run, decisions=True)
    if autoscaler is not None and not rows.empty:
        rows = rows[rows["source"] == autoscaler]
    details = [_flatten(d) if isinstance(d, Mapping) else {} for d in rows.get("detail", [])]
    frame = pd.DataFrame(details, index=pd.RangeIndex(len(details)))
    desired = frame.pop("desired") if "desired" in frame.columns else pd.Series(np.nan, index=frame.index)
    frame.insert(0, "desired", pd.to_numeric(desired, errors="coerce").astype(float))
    frame.insert(0, "autoscaler", np.asarray(rows["source"], dtype=object) if len(rows) else [])
    frame.index = pd.Index(np.asarray(rows["time_ns"], dtype=np.int64) / SECOND if len(rows) else [], name="time_s")
    return frame


def events(run: RunData) -> pd.DataFrame:
    """The scenario events as they happened: columns id, operation, target, message (index time_s)."""
    rows = _timeline_rows(run, decisions=False)
    if rows.empty:
        return pd.DataFrame(columns=["id", "operation", "target", "message"], index=pd.Index([], name="time_s"))
    return pd.DataFrame(
        {
            "id": np.asarray(rows["source"], dtype=object),
            "operation": np.asarray(rows["operation"], dtype=object),
            "target": np.asarray(rows["target"], dtype=object),
            "message": np.asarray(rows["message"], dtype=object),
        },
        index=pd.Index(np.asarray(rows["time_ns"], dtype=np.int64) / SECOND, name="time_s"),
    )


def _check_slo(latency_ms: float, percentile: int, error_rate: float) -> None:
    if percentile not in PERCENTILES:
        raise ValueError(f"percentile must be one of {PERCENTILES}, got {percentile}")
    if not latency_ms > 0:
        raise ValueError(f"latency target must be > 0 ms, got {latency_ms}")
    if not 0 <= error_rate <= 1:
        raise ValueError(f"error-rate target must be in [0, 1], got {error_rate}")


def slo(run: RunData, *, latency_ms: float, percentile: int = 99, error_rate: float) -> pd.DataFrame:
    """Which intervals broke a latency or error-rate objective, to see when (not only whether) a run fell short.

    An interval violates the latency target when it completed at least one request and its
    `percentile` latency is strictly greater than `latency_ms`; with no completions it cannot.
    It violates the error-rate target when at least one request finished (completed or failed)
    and failed / (completed + failed) is strictly greater than `error_rate`. It is compliant when
    it violates neither. Columns: latency_ms (that interval's percentile), error_rate (NaN when
    nothing finished), latency_violation, error_violation, compliant.
    """
    _check_slo(latency_ms, percentile, error_rate)
    series = run.series
    completed = np.asarray(series["requests_completed"], dtype=np.int64)
    failed = np.asarray(series["requests_failed"], dtype=np.int64)
    finished = completed + failed
    observed = pd.to_numeric(series[f"latency_p{percentile}_ms"], errors="coerce").astype(float).to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(finished > 0, failed / np.maximum(finished, 1), np.nan)
    latency_violation = (completed > 0) & ~np.isnan(observed) & (observed > latency_ms)
    error_violation = (finished > 0) & (rate > error_rate)
    return pd.DataFrame(
        {
            "latency_ms": observed,
            "error_rate": rate,
            "latency_violation": latency_violation,
            "error_violation": error_violation,
            "compliant": ~(latency_violation | error_violation),
        },
        index=_time_index(series),
    )


def slo_summary(run: RunData, *, latency_ms: float, percentile: int = 99, error_rate: float) -> dict[str, Any]:
    """The run against its objectives: interval counts from `slo`, and whether the whole run met them.

    `latency_met` and `error_rate_met` judge the run's totals (the summary's percentile over every
    completed request, and failed / (completed + failed) over all finished ones) by the same strict
    rule as `slo`. Each is None, not known, when there is nothing to judge (no completed request, no
    finished one). `met` is False when either was missed; otherwise it is None (with the reason in
    `unknown`) when either is not known or the run did not complete (what it did so far cannot promise
    the rest), and True only for a completed run that met both. `compliant_fraction` is None with no
    intervals.
    """
    per_interval = slo(run, latency_ms=latency_ms, percentile=percentile, error_rate=error_rate)
    summary = run.summary
    completed = int(summary.get("requests_completed") or 0)  # a run that never started has no summary
    failed = int(summary.get("requests_failed") or 0)
    overall_ns = summary.get(f"latency_p{percentile}_ns")
    overall_ms = None if overall_ns is None or completed == 0 else overall_ns / MILLISECOND
    overall_rate = failed / (completed + failed) if completed + failed else None
    latency_met = None if overall_ms is None else overall_ms <= latency_ms
    error_rate_met = None if overall_rate is None else overall_rate <= error_rate
    missed = False in (latency_met, error_rate_met)
    unknown = None if missed else _unknown(run, latency_met, error_rate_met)
    intervals = len(per_interval)
    compliant = int(per_interval["compliant"].sum())
    return {
        "percentile": percentile,
        "latency_target_ms": latency_ms,
        "error_rate_target": error_rate,
        "intervals": intervals,
        "latency_violations": int(per_interval["latency_violation"].sum()),
        "error_violations": int(per_interval["error_violation"].sum()),
        "compliant_intervals": compliant,
        "compliant_fraction": compliant / intervals if intervals else None,
        "latency_ms": overall_ms,
        "error_rate": overall_rate,
        "latency_met": latency_met,
        "error_rate_met": error_rate_met,
        "met": False if missed else (True if unknown is None else None),
        "unknown": unknown,
    }


def _unknown(run: RunData, latency_met: bool | None, error_rate_met: bool | None) -> str | None:
    """Why a run's verdict cannot be given (None when it can): it did not complete, or nothing finished."""
    if run.phase != "Completed":
        return f"the run is {run.phase}" + (f": {run.message}" if run.message else "")
    if error_rate_met is None:
        return "no request finished"
    if latency_met is None:
        return "no request completed"
    return None


def replica_lifetimes_ns(run: RunData) -> pd.Series:
    """Each replica's billed life, from its pod's binding to a node to its termination or (still alive) the end
    of the run, in ns; 0 for a replica whose pod never left Pending (a pod no node took costs nothing).

    A run stored before skenario kept the binding time counts a replica that became ready from its creation.
    """
    frame = run.replicas
    created = _times(frame, "created_ns")
    activated = _times(frame, "activated_ns")
    bound = _times(frame, "bound_ns")
    bound = np.where(np.isnan(bound) & ~np.isnan(activated), created, bound)
    ended = np.nan_to_num(_times(frame, "terminated_ns"), nan=float(run.simulated_ns))
    lives = np.where(np.isnan(bound), 0.0, np.clip(ended - bound, 0, None))
    return pd.Series(lives, index=pd.Index(frame["replica"], name="replica"))


def _times(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A lifecycle time column as floats, NaN where it has not happened (or a stored run lacks it)."""
    if column not in frame:
        return np.full(len(frame), np.nan)
    times: np.ndarray = pd.to_numeric(frame[column], errors="coerce").astype(float).to_numpy()
    return times


def cost(
    run: RunData,
    *,
    price_per_replica_hour: float | None = None,
    price_per_cpu_hour: float | None = None,
    price_per_gib_hour: float | None = None,
    price_per_node_hour: float | None = None,
) -> dict[str, Any]:
    """What the run's pods and nodes would cost, in OpenCost's allocation vocabulary, as a dict of totals
    (`pd.DataFrame([cost(run)])` tabulates it).

    A pod is billed from its binding to a node to its termination (OpenCost counts a pod's running
    minutes); a pod that stayed Pending costs nothing. As OpenCost's `cpuCoreHours`, each pod is
    charged the larger of its CPU request and its mean usage, times its hours: a pod using more than
    it requested pays for what it used.

    Keys:
    - replicas: pods that were bound (ran); pods_never_bound: pods that stayed Pending;
    - replica_hours: the pods' billed hours, summed;
    - cpu_core_hours (OpenCost's cpuCoreHours), cpu_core_request_hours and cpu_core_usage_hours;
      cpu_core_request_average and cpu_core_usage_average (cores over the run, OpenCost's
      cpuCoreRequestAverage and cpuCoreUsageAverage); cpu_efficiency (usage over request, None when
      nothing was requested: OpenCost's cpuEfficiency);
    - ram_byte_hours: memory requested times hours (skenario keeps no per-pod mean working set);
    - container_restarts;
    - node_hours and node_cpu_core_hours (allocatable) with spec.cluster, else None;
    - replica_cost, cpu_cost (cpu_core_hours at the CPU price), ram_cost, node_cost and total_cost,
      each None when its price is not given. Per-pod prices suit billing by the pod (Fargate, Cloud
      Run); a node price suits billing by the machine, where a pod's share is OpenCost's business.
    """
    frame = run.replicas
    lifetimes = replica_lifetimes_ns(run).to_numpy()
    request_cores = _lifecycle_values(frame, "cpu_request") / 1000
    busy = _lifecycle_values(frame, "busy_core_ns")
    memory_bytes = _lifecycle_values(frame, "memory_request")
    with np.errstate(invalid="ignore", divide="ignore"):
        usage_cores = np.where(lifetimes > 0, busy / np.maximum(lifetimes, 1), 0.0)
    replica_hours = float(lifetimes.sum()) / HOUR_NS
    requested = float((request_cores * lifetimes).sum()) / HOUR_NS
    used = float(busy.sum()) / HOUR_NS
    core_hours = float((np.maximum(request_cores, usage_cores) * lifetimes).sum()) / HOUR_NS
    ram = float((memory_bytes * lifetimes).sum()) / HOUR_NS
    run_hours = run.simulated_ns / HOUR_NS
    nodes = node_hours(run)
    replica_cost = None if price_per_replica_hour is None else replica_hours * price_per_replica_hour
    cpu_cost = None if price_per_cpu_hour is None else core_hours * price_per_cpu_hour
    ram_cost = None if price_per_gib_hour is None else ram / 2**30 * price_per_gib_hour
    node_cost = None if price_per_node_hour is None or nodes is None else nodes[0] * price_per_node_hour
    costs = [c for c in (replica_cost, cpu_cost, ram_cost, node_cost) if c is not None]
    return {
        "replicas": int((lifetimes > 0).sum()),
        "pods_never_bound": int(np.isnan(_times(frame, "bound_ns")).sum()) if "bound_ns" in frame else 0,
        "replica_hours": replica_hours,
        "cpu_core_hours": core_hours,
        "cpu_core_request_hours": requested,
        "cpu_core_usage_hours": used,
        "cpu_core_request_average": requested / run_hours if run_hours > 0 else None,
        "cpu_core_usage_average": used / run_hours if run_hours > 0 else None,
        "cpu_efficiency": used / requested if requested > 0 else None,
        "ram_byte_hours": ram,
        "container_restarts": int(_lifecycle_values(frame, "restarts").sum()),
        "node_hours": None if nodes is None else nodes[0],
        "node_cpu_core_hours": None if nodes is None else nodes[1],
        "replica_cost": replica_cost,
        "cpu_cost": cpu_cost,
        "ram_cost": ram_cost,
        "node_cost": node_cost,
        "total_cost": sum(costs) if costs else None,
    }


def node_hours(run: RunData) -> tuple[float, float] | None:
    """The cluster's node-hours and allocatable CPU core-hours, from the run's nodes table; None without
    spec.cluster. A node counts from joining the cluster to leaving it (or the end of the run)."""
    records = run.documents.get("nodes")
    if records is None:
        return None
    end = run.simulated_ns / SECOND
    hours = core_hours = 0.0
    for node in records:
        left = end if node.get("removed_s") is None else float(node["removed_s"])
        held = max(0.0, left - float(node.get("added_s") or 0.0)) / 3600
        hours += held
        core_hours += held * float(node.get("cpu_millicores") or 0) / 1000
    return hours, core_hours


def limits(run: RunData) -> dict[str, float | None]:
    """What kept the autoscalers from acting, as shares of the run's recorded time (each interval counts by
    its length, judged at its end): at_max_replicas, the workload at its autoscalers' maxReplicas (or
    max-scale) with the desired count there; pods_pending, some of the workload's pods waiting for a
    node; cluster_full, pods waiting while no node group could grow (every group at its maxSize, or
    no cluster autoscaler). Each is None where the run has nothing to judge it by (no bound, no
    cluster), so a table can tell "never" from "not applicable"."""
    series = run.series
    if series.empty:
        return {"at_max_replicas": None, "pods_pending": None, "cluster_full": None}
    weights = interval_seconds(run).to_numpy()
    total = float(weights.sum())

    def share(flags: np.ndarray) -> float | None:
        return float(weights[flags].sum()) / total if total > 0 else None

    bound = _column(series, "replicas_max").to_numpy()
    desired = _column(series, "replicas_desired").to_numpy()
    pending = _column(series, "replicas_pending").to_numpy()
    full = _column(series, "cluster_full").to_numpy()
    has_cluster = "nodes" in series and not np.isnan(full).all()
    return {
        "at_max_replicas": None if np.isnan(bound).all() else share(~np.isnan(bound) & (desired >= bound)),
        "pods_pending": share(np.nan_to_num(pending) > 0) if has_cluster else None,
        "cluster_full": share(np.nan_to_num(full) > 0) if has_cluster else None,
    }


def _lifecycle_values(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A lifecycle column as floats, 0 where empty or absent (a run stored before the column existed)."""
    if column not in frame:
        return np.zeros(len(frame))
    values: np.ndarray = pd.to_numeric(frame[column], errors="coerce").fillna(0).to_numpy(dtype=float)
    return values


def latency_cdf(run: RunData) -> pd.DataFrame:
    """The share of the run's completed requests with latency within x, indexed by `latency_ms`; empty when
    no request completed.

    With the run's histogram of every completed request's latency (the `latency_histogram` document), it
    is exact: one column, `share`, a row at each non-empty bucket's upper edge holding the share of the
    requests below that edge (the bucket's running count over all completed), from that edge to the next
    one's, and a first row at 0 at the first bucket's lower edge. Within a bucket (at most 1/128 of its latency
    wide) the histogram does not say where its requests lie.

    A run stored before the histogram was kept has no such document: then `bounds_from_percentiles`,
    columns `at_least` and `at_most`, between which the share lies.
    """
    histogram = run.documents.get(LATENCY_HISTOGRAM)
    exact = _cdf_of_histogram(histogram) if isinstance(histogram, Mapping) else None
    return exact if exact is not None else bounds_from_percentiles(run)


def _cdf_of_histogram(histogram: Mapping[str, Any]) -> pd.DataFrame | None:
    """`latency_cdf` from a `LatencyHistogram.as_document`; None if the document is not of that shape."""
    try:
        lower = np.asarray(histogram["lower_ns"], dtype=np.int64)
        upper = np.asarray(histogram["upper_ns"], dtype=np.int64)
        counts = np.asarray(histogram["counts"], dtype=np.int64)
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    if not (lower.ndim == upper.ndim == counts.ndim == 1 and len(lower) == len(upper) == len(counts)):
        return None
    total = int(counts.sum())
    if not total:
        return pd.DataFrame({"share": []}, index=pd.Index([], name="latency_ms", dtype=float))
    edges = np.r_[lower[:1], upper] / MILLISECOND
    share = np.r_[0, np.cumsum(counts)] / total
    return pd.DataFrame({"share": share}, index=pd.Index(edges, name="latency_ms"))


def bounds_from_percentiles(run: RunData) -> pd.DataFrame:
    """Bounds on the share of the run's completed requests with latency at most x, from the series alone:
    each interval's completions and its p50, p95 and p99 (what a run stored before its latency histogram
    was kept has of latency).

    An interval's q-th percentile is its r-th smallest latency, r = max(1, ceil(q/100 x completed)) (the
    nearest rank): at x at or above it, at least r of its requests took at most x; below it, at most
    r - 1 did. Summed over the intervals and divided by all completions, these give `at_least` and
    `at_most`, between which the run's true share lies (to the histogram's bucket resolution, 0.4%, as
    each percentile is its bucket's midpoint). Indexed by `latency_ms`, each distinct percentile seen;
    a row holds from its latency to the next one's. Empty when no request completed.
    """
    series = run.series
    completed = _column(series, "requests_completed").fillna(0).to_numpy()
    values = np.column_stack([_column(series, f"latency_p{q}_ms").to_numpy() for q in PERCENTILES])
    known = (completed > 0) & ~np.isnan(values).any(axis=1) if len(series) else np.zeros(0, dtype=bool)
    completed, values = completed[known], values[known]
    total = float(completed.sum())
    if not total:
        return pd.DataFrame({"at_least": [], "at_most": []}, index=pd.Index([], name="latency_ms", dtype=float))
    ranks = np.column_stack([np.maximum(1, np.ceil(q / 100 * completed)) for q in PERCENTILES])
    # Reaching an interval's percentile adds what its rank adds to the rank before it (at_least), and
    # what the next rank (or all its requests, past the p99) adds to the last rank's (at_most).
    lower_steps = np.diff(ranks, axis=1, prepend=0)
    upper_steps = np.diff(np.column_stack([ranks - 1, completed + 0.0]), axis=1)
    order = np.argsort(values, axis=None, kind="stable")
    at = values.ravel()[order]
    lower = np.cumsum(lower_steps.ravel()[order])
    upper = (ranks[:, 0] - 1).sum() + np.cumsum(upper_steps.ravel()[order])
    last = np.r_[at[1:] != at[:-1], True]  # the last of equal latencies holds every step taken there
    return pd.DataFrame(
        {"at_least": lower[last] / total, "at_most": upper[last] / total},
        index=pd.Index(at[last], name="latency_ms"),
    )


def queues(run: RunData) -> pd.DataFrame:
    """Where requests waited at the end of each interval: `buffered`, waiting for a pod (the activator's
    or the router's buffer, or a stream's backlog); `in_pods`, held by the pods (queued in their
    queue-proxy or being served); `deepest_pod`, the most one pod held (NaN with no pod); and with a
    stream, `consumer_lag`, the messages not yet consumed."""
    series = run.series
    frame = pd.DataFrame(
        {
            "buffered": _column(series, "requests_buffered").to_numpy(),
            "in_pods": _column(series, "requests_processing").to_numpy(),
        },
        index=_time_index(series),
    )
    rows = run.replica_series
    ends = np.asarray(series["time_ns"], dtype=np.int64) if len(series) else np.zeros(0, dtype=np.int64)
    if len(rows) and len(ends):
        # The rows sampled with the series (a replica that terminated mid-interval has one more, off it).
        sampled = rows[np.isin(np.asarray(rows["time_ns"], dtype=np.int64), ends)]
        held = pd.to_numeric(sampled["requests_held"], errors="coerce").groupby(np.asarray(sampled["time_ns"])).max()
        frame["deepest_pod"] = held.reindex(ends).to_numpy(dtype=float)
    else:
        frame["deepest_pod"] = np.nan
    if "consumer_lag" in series:
        frame["consumer_lag"] = _column(series, "consumer_lag").to_numpy()
    return frame
