"""The snapshot's request counting: the non-zero defaults the scores count, and the arrays a pod moves.

The defaults are schedutil's (`DefaultMilliCPURequest`, `DefaultMemoryRequest`,
`GetNonzeroRequestForResource`); the arrays are checked on a node worked by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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


ARRAYS = ("allocatable", "requested", "non_zero", "max_pods", "pod_count", "present", "unschedulable")

operation = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 40), st.integers(1, 64), st.sampled_from([{}, {"gpu": 2}])),
    st.tuples(st.just("remove"), st.integers(0, 40)),
    st.tuples(st.just("cordon"), st.integers(0, 40), st.booleans()),
    st.tuples(st.just("assume"), st.integers(0, 40), st.integers(0, 2000), st.sampled_from([{}, {"tpu": 1}])),
    st.tuples(st.just("release"), st.integers(0, 40)),
    st.tuples(
        st.just("fork"),
    ),
)


def rebuilt(snap: ClusterSnapshot) -> ClusterSnapshot:
    """The same cluster built from scratch: every node in row order (removed ones removed), then its pods."""
    fresh = ClusterSnapshot()
    for name in snap.resources[2:]:
        fresh.column(name)
    for i, node in enumerate(snap.nodes):
        fresh.add_node(node)
        fresh.cordon(node.name, bool(snap.unschedulable[i]))  # a removed node keeps its last flag
        if not snap.present[i]:
            fresh.remove_node(node.name)
        for pod in snap.pods_on[i].values():
            fresh.assume(pod, i)
    return fresh


@settings(max_examples=80, deadline=None)
@given(st.lists(operation, max_size=60))
def test_a_snapshot_changed_step_by_step_equals_one_rebuilt_from_scratch(steps: list[tuple[Any, ...]]) -> None:
    """After any sequence of node additions and removals, cordons, binds, releases and forks, the arrays, the
    node order and the index are those of a snapshot built from scratch; a fork taken on the way is untouched."""
    snap = ClusterSnapshot()
    forks: list[tuple[ClusterSnapshot, ClusterSnapshot]] = []  # (the fork, a copy of it to compare with)
    pods = 0
    for step in steps:
        live = [snap.nodes[i].name for i in snap.order.tolist()]
        kind = step[0]
        if kind == "add":
            name = f"node-{step[1]:02d}"
            if name not in snap.index:
                snap.add_node(NodeSpec(name, cpu=4000, memory=8 * 1024 * MI, pods=step[2], extended=step[3]))
        elif kind == "remove" and live:
            snap.remove_node(live[step[1] % len(live)])
        elif kind == "cordon" and live:
            snap.cordon(live[step[1] % len(live)], step[2])
        elif kind == "assume" and live:
            pods += 1
            pod = PodSpec(f"pod-{pods}", cpu=step[2], memory=step[2] * MI, extended=step[3])
            snap.assume(pod, snap.index[live[step[1] % len(live)]])
        elif kind == "release":
            bound = [(i, pod) for i in snap.order.tolist() for pod in snap.pods_on[i].values()]
            if bound:
                i, pod = bound[step[1] % len(bound)]
                snap.release(pod, i)
        elif kind == "fork":
            forked = snap.fork()
            forks.append((forked, rebuilt(forked)))
    fresh = rebuilt(snap)
    for name in ARRAYS:
        assert np.array_equal(getattr(snap, name), getattr(fresh, name)), name
    assert snap.order.tolist() == fresh.order.tolist()
    assert snap.index == fresh.index
    for forked, copy_of_it in forks:
        for name in ARRAYS:
            assert np.array_equal(getattr(forked, name), getattr(copy_of_it, name)), name


def test_ten_thousand_nodes_are_ten_thousand_rows_in_name_order() -> None:
    """Added in reverse name order, the nodes keep their rows (the order they came) and are walked by name."""
    snap = ClusterSnapshot([NodeSpec(f"n{9999 - k:04d}", cpu=1000, memory=MI) for k in range(10_000)])
    assert len(snap.allocatable) == 10_000 and snap.allocatable[:, CPU].sum() == 10_000 * 1000
    assert snap.order.tolist() == list(range(9999, -1, -1))
