"""A run's figures as people read them: one labelled list, shared by `skenario run`, `show` and the report.

Every front end shows a run through these rows, so a figure has one label, one unit and one
rounding wherever it appears: `CPU of request (as the HPA reads it) 84.6%`, `latency p99
618.7 ms`, `pod-hours (billed from binding) 27.96`. Durations read in human units (`6m47s`),
instants as clock readings from the run's start (`00:05:00`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from skenario.core.time import MILLISECOND, format_duration, format_human_duration
from skenario.recording.summary import Summary

Row = tuple[str, str]


def ms(ns: float | None) -> str:
    """Nanoseconds as milliseconds to a tenth: `618.7 ms`."""
    return "-" if ns is None else f"{ns / MILLISECOND:,.1f} ms"


def share(value: float | None, places: int = 1) -> str:
    """A ratio as a percentage: `84.6%`."""
    return "-" if value is None else f"{value:.{places}%}"


def count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def summary_rows(summary: Summary) -> list[Row]:
    """What happened in the run, as `skenario run` prints it: outcomes, latency, CPU two ways, replicas."""
    failed = f"{summary.requests_failed:,}"
    if summary.failures:
        failed += " (" + ", ".join(f"{reason}: {n:,}" for reason, n in summary.failures.items()) + ")"
    rows = [
        ("simulated time", format_duration(summary.simulated_ns)),
        ("requests arrived", f"{summary.requests_arrived:,}"),
        ("requests completed", f"{summary.requests_completed:,}"),
        ("requests failed", failed),
        ("requests in flight at halt", f"{summary.requests_in_flight:,}"),
        ("latency p50", ms(summary.latency_p50_ns)),
        ("latency p95", ms(summary.latency_p95_ns)),
        ("latency p99", ms(summary.latency_p99_ns)),
        ("latency mean", ms(summary.latency_mean_ns)),
        ("CPU of request (as the HPA reads it)", share(summary.cpu_request_utilisation)),
        ("CPU of the nodes' allocatable", share(summary.node_cpu_utilisation)),
        ("replicas desired / active at halt", f"{summary.replicas_desired:,} / {summary.replicas_active:,}"),
    ]
    if summary.replicas_pending:
        rows.append(("replicas Pending at halt (no node)", f"{summary.replicas_pending:,}"))
    rows.append(
        ("replicas started / terminated", f"{count(summary.replicas_started)} / {summary.replicas_terminated:,}")
    )
    memory = summary.memory
    if memory:
        rows += [
            ("OOM kills / container restarts", f"{memory['oom_kills']:,} / {memory['container_restarts']:,}"),
            ("evictions (node memory pressure)", f"{memory['evictions']:,}"),
            ("largest working set", f"{memory['working_set_peak_bytes'] / 2**20:,.0f} Mi"),
        ]
    clients = summary.clients
    if clients:
        amplification = clients["attempts"] / summary.requests_arrived if summary.requests_arrived else 1.0
        rows += [
            (
                "attempts (retries)",
                f"{clients['attempts']:,} ({clients['retries']:,}): {amplification:.2f}x the requests",
            ),
            ("attempts abandoned to servers", f"{clients['abandoned']:,}"),
        ]
    return rows


def cost_rows(spend: Mapping[str, Any]) -> list[Row]:
    """`analysis.cost` in OpenCost's terms: what the pods and nodes used and would cost."""
    rows = [
        ("pods bound (billed)", f"{spend['replicas']:,}"),
        ("pod-hours (billed from binding)", f"{spend['replica_hours']:.2f}"),
    ]
    if spend["pods_never_bound"]:
        rows.append(("pods never bound (not billed)", f"{spend['pods_never_bound']:,}"))
    efficiency = share(spend["cpu_efficiency"], 0)
    rows += [
        ("CPU core-hours (request or use, the larger)", f"{spend['cpu_core_hours']:.2f}"),
        (
            "CPU core-hours requested / used",
            f"{spend['cpu_core_request_hours']:.2f} / {spend['cpu_core_usage_hours']:.2f}",
        ),
        ("CPU efficiency (used over requested)", efficiency),
    ]
    if spend["ram_byte_hours"]:
        rows.append(("memory GiB-hours requested", f"{spend['ram_byte_hours'] / 2**30:.2f}"))
    if spend["container_restarts"]:
        rows.append(("container restarts", f"{spend['container_restarts']:,}"))
    if spend["node_hours"] is not None:
        rows.append(
            ("node-hours", f"{spend['node_hours']:.2f} ({spend['node_cpu_core_hours']:.2f} core-hours allocatable)")
        )
    for key, label in (
        ("replica_cost", "pod cost"),
        ("cpu_cost", "CPU cost"),
        ("ram_cost", "memory cost"),
        ("node_cost", "node cost"),
        ("total_cost", "total cost"),
    ):
        if spend[key] is not None:
            rows.append((label, f"{spend[key]:,.4g}"))
    return rows


