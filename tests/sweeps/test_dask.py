"""A real Dask cluster on loopback: a `dask scheduler` and a `dask worker` with two worker processes,
started as separate processes and stopped by the test, running jobs end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from skenario.cli import cli
from skenario.sweeps.runner import Job, run_jobs, workers
from tests.processes import wait_until
from tests.sweeps.test_runner import SCENARIO

# Dask's own connect and dead-connection limits (30 s) made longer than the suite's net
# (pytest-timeout, pyproject.toml), in the cluster's processes and in the test's client: on a busy
# machine a slow start is waited for, and a hang is the net's to end.
DASK_LIMITS = {"distributed.comm.timeouts.connect": "1h", "distributed.comm.timeouts.tcp": "1h"}
DASK_ENVIRONMENT = {"DASK_" + key.upper().replace(".", "__"): value for key, value in DASK_LIMITS.items()}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Waits for the real events, with no time limit: the scheduler writes its file once it listens
    (on a port it chose), then both worker processes register."""
    scheduler_file = tmp_path_factory.mktemp("dask") / "scheduler.json"
    started = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": os.environ | DASK_ENVIRONMENT}
    scheduler_command = ["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0"]
    scheduler_command += ["--scheduler-file", str(scheduler_file), "--dashboard-address", ":0", "--no-show"]
    scheduler = subprocess.Popen([sys.executable, "-m", *scheduler_command], **started)
    processes = [scheduler]
    try:
        wait_until(lambda: _address(scheduler_file) is not None, scheduler, "the scheduler's file")
        address = _address(scheduler_file)
        assert address is not None
        worker_command = ["distributed.cli.dask_worker", "--scheduler-file", str(scheduler_file)]
        worker_command += ["--nworkers", "2", "--nthreads", "1", "--no-dashboard"]
        processes.insert(0, subprocess.Popen([sys.executable, "-m", *worker_command], **started))
        import dask
        from distributed import Client

        with dask.config.set(DASK_LIMITS), Client(address) as client:
            client.wait_for_workers(2)
        yield address
    finally:
        for process in processes:
            process.terminate()
            process.wait()


def _address(scheduler_file: Path) -> str | None:
    """The scheduler's address from its file; None until the file is there and written whole."""
    try:
        return str(json.loads(scheduler_file.read_text())["address"])
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return None


def test_jobs_on_a_two_worker_dask_cluster_give_the_local_rows(cluster: str) -> None:
    jobs = [Job(point=i % 2, seed=i, text=SCENARIO, base_dir=".") for i in range(4)]
    with workers(dask=cluster) as pool:
        assert pool.count == 2
        remote = run_jobs(jobs, pool)
    with workers(1) as pool:
        local = run_jobs(jobs, pool)
    keep = ("point", "seed", "digest", "p99_ms", "replica_hours", "slo_compliance")
    assert [{k: row[k] for k in keep} for row in remote] == [{k: row[k] for k in keep} for row in local]
    assert all(row["phase"] == "Completed" for row in remote)


def test_the_sweep_and_tune_commands_give_the_same_results_on_the_cluster(cluster: str, tmp_path: Path) -> None:
    """The same command with --dask added: the same table, and the same study, as on local processes."""
    scenario = tmp_path / "small.yaml"
    scenario.write_text(SCENARIO)
    sweep = ["sweep", str(scenario), "--set", "workload.replicas=1,2", "--seeds", "2", "--json", "--no-store"]
    tune = ["tune", str(scenario), "--space", "workload.replicas=1..3:int", "--objective", "min:replica_hours"]
    tune += ["--constraint", "p99<=400", "--trials", "4", "--seeds", "2", "--json", "--no-store"]
    for command in (sweep, tune):
        remote = CliRunner().invoke(cli, [*command, "--dask", cluster, *_out(command, tmp_path / "remote")])
        local = CliRunner().invoke(cli, [*command, "--workers", "1", *_out(command, tmp_path / "local")])
        assert remote.exit_code == 0 and local.exit_code == 0, remote.stderr + local.stderr
        assert _results(remote.stdout) == _results(local.stdout)


def _out(command: list[str], folder: Path) -> list[str]:
    return ["--out", str(folder)] if command[0] == "tune" else []


def _results(printed: str) -> object:
    document = json.loads(printed)
    document.pop("files", None)  # where each wrote its files
    return document
