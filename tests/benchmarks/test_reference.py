"""Tests for benchmarks/reference.py: the runs do what they say; no wall-clock assertions."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from typing import Any

from tests.benchmarks import BENCHMARKS

reference: Any = importlib.import_module("reference")


def test_reference_scenario_is_the_one_the_issue_names() -> None:
    from skenario.core.random import Constant, Exponential
    from skenario.core.time import HOUR, MILLISECOND, SECOND
    from skenario.scenario.loader import load_scenario

    spec = load_scenario(reference.SCENARIO).spec
    cluster = spec.cluster_spec()
    assert spec.duration == HOUR
    assert cluster.initial_replicas == 40
    assert cluster.replica.cpu_capacity == 1000
    assert cluster.requests.cpu_time == Exponential(50 * MILLISECOND)
    assert cluster.requests.io_time == Constant(20 * MILLISECOND)
    assert cluster.requests.timeout == 10 * SECOND
    traffic = spec.traffic
    # Between 50 and 500 requests/s: mean ± amplitude.
    assert (traffic.mean - traffic.amplitude, traffic.mean + traffic.amplitude) == (50, 500)  # type: ignore[union-attr]


def test_a_short_reference_run_serves_about_the_expected_number_of_requests() -> None:
    # 36 s of a sinusoid with mean 275/s starting at phase 0: about 275 × 36 × (1 + small) requests.
    record = reference.run_reference(0.01)
    assert 0.9 * 275 * 36 < record["units"] < 1.2 * 275 * 36
    assert record["failed"] == 0  # 40 cores against at most ~25 busy: nothing times out
    assert 0 < record["cpu_request_utilisation"] < 1
    assert record["rows"] == 4  # 36 s recorded every 10 s: 10, 20, 30 and the halt


def test_on_nodes_the_reference_serves_the_same_requests_as_alone() -> None:
    # 4 pods of 1000m (their limit) on each 4-core node never contend: each pod's CPU is what it
    # has alone on an implicit node, so every request takes the same time either way.
    alone, on_nodes = reference.run_reference(0.01), reference.run_reference(0.01, nodes=True)
    for key in ("units", "completed", "failed", "latency_p50_ms", "latency_p99_ms"):
        assert on_nodes[key] == alone[key]


def test_processor_sharing_run_keeps_its_requests_in_flight_and_completes_them_all() -> None:
    for in_flight in (10, 100):
        record = reference.run_processor_sharing(in_flight, completions=2_000)
        assert record["units"] == 2_000  # every request admitted (the first `in_flight` at once) completes
        assert record["in_flight"] == 0


def test_one_run_in_a_fresh_process_prints_one_json_line() -> None:
    finished = subprocess.run(
        [sys.executable, str(BENCHMARKS / "reference.py"), "--one", "ps_10"],
        capture_output=True,
        text=True,
        check=True,
    )
    record = json.loads(finished.stdout.strip().splitlines()[-1])
    assert record["run"] == "ps_10"
    assert record["units"] == reference.PS_COMPLETIONS
