"""benchmarks/queueing.py in its quick mode: the JSON's shape and invariants, no wall-clock assertions."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.benchmarks import BENCHMARKS


def test_quick_mode_prints_one_json_object_with_consistent_results() -> None:
    command = [sys.executable, str(BENCHMARKS / "queueing.py"), "--quick", "--json"]
    finished = subprocess.run(command, capture_output=True, text=True, check=True)
    summary = json.loads(finished.stdout)  # one JSON object and nothing else on stdout
    assert summary["quick"] is True
    assert summary["rounds"] == 1

    head = summary["headline"]
    assert head["population"] == 1000
    assert head["classes"] == ["browse", "search", "checkout"]
    assert len(head["centres"]) == 5
    assert head["tolerances"] == ["0.001", "1e-10"]
    assert head["exact_vectors"] == 1001**3
    assert "1,003,003,001 population vectors" in head["exact_refusal"]
    assert set(head["results"]) == {"skenario", "pure_python", "line_pfqn_bs", "line_solver_mva"}
    for tag in head["tolerances"]:
        mine = head["results"]["skenario"][tag]
        loops = head["results"]["pure_python"][tag]
        assert mine["median_s"] > 0 and loops["median_s"] > 0
        assert mine["x_skenario"] == 1
        assert loops["iterations"] == mine["iterations"] > 0  # the same stopping rule, the same path
        assert loops["rel_diff_vs_skenario"] <= 1e-9
        assert head["pure_python_agreement"]["max_rel_diff"][tag] <= 1e-9
        for name in head["classes"]:
            demand = sum(head["demands"][name].values())
            assert mine["response"][name] >= demand  # at least the bare demand
            # Little's law over the cycle: X (Z + R) = N.
            cycle = head["think_times"][name] + mine["response"][name]
            assert mine["throughput"][name] * cycle == pytest.approx(head["population"])
    pdq, converged = (head["results"]["skenario"][tag] for tag in head["tolerances"])
    assert converged["iterations"] > pdq["iterations"]
    for name in head["classes"]:
        assert pdq["response"][name] == pytest.approx(converged["response"][name], rel=1e-3)

    line = summary["line_solver"]
    assert set(line) == {"available", "version", "ran", "reason"}
    for engine in ("line_pfqn_bs", "line_solver_mva"):
        result = head["results"][engine]["1e-10"]
        if line["ran"]:
            assert result["iterations"] > 0
            assert result["rel_diff_vs_skenario"] < 1e-6  # the same fixed point, another stopping rule
        else:
            assert result["median_s"] is None and result["skipped"]
            assert line["reason"]

    exact = summary["exact"]
    populations = [row["population"] for row in exact["rows"]]
    assert populations == sorted(populations) and len(populations) >= 2
    for row in exact["rows"]:
        assert row["vectors"] == (row["population"] + 1) ** 3
        assert row["median_s"] > 0 and row["ns_per_vector"] > 0
        for name in head["classes"]:
            bound = row["population"] / (head["think_times"][name] + sum(head["demands"][name].values()))
            assert 0 < row["throughput"][name] <= bound * (1 + 1e-12)
    assert exact["headline_estimate_s"] > 0
    assert exact["tried"]
    best = exact["largest_within_budget"]
    if best is not None:  # chosen among the measured ones that fit, by construction
        assert best["vectors"] == (best["population"] + 1) ** 3
        assert best["median_s"] <= exact["budget_s"]
        assert best["population"] == max(t["population"] for t in exact["tried"] if t["median_s"] <= exact["budget_s"])

    ld = summary["load_dependent"]
    app = next(c for c in ld["centres"] if c["servers"] == 300)
    capacity = app["servers"] / app["demand"]
    previous = 0.0
    for row in ld["rows"]:
        assert row["exact"] is True
        assert previous < row["throughput"] <= capacity * (1 + 1e-9)
        assert row["app_residence"] >= app["demand"] * (1 - 1e-12)
        assert row["throughput"] * (ld["think_time"] + row["response"]) == pytest.approx(row["population"])
        previous = row["throughput"]

    requirement = summary["requirement"]
    assert requirement["approx_pdq_s"] == pdq["median_s"]
    assert requirement["approx_converged_s"] == converged["median_s"]
    assert isinstance(requirement["under_1s"], bool)
