"""The openb replay: 8,152 pods on 1,523 nodes through skenario's BatchReplay, against SimPy and a bare heapq loop.

The data are the Alibaba GPU-cluster lists in ``examples/traces`` (``openb_pod_list_default.csv``
and ``openb_node_list_all_node.csv``), read as ``OpenbTrace`` reads them: GPUs pooled per node as
``alibaba.com/gpu-milli``, a pod's duration ``deletion_time - scheduled_time`` (or ``- creation_time``
when it was never scheduled). Two modes:

- ``trace``: each pod runs its trace lifetime once bound, then leaves. The trace's pods live minutes
  to hours spread over about 149 days, so the cluster is nearly empty throughout.
- ``hold``: pods never leave once bound (``dataclasses.replace(pod, duration=None)``), so the cluster
  fills up as in the FGD paper's packing experiments; a pod that fits nowhere stays pending.

Engines, each timed end to end from reading the two CSV files to the summary figures:

- ``skenario``: ``BatchReplay(nodes, pods, settings=SchedulerSettings(plugin_results="none"), seed=0)``
  with the default profile (NodeUnschedulable, TaintToleration, NodeAffinity and NodeResourcesFit
  filters; TaintToleration, NodeAffinity, NodeResourcesFit (LeastAllocated) and
  NodeResourcesBalancedAllocation scores), its rotating feasible-node search with upstream's adaptive
  ``percentageOfNodesToScore`` and a random tie-break from the seed; then ``summary()``. This is the
  baseline of the ratios.
- ``skenario_recording``: the same with ``plugin_results="all"``: every attempt's KEP-140 filter and
  score results kept.
- ``simpy``: what a user writes by hand on SimPy 4: one arrival process, a process per bound pod's
  lifetime, the CSVs read with the ``csv`` module.
- ``heapq``: the same model as a plain-Python heapq event loop, no framework (the "bare floor").

Both peers make the same decision with the same per-node Python loop (``Cluster.pick``): the
NodeResourcesFit filter (pod count under 110, then every requested resource against what the node
has left), then LeastAllocated over cpu and memory plus BalancedAllocation over cpu and memory
(weights 1 and 1, upstream's integer arithmetic) on *every* feasible node, the first best node in
name order winning. They leave out what is constant on these data (TaintToleration and NodeAffinity:
no taints, no affinity in the default pod list) and do *not* reproduce upstream's
``percentageOfNodesToScore`` nor its rotating start: skenario stops at the first
``numFeasibleNodesToFind`` feasible nodes (578 of 1,523 here) and breaks ties at random, so the
peers score more nodes than skenario and may choose other nodes. Their figures are reported beside
skenario's, not checked against them. A pod that fits nowhere waits in a FIFO list; when a pod
leaves a node, the waiting pods whose request fits the freed node's free room are tried again
(skenario's queueing hint, by hand).

Protocol: every (mode, engine) runs in a fresh interpreter (``python benchmarks/scheduling.py --one
ENGINE --mode MODE`` prints one JSON line), so that each run's peak memory is its own: peak memory
is ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of that process (the interpreter, numpy, pandas and
skenario included), reported beside its value just before the timed region. Imports happen before
the clock starts. Rounds interleave the runs, rotating their order; ``× skenario`` is a peer's wall
time over skenario's (no recording, same mode) within each round, the median over rounds reported.
Wall time is ``time.perf_counter()``; absolute times drift 10-25% between runs on a busy machine.

Usage (from the repository root, with the virtualenv active; SimPy from ``pip install -e .[bench]``)::

    python benchmarks/scheduling.py                        # all pods and nodes, 1 round, rich tables
    python benchmarks/scheduling.py --json                 # one JSON object on stdout, nothing else
    python benchmarks/scheduling.py --rounds 3 --modes hold
    python benchmarks/scheduling.py --quick --json         # the first 800 pods on the first 150 nodes
    python benchmarks/scheduling.py --one simpy --mode trace   # one timed run here, one JSON line

The issue's target: the openb replay in under a minute per skenario run.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import subprocess
import sys
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from heapq import heapify, heappop, heappush
from pathlib import Path
from time import perf_counter
from typing import Any, NamedTuple

import numpy as np

from skenario.scheduling.controller import SchedulerSettings
from skenario.scheduling.framework import num_feasible_nodes_to_find
from skenario.scheduling.objects import DEFAULT_MAX_PODS
from skenario.scheduling.replay import BatchReplay
from skenario.scheduling.traces import OpenbTrace
from skenario.scheduling.traces.openb import GPU_MILLI

MISSING: dict[str, str] = {}
"""Optional engines that could not be imported, with the reason."""

try:
    import simpy
except ImportError as error:  # optional extra: pip install -e .[bench]
    simpy = None  # type: ignore[assignment]
    MISSING["simpy"] = f"simpy is not importable ({error}); install it with `pip install -e .[bench]`"

ROOT = Path(__file__).resolve().parents[1]
POD_FILE = ROOT / "examples" / "traces" / "openb_pod_list_default.csv"
NODE_FILE = ROOT / "examples" / "traces" / "openb_node_list_all_node.csv"
QUICK_PODS = 800
QUICK_NODES = 150
SEED = 0
MODES = ("trace", "hold")
ENGINES = ("skenario", "skenario_recording", "simpy", "heapq")
BASELINE = "skenario"
RESOURCES = ("cpu", "memory", GPU_MILLI)
TARGET_S = 60.0
"""The issue's target for one skenario replay of the openb trace, in seconds."""
MEMORY_MEASURE = "resource.getrusage(RUSAGE_SELF).ru_maxrss of a fresh interpreter per run (whole process)"


