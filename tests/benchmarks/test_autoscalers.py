"""benchmarks/autoscalers.py compares like with like; no wall-clock assertions."""

from __future__ import annotations

import importlib
from typing import Any

from skenario.core.random import RandomStreams
from skenario.core.time import SECOND

autoscalers: Any = importlib.import_module("autoscalers")


def test_both_runs_see_the_same_traffic_and_only_the_hpa_run_syncs() -> None:
    without = autoscalers.run(False, duration="2m")
    with_hpa = autoscalers.run(True, duration="2m")
    assert without["requests"] == with_hpa["requests"]  # the same seed and traffic stream
    assert without["hpa_syncs"] == 0
    # A sync every 15 s from the HPA's own phase in (0, 15 s] (seed 1's stream for it), each before the
    # halt at 2 m: 8 of them, or 7 if the phase is a whole period.
    phase = RandomStreams(1).phase("autoscaler.hpa.sync.phase", 15 * SECOND)
    assert with_hpa["hpa_syncs"] == len(range(phase, 120 * SECOND, 15 * SECOND))
    assert without["replicas_started"] == 40
