"""A node's MemoryPressure: the eviction manager sets it, the kubelet posts it at its next status sync,
and the node lifecycle controller taints the node at once (and untaints it when it clears)."""

from __future__ import annotations

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams
from skenario.core.time import MINUTE, SECOND
from skenario.model.memory import NodeMemory
from skenario.model.nodeconditions import NodeConditions
from skenario.scheduling.controller import SchedulerSettings, SchedulingController
from skenario.scheduling.framework import Framework, default_profile
from skenario.scheduling.objects import NodeSpec
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import MEMORY_PRESSURE_TAINT

GIB = 1024**3


def test_pressure_is_posted_at_the_next_sync_and_taints_the_node_until_it_clears() -> None:
    env = Environment(halt_at=10 * MINUTE)
    snap = ClusterSnapshot([NodeSpec("a", cpu=2000, memory=4 * GIB)])
    streams = RandomStreams(2)
    framework = Framework(default_profile(), snap, streams.generator("tie-break"))
    controller = SchedulingController(env, snap, framework, SchedulerSettings(), streams.generator("heartbeats"))
    conditions = NodeConditions(env, controller, streams.generator("kubelet.node-status"))
    memory = NodeMemory(env, 4 * GIB, "a")
    conditions.watch(memory)

    def eviction_manager(pressure: bool) -> None:
        for hook in memory.on_condition:
            hook(pressure)

    env.call_at(30 * SECOND, lambda: eviction_manager(True))
    env.call_at(5 * MINUTE + 30 * SECOND, lambda: eviction_manager(False))
    taints_at: dict[int, bool] = {}
    for t in (30 * SECOND + 1, 40 * SECOND + 1, 6 * MINUTE):
        env.call_at(t, lambda t=t: taints_at.update({t: MEMORY_PRESSURE_TAINT in snap.nodes[0].taints}))  # type: ignore[misc]
    env.run()
    # The kubelet syncs at phase + k x 10 s, its phase a draw in [0, 10 s) from its own stream.
    phase = int(RandomStreams(2).generator("kubelet.node-status").random() * 10 * SECOND)
    set_at = next(phase + k * 10 * SECOND for k in range(10) if phase + k * 10 * SECOND >= 30 * SECOND)
    cleared_at = set_at + 5 * MINUTE
    events = [(e.at, e.kind) for e in controller.timeline if e.kind.startswith("Node")]
    assert events == [
        (set_at, "NodeHasInsufficientMemory"),
        (set_at, "NodeTainted"),
        (cleared_at, "NodeHasSufficientMemory"),
        (cleared_at, "NodeUntainted"),
    ]
    assert taints_at == {30 * SECOND + 1: set_at <= 30 * SECOND, 40 * SECOND + 1: True, 6 * MINUTE: False}
    assert conditions.statuses["a"].memory_pressure is False
