"""The cluster autoscaler on the clock, worked by hand: one scale-up, then the new node removed once idle.

The times follow from the rules of `StaticAutoscaler.RunOnce` with the default flags: a tick every
10 s; a new node ready after its group's start-up; pods that fit on a node on its way ask for no
other (FilterOutSchedulable); a node unneeded for longer than 10 min is removed, and not within
10 min of a scale-up.
"""

from __future__ import annotations

from collections.abc import Sequence

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams
from skenario.core.time import SECOND
from skenario.scheduling.clusterautoscaler.config import NodeGroup
from skenario.scheduling.clusterautoscaler.controller import ClusterAutoscaler
from skenario.scheduling.controller import SchedulerSettings, SchedulingController
from skenario.scheduling.framework import Framework, default_profile
from skenario.scheduling.pods import Pod
from skenario.scheduling.snapshot import ClusterSnapshot
from tests.scheduling.clusterautoscaler.builders import DEFAULTS, node, pod


def test_a_pod_that_fits_nowhere_gets_a_node_which_goes_once_it_has_been_idle_long_enough() -> None:
    """Group g: 2000m nodes, one to start with, 30 s to start a new one.

    At 1 ns three 1000m pods arrive: two fill g-0, the third fits nowhere. The tick at 10 s adds g-1,
    ready at 40 s, where the pod binds at once; the ticks at 20 s and 30 s add nothing, as the pod
    fits on g-1 on its way. The pod runs 60 s, so g-1 is empty, and unneeded, from 100 s. It may go
    once unneeded for more than 10 min, at the first tick after 700 s: 710 s (the delay after the
    scale-up ended at 10 s + 10 min = 610 s). g-0 is full and stays.
    """
    env = Environment(halt_at=800 * SECOND)
    snap = ClusterSnapshot()
    streams = RandomStreams(0)
    framework = Framework(default_profile(), snap, streams.generator("tie-break"))
    scheduler = SchedulingController(env, snap, framework, SchedulerSettings(), streams.generator("heartbeats"))
    group = NodeGroup("g", node("template", 2000), 0, 5, startup=30 * SECOND)
    ca = ClusterAutoscaler(env, scheduler, [group], DEFAULTS, streams.generator("ca"), {"g": 1})
    for name, duration in (("a", None), ("b", None), ("c", 60 * SECOND)):
        scheduler.create(pod(name, 1000), at=1, duration=duration)
    env.run()

    kinds = ("ScaleUp", "NodeAdded", "NodeRemoved")
    events = [(e.at, e.kind, e.node) for e in scheduler.timeline if e.kind in kinds]
    assert events == [
        (10 * SECOND, "ScaleUp", "g"),
        (40 * SECOND, "NodeAdded", "g-1"),
        (710 * SECOND, "NodeRemoved", "g-1"),
    ]
    c = scheduler.pods["c"]
    assert (c.node, c.bound_at) == ("g-1", 40 * SECOND)
    assert (ca.scale_ups, ca.scale_downs) == (1, 1)
    assert ca.size("g") == 1


class _Budget:
    """A RemainingPdbTracker that allows `left` pods to go in a pass."""

    def __init__(self, left: int) -> None:
        self.left = left
        self.asked: list[int] = []

    def can_remove_pods(self, pods: Sequence[Pod]) -> bool:
        self.asked.append(len(pods))
        if len(pods) > self.left:
            return False
        self.left -= len(pods)
        return True


def _two_underused_nodes(left: int | None) -> tuple[SchedulingController, ClusterAutoscaler]:
    """Two 2000m nodes with one 100m pod each: both underused, and either pod fits on the other node,
    so one node is unneeded and goes after 10 min, unless the budget refuses its pod's eviction."""
    env = Environment(halt_at=900 * SECOND)
    snap = ClusterSnapshot()
    streams = RandomStreams(0)
    framework = Framework(default_profile(), snap, streams.generator("tie-break"))
    scheduler = SchedulingController(env, snap, framework, SchedulerSettings(), streams.generator("heartbeats"))
    group = NodeGroup("g", node("template", 2000), 0, 5, startup=30 * SECOND)
    tracker = (lambda: _Budget(left)) if left is not None else None
    ca = ClusterAutoscaler(env, scheduler, [group], DEFAULTS, streams.generator("ca"), {"g": 2}, pdb_tracker=tracker)
    for name in ("a", "b"):
        scheduler.create(pod(name, 100), at=1)
    env.run()
    return scheduler, ca


def _removed(scheduler: SchedulingController) -> list[str]:
    return [e.node for e in scheduler.timeline if e.kind == "NodeRemoved"]


def test_a_drain_the_disruption_budget_refuses_leaves_the_node() -> None:
    scheduler, ca = _two_underused_nodes(left=None)
    assert len(_removed(scheduler)) == 1 and ca.blocked_by_pdb == 0
    scheduler, ca = _two_underused_nodes(left=1)
    assert len(_removed(scheduler)) == 1 and ca.blocked_by_pdb == 0
    scheduler, ca = _two_underused_nodes(left=0)
    assert _removed(scheduler) == [] and ca.blocked_by_pdb > 0  # NotEnoughPdb, pass after pass
    assert ca.size("g") == 2
