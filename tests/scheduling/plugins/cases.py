"""Upstream's table-driven score cases as data: the shapes the resource scorers' test modules share.

The modules `test_noderesources` and `test_balancedallocation` restate, as data, the table-driven
tests of kubernetes/kubernetes `pkg/scheduler/framework/plugins/noderesources` and `.../helper`
(`test_helper`). Each case names the upstream file, test function and case name (`t.Run` name, or
`case_<i>` for unnamed cases), and says how the per-resource `requested` and `allocatable` lists
follow from the case's pods and nodes. Versions read:

- least_allocated_test.go @ 008b3652, most_allocated_test.go @ 030880a5,
  requested_to_capacity_ratio_test.go @ 8519d339, balanced_allocation_test.go @ 00fdb4ff
  (the std-dev form, before kubernetes/kubernetes#135573; see the note above BALANCED in
  test_balancedallocation),
  helper/normalize_score_test.go @ 0c3d8b97. There is no helper/shape_score_test.go upstream:
  `BuildBrokenLinearFunction` is tested by TestBrokenLinearFunction in requested_to_capacity_ratio_test.go.

How upstream builds the lists (resource_allocation.go, `calculateResourceAllocatableRequest`):
`requested[i]` = the node's requests + the pod's, `allocatable[i]` = the node's allocatable.
- Units. CPU is in millicores. In `st.MakeNode().Capacity({"cpu": "4000"})` and `Req({"cpu": "1000"})`
  the quantity is in cores (4000 cores = 4,000,000 m); `makeNode(name, 4000, ...)` and "1000m" are
  millicores. Memory and extended resources are plain integers. `Capacity` sets allocatable too.
- `st.MakePod().Req(m)` adds one container requesting `m`; `st.MakePod().Obj()` has no containers
  (requests 0 even with non-zero defaults); `.Container("c")` adds a container with no requests.
- NodeResourcesFit strategies (Least/Most/RequestedToCapacityRatio) count a container's *missing*
  cpu/memory request as 100m / 200Mi, for the pod and for the node's pods (`NonZeroRequested`); an
  explicit "0" stays 0. BalancedAllocation counts actual requests.
- An extended (scalar) resource the pod does not request is bypassed as (0, 0); so is one the node
  lacks. Entries with allocatable 0 are skipped by every scorer, so the lists carry 0/0 there.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import settings
from hypothesis import strategies as st

from skenario.scheduling.plugins.noderesources import ShapePoint
from skenario.scheduling.plugins.resourceallocation import ResourceSpec

CORES = 1000  # millicores in a "cpu" quantity written without a unit ("4000" = 4000 cores)
MI = 1024 * 1024

CPU = ResourceSpec("cpu", 1)
MEMORY = ResourceSpec("memory", 1)
DEFAULT_RESOURCES = (CPU, MEMORY)  # upstream `defaultResources`


@dataclass(frozen=True)
class Node:
    """One node of an upstream case: what the scorer sees for it, and the score upstream expects."""

    name: str
    requested: tuple[int, ...]
    allocatable: tuple[int, ...]
    expected: int


@dataclass(frozen=True)
class Case:
    test: str  # upstream file and test function
    name: str  # upstream case name
    resources: tuple[ResourceSpec, ...]
    nodes: tuple[Node, ...]
    shape: tuple[ShapePoint, ...] = ()  # RequestedToCapacityRatio only


def params(cases: list[Case]) -> list:
    return [pytest.param(c, n, id=f"{c.name}/{n.name}") for c in cases for n in c.nodes]


PROPERTY_SETTINGS = settings(max_examples=200, deadline=None)


@st.composite
def nodes_and_resources(draw: st.DrawFn, *, within_capacity: bool = False, equal_weights: bool = False) -> tuple:
    """Per-resource requested and allocatable lists (allocatable may be 0) and matching ResourceSpecs."""
    n = draw(st.integers(1, 5))
    allocatable = draw(st.lists(st.integers(0 if not within_capacity else 1, 10**12), min_size=n, max_size=n))
    if within_capacity:
        requested = [draw(st.integers(0, a)) for a in allocatable]
    else:
        requested = draw(st.lists(st.integers(0, 2 * 10**12), min_size=n, max_size=n))
    if equal_weights:
        weights = [draw(st.integers(1, 100))] * n
    else:
        weights = draw(st.lists(st.integers(1, 100), min_size=n, max_size=n))
    resources = [ResourceSpec(f"r{i}", w) for i, w in enumerate(weights)]
    return requested, allocatable, resources
