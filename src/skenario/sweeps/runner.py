"""Whole runs on workers: one scenario document and seed in, the run's figures out.

A `Job` carries the scenario as YAML text (already validated by the parent, so a worker only
runs it) and its base directory, so it can go to a local worker process or to a Dask worker
alike. `run_job` is a plain top-level function for the same reason: both pickle it by name.
A worker sends back an `Outcome`: the run's figures and the run itself (summary, series, replica
lifecycles, timeline) for the parent to keep in its store, so no worker needs the store's disk.
The figures are what a sweep compares settings by: p99 latency, the error rate, replica-hours,
CPU-hours, the cost at the given prices and the share of recording intervals that met the SLO.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from skenario.core.time import MILLISECOND
from skenario.results.analysis import cost, slo_summary
from skenario.results.rundata import RunData, stated_objectives
from skenario.results.store import FinishedRun
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

METRICS = (
    "p99_ms",
    "error_rate",
    "replica_hours",
    "cpu_hours",
    "cost",
    "slo_compliance",
)
"""The figures of every run, in the order tables show them."""


@dataclass(frozen=True)
class Prices:
    """What a replica-hour, a requested CPU-hour and a requested GiB-hour cost; None: not counted."""

    replica_hour: float | None = None
    cpu_hour: float | None = None
    gib_hour: float | None = None


@dataclass(frozen=True)
class Job:
    """One run of a sweep: point `point`'s scenario with replication seed `seed`."""

    point: int
    seed: int
    text: str  # the scenario document as YAML
    base_dir: str
    prices: Prices = field(default_factory=Prices)
    objectives: dict[str, Any] | None = None  # analysis.slo arguments; None: the scenario's spec.slo


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
    try:
        scenario = parse_scenario(job.text, source=f"point {job.point}")
        simulation = Simulation(scenario, seed=job.seed, base_dir=Path(job.base_dir), scenario_text=job.text)
        summary = simulation.run()
        row |= figures(RunData.from_simulation(simulation), job.prices, job.objectives)
        row |= {"digest": summary.digest, "phase": simulation.phase.value, "error": None}
    except Exception as exc:  # a failing point is reported, and the sweep goes on
        error = f"{type(exc).__name__}: {exc}"
        row |= dict.fromkeys(METRICS) | {"digest": None, "phase": "Failed", "error": error}
        if simulation is not None:
            simulation.fail(error)
    row["wall_s"] = time.perf_counter() - started
    return Outcome(row, None if simulation is None else FinishedRun.of(simulation, row["wall_s"]))


def figures(run: RunData, prices: Prices, objectives: dict[str, Any] | None = None) -> dict[str, Any]:
    """A run's METRICS. slo_compliance is the share of recording intervals that met the objectives
    (`analysis.slo`), None without objectives; cost is None without prices."""
    summary = run.summary
    completed, failed = int(summary["requests_completed"]), int(summary["requests_failed"])
    p99 = summary.get("latency_p99_ns")
    spent = cost(
        run,
        price_per_replica_hour=prices.replica_hour,
        price_per_cpu_hour=prices.cpu_hour,
        price_per_gib_hour=prices.gib_hour,
    )
    judged = objectives or stated_objectives(run)
    compliance = None
    if judged is not None:
        compliance = slo_summary(run, **judged)["compliant_fraction"]
    return {
        "p99_ms": None if p99 is None else p99 / MILLISECOND,
        "error_rate": failed / (completed + failed) if completed + failed else None,
        "replica_hours": spent["replica_hours"],
        "cpu_hours": spent["cpu_hours_requested"],
        "cost": spent["total_cost"],
        "slo_compliance": compliance,
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
    """

    def __init__(self, count: int) -> None:
        self.count = count
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        self._pool = ProcessPoolExecutor(max_workers=count, mp_context=context, initializer=_ignore_interrupts)
        self._interrupted = False

    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        futures: dict[Future[Outcome], int] = {self._pool.submit(run_job, job): i for i, job in enumerate(jobs)}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BaseException:
            self._interrupted = True
            raise
        finally:
            for future in futures:
                future.cancel()

    def close(self) -> None:
        if self._interrupted:  # the runs under way are abandoned, not waited for
            processes = list(getattr(self._pool, "_processes", {}).values())  # no public way before 3.14
            self._pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
            return
        self._pool.shutdown(wait=True, cancel_futures=True)


def _ignore_interrupts() -> None:
    """A worker leaves Ctrl-C to the parent, and dies quietly when the parent terminates it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class DaskWorkers:
    """The workers of a running Dask distributed cluster (`dask scheduler` at `address`). They need
    skenario installed, and the scenario's files (traces, manifests) at the same paths."""

    def __init__(self, address: str) -> None:
        from distributed import Client

        self.client = Client(address, timeout="10s")  # type: ignore[no-untyped-call]
        self.client.wait_for_workers(1, timeout=30)  # a cluster just started may have none yet
        self.count = max(1, sum(self.client.nthreads().values()))  # type: ignore[no-untyped-call]

    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        from distributed import as_completed as dask_completed

        futures = [self.client.submit(run_job, job, pure=False) for job in jobs]
        index = {future.key: i for i, future in enumerate(futures)}
        try:
            for future in dask_completed(futures):  # type: ignore[no-untyped-call]
                yield index[future.key], future.result()
        finally:
            self.client.cancel(futures)  # type: ignore[no-untyped-call]

    def close(self) -> None:
        self.client.close()  # type: ignore[no-untyped-call]


@contextmanager
def workers(count: int | None = None, dask: str | None = None) -> Iterator[Workers]:
    """Local processes (`count`, the machine's cores by default), or the Dask cluster at `dask`."""
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