def _rss_mib() -> float | None:
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.array(values, dtype=float), q)) if len(values) else 0.0


# -- skenario ------------------------------------------------------------------------------------


def run_skenario(mode: str, pods_limit: int | None, nodes_limit: int | None, record: bool) -> dict[str, Any]:
    """Read the files, replay them with BatchReplay (default profile, seed 0), summarise."""
    started = perf_counter()
    trace = OpenbTrace(POD_FILE, NODE_FILE)
    nodes = trace.nodes()[:nodes_limit]
    pods = trace.pods()[:pods_limit]
    if mode == "hold":
        pods = [replace(pod, duration=None) for pod in pods]
    read = perf_counter()
    replay = BatchReplay(nodes, pods, settings=SchedulerSettings(plugin_results="all" if record else "none"), seed=SEED)
    replay.env.run()
    ran = perf_counter()
    summary = replay.summary()
    wall = perf_counter() - started
    controller = replay.controller
    decisions = sum(1 for event in controller.timeline if event.kind in ("PodScheduled", "PodUnscheduled"))
    recorded = sum(len(pod.attempts) for pod in controller.pods.values())
    return {
        "wall_s": wall,
        "read_s": read - started,
        "simulate_s": ran - read,
        "summary_s": wall - (ran - started),
        "pods": summary.pods,
        "bound": summary.bound,
        "pending": summary.pending,
        "preempted": summary.preempted,
        "unschedulable_attempts": summary.unschedulable_attempts,
        "mean_wait_s": summary.mean_wait_s,
        "p99_wait_s": summary.p99_wait_s,
        "allocation_mean": {r: summary.allocation_mean.get(r) for r in RESOURCES},
        "allocation_peak": {r: summary.allocation_peak.get(r) for r in RESOURCES},
        "attempts": decisions,
        "attempts_recorded": recorded if record else None,
        "scheduling_passes": controller.passes,
        "nodes": summary.nodes,
        "nodes_scored_at_most": num_feasible_nodes_to_find(
            len(nodes), replay.framework.profile.percentage_of_nodes_to_score
        ),
    }


# -- the peers' shared parts: reading the files and the per-node decision -------------------------


class PeerNode(NamedTuple):
    name: str
    cpu: int  # millicores
    memory: int  # MiB
    gpu: int  # gpu-milli: devices × 1000


class PeerPod(NamedTuple):
    name: str
    cpu: int
    memory: int
    gpu: int  # num_gpu × gpu_milli
    created: int  # s
    duration: int | None  # s; None: never leaves


