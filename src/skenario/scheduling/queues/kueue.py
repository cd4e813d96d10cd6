"""Kueue on the clock, in front of kube-scheduler: pods wait gated until their workload is admitted.

A pod labelled `kueue.x-k8s.io/queue-name` (or a trace pod with a queue) is created with the
`kueue.x-k8s.io/admission` scheduling gate, as Kueue's pod integration does, and becomes a workload
in its LocalQueue's ClusterQueue. Whenever something changes, Kueue runs scheduling cycles
(`scheduler.schedule`) before kube-scheduler's pass of the same instant:

1. Each ClusterQueue offers its head: the highest priority, then the oldest. Under
   `BestEffortFIFO` a workload found inadmissible steps aside until quota is freed, so later ones
   can pass it; under `StrictFIFO` it stays at the head and blocks its queue.
2. Each head gets its flavors (`kueue_admission.assign_flavors`). Heads are taken not borrowing
   before borrowing, then by priority, then age. One that fits is admitted: its quota is reserved, its
   gate is lifted and its flavor's node labels join its nodeSelector, and kube-scheduler places it.
   One that needs preemption evicts its targets (`preemption_targets`) and is admitted in a later
   cycle, once they are gone.
3. An evicted workload goes back to its queue (its pod is stopped and, as a Job's would be,
   replaced by a new gated pod that starts its run again); a workload whose pod ends frees its quota
   and lets the inadmissible ones try again.

Cycles repeat within an instant while they admit or evict anything.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from skenario.core.environment import Environment
from skenario.core.time import MILLISECOND, SECOND
from skenario.scheduling.affinity import NodeAffinity
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.objects import PodSpec
from skenario.scheduling.pods import Pod, PodEnd
from skenario.scheduling.queues.kueue_admission import (
    Assignment,
    QuotaBook,
    Workload,
    assign_flavors,
    fits,
    preemption_targets,
)
from skenario.scheduling.queues.kueue_config import KueueConfig

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
ADMISSION_GATE = "kueue.x-k8s.io/admission"
CYCLE_ORDER = -1  # before kube-scheduler's pass at the same instant


def local_queue_of(spec: PodSpec, trace_queue: str | None = None) -> str | None:
    """The LocalQueue a pod names: its `kueue.x-k8s.io/queue-name` label, else its trace's queue."""
    return spec.labels.get(QUEUE_LABEL, trace_queue)


def pod_group_of(spec: PodSpec, trace_job: str | None = None) -> str | None:
    """The pod group a pod belongs to: its `kueue.x-k8s.io/pod-group-name` label, else its trace's job."""
    return spec.labels.get(GROUP_LABEL, trace_job)


def gated(spec: PodSpec) -> PodSpec:
    return replace(spec, scheduling_gates=(*spec.scheduling_gates, ADMISSION_GATE))


@dataclass(eq=False, slots=True)
class WorkloadRun:
    """A workload's life: its pods now, when it was created and admitted, and how often evicted. Once finished it
    lets go of its pods (`size` says how many it had)."""

    workload: Workload
    pods: list[Pod]  # now: the pods its admission lets through (replaced after an eviction)
    created_at: int
    local_queue: str
    queued_at: int = 0  # when it last joined its queue (created, or evicted)
    admitted_at: int | None = None
    first_admitted_at: int | None = None
    finished_at: int | None = None
    evictions: int = 0
    assignment: Assignment | None = None
    reason: str = ""  # why its last cycle did not admit it, in Kueue's words
    waits: list[int] = field(default_factory=list)  # ns from each queueing to its admission
    done: set[str] = field(default_factory=set)  # its pods that ran their course
    size: int = 0  # how many pods it has (kept once they are let go of)

    def __post_init__(self) -> None:
        self.size = len(self.pods)


