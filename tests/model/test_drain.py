"""kubectl drain on its own: cordon, evict what is on the node, remove it once the pods are gone.

The story with disruption budgets and replicas that refuse and retry is told through a scenario in
`tests/scenario/wiring/test_operations_nodes.py`; here the drain meets bare pods (no budget applies)."""

from __future__ import annotations

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams
from skenario.core.time import SECOND
from skenario.model.drain import NodeDrains
from skenario.scheduling.controller import SchedulerSettings, SchedulingController
from skenario.scheduling.framework import Framework, default_profile
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.pods import Pod, PodEnd
from skenario.scheduling.snapshot import ClusterSnapshot

GIB = 1024**3


def test_a_drained_node_is_cordoned_emptied_and_removed_at_that_instant() -> None:
    env = Environment(halt_at=60 * SECOND)
    snap = ClusterSnapshot([NodeSpec("a", cpu=2000, memory=4 * GIB), NodeSpec("b", cpu=2000, memory=4 * GIB)])
    streams = RandomStreams(1)
    controller = SchedulingController(
        env,
        snap,
        Framework(default_profile(), snap, streams.generator("t")),
        SchedulerSettings(),
        streams.generator("h"),
    )
    for name in ("p1", "p0"):
        controller.create(PodSpec(name, cpu=500), at=SECOND, node="a")
    controller.create(PodSpec("q", cpu=500), at=SECOND, node="b")

    def pods_on(node: str) -> list[Pod]:
        return [controller.pods[name] for name in sorted(snap.pods_on[snap.index[node]])]

    def evict(pod: Pod) -> None:
        pod.end = PodEnd.EVICTED
        controller.delete(pod, PodEnd.EVICTED)

    removed: list[tuple[int, str]] = []
    said: list[str] = []
    drains = NodeDrains(
        env, controller, pods_on, lambda pod: None, evict, lambda node: removed.append((env.now(), node))
    )
    env.call_at(5 * SECOND, lambda: said.append(drains.drain("a", said.append)))
    env.run()
    assert said == ["node a cordoned; p0, p1 evicted", "node a removed"]  # removed once the instant settled
    assert removed == [(5 * SECOND, "a")]
    assert [(e.at, e.kind, e.node) for e in controller.timeline if e.kind == "NodeRemoved"] == [
        (5 * SECOND, "NodeRemoved", "a")
    ]
    assert {name: pod.end for name, pod in controller.pods.items()} == {
        "p0": PodEnd.EVICTED,
        "p1": PodEnd.EVICTED,
        "q": None,
    }
    assert snap.present.tolist() == [False, True]
