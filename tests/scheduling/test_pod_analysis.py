"""The analysis functions against step functions worked out by hand."""

from __future__ import annotations

import pytest

from skenario.core.time import SECOND
from skenario.scheduling.analysis import node_utilisation, pod_table, waiting_times
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.replay import BatchReplay
from skenario.scheduling.traces import TracePod


def test_node_utilisation_and_waits_follow_the_pods() -> None:
    # One 1000m node. a (500m) runs 1-11 s; b (250m) 2-5 s; c (600m) arrives at 3 s and must wait for a.
    pods = [
        TracePod(PodSpec("a", cpu=500, memory=0), 1 * SECOND, 10 * SECOND),
        TracePod(PodSpec("b", cpu=250, memory=0), 2 * SECOND, 3 * SECOND),
        TracePod(PodSpec("c", cpu=600, memory=0), 3 * SECOND, 1 * SECOND),
    ]
    replay = BatchReplay([NodeSpec("n", cpu=1000, memory=1024)], pods)
    replay.run()
    controller = replay.controller
    frame = node_utilisation(controller.allocation_log, controller.snapshot)
    steps = list(zip(frame["time_s"], frame["cpu"], strict=True))
    # 1 s: 0.5; 2 s: 0.75; 5 s: b leaves, 0.5; 11 s: a leaves and c starts, 0.6; 12 s: c leaves, 0.
    assert steps == [(1.0, 0.5), (2.0, 0.75), (5.0, 0.5), (11.0, 0.6), (12.0, 0.0)]
    waits = waiting_times(controller.pods.values(), replay.end)
    assert waits.to_dict() == {"a": 0.0, "b": 0.0, "c": 8.0}
    table = pod_table(controller.pods.values()).set_index("pod")
    assert table.loc["c", "bound_s"] == 11.0 and table.loc["c", "end"] == "completed"
    assert table.loc["c", "attempts"] == 2  # turned away at 3 s, bound when a's room came free


def test_summary_counts_what_the_trace_did() -> None:
    pods = [TracePod(PodSpec(f"p{i}", cpu=400, memory=0), SECOND, None) for i in range(3)]
    summary = BatchReplay([NodeSpec("n", cpu=1000, memory=1024)], pods, until=10 * SECOND).run()
    # Two 400m pods fit on 1000m; the third waits for good.
    assert (summary.bound, summary.pending) == (2, 1)
    assert summary.allocation_peak["cpu"] == pytest.approx(0.8)
