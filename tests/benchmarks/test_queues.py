"""benchmarks/queues.py: its generated SLS month, and both replays of it in fresh processes."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from skenario.scheduling.traces.sls import SlsTrace
from tests.benchmarks import BENCHMARKS

queues: Any = importlib.import_module("queues")  # benchmarks/ is on the path (conftest.py)


def test_the_generated_trace_is_an_sls_trace_of_the_described_jobs(tmp_path: Path) -> None:
    trace = queues.generate(tmp_path, days=1, nodes=4, gap_s=600.0, seed=3)
    read = SlsTrace(trace / "trace.json", trace / "nodes.json")
    assert 100 < len(read.jobs) < 200  # about 144 jobs at one every 10 minutes
    assert all(0 <= j.submitted_at < 86_400 * 10**9 for j in read.jobs)
    assert {j.queue for j in read.jobs} <= set(queues.QUEUES)
    for j in read.jobs:
        maps = [t for t in j.tasks if t.type == "map"]
        assert 1 <= len(maps) <= 20 and len(j.tasks) - len(maps) <= 3
        assert all(t.memory_mb in (1024, 2048, 4096) and 60e9 <= t.duration <= 600e9 for t in maps)
    assert [n.memory // 2**20 for n in read.nodes()] == [131072] * 4


def test_quick_mode_runs_both_replays_on_the_same_trace() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "queues.py"), "--quick", "--json"], capture_output=True, text=True, check=True
    )
    result = json.loads(done.stdout)
    capacity, kube = result["capacity"], result["kube-scheduler"]
    # Every job finishes under the Capacity Scheduler: one AM container each beside its tasks, which
    # kube-scheduler places as one pod each.
    assert capacity["summary"]["finished"] == result["jobs"]
    assert capacity["containers"] == kube["containers"] + result["jobs"]
    assert result["capacity_over_kube_scheduler"] > 0
    fair = result["fair"]
    assert fair["summary"]["scheduler"] == "FairScheduler" and fair["summary"]["finished"] == result["jobs"]
    assert fair["containers"] == capacity["containers"]
    assert result["kueue"]["containers"] == kube["containers"]  # the same pods, admitted first
