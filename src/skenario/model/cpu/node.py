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
pods' processor-sharing CPUs: each time a pod's demand changes (a request starts or stops its CPU
phase) it recomputes the node's level and sets each pod's capacity, O(pods on the node) in
arithmetic, which the design allows for a node's ~110 pods. Inside a pod the requests share the
pod's capacity by processor sharing (`sharing.py`), each at most one core.

A pod alone on its node needs no NodeCPU: its capacity is simply min(limit, node cores), which is
what a scenario without `spec.cluster` gives every pod (see `implicit_node_millicores`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
    """What a NodeCPU needs of a pod's CPU: how many requests it serves, and a way to change its capacity."""

    @property
    def in_service(self) -> int: ...

    def set_cores(self, cores: float) -> None: ...


class _Pod:
    __slots__ = ("cap", "cpu", "weight")

    def __init__(self, cpu: SharedCPU, weight: float, cap: float) -> None:
        self.cpu = cpu
        self.weight = weight
        self.cap = cap


class NodeCPU:
    """One node's cores, kept shared among its pods' CPUs by `fair_shares` as their demands change.

    `attach(cpu, request, limit)` puts a pod's CPU on the node (weight from its request, cap from its
    limit); `detach(cpu)` takes it off. The pod's CPU calls `demand_changed()` whenever its number
    of requests in service changes; the node then sets every pod's capacity anew.
    """

    __slots__ = ("_pods", "cores", "millicores", "name")

    def __init__(self, millicores: int, name: str = "node") -> None:
        if millicores <= 0:
            raise ValueError(f"a node needs > 0 millicores, got {millicores}")
        self.name = name
        self.millicores = millicores
        self.cores = millicores / 1000
        self._pods: dict[SharedCPU, _Pod] = {}

    def __len__(self) -> int:
        return len(self._pods)

    def attach(self, cpu: SharedCPU, request: int, limit: int | None) -> None:
        cap = self.cores if limit is None else min(limit / 1000, self.cores)
        self._pods[cpu] = _Pod(cpu, milli_cpu_to_shares(request), cap)
        self.demand_changed()

    def detach(self, cpu: SharedCPU) -> None:
        if self._pods.pop(cpu, None) is not None:
            self.demand_changed()

    def demand_changed(self) -> None:
        """Recompute the level and give each pod its share (at least a sliver, so a pod never stalls)."""
        pods = list(self._pods.values())
        demands = [min(float(pod.cpu.in_service), pod.cap) for pod in pods]
        shares = fair_shares(demands, [pod.weight for pod in pods], self.cores)
        for pod, demand, share in zip(pods, demands, shares, strict=True):
            # An idle pod keeps its cap as capacity: its next request is admitted at full speed and
            # corrected by the recomputation its admission triggers.
            pod.cpu.set_cores(share if demand else pod.cap)
