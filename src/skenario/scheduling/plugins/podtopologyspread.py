"""PodTopologySpread: spread a workload's pods evenly over topology domains (zones, nodes, racks).

Mirrors `pkg/scheduler/framework/plugins/podtopologyspread` (filtering.go, scoring.go, common.go,
plugin.go) with the MinDomains and NodeInclusionPolicy features on, as they are by default (GA).
The hard constraints (`whenUnsatisfiable: DoNotSchedule`) filter nodes, the soft ones
(`ScheduleAnyway`) score them. The rules are pure functions over plain data; the plugin class at
the end (`PodTopologySpreadPlugin`) hands them the snapshot. Counting pods per domain is per pod and
per node, not vectorised: only pods with spread constraints (their own, or the system defaults for
pods a controller owns) pay for it.

The cluster is plain data so that a caller vectorising over nodes can hand it over as it is:
`nodes`, and parallel to them `pods_on[i]`, the pods bound to node i. Nodes are named by their
position in `nodes`. What is not modelled, and how the caller stands in for it:

- Pods being deleted: upstream skips pods with a deletion timestamp; leave them out of `pods_on`.
- `matchLabelKeys`: not modelled (the spec has no such field).
- Default constraints: only the system defaults (hostname maxSkew 3, zone maxSkew 5, both
  ScheduleAnyway) or none. Upstream builds their selector from the Services, ReplicaSets,
  ReplicationControllers and StatefulSets that select the pod; there are no such objects here,
  so the selector is the pod's own labels (all of them must match), and a pod without labels gets
  no default constraints, as upstream does when no owner selects it.
- Label selectors: `LabelSelector()` matches every pod, like upstream's empty selector `{}`.
  Upstream's *null* selector matches nothing; write it as a contradictory pair of requirements.
- `NodeSpec` always carries `kubernetes.io/hostname`, so no node ever lacks the hostname key.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from skenario.scheduling.objects import (
    DO_NOT_SCHEDULE,
    HOSTNAME_LABEL,
    SCHEDULE_ANYWAY,
    ZONE_LABEL,
    LabelSelector,
    NodeSpec,
    PodSpec,
    TopologySpreadConstraint,
)
from skenario.scheduling.plugins.helper import go_div, go_round
from skenario.scheduling.plugins.interface import MAX_NODE_SCORE, FilterResult, Ints
from skenario.scheduling.plugins.tainttoleration import taints_filter
from skenario.scheduling.snapshot import ClusterSnapshot

HONOR = "Honor"  # v1.NodeInclusionPolicyHonor

# Upstream's ErrReasonConstraintsNotMatch and ErrReasonNodeLabelNotMatch.
REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
REASON_NODE_LABEL_NOT_MATCH = REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

# plugin.go `systemDefaultConstraints`; the selector is filled in per pod.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[TopologySpreadConstraint, ...] = (
    TopologySpreadConstraint(max_skew=3, topology_key=HOSTNAME_LABEL, when_unsatisfiable=SCHEDULE_ANYWAY),
    TopologySpreadConstraint(max_skew=5, topology_key=ZONE_LABEL, when_unsatisfiable=SCHEDULE_ANYWAY),
)


@dataclass(frozen=True)
class SpreadFailure:
    """Why the filter refuses a node, and whether preemption could change that.

    `resolvable` False is upstream's UnschedulableAndUnresolvable: the node lacks a topology key,
    so evicting pods from it cannot help.
    """

    reason: str
    resolvable: bool


def spread_constraints(pod: PodSpec, kind: str, defaulting: bool = True) -> tuple[TopologySpreadConstraint, ...]:
    """The constraints of one kind (DoNotSchedule or ScheduleAnyway) that apply to the pod.

    Mirrors `getConstraints`/`filterTopologySpreadConstraints` and `buildDefaultConstraints`:
    a pod with constraints of its own gets only those (none of the defaults, even if none is of
    `kind`); a pod with none gets the system defaults when `defaulting`, with the pod's labels as
    the selector (see the module docstring).
    """
    if kind not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        raise ValueError(f"kind must be {DO_NOT_SCHEDULE} or {SCHEDULE_ANYWAY}, got {kind!r}")
    if pod.spread:
        return tuple(c for c in pod.spread if c.when_unsatisfiable == kind)
    if not defaulting or not pod.labels:
        return ()
    selector = LabelSelector(match_labels=dict(pod.labels))
    return tuple(
        replace(c, label_selector=selector) for c in SYSTEM_DEFAULT_CONSTRAINTS if c.when_unsatisfiable == kind
    )


def _has_keys(labels: Mapping[str, str], constraints: Sequence[TopologySpreadConstraint]) -> bool:
    """Every constraint's key is on the node (`nodeLabelsMatchSpreadConstraints`)."""
    return all(c.topology_key in labels for c in constraints)