LIMIT_LABELS = {
    "at_max_replicas": "at maxReplicas",
    "pods_pending": "pods Pending (waiting for a node)",
    "cluster_full": "cluster full (pods waiting, no node group can grow)",
}


def limit_rows(limited: Mapping[str, float | None]) -> list[Row]:
    """What kept the autoscalers from acting, as shares of the run's time (`analysis.limits`); the limits
    that could not apply (no bound, no cluster) are left out."""
    return [(f"time {LIMIT_LABELS[key]}", share(value, 0)) for key, value in limited.items() if value is not None]


def verdict(met: bool | None) -> str:
    """A verdict as people read it: met, missed, or unknown (None: nothing to judge it by)."""
    return "unknown" if met is None else ("met" if met else "missed")


def slo_verdict(result: Mapping[str, Any]) -> str:
    """`analysis.slo_summary`'s verdict in a few words: `met`, `missed`, or `unknown (why)`."""
    word = verdict(result["met"])
    return f"{word} ({result['unknown']})" if result["met"] is None and result.get("unknown") else word


def slo_rows(result: Mapping[str, Any]) -> list[Row]:
    """`analysis.slo_summary` as people read it: the verdict first, then why."""
    percentile = result["percentile"]
    latency = "-" if result["latency_ms"] is None else f"{result['latency_ms']:,.1f} ms"
    rate = "-" if result["error_rate"] is None else f"{result['error_rate']:.3%}"
    fraction = share(result["compliant_fraction"], 0)
    return [
        ("verdict", slo_verdict(result)),
        (f"objective: latency p{percentile}", f"at most {result['latency_target_ms']:g} ms"),
        ("objective: error rate", f"at most {result['error_rate_target']:.2%}"),
        (f"latency p{percentile} over the run", f"{latency} ({verdict(result['latency_met'])})"),
        ("error rate over the run", f"{rate} ({verdict(result['error_rate_met'])})"),
        (
            "recording intervals meeting both",
            f"{fraction} ({result['compliant_intervals']:,} of {result['intervals']:,}: "
            f"{result['latency_violations']:,} over the latency, {result['error_violations']:,} over the error rate)",
        ),
    ]


def node_cpu_rows(shares: Iterable[float | None]) -> list[Row]:
    """The nodes' CPU used over allocatable, each over its own time in the cluster: the least and most busy."""
    known = [value for value in shares if value is not None]
    if not known:
        return []
    return [("CPU used of allocatable, least / most busy node", f"{share(min(known))} / {share(max(known))}")]


def wait(seconds: float | None) -> str:
    """A wait given in seconds, in human units: `6m47s`."""
    return "-" if seconds is None else format_human_duration(round(seconds * 1e9))


def figure_text(value: Any) -> str:
    """A figure as a table shows it: three significant figures, thousands separated."""
    return f"{value:,.3g}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else str(value)


def batch_rows(batch: Mapping[str, Any]) -> list[Row]:
    """A batch replay's figures as its summary holds them: the scheduler, its scalars, then each queue's."""
    summary = batch["summary"]
    rows = [("scheduler", str(batch["scheduler"]))]
    rows += [
        (key, figure_text(value))
        for key, value in summary.items()
        if key != "scheduler" and not isinstance(value, Mapping | list)
    ]
    for queue, figures in summary.get("queues", {}).items():
        rows += [(f"{queue}: {key}", figure_text(value)) for key, value in figures.items()]
    for queue, figures in batch.get("kueue", {}).get("clusterQueues", {}).items():
        rows += [(f"ClusterQueue {queue}: {key}", figure_text(value)) for key, value in figures.items()]
    return rows
