"""What fits where in a simulated cluster: the nodes' free room, the scheduler's filters, first fit.

Mirrors cluster-autoscaler's `simulator/`: a node's requests kept as the cluster snapshot keeps a
NodeInfo (`simulator/clustersnapshot`), the scheduler's filters run against a node
(`simulator/predicatechecker`) and the scheduling simulation that places pods one after the other
(`simulator/scheduling/hinting_simulator.go`). The estimator, the scale-up and the scale-down all
place pods with these.

Two simulations stand behind the scale-up (`Simulation`): `ResourceSimulation` counts resources
and asks a `StaticFits` predicate (taints, node affinity, cordoning) about each node, enough when
no constraint depends on the other pods; `SnapshotSimulation` runs the scheduler's own filter
plugins on a fork of its snapshot with the template node added, as upstream's predicate checker
does, so that topology spread and every other filter judge a template node exactly as they will
judge the node once it exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Protocol

import numpy as np

from skenario.scheduling.objects import HOSTNAME_LABEL, NodeSpec, PodSpec
from skenario.scheduling.plugins.interface import FilterPlugin
from skenario.scheduling.plugins.tainttoleration import taints_filter
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import UNSCHEDULABLE_TAINT

StaticFits = Callable[[PodSpec, NodeSpec], bool]

# What a template check reports for a pod that fails only on resources, as NodeResourcesFit words it.
REASON_NO_ROOM = "Insufficient resources on an empty node"


def node_filters(pod: PodSpec, node: NodeSpec) -> bool:
    """The default static predicates: the NodeUnschedulable, TaintToleration and NodeAffinity filters.

    A cordoned node takes only pods tolerating its unschedulable taint (`nodeunschedulable`).
    """
    if node.unschedulable and not any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations):
        return False
    if taints_filter(node.taints, pod.tolerations) is not None:
        return False
    return pod.affinity.allows(node.labels, node.name)


class Room:
    """What one node has left, kept as the cluster snapshot keeps a NodeInfo's requests."""

    __slots__ = ("cpu", "extended", "memory", "node", "placed", "slots")

    def __init__(self, node: NodeSpec, pods: Iterable[PodSpec] = ()) -> None:
        self.node = node
        self.cpu = node.cpu
        self.memory = node.memory
        self.slots = node.pods
        self.extended = dict(node.extended)
        self.placed: list[PodSpec] = []
        for pod in pods:
            self.take(pod)

    def fits(self, pod: PodSpec) -> bool:
        """NodeResourcesFit's `fitsRequest`: a pod slot, and each requested resource within what is left."""
        if self.slots < 1:
            return False
        if pod.cpu_request > 0 and pod.cpu_request > self.cpu:
            return False
        if pod.memory_request > 0 and pod.memory_request > self.memory:
            return False
        return all(amount <= 0 or amount <= self.extended.get(name, 0) for name, amount in pod.extended.items())

    def take(self, pod: PodSpec) -> None:
        self.cpu -= pod.cpu_request
        self.memory -= pod.memory_request
        self.slots -= 1
        for name, amount in pod.extended.items():
            self.extended[name] = self.extended.get(name, 0) - amount
        self.placed.append(pod)

    def undo_last(self) -> None:
        pod = self.placed.pop()
        self.cpu += pod.cpu_request
        self.memory += pod.memory_request
        self.slots += 1
        for name, amount in pod.extended.items():
            self.extended[name] += amount


def first_fit(pod: PodSpec, rooms: Iterable[Room], static_fits: StaticFits) -> Room | None:
    """The first room, in order, with space for the pod on a node that passes `static_fits`; None if none."""
    for room in rooms:
        if room.fits(pod) and static_fits(pod, room.node):
            return room
    return None


def fits_empty(pod: PodSpec, node: NodeSpec, static_fits: StaticFits = node_filters) -> bool:
    """Whether the pod fits the node with nothing on it: the orchestrator's template check.

    Mirrors `ScaleUpOrchestrator.SchedulablePodGroups`, which runs the scheduler's filters for
    each pending pod against a template node of each group.
    """
    return Room(node).fits(pod) and static_fits(pod, node)