def _included(c: TopologySpreadConstraint, pod: PodSpec, node: NodeSpec) -> bool:
    """Whether the node's pods count for `c` (`matchNodeInclusionPolicies`)."""
    if c.node_affinity_policy == HONOR and not pod.affinity.allows(node.labels, node.name):
        return False
    return not (c.node_taints_policy == HONOR and taints_filter(node.taints, pod.tolerations) is not None)


def _count_matching(pods: Iterable[PodSpec], selector: LabelSelector, namespace: str) -> int:
    """Pods in the incoming pod's namespace that the selector matches (`countPodsMatchSelector`)."""
    return sum(1 for p in pods if p.namespace == namespace and selector.matches(p.labels))


def _check_parallel(nodes: Sequence[NodeSpec], pods_on: Sequence[Sequence[PodSpec]]) -> None:
    if len(nodes) != len(pods_on):
        raise ValueError(f"pods_on must be parallel to nodes: {len(pods_on)} lists for {len(nodes)} nodes")


# --------------------------------------------------------------------------------------------------
# Filter


@dataclass(frozen=True)
class SpreadFilterState:
    """What PreFilter computes once per pod: per hard constraint, matching pods per domain.

    Mirrors `preFilterState` (`TpValueToMatchNum`; the critical paths are an upstream speed-up
    for the minimum, which is taken directly here). Only domains of eligible nodes appear, with
    0 when they hold no matching pod.
    """

    constraints: tuple[TopologySpreadConstraint, ...]
    counts: tuple[Mapping[str, int], ...]

    def min_match(self, i: int) -> int:
        """The global minimum for constraint i; 0 while fewer domains than `minDomains` exist.

        Mirrors `preFilterState.minMatchNum` (an unset minDomains counts as 1).
        """
        counts = self.counts[i]
        min_domains = self.constraints[i].min_domains
        if len(counts) < (1 if min_domains is None else min_domains):
            return 0
        return min(counts.values())