def read_nodes(path: Path, limit: int | None = None) -> list[PeerNode]:
    """The openb node list with the csv module, in file order."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    nodes = [PeerNode(r["sn"], int(r["cpu_milli"]), int(r["memory_mib"]), int(r["gpu"]) * 1000) for r in rows]
    return nodes[:limit]


def read_pods(path: Path, limit: int | None = None, hold: bool = False) -> list[PeerPod]:
    """The openb pod list with the csv module, sorted by (creation time, name); durations as OpenbTrace has them."""
    pods = []
    with open(path, newline="", encoding="utf-8") as handle:
        for r in csv.DictReader(handle):
            created = int(r["creation_time"])
            start = int(r["scheduled_time"]) if r["scheduled_time"] else created
            duration = int(r["deletion_time"]) - start if r["deletion_time"] else None
            num_gpu = int(r["num_gpu"])
            pods.append(
                PeerPod(
                    r["name"],
                    int(r["cpu_milli"]),
                    int(r["memory_mib"]),
                    num_gpu * int(r["gpu_milli"]) if num_gpu else 0,
                    created,
                    None if hold else duration,
                )
            )
    pods.sort(key=lambda pod: (pod.created, pod.name))
    return pods[:limit]


class Cluster:
    """The nodes as plain lists, the decision as a per-node Python loop, and the allocation's books."""

    def __init__(self, nodes: Sequence[PeerNode], start: int) -> None:
        self.cap_cpu = [n.cpu for n in nodes]
        self.cap_mem = [n.memory for n in nodes]
        self.cap_gpu = [n.gpu for n in nodes]
        self.max_pods = [DEFAULT_MAX_PODS] * len(nodes)
        self.used_cpu = [0] * len(nodes)
        self.used_mem = [0] * len(nodes)
        self.used_gpu = [0] * len(nodes)
        self.count = [0] * len(nodes)
        self.capacity = (sum(self.cap_cpu), sum(self.cap_mem), sum(self.cap_gpu))
        self.used = [0, 0, 0]  # the cluster's requests, per resource
        self.peak = [0, 0, 0]
        self.area = [0, 0, 0]  # ∫ used dt, resource × s
        self.last = start

    def pick(self, pod: PeerPod) -> int:
        """The node for `pod`, or -1: filter by pod count and resources, score LeastAllocated + Balanced."""
        cpu, mem, gpu = pod.cpu, pod.memory, pod.gpu
        balanced = cpu > 0 or mem > 0  # a best-effort pod scores 0 on BalancedAllocation everywhere
        best, best_score = -1, -1
        nodes = zip(
            self.cap_cpu,
            self.cap_mem,
            self.cap_gpu,
            self.used_cpu,
            self.used_mem,
            self.used_gpu,
            self.count,
            self.max_pods,
            strict=True,
        )
        for i, (ac, am, ag, uc, um, ug, pods, max_pods) in enumerate(nodes):
            # Filter (NodeResourcesFit): room for one more pod, then each requested resource.
            if pods >= max_pods:
                continue
            rc, rm = uc + cpu, um + mem
            if (cpu and rc > ac) or (mem and rm > am) or (gpu and ug + gpu > ag):
                continue
            # Score: LeastAllocated over cpu and memory (integer, truncated), weight 1.
            total = weights = 0
            if ac:
                total += 0 if rc > ac else (ac - rc) * 100 // ac
                weights += 1
            if am:
                total += 0 if rm > am else (am - rm) * 100 // am
                weights += 1
            score = total // weights if weights else 0
            # BalancedAllocation over cpu and memory: 100 × (1 - |f_cpu - f_mem| / 2), weight 1.
            if balanced:
                if ac and am:
                    score += int((1 - abs((min(rc / ac, 1.0) - min(rm / am, 1.0)) / 2)) * 100)
                else:
                    score += 100
            if score > best_score:
                best, best_score = i, score
        return best

    def fits_on(self, pod: PeerPod, i: int) -> bool:
        """Whether `pod` fits node `i` now (resources and pod count only): worth another try."""
        return (
            self.count[i] < self.max_pods[i]
            and (not pod.cpu or self.used_cpu[i] + pod.cpu <= self.cap_cpu[i])
            and (not pod.memory or self.used_mem[i] + pod.memory <= self.cap_mem[i])
            and (not pod.gpu or self.used_gpu[i] + pod.gpu <= self.cap_gpu[i])
        )

    def _book(self, now: int, cpu: int, mem: int, gpu: int) -> None:
        used, area, peak = self.used, self.area, self.peak
        span = now - self.last
        self.last = now
        for k, delta in enumerate((cpu, mem, gpu)):
            area[k] += used[k] * span
            used[k] += delta
            if used[k] > peak[k]:
                peak[k] = used[k]

    def assume(self, pod: PeerPod, i: int, now: int) -> None:
        self.used_cpu[i] += pod.cpu
        self.used_mem[i] += pod.memory
        self.used_gpu[i] += pod.gpu
        self.count[i] += 1
        self._book(now, pod.cpu, pod.memory, pod.gpu)

    def release(self, pod: PeerPod, i: int, now: int) -> None:
        self.used_cpu[i] -= pod.cpu
        self.used_mem[i] -= pod.memory
        self.used_gpu[i] -= pod.gpu
        self.count[i] -= 1
        self._book(now, -pod.cpu, -pod.memory, -pod.gpu)

    def allocation(self, start: int, end: int) -> tuple[dict[str, float | None], dict[str, float | None]]:
        """(time-weighted mean over [start, end], peak) of requested / allocatable per resource."""
        self._book(end, 0, 0, 0)
        mean: dict[str, float | None] = {}
        peak: dict[str, float | None] = {}
        for k, name in enumerate(RESOURCES):
            cap = self.capacity[k]
            mean[name] = self.area[k] / cap / (end - start) if cap and end > start else None
            peak[name] = self.peak[k] / cap if cap else None
        return mean, peak


