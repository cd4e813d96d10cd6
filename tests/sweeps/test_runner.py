"""Runs on workers: the same rows whatever the worker count and finishing order, a failing run reported
while the others go on, and each run's figures derived from its summary and its replicas."""

from __future__ import annotations

import os
import pickle
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml

from skenario.core.time import MILLISECOND, SECOND
from skenario.results.rundata import RunData
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from skenario.sweeps import runner
from skenario.sweeps.runner import Job, Prices, figures, run_job, run_jobs, workers

SCENARIO = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: small}
spec:
  duration: 2m
  seed: 3
  workload:
    replicas: 2
    resources: {requests: {cpu: 500m, memory: 512Mi}}
    request: {cpuTime: {distribution: exponential, mean: 50ms}, timeout: 1s}
  traffic: {type: poisson, rate: 20/s}
  slo: {latency: 100ms, percentile: 99, errorRate: 0.01}
"""


def jobs(count: int) -> list[Job]:
    return [Job(point=i % 2, seed=i, text=SCENARIO, base_dir=".") for i in range(count)]


def test_one_and_two_workers_give_the_same_rows_in_the_jobs_order() -> None:
    with workers(1) as one:
        alone = run_jobs(jobs(6), one)
    with workers(2) as two:
        paired = run_jobs(jobs(6), two)
    timings = ("wall_s", "simulation_s")
    strip = [{k: v for k, v in row.items() if k not in timings} for row in alone]
    assert strip == [{k: v for k, v in row.items() if k not in timings} for row in paired]
    assert [row["seed"] for row in paired] == list(range(6))
    assert len({row["digest"] for row in paired}) == 6  # six seeds, six runs


def test_a_failing_run_is_reported_and_the_others_go_on() -> None:
    broken = SCENARIO.replace("rate: 20/s", "rate: 20/s, path: missing.csv")
    batch = [jobs(1)[0], Job(point=1, seed=1, text=broken, base_dir="."), jobs(3)[2]]
    with workers(2) as pool:
        rows = run_jobs(batch, pool)
    assert [row["phase"] for row in rows] == ["Completed", "Failed", "Completed"]
    assert rows[1]["error"] and rows[1]["p99_ms"] is None


def test_a_job_that_kills_its_worker_fails_alone_and_the_others_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    # The third job's worker dies by SIGKILL, as under the kernel's OOM killer: the pool breaks, the jobs
    # it held run again alone, and only the killer is reported, Failed. (Workers are forked: they inherit
    # the patched opener.)
    opener = runner.open_run

    def deadly(source: Path, **options: Any) -> object:
        if "name: deadly" in options["text"]:
            os.kill(os.getpid(), signal.SIGKILL)
        return opener(source, **options)

    monkeypatch.setattr(runner, "open_run", deadly)
    batch = jobs(5)
    batch[2] = Job(point=0, seed=2, text=SCENARIO.replace("name: small", "name: deadly"), base_dir=".")
    with workers(2) as pool:
        rows = run_jobs(batch, pool)
    assert [row["phase"] for row in rows] == ["Completed", "Completed", "Failed", "Completed", "Completed"]
    assert "worker process died" in rows[2]["error"]
    assert [row["seed"] for row in rows] == [0, 1, 2, 3, 4]


def test_a_scenario_that_cannot_be_built_sends_back_no_run() -> None:
    outcome = run_job(
        Job(point=0, seed=0, text=SCENARIO.replace("rate: 20/s", "rate: 20/s, path: missing.csv"), base_dir=".")
    )
    assert outcome.run is None and outcome.row["phase"] == "Failed" and "spec.traffic.path" in outcome.row["error"]


def test_a_jobs_figures_are_its_runs() -> None:
    outcome = run_job(jobs(1)[0])
    row = outcome.row
    simulation = Simulation(parse_scenario(SCENARIO), seed=0)
    summary = simulation.run()
    assert row["digest"] == summary.digest
    # The run sent back to be kept is that run: its summary, its series rows and its two replicas.
    assert outcome.run is not None and outcome.run.digest == summary.digest
    assert outcome.run.summary == summary.as_dict()
    assert [r["time_ns"] for r in outcome.run.series] == [r["time_ns"] for r in simulation.recorder.rows(0)]
    assert len(outcome.run.lifecycles) == 2
    assert row["p99_ms"] == summary.latency_p99_ns / MILLISECOND
    finished = summary.requests_completed + summary.requests_failed
    assert row["error_rate"] == summary.requests_failed / finished
    # Two replicas alive for the whole 2 minutes: 4 replica-minutes; half a core each.
    assert row["replica_hours"] == pytest.approx(2 * 2 / 60)
    # OpenCost's cpuCoreHours: each replica the larger of its half-core request and its mean use (20/s of
    # 50 ms shared by two is half a core each on average, so some seeds use a little more).
    used = [replica.processing.cpu.busy_core_ns() / (120 * SECOND) for replica in simulation.model.replicas.values()]
    assert row["cpu_core_hours"] == pytest.approx(sum(max(0.5, cores) * 2 / 60 for cores in used))
    # Its verdict over the whole run, by the summary's own p99 and error rate.
    met = summary.latency_p99_ns <= 100 * MILLISECOND and summary.requests_failed / finished <= 0.01
    assert row["slo_met"] == float(met)
    # No autoscaler bounds it and no cluster holds it: nothing to judge limits by, and no nodes to bill.
    assert row["at_max_replicas"] is None and row["pods_pending"] is None and row["cluster_full"] is None
    assert row["node_hours"] is None
    # The SLO (p99 <= 100 ms, errors <= 1%) interval by interval, from the recorder's rows: an interval
    # breaks it when it completed requests with a p99 over 100 ms, or failed more than 1% of those that finished.
    intervals = simulation.recorder.rows(0)
    broken = 0
    for interval in intervals:
        done, failed = interval["requests_completed"], interval["requests_failed"]
        slow = done > 0 and interval["latency_p99_ms"] is not None and interval["latency_p99_ms"] > 100
        broken += slow or (done + failed > 0 and failed / (done + failed) > 0.01)
    assert row["slo_compliance"] == pytest.approx(1 - broken / len(intervals))


def test_cost_counts_the_prices_given() -> None:
    simulation = Simulation(parse_scenario(SCENARIO), seed=0)
    simulation.run()
    run = RunData.from_simulation(simulation)
    assert figures(run, Prices())["cost"] is None
    # 4 replica-minutes at 6/h, 2 core-minutes at 3/h, 2 GiB-minutes (512Mi x 4 min) at 1.5/h.
    priced = figures(run, Prices(replica_hour=6, cpu_hour=3, gib_hour=1.5))["cost"]
    assert priced == pytest.approx(6 * 4 / 60 + 3 * 1 / 30 + 1.5 * 2 / 60)


def test_a_job_travels_as_plain_data() -> None:
    # What goes to a Dask worker: the job pickles, and its text is the scenario as written.

    job = jobs(1)[0]
    assert pickle.loads(pickle.dumps(job)) == job
    outcome = run_job(job)
    assert pickle.loads(pickle.dumps(outcome)) == outcome
    assert yaml.safe_load(job.text)["metadata"]["name"] == "small"
    assert Path(job.base_dir) == Path(".")
