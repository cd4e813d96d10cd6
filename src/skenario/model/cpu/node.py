"""A node's cores shared among the pods on it, as the kernel's CFS shares them for Kubernetes.

The kubelet turns a container's CPU request into cgroup `cpu.shares` (`MilliCPUToShares`,
pkg/kubelet/cm/helpers_linux.go: 1024 per core, at least 2) and its limit into a CFS quota
(`MilliCPUToQuota`). Under contention CFS gives runnable siblings CPU in proportion to their
shares; CPU a pod leaves idle goes to the others (work-conserving); a pod never runs above its
quota; the node never delivers more than its cores. That is weighted max-min fairness:

    4 cores; pods A, B, C with requests 1:2:5 (shares 1024:2048:5120), no limits,
    each with 4 requests wanting a core each (demand 4 cores).
    One level θ serves all: A gets 1024θ, B 2048θ, C 5120θ, and 8192θ = 4 cores, so
    A 0.5, B 1.0, C 2.5 cores. If C wanted only 1 core, it would get 1 and A, B split the
    other 3 as 1:2: 1 and 2 cores.

`fair_shares` is that water-filling, a pure function. `NodeCPU` keeps it true over time for the
pods' processor-sharing CPUs. A pod's demand changes whenever a request starts or stops its CPU
phase; while the demands fit in the node every pod simply runs at its cap (O(1) per change), and
only while the node is contended does a change recompute the level and every pod's capacity,
O(pods on the node) in arithmetic, which the design allows for a node's ~110 pods. Inside a pod
the requests share the pod's capacity by processor sharing (`sharing.py`), each at most one core.

A pod alone on its node needs no NodeCPU: its capacity is simply min(limit, node cores), which is
what a scenario without `spec.cluster` gives every pod (see `implicit_node_millicores`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol

MIN_SHARES = 2
"""`MinShares`: the least cpu.shares the kubelet sets (a pod that requests no CPU)."""
MAX_SHARES = 262144
"""`MaxShares`: the most cpu.shares the kernel takes."""
SHARES_PER_CPU = 1024
"""`SharesPerCPU`: cpu.shares for one core of request."""

IMPLICIT_NODE_MILLICORES = 4000
"""The cores of the node a pod runs alone on when the scenario has no `spec.cluster`: 4 vCPU, the
size of the common general-purpose instances (m5.xlarge, n2-standard-4, D4s v5)."""


def milli_cpu_to_shares(millicores: int) -> int:
    """cpu.shares for a CPU request, as the kubelet's `MilliCPUToShares` computes them."""
    if millicores <= 0:
        return MIN_SHARES
    return min(max(millicores * SHARES_PER_CPU // 1000, MIN_SHARES), MAX_SHARES)


class WeightRule(StrEnum):
    """How a pod's cpu.shares become the kernel's weight, which sets its part of a contended node.

    On cgroup v1 the shares are the weight. On cgroup v2 the runtime converts them to `cpu.weight`
    in [1, 10000]: linearly before runc 1.3.2 / crun 1.23, on a log curve since (not proportional:
    2 cores of request weigh 1.74 times 1 core).
    """

    SHARES = "shares"
    CGROUP_V2_LINEAR = "cgroupV2Linear"
    CGROUP_V2 = "cgroupV2"


class QoSClass(StrEnum):
    """A pod's QoS class, as `ComputePodQOS` (pkg/apis/core/v1/helper/qos) derives it."""

    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"


def qos_class(
    cpu_request: int | None, cpu_limit: int | None, memory_request: int | None, memory_limit: int | None
) -> QoSClass:
    """BestEffort: no request or limit at all; Guaranteed: CPU and memory limits set, requests equal to them
    (a request left out defaults to its limit); Burstable: anything else. One container, as skenario's pods."""
    if not any((cpu_request, cpu_limit, memory_request, memory_limit)):
        return QoSClass.BEST_EFFORT
    cpu_request = cpu_limit if cpu_request is None else cpu_request
    memory_request = memory_limit if memory_request is None else memory_request
    if cpu_limit and memory_limit and cpu_request == cpu_limit and memory_request == memory_limit:
        return QoSClass.GUARANTEED
    return QoSClass.BURSTABLE


def cpu_weight(millicores: int, rule: WeightRule = WeightRule.SHARES) -> int:
    """The kernel's weight for a CPU request: its cpu.shares, or the cgroup v2 weight a runtime makes of them.

    The v2 rules restate runc's `ConvertCPUSharesToCgroupV2Value`: linear `1 + (s - 2) x 9999 / 262142`
    before runc 1.3.2, then `ceil(10^((L^2 + 125 L) / 612 - 7/34))` with L = log2(s), which maps 2, 1024
    and 262144 shares to 1, 100 and 10000.
    """
    shares = milli_cpu_to_shares(millicores)
    if rule is WeightRule.SHARES:
        return shares
    if rule is WeightRule.CGROUP_V2_LINEAR:
        return 1 + (shares - 2) * 9999 // 262142
    if shares <= 2:
        return 1
    if shares >= MAX_SHARES:
        return 10000
    level = math.log2(shares)
    return math.ceil(10 ** ((level * level + 125 * level) / 612 - 7 / 34))


def implicit_node_millicores(request: int, node: int = IMPLICIT_NODE_MILLICORES) -> int:
    """The implicit node's cores for a pod: `node`, or the pod's request if larger (a pod always fits its node)."""
    return max(node, request)


def pod_capacity(limit: int | None, node: int) -> int:
    """What a pod alone on a node of `node` millicores can use: its CFS quota (limit), or else the whole node."""
    return node if limit is None else min(limit, node)


def fair_shares(demands: Sequence[float], weights: Sequence[float], cores: float) -> list[float]:
    """Weighted max-min fair shares of `cores` for pods wanting `demands` cores, in proportion to `weights`.

    A pod gets min(demand, weight × θ), with θ as high as the cores allow; if every demand fits,
    every pod gets its demand. Weights must be > 0 (shares are at least 2).
    """
    if sum(demands) <= cores:
        return list(demands)
    order = sorted(range(len(demands)), key=lambda i: demands[i] / weights[i])
    shares = [0.0] * len(demands)
    left = cores
    weight_left = math.fsum(weights)
    for position, i in enumerate(order):
        level = left / weight_left
        if demands[i] <= weights[i] * level:
            shares[i] = demands[i]
            left -= demands[i]
            weight_left -= weights[i]
            continue
        for j in order[position:]:
            shares[j] = weights[j] * level
        break
    return shares


class SharedCPU(Protocol):
    """What a NodeCPU needs of a pod's CPU: how many requests it serves, and a way to change its capacity.

    `millicores` is what the pod could use alone on the node (its limit, else the node): the capacity
    its utilisation is measured against, which the node sets when the pod joins it.
    """

    millicores: int

    @property
    def in_service(self) -> int: ...

    def set_cores(self, cores: float) -> None: ...


class _Pod:
    __slots__ = ("cap", "cpu", "demand", "weight")

    def __init__(self, cpu: SharedCPU, weight: float, cap: int) -> None:
        self.cpu = cpu
        self.weight = weight
        self.cap = cap  # millicores: its limit, or the node
        self.demand = 0  # millicores: min(requests in service x 1000, cap)


class NodeCPU:
    """One node's cores, kept shared among its pods' CPUs by `fair_shares` as their demands change.

    `attach(cpu, request, limit)` puts a pod's CPU on the node (weight from its request, cap from its
    limit); `detach(cpu)` takes it off. The pod's CPU calls `demand_changed(cpu)` whenever its number
    of requests in service changes. While the demands fit in the node (the common case) every pod
    runs at its cap and a change costs O(1); only a contended node recomputes every pod's share.
    Demands are kept in integer millicores, so the running total never drifts.
    """

    __slots__ = ("_contended", "_pods", "_total", "cores", "millicores", "name", "weights")

    def __init__(self, millicores: int, name: str = "node", weights: WeightRule = WeightRule.SHARES) -> None:
        if millicores <= 0:
            raise ValueError(f"a node needs > 0 millicores, got {millicores}")
        self.name = name
        self.weights = weights
        self.millicores = millicores
        self.cores = millicores / 1000
        self._pods: dict[SharedCPU, _Pod] = {}
        self._total = 0  # millicores demanded by all pods
        self._contended = False

    def __len__(self) -> int:
        return len(self._pods)

    def attach(self, cpu: SharedCPU, request: int, limit: int | None) -> None:
        pod = self._pods[cpu] = _Pod(cpu, cpu_weight(request, self.weights), pod_capacity(limit, self.millicores))
        cpu.millicores = pod.cap
        cpu.set_cores(pod.cap / 1000)
        self.demand_changed(cpu)

    def detach(self, cpu: SharedCPU) -> None:
        pod = self._pods.pop(cpu, None)
        if pod is not None:
            self._total -= pod.demand
            self._rebalance()

    def demand_changed(self, cpu: SharedCPU) -> None:
        """The pod's requests in service changed: O(1) while the node has room, else every share anew."""
        pod = self._pods[cpu]
        demand = cpu.in_service * 1000
        if demand > pod.cap:
            demand = pod.cap
        self._total += demand - pod.demand
        pod.demand = demand
        if self._total > self.millicores or self._contended:
            self._rebalance()

    def _rebalance(self) -> None:
        pods = list(self._pods.values())
        if self._total <= self.millicores:
            # Every demand fits: each pod runs at its cap, which gives it its demand (rate min(1, cap/n)).
            self._contended = False
            for pod in pods:
                pod.cpu.set_cores(pod.cap / 1000)
            return
        self._contended = True
        shares = fair_shares([pod.demand for pod in pods], [pod.weight for pod in pods], self.millicores)
        for pod, share in zip(pods, shares, strict=True):
            # An idle pod keeps its cap: its next request starts at full speed until the
            # recomputation its admission triggers gives it its share.
            pod.cpu.set_cores(share / 1000 if pod.demand else pod.cap / 1000)
