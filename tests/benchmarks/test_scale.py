"""benchmarks/scale.py: its generated trace, the decisions of the code before issue 32, and its quick mode."""

from __future__ import annotations

import csv
import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from skenario.cli import cli
from tests.benchmarks import BENCHMARKS

scale: Any = importlib.import_module("scale")  # benchmarks/ is on the path (conftest.py)

# The bindings digest of the trace below as the code before issue 32 (commit cd78f32, `skenario
# schedule --no-plugin-results --pods`) placed it: 800 pods (a tenth of priority 1) arriving at 2/s on
# 100 nodes of 8 CPUs, which waits (1,873 unschedulable attempts) and preempts (16 pods). The head
# search, skipped plugins, recording policies and preemption shortcuts of issue 32 must not move a pod.
BEFORE_ISSUE_32 = "996c7d478257781f"


def test_the_scheduler_places_a_contended_trace_as_it_did_before_issue_32(tmp_path: Path) -> None:
    trace = scale.generate(tmp_path / "trace", 800, 100, 2.0, seed=7, high_priority=0.1, node_cpus=8)
    pods = tmp_path / "pods.csv"
    result = CliRunner().invoke(
        cli, ["schedule", str(trace / "pods.csv"), "--nodes", str(trace / "nodes.csv"), "--json", "--pods", str(pods)]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["preempted"] > 0 and summary["unschedulableAttempts"] > 0  # the trace exercises both
    assert scale.bindings_digest(pods) == BEFORE_ISSUE_32


def test_the_generated_trace_follows_the_issues_description(tmp_path: Path) -> None:
    """250m..2 CPUs in steps of 250m with 512 MiB each, 10 min .. 2 h, Poisson arrivals at the rate."""
    trace = scale.generate(tmp_path, 20_000, 10, 50.0, seed=1)
    rows = list(csv.DictReader((trace / "pods.csv").open()))
    cpu = np.array([int(r["cpu"].removesuffix("m")) for r in rows])
    memory = np.array([int(r["memory"].removesuffix("Mi")) for r in rows])
    duration = np.array([float(r["duration"]) for r in rows])
    created = np.array([float(r["created"]) for r in rows])
    assert set(cpu.tolist()) == set(range(250, 2001, 250)) and (memory == cpu // 250 * 512).all()
    assert duration.min() >= 600 and duration.max() <= 7200
    gaps = np.diff(created)
    assert (gaps >= 0).all()
    # Exponential gaps of mean 1/50 s: their mean within 3 standard errors, their CV near 1.
    assert abs(gaps.mean() - 0.02) < 3 * 0.02 / np.sqrt(len(gaps))
    assert abs(gaps.std() / gaps.mean() - 1) < 0.05
    nodes = list(csv.DictReader((trace / "nodes.csv").open()))
    assert len(nodes) == 10 and nodes[0] == {"name": "node-00000", "cpu": "32", "memory": "128Gi"}


def test_quick_mode_prints_one_json_object_with_consistent_runs() -> None:
    finished = subprocess.run(
        [sys.executable, str(BENCHMARKS / "scale.py"), "--quick", "--json"], capture_output=True, text=True, check=True
    )
    result = json.loads(finished.stdout)
    runs = result["runs"]
    assert set(runs) == {"nodes-500", "first-20k", "envelope", "nodes-50000", "results"}
    for name, run in runs.items():
        now, size = run["current"], run["size"]
        assert now["pods"] == (size["first"] or size["pods"]), name
        assert now["bound"] <= now["pods"] and now["peak_rss_mib"] > 0 and now["replay_s"] <= now["wall_s"]
    # The same trace and seed: the envelope and the run writing results place every pod alike.
    assert runs["results"]["current"]["digest"] == runs["envelope"]["current"]["digest"]
    assert runs["results"]["current"]["results_mib"] > 0
    ratios = result["ratios"]
    assert ratios["per_pod_5000_over_500"] > 0 and ratios["peak_rss_envelope_over_first_20k"] > 0
    service = result["service"]
    assert [entry["nodes"] for entry in service.values()] == [100, 1_000, 3_000]
    assert all(entry["current"]["run_s"] > 0 and entry["current"]["peak_rss_mib"] > 0 for entry in service.values())
