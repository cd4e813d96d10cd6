"""NodeResourcesFit: its scoring strategies against upstream's unit tests, its plugin node by node against them.

The cases restate `least_allocated_test.go`, `most_allocated_test.go` and
`requested_to_capacity_ratio_test.go` of kubernetes/kubernetes
`pkg/scheduler/framework/plugins/noderesources` as data; how their pods and nodes become the
`requested` and `allocatable` lists is written in `cases`. The plugin's scores and filter are then
checked against each scorer's integer path, and `fitsRequest` restated independently, on the random
clusters of `clusters`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.noderesources import (
    SCORING_STRATEGIES,
    LeastAllocated,
    MostAllocated,
    NodeResourcesFit,
    RequestedToCapacityRatio,
    ShapePoint,
)
from skenario.scheduling.plugins.resourceallocation import ResourceSpec
from skenario.scheduling.snapshot import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    ClusterSnapshot,
    non_zero_request,
)
from tests.scheduling.plugins.cases import (
    CORES,
    CPU,
    DEFAULT_RESOURCES,
    MEMORY,
    MI,
    PROPERTY_SETTINGS,
    Case,
    Node,
    nodes_and_resources,
    params,
)
from tests.scheduling.plugins.clusters import (
    Cluster,
    actual,
    clusters,
    every_node,
    resource_specs,
    scoring_lists,
    shapes,
)

EXT = "abc.com/xyz"  # upstream `extendedRes`
EXTENDED_RESOURCE_SET = (CPU, MEMORY, ResourceSpec(EXT, 1))  # upstream `extendedResourceSet`


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
    # MaxNodeScore": plugin argument validation errors; restated in test_resourceallocation.py.
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


@pytest.mark.parametrize(("case", "node"), params(LEAST_CASES))
def test_least_allocated_upstream(case: Case, node: Node) -> None:
    assert LeastAllocated(case.resources).score(node.requested, node.allocatable) == node.expected


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
    # MaxNodeScore": validation errors; restated in test_resourceallocation.py.
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


@pytest.mark.parametrize(("case", "node"), params(MOST_CASES))
def test_most_allocated_upstream(case: Case, node: Node) -> None:
    assert MostAllocated(case.resources).score(node.requested, node.allocatable) == node.expected


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


@pytest.mark.parametrize(("case", "node"), params(RTCR_CASES))
def test_requested_to_capacity_ratio_upstream(case: Case, node: Node) -> None:
    got = RequestedToCapacityRatio(case.resources, case.shape).score(node.requested, node.allocatable)
    assert got == node.expected


# --------------------------------------------------------------------------------------------------
# Properties of the pure functions.


@st.composite
def shape_lists(draw: st.DrawFn) -> list[ShapePoint]:
    """A valid RequestedToCapacityRatio shape: increasing utilisations in 0..100, scores 0..10."""
    utilizations = sorted(draw(st.sets(st.integers(0, 100), min_size=1, max_size=6)))
    return [ShapePoint(u, draw(st.integers(0, 10))) for u in utilizations]


@PROPERTY_SETTINGS
@given(nodes_and_resources(), shape_lists())
def test_scores_are_within_0_and_100(lists: tuple, shape: list[ShapePoint]) -> None:
    requested, allocatable, resources = lists
    assert 0 <= LeastAllocated(resources).score(requested, allocatable) <= 100
    assert 0 <= MostAllocated(resources).score(requested, allocatable) <= 100
    assert 0 <= RequestedToCapacityRatio(resources, shape).score(requested, allocatable) <= 100


@PROPERTY_SETTINGS
@given(nodes_and_resources(within_capacity=True, equal_weights=True))
def test_least_plus_most_is_100_up_to_truncation(lists: tuple) -> None:
    # Per resource floor((c - r) * 100 / c) + floor(r * 100 / c) is 99 or 100, and the mean truncates
    # once more for each strategy; with equal weights and nothing over capacity the sum falls short
    # of 100 by at most the number of resources.
    requested, allocatable, resources = lists
    least, most = LeastAllocated(resources), MostAllocated(resources)
    total = least.score(requested, allocatable) + most.score(requested, allocatable)
    assert 0 <= 100 - total <= len(resources)


# --------------------------------------------------------------------------------------------------
# The plugin's scores, node by node against the pure functions.


@settings(max_examples=300)
@given(clusters(), resource_specs())
def test_least_allocated_matches_the_pure_function(cluster: Cluster, resources: tuple[ResourceSpec, ...]) -> None:
    got = NodeResourcesFit("LeastAllocated", resources).score(cluster.pod, cluster.snapshot(), every_node(cluster))
    scorer = LeastAllocated(resources)
    want = [scorer.score(*scoring_lists(cluster, i, resources, non_zero=True)) for i in every_node(cluster)]
    assert got.tolist() == want


@settings(max_examples=300)
@given(clusters(), resource_specs())
def test_most_allocated_matches_the_pure_function(cluster: Cluster, resources: tuple[ResourceSpec, ...]) -> None:
    got = NodeResourcesFit("MostAllocated", resources).score(cluster.pod, cluster.snapshot(), every_node(cluster))
    scorer = MostAllocated(resources)
    want = [scorer.score(*scoring_lists(cluster, i, resources, non_zero=True)) for i in every_node(cluster)]
    assert got.tolist() == want


@settings(max_examples=300)
@given(clusters(), resource_specs(), shapes())
def test_requested_to_capacity_ratio_matches_the_pure_function(
    cluster: Cluster, resources: tuple[ResourceSpec, ...], shape: tuple[ShapePoint, ...]
) -> None:
    plugin = NodeResourcesFit("RequestedToCapacityRatio", resources, shape)
    got = plugin.score(cluster.pod, cluster.snapshot(), every_node(cluster))
    want = [
        RequestedToCapacityRatio(resources, shape).score(*scoring_lists(cluster, i, resources, non_zero=True))
        for i in every_node(cluster)
    ]
    assert got.tolist() == want


@settings(max_examples=300)
@given(clusters(), resource_specs())
def test_fit_scores_have_no_normalize_and_lie_in_0_to_100(
    cluster: Cluster, resources: tuple[ResourceSpec, ...]
) -> None:
    snap = cluster.snapshot()
    for plugin in (
        NodeResourcesFit("LeastAllocated", resources),
        NodeResourcesFit("MostAllocated", resources),
    ):
        scores = plugin.score(cluster.pod, snap, every_node(cluster))
        assert plugin.normalize(scores) is None
        assert ((scores >= 0) & (scores <= 100)).all()


# --------------------------------------------------------------------------------------------------
# The plugin's filter.


def fit_rejects(cluster: Cluster, i: int) -> bool:
    """`fitsRequest`: pods + 1 > max pods, or some requested resource > allocatable - requested (actual requests)."""
    node, pods, pod = cluster.nodes[i], cluster.pods_on[i], cluster.pod
    if len(pods) + 1 > node.pods:
        return True
    checks = [
        (actual(pod.cpu), node.cpu, sum(actual(p.cpu) for p in pods)),
        (actual(pod.memory), node.memory, sum(actual(p.memory) for p in pods)),
    ]
    for name, amount in pod.extended.items():
        checks.append((amount, node.extended.get(name, 0), sum(p.extended.get(name, 0) for p in pods)))
    return any(req > 0 and req > allocatable - used for req, allocatable, used in checks)


@settings(max_examples=500)
@given(clusters())
def test_fit_filter_rejects_exactly_the_nodes_fits_request_rejects(cluster: Cluster) -> None:
    result = NodeResourcesFit().filter(cluster.pod, cluster.snapshot(), every_node(cluster))
    assert (result.codes != 0).tolist() == [fit_rejects(cluster, i) for i in every_node(cluster)]
    for k, code in enumerate(result.codes.tolist()):
        if code:
            reason = result.reasons[code]
            assert reason == "Too many pods" or reason.startswith("Insufficient ")
            if reason == "Too many pods":
                assert len(cluster.pods_on[k]) + 1 > cluster.nodes[k].pods


def test_fit_filter_marks_a_request_above_the_whole_allocatable_unresolvable() -> None:
    """§2.3: the status is UnschedulableAndUnresolvable when some podReq > allocatable on its own.

    Node "short" is merely short of cpu (preemption could help) but has less memory than the pod
    asks for in all; node "full" has no pod slot left and less cpu than the pod asks for in all.
    Neither can ever take the pod, so both must be unresolvable, as the plugin's own docstring says
    ("A request larger than the node's whole allocatable is unresolvable").
    """
    nodes = [
        NodeSpec("short", cpu=1000, memory=1000),
        NodeSpec("full", cpu=500, memory=10_000, pods=1),
        NodeSpec("busy", cpu=1000, memory=10_000),
    ]
    snap = ClusterSnapshot(nodes)
    snap.assume(PodSpec("s", cpu=900, memory=0), 0)
    snap.assume(PodSpec("f", cpu=0, memory=0), 1)
    snap.assume(PodSpec("b", cpu=900, memory=0), 2)
    pod = PodSpec("incoming", cpu=600, memory=2000)
    result = NodeResourcesFit().filter(pod, snap, np.arange(3))
    assert (result.codes != 0).all()
    unresolvable = [int(c) in result.unresolvable for c in result.codes]
    # busy: only short of cpu (600 <= 1000 allocatable), resolvable by preemption.
    assert unresolvable[2] is False
    assert unresolvable[0] is True  # memory 2000 > 1000 allocatable
    assert unresolvable[1] is True  # cpu 600 > 500 allocatable


# --------------------------------------------------------------------------------------------------
# The strategies by name, as upstream's nodeResourceStrategyTypeMap.


def test_the_strategies_are_upstreams_three_and_a_name_picks_its_scorer() -> None:
    # config.ScoringStrategyType's values, in apis/config/types_pluginargs.go.
    assert set(SCORING_STRATEGIES) == {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"}
    shape = (ShapePoint(0, 0), ShapePoint(100, 10))
    for name, kind in (
        ("LeastAllocated", LeastAllocated),
        ("MostAllocated", MostAllocated),
        ("RequestedToCapacityRatio", RequestedToCapacityRatio),
    ):
        assert type(NodeResourcesFit(name, (CPU,), shape).scorer) is kind
    with pytest.raises(ValueError, match="unknown scoring strategy 'Balanced'"):
        NodeResourcesFit("Balanced")
    with pytest.raises(ValueError, match="needs a shape"):
        NodeResourcesFit("RequestedToCapacityRatio")


def test_a_quarter_full_node_scores_as_each_module_docstring_works_it() -> None:
    # 1000m requested of 4000m on CPU alone: 3000 x 100 / 4000 free, 1000 x 100 / 4000 used; the
    # shapes {0: 0, 100: 10} and {0: 10, 100: 0} scaled to 0..100 read 25 and 75 at 25%.
    assert LeastAllocated((CPU,)).score([1000], [4000]) == 75
    assert MostAllocated((CPU,)).score([1000], [4000]) == 25
    rising, falling = (ShapePoint(0, 0), ShapePoint(100, 10)), (ShapePoint(0, 10), ShapePoint(100, 0))
    assert RequestedToCapacityRatio((CPU,), rising).score([1000], [4000]) == 25
    assert RequestedToCapacityRatio((CPU,), falling).score([1000], [4000]) == 75
