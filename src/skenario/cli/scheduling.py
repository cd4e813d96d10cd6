"""Output shared by `run` (a scenario with spec.cluster) and `schedule` (a batch trace): the scheduling
summary table and the KEP-140 result files (a per-pod CSV, and every attempt's plugin results as JSON)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.table import Table

from skenario.core.time import format_duration
from skenario.results.files import atomic_path
from skenario.results.podresults import ResultsFile
from skenario.results.readout import wait
from skenario.scheduling.analysis import POD_COLUMNS, SchedulingSummary, pod_rows
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.departed import AnyPod
from skenario.scheduling.queues.yarn_replay import YarnSummary


def scheduling_table(
    summary: SchedulingSummary, title: str = "scheduling", extra: Iterable[tuple[str, str]] = ()
) -> Table:
    table = Table(title=title, show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    rows = [
        ("pods created", f"{summary.pods:,}"),
        ("pods bound", f"{summary.bound:,}"),
        ("pods never bound (deleted waiting, or pending at the end)", f"{summary.never_bound:,}"),
        ("pods pending at the end", f"{summary.pending:,}"),
        ("pods preempted", f"{summary.preempted:,}"),
        ("unschedulable attempts", f"{summary.unschedulable_attempts:,}"),
        ("wait for a node, mean (all pods)", wait(summary.mean_wait_s)),
        ("wait for a node, p99 / longest", f"{wait(summary.p99_wait_s)} / {wait(summary.max_wait_s)}"),
    ]
    for resource, mean in summary.allocation_mean.items():
        peak = summary.allocation_peak.get(resource, 0.0)
        rows.append((f"allocation of {resource}, mean / peak", f"{mean:.1%} / {peak:.1%}"))
    rows.append(("nodes at the end", f"{summary.nodes:,}"))
    rows.extend(extra)
    for what, value in rows:
        table.add_row(what, value)
    return table


YARN_SCHEDULERS = ("CapacityScheduler", "FairScheduler")


def capacity_table(
    summary: YarnSummary, title: str = "Capacity Scheduler", extra: Iterable[tuple[str, str]] = ()
) -> Table:
    """A YARN replay's summary: its jobs, their waits, and each leaf queue's share of the cluster."""
    table = Table(title=title)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    rows = [
        ("jobs submitted / finished", f"{summary.jobs:,} / {summary.finished:,}"),
        ("jobs rejected at submission (maximum-applications)", f"{summary.rejected:,}"),
        ("jobs unfinished at the end", f"{summary.unfinished:,}"),
        ("containers allocated (AMs included)", f"{summary.containers:,}"),
        (
            "wait for the AM to start, mean / p95 / longest",
            " / ".join(map(wait, (summary.mean_wait_s, summary.p95_wait_s, summary.max_wait_s))),
        ),
        ("run time, mean", wait(summary.mean_runtime_s)),
        ("containers preempted", f"{summary.preempted:,}"),
        ("memory allocated, mean / peak", f"{summary.allocated_memory_mean:.1%} / {summary.allocated_memory_peak:.1%}"),
    ]
    for q in summary.queues:
        rows.append(
            (
                f"{q.queue}: jobs, mean wait, memory mean / peak",
                f"{q.jobs:,}, {wait(q.mean_wait_s)}, {q.allocated_memory_mean:.1%} / {q.allocated_memory_peak:.1%}",
            )
        )
    rows.extend(extra)
    for what, value in rows:
        table.add_row(what, value)
    return table


def batch_table(batch: dict[str, Any], title: str, extra: Iterable[tuple[str, str]] = ()) -> Table:
    """A batch replay's summary as its `batch` document holds it (`skenario.runs.batch`): a YARN
    scheduler's table, or kube-scheduler's with Kueue's admissions under it."""
    summary = batch["summary"]
    if batch["scheduler"] in YARN_SCHEDULERS:
        return capacity_table(YarnSummary.from_dict(summary), title=title, extra=extra)
    rows = kueue_rows(batch["kueue"]) if "kueue" in batch else []
    return scheduling_table(SchedulingSummary.from_dict(summary), title=title, extra=[*extra, *rows])


BATCH_FIGURES = (
    ("scheduler", "scheduler"),
    ("work", "jobs submitted / finished (YARN), or pods / bound"),
    ("unfinished", "jobs not finished, or pods never bound"),
    ("waits", "wait to start: mean / p95 (p99 for pods) / longest"),
    ("preempted", "containers or pods preempted"),
    ("evictions", "Kueue's evictions"),
    ("allocated", "allocated, mean / peak (memory for YARN, CPU else)"),
)
"""What `skenario compare` holds batch replays side by side by (`batch_figure`)."""


