"""Whole runs on workers: one scenario document and seed in, the run's figures out.

A `Job` carries the scenario as YAML text (already validated by the parent, so a worker only
runs it), its base directory and the plugin policy the user gave (`--no-plugins`, the modules
allowed), so it can go to a local worker process or to a Dask worker alike. `run_job` is a
plain top-level function for the same reason: both pickle it by name.
A worker sends back an `Outcome`: the run's figures and the run itself (summary, series, replica
lifecycles, timeline) for the parent to keep in its store, so no worker needs the store's disk.
The figures are what a sweep compares settings by: p99 latency, the error rate, replica-hours,
CPU-hours, the cost at the given prices and the share of recording intervals that met the SLO.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import yaml

from skenario.core.time import MILLISECOND
from skenario.results.analysis import cost, limits, slo_summary
from skenario.results.replay import trajectory_figures
from skenario.results.rundata import RunData, stated_objectives
from skenario.results.store import FinishedRun
from skenario.runs import BatchRun, PluginFailed, open_run
from skenario.runs.supervise import worker_signals
from skenario.scenario.simulation import Simulation
from skenario.scenario.wiring.observed import read_observed_run
from skenario.scenario.wiring.plugins import PluginPolicy, applied
from skenario.scheduling.analysis import pod_records
from skenario.scheduling.replay import BatchReplay
from skenario.sweeps.space import SweepError

METRICS = (
    "p99_ms",
    "error_rate",
    "replica_hours",
    "cpu_core_hours",
    "node_hours",
    "cost",
    "slo_met",
    "slo_compliance",
    "at_max_replicas",
    "pods_pending",
    "cluster_full",
    "wait_mean_s",
    "wait_p95_s",
    "unfinished",
    "preempted",
)
"""The figures of every run, in the order tables show them: outcomes, costs, the SLO's verdict (1 met,
0 missed) and compliant share, then what kept the autoscalers from acting, as shares of the run's time:
at the autoscalers' maxReplicas, with the workload's pods Pending, with the cluster full. A batch
replay's runs give the last four instead (BATCH_METRICS)."""
BATCH_METRICS = ("wait_mean_s", "wait_p95_s", "unfinished", "preempted")
"""A batch replay's figures: its jobs' (or workloads', or pods') mean and p95 wait to start, those not
finished at the end, and the containers preempted (YARN), workloads evicted (Kueue) or pods preempted."""


@dataclass(frozen=True)
class Prices:
    """What a replica-hour, a CPU core-hour, a requested GiB-hour and a node-hour cost; None: not counted."""

    replica_hour: float | None = None
    cpu_hour: float | None = None
    gib_hour: float | None = None
    node_hour: float | None = None


@dataclass(frozen=True)
class Job:
    """One run of a sweep: point `point`'s scenario with replication seed `seed`."""

    point: int
    seed: int
    text: str  # the scenario document as YAML
    base_dir: str
    prices: Prices = field(default_factory=Prices)
    objectives: dict[str, Any] | None = None  # analysis.slo arguments; None: the scenario's spec.slo
    plugins: PluginPolicy = field(default_factory=PluginPolicy)  # what the user allowed plugins to be


@dataclass(frozen=True)
class Outcome:
    """What a worker sends back for one job: its row (point, seed, METRICS, digest, phase, error, wall_s)
    and the run to keep, None when the scenario could not even be built."""

    row: dict[str, Any]
    run: FinishedRun | None


