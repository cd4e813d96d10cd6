"""The scheduler's view of the cluster: every node's allocatable and requested resources as arrays.

Mirrors the role of kube-scheduler's `framework.NodeInfo` list (the cache snapshot), laid out as
numpy columns so a filter or score runs over a thousand nodes in one vector operation. A node
keeps its row for the whole run (a removed node is marked absent), so arrays recorded in results
stay valid. `order` lists the present nodes by name: the scheduler walks nodes in that order, so
the result does not depend on the order in which same-time events added them. Requests are kept
as set (`requested`, what the filters count) and, for cpu and memory, with the non-zero defaults
the scores count (`non_zero`, upstream's `NonZeroRequested`). The pods are also kept grouped as pod
affinity terms see them (`groups`, see `podgroups`), as a NodeInfo keeps its `PodsWithAffinity`.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.podgroups import PodGroups

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
T = TypeVar("T")

CPU, MEMORY = 0, 1

DEFAULT_MILLI_CPU_REQUEST = 100  # schedutil.DefaultMilliCPURequest
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024  # schedutil.DefaultMemoryRequest

# Versions are unique across snapshots, so a cache keyed on one never takes a fork's facts for its own.
_VERSIONS = itertools.count(1)
# The per-node arrays: each a view of the first rows of a buffer with room to grow, so adding a node
# costs amortised O(1) rather than copying every array (a quadratic build of a large cluster).
_ARRAYS = ("allocatable", "requested", "non_zero", "max_pods", "pod_count", "present", "unschedulable")
_FIRST_CAPACITY = 16


def non_zero_request(value: int | None, default: int) -> int:
    """A container's request as the scoring plugins count it: unset means the default, 0 stays 0.

    Mirrors `schedutil.GetNonzeroRequestForResource` (pkg/scheduler/util/pod_resources.go), with which
    a NodeInfo keeps its `NonZeroRequested`.
    """
    return default if value is None else value


def has_pod_affinity(pod: PodSpec) -> bool:
    """Whether the pod has any pod affinity or anti-affinity term (upstream's `HavePodsWithAffinity` list)."""
    a, anti = pod.pod_affinity, pod.pod_anti_affinity
    return bool(a.required or a.preferred or anti.required or anti.preferred)


class ClusterSnapshot:
    """Nodes and the pods assumed or bound on them."""

    def __init__(self, nodes: Sequence[NodeSpec] = ()) -> None:
        self.resources: list[str] = ["cpu", "memory"]
        self._column: dict[str, int] = {"cpu": CPU, "memory": MEMORY}
        self.nodes: list[NodeSpec] = []
        self.names: list[str] = []  # by row; only ever appended to, so attempts may keep it
        self.index: dict[str, int] = {}
        self.allocatable: Ints = np.zeros((0, 2), dtype=np.int64)
        self.requested: Ints = np.zeros((0, 2), dtype=np.int64)
        self.non_zero: Ints = np.zeros((0, 2), dtype=np.int64)  # cpu, memory with the scoring defaults
        self.max_pods: Ints = np.zeros(0, dtype=np.int64)
        self.pod_count: Ints = np.zeros(0, dtype=np.int64)
        self.present: Bools = np.zeros(0, dtype=np.bool_)
        self.unschedulable: Bools = np.zeros(0, dtype=np.bool_)
        self.pods_on: list[dict[str, PodSpec]] = []
        self._capacity = 0  # rows the buffers hold; the arrays are views of their first len(nodes)
        self._buffers: dict[str, npt.NDArray[Any]] = {}
        self._order: Ints | None = np.zeros(0, dtype=np.int64)  # None: to be sorted again when read
        self.namespaces: dict[str, Mapping[str, str]] = {}  # each namespace's labels (namespaceSelector reads them)
        self.affinity_pods: dict[str, int] = {}  # pods with pod (anti-)affinity terms: the row of their node
        self.priorities: dict[int, int] = {}  # how many pods of each priority are on nodes (preemption's shortcut)
        self.groups = PodGroups()  # the pods and their affinity terms as terms see them, per node row
        self.volumes: Any = None  # the PersistentVolumes, claims and StorageClasses the volume plugins read
        self.version = next(_VERSIONS)  # renewed whenever nodes come, go or change; caches of per-node facts key on it
        self._facts: dict[str, Any] = {}  # facts about the nodes as a whole, for `self._facts_version`
        self._facts_version = self.version
        for node in nodes:
            self.add_node(node)

    # -- nodes -----------------------------------------------------------------------------------

    def add_node(self, node: NodeSpec) -> int:
        if node.name in self.index and self.present[self.index[node.name]]:
            raise ValueError(f"node {node.name!r} is already in the cluster")
        row = self._row(node.cpu, node.memory, node.extended)
        i = len(self.nodes)
        if i >= self._capacity:
            self._grow(i)
        buffers = self._buffers
        buffers["allocatable"][i] = row
        buffers["max_pods"][i] = node.pods
        buffers["present"][i] = True
        buffers["unschedulable"][i] = node.unschedulable  # requested, non_zero and pod_count start at 0
        for name in _ARRAYS:
            setattr(self, name, buffers[name][: i + 1])
        self.nodes.append(node)
        self.names.append(node.name)
        self.index[node.name] = i
        self.pods_on.append({})
        self._changed()
        return i

    def _grow(self, rows: int) -> None:
        """New buffers, twice as many rows, holding the `rows` there are; the old ones stay with their views."""
        capacity = max(_FIRST_CAPACITY, 2 * rows)
        buffers = {}
        for name in _ARRAYS:
            now = getattr(self, name)
            buffer = np.zeros((capacity, *now.shape[1:]), dtype=now.dtype)
            buffer[:rows] = now
            buffers[name] = buffer
        self._buffers = buffers  # a new dict: a fork sharing the old one keeps it
        self._capacity = capacity

    def remove_node(self, name: str) -> list[PodSpec]:
        """Take a node out; returns the pods that were on it (the caller decides their fate)."""
        i = self.index[name]
        pods = list(self.pods_on[i].values())
        for pod in pods:
            self.release(pod, i)
        self.present[i] = False
        del self.index[name]
        self._changed()
        return pods

    def update_node(self, node: NodeSpec) -> None:
        """The node as patched: its labels, taints, `unschedulable` and allocatable from now on; its pods stay."""
        i = self.index[node.name]
        row = self._row(node.cpu, node.memory, node.extended)
        self.nodes[i] = node
        self.allocatable[i] = row
        self.max_pods[i] = node.pods
        self.unschedulable[i] = node.unschedulable
        self.version = next(_VERSIONS)

    def cordon(self, name: str, unschedulable: bool = True) -> None:
        self.unschedulable[self.index[name]] = unschedulable
        self.version = next(_VERSIONS)

    def column(self, resource: str) -> int:
        """The column of a resource, added (0 everywhere) the first time anyone names it."""
        col = self._column.get(resource)
        if col is None:
            col = len(self.resources)
            self.resources.append(resource)
            self._column[resource] = col
            n = len(self.nodes)
            self.allocatable = np.hstack([self.allocatable, np.zeros((n, 1), dtype=np.int64)])
            self.requested = np.hstack([self.requested, np.zeros((n, 1), dtype=np.int64)])
            self._capacity = n  # the wider arrays have no room: the next node grows every buffer
        return col

    @property
    def order(self) -> Ints:
        """The present nodes' rows by name: the order the scheduler walks them in (sorted when next read)."""
        if self._order is None:
            present = np.flatnonzero(self.present)
            names = np.array(self.names, dtype=object)[present]
            self._order = present[np.argsort(names, kind="stable")].astype(np.int64)
        return self._order

    def cluster_fact(self, name: str, compute: Callable[[], T]) -> T:
        """A fact about the present nodes as a whole (no node is cordoned, none has a taint), computed
        once until nodes come, go or change."""
        if self._facts_version != self.version:
            self._facts = {}
            self._facts_version = self.version
        if name not in self._facts:
            self._facts[name] = compute()
        value: T = self._facts[name]
        return value

    def _changed(self) -> None:
        self._order = None
        self.version = next(_VERSIONS)

    def fork(self) -> ClusterSnapshot:
        """A copy to simulate on: nodes added and pods assumed there leave this snapshot as it is.

        Mirrors the cluster autoscaler's `ClusterSnapshot.Fork`; the node specs and pod specs are
        shared (they are frozen), the arrays and per-node pod maps copied.
        """
        forked = copy.copy(self)
        forked.resources = list(self.resources)
        forked._column = dict(self._column)
        forked.nodes = list(self.nodes)
        forked.names = list(self.names)
        forked.index = dict(self.index)
        for name in _ARRAYS:
            setattr(forked, name, getattr(self, name).copy())
        forked._capacity = len(self.nodes)  # its arrays are exact copies: its first new node grows them
        forked.pods_on = [dict(pods) for pods in self.pods_on]
        forked.namespaces = dict(self.namespaces)
        forked.affinity_pods = dict(self.affinity_pods)
        forked.priorities = dict(self.priorities)
        forked.groups = self.groups.copy()
        forked.version = next(_VERSIONS)
        forked._facts = {}
        return forked

    # -- pods ------------------------------------------------------------------------------------

    def request_of(self, pod: PodSpec) -> Ints:
        """The pod's request as a row over the snapshot's resources (unset counts 0, as the filter does)."""
        return self._row(pod.cpu_request, pod.memory_request, pod.extended)

    def _row(self, cpu: int, memory: int, extended: Mapping[str, int]) -> Ints:
        """Amounts as a row over the snapshot's resources, adding a column for a resource named the first time."""
        if not extended and len(self.resources) == 2:
            return np.array((cpu, memory), dtype=np.int64)
        for name in extended:
            self.column(name)
        row = np.zeros(len(self.resources), dtype=np.int64)
        row[CPU], row[MEMORY] = cpu, memory
        for name, amount in extended.items():
            row[self._column[name]] = amount
        return row

    @staticmethod
    def non_zero_of(pod: PodSpec) -> tuple[int, int]:
        """CPU and memory as the scoring plugins count them (`schedutil.GetNonzeroRequests`): a manifest's
        pod brings its own, with the defaults applied per container."""
        if pod.non_zero is not None:
            return pod.non_zero
        return (
            non_zero_request(pod.cpu, DEFAULT_MILLI_CPU_REQUEST),
            non_zero_request(pod.memory, DEFAULT_MEMORY_REQUEST),
        )

    def assume(self, pod: PodSpec, i: int) -> None:
        """Count the pod on node `i` (kube-scheduler's `AssumePod`)."""
        if pod.name in self.pods_on[i]:
            raise ValueError(f"pod {pod.name!r} is already on node {self.nodes[i].name!r}")
        self.pods_on[i][pod.name] = pod
        if has_pod_affinity(pod):
            self.affinity_pods[pod.name] = i
        self.groups.add(pod, i)
        self.priorities[pod.priority] = self.priorities.get(pod.priority, 0) + 1
        row = self.request_of(pod)  # first: a resource named the first time widens `requested`
        self.requested[i] += row
        cpu, memory = self.non_zero_of(pod)
        self.non_zero[i, CPU] += cpu
        self.non_zero[i, MEMORY] += memory
        self.pod_count[i] += 1

    def release(self, pod: PodSpec, i: int) -> None:
        """The pod no longer counts on node `i`."""
        self.groups.remove(self.pods_on[i].pop(pod.name), i)  # as it was counted
        self.affinity_pods.pop(pod.name, None)
        left = self.priorities[pod.priority] - 1
        if left:
            self.priorities[pod.priority] = left
        else:
            del self.priorities[pod.priority]
        row = self.request_of(pod)
        self.requested[i] -= row
        cpu, memory = self.non_zero_of(pod)
        self.non_zero[i, CPU] -= cpu
        self.non_zero[i, MEMORY] -= memory
        self.pod_count[i] -= 1

    # -- totals ----------------------------------------------------------------------------------

    def allocation(self) -> dict[str, float]:
        """Requested over allocatable, per resource, across present nodes."""
        present = self.present
        out = {}
        for col, name in enumerate(self.resources):
            total = int(self.allocatable[present, col].sum())
            if total:
                out[name] = float(self.requested[present, col].sum()) / total
        return out
