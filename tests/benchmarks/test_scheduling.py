"""benchmarks/scheduling.py in its quick mode: the JSON's shape and invariants, no wall-clock assertions."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.benchmarks import BENCHMARKS

ENGINES = {"skenario", "skenario_recording", "simpy", "heapq"}
RESOURCES = {"cpu", "memory", "alibaba.com/gpu-milli"}
RUN_KEYS = {
    "wall_s",
    "runs_s",
    "x_skenario",
    "read_s",
    "simulate_s",
    "summary_s",
    "pods",
    "bound",
    "pending",
    "mean_wait_s",
    "p99_wait_s",
    "allocation_mean",
    "allocation_peak",
    "attempts",
    "attempts_per_s",
    "peak_rss_mib",
    "baseline_rss_mib",
    "nodes",
}


def test_quick_mode_prints_one_json_object_with_consistent_results() -> None:
    command = [sys.executable, str(BENCHMARKS / "scheduling.py"), "--quick", "--json"]
    finished = subprocess.run(command, capture_output=True, text=True, check=True)
    summary = json.loads(finished.stdout)  # one JSON object and nothing else on stdout
    assert summary["quick"] is True
    assert summary["rounds"] == 1
    assert summary["seed"] == 0
    assert summary["pods"] == 800
    assert summary["nodes"] == 150
    assert 0 < summary["skenario_nodes_scored_at_most"] <= summary["nodes"]
    assert summary["memory_measure"]
    assert set(summary["modes"]) == {"trace", "hold"}

    for mode, by_mode in summary["modes"].items():
        engines = by_mode["engines"]
        assert set(engines) == ENGINES
        for engine, run in engines.items():
            if run["wall_s"] is None:  # a peer that cannot be imported is reported as skipped
                assert engine == "simpy" and run["skipped"]
                continue
            assert set(run) >= RUN_KEYS, f"{mode}/{engine} lacks {RUN_KEYS - set(run)}"
            assert run["pods"] == summary["pods"]
            assert run["nodes"] == summary["nodes"]
            assert 0 < run["bound"] <= run["pods"]
            assert run["pending"] >= 0
            assert run["attempts"] >= run["bound"]
            assert run["wall_s"] > 0 and run["x_skenario"] > 0 and run["attempts_per_s"] > 0
            assert len(run["runs_s"]) == summary["rounds"]
            assert set(run["allocation_mean"]) == set(run["allocation_peak"]) == RESOURCES
            for resource in RESOURCES:
                mean, peak = run["allocation_mean"][resource], run["allocation_peak"][resource]
                assert 0 <= mean <= peak * (1 + 1e-9) and peak <= 1
            assert run["mean_wait_s"] >= 0 and run["p99_wait_s"] >= 0
            if mode == "hold":  # nothing leaves, so every pod is either placed or still waiting
                assert run["bound"] + run["pending"] == run["pods"]
        assert engines["skenario"]["x_skenario"] == 1
        recorded = engines["skenario_recording"]
        assert recorded["attempts_recorded"] == recorded["attempts"]  # one KEP-140 record per attempt
        assert engines["skenario"]["attempts_recorded"] is None
        # The two skenario runs differ only in what they keep.
        for key in ("bound", "pending", "attempts", "mean_wait_s", "allocation_peak"):
            assert recorded[key] == engines["skenario"][key]
        target = by_mode["target"]
        assert target["limit_s"] == 60
        assert isinstance(target["met"], bool)
