"""Small random clusters for checking the vectorised plugins node by node against their pure functions.

Each plugin's pure functions are checked against upstream's unit tests in its test module; there
too, hypothesis draws a few nodes from `clusters()` (cpu, memory, an optional extended
`nvidia.com/gpu`, taints, labels, a small pod capacity), puts some pods on them with
`ClusterSnapshot.assume` (whether or not they fit: the scorers' over-capacity branches need it) and
an incoming pod. Each plugin's array output is then compared with the pure function fed plain
Python ints built here from the pods (`scoring_lists`), following the rules of the reference note
(kube-scheduler-and-yarn-sls.md §2.3-2.5):

- NodeResourcesFit scores count a missing cpu/memory request as 100m / 200 MiB, for the pod and for
  every pod already on the node (`non_zero_request`); an explicit 0 stays 0.
- BalancedAllocation counts actual requests and is skipped (0 everywhere) for a best-effort pod.
- An extended resource the pod does not request is bypassed as (0, 0) by every resource scorer.
- The NodeResourcesFit filter rejects a node when pods on it + 1 > its max pods, or when some
  resource the pod requests (> 0) exceeds allocatable - requested there (actual requests, no
  defaults).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from skenario.scheduling.affinity import NodeAffinity, PreferredTerm, Requirement, Term
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.noderesources import ShapePoint
from skenario.scheduling.plugins.resourceallocation import ResourceSpec
from skenario.scheduling.snapshot import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    ClusterSnapshot,
    non_zero_request,
)
from skenario.scheduling.taints import Taint, TaintEffect, Toleration

GPU = "nvidia.com/gpu"
GIB = 1024**3

# -- strategies ------------------------------------------------------------------------------------

TAINT_KEYS = ("a", "b", "c")
TAINT_VALUES = ("", "x", "y")
EFFECTS = tuple(TaintEffect)

taints = st.lists(
    st.builds(Taint, st.sampled_from(TAINT_KEYS), st.sampled_from(EFFECTS), st.sampled_from(TAINT_VALUES)),
    max_size=3,
    unique=True,
).map(tuple)

tolerations = st.lists(
    st.builds(
        Toleration,
        st.sampled_from(("", *TAINT_KEYS)),
        st.sampled_from(("Equal", "Exists")),
        st.sampled_from(TAINT_VALUES),
        st.sampled_from(("", *EFFECTS)),
    ),
    max_size=3,
).map(tuple)

LABELS = {"zone": ("z1", "z2"), "tier": ("1", "2", "3")}

labels = st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in LABELS.items()})


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    key = draw(st.sampled_from(sorted(LABELS)))
    op = draw(st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")))
    if op in ("In", "NotIn"):
        values = tuple(draw(st.lists(st.sampled_from(LABELS[key]), min_size=1, max_size=2, unique=True)))
    elif op in ("Gt", "Lt"):
        values = (str(draw(st.integers(0, 4))),)
    else:
        values = ()
    return Requirement(key, op, values)


preferred_terms = st.lists(
    st.builds(
        PreferredTerm,
        st.integers(1, 100),
        st.builds(Term, st.lists(requirements(), min_size=0, max_size=2).map(tuple)),
    ),
    max_size=3,
).map(tuple)

maybe_cpu = st.one_of(st.none(), st.integers(0, 3000))
maybe_memory = st.one_of(st.none(), st.integers(0, 2 * GIB))
maybe_gpu = st.one_of(st.none(), st.integers(0, 3))


def _extended(gpu: int | None) -> dict[str, int]:
    return {} if gpu is None else {GPU: gpu}


@dataclass
class Cluster:
    nodes: list[NodeSpec]
    pods_on: list[list[PodSpec]]
    pod: PodSpec

    def snapshot(self) -> ClusterSnapshot:
        snap = ClusterSnapshot(self.nodes)
        # The GPU column exists even when no node or pod names it: a scorer configured for a resource
        # the snapshot has never seen crashes on first use, which has its own test below
        # (test_resourceallocation's
        # test_a_scorer_configured_for_a_resource_nobody_has_yet_scores_without_crashing).
        snap.column(GPU)
        for i, pods in enumerate(self.pods_on):
            for p in pods:
                snap.assume(p, i)
        return snap


@st.composite
def clusters(draw: st.DrawFn) -> Cluster:
    n = draw(st.integers(1, 5))
    nodes, pods_on = [], []
    for i in range(n):
        nodes.append(
            NodeSpec(
                f"node-{i}",
                cpu=draw(st.integers(0, 8000)),
                memory=draw(st.integers(0, 4 * GIB)),
                pods=draw(st.integers(1, 4)),
                extended=_extended(draw(maybe_gpu)),
                labels=draw(labels),
                taints=draw(taints),
            )
        )
        on = []
        for k in range(draw(st.integers(0, 3))):
            on.append(
                PodSpec(
                    f"p-{i}-{k}", cpu=draw(maybe_cpu), memory=draw(maybe_memory), extended=_extended(draw(maybe_gpu))
                )
            )
        pods_on.append(on)
    pod = PodSpec(
        "incoming",
        cpu=draw(maybe_cpu),
        memory=draw(maybe_memory),
        extended=_extended(draw(maybe_gpu)),
        tolerations=draw(tolerations),
        affinity=NodeAffinity(preferred=draw(preferred_terms)),
    )
    return Cluster(nodes, pods_on, pod)


weights = st.integers(1, 100)


@st.composite
def resource_specs(draw: st.DrawFn) -> tuple[ResourceSpec, ...]:
    specs = [ResourceSpec("cpu", draw(weights)), ResourceSpec("memory", draw(weights))]
    if draw(st.booleans()):
        specs.append(ResourceSpec(GPU, draw(weights)))
    return tuple(specs)


@st.composite
def shapes(draw: st.DrawFn) -> tuple[ShapePoint, ...]:
    xs = sorted(draw(st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True)))
    return tuple(ShapePoint(x, draw(st.integers(0, 10))) for x in xs)


# -- the reference lists, in plain ints ----------------------------------------------------------


def actual(value: int | None) -> int:
    return value or 0


def scoring_lists(
    cluster: Cluster, i: int, resources: tuple[ResourceSpec, ...], *, non_zero: bool
) -> tuple[list[int], list[int]]:
    """Per configured resource: what node i would have requested with the pod on it, and its allocatable."""
    node, pods, pod = cluster.nodes[i], cluster.pods_on[i], cluster.pod
    requested, allocatable = [], []
    for r in resources:
        if r.name == "cpu":
            count = (lambda v: non_zero_request(v, DEFAULT_MILLI_CPU_REQUEST)) if non_zero else actual
            requested.append(sum(count(p.cpu) for p in pods) + count(pod.cpu))
            allocatable.append(node.cpu)
        elif r.name == "memory":
            count = (lambda v: non_zero_request(v, DEFAULT_MEMORY_REQUEST)) if non_zero else actual
            requested.append(sum(count(p.memory) for p in pods) + count(pod.memory))
            allocatable.append(node.memory)
        else:
            own = pod.extended.get(r.name, 0)
            if own == 0:  # an extended resource the pod does not ask for is bypassed
                requested.append(0)
                allocatable.append(0)
            else:
                requested.append(sum(p.extended.get(r.name, 0) for p in pods) + own)
                allocatable.append(node.extended.get(r.name, 0))
    return requested, allocatable


def every_node(cluster: Cluster) -> np.ndarray:
    return np.arange(len(cluster.nodes), dtype=np.int64)
