"""Scale-down: how used each node is, which nodes are unneeded, and which of those may go now.

Mirrors cluster-autoscaler's `core/scaledown/`: the planner that sorts nodes into unneeded and
not (`planner.Planner.categorizeNodes`, with `eligibility.Checker` and `simulator/utilization`),
the removal simulation (`simulator/cluster.go`, `RemovalSimulator`), the unneeded-since times and
`RemovableAt` (`unneeded.Nodes`), the cooldown (`StaticAutoscaler.isScaleDownInCooldown`) and the
deletion budgets (`budgets.ScaleDownBudgetProcessor`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from skenario.scheduling.clusterautoscaler.config import DEFAULT_GPU_RESOURCES, CaSettings, NodeGroup
from skenario.scheduling.clusterautoscaler.simulator import Room, StaticFits, first_fit, node_filters
from skenario.scheduling.objects import NodeSpec, PodSpec

Movable = Callable[[PodSpec], bool]


def _is_movable(pod: PodSpec) -> bool:
    return pod.movable


def _gpu_resource(node: NodeSpec, gpu_resources: Sequence[str]) -> str | None:
    return next((r for r in gpu_resources if r in node.extended), None)


def utilisation(node: NodeSpec, pods: Sequence[PodSpec], gpu_resources: Sequence[str] = DEFAULT_GPU_RESOURCES) -> float:
    """The node's utilisation as scale-down judges it: requested over allocatable.

    Mirrors `utilization.Calculate`: the larger of the CPU and memory shares; on a GPU node (one
    with any of `gpu_resources`) the GPU share alone, and 0 while its GPUs are not allocatable yet.
    A resource with nothing allocatable counts 0 (upstream errs and the node passes as unused).
    """
    gpu = _gpu_resource(node, gpu_resources)
    if gpu is not None:
        allocatable = node.extended[gpu]
        return sum(p.extended.get(gpu, 0) for p in pods) / allocatable if allocatable > 0 else 0.0
    cpu = sum(p.cpu_request for p in pods) / node.cpu if node.cpu > 0 else 0.0
    memory = sum(p.memory_request for p in pods) / node.memory if node.memory > 0 else 0.0
    return max(cpu, memory)


def underutilised(node: NodeSpec, pods: Sequence[PodSpec], settings: CaSettings) -> bool:
    """Below the (GPU) utilisation threshold, strictly. Mirrors `Checker.isNodeBelowUtilizationThreshold`."""
    gpu = _gpu_resource(node, settings.gpu_resources) is not None
    threshold = settings.scale_down_gpu_utilization_threshold if gpu else settings.scale_down_utilization_threshold
    return utilisation(node, pods, settings.gpu_resources) < threshold


def unneeded_nodes(
    nodes: Sequence[NodeSpec],
    pods_on: Mapping[str, Sequence[PodSpec]],
    settings: CaSettings,
    *,
    static_fits: StaticFits = node_filters,
    movable: Movable = _is_movable,
    candidates: Collection[str] | None = None,
    previously_unneeded: Collection[str] = (),
) -> list[str]:
    """The nodes that could go now: underutilised, every pod movable, and room for all of them elsewhere.

    Mirrors `Planner.categorizeNodes`: `Checker.FilterOutUnremovable` keeps the candidates below
    the threshold (utilisation measured before any simulated move); they are tried empty ones
    first, then the previously unneeded (the scale-down candidate sorting processors), then by
    increasing utilisation, then in `nodes` order. `RemovalSimulator.SimulateNodeRemoval` fails a
    node with a pod that `movable` refuses (the drainability rules: by default `PodSpec.movable`,
    False standing for kube-system pods without a PDB, pods without a controller, local storage or
    `safe-to-evict: false`) or whose pods do not all fit, first fit over the other nodes in order;
    a success is kept, as upstream persists it: its pods stay where they were moved (moving again
    if that node goes later) and the node takes no more pods.

    `candidates` limits which nodes may be removed (default: all; upstream, autoscaled nodes not
    being deleted); every node in `nodes` may receive pods. Min sizes and budgets are applied by
    `ready_to_remove`, as upstream. Not modelled: PDBs, DaemonSet and mirror pods, the
    `--scale-down-non-empty-candidates-count` and unneeded-node count limits, the simulation timeout.
    """
    rooms = {n.name: Room(n, pods_on.get(n.name, ())) for n in nodes}
    allowed = None if candidates is None else set(candidates)
    previous = set(previously_unneeded)
    eligible = []
    for order, node in enumerate(nodes):
        if allowed is not None and node.name not in allowed:
            continue
        pods = pods_on.get(node.name, ())
        if not underutilised(node, pods, settings):
            continue
        util = utilisation(node, pods, settings.gpu_resources)
        eligible.append((bool(pods), node.name not in previous, util, order, node.name))
    eligible.sort()

    removed: set[str] = set()
    chosen: list[str] = []
    for _, _, _, _, name in eligible:
        if not all(movable(p) for p in pods_on.get(name, ())):
            continue
        room = rooms[name]
        destinations = [r for n, r in rooms.items() if n != name and n not in removed]
        moves: list[Room] = []
        for pod in room.placed:
            target = first_fit(pod, destinations, static_fits)
            if target is None:
                break
            target.take(pod)
            moves.append(target)
        if len(moves) < len(room.placed):
            for target in reversed(moves):
                target.undo_last()
            continue
        removed.add(name)
        chosen.append(name)
    return chosen


def update_unneeded_since(previous: Mapping[str, int], unneeded: Iterable[str], now: int) -> dict[str, int]:
    """Since when each node has been unneeded. Mirrors `unneeded.Nodes.Update`.

    A node still unneeded keeps its time; a newly unneeded one starts at `now`; the rest are dropped.
    """
    return {name: previous.get(name, now) for name in unneeded}


def scale_down_in_cooldown(
    now: int,
    settings: CaSettings,
    *,
    last_scale_up: int | None = None,
    last_scale_down: int | None = None,
    last_scale_down_failure: int | None = None,
) -> bool:
    """Whether scale-down waits: each delay runs from its event and has not passed yet.

    Mirrors `StaticAutoscaler.isScaleDownInCooldown` (global delays): in cooldown while
    `last + delay > now`. None means the event never happened.
    """
    for last, delay in (
        (last_scale_up, settings.scale_down_delay_after_add),
        (last_scale_down, settings.scale_down_delay_after_delete),
        (last_scale_down_failure, settings.scale_down_delay_after_failure),
    ):
        if last is not None and last + delay > now:
            return True
    return False


def ready_to_remove(
    unneeded_since: Mapping[str, int],
    now: int,
    settings: CaSettings,
    *,
    node_groups: Mapping[str, NodeGroup],
    group_sizes: Mapping[str, int],
    empty: Collection[str] = (),
    last_scale_up: int | None = None,
    last_scale_down: int | None = None,
    last_scale_down_failure: int | None = None,
    deleting_empty: int = 0,
    deleting_drain: int = 0,
) -> list[str]:
    """The unneeded nodes to delete this tick, empty ones first.

    Mirrors the tail of `StaticAutoscaler.scaleDown`: nothing when scale-down is disabled or in
    cooldown (`scale_down_in_cooldown`); then `unneeded.Nodes.RemovableAt`: a node must have been
    unneeded longer than `scale_down_unneeded_time` (`since + time < now`), belong to a group
    (`node_groups`: node name to its group) and leave the group above its min size (each accepted
    node lowers the group's size in `group_sizes`, the target sizes less nodes already being
    deleted); then `ScaleDownBudgetProcessor.CropNodes`: empty nodes up to the scale-down
    parallelism, then non-empty ones up to `max_drain_parallelism`, both less the deletions in
    progress. Within each kind, the longest unneeded go first, then by name (upstream: map order).
    """
    if not settings.scale_down_enabled:
        return []
    if scale_down_in_cooldown(
        now,
        settings,
        last_scale_up=last_scale_up,
        last_scale_down=last_scale_down,
        last_scale_down_failure=last_scale_down_failure,
    ):
        return []
    empty_set = set(empty)
    sizes = dict(group_sizes)
    ripe = sorted(
        (name not in empty_set, since, name)
        for name, since in unneeded_since.items()
        if since + settings.scale_down_unneeded_time < now
    )
    removable_empty: list[str] = []
    removable_drain: list[str] = []
    for is_drain, _, name in ripe:
        group = node_groups.get(name)
        if group is None:
            continue  # not autoscaled
        size = sizes.get(group.name, 0)
        if size <= group.min_size:
            continue
        sizes[group.name] = size - 1
        (removable_drain if is_drain else removable_empty).append(name)

    budget = max(0, settings.scale_down_parallelism - deleting_empty - deleting_drain)
    drain_budget = max(0, settings.max_drain_parallelism - deleting_drain)
    take_empty = removable_empty[:budget]
    budget -= len(take_empty)
    take_drain = removable_drain[: min(budget, drain_budget)]
    return take_empty + take_drain
