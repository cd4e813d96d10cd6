"""The cluster autoscaler's decisions as pure functions: which node group to grow and by how much,
which nodes are unneeded, and which of those may go now.

Restated from kubernetes/autoscaler `cluster-autoscaler` (no upstream code is copied); each
function's docstring names the upstream function it mirrors. As with the HPA (`hpa.replicas`
beside `hpa.controller`), this module only calculates: a controller ticking every
`CaSettings.scan_interval` turns the cluster into these inputs, keeps the state between ticks (the
unneeded-since times, the last scale-up and scale-down) and acts on the answers.

One tick, as `StaticAutoscaler.RunOnce` orders it:

1. `plan_scale_up` for the pods that fit on no existing or upcoming node (`place_pods` onto the
   upcoming nodes' templates does the filtering that upstream's FilterOutSchedulable does). After
   a successful scale-up upstream does no scale-down in the same loop.
2. `unneeded_nodes`, then `update_unneeded_since` to carry the times over; this runs even while
   scale-down is in cooldown.
3. `ready_to_remove`: the unneeded nodes that may be deleted now.

Fitting is split in two. The calculator does the resource accounting itself, as the
NodeResourcesFit filter does over a node's free capacity: one pod slot, and every resource the
pod requests (CPU, memory, extended) against what is left, an unset request counting 0. Everything
else - taints, node affinity, cordoning - is a `StaticFits(pod, node)` predicate the caller
supplies, which must not depend on what is already on the node; `node_filters` is the default
(NodeUnschedulable, TaintToleration, NodeAffinity). Inter-pod constraints such as topology spread
are not modelled.

Times are integer nanoseconds (`skenario.core.time`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from skenario.core.time import MINUTE, SECOND
from skenario.scheduling.objects import HOSTNAME_LABEL, NodeSpec, PodSpec
from skenario.scheduling.taints import UNSCHEDULABLE_TAINT, taints_filter

StaticFits = Callable[[PodSpec, NodeSpec], bool]
Movable = Callable[[PodSpec], bool]

EXPANDERS = ("random", "most-pods", "least-waste", "least-nodes")
# `nvidia.com/gpu` is upstream's GPU resource; `alibaba.com/gpu-milli` is the pooled GPU of the openb traces.
DEFAULT_GPU_RESOURCES = ("nvidia.com/gpu", "alibaba.com/gpu-milli")


def node_filters(pod: PodSpec, node: NodeSpec) -> bool:
    """The default static predicates: the NodeUnschedulable, TaintToleration and NodeAffinity filters.

    A cordoned node takes only pods tolerating its unschedulable taint (`nodeunschedulable`).
    """
    if node.unschedulable and not any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations):
        return False
    if taints_filter(node.taints, pod.tolerations) is not None:
        return False
    return pod.affinity.allows(node.labels, node.name)


def _is_movable(pod: PodSpec) -> bool:
    return pod.movable


@dataclass(frozen=True)
class NodeGroup:
    """A node group (`cloudprovider.NodeGroup`): identical nodes made from one template.

    `startup` is how long (ns) a new node takes from the scale-up decision to Ready; the scenario
    sets it, upstream it is the cloud provider's business.
    """

    name: str
    template: NodeSpec
    min_size: int
    max_size: int
    startup: int = 0

    def __post_init__(self) -> None:
        if self.min_size < 0:
            raise ValueError(f"node group {self.name}: min_size must be >= 0, got {self.min_size}")
        if self.max_size < 1:
            raise ValueError(f"node group {self.name}: max_size must be >= 1, got {self.max_size}")
        if self.min_size > self.max_size:
            raise ValueError(f"node group {self.name}: min_size {self.min_size} exceeds max_size {self.max_size}")
        if self.startup < 0:
            raise ValueError(f"node group {self.name}: startup must be >= 0, got {self.startup}")

    def new_node(self, index: int) -> NodeSpec:
        """The template as node `<group>-<index>`, with its own hostname label."""
        name = f"{self.name}-{index}"
        labels = {k: v for k, v in self.template.labels.items() if k != HOSTNAME_LABEL}
        return replace(self.template, name=name, labels=labels)


@dataclass(frozen=True)
class CaSettings:
    """The autoscaler's flags with their upstream defaults (cluster-autoscaler `config/flags/flags.go`,
    whose defaults live in `config/const.go`; the FAQ's parameter table lists the same values).

    - `scan_interval` 10 s: `--scan-interval`, `config.DefaultScanInterval`.
    - `scale_down_utilization_threshold` 0.5: `--scale-down-utilization-threshold`,
      `config.DefaultScaleDownUtilizationThreshold`; `scale_down_gpu_utilization_threshold` 0.5:
      `--scale-down-gpu-utilization-threshold`, `config.DefaultScaleDownGpuUtilizationThreshold`.
    - `scale_down_unneeded_time` 10 min: `--scale-down-unneeded-time`, `config.DefaultScaleDownUnneededTime`.
    - `scale_down_delay_after_add` 10 min: `--scale-down-delay-after-add`.
    - `scale_down_delay_after_delete` 0: `--scale-down-delay-after-delete`. Old releases defaulted it
      to the scan interval; at tick granularity the two act the same, as a delay of one scan
      interval has passed by the next tick.
    - `scale_down_delay_after_failure` 3 min: `--scale-down-delay-after-failure`,
      `config.DefaultScaleDownDelayAfterFailure`.
    - `max_node_provision_time` 15 min: `--max-node-provision-time` (for the controller: an upcoming
      node not Ready by then stops counting as upcoming).
    - `expander` "least-waste": `--expander`; a comma-separated chain, each expander narrowing the
      options of the one before, as upstream. Implemented: random, most-pods, least-waste, least-nodes.
    - `max_nodes_total` 0 (no limit): `--max-nodes-total`; `max_nodes_per_scale_up` 1000:
      `--max-nodes-per-scaleup`.
    - `scale_down_enabled` True: `--scale-down-enabled`.
    - `max_scale_down_parallelism` 10: `--max-scale-down-parallelism`; `max_drain_parallelism` 1:
      `--max-drain-parallelism` (at most one non-empty node drained at a time).
    - `max_empty_bulk_delete`: `--max-empty-bulk-delete` (default 10), deprecated in CA 1.32 for
      `--max-scale-down-parallelism`. None means unset; when set it replaces the parallelism, as
      CA 1.28+ copies one flag to the other when only one is given (kubernetes/autoscaler#5890).
    - `gpu_resources`: extended resources that make a node a GPU node for utilisation (upstream asks
      the cloud provider, `GetNodeGpuConfig`).
    """

    scan_interval: int = 10 * SECOND
    scale_down_utilization_threshold: float = 0.5
    scale_down_gpu_utilization_threshold: float = 0.5
    scale_down_unneeded_time: int = 10 * MINUTE
    scale_down_delay_after_add: int = 10 * MINUTE
    scale_down_delay_after_delete: int = 0
    scale_down_delay_after_failure: int = 3 * MINUTE
    max_node_provision_time: int = 15 * MINUTE
    expander: str = "least-waste"
    max_nodes_total: int = 0
    max_nodes_per_scale_up: int = 1000
    scale_down_enabled: bool = True
    max_scale_down_parallelism: int = 10
    max_drain_parallelism: int = 1
    max_empty_bulk_delete: int | None = None
    gpu_resources: tuple[str, ...] = field(default=DEFAULT_GPU_RESOURCES)

    def __post_init__(self) -> None:
        if self.scan_interval <= 0:
            raise ValueError(f"scan_interval must be > 0, got {self.scan_interval}")
        for name in ("scale_down_utilization_threshold", "scale_down_gpu_utilization_threshold"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {value}")
        for name in (
            "scale_down_unneeded_time",
            "scale_down_delay_after_add",
            "scale_down_delay_after_delete",
            "scale_down_delay_after_failure",
            "max_node_provision_time",
            "max_nodes_total",
            "max_scale_down_parallelism",
            "max_drain_parallelism",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.max_nodes_per_scale_up < 1:
            raise ValueError(f"max_nodes_per_scale_up must be >= 1, got {self.max_nodes_per_scale_up}")
        if self.max_empty_bulk_delete is not None and self.max_empty_bulk_delete < 0:
            raise ValueError(f"max_empty_bulk_delete must be >= 0, got {self.max_empty_bulk_delete}")
        names = self.expanders
        unknown = [n for n in names if n not in EXPANDERS]
        if not names or unknown:
            raise ValueError(f"expander must name expanders among {', '.join(EXPANDERS)}, got {self.expander!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"expander may list an expander once only, got {self.expander!r}")

    @property
    def expanders(self) -> tuple[str, ...]:
        """The expander chain, parsed from the comma-separated flag value."""
        return tuple(n.strip() for n in self.expander.split(",") if n.strip())

    @property
    def scale_down_parallelism(self) -> int:
        """The node-deletion budget: `max_scale_down_parallelism`, or the deprecated flag if set."""
        if self.max_empty_bulk_delete is None:
            return self.max_scale_down_parallelism
        return self.max_empty_bulk_delete


class _Room:
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


def _first_fit(pod: PodSpec, rooms: Iterable[_Room], static_fits: StaticFits) -> _Room | None:
    for room in rooms:
        if room.fits(pod) and static_fits(pod, room.node):
            return room
    return None


def fits_empty(pod: PodSpec, node: NodeSpec, static_fits: StaticFits = node_filters) -> bool:
    """Whether the pod fits the node with nothing on it: the orchestrator's template check.

    Mirrors `ScaleUpOrchestrator.SchedulablePodGroups`, which runs the scheduler's filters for
    each pending pod against a template node of each group.
    """
    return _Room(node).fits(pod) and static_fits(pod, node)


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
    rooms = [_Room(n, pods_on.get(n.name, ())) for n in nodes]
    where: list[str | None] = []
    for pod in pods:
        room = _first_fit(pod, rooms, static_fits)
        if room is not None:
            room.take(pod)
        where.append(None if room is None else room.node.name)
    return where


# --- Scale-up -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaleUpOption:
    """One way to scale up (`expander.Option`): `nodes` new nodes of `group` would run `pods`."""

    group: NodeGroup
    nodes: int
    pods: tuple[PodSpec, ...]


@dataclass(frozen=True)
class ScaleUpPlan:
    """The chosen scale-up: add `nodes` nodes to group `group`, expecting them to run `pods`."""

    group: str
    nodes: int
    pods: tuple[PodSpec, ...]


def pod_size_score(pod: PodSpec, template: NodeSpec) -> float:
    """Mirrors `DecreasingPodOrderer.calculatePodScore`: CPU and memory requests as shares of the template."""
    score = 0.0
    if template.cpu > 0:
        score += pod.cpu_request / template.cpu
    if template.memory > 0:
        score += pod.memory_request / template.memory
    return score


def estimate(pods: Sequence[PodSpec], template: NodeSpec, limit: int) -> tuple[int, tuple[PodSpec, ...]]:
    """How many new template nodes the pods need, and which pods they take, with at most `limit` nodes.

    Mirrors `BinpackingNodeEstimator.Estimate` (first fit decreasing): pods in decreasing
    `pod_size_score` order (ties keep their order), each onto the first new node with room, else
    onto a fresh node while the limiter allows one more, else left out. As upstream, every pod is
    assumed to fit an empty template (filter with `fits_empty` first); only resources are checked
    here. Returns the number of nodes used and the pods placed, in placement order.
    """
    ordered = sorted(pods, key=lambda p: pod_size_score(p, template), reverse=True)
    rooms: list[_Room] = []
    placed: list[PodSpec] = []
    for pod in ordered:
        room = next((r for r in rooms if r.fits(pod)), None)
        if room is None:
            if len(rooms) >= limit:
                continue
            room = _Room(template)
            if not room.fits(pod):
                continue  # cannot happen for filtered pods; upstream also stops here
            rooms.append(room)
        room.take(pod)
        placed.append(pod)
    return len(rooms), tuple(placed)


def _node_limit(group: NodeGroup, size: int, cluster_size: int, settings: CaSettings) -> int:
    """The estimation limiter: the smallest of the group's room, the cluster's room and the per-scale-up cap.

    Mirrors `thresholdBasedEstimationLimiter` with `sngCapacityThreshold` (this group only),
    `clusterCapacityThreshold` and `staticThreshold` (`--max-nodes-per-scaleup`).
    """
    limit = min(group.max_size - size, settings.max_nodes_per_scale_up)
    if settings.max_nodes_total > 0:
        limit = min(limit, settings.max_nodes_total - cluster_size)
    return limit


def expansion_options(
    pending: Sequence[PodSpec],
    groups: Sequence[NodeGroup],
    group_sizes: Mapping[str, int],
    settings: CaSettings,
    static_fits: StaticFits = node_filters,
    *,
    cluster_size: int | None = None,
) -> list[ScaleUpOption]:
    """The scale-up options worth choosing from, one per group that would help some pod.

    Mirrors `ScaleUpOrchestrator.ScaleUp` up to the expander: `filterValidScaleUpNodeGroups`
    (groups at max size skipped), `SchedulablePodGroups` (pods that fit no empty template of the
    group left out) and `ComputeExpansionOption` (the estimate); options helping no pod dropped.
    `group_sizes` is each group's current plus upcoming nodes (its target size); `cluster_size`,
    the node count `--max-nodes-total` is checked against, defaults to their sum.
    """
    total = sum(group_sizes.values()) if cluster_size is None else cluster_size
    options = []
    for group in groups:
        size = group_sizes.get(group.name, 0)
        if size >= group.max_size:
            continue
        limit = _node_limit(group, size, total, settings)
        if limit <= 0:
            continue
        candidates = [p for p in pending if fits_empty(p, group.template, static_fits)]
        if not candidates:
            continue
        nodes, pods = estimate(candidates, group.template, limit)
        if nodes > 0 and pods:
            options.append(ScaleUpOption(group, nodes, pods))
    return options


def _waste(option: ScaleUpOption) -> float:
    """Least-waste's score: unused CPU share plus unused memory share over the added nodes."""
    template = option.group.template
    wasted = 0.0
    for capacity, requested in (
        (template.cpu, sum(p.cpu_request for p in option.pods)),
        (template.memory, sum(p.memory_request for p in option.pods)),
    ):
        available = capacity * option.nodes
        if available > 0:
            wasted += (available - requested) / available
    return wasted


def _keep_best(options: list[ScaleUpOption], key: Callable[[ScaleUpOption], float]) -> list[ScaleUpOption]:
    best = min(key(o) for o in options)
    return [o for o in options if key(o) == best]


def best_option(
    options: Sequence[ScaleUpOption], settings: CaSettings, rng: np.random.Generator | None = None
) -> ScaleUpOption | None:
    """The option the expander chain picks.

    Mirrors `expander/factory` chaining: each expander keeps its best options and hands them on.
    least-waste (`expander/waste`) keeps the smallest (unused CPU)/(CPU of the added nodes) plus
    the same for memory (upstream reads the template's capacity; here its allocatable); most-pods
    (`expander/mostpods`) the most pods helped; least-nodes (`expander/leastnodes`) the fewest
    nodes; random (`expander/random`) one at random. Ties left at the end are broken at random
    upstream, here with `rng`, or by group name without one. A "random" expander needs `rng`.
    """
    remaining = list(options)
    if not remaining:
        return None
    for name in settings.expanders:
        if len(remaining) == 1:
            break
        if name == "least-waste":
            remaining = _keep_best(remaining, _waste)
        elif name == "most-pods":
            remaining = _keep_best(remaining, lambda o: -len(o.pods))
        elif name == "least-nodes":
            remaining = _keep_best(remaining, lambda o: o.nodes)
        else:
            if rng is None:
                raise ValueError("the random expander needs an rng")
            remaining = [remaining[int(rng.integers(len(remaining)))]]
    if len(remaining) == 1:
        return remaining[0]
    if rng is not None:
        return remaining[int(rng.integers(len(remaining)))]
    return min(remaining, key=lambda o: o.group.name)


def plan_scale_up(
    pending: Sequence[PodSpec],
    groups: Sequence[NodeGroup],
    group_sizes: Mapping[str, int],
    settings: CaSettings,
    static_fits: StaticFits = node_filters,
    rng: np.random.Generator | None = None,
    *,
    cluster_size: int | None = None,
) -> ScaleUpPlan | None:
    """Which group to grow, by how many nodes, and for which pods; None if no group helps.

    Mirrors `ScaleUpOrchestrator.ScaleUp`: `expansion_options`, then `best_option`. The node count
    needs no capping after the expander (upstream's `GetCappedNewNodeCount`): the estimate already
    stopped at the group's max size and `--max-nodes-total`. Not modelled: balancing similar node
    groups, resource quotas (`--cores-total`, `--memory-total`), backoff of failing groups,
    all-or-nothing and zero-or-max scaling.
    """
    if not pending:
        return None
    options = expansion_options(pending, groups, group_sizes, settings, static_fits, cluster_size=cluster_size)
    chosen = best_option(options, settings, rng)
    if chosen is None:
        return None
    return ScaleUpPlan(chosen.group.name, chosen.nodes, chosen.pods)


# --- Scale-down ---------------------------------------------------------------------------------


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
    rooms = {n.name: _Room(n, pods_on.get(n.name, ())) for n in nodes}
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
        moves: list[_Room] = []
        for pod in room.placed:
            target = _first_fit(pod, destinations, static_fits)
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