class KueueAdmission:
    """Kueue's queue manager and scheduler over a `SchedulingController`."""

    def __init__(
        self,
        config: KueueConfig,
        controller: SchedulingController,
        env: Environment,
        queue_of: Callable[[Pod], str | None] = lambda pod: local_queue_of(pod.spec),
        group_of: Callable[[Pod], tuple[str, int] | None] = lambda pod: None,
    ) -> None:
        self.config = config
        self.controller = controller
        self.env = env
        self.book = QuotaBook(config)
        self.queue_of = queue_of
        self.group_of = group_of  # a pod group's name and size: its pods are one workload
        self._forming: dict[str, list[Pod]] = {}  # pod groups not all arrived yet
        self._origin: dict[str, str] = {}  # a replacement pod's first name
        self.runs: dict[str, WorkloadRun] = {}  # by workload name (the first pod's)
        self._by_pod: dict[str, WorkloadRun] = {}
        self.queued: dict[str, list[WorkloadRun]] = {name: [] for name in config.cluster_queues}
        self.inadmissible: dict[str, list[WorkloadRun]] = {name: [] for name in config.cluster_queues}
        self.admitted: dict[str, WorkloadRun] = {}
        self.evicted = 0
        # Rows of 7: t, ClusterQueue, CPU (millicores) and memory (bytes) admitted, admitted and queued workloads,
        # and the evictions so far.
        self._series = array("q")
        self._last: dict[int, tuple[int, int, int, int, int]] = {}
        self._names = list(config.cluster_queues)
        self._admitted_in: dict[str, int] = dict.fromkeys(config.cluster_queues, 0)
        self._evicted_in: dict[str, int] = dict.fromkeys(config.cluster_queues, 0)
        self.cycles = 0
        self._cycle_due = False
        arrived = controller.pending.on_add
        gone = controller.on_gone

        def on_arrival(pod: Pod) -> None:
            if arrived is not None:
                arrived(pod)
            if ADMISSION_GATE in pod.spec.scheduling_gates and pod.name not in self._by_pod:
                self._register(pod)

        def on_gone(pod: Pod) -> None:
            self._gone(pod)
            if gone is not None:
                gone(pod)

        controller.pending.on_add = on_arrival
        controller.on_gone = on_gone

    # -- workloads coming and going --------------------------------------------------------------

    def _register(self, pod: Pod) -> None:
        """A gated pod arrived: a workload of its own, or one more of its pod group's (queued once all are here)."""
        group = self.group_of(pod)
        if group is None:
            self._queue_workload(pod.name, [pod])
            return
        name, size = group
        forming = self._forming.setdefault(name, [])
        forming.append(pod)
        if len(forming) >= size:
            del self._forming[name]
            self._queue_workload(name, forming)

    def _queue_workload(self, name: str, pods: list[Pod]) -> None:
        now = self.env.now()
        first = pods[0]
        local = self.queue_of(first) or ""
        cluster_queue = self.config.local_queues[(first.spec.namespace, local)]
        spec = first.spec
        priority = self.config.priority_classes.get(spec.labels.get(PRIORITY_LABEL, ""), spec.priority)
        workload = Workload(name, cluster_queue, priority, now, self._requests(cluster_queue, pods), spec.tolerations)
        run = WorkloadRun(workload, pods, now, local, queued_at=now)
        self.runs[name] = run
        for pod in pods:
            self._by_pod[pod.name] = run
        self.queued[cluster_queue].append(run)
        self._want_cycle()

    def _requests(self, cluster_queue: str, pods: list[Pod]) -> dict[str, int]:
        """What the workload's pods ask for together (`pods` too, where the ClusterQueue counts them)."""
        requests: dict[str, int] = {}
        for pod in pods:
            for resource, amount in (("cpu", pod.spec.cpu_request), ("memory", pod.spec.memory_request)):
                requests[resource] = requests.get(resource, 0) + amount
            for resource, amount in pod.spec.extended.items():
                requests[resource] = requests.get(resource, 0) + amount
        if self.config.cluster_queues[cluster_queue].group_of("pods") is not None:
            requests["pods"] = len(pods)
        return requests

    def _gone(self, pod: Pod) -> None:
        """A pod ended: when the last of its workload's has, the workload is finished and frees its quota."""
        run = self._by_pod.get(pod.name)
        if run is None:
            return
        if pod not in run.pods:
            del self._by_pod[pod.name]  # a pod its eviction replaced
            self._origin.pop(pod.name, None)
            return
        if pod.end is PodEnd.PREEMPTED:
            return
        run.done.add(pod.name)
        if len(run.done) < len(run.pods):
            return
        if run.workload.name in self.admitted:
            del self.admitted[run.workload.name]
            self._admitted_in[run.workload.cluster_queue] -= 1
            self.book.add(run.workload.cluster_queue, run.workload.usage, -1)
            run.workload.usage = {}
        run.finished_at = self.env.now()
        for gone in run.pods:  # nothing reads them again
            del self._by_pod[gone.name]
            self._origin.pop(gone.name, None)
        run.pods, run.done = [], set()
        self._record()
        self._requeue_inadmissible()

    def _requeue_inadmissible(self) -> None:
        """Quota was freed: every inadmissible workload tries again (`QueueInadmissibleWorkloads`)."""
        for name, runs in self.inadmissible.items():
            self.queued[name].extend(runs)
            runs.clear()
        self._want_cycle()

    # -- cycles ----------------------------------------------------------------------------------

    def _want_cycle(self) -> None:
        if not self._cycle_due:
            self._cycle_due = True
            self.env.call_when_settled(self._cycle, CYCLE_ORDER)

    def _head(self, cluster_queue: str) -> WorkloadRun | None:
        runs = self.queued[cluster_queue]
        return min(runs, key=_order) if runs else None

    def _cycle(self) -> None:
        """One scheduling cycle; another follows at once while one admits or evicts something."""
        self._cycle_due = False
        self.cycles += 1
        entries = []
        for name in self.config.cluster_queues:
            head = self._head(name)
            if head is not None:
                entries.append((head, assign_flavors(self.book, head.workload)))
        entries.sort(key=lambda e: (e[1].borrows, -e[0].workload.priority, e[0].workload.created_at))
        progress = False
        for run, assignment in entries:
            queue = self.config.cluster_queues[run.workload.cluster_queue]
            usage = assignment.usage(run.workload.requests) if assignment.mode != "NoFit" else {}
            if assignment.mode == "Fit" and fits(self.book, run.workload, usage):
                self._admit(run, assignment)
                progress = True
            elif assignment.mode == "Fit":
                run.reason = "the quota it fitted was taken earlier in the same cycle"
                continue  # next cycle
            elif assignment.mode == "Preempt":
                targets = preemption_targets(self.book, run.workload, assignment, list(self._admitted_workloads()))
                if targets:
                    names = ", ".join(v.name for v in targets)
                    run.reason = f"{assignment.message}; evicting {names}, to be admitted once they are gone"
                    for victim in targets:
                        self._evict(self._run_of(victim))
                    progress = True
                else:
                    run.reason = f"{assignment.message}; no workloads the preemption policies allow would make room"
                    progress = self._set_aside(run, queue.strategy) or progress
            else:
                run.reason = assignment.message
                progress = self._set_aside(run, queue.strategy) or progress
        self._record()
        if progress:
            self._want_cycle()

    def _set_aside(self, run: WorkloadRun, strategy: str) -> bool:
        """Under BestEffortFIFO the workload steps aside (True: its queue has a new head to try)."""
        if strategy != "BestEffortFIFO":
            return False  # StrictFIFO: it stays at the head, and its queue waits behind it
        self.queued[run.workload.cluster_queue].remove(run)
        self.inadmissible[run.workload.cluster_queue].append(run)
        return bool(self.queued[run.workload.cluster_queue])

    def _admitted_workloads(self) -> list[Workload]:
        return [r.workload for r in self.admitted.values()]

    def _run_of(self, workload: Workload) -> WorkloadRun:
        return self.runs[workload.name]

    def _admit(self, run: WorkloadRun, assignment: Assignment) -> None:
        now = self.env.now()
        workload = run.workload
        self.queued[workload.cluster_queue].remove(run)
        workload.usage = assignment.usage(workload.requests)
        workload.admitted_at = now
        self.book.add(workload.cluster_queue, workload.usage)
        self.admitted[workload.name] = run
        self._admitted_in[workload.cluster_queue] += 1
        run.assignment = assignment
        run.waits.append(now - run.queued_at)
        run.admitted_at = now
        if run.first_admitted_at is None:
            run.first_admitted_at = now
        labels: dict[str, str] = {}
        for flavor in set(assignment.flavors.values()):
            labels.update(self.config.flavors[flavor].node_labels)
        for pod in run.pods:
            spec = pod.spec
            affinity = spec.affinity
            if labels:
                affinity = NodeAffinity({**affinity.node_selector, **labels}, affinity.required, affinity.preferred)
            gates = tuple(g for g in spec.scheduling_gates if g != ADMISSION_GATE)
            self.controller.update_pod(pod, replace(spec, scheduling_gates=gates, affinity=affinity))

    def _evict(self, run: WorkloadRun) -> None:
        """Preempted: the quota returns now, the pod stops, and a new gated pod queues the workload again."""
        workload = run.workload
        del self.admitted[workload.name]
        self._admitted_in[workload.cluster_queue] -= 1
        self.book.add(workload.cluster_queue, workload.usage, -1)
        workload.usage = {}
        workload.admitted_at = None
        run.evictions += 1
        self.evicted += 1
        self._evicted_in[workload.cluster_queue] += 1
        now = self.env.now()
        fresh = []
        for old in run.pods:  # as a Job's: its pods stop, and those that had not finished start again
            if old.name in run.done:
                continue
            self.controller.delete(old, PodEnd.PREEMPTED)
            origin = self._origin.get(old.name, old.name)
            name = f"{origin}-r{run.evictions}"
            pod = self.controller.create(gated(replace(old.spec, name=name, scheduling_gates=())), now, old.duration)
            self._by_pod[name] = run
            self._origin[name] = origin
            fresh.append(pod)
        run.pods, run.done, run.size = fresh, set(), len(fresh)
        workload.requests = self._requests(workload.cluster_queue, fresh)
        self.queued[workload.cluster_queue].append(run)
        run.queued_at = now

    # -- results ---------------------------------------------------------------------------------

    def why(self, name: str) -> str:
        """Why a workload is not admitted now (or that it is, or finished)."""
        run = self.runs.get(name)
        if run is None:
            raise KeyError(f"no workload {name!r}")
        queue = run.workload.cluster_queue
        if run.finished_at is not None:
            return "finished"
        if name in self.admitted:
            return f"admitted to ClusterQueue {queue}"
        if run in self.inadmissible[queue]:
            return f"inadmissible in ClusterQueue {queue}: {run.reason}"
        head = self._head(queue)
        if head is not None and head is not run:
            ahead = sum(1 for r in self.queued[queue] if _order(r) < _order(run))
            return f"waiting in ClusterQueue {queue} behind {ahead} workload(s), the head {head.workload.name}"
        return f"at the head of ClusterQueue {queue}: {run.reason or 'not yet tried'}"

    def _record(self) -> None:
        now = self.env.now()
        for k, name in enumerate(self._names):
            usage = self.book.usage[name]
            cpu = sum(amount for (_, resource), amount in usage.items() if resource == "cpu")
            memory = sum(amount for (_, resource), amount in usage.items() if resource == "memory")
            queued = len(self.queued[name]) + len(self.inadmissible[name])
            row = (cpu, memory, self._admitted_in[name], queued, self._evicted_in[name])
            if self._last.get(k) != row:
                self._last[k] = row
                self._series.extend((now, k, *row))

    def queue_series(self) -> dict[str, npt.NDArray[np.int64]]:
        """Per ClusterQueue, the step series: time (ns), CPU and memory admitted, admitted and queued workloads,
        and the evictions so far."""
        rows = np.array(self._series, dtype=np.int64).reshape(-1, 7)
        return {name: rows[rows[:, 1] == k] for k, name in enumerate(self._names)}

    def queue_rows(self) -> list[dict[str, Any]]:
        """Each ClusterQueue's admitted usage and workloads wherever one changed (cores, GiB)."""
        out = []
        for name, rows in self.queue_series().items():
            for t, _, cpu, memory, admitted, queued, evicted in rows.tolist():
                out.append(
                    {
                        "time": t // MILLISECOND,
                        "clusterQueue": name,
                        "cpu": cpu / 1000,
                        "memory": memory / 1024**3,
                        "admitted.workloads": admitted,
                        "pending.workloads": queued,
                        "evicted.workloads": evicted,
                    }
                )
        return sorted(out, key=lambda r: (r["time"], r["clusterQueue"]))

    def workloads_table(self) -> list[dict[str, Any]]:
        """One row per workload: its ClusterQueue, when it was created, first admitted and finished (s),
        its wait from creation to its first admission, evictions, and why it is not admitted if it is not."""
        out = []
        for name, run in self.runs.items():
            first = run.first_admitted_at
            out.append(
                {
                    "workload": name,
                    "clusterQueue": run.workload.cluster_queue,
                    "localQueue": run.local_queue,
                    "pods": run.size,
                    "created_s": run.created_at / SECOND,
                    "admitted_s": None if first is None else first / SECOND,
                    "finished_s": None if run.finished_at is None else run.finished_at / SECOND,
                    "wait_s": None if first is None else (first - run.created_at) / SECOND,
                    "evictions": run.evictions,
                    "why": None if run.finished_at is not None else self.why(name),
                }
            )
        return out

    def summary(self) -> dict[str, object]:
        """Per ClusterQueue: workloads, admitted, evictions, waits for admission (s) and CPU admitted (cores)."""
        out: dict[str, object] = {}
        end = max(self.env.now(), 1)
        series = self.queue_series()
        for name in self.config.cluster_queues:
            runs = [r for r in self.runs.values() if r.workload.cluster_queue == name]
            waits = np.array([w for r in runs for w in r.waits], dtype=float) / SECOND
            rows = series[name]
            steps = np.append(rows[:, 0], end).astype(float)
            cpu_mean = float((rows[:, 2] * np.diff(steps)).sum() / end / 1000) if len(rows) else 0.0
            out[name] = {
                "cpuAdmittedMean": cpu_mean,
                "cpuAdmittedPeak": float(rows[:, 2].max() / 1000) if len(rows) else 0.0,
                "workloads": len(runs),
                "admitted": sum(1 for r in runs if r.waits),
                "neverAdmitted": sum(1 for r in runs if not r.waits),
                "evictions": sum(r.evictions for r in runs),
                "meanAdmissionWaitSeconds": float(waits.mean()) if len(waits) else 0.0,
                "maxAdmissionWaitSeconds": float(waits.max()) if len(waits) else 0.0,
            }
        waiting = [n for n, r in self.runs.items() if r.finished_at is None and n not in self.admitted]
        return {
            "workloads": len(self.runs),
            "evictions": self.evicted,
            "clusterQueues": out,
            "notAdmitted": {n: self.why(n) for n in waiting[:50]},  # the first 50, with why
        }


def _order(run: WorkloadRun) -> tuple[int, int, str]:
    """A ClusterQueue's order: higher priority first, then older, then by name."""
    return -run.workload.priority, run.workload.created_at, run.workload.name
