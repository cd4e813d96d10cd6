"""The default profile's Filter and Score plugins, each run over many nodes in one vector operation.

A filter returns, for the nodes it is given, a status code per node: 0 passes, any other code
indexes the reasons it returns (kube-scheduler's `framework.Status` messages), and codes in
`unresolvable` are `UnschedulableAndUnresolvable` (no preemption can help). A score plugin
returns raw integer scores and, if it has one, a `normalize` (`ScoreExtensions.NormalizeScore`).
The arithmetic is that of the pure functions in `scoring`, `taints` and `affinity`, which are
tested case by case against upstream; here it is the same integer maths over numpy arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.scoring import (
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_NODE_SCORE,
    ResourceSpec,
    ShapePoint,
    broken_linear,
)
from skenario.scheduling.snapshot import CPU, MEMORY, ClusterSnapshot
from skenario.scheduling.taints import UNSCHEDULABLE_TAINT, Toleration, taints_filter, taints_score

Ints = npt.NDArray[np.int64]


@dataclass
class FilterResult:
    """Per-node codes (0 = pass), the messages the codes stand for, and which codes are final."""

    codes: Ints
    reasons: Sequence[str] = ("",)
    unresolvable: frozenset[int] = frozenset()


class FilterPlugin(Protocol):
    name: str

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult: ...


class ScorePlugin(Protocol):
    name: str

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints: ...

    def normalize(self, scores: Ints) -> Ints | None:
        """The scores scaled to 0..100, or None when the plugin has no NormalizeScore."""
        ...


def normalize_default(scores: Ints, *, reverse: bool) -> Ints:
    """`helper.DefaultNormalizeScore` over an array (see `scoring.default_normalize`)."""
    top = max(int(scores.max(initial=0)), 0)
    if top == 0:
        return np.full_like(scores, MAX_NODE_SCORE) if reverse else scores.copy()
    scaled = _trunc_div(MAX_NODE_SCORE * scores, top)
    return MAX_NODE_SCORE - scaled if reverse else scaled


def _trunc_div(a: Ints, b: Ints | int) -> Ints:
    """Go's integer division (toward zero) over arrays."""
    q = np.abs(a) // np.abs(b)
    return np.where((a >= 0) == (np.asarray(b) >= 0), q, -q)


class _PerNodeCache:
    """Per-node facts that depend only on a pod key and the nodes (labels, taints): computed once."""

    def __init__(self) -> None:
        self._version = -1
        self._values: dict[Hashable, Ints] = {}

    def get(self, key: Hashable, snap: ClusterSnapshot, compute: Callable[[int], int]) -> Ints:
        if snap.version != self._version:
            self._values.clear()
            self._version = snap.version
        values = self._values.get(key)
        if values is None:
            values = np.array([compute(i) for i in range(len(snap.nodes))], dtype=np.int64)
            self._values[key] = values
        return values


# -- filters ---------------------------------------------------------------------------------------


class NodeUnschedulable:
    """A cordoned node takes only pods tolerating its `unschedulable` taint. Mirrors `nodeunschedulable`."""

    name = "NodeUnschedulable"

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        if any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return FilterResult(np.zeros(len(nodes), dtype=np.int64))
        codes = snap.unschedulable[nodes].astype(np.int64)
        return FilterResult(codes, ("", "node(s) were unschedulable"), frozenset({1}))


class NodeResourcesFitFilter:
    """Pod count, then each requested resource against what the node has left. Mirrors `fitsRequest`.

    A request larger than the node's whole allocatable is unresolvable: no preemption frees it.
    Upstream lists every insufficient resource; the first is reported here.
    """

    name = "NodeResourcesFit"

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        request = snap.request_of(pod)
        codes = np.zeros(len(nodes), dtype=np.int64)
        reasons = ["", "Too many pods"]
        unresolvable = set()
        too_many = snap.pod_count[nodes] + 1 > snap.max_pods[nodes]
        codes[too_many] = 1
        allocatable = snap.allocatable[nodes]
        free = allocatable - snap.requested[nodes]
        for col in np.flatnonzero(request > 0):
            short = (codes == 0) & (request[col] > free[:, col])
            if short.any():
                reasons.append(f"Insufficient {snap.resources[col]}")
                codes[short] = len(reasons) - 1
        # A request above a node's whole allocatable, for any resource, no preemption can meet.
        never = ((request > allocatable) & (request > 0)).any(axis=1) & (codes != 0)
        for code in np.unique(codes[never]).tolist():
            reasons.append(reasons[code])  # the same words; only the status differs
            unresolvable.add(len(reasons) - 1)
            codes[never & (codes == code)] = len(reasons) - 1
        return FilterResult(codes, reasons, frozenset(unresolvable))