def _span(pods: Sequence[PeerPod]) -> tuple[int, int]:
    """The run's [start, end] in s, as BatchReplay has it: the first arrival to the last planned end + 1 s."""
    if not pods:
        return 0, 1
    return min(p.created for p in pods), max(p.created + (p.duration or 0) for p in pods) + 1


def _peer_result(
    started: float,
    read: float,
    pods: Sequence[PeerPod],
    cluster: Cluster,
    waits: list[int],
    pending: int,
    attempts: int,
) -> dict[str, Any]:
    ran = perf_counter()
    start, end = _span(pods)
    mean, peak = cluster.allocation(start, end)
    wall = perf_counter() - started
    return {
        "wall_s": wall,
        "read_s": read - started,
        "simulate_s": ran - read,
        "summary_s": wall - (ran - started),
        "pods": len(pods),
        "bound": len(waits),
        "pending": pending,
        "mean_wait_s": sum(waits) / len(waits) if waits else 0.0,
        "p99_wait_s": _percentile(waits, 99),
        "allocation_mean": mean,
        "allocation_peak": peak,
        "attempts": attempts,
        "nodes": len(cluster.cap_cpu),
    }


# -- peer (a): SimPy -----------------------------------------------------------------------------


def run_simpy(mode: str, pods_limit: int | None, nodes_limit: int | None) -> dict[str, Any]:
    """SimPy 4: one arrival process; a bound pod with a lifetime gets a process that releases it."""
    if simpy is None:
        raise RuntimeError(MISSING["simpy"])
    started = perf_counter()
    nodes = read_nodes(NODE_FILE, nodes_limit)
    pods = read_pods(POD_FILE, pods_limit, hold=mode == "hold")
    read = perf_counter()
    env = simpy.Environment()
    cluster = Cluster(nodes, _span(pods)[0])
    pending: list[PeerPod] = []
    waits: list[int] = []
    attempts = 0

    def place(pod: PeerPod) -> bool:
        nonlocal attempts
        attempts += 1
        i = cluster.pick(pod)
        if i < 0:
            return False
        now = env.now
        cluster.assume(pod, i, now)
        waits.append(now - pod.created)
        if pod.duration is not None:
            env.process(running(pod, i))
        return True

    def running(pod: PeerPod, i: int) -> Generator[simpy.Event, Any, None]:
        yield env.timeout(pod.duration)
        cluster.release(pod, i, env.now)
        if pending:
            retry(i)

    def retry(i: int) -> None:
        """The waiting pods that fit the freed node `i`, in arrival order, get another try."""
        still = []
        for waiting in pending:
            if not (cluster.fits_on(waiting, i) and place(waiting)):
                still.append(waiting)
        pending[:] = still

    def arrivals() -> Generator[simpy.Event, Any, None]:
        for pod in pods:
            delay = pod.created - env.now
            if delay > 0:
                yield env.timeout(delay)
            if not place(pod):
                pending.append(pod)

    env.process(arrivals())
    env.run()
    return _peer_result(started, read, pods, cluster, waits, len(pending), attempts)