def place_pods(
    pods: Sequence[PodSpec],
    nodes: Sequence[NodeSpec],
    pods_on: Mapping[str, Sequence[PodSpec]],
    static_fits: StaticFits = node_filters,
) -> list[str | None]:
    """Where each pod would go, first fit over `nodes` in order, each placement using up room.

    Mirrors the scheduling simulation of `HintingSimulator.TrySchedulePods` (without hints) that
    upstream's FilterOutSchedulable and the removal simulation run. Returns, for each pod in order,
    the node's name or None.
    """
    rooms = [Room(n, pods_on.get(n.name, ())) for n in nodes]
    where: list[str | None] = []
    for pod in pods:
        room = first_fit(pod, rooms, static_fits)
        if room is not None:
            room.take(pod)
        where.append(None if room is None else room.node.name)
    return where


# --------------------------------------------------------------------------------------------------
# Simulations for the scale-up


class NewNodes(Protocol):
    """New nodes of one template, added one by one as the estimator needs them."""

    def add(self) -> int:
        """A new empty node; returns its position among the new nodes."""
        ...

    def drop_last(self) -> None:
        """Take back the node `add` made last (it took no pod)."""
        ...

    def fits(self, pod: PodSpec, k: int) -> bool:
        """Whether the pod fits new node `k` with what it already holds."""
        ...

    def first_fit(self, pod: PodSpec) -> int | None:
        """The first new node, in the order they were added, that the pod fits; None if none."""
        ...

    def take(self, pod: PodSpec, k: int) -> None:
        """Put the pod on new node `k`."""
        ...


class Simulation(Protocol):
    """What the scale-up asks of a simulated cluster."""

    def template_check(self, pod: PodSpec, template: NodeSpec) -> str | None:
        """None if the pod would schedule on a new node of the template, else the filter's reason."""
        ...

    def new_nodes(self, template: NodeSpec) -> NewNodes:
        """A fresh set of new nodes of the template, for one estimate."""
        ...


class _Rooms:
    def __init__(self, template: NodeSpec, static_fits: StaticFits) -> None:
        self.template = template
        self.static_fits = static_fits
        self.rooms: list[Room] = []

    def add(self) -> int:
        self.rooms.append(Room(self.template))
        return len(self.rooms) - 1

    def drop_last(self) -> None:
        self.rooms.pop()

    def fits(self, pod: PodSpec, k: int) -> bool:
        room = self.rooms[k]
        return room.fits(pod) and self.static_fits(pod, room.node)

    def first_fit(self, pod: PodSpec) -> int | None:
        return next((k for k in range(len(self.rooms)) if self.fits(pod, k)), None)

    def take(self, pod: PodSpec, k: int) -> None:
        self.rooms[k].take(pod)


class ResourceSimulation:
    """Resources counted per node, everything else a `StaticFits` predicate of the pod and the node."""

    def __init__(self, static_fits: StaticFits = node_filters) -> None:
        self.static_fits = static_fits

    def template_check(self, pod: PodSpec, template: NodeSpec) -> str | None:
        if not self.static_fits(pod, template):
            return "node(s) didn't pass the scheduler's filters"
        return None if Room(template).fits(pod) else REASON_NO_ROOM

    def new_nodes(self, template: NodeSpec) -> NewNodes:
        return _Rooms(template, self.static_fits)


