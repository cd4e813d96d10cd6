"""What fits where in a simulated cluster: the nodes' free room, the scheduler's static filters, first fit.

Mirrors cluster-autoscaler's `simulator/`: a node's requests kept as the cluster snapshot keeps a
NodeInfo (`simulator/clustersnapshot`), the scheduler's filters run against a node
(`simulator/predicatechecker`, here `node_filters` or the caller's `StaticFits`) and the scheduling
simulation that places pods one after the other (`simulator/scheduling/hinting_simulator.go`).
The estimator, the scale-up and the scale-down all place pods with these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.tainttoleration import taints_filter
from skenario.scheduling.taints import UNSCHEDULABLE_TAINT

StaticFits = Callable[[PodSpec, NodeSpec], bool]


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