# -- peer (b): a bare heapq loop -----------------------------------------------------------------

_LEAVE = 0  # before arrivals at the same second: the scheduler sees the room they free
_ARRIVE = 1


def run_heapq(mode: str, pods_limit: int | None, nodes_limit: int | None) -> dict[str, Any]:
    """The same model as a hand-written event loop: (time, kind, seq, pod, node) on a heap."""
    started = perf_counter()
    nodes = read_nodes(NODE_FILE, nodes_limit)
    pods = read_pods(POD_FILE, pods_limit, hold=mode == "hold")
    read = perf_counter()
    cluster = Cluster(nodes, _span(pods)[0])
    heap = [(pod.created, _ARRIVE, seq, pod, -1) for seq, pod in enumerate(pods)]
    heapify(heap)
    seq = len(heap)
    pending: list[PeerPod] = []
    waits: list[int] = []
    attempts = 0

    def place(pod: PeerPod, now: int) -> bool:
        nonlocal attempts, seq
        attempts += 1
        i = cluster.pick(pod)
        if i < 0:
            return False
        cluster.assume(pod, i, now)
        waits.append(now - pod.created)
        if pod.duration is not None:
            heappush(heap, (now + pod.duration, _LEAVE, seq, pod, i))
            seq += 1
        return True

    while heap:
        now, kind, _, pod, i = heappop(heap)
        if kind == _LEAVE:
            cluster.release(pod, i, now)
            if pending:
                still = []
                for waiting in pending:
                    if not (cluster.fits_on(waiting, i) and place(waiting, now)):
                        still.append(waiting)
                pending = still
        elif not place(pod, now):
            pending.append(pod)
    return _peer_result(started, read, pods, cluster, waits, len(pending), attempts)


# -- the protocol --------------------------------------------------------------------------------

RUNNERS: dict[str, Callable[[str, int | None, int | None], dict[str, Any]]] = {
    "skenario": lambda mode, pods, nodes: run_skenario(mode, pods, nodes, record=False),
    "skenario_recording": lambda mode, pods, nodes: run_skenario(mode, pods, nodes, record=True),
    "simpy": run_simpy,
    "heapq": run_heapq,
}


def time_one(engine: str, mode: str, pods: int | None, nodes: int | None) -> dict[str, Any]:
    """One timed run in this process; the imports already happened when this module loaded."""
    baseline = _rss_mib()
    record = {"engine": engine, "mode": mode, **RUNNERS[engine](mode, pods, nodes)}
    record["baseline_rss_mib"] = baseline
    record["peak_rss_mib"] = _rss_mib()
    return record


def run_in_subprocess(engine: str, mode: str, pods: int | None, nodes: int | None) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--one", engine, "--mode", mode]
    if pods is not None:
        command += ["--pods", str(pods)]
    if nodes is not None:
        command += ["--nodes", str(nodes)]
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        raise RuntimeError(f"{engine}/{mode} failed (exit {finished.returncode}):\n{finished.stderr}")
    record: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return record