def _tolerations_key(pod: PodSpec) -> Hashable:
    return pod.tolerations


def _affinity_key(pod: PodSpec) -> Hashable:
    a = pod.affinity
    return (tuple(sorted(a.node_selector.items())), a.required, a.preferred)


class TaintTolerationPlugin:
    """Filter: no untolerated NoSchedule/NoExecute taint. Score: untolerated PreferNoSchedule taints, reversed."""

    name = "TaintToleration"

    def __init__(self) -> None:
        self._blocked = _PerNodeCache()
        self._costs = _PerNodeCache()

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        tolerations = pod.tolerations
        blocked = self._blocked.get(
            _tolerations_key(pod), snap, lambda i: taints_filter(snap.nodes[i].taints, tolerations) is not None
        )
        codes = blocked[nodes]
        if not codes.any():
            return FilterResult(codes)
        # One message per distinct blocking taint, as upstream names the taint.
        reasons = [""]
        out = np.zeros(len(nodes), dtype=np.int64)
        seen: dict[str, int] = {}
        for k in np.flatnonzero(codes):
            taint = taints_filter(snap.nodes[nodes[k]].taints, tolerations)
            assert taint is not None
            text = f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
            if text not in seen:
                reasons.append(text)
                seen[text] = len(reasons) - 1
            out[k] = seen[text]
        return FilterResult(out, reasons, frozenset(range(1, len(reasons))))

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        tolerations: tuple[Toleration, ...] = pod.tolerations
        costs = self._costs.get(_tolerations_key(pod), snap, lambda i: taints_score(snap.nodes[i].taints, tolerations))
        return costs[nodes]

    def normalize(self, scores: Ints) -> Ints | None:
        return normalize_default(scores, reverse=True)


class NodeAffinityPlugin:
    """Filter: nodeSelector and required terms. Score: weights of matching preferred terms, normalised."""

    name = "NodeAffinity"

    def __init__(self) -> None:
        self._allowed = _PerNodeCache()
        self._weights = _PerNodeCache()

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        affinity = pod.affinity
        if not affinity.node_selector and affinity.required is None:
            return FilterResult(np.zeros(len(nodes), dtype=np.int64))
        allowed = self._allowed.get(
            _affinity_key(pod), snap, lambda i: affinity.allows(snap.nodes[i].labels, snap.nodes[i].name)
        )
        codes = 1 - allowed[nodes]
        return FilterResult(codes, ("", "node(s) didn't match Pod's node affinity/selector"), frozenset({1}))

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        affinity = pod.affinity
        if not affinity.preferred:
            return np.zeros(len(nodes), dtype=np.int64)
        weights = self._weights.get(
            _affinity_key(pod), snap, lambda i: affinity.score(snap.nodes[i].labels, snap.nodes[i].name)
        )
        return weights[nodes]

    def normalize(self, scores: Ints) -> Ints | None:
        return normalize_default(scores, reverse=False)


# -- resource scores -------------------------------------------------------------------------------


def _scoring_columns(
    pod: PodSpec, snap: ClusterSnapshot, nodes: Ints, resources: Sequence[ResourceSpec], *, non_zero: bool
) -> tuple[Ints, Ints, Ints]:
    """Requested-with-the-pod and allocatable per node and resource, and the weights.

    A resource the pod does not request, beyond cpu and memory, is left out for that pod, as upstream
    bypasses it; one no node has is left out too (allocatable 0 everywhere).
    """
    cols = [snap.column(resource.name) for resource in resources]  # first: naming a resource adds its column
    request = snap.request_of(pod)
    nz_cpu, nz_memory = snap.non_zero_of(pod)
    requested_cols, allocatable_cols, weights = [], [], []
    for resource, col in zip(resources, cols, strict=True):
        if non_zero and col in (CPU, MEMORY):
            own = nz_cpu if col == CPU else nz_memory
            requested = snap.non_zero[nodes, col] + own
        else:
            if col not in (CPU, MEMORY) and request[col] == 0:
                continue
            requested = snap.requested[nodes, col] + request[col]
        requested_cols.append(requested)
        allocatable_cols.append(snap.allocatable[nodes, col])
        weights.append(resource.weight)
    n = len(nodes)
    if not weights:
        empty = np.zeros((n, 0), dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.int64)
    return (
        np.stack(requested_cols, axis=1),
        np.stack(allocatable_cols, axis=1),
        np.array(weights, dtype=np.int64),
    )