def run_job(job: Job) -> Outcome:
    """Run the job's scenario to its end; its figures (METRICS), digest and wall time, or its error.

    A run that fails on its way is kept as `skenario run` keeps one: Failed, with what it recorded.
    """
    started = time.perf_counter()
    row: dict[str, Any] = {"point": job.point, "seed": job.seed}
    simulation: Simulation | None = None
    unbuilt: FinishedRun | None = None
    try:
        with applied(job.plugins):
            run = open_run(Path(f"point {job.point}"), text=job.text, seed=job.seed, base_dir=Path(job.base_dir))
        if isinstance(run, BatchRun):
            return _batch_job(run, row, started)
        if not isinstance(run, Simulation):
            raise SweepError(f"point {job.point}: a sweep runs skenario's scenarios, not a {run.kind} input")
        simulation = run
        summary = simulation.run()
        row["simulation_s"] = time.perf_counter() - started  # the run alone: what a sweep adds is the rest
        data = RunData.from_simulation(simulation)
        row |= figures(data, job.prices, job.objectives)
        if simulation.spec.observed is not None:  # held against what its cluster recorded
            row |= trajectory_figures(data, read_observed_run(simulation.spec, simulation.base_dir))
        row |= {"digest": summary.digest, "phase": simulation.phase.value, "error": None}
    except Exception as exc:  # a failing point is reported, and the sweep goes on
        error = f"{type(exc).__name__}: {exc}"
        row |= dict.fromkeys(METRICS) | {"digest": None, "phase": "Failed", "error": error}
        if simulation is not None:
            simulation.fail(error)
        elif isinstance(exc, PluginFailed):  # its plugin failed before it started: kept as Failed too
            unbuilt = exc.record
    row["wall_s"] = time.perf_counter() - started
    return Outcome(row, FinishedRun.of(simulation, row["wall_s"]) if simulation is not None else unbuilt)


def _batch_job(run: BatchRun, row: dict[str, Any], started: float) -> Outcome:
    """A batch replay's job: its figures (BATCH_METRICS), or its error, and the run to keep."""
    try:
        run.run()
        row["simulation_s"] = time.perf_counter() - started
        row |= dict.fromkeys(METRICS) | batch_figures(run) | {"digest": run.digest(), "phase": run.phase, "error": None}
    except Exception as exc:  # a failing point is reported, and the sweep goes on
        error = f"{type(exc).__name__}: {exc}"
        row |= dict.fromkeys(METRICS) | {"digest": None, "phase": "Failed", "error": error}
        run.fail(error)
    row["wall_s"] = run.wall_s = time.perf_counter() - started
    return Outcome(row, run.record() if row["error"] is None else None)


def batch_figures(run: BatchRun) -> dict[str, Any]:
    """A batch replay's BATCH_METRICS: from its jobs or workloads, or for kube-scheduler alone its pods."""
    rows = run.jobs()
    if rows:
        waits = np.array([r["wait_s"] for r in rows if r["wait_s"] is not None], dtype=float)
        unfinished = sum(1 for r in rows if r["why"] is not None)  # a rejected job is not waiting
    else:  # kube-scheduler alone: the pods are the jobs
        pods = pod_records(run.replay.controller.all_pods()) if isinstance(run.replay, BatchReplay) else []
        waits = np.array([p["wait_s"] for p in pods if p["bound_s"] is not None], dtype=float)
        unfinished = sum(1 for p in pods if p["finished_s"] is None)
    summary = run.batch_summary()
    if run.yarn:
        preempted = summary["summary"]["preemptedContainers"]
    elif "kueue" in summary:
        preempted = summary["kueue"]["evictions"]
    else:
        preempted = summary["summary"]["preempted"]
    return {
        "wait_mean_s": float(waits.mean()) if len(waits) else None,
        "wait_p95_s": float(np.percentile(waits, 95)) if len(waits) else None,
        "unfinished": float(unfinished),
        "preempted": float(preempted),
    }


def figures(run: RunData, prices: Prices, objectives: dict[str, Any] | None = None) -> dict[str, Any]:
    """A run's METRICS. slo_met is 1 when the run met its objectives and 0 when it missed them
    (`analysis.slo_summary`; None when that cannot be known), slo_compliance the share of recording
    intervals that met them, both None without objectives; cost is None without prices; node_hours
    and cluster_full None without a cluster."""
    summary = run.summary
    completed, failed = int(summary["requests_completed"]), int(summary["requests_failed"])
    p99 = summary.get("latency_p99_ns")
    spent = cost(
        run,
        price_per_replica_hour=prices.replica_hour,
        price_per_cpu_hour=prices.cpu_hour,
        price_per_gib_hour=prices.gib_hour,
        price_per_node_hour=prices.node_hour,
    )
    judged = objectives or stated_objectives(run)
    verdict = None if judged is None else slo_summary(run, **judged)
    return {
        "p99_ms": None if p99 is None else p99 / MILLISECOND,
        "error_rate": failed / (completed + failed) if completed + failed else None,
        "replica_hours": spent["replica_hours"],
        "cpu_core_hours": spent["cpu_core_hours"],
        "node_hours": spent["node_hours"],
        "cost": spent["total_cost"],
        "slo_met": None if verdict is None or verdict["met"] is None else float(verdict["met"]),
        "slo_compliance": None if verdict is None else verdict["compliant_fraction"],
        **limits(run),
    }


