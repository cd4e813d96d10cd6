"""kube-scheduler's resource scores and score normalisation, checked against upstream's unit tests.

The cases below restate, as data, the table-driven tests of kubernetes/kubernetes
`pkg/scheduler/framework/plugins/noderesources` and `.../helper`. Each case names the upstream
file, test function and case name (`t.Run` name, or `case_<i>` for unnamed cases), and says how the
per-resource `requested` and `allocatable` lists follow from the case's pods and nodes. Versions read:

- least_allocated_test.go @ 008b3652, most_allocated_test.go @ 030880a5,
  requested_to_capacity_ratio_test.go @ 8519d339, balanced_allocation_test.go @ 00fdb4ff
  (the std-dev form, before kubernetes/kubernetes#135573; see the note above BALANCED),
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
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.scoring import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    ResourceSpec,
    ShapePoint,
    balanced_allocation,
    broken_linear,
    default_normalize,
    least_allocated,
    most_allocated,
    non_zero_request,
    requested_to_capacity_ratio,
)

CORES = 1000  # millicores in a "cpu" quantity written without a unit ("4000" = 4000 cores)
MI = 1024 * 1024

CPU = ResourceSpec("cpu", 1)
MEMORY = ResourceSpec("memory", 1)
DEFAULT_RESOURCES = (CPU, MEMORY)  # upstream `defaultResources`
EXT = "abc.com/xyz"  # upstream `extendedRes`
EXTENDED_RESOURCE_SET = (CPU, MEMORY, ResourceSpec(EXT, 1))  # upstream `extendedResourceSet`


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


def _params(cases: list[Case]) -> list:
    return [pytest.param(c, n, id=f"{c.name}/{n.name}") for c in cases for n in c.nodes]


# --------------------------------------------------------------------------------------------------
# least_allocated_test.go, TestLeastAllocatedScoringStrategy
LEAST = "least_allocated_test.go TestLeastAllocatedScoringStrategy"
LEAST_CASES = [
    # "nothing scheduled, nothing requested": pod has no containers (0/0); no pods on the nodes.
    # Both nodes 4000 cores/10000 -> requested [0, 0] of [4_000_000, 10000] -> (100 + 100) / 2.
    Case(
        LEAST,
        "nothing scheduled, nothing requested",
        DEFAULT_RESOURCES,
        (
            Node("node1", (0, 0), (4000 * CORES, 10000), 100),
            Node("node2", (0, 0), (4000 * CORES, 10000), 100),
        ),
    ),
    # "nothing scheduled, resources requested, differently sized nodes": pod containers 1000+2000 cores,
    # 2000+3000 memory -> [3000 cores, 5000]. node1 4000 cores/10000: cpu 25, mem 50 -> 37;
    # node2 6000 cores/10000: 50, 50 -> 50.
    Case(
        LEAST,
        "nothing scheduled, resources requested, differently sized nodes",
        DEFAULT_RESOURCES,
        (
            Node("node1", (3000 * CORES, 5000), (4000 * CORES, 10000), 37),
            Node("node2", (3000 * CORES, 5000), (6000 * CORES, 10000), 50),
        ),
    ),
    # "Resources not set, pods scheduled with error": resources nil. Upstream's Score returns
    # MinNodeScore (0) with an Error status ("resources not found"); the status is the caller's.
    # With no resources the pure function sees empty lists and returns 0.
    Case(
        LEAST,
        "Resources not set, pods scheduled with error",
        (),
        (Node("node1", (), (), 0), Node("node2", (), (), 0)),
    ),
    # "no resources requested, pods scheduled": pod and the existing pods have no containers -> 0.
    # Both nodes 4000 cores/10000 -> [0, 0] -> 100.
    Case(
        LEAST,
        "no resources requested, pods scheduled",
        DEFAULT_RESOURCES,
        (
            Node("node1", (0, 0), (4000 * CORES, 10000), 100),
            Node("node2", (0, 0), (4000 * CORES, 10000), 100),
        ),
    ),
    # "no resources requested, pods scheduled with resources": pod has no containers; nodes 10000 cores/20000.
    # node1 pods 3000 cores/"0" + 3000 cores/"0" -> [6000 cores, 0]: cpu 40, mem 100 -> 70.
    # node2 pods 3000 cores/"0" + 3000 cores/5000 -> [6000 cores, 5000]: 40, 75 -> 57.
    Case(
        LEAST,
        "no resources requested, pods scheduled with resources",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000 * CORES, 0), (10000 * CORES, 20000), 70),
            Node("node2", (6000 * CORES, 5000), (10000 * CORES, 20000), 57),
        ),
    ),
    # "resources requested, pods scheduled with resources": pod [3000 cores, 5000]; nodes 10000 cores/20000.
    # node1 pod 3000 cores/"0" -> [6000 cores, 5000]: 40, 75 -> 57.
    # node2 pod 3000 cores/5000 -> [6000 cores, 10000]: 40, 50 -> 45.
    Case(
        LEAST,
        "resources requested, pods scheduled with resources",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000 * CORES, 5000), (10000 * CORES, 20000), 57),
            Node("node2", (6000 * CORES, 10000), (10000 * CORES, 20000), 45),
        ),
    ),
    # "resources requested, pods scheduled with resources, differently sized nodes": as above, but
    # node2 is 10000 cores/50000: [6000 cores, 10000]: 40, 80 -> 60.
    Case(
        LEAST,
        "resources requested, pods scheduled with resources, differently sized nodes",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000 * CORES, 5000), (10000 * CORES, 20000), 57),
            Node("node2", (6000 * CORES, 10000), (10000 * CORES, 50000), 60),
        ),
    ),
    # "requested resources exceed node capacity": pod [3000 cores, "0"]; nodes 4000 cores/10000.
    # node1 pod 3000 cores/"0" -> [6000 cores, 0]: cpu over capacity 0, mem 100 -> 50.
    # node2 pod 3000 cores/5000 -> [6000 cores, 5000]: 0, 50 -> 25.
    Case(
        LEAST,
        "requested resources exceed node capacity",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000 * CORES, 0), (4000 * CORES, 10000), 50),
            Node("node2", (6000 * CORES, 5000), (4000 * CORES, 10000), 25),
        ),
    ),
    # "zero node resources, pods scheduled with resources": nodes have no cpu/memory (allocatable 0);
    # pod has no containers; node1 pod 3000 cores/"0", node2 pod 3000 cores/5000. Every entry is
    # skipped, the weight sum is 0 -> 0.
    Case(
        LEAST,
        "zero node resources, pods scheduled with resources",
        DEFAULT_RESOURCES,
        (
            Node("node1", (3000 * CORES, 0), (0, 0), 0),
            Node("node2", (3000 * CORES, 5000), (0, 0), 0),
        ),
    ),
    # "nothing scheduled, resources requested with different weight on CPU and memory, differently sized
    # nodes": resources [memory w2, cpu w1], so the lists are [memory, cpu]; pod [5000, 3000 cores].
    # node1 10000/4000 cores: mem 50, cpu 25 -> (50*2 + 25) / 3 = 41. node2 10000/6000 cores: 50, 50 -> 50.
    Case(
        LEAST,
        "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
        (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)),
        (
            Node("node1", (5000, 3000 * CORES), (10000, 4000 * CORES), 41),
            Node("node2", (5000, 3000 * CORES), (10000, 6000 * CORES), 50),
        ),
    ),
    # "resource with negative weight", "resource with zero weight", "resource weight larger than
    # MaxNodeScore": plugin argument validation errors; restated in test_invalid_weights_are_rejected.
    #
    # "bypass extended resource if the pod does not request": extendedResourceSet [cpu, memory, ext];
    # pod [3000 cores, 5000], no ext, so ext is (0, 0) on both nodes (node2 has 4 of it, node1 none).
    # Both 6000 cores/10000: 50, 50 -> 50.
    Case(
        LEAST,
        "bypass extended resource if the pod does not request",
        EXTENDED_RESOURCE_SET,
        (
            Node("node1", (3000 * CORES, 5000, 0), (6000 * CORES, 10000, 0), 50),
            Node("node2", (3000 * CORES, 5000, 0), (6000 * CORES, 10000, 0), 50),
        ),
    ),
    # "honor extended resource if the pod requests": pod one container 3000 cores/5000/ext 2.
    # node1 6000 cores/10000/ext 4: 50, 50, 50 -> 50. node2 ext 10: 50, 50, (10-2)*100/10 = 80 -> 60.
    Case(
        LEAST,
        "honor extended resource if the pod requests",
        EXTENDED_RESOURCE_SET,
        (
            Node("node1", (3000 * CORES, 5000, 2), (6000 * CORES, 10000, 4), 50),
            Node("node2", (3000 * CORES, 5000, 2), (6000 * CORES, 10000, 10), 60),
        ),
    ),
    # "if the node doesn't have a resource": resources [ext w2, cpu w1, memory w1]; pod [3000 cores, 4000],
    # no ext -> ext (0, 0) on both (node2 has 4 of it). Both 6000 cores/10000: cpu 50, mem 60 -> 55.
    Case(
        LEAST,
        "if the node doesn't have a resource",
        (ResourceSpec(EXT, 2), CPU, MEMORY),
        (
            Node("node1", (0, 3000 * CORES, 4000), (0, 6000 * CORES, 10000), 55),
            Node("node2", (0, 3000 * CORES, 4000), (0, 6000 * CORES, 10000), 55),
        ),
    ),
]


@pytest.mark.parametrize(("case", "node"), _params(LEAST_CASES))
def test_least_allocated_upstream(case: Case, node: Node) -> None:
    assert least_allocated(node.requested, node.allocatable, case.resources) == node.expected


# --------------------------------------------------------------------------------------------------
# most_allocated_test.go, TestMostAllocatedScoringStrategy
MOST = "most_allocated_test.go TestMostAllocatedScoringStrategy"
# The non-zero-default case: one container with no requests counts 100m cpu and 200Mi memory.
_NZ_CPU = non_zero_request(None, DEFAULT_MILLI_CPU_REQUEST)
_NZ_MEM = non_zero_request(None, DEFAULT_MEMORY_REQUEST)
MOST_CASES = [
    # "nothing scheduled, nothing requested": pod has no containers; nodes 4000 cores/10000 -> [0, 0] -> 0.
    Case(
        MOST,
        "nothing scheduled, nothing requested",
        DEFAULT_RESOURCES,
        (
            Node("node1", (0, 0), (4000 * CORES, 10000), 0),
            Node("node2", (0, 0), (4000 * CORES, 10000), 0),
        ),
    ),
    # "nothing scheduled, resources requested, differently sized nodes" (the first case of that name):
    # pod [1000+2000 cores, 2000+3000] = [3000 cores, 5000]. node1 4000 cores/10000: 75, 50 -> 62;
    # node2 6000 cores/10000: 50, 50 -> 50.
    Case(
        MOST,
        "nothing scheduled, resources requested, differently sized nodes",
        DEFAULT_RESOURCES,
        (
            Node("node1", (3000 * CORES, 5000), (4000 * CORES, 10000), 62),
            Node("node2", (3000 * CORES, 5000), (6000 * CORES, 10000), 50),
        ),
    ),
    # "Resources not set, pods scheduled with error": as in least_allocated_test.go, upstream returns
    # MinNodeScore with an Error status; the pure function, with no resources, returns 0.
    Case(
        MOST,
        "Resources not set, pods scheduled with error",
        (),
        (Node("node1", (), (), 0), Node("node2", (), (), 0)),
    ),
    # "no resources requested, pods scheduled with resources": pod has no containers; nodes 10000 cores/20000.
    # node1 pods 3000 cores/"0" x2 -> [6000 cores, 0]: 60, 0 -> 30.
    # node2 pods 3000 cores/"0" + 3000 cores/5000 -> [6000 cores, 5000]: 60, 25 -> 42.
    Case(
        MOST,
        "no resources requested, pods scheduled with resources",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000 * CORES, 0), (10000 * CORES, 20000), 30),
            Node("node2", (6000 * CORES, 5000), (10000 * CORES, 20000), 42),
        ),
    ),
    # "resources requested, pods scheduled with resources": pod [3000 cores, 5000]; nodes 10000 cores/20000.
    # node1 pod 3000 cores/"0" -> [6000 cores, 5000]: 60, 25 -> 42.
    # node2 pod 3000 cores/5000 -> [6000 cores, 10000]: 60, 50 -> 55.
    Case(
        MOST,
        "resources requested, pods scheduled with resources",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000 * CORES, 5000), (10000 * CORES, 20000), 42),
            Node("node2", (6000 * CORES, 10000), (10000 * CORES, 20000), 55),
        ),
    ),
    # "resources requested equal node capacity": pod [2000+3000 cores, 4000+5000] = [5000 cores, 9000].
    # node1 5000 cores/10000: 100, 90 -> 95. node2 10000 cores/9000: 50, 100 -> 75.
    Case(
        MOST,
        "resources requested equal node capacity",
        DEFAULT_RESOURCES,
        (
            Node("node1", (5000 * CORES, 9000), (5000 * CORES, 10000), 95),
            Node("node2", (5000 * CORES, 9000), (10000 * CORES, 9000), 75),
        ),
    ),
    # "nothing scheduled, resources requested, differently sized nodes" (the second case of that name,
    # weighted): resources [memory w2, cpu w1], lists [memory, cpu]; pod [5000, 3000 cores].
    # node1 10000/4000 cores: 50, 75 -> (50*2 + 75) / 3 = 58. node2 10000/6000 cores: 50, 50 -> 50.
    Case(
        MOST,
        "nothing scheduled, resources requested, differently sized nodes (weighted memory 2, cpu 1)",
        (ResourceSpec("memory", 2), ResourceSpec("cpu", 1)),
        (
            Node("node1", (5000, 3000 * CORES), (10000, 4000 * CORES), 58),
            Node("node2", (5000, 3000 * CORES), (10000, 6000 * CORES), 50),
        ),
    ),
    # "no resources requested, pods scheduled, nonzero request for resource": nodes 250m/1000Mi; the pod
    # and node1's two pods each have one container with no requests, counted as 100m/200Mi.
    # node1 3 x [100m, 200Mi] = [300m, 600Mi]: cpu capped at 250 -> 100, mem 60 -> 80.
    # node2 only the pod, [100m, 200Mi]: 40, 20 -> 30.
    Case(
        MOST,
        "no resources requested, pods scheduled, nonzero request for resource",
        DEFAULT_RESOURCES,
        (
            Node("node1", (3 * _NZ_CPU, 3 * _NZ_MEM), (250, 1000 * MI), 80),
            Node("node2", (_NZ_CPU, _NZ_MEM), (250, 1000 * MI), 30),
        ),
    ),
    # "resource with negative weight", "resource with zero weight", "resource weight larger than
    # MaxNodeScore": validation errors; restated in test_invalid_weights_are_rejected.
    #
    # "bypass extended resource if the pod does not request": pod [3000 cores, 5000], no ext -> ext (0, 0).
    # Both 6000 cores/10000: 50, 50 -> 50.
    Case(
        MOST,
        "bypass extended resource if the pod does not request",
        EXTENDED_RESOURCE_SET,
        (
            Node("node1", (3000 * CORES, 5000, 0), (6000 * CORES, 10000, 0), 50),
            Node("node2", (3000 * CORES, 5000, 0), (6000 * CORES, 10000, 0), 50),
        ),
    ),
    # "honor extended resource if the pod request": pod 3000 cores/5000/ext 2.
    # node1 6000 cores/10000/ext 4: 50, 50, 50 -> 50. node2 ext 10: 50, 50, 20 -> 40.
    Case(
        MOST,
        "honor extended resource if the pod request",
        EXTENDED_RESOURCE_SET,
        (
            Node("node1", (3000 * CORES, 5000, 2), (6000 * CORES, 10000, 4), 50),
            Node("node2", (3000 * CORES, 5000, 2), (6000 * CORES, 10000, 10), 40),
        ),
    ),
    # "if the node doesn't have a resource": resources [ext w2, cpu, memory]; pod [3000 cores, 4000], no ext
    # -> ext (0, 0). Both 6000 cores/10000: 50, 40 -> 45.
    Case(
        MOST,
        "if the node doesn't have a resource",
        (ResourceSpec(EXT, 2), CPU, MEMORY),
        (
            Node("node1", (0, 3000 * CORES, 4000), (0, 6000 * CORES, 10000), 45),
            Node("node2", (0, 3000 * CORES, 4000), (0, 6000 * CORES, 10000), 45),
        ),
    ),
]


@pytest.mark.parametrize(("case", "node"), _params(MOST_CASES))
def test_most_allocated_upstream(case: Case, node: Node) -> None:
    assert most_allocated(node.requested, node.allocatable, case.resources) == node.expected


# (least_allocated_test.go and most_allocated_test.go, TestLeast/MostAllocatedScoringStrategy)
# "resource with negative weight" (-1), "resource with zero weight" (0) and "resource weight larger than
# MaxNodeScore" (101): upstream's NewFit fails argument validation (scoringStrategy.resources[i].weight).
# Here the weight is validated when the ResourceSpec is built.
@pytest.mark.parametrize("weight", [-1, 0, 101])
def test_invalid_weights_are_rejected(weight: int) -> None:
    with pytest.raises(ValueError, match="weight"):
        ResourceSpec("memory", weight)


def test_non_zero_request() -> None:
    # schedutil's non-zero defaults: a missing request counts as the default, an explicit 0 stays 0.
    assert (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST) == (100, 200 * MI)
    assert non_zero_request(None, DEFAULT_MILLI_CPU_REQUEST) == 100
    assert non_zero_request(0, DEFAULT_MILLI_CPU_REQUEST) == 0
    assert non_zero_request(250, DEFAULT_MILLI_CPU_REQUEST) == 250


# --------------------------------------------------------------------------------------------------
# requested_to_capacity_ratio_test.go
RTCR = "requested_to_capacity_ratio_test.go TestRequestedToCapacityRatioScoringStrategy"
# The test's shape: utilisation 0 -> 10, 100 -> 0 (scaled to 100 -> 0), i.e. "least requested".
LEAST_SHAPE = (ShapePoint(0, 10), ShapePoint(100, 0))
RTCR_CASES = [
    # "nothing scheduled, nothing requested (default - least requested nodes have priority)": the pod and
    # node1's two pods have no containers -> [0, 0] of 4000 cores/10000 on both: f(0) = 100 -> 100.
    Case(
        RTCR,
        "nothing scheduled, nothing requested (default - least requested nodes have priority)",
        DEFAULT_RESOURCES,
        (
            Node("node1", (0, 0), (4000 * CORES, 10000), 100),
            Node("node2", (0, 0), (4000 * CORES, 10000), 100),
        ),
        LEAST_SHAPE,
    ),
    # "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes
    # have priority)": pod [3000 cores, 5000]; node1's pods have no containers.
    # node1 4000 cores/10000: util 75 -> 25, util 50 -> 50; round(75 / 2) = 38.
    # node2 6000 cores/10000: 50 -> 50, 50 -> 50 -> 50.
    Case(
        RTCR,
        "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have "
        "priority)",
        DEFAULT_RESOURCES,
        (
            Node("node1", (3000 * CORES, 5000), (4000 * CORES, 10000), 38),
            Node("node2", (3000 * CORES, 5000), (6000 * CORES, 10000), 50),
        ),
        LEAST_SHAPE,
    ),
    # "no resources requested, pods scheduled with resources (default - least requested nodes have
    # priority)": pod has no containers; each node has one pod of 3000 cores/5000 -> same lists as above.
    Case(
        RTCR,
        "no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
        DEFAULT_RESOURCES,
        (
            Node("node1", (3000 * CORES, 5000), (4000 * CORES, 10000), 38),
            Node("node2", (3000 * CORES, 5000), (6000 * CORES, 10000), 50),
        ),
        LEAST_SHAPE,
    ),
]

# TestResourceBinPackingSingleExtended: resources [intel.com/foo w1], shape 0 -> 0, 100 -> 1 (scaled to 10).
# Nodes: node1 = makeNode(4000m, 10000Mi, foo 8), node2 = makeNode(4000m, 10000Mi, foo 4).
SINGLE = "requested_to_capacity_ratio_test.go TestResourceBinPackingSingleExtended"
FOO = (ResourceSpec("intel.com/foo", 1),)
BIN_PACKING_SHAPE = (ShapePoint(0, 0), ShapePoint(100, 1))
RTCR_CASES += [
    # "nothing scheduled, nothing requested": pod requests no foo -> (0, 0) on both -> 0.
    Case(
        SINGLE,
        "nothing scheduled, nothing requested",
        FOO,
        (Node("node1", (0,), (0,), 0), Node("node2", (0,), (0,), 0)),
        BIN_PACKING_SHAPE,
    ),
    # "resources requested, pods scheduled with less resources": pod foo 2; the other pod has no node.
    # node1 2/8: util 25 -> 10*25/100 = 2. node2 2/4: util 50 -> 5.
    Case(
        SINGLE,
        "resources requested, pods scheduled with less resources",
        FOO,
        (Node("node1", (2,), (8,), 2), Node("node2", (2,), (4,), 5)),
        BIN_PACKING_SHAPE,
    ),
    # "resources requested, pods scheduled with resources, on node with existing pod running " (sic, with the
    # trailing space): pod foo 2; node2 runs a pod of foo 2. node1 2/8 -> 2. node2 4/4: util 100 -> 10.
    Case(
        SINGLE,
        "resources requested, pods scheduled with resources, on node with existing pod running ",
        FOO,
        (Node("node1", (2,), (8,), 2), Node("node2", (4,), (4,), 10)),
        BIN_PACKING_SHAPE,
    ),
    # "resources requested, pods scheduled with more resources": pod foo 4. node1 4/8 -> 5; node2 4/4 -> 10.
    Case(
        SINGLE,
        "resources requested, pods scheduled with more resources",
        FOO,
        (Node("node1", (4,), (8,), 5), Node("node2", (4,), (4,), 10)),
        BIN_PACKING_SHAPE,
    ),
]

# TestResourceBinPackingMultipleExtended: resources [intel.com/foo w3, intel.com/bar w5], same shape.
# Nodes: node1 foo 8, bar 4; node2 foo 4, bar 8. Lists are [foo, bar].
MULTIPLE = "requested_to_capacity_ratio_test.go TestResourceBinPackingMultipleExtended"
FOO_BAR = (ResourceSpec("intel.com/foo", 3), ResourceSpec("intel.com/bar", 5))
RTCR_CASES += [
    # "nothing scheduled, nothing requested": pod requests neither -> both (0, 0) -> 0.
    Case(
        MULTIPLE,
        "nothing scheduled, nothing requested",
        FOO_BAR,
        (Node("node1", (0, 0), (0, 0), 0), Node("node2", (0, 0), (0, 0), 0)),
        BIN_PACKING_SHAPE,
    ),
    # "resources requested, pods scheduled with less resources": pod foo 2, bar 2; the other pod has no node.
    # node1 foo 2/8 -> 2, bar 2/4 -> 5: round((2*3 + 5*5) / 8 = 3.875) = 4.
    # node2 foo 2/4 -> 5, bar 2/8 -> 2: round((5*3 + 2*5) / 8 = 3.125) = 3.
    Case(
        MULTIPLE,
        "resources requested, pods scheduled with less resources",
        FOO_BAR,
        (Node("node1", (2, 2), (8, 4), 4), Node("node2", (2, 2), (4, 8), 3)),
        BIN_PACKING_SHAPE,
    ),
    # "resources requested, pods scheduled with resources, on node with existing pod running ": pod foo 2,
    # bar 2; node2 runs a pod of foo 4, bar 2. node1 as above -> 4. node2 foo 6/4 (over capacity, scored
    # as util 100) -> 10, bar 4/8 -> 5: round((10*3 + 5*5) / 8 = 6.875) = 7. (Upstream's comment writes
    # foo as (2+2)/4; the existing pod requests 4, but either way foo scores 10.)
    Case(
        MULTIPLE,
        "resources requested, pods scheduled with resources, on node with existing pod running ",
        FOO_BAR,
        (Node("node1", (2, 2), (8, 4), 4), Node("node2", (6, 4), (4, 8), 7)),
        BIN_PACKING_SHAPE,
    ),
    # "resources requested, pods scheduled with more resources": pod foo 4, bar 2.
    # node1 foo 4/8 -> 5, bar 2/4 -> 5 -> 5. node2 foo 4/4 -> 10, bar 2/8 -> 2: (30 + 10) / 8 = 5.
    Case(
        MULTIPLE,
        "resources requested, pods scheduled with more resources",
        FOO_BAR,
        (Node("node1", (4, 2), (8, 4), 5), Node("node2", (4, 2), (4, 8), 5)),
        BIN_PACKING_SHAPE,
    ),
]


@pytest.mark.parametrize(("case", "node"), _params(RTCR_CASES))
def test_requested_to_capacity_ratio_upstream(case: Case, node: Node) -> None:
    got = requested_to_capacity_ratio(node.requested, node.allocatable, case.resources, case.shape)
    assert got == node.expected


# requested_to_capacity_ratio_test.go, TestBrokenLinearFunction: raw shapes (no x10 scaling), and
# (utilisation, expected value) pairs. Cases are unnamed upstream; t.Run names them case_<i>.
BROKEN_LINEAR_CASES = [
    # case_0: points (10, 1), (90, 9)
    (
        ((10, 1), (90, 9)),
        [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9), (99, 9), (100, 9), (110, 9)],
    ),
    # case_1: points (0, 2), (40, 10), (100, 0)
    (
        ((0, 2), (40, 10), (100, 0)),
        [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
    ),
    # case_2: points (0, 2), (40, 2), (100, 2)
    (
        ((0, 2), (40, 2), (100, 2)),
        [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
    ),
]


@pytest.mark.parametrize(
    ("shape", "p", "expected"),
    [
        pytest.param(shape, p, expected, id=f"case_{i}/p={p}")
        for i, (shape, assertions) in enumerate(BROKEN_LINEAR_CASES)
        for p, expected in assertions
    ],
)
def test_broken_linear_upstream(shape: tuple[tuple[int, int], ...], p: int, expected: int) -> None:
    assert broken_linear(shape)(p) == expected


def test_broken_linear_truncates_toward_zero_on_falling_segments() -> None:
    # Not an upstream case: Go's `/` truncates toward zero, so on a falling segment (10, 10) -> (13, 0)
    # f(11) = 10 + (-10 * 1) / 3 = 10 + (-3) = 7 (floor division would give 10 + (-4) = 6).
    assert broken_linear(((10, 10), (13, 0)))(11) == 7


# --------------------------------------------------------------------------------------------------
# balanced_allocation_test.go, TestNodeResourcesBalancedAllocation (actual requests, no non-zero defaults;
# makeNode's cpu is in millicores). Pod specs used: cpuAndMemory = 1000m/2000 + 2000m/3000 = [3000m, 5000];
# cpuOnly = 1000m/"0" + 2000m/"0" = [3000m, 0]; cpuAndMemoryAndGPU = 1000m/2000 + 2000m/3000/gpu 3
# = [3000m, 5000, 3]. Existing pods: cpuOnly and cpuAndMemoryAndGPU are bound to node1, cpuAndMemory
# to node2.
#
# Note: this is the scorer before kubernetes/kubernetes#135573 (merged Dec 2025), which rescores
# BalancedAllocation by the change in balance the pod makes (with vs. without the pod). The stored
# upstream test read here predates it; see the report for what that would change.
BALANCED = "balanced_allocation_test.go TestNodeResourcesBalancedAllocation"
BALANCED_CASES = [
    # "nothing scheduled, nothing requested, skip in PreScore": a best-effort pod (no requests); upstream's
    # PreScore returns Skip and no score is computed. Not a score case: see
    # test_balanced_allocation_best_effort_pod.
    #
    # "nothing scheduled, resources requested, differently sized nodes": pod cpuAndMemory.
    # node1 4000m/10000: 0.75, 0.5 -> std 0.125 -> 87. node2 6000m/10000: 0.5, 0.5 -> 100.
    Case(
        BALANCED,
        "nothing scheduled, resources requested, differently sized nodes",
        DEFAULT_RESOURCES,
        (
            Node("node1", (3000, 5000), (4000, 10000), 87),
            Node("node2", (3000, 5000), (6000, 10000), 100),
        ),
    ),
    # "resources requested, pods scheduled with resources": pod cpuAndMemory; nodes 10000m/20000.
    # node1 + cpuOnly -> [6000, 5000]: 0.6, 0.25 -> std 0.175 -> 82.
    # node2 + cpuAndMemory -> [6000, 10000]: 0.6, 0.5 -> std 0.05 -> 95.
    Case(
        BALANCED,
        "resources requested, pods scheduled with resources",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000, 5000), (10000, 20000), 82),
            Node("node2", (6000, 10000), (10000, 20000), 95),
        ),
    ),
    # "resources requested, pods scheduled with resources, differently sized nodes": as above, node2
    # 10000m/50000: 0.6, 0.2 -> std 0.2 -> 80.
    Case(
        BALANCED,
        "resources requested, pods scheduled with resources, differently sized nodes",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000, 5000), (10000, 20000), 82),
            Node("node2", (6000, 10000), (10000, 50000), 80),
        ),
    ),
    # "requested resources at node capacity": pod cpuOnly; nodes 6000m/10000.
    # node1 + cpuOnly -> [6000, 0]: 1, 0 -> std 0.5 -> 50. node2 + cpuAndMemory -> [6000, 5000]: 1, 0.5 -> 75.
    Case(
        BALANCED,
        "requested resources at node capacity",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000, 0), (6000, 10000), 50),
            Node("node2", (6000, 5000), (6000, 10000), 75),
        ),
    ),
    # "include scalar resource on a node for balanced resource allocation": resources [cpu, memory,
    # nvidia.com/gpu]; pod one container memory "0", gpu 1 (no cpu request: 0). Nodes 3500m/40000/gpu 8.
    # node1 + cpuAndMemoryAndGPU -> [3000, 5000, 4]: 0.857, 0.125, 0.5 -> std 0.2989 -> 70.
    # node2 + cpuAndMemory -> [3000, 5000, 1]: 0.857, 0.125, 0.125 -> std 0.3450 -> 65.
    Case(
        BALANCED,
        "include scalar resource on a node for balanced resource allocation",
        (CPU, MEMORY, ResourceSpec("nvidia.com/gpu", 1)),
        (
            Node("node1", (3000, 5000, 4), (3500, 40000, 8), 70),
            Node("node2", (3000, 5000, 1), (3500, 40000, 8), 65),
        ),
    ),
    # "node without the scalar resource should skip the scalar resource": same resources; pod cpuAndMemory
    # (no gpu, so gpu is (0, 0) on both; node1 has gpu 8, node2 none); no pods on the nodes.
    # Both 3500m/40000: 0.857, 0.125 -> std 0.366 -> 63.
    Case(
        BALANCED,
        "node without the scalar resource should skip the scalar resource",
        (CPU, MEMORY, ResourceSpec("nvidia.com/gpu", 1)),
        (
            Node("node1", (3000, 5000, 0), (3500, 40000, 0), 63),
            Node("node2", (3000, 5000, 0), (3500, 40000, 0), 63),
        ),
    ),
    # "resources requested, pods scheduled with resources if PreScore not called": same data and scores as
    # "resources requested, pods scheduled with resources"; only the plugin's state handling differs.
    Case(
        BALANCED,
        "resources requested, pods scheduled with resources if PreScore not called",
        DEFAULT_RESOURCES,
        (
            Node("node1", (6000, 5000), (10000, 20000), 82),
            Node("node2", (6000, 10000), (10000, 20000), 95),
        ),
    ),
    # "include DRA resource on a node for balanced resource allocation": resources [cpu, memory, a DRA-backed
    # extended resource (upstream's `extendedResourceName`; the name here is a stand-in)]; pod requests 1
    # of it and nothing else. Counting devices is the plugin's job: node1
    # has a ResourceSlice of 8 devices, none allocated (allocatable 8, requested 0 + 1); node2 has no
    # slice (allocatable 0, skipped). Nodes 3500m/40000.
    # node1 + cpuOnly -> [3000, 0, 1]: 0.857, 0, 0.125 -> std 0.378 -> 62.
    # node2 + cpuAndMemory -> [3000, 5000]: 0.857, 0.125 -> std 0.366 -> 63.
    Case(
        BALANCED,
        "include DRA resource on a node for balanced resource allocation",
        (CPU, MEMORY, ResourceSpec("deviceclass.example.com/dra", 1)),
        (
            Node("node1", (3000, 0, 1), (3500, 40000, 8), 62),
            Node("node2", (3000, 5000, 0), (3500, 40000, 0), 63),
        ),
    ),
    # "include DRA resource on a node for balanced resource allocation if PreScore not called": same data.
    Case(
        BALANCED,
        "include DRA resource on a node for balanced resource allocation if PreScore not called",
        (CPU, MEMORY, ResourceSpec("deviceclass.example.com/dra", 1)),
        (
            Node("node1", (3000, 0, 1), (3500, 40000, 8), 62),
            Node("node2", (3000, 5000, 0), (3500, 40000, 0), 63),
        ),
    ),
]


@pytest.mark.parametrize(("case", "node"), _params(BALANCED_CASES))
def test_balanced_allocation_upstream(case: Case, node: Node) -> None:
    assert len(node.requested) == len(case.resources)  # weights play no part in the score
    assert balanced_allocation(node.requested, node.allocatable) == node.expected


def test_balanced_allocation_best_effort_pod() -> None:
    # balanced_allocation_test.go, TestNodeResourcesBalancedAllocation, "nothing scheduled, nothing
    # requested, skip in PreScore": the pod requests nothing (no containers), nodes 4000m/10000 and
    # empty. Upstream's PreScore returns Skip for such a best-effort pod (all configured requests 0,
    # `isBestEffortPod`), so the plugin gives no score; skipping it is the caller's job. Given the
    # lists, the pure function scores the node as perfectly balanced: fractions 0, 0 -> 100.
    assert balanced_allocation((0, 0), (4000, 10000)) == 100


# --------------------------------------------------------------------------------------------------
# helper/normalize_score_test.go, TestDefaultNormalizeScore (maxPriority = MaxNodeScore = 100). Cases are
# unnamed upstream; t.Run names them case_<i>. (reverse, scores, expected)
NORMALIZE_CASES = [
    (False, [1, 2, 3, 4], [25, 50, 75, 100]),  # case_0
    (True, [1, 2, 3, 4], [75, 50, 25, 0]),  # case_1
    (False, [1000, 10, 20, 30], [100, 1, 2, 3]),  # case_2
    (True, [1000, 10, 20, 30], [0, 99, 98, 97]),  # case_3
    (False, [1, 1, 1, 1], [100, 100, 100, 100]),  # case_4
    (False, [1000, 1, 1, 1], [100, 0, 0, 0]),  # case_5
    (True, [0, 1, 1, 1], [100, 0, 0, 0]),  # case_6
]


@pytest.mark.parametrize(
    ("reverse", "scores", "expected"),
    [pytest.param(*c, id=f"case_{i}") for i, c in enumerate(NORMALIZE_CASES)],
)
def test_default_normalize_upstream(reverse: bool, scores: list[int], expected: list[int]) -> None:
    assert default_normalize(scores, reverse=reverse) == expected


# --------------------------------------------------------------------------------------------------
# Properties.
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


@st.composite
def shapes(draw: st.DrawFn) -> list[ShapePoint]:
    """A valid RequestedToCapacityRatio shape: increasing utilisations in 0..100, scores 0..10."""
    utilizations = sorted(draw(st.sets(st.integers(0, 100), min_size=1, max_size=6)))
    return [ShapePoint(u, draw(st.integers(0, 10))) for u in utilizations]


@PROPERTY_SETTINGS
@given(nodes_and_resources(), shapes())
def test_scores_are_within_0_and_100(lists: tuple, shape: list[ShapePoint]) -> None:
    requested, allocatable, resources = lists
    assert 0 <= least_allocated(requested, allocatable, resources) <= 100
    assert 0 <= most_allocated(requested, allocatable, resources) <= 100
    assert 0 <= requested_to_capacity_ratio(requested, allocatable, resources, shape) <= 100
    assert 0 <= balanced_allocation(requested, allocatable) <= 100


@PROPERTY_SETTINGS
@given(nodes_and_resources(within_capacity=True, equal_weights=True))
def test_least_plus_most_is_100_up_to_truncation(lists: tuple) -> None:
    # Per resource floor((c - r) * 100 / c) + floor(r * 100 / c) is 99 or 100, and the mean truncates
    # once more for each strategy; with equal weights and nothing over capacity the sum falls short
    # of 100 by at most the number of resources.
    requested, allocatable, resources = lists
    total = least_allocated(requested, allocatable, resources) + most_allocated(requested, allocatable, resources)
    assert 0 <= 100 - total <= len(resources)


@PROPERTY_SETTINGS
@given(st.lists(st.integers(0, 10**9), min_size=1, max_size=20), st.booleans())
def test_default_normalize_range_and_top(scores: list[int], reverse: bool) -> None:
    out = default_normalize(scores, reverse=reverse)
    assert len(out) == len(scores)
    assert all(0 <= s <= 100 for s in out)
    if not reverse:
        assert max(out) == (0 if max(scores) == 0 else 100)
    elif max(scores) == 0:
        assert out == [100] * len(scores)  # reversed, all zero: every node is best
    else:
        assert min(out) == 0  # reversed: the largest cost gets 0
        if min(scores) == 0:
            assert max(out) == 100