def spread_prefilter(
    pod: PodSpec, nodes: Sequence[NodeSpec], pods_on: Sequence[Sequence[PodSpec]], *, defaulting: bool = True
) -> SpreadFilterState:
    """Count matching pods per domain over all nodes. Mirrors `calPreFilterState`.

    A node counts only if it has every hard constraint's key; then, per constraint, only if it
    passes the constraint's node inclusion policies (nodeAffinityPolicy Honor: the pod's
    nodeSelector and required node affinity; nodeTaintsPolicy Honor: its NoSchedule/NoExecute
    taints are tolerated).
    """
    _check_parallel(nodes, pods_on)
    constraints = spread_constraints(pod, DO_NOT_SCHEDULE, defaulting)
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for node, pods in zip(nodes, pods_on, strict=True):
        if not _has_keys(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not _included(c, pod, node):
                continue
            value = node.labels[c.topology_key]
            counts[i][value] = counts[i].get(value, 0) + _count_matching(pods, c.label_selector, pod.namespace)
    return SpreadFilterState(constraints, tuple(counts))


def spread_filter_node(state: SpreadFilterState, pod: PodSpec, node: NodeSpec) -> SpreadFailure | None:
    """None if the pod may go to the node, else why not. Mirrors `Filter`.

    For each hard constraint in order: a node without the key fails (unresolvable); otherwise
    skew = matching pods in the node's domain + 1 if the pod matches its own selector − the
    global minimum, and the node fails if skew > maxSkew.
    """
    for i, c in enumerate(state.constraints):
        value = node.labels.get(c.topology_key)
        if value is None:
            return SpreadFailure(REASON_NODE_LABEL_NOT_MATCH, resolvable=False)
        self_match = 1 if c.label_selector.matches(pod.labels) else 0
        skew = state.counts[i].get(value, 0) + self_match - state.min_match(i)
        if skew > c.max_skew:
            return SpreadFailure(REASON_CONSTRAINTS_NOT_MATCH, resolvable=True)
    return None


def spread_filter(
    pod: PodSpec,
    nodes: Sequence[NodeSpec],
    pods_on: Sequence[Sequence[PodSpec]],
    evaluate: Iterable[int] | None = None,
    *,
    defaulting: bool = True,
) -> list[SpreadFailure | None]:
    """PreFilter over the whole cluster, then Filter each node in `evaluate` (default: all).

    Returns, parallel to `evaluate`, None for a node that passes or its `SpreadFailure`.
    """
    state = spread_prefilter(pod, nodes, pods_on, defaulting=defaulting)
    indices = range(len(nodes)) if evaluate is None else evaluate
    return [spread_filter_node(state, pod, nodes[n]) for n in indices]


# --------------------------------------------------------------------------------------------------
# Score


def topology_normalizing_weight(size: int) -> float:
    """log(size + 2): counts in a topology with few domains weigh less. Mirrors upstream's function."""
    return math.log(size + 2)


@dataclass(frozen=True)
class SpreadScoreState:
    """What PreScore computes once per pod. Mirrors `preScoreState`.

    `ignored` names the filtered nodes that lack one of the keys (they score 0 and take no part
    in normalisation); `counts` holds, per non-hostname constraint, matching pods per domain of
    the filtered nodes, counted over all nodes (hostname counts are each node's own, taken in
    Score); `weights` the per-constraint `topology_normalizing_weight`.
    """

    constraints: tuple[TopologySpreadConstraint, ...]
    ignored: frozenset[str]
    counts: tuple[Mapping[str, int], ...]
    weights: tuple[float, ...]


def spread_prescore(
    pod: PodSpec,
    nodes: Sequence[NodeSpec],
    pods_on: Sequence[Sequence[PodSpec]],
    filtered: Sequence[int] | None = None,
    *,
    defaulting: bool = True,
) -> SpreadScoreState | None:
    """Prepare scoring of the `filtered` nodes (positions in `nodes`; default all); None means Skip.

    Mirrors `PreScore`/`initPreScoreState`. The domains are those of the filtered nodes; their
    counts include matching pods on every node that has the keys and passes the inclusion
    policies. With the system defaults (the pod has no constraints of its own) nodes need not
    have every key: a node without a zone label is in the zone domain "" (upstream does the same).
    The number of domains of a hostname constraint is the number of filtered, non-ignored nodes.
    """
    _check_parallel(nodes, pods_on)
    if not nodes:
        return None
    chosen = range(len(nodes)) if filtered is None else filtered
    constraints = spread_constraints(pod, SCHEDULE_ANYWAY, defaulting)
    if not constraints:
        return None
    require_all = bool(pod.spread) or not defaulting
    ignored: set[str] = set()
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for n in chosen:
        node = nodes[n]
        if require_all and not _has_keys(node.labels, constraints):
            ignored.add(node.name)
            continue
        for i, c in enumerate(constraints):
            if c.topology_key != HOSTNAME_LABEL:
                counts[i].setdefault(node.labels.get(c.topology_key, ""), 0)
    scored = len(chosen) - len(ignored)
    weights = tuple(
        topology_normalizing_weight(scored if c.topology_key == HOSTNAME_LABEL else len(counts[i]))
        for i, c in enumerate(constraints)
    )
    for node, pods in zip(nodes, pods_on, strict=True):
        if not pods:  # no pod to count: the sums stay as they are, whatever the policies say
            continue
        if require_all and not _has_keys(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            value = node.labels.get(c.topology_key, "")
            # A domain no filtered node is in counts nothing (a hostname constraint keeps none): the
            # inclusion policies, a pure test, are asked only of a node in a counted domain.
            if value in counts[i] and _included(c, pod, node):
                counts[i][value] += _count_matching(pods, c.label_selector, pod.namespace)
    return SpreadScoreState(constraints, frozenset(ignored), tuple(counts), weights)


def spread_raw_score(state: SpreadScoreState, pod: PodSpec, node: NodeSpec, pods: Sequence[PodSpec]) -> int:
    """A node's raw score, lower is better (`pods` are the node's own). Mirrors `Score`.

    Σ over the constraints whose key the node has of count × weight + (maxSkew − 1), where count
    is the matching pods in the node's domain (for hostname: on the node itself) without the
    incoming pod, rounded half away from zero (Go's math.Round). An ignored node scores 0.
    """
    if node.name in state.ignored:
        return 0
    total = 0.0
    for i, c in enumerate(state.constraints):
        value = node.labels.get(c.topology_key)
        if value is None:
            continue
        if c.topology_key == HOSTNAME_LABEL:
            count = _count_matching(pods, c.label_selector, pod.namespace)
        else:
            count = state.counts[i].get(value, 0)
        total += float(count) * state.weights[i] + float(c.max_skew - 1)
    return go_round(total)


def spread_normalize(scores: Sequence[int], ignored: Sequence[bool]) -> list[int]:
    """Turn raw scores (costs) into 0..100, fewest matching pods best. Mirrors `NormalizeScore`.

    Over the non-ignored nodes: if the largest score is 0 all get 100, else
    100 × (max + min − s) / max, truncated. Ignored nodes get 0.
    """
    live = [s for s, skip in zip(scores, ignored, strict=True) if not skip]
    if not live:
        return [0] * len(scores)
    low, high = min(live), max(0, max(live))
    out = []
    for s, skip in zip(scores, ignored, strict=True):
        if skip:
            out.append(0)
        elif high == 0:
            out.append(MAX_NODE_SCORE)
        else:
            out.append(go_div(MAX_NODE_SCORE * (high + low - s), high))
    return out


def spread_score(
    pod: PodSpec,
    nodes: Sequence[NodeSpec],
    pods_on: Sequence[Sequence[PodSpec]],
    filtered: Sequence[int] | None = None,
    *,
    defaulting: bool = True,
) -> list[int]:
    """PreScore, Score and NormalizeScore: the 0..100 scores of the `filtered` nodes, in their order.

    When PreScore skips (no soft constraints apply), every node gets 0, which adds nothing to the
    weighted total, as a skipped plugin does upstream.
    """
    chosen = list(range(len(nodes))) if filtered is None else list(filtered)
    state = spread_prescore(pod, nodes, pods_on, chosen, defaulting=defaulting)
    if state is None:
        return [0] * len(chosen)
    raw = [spread_raw_score(state, pod, nodes[n], pods_on[n]) for n in chosen]
    return spread_normalize(raw, [nodes[n].name in state.ignored for n in chosen])


# --------------------------------------------------------------------------------------------------
# The plugin


def _view(snap: ClusterSnapshot) -> tuple[list[int], list[NodeSpec], list[list[PodSpec]]]:
    present = snap.order.tolist()
    return present, [snap.nodes[i] for i in present], [list(snap.pods_on[i].values()) for i in present]


def _scoring_view(snap: ClusterSnapshot, nodes: Ints) -> tuple[list[NodeSpec], list[list[PodSpec]]]:
    """What PreScore reads: the nodes to score (first, in their order) and every other node holding a
    pod. A node with neither adds no domain and counts no pod, so a cluster of idle nodes costs nothing."""
    busy = np.flatnonzero(snap.pod_count > 0).tolist()  # a removed node's pods were released with it
    rows = list(dict.fromkeys(nodes.tolist() + busy))
    return [snap.nodes[i] for i in rows], [list(snap.pods_on[i].values()) for i in rows]


class PodTopologySpreadPlugin:
    """Filter on DoNotSchedule constraints, score on ScheduleAnyway ones (upstream `podtopologyspread`)."""

    name = "PodTopologySpread"

    def __init__(self) -> None:
        self._ignored: list[bool] | None = None  # None: PreScore skipped the last pod, it scores 0 everywhere

    def pre_filter_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        return not spread_constraints(pod, DO_NOT_SCHEDULE, pod.controlled)

    def pre_score_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        return not spread_constraints(pod, SCHEDULE_ANYWAY, pod.controlled)

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        if not spread_constraints(pod, DO_NOT_SCHEDULE, pod.controlled):
            return FilterResult(np.zeros(len(nodes), dtype=np.int64))
        present, specs, pods_on = _view(snap)
        position = {node: k for k, node in enumerate(present)}
        failures = spread_filter(pod, specs, pods_on, [position[i] for i in nodes.tolist()], defaulting=pod.controlled)
        reasons = [""]
        code_of: dict[tuple[str, bool], int] = {}
        codes = np.zeros(len(nodes), dtype=np.int64)
        for k, failure in enumerate(failures):
            if failure is None:
                continue
            key = (failure.reason, failure.resolvable)
            if key not in code_of:
                reasons.append(failure.reason)
                code_of[key] = len(reasons) - 1
            codes[k] = code_of[key]
        unresolvable = frozenset(code for (_, resolvable), code in code_of.items() if not resolvable)
        return FilterResult(codes, reasons, unresolvable)

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        self._ignored = None
        if not spread_constraints(pod, SCHEDULE_ANYWAY, pod.controlled):
            return np.zeros(len(nodes), dtype=np.int64)
        specs, pods_on = _scoring_view(snap, nodes)
        chosen = list(range(len(nodes)))
        state = spread_prescore(pod, specs, pods_on, chosen, defaulting=pod.controlled)
        if state is None:
            return np.zeros(len(nodes), dtype=np.int64)
        self._ignored = [specs[k].name in state.ignored for k in chosen]
        return np.array([spread_raw_score(state, pod, specs[k], pods_on[k]) for k in chosen], dtype=np.int64)

    def normalize(self, scores: Ints) -> Ints | None:
        if self._ignored is None:
            return np.zeros(len(scores), dtype=np.int64)
        return np.array(spread_normalize(scores.tolist(), self._ignored), dtype=np.int64)