def _weighted_mean(per_resource: Ints, allocatable: Ints, weights: Ints) -> Ints:
    counted = allocatable != 0
    total = (per_resource * weights * counted).sum(axis=1)
    weight_sum = (weights * counted).sum(axis=1)
    return np.where(weight_sum > 0, _trunc_div(total, np.maximum(weight_sum, 1)), 0)


@dataclass
class NodeResourcesFitScore:
    """NodeResourcesFit's score with its `scoringStrategy` (LeastAllocated by default)."""

    strategy: str = "LeastAllocated"  # LeastAllocated | MostAllocated | RequestedToCapacityRatio
    resources: Sequence[ResourceSpec] = field(default_factory=lambda: (ResourceSpec("cpu"), ResourceSpec("memory")))
    shape: Sequence[ShapePoint] = ()
    name: str = "NodeResourcesFit"

    def __post_init__(self) -> None:
        self._table: Ints | None = None
        if self.strategy == "RequestedToCapacityRatio":
            if not self.shape:
                raise ValueError("RequestedToCapacityRatio needs a shape")
            scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
            f = broken_linear([(p.utilization, p.score * scale) for p in self.shape])
            self._table = np.array([f(u) for u in range(101)], dtype=np.int64)
        elif self.strategy not in ("LeastAllocated", "MostAllocated"):
            raise ValueError(f"unknown scoring strategy {self.strategy!r}")

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        requested, allocatable, weights = _scoring_columns(pod, snap, nodes, self.resources, non_zero=True)
        if not len(weights):
            return np.zeros(len(nodes), dtype=np.int64)
        cap = np.maximum(allocatable, 1)
        if self.strategy == "LeastAllocated":
            s = np.where(requested > allocatable, 0, _trunc_div((allocatable - requested) * MAX_NODE_SCORE, cap))
            return _weighted_mean(s, allocatable, weights)
        used = _trunc_div(np.minimum(requested, allocatable) * MAX_NODE_SCORE, cap)
        if self.strategy == "MostAllocated":
            return _weighted_mean(used, allocatable, weights)
        assert self._table is not None
        s = np.where(requested > allocatable, self._table[100], self._table[np.clip(used, 0, 100)])
        counted = (allocatable != 0) & (s > 0)
        total = (s * weights * counted).sum(axis=1)
        weight_sum = (weights * counted).sum(axis=1)
        mean = total / np.maximum(weight_sum, 1)
        rounded = np.floor(np.abs(mean) + 0.5) * np.sign(mean)  # Go's math.Round
        return np.where(weight_sum > 0, rounded, 0).astype(np.int64)

    def normalize(self, scores: Ints) -> Ints | None:
        return None


@dataclass
class BalancedAllocationScore:
    """NodeResourcesBalancedAllocation: 100 x (1 - spread of the fractions used); actual requests.

    A best-effort pod (no request for any of the resources) is skipped, as upstream does since
    kubernetes#129138: every node scores 0 for it.
    """

    resources: Sequence[ResourceSpec] = field(default_factory=lambda: (ResourceSpec("cpu"), ResourceSpec("memory")))
    name: str = "NodeResourcesBalancedAllocation"

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        cols = [snap.column(r.name) for r in self.resources]
        request = snap.request_of(pod)
        if all(request[col] == 0 for col in cols):
            return np.zeros(len(nodes), dtype=np.int64)
        requested, allocatable, _ = _scoring_columns(pod, snap, nodes, self.resources, non_zero=False)
        valid = allocatable != 0
        fractions = np.where(valid, np.minimum(requested / np.maximum(allocatable, 1), 1.0), 0.0)
        count = valid.sum(axis=1)
        std = np.zeros(len(nodes))
        two = count == 2  # upstream takes |f0 - f1| / 2 for exactly two resources counted
        if two.any():
            high = np.where(valid, fractions, -np.inf).max(axis=1)
            low = np.where(valid, fractions, np.inf).min(axis=1)
            std[two] = (high[two] - low[two]) / 2
        many = count > 2
        if many.any():
            f, v, c = fractions[many], valid[many], count[many]
            mean = (f * v).sum(axis=1) / c
            std[many] = np.sqrt((((f - mean[:, None]) * v) ** 2).sum(axis=1) / c)
        return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)

    def normalize(self, scores: Ints) -> Ints | None:
        return None