class PredicateChecker:
    """The scheduler's filter plugins, run for one pod against nodes of a (forked) snapshot.

    Mirrors cluster-autoscaler's `predicatechecker.SchedulerBasedPredicateChecker`: `check` is
    `CheckPredicates` (the first failing filter's reason, None when all pass) and `fits_any`
    `FitsAnyNodeMatching` (the first node, in the given order, where all pass). `fits_any` runs
    each filter once over all the nodes, as the scheduler's cycle does, so a filter's PreFilter
    work (topology spread counting the cluster's pods) is done once per pod, not once per node.
    """

    def __init__(self, filters: Sequence[FilterPlugin]) -> None:
        self.filters = list(filters)

    def feasible(self, pod: PodSpec, snap: ClusterSnapshot, rows: Sequence[int]) -> list[int]:
        """The rows, in order, where every filter passes."""
        alive = np.asarray(rows, dtype=np.int64)
        for plugin in self.filters:
            if not len(alive):
                break
            alive = alive[plugin.filter(pod, snap, alive).codes == 0]
        return [int(r) for r in alive]

    def check(self, pod: PodSpec, snap: ClusterSnapshot, row: int) -> str | None:
        nodes = np.array([row], dtype=np.int64)
        for plugin in self.filters:
            result = plugin.filter(pod, snap, nodes)
            code = int(result.codes[0])
            if code:
                return result.reasons[code] or f"node(s) didn't pass {plugin.name}"
        return None

    def fits_any(self, pod: PodSpec, snap: ClusterSnapshot, rows: Sequence[int]) -> int | None:
        found = self.feasible(pod, snap, rows)
        return found[0] if found else None


def equivalence(pod: PodSpec) -> str:
    """What pods of one equivalence group share: everything but the name (`equivalence.PodGroup`,
    which groups pods by their controller; pods of one template differ only by name here)."""
    return repr(replace(pod, name=""))


def template_node(template: NodeSpec, name: str) -> NodeSpec:
    """The template as a node called `name`, its hostname label its own (`simulator/node_info_utils`)."""
    labels = {k: v for k, v in template.labels.items() if k != HOSTNAME_LABEL}
    return replace(template, name=name, labels=labels)


class _ForkedNodes:
    def __init__(self, world: ClusterSnapshot, template: NodeSpec, checker: PredicateChecker) -> None:
        self.snap = world.fork()
        self.template = template
        self.checker = checker
        self.rows: list[int] = []

    def add(self) -> int:
        name = f"template-node-for-{self.template.name}-{len(self.rows)}"
        self.rows.append(self.snap.add_node(template_node(self.template, name)))
        return len(self.rows) - 1

    def drop_last(self) -> None:
        self.snap.remove_node(self.snap.nodes[self.rows.pop()].name)

    def fits(self, pod: PodSpec, k: int) -> bool:
        return self.checker.check(pod, self.snap, self.rows[k]) is None

    def first_fit(self, pod: PodSpec) -> int | None:
        row = self.checker.fits_any(pod, self.snap, self.rows)
        return None if row is None else self.rows.index(row)

    def take(self, pod: PodSpec, k: int) -> None:
        self.snap.assume(pod, self.rows[k])


class SnapshotSimulation:
    """The scheduler's filters on a fork of `world` (the cluster, with the upcoming nodes in it)."""

    def __init__(self, world: ClusterSnapshot, checker: PredicateChecker) -> None:
        self.world = world
        self.checker = checker
        self._templates: dict[str, tuple[ClusterSnapshot, int]] = {}
        self._verdicts: dict[tuple[str, str], str | None] = {}

    def template_check(self, pod: PodSpec, template: NodeSpec) -> str | None:
        """Mirrors `ScaleUpOrchestrator.SchedulablePodGroups`: the filters on a template node added to the
        cluster, once per equivalence group of pods (pods alike but for their names), as upstream."""
        key = (template.name, equivalence(pod))
        if key not in self._verdicts:
            self._verdicts[key] = self._check(pod, template)
        return self._verdicts[key]

    def _check(self, pod: PodSpec, template: NodeSpec) -> str | None:
        forked = self._templates.get(template.name)
        if forked is None:
            snap = self.world.fork()
            row = snap.add_node(template_node(template, f"template-node-for-{template.name}"))
            forked = self._templates[template.name] = (snap, row)
        snap, row = forked
        return self.checker.check(pod, snap, row)

    def new_nodes(self, template: NodeSpec) -> NewNodes:
        return _ForkedNodes(self.world, template, self.checker)
