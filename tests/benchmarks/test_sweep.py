"""Tests for benchmarks/sweep.py: every way of making the runs makes the same runs; no wall-clock assertions."""

from __future__ import annotations

import importlib
from typing import Any

sweep_bench: Any = importlib.import_module("sweep")


def test_every_way_makes_the_same_runs_in_the_same_order() -> None:
    made = sweep_bench.make_plan(quick=True)
    assert [(job.point, job.seed) for job in made.jobs()] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    expected = sweep_bench.alone(made)
    assert expected[0] != expected[1]  # two seeds, two runs
    for name, way in sweep_bench.ways(made).items():
        assert way() == expected, name


def test_the_verdict_holds_the_issues_targets() -> None:
    def result(speedup: float, overhead: float) -> dict[str, Any]:
        ratios = {
            "speedup_2_over_1": [speedup],
            "overhead_per_run": [0.5],  # the noisy end-to-end measure is reported, not judged
            "overhead_per_run_direct": [overhead],
            "shell_loop_over_sweep_2": [3.0],
        }
        return {"ratios": ratios, "digests_agree": True}

    assert sweep_bench.verdict(result(1.7, 0.05)) == {"speedup": True, "overhead": True, "digests": True}
    assert sweep_bench.verdict(result(1.69, 0.051)) == {"speedup": False, "overhead": False, "digests": True}