class Workers(Protocol):
    """Where jobs run: local processes, or a Dask cluster."""

    count: int

    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        """Each job's outcome with its index, as they finish; closing the iterator cancels the rest."""
        ...

    def close(self) -> None: ...


class LocalWorkers:
    """`count` worker processes on this machine.

    They are forked where the system can (a worker starts in milliseconds with skenario already
    imported; a fresh interpreter would take a second) and all start at the first submission, so
    no thread of the parent (a progress bar's) is there to be copied half-way. They ignore Ctrl-C:
    the parent hears it, and `close` after an interruption stops them where they are.

    A worker that dies (the kernel's OOM killer, a crash in a library) breaks the whole pool, and
    every job it held fails with it, whichever worker ran it. Those jobs are suspects: each runs
    again alone on a pool of its own, so the one that kills its worker again is reported Failed
    and the others finish; the jobs not started run on a new pool.
    """

    def __init__(self, count: int) -> None:
        self.count = count
        methods = multiprocessing.get_all_start_methods()
        self._context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self._pool = self._new_pool(count)
        self._interrupted = False

    def _new_pool(self, count: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=count, mp_context=self._context, initializer=worker_signals, initargs=(os.getpid(),)
        )

    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        waiting = dict(enumerate(jobs))
        try:
            while waiting:
                broken = yield from self._run(waiting)
                if broken:
                    self._pool.shutdown(wait=True, cancel_futures=True)
                    self._pool = self._new_pool(self.count)
                    for index in broken:
                        yield index, self._alone(waiting.pop(index))
        except BaseException:
            self._interrupted = True
            raise

    def _run(self, waiting: dict[int, Job]) -> Generator[tuple[int, Outcome], None, list[int]]:
        """The waiting jobs on the pool, each yielded (and taken from `waiting`) as it finishes; the indexes
        of those a broken pool lost.

        At most one job more than there are workers is handed to the pool at a time (one queued for
        each worker to take next), so when a worker dies the jobs lost with it are those few, and the
        jobs never handed over stay waiting for the next pool.
        """
        queue = list(waiting.items())
        in_flight: dict[Future[Outcome], int] = {}
        broken: list[int] = []

        def hand_over() -> None:
            if queue and not broken:
                index, job = queue.pop(0)
                in_flight[self._pool.submit(run_job, job)] = index

        for _ in range(self.count + 1):
            hand_over()
        try:
            while in_flight:
                finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    index = in_flight.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool:
                        broken.append(index)
                        continue
                    del waiting[index]
                    yield index, outcome
                    hand_over()
        finally:
            for future in in_flight:
                future.cancel()
        return sorted(broken)

    def _alone(self, job: Job) -> Outcome:
        """A suspect job on a one-worker pool of its own: its outcome, or Failed if its worker dies again."""
        with self._new_pool(1) as pool:
            try:
                return pool.submit(run_job, job).result()
            except BrokenProcessPool:
                return lost(job, died(job))

    def close(self) -> None:
        if self._interrupted:  # the runs under way are abandoned, not waited for
            processes = list(getattr(self._pool, "_processes", {}).values())  # no public way before 3.14
            self._pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
            return
        self._pool.shutdown(wait=True, cancel_futures=True)


def died(job: Job) -> str:
    """Why a job's worker died twice, as far as the parent can tell: the plugins its scenario runs are
    named, since one that ends its process (`os._exit`) does this too."""
    reason = "its worker process died twice (killed by a signal, out of memory"
    try:
        document = yaml.safe_load(job.text)
    except yaml.YAMLError:
        document = None
    plugins = sorted(set(_plugins_in(document)))
    if plugins:
        return f"{reason}, or a plugin that ended its process: {', '.join(plugins)})"
    return reason + ")"