def batch_figure(batch: dict[str, Any], key: str) -> str:
    """One of BATCH_FIGURES, from a replay's `batch` document, as the tables print it."""
    s = batch["summary"]
    yarn = batch["scheduler"] in YARN_SCHEDULERS
    if key == "scheduler":
        return str(batch["scheduler"])
    if key == "work":
        return f"{s['jobs']:,} / {s['finished']:,}" if yarn else f"{s['pods']:,} / {s['bound']:,}"
    if key == "unfinished":
        return f"{s['unfinished']:,}" if yarn else f"{s.get('neverBound', 0):,}"
    if key == "waits":
        tail = s["p95WaitSeconds"] if yarn else s["p99WaitSeconds"]
        return " / ".join(map(wait, (s["meanWaitSeconds"], tail, s["maxWaitSeconds"])))
    if key == "preempted":
        return f"{s['preemptedContainers'] if yarn else s['preempted']:,}"
    if key == "evictions":
        return f"{batch['kueue']['evictions']:,}" if "kueue" in batch else "-"
    if yarn:
        return f"{s['allocatedMemoryMean']:.1%} / {s['allocatedMemoryPeak']:.1%}"
    return f"{s['allocationMean'].get('cpu', 0.0):.1%} / {s['allocationPeak'].get('cpu', 0.0):.1%}"


def waiting_table(jobs: list[dict[str, Any]], limit: int = 10) -> Table | None:
    """The jobs or workloads not finished at the end, longest waiting first, with why; None if none."""
    key = "job" if jobs and "job" in jobs[0] else "workload"
    start = "submitted_s" if key == "job" else "created_s"
    waiting = sorted((j for j in jobs if j.get("why")), key=lambda j: j[start])
    if not waiting:
        return None
    table = Table(title=f"{key}s not finished at the end ({len(waiting):,}; the {min(limit, len(waiting))} oldest)")
    for column in (key, "queue", "since", "why"):
        table.add_column(column)
    for j in waiting[:limit]:
        queue = j.get("queue") or j.get("clusterQueue") or ""
        table.add_row(str(j[key]), str(queue), format_duration(round(j[start] * 1e9)), str(j["why"]))
    return table


def kueue_rows(kueue: dict[str, Any]) -> list[tuple[str, str]]:
    """Kueue's admissions per ClusterQueue, as rows for the scheduling table."""
    rows = [("Kueue: workloads / evictions", f"{kueue['workloads']:,} / {kueue['evictions']:,}")]
    for name, q in kueue["clusterQueues"].items():
        waits = f"{wait(q['meanAdmissionWaitSeconds'])} / {wait(q['maxAdmissionWaitSeconds'])}"
        rows.append(
            (
                f"ClusterQueue {name}: admitted / never, wait mean / longest",
                f"{q['admitted']:,} / {q['neverAdmitted']:,}, {waits}",
            )
        )
        rows.append(
            (
                f"ClusterQueue {name}: CPUs admitted, mean / peak",
                f"{q['cpuAdmittedMean']:,.1f} / {q['cpuAdmittedPeak']:,.1f}",
            )
        )
    return rows


JOB_COLUMNS = (
    "job",
    "queue",
    "user",
    "state",
    "submitted_s",
    "started_s",
    "finished_s",
    "wait_s",
    "runtime_s",
    "containers",
    "preempted",
    "rejected",
    "why",
)
WORKLOAD_COLUMNS = (
    "workload",
    "clusterQueue",
    "localQueue",
    "pods",
    "created_s",
    "admitted_s",
    "finished_s",
    "wait_s",
    "evictions",
    "why",
)
"""`--jobs` under Kueue: one row per workload (`KueueAdmission.workloads_table`)."""
KUEUE_QUEUE_COLUMNS = (
    "time",
    "clusterQueue",
    "cpu",
    "memory",
    "admitted.workloads",
    "pending.workloads",
    "evicted.workloads",
)
QUEUE_COLUMNS = (
    "time",
    "queue",
    "allocated.memory",
    "allocated.vcores",
    "pending.memory",
    "running.applications",
    "pending.applications",
    "preempted.containers",
)


def write_jobs_csv(rows: Iterable[dict[str, object]], path: Path, columns: tuple[str, ...] = JOB_COLUMNS) -> None:
    """One row per job or workload (or per queue and change) of a queue replay, written whole or not at all."""
    with atomic_path(path) as partial, partial.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def write_pod_csv(pods: Iterable[AnyPod], path: Path) -> None:
    """One row per pod (`POD_COLUMNS`), written as it is made and whole or not at all."""
    with atomic_path(path) as partial, partial.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=POD_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(pod_rows(pods))


def write_results(
    controller: SchedulingController, pods: Path | None, results: Path | None, spilled: ResultsFile | None = None
) -> None:
    """The per-pod table as CSV, and KEP-140's PodResults with every attempt as JSON, each written whole
    (the attempts read back from `spilled` when they went there as they happened)."""
    if pods is not None:
        write_pod_csv(controller.all_pods(), pods)
    if results is None:
        return
    if spilled is not None:
        spilled.write(controller.all_pods(), spilled.events())
        return
    timeline = [event.as_dict() for event in controller.timeline]
    document = {"pods": [pod.result() for pod in controller.all_pods()], "timeline": timeline}
    with atomic_path(results) as partial:
        Path(partial).write_text(json.dumps(document, indent=1), encoding="utf-8")
