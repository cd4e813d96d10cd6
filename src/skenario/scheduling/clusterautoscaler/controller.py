"""The cluster autoscaler on the clock: every scan interval, grow a node group for unschedulable pods
and remove nodes that have been unneeded long enough.

Mirrors `StaticAutoscaler.RunOnce` (cluster-autoscaler's core/static_autoscaler.go); the decisions
are the pure functions of the sibling modules (`scaleup`, `scaledown`, `simulator`).
A new node joins the scheduler's snapshot after its group's start-up delay. A removed node's pods
are evicted first: a replica's pod is replaced by its ReplicaSet (`on_evict`), and a node holding a
pod that cannot move is never chosen. With disruption budgets (`pdb_tracker`, a fresh
`RemainingPdbTracker` each pass, as `core/scaledown/pdb` keeps one), a node whose pods' eviction
the budgets would refuse stays, and the budget its drained neighbours used is gone for the rest of
the pass.

Scale-up runs the scheduler's own filter plugins on a fork of its snapshot (`SnapshotSimulation`):
the pods that fit on existing or upcoming nodes are left to the scheduler (FilterOutSchedulable),
a group grows only for pods that pass every filter on its template node, and a pod no group can
help gets a NotTriggerScaleUp decision naming each group's reason. Every decision is kept in
`decisions` (`CaDecision`) for the run's timeline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from skenario.core.clock import SettlingClock
from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.clusterautoscaler.scaledown import (
    ready_to_remove,
    unneeded_nodes,
    update_unneeded_since,
    utilisation,
)
from skenario.scheduling.clusterautoscaler.scaleup import not_triggered_message, scale_up_status
from skenario.scheduling.clusterautoscaler.simulator import PredicateChecker, SnapshotSimulation
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.history import TimelineEvent
from skenario.scheduling.objects import NodeSpec
from skenario.scheduling.pods import Pod, PodEnd


class RemainingPdbTracker(Protocol):
    """What is left of the disruption budgets in one scale-down pass (`pdb.RemainingPdbTracker`)."""

    def can_remove_pods(self, pods: Sequence[Pod]) -> bool:
        """Whether evicting all of these keeps every budget; if so, they are counted as gone."""
        ...


@dataclass
class CaDecision:
    """One thing the cluster autoscaler decided, and why (its events and log lines, as data).

    `action` is ScaleUp (`TriggeredScaleUp`), NotTriggerScaleUp, ScaleDown or ScaleDownBlocked
    (`NotEnoughPdb`); `reason` is the message upstream's event carries; `groups` the reason each
    node group gave for a pod it could not help.
    """

    at: int
    action: str
    reason: str
    group: str = ""
    nodes: int = 0
    pods: list[str] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)


@dataclass
class _Upcoming:
    group: str
    node: NodeSpec
    ready_at: int


class ClusterAutoscaler:
    """Ticks every `settings.scan_interval`; keeps the unneeded-since times and the cooldown clocks."""

    def __init__(
        self,
        clock: SettlingClock,
        scheduler: SchedulingController,
        groups: list[NodeGroup],
        settings: CaSettings,
        rng: np.random.Generator,
        initial_sizes: dict[str, int],
        on_evict: Callable[[Pod], object] | None = None,
        pdb_tracker: Callable[[], RemainingPdbTracker | None] | None = None,
    ) -> None:
        self.clock = clock
        self.scheduler = scheduler
        self.groups = {g.name: g for g in groups}
        self.settings = settings
        self._rng = rng
        self.on_evict = on_evict
        self.pdb_tracker = pdb_tracker
        self.blocked_by_pdb = 0  # drains the budgets refused
        self.node_group: dict[str, str] = {}  # node name -> group
        self._next_index = dict.fromkeys(self.groups, 0)
        self._upcoming: list[_Upcoming] = []
        self._unneeded_since: dict[str, int] = {}
        self.last_scale_up: int | None = None
        self.last_scale_down: int | None = None
        self.scale_ups = 0
        self.scale_downs = 0
        self.checker = PredicateChecker(scheduler.framework.profile.filters)
        self.decisions: list[CaDecision] = []
        self._not_triggered: dict[str, str] = {}  # pod -> its last NotTriggerScaleUp message
        for name, size in initial_sizes.items():
            for _ in range(size):
                scheduler.add_node(self._new_node(name))
        clock.call_at(settings.scan_interval, self._tick)

    def _new_node(self, group: str) -> NodeSpec:
        index = self._next_index[group]
        self._next_index[group] = index + 1
        node = self.groups[group].new_node(index)
        self.node_group[node.name] = group
        return node

    def size(self, group: str) -> int:
        """Nodes of the group present or on their way."""
        snap = self.scheduler.snapshot
        present = sum(1 for name, g in self.node_group.items() if g == group and name in snap.index)
        return present + sum(1 for u in self._upcoming if u.group == group)

    def can_grow(self) -> bool:
        """Whether some node group is below its maxSize: a scale-up is still possible."""
        return any(self.size(name) < group.max_size for name, group in self.groups.items())

    def _tick(self) -> None:
        # It looks at the cluster once the instant has settled, after the scheduler's pass.
        self.clock.call_when_settled(self._act, order=1)
        self.clock.call_later(self.settings.scan_interval, self._tick)

    def _act(self) -> None:
        now = self.clock.now()
        if not self._scale_up(now):
            self._scale_down(now)

    # -- scale-up --------------------------------------------------------------------------------

    def _scale_up(self, now: int) -> bool:
        scheduler = self.scheduler
        waiting = [p for p in scheduler.pending if p.unschedulable_since is not None and p.node is None]
        if not waiting:
            return False
        specs = [p.spec for p in sorted(waiting, key=lambda p: (-p.spec.priority, p.created_at, p.name))]
        # The cluster as it will be: the upcoming nodes join as their templates (upstream's
        # upcoming-node injection); pods that fit anywhere there need no new node (FilterOutSchedulable).
        world = scheduler.snapshot.fork()
        for upcoming in self._upcoming:
            world.add_node(upcoming.node)
        unhelped = []
        for spec in specs:
            row = self.checker.fits_any(spec, world, world.order.tolist())
            if row is None:
                unhelped.append(spec)
            else:
                world.assume(spec, row)
        if not unhelped:
            return False
        status = scale_up_status(
            unhelped,
            list(self.groups.values()),
            {name: self.size(name) for name in self.groups},
            self.settings,
            SnapshotSimulation(world, self.checker),
            self._rng,
            cluster_size=len(scheduler.snapshot.order) + len(self._upcoming),
        )
        self._record_not_triggered(now, status.rejected)
        plan = status.plan
        if plan is None:
            return False
        group = self.groups[plan.group]
        before = self.size(plan.group)
        for _ in range(plan.nodes):
            node = self._new_node(plan.group)
            upcoming = _Upcoming(plan.group, node, now + group.startup)
            self._upcoming.append(upcoming)
            self.clock.call_at(upcoming.ready_at, lambda u=upcoming: self._ready(u))  # type: ignore[misc]
        self.last_scale_up = now
        self.scale_ups += 1
        pods = [p.name for p in plan.pods]
        for name in pods:
            self._not_triggered.pop(name, None)
        reason = f"pod triggered scale-up: [{{{plan.group} {before}->{before + plan.nodes} (max: {group.max_size})}}]"
        self.decisions.append(CaDecision(now, "ScaleUp", reason, plan.group, plan.nodes, pods))
        detail = f"{plan.nodes} node(s) for {len(plan.pods)} pod(s), ready in {group.startup / 1e9:g} s"
        scheduler.timeline.append(TimelineEvent(now, "ScaleUp", plan.pods[0].name, plan.group, detail))
        return True

    def _record_not_triggered(self, now: int, rejected: dict[str, dict[str, str]]) -> None:
        """A NotTriggerScaleUp decision per pod no group can help, when its reasons change.

        Upstream emits the event on every loop and the API server folds repeats into one event
        with a count; keeping a pod's message only when it changes is the same record.
        """
        for pod, reasons in rejected.items():
            message = not_triggered_message(reasons)
            if self._not_triggered.get(pod) == message:
                continue
            self._not_triggered[pod] = message
            self.decisions.append(CaDecision(now, "NotTriggerScaleUp", message, pods=[pod], groups=dict(reasons)))
            self.scheduler.timeline.append(TimelineEvent(now, "NotTriggerScaleUp", pod, None, message))

    def _ready(self, upcoming: _Upcoming) -> None:
        self._upcoming.remove(upcoming)
        self.scheduler.timeline.append(TimelineEvent(self.clock.now(), "NodeAdded", "", upcoming.node.name))
        self.scheduler.add_node(upcoming.node)

    # -- scale-down ------------------------------------------------------------------------------

    def _scale_down(self, now: int) -> None:
        snap = self.scheduler.snapshot
        nodes = [snap.nodes[i] for i in snap.order.tolist()]
        pods_on = {snap.nodes[i].name: list(snap.pods_on[i].values()) for i in snap.order.tolist()}
        candidates = [n.name for n in nodes if n.name in self.node_group]
        unneeded = unneeded_nodes(
            nodes, pods_on, self.settings, candidates=candidates, previously_unneeded=list(self._unneeded_since)
        )
        self._unneeded_since = update_unneeded_since(self._unneeded_since, unneeded, now)
        groups = {name: self.groups[g] for name, g in self.node_group.items() if name in snap.index}
        removable = ready_to_remove(
            self._unneeded_since,
            now,
            self.settings,
            node_groups=groups,
            group_sizes={name: self.size(name) for name in self.groups},
            empty=[name for name in unneeded if not pods_on[name]],
            last_scale_up=self.last_scale_up,
            last_scale_down=self.last_scale_down,
        )
        tracker = self.pdb_tracker() if self.pdb_tracker is not None else None
        for name in removable:
            if tracker is not None and pods_on[name]:
                on_node = [self.scheduler.pods[spec.name] for spec in pods_on[name]]
                if not tracker.can_remove_pods(on_node):
                    self.blocked_by_pdb += 1  # NotEnoughPdb: the node stays unneeded, tried again later
                    reason = "not enough pod disruption budget to remove the node's pods"
                    self.decisions.append(CaDecision(now, "ScaleDownBlocked", reason, self.node_group[name], 1))
                    continue
            node = snap.nodes[snap.index[name]]
            used = utilisation(node, pods_on[name], self.settings.gpu_resources)
            since = self._unneeded_since[name]
            reason = (
                f"node {name} removed: unneeded for {(now - since) / 1e9:g} s, "
                f"utilisation {used:.2f} below {self.settings.scale_down_utilization_threshold:g}, "
                f"{len(pods_on[name])} pod(s) moved"
            )
            self.decisions.append(CaDecision(now, "ScaleDown", reason, self.node_group[name], 1))
            self._remove(name, now)

    def _remove(self, name: str, now: int) -> None:
        scheduler = self.scheduler
        snap = scheduler.snapshot
        pods = [scheduler.pods[spec.name] for spec in snap.pods_on[snap.index[name]].values()]
        for pod in pods:
            pod.end = PodEnd.EVICTED
            if self.on_evict is not None and pod.owner is not None:
                self.on_evict(pod)
            else:
                scheduler.delete(pod, PodEnd.EVICTED)
        self._unneeded_since.pop(name, None)
        self.last_scale_down = now
        self.scale_downs += 1
        scheduler.timeline.append(TimelineEvent(now, "NodeRemoved", "", name, f"{len(pods)} pod(s) evicted"))
        scheduler.remove_node(name)
