"""benchmarks/autoscalers.py compares like with like; no wall-clock assertions."""

from __future__ import annotations

import importlib
from typing import Any

autoscalers: Any = importlib.import_module("autoscalers")


def test_both_runs_see_the_same_traffic_and_only_the_hpa_run_syncs() -> None:
    without = autoscalers.run(False, duration="2m")
    with_hpa = autoscalers.run(True, duration="2m")
    assert without["requests"] == with_hpa["requests"]  # the same seed and traffic stream
    assert without["hpa_syncs"] == 0
    assert with_hpa["hpa_syncs"] == 2 * 60 // 15 - 1  # a sync every 15 s; the one at 2 m is the halt
    assert without["replicas_started"] == 40
