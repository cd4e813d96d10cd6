"""The snapshot's request counting: the non-zero defaults the scores count, and the arrays a pod moves.

The defaults are schedutil's (`DefaultMilliCPURequest`, `DefaultMemoryRequest`,
`GetNonzeroRequestForResource`); the arrays are checked on a node worked by hand.
"""

from __future__ import annotations

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.snapshot import (
    CPU,
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    MEMORY,
    ClusterSnapshot,
    non_zero_request,
)

MI = 1024 * 1024


def test_non_zero_request() -> None:
    # schedutil's non-zero defaults: a missing request counts as the default, an explicit 0 stays 0.
    assert (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST) == (100, 200 * MI)
    assert non_zero_request(None, DEFAULT_MILLI_CPU_REQUEST) == 100
    assert non_zero_request(0, DEFAULT_MILLI_CPU_REQUEST) == 0
    assert non_zero_request(250, DEFAULT_MILLI_CPU_REQUEST) == 250


def test_a_pod_counts_as_set_for_the_filters_and_with_the_defaults_for_the_scores() -> None:
    # A pod setting 300m and no memory: requested 300m / 0 bytes, non-zero 300m / 200 MiB.
    # A second pod setting nothing: requested unchanged, non-zero + 100m / 200 MiB.
    snap = ClusterSnapshot([NodeSpec("n", cpu=4000, memory=1024 * MI)])
    snap.assume(PodSpec("a", cpu=300), 0)
    snap.assume(PodSpec("b"), 0)
    assert (snap.requested[0, CPU], snap.requested[0, MEMORY]) == (300, 0)
    assert (snap.non_zero[0, CPU], snap.non_zero[0, MEMORY]) == (400, 400 * MI)
    assert snap.pod_count[0] == 2
    # Releasing the second pod takes back exactly what it added.
    snap.release(PodSpec("b"), 0)
    assert (snap.requested[0, CPU], snap.requested[0, MEMORY]) == (300, 0)
    assert (snap.non_zero[0, CPU], snap.non_zero[0, MEMORY]) == (300, 200 * MI)
    assert snap.pod_count[0] == 1


def test_a_fork_takes_nodes_and_pods_without_touching_the_original() -> None:
    base = ClusterSnapshot([NodeSpec("n0", cpu=2000, memory=1024)])
    base.assume(PodSpec("p0", cpu=500), 0)
    forked = base.fork()
    forked.assume(PodSpec("p1", cpu=500), 0)
    forked.add_node(NodeSpec("n1", cpu=1000, memory=1024))
    assert base.names == ["n0"] and list(base.pods_on[0]) == ["p0"] and base.requested[0, 0] == 500
    assert forked.names == ["n0", "n1"] and forked.requested[0, 0] == 1000
    # Versions never repeat across snapshots, so a per-node cache never mistakes one for the other.
    assert len({base.version, forked.version}) == 2
    base.cordon("n0")
    assert base.version != forked.version
