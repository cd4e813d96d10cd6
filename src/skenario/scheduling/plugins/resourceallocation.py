"""What the resource scores have in common: the resources they score, and each node's columns for them.

Mirrors `pkg/scheduler/framework/plugins/noderesources/resource_allocation.go`, which NodeResourcesFit's
scoring strategies and NodeResourcesBalancedAllocation share: per configured resource
(`config.ResourceSpec`), what the node would have requested with the pod on it and its allocatable
amount (`calculateResourceAllocatableRequest`). Whether requests count with the non-zero defaults
(100m CPU, 200 MiB memory for a container that sets none) is the scorer's choice: NodeResourcesFit
uses them, BalancedAllocation does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.interface import Ints
from skenario.scheduling.snapshot import CPU, MEMORY, ClusterSnapshot


@dataclass(frozen=True)
class ResourceSpec:
    """A resource a strategy scores, with its weight (1..100, as the API validates)."""

    name: str
    weight: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.weight <= 100:
            raise ValueError(f"resource weight of {self.name} must be in 1..100, got {self.weight}")


def default_resources() -> tuple[ResourceSpec, ...]:
    """cpu and memory, weight 1 each: the scorers' `resources` when none are configured."""
    return (ResourceSpec("cpu"), ResourceSpec("memory"))


def scoring_columns(
    pod: PodSpec, snap: ClusterSnapshot, nodes: Ints, resources: Sequence[ResourceSpec], *, non_zero: bool
) -> tuple[Ints, Ints, Ints]:
    """Requested-with-the-pod and allocatable per node and resource, and the weights.

    A resource the pod does not request, beyond cpu and memory, is left out for that pod, as upstream
    bypasses it; one no node has is left out too (allocatable 0 everywhere).
    """
    cols = [snap.column(resource.name) for resource in resources]  # first: naming a resource adds its column
    if cols == [CPU, MEMORY]:
        return _cpu_and_memory(pod, snap, nodes, resources, non_zero=non_zero)
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


def _cpu_and_memory(
    pod: PodSpec, snap: ClusterSnapshot, nodes: Ints, resources: Sequence[ResourceSpec], *, non_zero: bool
) -> tuple[Ints, Ints, Ints]:
    """`scoring_columns` for the default resources: both columns in one gather (`take`, several times
    faster than indexing with an array)."""
    weights = np.array([resource.weight for resource in resources], dtype=np.int64)
    if non_zero:
        requested = snap.non_zero.take(nodes, axis=0) + np.array(snap.non_zero_of(pod), dtype=np.int64)
    else:
        own = np.array([pod.cpu_request, pod.memory_request], dtype=np.int64)
        requested = snap.requested.take(nodes, axis=0)[:, :2] + own
    return requested, snap.allocatable.take(nodes, axis=0)[:, :2], weights