def _plugins_in(node: Any) -> Iterator[str]:
    """Every plugin a scenario document names (an autoscaler's or a scheduler's `plugin`), events' too."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "plugin" and isinstance(value, str):
                yield value
            else:
                yield from _plugins_in(value)
    elif isinstance(node, list):
        for item in node:
            yield from _plugins_in(item)


def lost(job: Job, reason: str) -> Outcome:
    """The row of a job whose worker was lost, not its run's fault to know: Failed, with why, no run to keep."""
    row: dict[str, Any] = {"point": job.point, "seed": job.seed, **dict.fromkeys(METRICS)}
    return Outcome(row | {"digest": None, "phase": "Failed", "error": reason, "wall_s": None}, None)


class DaskWorkers:
    """The workers of a running Dask distributed cluster (`dask scheduler` at `address`). They need
    skenario installed, and the scenario's files (traces, manifests) at the same paths.

    Dask runs a job again elsewhere when its worker dies, and gives up after a few deaths
    (`KilledWorker`): that job is reported Failed and the rest go on. Closing the results cancels
    the jobs not started; a job already running on a worker finishes there (Dask cannot stop a
    running task) and its outcome is dropped.
    """

    def __init__(self, address: str) -> None:
        from distributed import Client

        try:
            self.client = Client(address, timeout="10s")  # type: ignore[no-untyped-call]
        except ValueError as exc:  # not an address distributed can read
            shape = "not a scheduler's address such as tcp://HOST:8786"
            raise SweepError(f"--dask {address}: {shape} ({exc})", value=address) from None
        except (OSError, TimeoutError) as exc:
            raise SweepError(f"--dask {address}: cannot reach a Dask scheduler there ({exc})", value=address) from None
        self.client.wait_for_workers(1, timeout=30)  # a cluster just started may have none yet
        self.count = max(1, sum(self.client.nthreads().values()))  # type: ignore[no-untyped-call]

    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        from distributed import as_completed as dask_completed

        futures = [self.client.submit(run_job, job, pure=False) for job in jobs]
        index = {future.key: i for i, future in enumerate(futures)}
        try:
            for future in dask_completed(futures):  # type: ignore[no-untyped-call]
                i = index[future.key]
                try:
                    outcome = future.result()
                except Exception as exc:  # run_job reports its run's errors: this is the cluster's (KilledWorker)
                    outcome = lost(jobs[i], f"its Dask worker was lost: {type(exc).__name__}: {exc}")
                yield i, outcome
        finally:
            self.client.cancel(futures)  # type: ignore[no-untyped-call]

    def close(self) -> None:
        self.client.close()  # type: ignore[no-untyped-call]


@contextmanager
def workers(count: int | None = None, dask: str | None = None) -> Iterator[Workers]:
    """Local processes (`count`, the machine's cores by default), or the Dask cluster at `dask`."""
    if count is not None and dask is not None:
        raise SweepError("--workers is for local processes: with --dask, the cluster's workers run the jobs")
    pool: Workers = DaskWorkers(dask) if dask is not None else LocalWorkers(count or os.cpu_count() or 1)
    try:
        yield pool
    finally:
        pool.close()


def run_jobs(
    jobs: Sequence[Job], pool: Workers, done: Callable[[int, Outcome], object] | None = None
) -> list[dict[str, Any]]:
    """Run every job; the rows in the jobs' order, whatever order they finish in. `done` hears each
    outcome (with its job's index) as it comes. On Ctrl-C the jobs not finished are abandoned and the
    rows finished so far come back in `Interrupted`."""
    rows: dict[int, dict[str, Any]] = {}
    results = pool.results(jobs)
    try:
        for index, outcome in results:
            rows[index] = outcome.row
            if done is not None:
                done(index, outcome)
    except KeyboardInterrupt:
        raise Interrupted([rows[i] for i in sorted(rows)]) from None
    finally:
        results.close()  # type: ignore[attr-defined]
    return [rows[i] for i in sorted(rows)]


class Interrupted(Exception):
    """Ctrl-C stopped the jobs; `rows` are those that finished."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__(f"stopped after {len(rows)} run(s)")
        self.rows = rows