def measure(
    cases: Sequence[tuple[str, str]],
    rounds: int,
    pods: int | None,
    nodes: int | None,
    progress: Callable[[str], None] | None,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Interleaved rounds of fresh-process runs, the order rotated each round."""
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {case: [] for case in cases}
    for index in range(rounds):
        shift = index % len(cases)
        for mode, engine in [*cases[shift:], *cases[:shift]]:
            record = run_in_subprocess(engine, mode, pods, nodes)
            runs[mode, engine].append(record)
            if progress is not None:
                progress(f"round {index + 1}/{rounds}: {mode:<5} {engine:<18} {record['wall_s']:7.2f} s")
    return runs


def summarise(
    runs: dict[tuple[str, str], list[dict[str, Any]]], settings: dict[str, Any], modes: Sequence[str]
) -> dict[str, Any]:
    results: dict[str, dict[str, Any]] = {}
    for mode in modes:
        base = runs.get((mode, BASELINE))
        by_engine: dict[str, Any] = {}
        for engine in settings["engines_requested"]:
            mine = runs.get((mode, engine))
            if not mine:
                by_engine[engine] = {"wall_s": None, "skipped": MISSING.get(engine, "not run")}
                continue
            first = mine[0]
            wall = statistics.median(run["wall_s"] for run in mine)
            result = {key: value for key, value in first.items() if key not in ("engine", "mode")}
            result.update(
                wall_s=wall,
                runs_s=[run["wall_s"] for run in mine],
                read_s=statistics.median(run["read_s"] for run in mine),
                simulate_s=statistics.median(run["simulate_s"] for run in mine),
                summary_s=statistics.median(run["summary_s"] for run in mine),
                attempts_per_s=first["attempts"] / wall if wall > 0 else None,
                peak_rss_mib=max((run["peak_rss_mib"] or 0.0) for run in mine),
                x_skenario=(
                    statistics.median(r["wall_s"] / b["wall_s"] for r, b in zip(mine, base, strict=True))
                    if base
                    else None
                ),
            )
            if len({(run["bound"], run["pending"], run["attempts"]) for run in mine}) != 1:
                result["warning"] = "bound, pending or attempts differed between rounds"
            if first.get("attempts_recorded") not in (None, first["attempts"]):
                result["warning"] = f"{first['attempts_recorded']} attempts recorded, {first['attempts']} decisions"
            by_engine[engine] = result
        mine = by_engine.get(BASELINE, {})
        results[mode] = {
            "engines": by_engine,
            "target": {
                "text": f"one skenario replay in under {TARGET_S:g} s",
                "limit_s": TARGET_S,
                "skenario_s": mine.get("wall_s"),
                "skenario_recording_s": by_engine.get("skenario_recording", {}).get("wall_s"),
                "met": None
                if mine.get("wall_s") is None
                else all(
                    by_engine[e]["wall_s"] < TARGET_S
                    for e in ("skenario", "skenario_recording")
                    if by_engine.get(e, {}).get("wall_s") is not None
                ),
            },
        }
    return {**settings, "modes": results}


# -- the report ----------------------------------------------------------------------------------


def _f(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.2%}" if value >= 0.001 else f"{value:.4%}"


def print_tables(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console = Console(width=180)
    sizes = f"{summary['pods']:,} pods on {summary['nodes']:,} nodes"
    timing = Table(
        title=(
            f"openb replay, {sizes}{' (quick)' if summary['quick'] else ''}, seed {summary['seed']}, "
            f"{summary['rounds']} round(s), fresh interpreter per run (medians)"
        )
    )
    columns = ("mode", "engine", "wall s", "runs s", "× skenario", "read s", "simulate s", "summary s")
    columns += ("attempts", "attempts/s", "peak RSS MiB", "RSS before MiB")
    for column in columns:
        timing.add_column(column, justify="left" if column in ("mode", "engine") else "right")
    outcome = Table(title=f"What each run comes to ({sizes}; allocation = requested / allocatable, whole cluster)")
    columns = ("mode", "engine", "pods", "bound", "pending", "mean wait s", "p99 wait s")
    columns += ("mean cpu", "mean mem", "mean gpu", "peak cpu", "peak mem", "peak gpu")
    for column in columns:
        outcome.add_column(column, justify="left" if column in ("mode", "engine") else "right")
    for mode, by_mode in summary["modes"].items():
        for engine, r in by_mode["engines"].items():
            if r["wall_s"] is None:
                timing.add_row(mode, engine, "skipped", *[""] * 9)
                continue
            timing.add_row(
                mode,
                engine,
                f"{r['wall_s']:.2f}",
                ", ".join(f"{run:.2f}" for run in r["runs_s"]),
                _f(r["x_skenario"], ".2f"),
                f"{r['read_s']:.2f}",
                f"{r['simulate_s']:.2f}",
                f"{r['summary_s']:.2f}",
                f"{r['attempts']:,}",
                _f(r["attempts_per_s"], ",.0f"),
                _f(r["peak_rss_mib"], ",.0f"),
                _f(r["baseline_rss_mib"], ",.0f"),
            )
            mean, peak = r["allocation_mean"], r["allocation_peak"]
            outcome.add_row(
                mode,
                engine,
                f"{r['pods']:,}",
                f"{r['bound']:,}",
                f"{r['pending']:,}",
                f"{r['mean_wait_s']:.3g}",
                f"{r['p99_wait_s']:.3g}",
                *(_pct(mean[k]) for k in RESOURCES),
                *(_pct(peak[k]) for k in RESOURCES),
            )
        timing.add_section()
        outcome.add_section()
    console.print(timing)
    console.print(outcome)
    scored = summary["skenario_nodes_scored_at_most"]
    console.print(
        f"Peers: the NodeResourcesFit filter, then LeastAllocated + BalancedAllocation (cpu, memory) on every "
        f"feasible node in a per-node Python loop, first best node wins. skenario scores at most {scored:,} of "
        f"{summary['nodes']:,} nodes per attempt (upstream's percentageOfNodesToScore, rotating start) and breaks "
        "ties at random (seed 0); the peers do neither, so their placements, and pods bound, may differ."
    )
    console.print(f"Peak memory: {MEMORY_MEASURE}; 'RSS before' is its value just before the timed region.")
    console.print("gpu is alibaba.com/gpu-milli, pooled per node; wall time includes reading both CSV files.")
    for mode, by_mode in summary["modes"].items():
        for engine, r in by_mode["engines"].items():
            if r["wall_s"] is None:
                console.print(f"[yellow]{mode}/{engine} skipped:[/yellow] {escape(str(r['skipped']))}")
            elif "warning" in r:
                console.print(f"[yellow]{mode}/{engine}:[/yellow] {escape(r['warning'])}")
        goal = by_mode["target"]
        if goal["met"] is None:
            continue
        verdict = "[bold green]MET[/bold green]" if goal["met"] else "[bold red]NOT MET[/bold red]"
        recording = goal["skenario_recording_s"]
        console.print(
            f"Issue target, {mode}: {goal['text']}: {verdict} — {goal['skenario_s']:.2f} s without recording"
            + ("" if recording is None else f", {recording:.2f} s recording every attempt")
            + ("" if not summary["quick"] else " (quick sizes, not the openb replay)")
            + "."
        )


# -- the command line ----------------------------------------------------------------------------


def _names(text: str, known: Sequence[str], what: str, parser: argparse.ArgumentParser) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        parser.error(f"--{what} takes a comma-separated list of {', '.join(known)}; got {text!r}")
    return list(dict.fromkeys(names))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_PODS} pods on the first {QUICK_NODES}")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: trace, hold (default both)")
    parser.add_argument("--engines", default=",".join(ENGINES), help=f"comma-separated (default {','.join(ENGINES)})")
    parser.add_argument("--pods", type=int, default=None, help="use only the first N pods (by arrival)")
    parser.add_argument("--nodes", type=int, default=None, help="use only the first N nodes of the node list")
    parser.add_argument("--one", choices=list(RUNNERS), help="time one engine in this process, print one JSON line")
    parser.add_argument("--mode", choices=MODES, default="trace", help="the mode of --one (default trace)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    for name in ("pods", "nodes"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.quick:
        args.pods = QUICK_PODS if args.pods is None else args.pods
        args.nodes = QUICK_NODES if args.nodes is None else args.nodes
    args.modes = _names(args.modes, MODES, "modes", parser)
    args.engines = _names(args.engines, ENGINES, "engines", parser)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.one is not None:
        if args.one in MISSING:
            print(MISSING[args.one], file=sys.stderr)
            return 2
        print(json.dumps(time_one(args.one, args.mode, args.pods, args.nodes)))
        return 0

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    say = None if args.json else progress
    for engine in args.engines:
        if engine in MISSING and say is not None:
            say(f"skipping: {MISSING[engine]}")
    engines = [engine for engine in args.engines if engine not in MISSING]
    cases = [(mode, engine) for mode in args.modes for engine in engines]
    runs = measure(cases, args.rounds, args.pods, args.nodes, say)
    nodes = len(read_nodes(NODE_FILE, args.nodes))
    settings = {
        "quick": args.quick,
        "rounds": args.rounds,
        "seed": SEED,
        "pod_file": str(POD_FILE.relative_to(ROOT)),
        "node_file": str(NODE_FILE.relative_to(ROOT)),
        "pods": len(read_pods(POD_FILE, args.pods)),
        "nodes": nodes,
        "skenario_nodes_scored_at_most": num_feasible_nodes_to_find(nodes, 0),
        "peers_score_every_feasible_node": True,
        "memory_measure": MEMORY_MEASURE,
        "engines_requested": args.engines,
    }
    summary = summarise(runs, settings, args.modes)
    if args.json:
        print(json.dumps(summary))
    else:
        print_tables(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
