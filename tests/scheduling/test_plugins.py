"""The vectorised plugins of `skenario.scheduling.plugins` agree node by node with the pure functions.

The pure functions (`scoring`, `taints`, `affinity`) are checked against upstream's unit tests in
the sibling test files. Here hypothesis draws a few nodes (cpu, memory, an optional extended
`nvidia.com/gpu`, taints, labels, a small pod capacity), puts some pods on them with
`ClusterSnapshot.assume` (whether or not they fit: the scorers' over-capacity branches need it) and
an incoming pod. Each plugin's array output is then compared with the pure function fed plain
Python ints built here from the pods, following the rules of the reference note
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
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.affinity import NodeAffinity, PreferredTerm, Requirement, Term, affinity_normalize
from skenario.scheduling.framework import Framework, default_profile
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins import (
    BalancedAllocationScore,
    NodeAffinityPlugin,
    NodeResourcesFitFilter,
    NodeResourcesFitScore,
    TaintTolerationPlugin,
)
from skenario.scheduling.scoring import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    ResourceSpec,
    ShapePoint,
    balanced_allocation,
    least_allocated,
    most_allocated,
    non_zero_request,
    requested_to_capacity_ratio,
)
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import Taint, TaintEffect, Toleration, taints_filter, taints_normalize, taints_score

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
        # (test_a_scorer_configured_for_a_resource_nobody_has_yet_scores_without_crashing).
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


def _actual(value: int | None) -> int:
    return value or 0


def scoring_lists(
    cluster: Cluster, i: int, resources: tuple[ResourceSpec, ...], *, non_zero: bool
) -> tuple[list[int], list[int]]:
    """Per configured resource: what node i would have requested with the pod on it, and its allocatable."""
    node, pods, pod = cluster.nodes[i], cluster.pods_on[i], cluster.pod
    requested, allocatable = [], []
    for r in resources:
        if r.name == "cpu":
            count = (lambda v: non_zero_request(v, DEFAULT_MILLI_CPU_REQUEST)) if non_zero else _actual
            requested.append(sum(count(p.cpu) for p in pods) + count(pod.cpu))
            allocatable.append(node.cpu)
        elif r.name == "memory":
            count = (lambda v: non_zero_request(v, DEFAULT_MEMORY_REQUEST)) if non_zero else _actual
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


def _all(cluster: Cluster) -> np.ndarray:
    return np.arange(len(cluster.nodes), dtype=np.int64)


# -- NodeResourcesFit scores -----------------------------------------------------------------------


@settings(max_examples=300)
@given(clusters(), resource_specs())
def test_least_allocated_matches_the_pure_function(cluster: Cluster, resources: tuple[ResourceSpec, ...]) -> None:
    got = NodeResourcesFitScore("LeastAllocated", resources).score(cluster.pod, cluster.snapshot(), _all(cluster))
    want = [least_allocated(*scoring_lists(cluster, i, resources, non_zero=True), resources) for i in _all(cluster)]
    assert got.tolist() == want


@settings(max_examples=300)
@given(clusters(), resource_specs())
def test_most_allocated_matches_the_pure_function(cluster: Cluster, resources: tuple[ResourceSpec, ...]) -> None:
    got = NodeResourcesFitScore("MostAllocated", resources).score(cluster.pod, cluster.snapshot(), _all(cluster))
    want = [most_allocated(*scoring_lists(cluster, i, resources, non_zero=True), resources) for i in _all(cluster)]
    assert got.tolist() == want


@settings(max_examples=300)
@given(clusters(), resource_specs(), shapes())
def test_requested_to_capacity_ratio_matches_the_pure_function(
    cluster: Cluster, resources: tuple[ResourceSpec, ...], shape: tuple[ShapePoint, ...]
) -> None:
    plugin = NodeResourcesFitScore("RequestedToCapacityRatio", resources, shape)
    got = plugin.score(cluster.pod, cluster.snapshot(), _all(cluster))
    want = [
        requested_to_capacity_ratio(*scoring_lists(cluster, i, resources, non_zero=True), resources, shape)
        for i in _all(cluster)
    ]
    assert got.tolist() == want


@settings(max_examples=300)
@given(clusters(), resource_specs())
def test_fit_scores_have_no_normalize_and_lie_in_0_to_100(
    cluster: Cluster, resources: tuple[ResourceSpec, ...]
) -> None:
    snap = cluster.snapshot()
    for plugin in (
        NodeResourcesFitScore("LeastAllocated", resources),
        NodeResourcesFitScore("MostAllocated", resources),
    ):
        scores = plugin.score(cluster.pod, snap, _all(cluster))
        assert plugin.normalize(scores) is None
        assert ((scores >= 0) & (scores <= 100)).all()


def test_a_scorer_configured_for_a_resource_nobody_has_yet_scores_without_crashing() -> None:
    """A profile that scores `nvidia.com/gpu` on a cluster where no node or pod has named it yet.

    Upstream bypasses an extended resource the pod does not request, so the GPU weight plays no part:
    the scores are those of cpu and memory alone. For 100m on a 1000m / 1000-byte node, LeastAllocated
    gives cpu (1000-100)*100//1000 = 90 and memory with the 200 MiB default > 1000 bytes: 0, so 45;
    BalancedAllocation on actual requests gives cpu 0.1, memory 0: 100 * (1 - 0.05) = 95.
    """
    with_gpu = (ResourceSpec("cpu"), ResourceSpec("memory"), ResourceSpec(GPU))
    pod = PodSpec("p", cpu=100)
    snap = ClusterSnapshot([NodeSpec("n", cpu=1000, memory=1000)])
    assert NodeResourcesFitScore("LeastAllocated", with_gpu).score(pod, snap, np.arange(1)).tolist() == [45]
    snap = ClusterSnapshot([NodeSpec("n", cpu=1000, memory=1000)])
    assert BalancedAllocationScore(with_gpu).score(pod, snap, np.arange(1)).tolist() == [95]


# -- BalancedAllocation ----------------------------------------------------------------------------


@settings(max_examples=300)
@given(clusters(), resource_specs())
def test_balanced_allocation_matches_the_pure_function_on_actual_requests(
    cluster: Cluster, resources: tuple[ResourceSpec, ...]
) -> None:
    got = BalancedAllocationScore(resources).score(cluster.pod, cluster.snapshot(), _all(cluster))
    pod = cluster.pod
    own = {"cpu": _actual(pod.cpu), "memory": _actual(pod.memory), GPU: pod.extended.get(GPU, 0)}
    if all(own[r.name] == 0 for r in resources):  # best effort: PreScore skips the plugin
        assert got.tolist() == [0] * len(cluster.nodes)
        return
    want = [balanced_allocation(*scoring_lists(cluster, i, resources, non_zero=False)) for i in _all(cluster)]
    assert got.tolist() == want


def test_balanced_allocation_with_three_resources_on_a_node_lacking_one_uses_the_other_two() -> None:
    """Upstream's 3-resource profile (cpu, memory, GPU) on a node without GPUs (§2.4).

    The GPU entry has allocatable 0 and is skipped, leaving two fractions: cpu 500/1000 = 0.5 and
    memory 100/1000 = 0.1, so std = |0.5 - 0.1| / 2 = 0.2 and the score is int(100 * 0.8) = 80,
    exactly what the same node scores when only cpu and memory are configured.
    """
    node = NodeSpec("no-gpu", cpu=1000, memory=1000)
    pod = PodSpec("p", cpu=500, memory=100, extended={GPU: 1})
    three = (ResourceSpec("cpu"), ResourceSpec("memory"), ResourceSpec(GPU))
    snap = ClusterSnapshot([node])
    snap.column(GPU)
    assert balanced_allocation([500, 100, 1], [1000, 1000, 0]) == 80
    assert BalancedAllocationScore().score(pod, snap, np.arange(1)).tolist() == [80]
    assert BalancedAllocationScore(three).score(pod, snap, np.arange(1)).tolist() == [80]


def test_balanced_allocation_scores_zero_everywhere_for_a_best_effort_pod() -> None:
    nodes = [NodeSpec("a", cpu=4000, memory=8 * GIB), NodeSpec("b", cpu=1000, memory=GIB)]
    snap = ClusterSnapshot(nodes)
    snap.assume(PodSpec("busy", cpu=900, memory=100), 1)  # node b is unbalanced: 90% cpu, ~0% memory
    plugin = BalancedAllocationScore()
    assert plugin.score(PodSpec("be"), snap, np.arange(2)).tolist() == [0, 0]
    assert plugin.score(PodSpec("zeros", cpu=0, memory=0), snap, np.arange(2)).tolist() == [0, 0]
    # A pod with a request is scored: on b, |0.9+ - ~0| / 2 > 0.45, so well under 100.
    scores = plugin.score(PodSpec("some", cpu=100), snap, np.arange(2)).tolist()
    assert scores[0] > scores[1] > 0


# -- TaintToleration and NodeAffinity ------------------------------------------------------------


@settings(max_examples=300)
@given(clusters())
def test_taint_toleration_score_and_normalize_match_the_pure_functions(cluster: Cluster) -> None:
    plugin = TaintTolerationPlugin()
    snap = cluster.snapshot()
    raw = plugin.score(cluster.pod, snap, _all(cluster))
    want_raw = [taints_score(n.taints, cluster.pod.tolerations) for n in cluster.nodes]
    assert raw.tolist() == want_raw
    normalized = plugin.normalize(raw)
    assert normalized is not None
    assert normalized.tolist() == taints_normalize(want_raw)
    blocked = plugin.filter(cluster.pod, snap, _all(cluster)).codes != 0
    assert blocked.tolist() == [taints_filter(n.taints, cluster.pod.tolerations) is not None for n in cluster.nodes]


@settings(max_examples=300)
@given(clusters())
def test_node_affinity_score_and_normalize_match_the_pure_functions(cluster: Cluster) -> None:
    plugin = NodeAffinityPlugin()
    raw = plugin.score(cluster.pod, cluster.snapshot(), _all(cluster))
    want_raw = [cluster.pod.affinity.score(n.labels, n.name) for n in cluster.nodes]
    assert raw.tolist() == want_raw
    normalized = plugin.normalize(raw)
    assert normalized is not None
    assert normalized.tolist() == affinity_normalize(want_raw)


@settings(max_examples=100)
@given(clusters(), st.data())
def test_node_affinity_filter_matches_allows(cluster: Cluster, data: st.DataObject) -> None:
    required = data.draw(
        st.one_of(
            st.none(), st.lists(st.builds(Term, st.lists(requirements(), max_size=2).map(tuple)), max_size=2).map(tuple)
        )
    )
    selector = data.draw(st.fixed_dictionaries({}, optional={"zone": st.sampled_from(LABELS["zone"])}))
    affinity = NodeAffinity(node_selector=selector, required=required)
    pod = PodSpec("incoming", affinity=affinity)
    codes = NodeAffinityPlugin().filter(pod, cluster.snapshot(), _all(cluster)).codes
    assert (codes == 0).tolist() == [affinity.allows(n.labels, n.name) for n in cluster.nodes]


# -- NodeResourcesFit filter -----------------------------------------------------------------------


def fit_rejects(cluster: Cluster, i: int) -> bool:
    """`fitsRequest`: pods + 1 > max pods, or some requested resource > allocatable - requested (actual requests)."""
    node, pods, pod = cluster.nodes[i], cluster.pods_on[i], cluster.pod
    if len(pods) + 1 > node.pods:
        return True
    checks = [
        (_actual(pod.cpu), node.cpu, sum(_actual(p.cpu) for p in pods)),
        (_actual(pod.memory), node.memory, sum(_actual(p.memory) for p in pods)),
    ]
    for name, amount in pod.extended.items():
        checks.append((amount, node.extended.get(name, 0), sum(p.extended.get(name, 0) for p in pods)))
    return any(req > 0 and req > allocatable - used for req, allocatable, used in checks)


@settings(max_examples=500)
@given(clusters())
def test_fit_filter_rejects_exactly_the_nodes_fits_request_rejects(cluster: Cluster) -> None:
    result = NodeResourcesFitFilter().filter(cluster.pod, cluster.snapshot(), _all(cluster))
    assert (result.codes != 0).tolist() == [fit_rejects(cluster, i) for i in _all(cluster)]
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
    result = NodeResourcesFitFilter().filter(pod, snap, np.arange(3))
    assert (result.codes != 0).all()
    unresolvable = [int(c) in result.unresolvable for c in result.codes]
    # busy: only short of cpu (600 <= 1000 allocatable), resolvable by preemption.
    assert unresolvable[2] is False
    assert unresolvable[0] is True  # memory 2000 > 1000 allocatable
    assert unresolvable[1] is True  # cpu 600 > 500 allocatable


# -- the README's worked example (kube-scheduler-simulator §1.1) ---------------------------------


def test_readme_example_taint_toleration_raw_0_final_300_and_fit_raw_equals_final() -> None:
    """A pod with no tolerations and no spread constraints on nodes without taints.

    TaintToleration: every raw score is 0, reverse-normalised to 100, times weight 3 = 300.
    NodeResourcesFit (LeastAllocated, weight 1, no NormalizeScore): final = raw. By hand (§2.4):
    a node of 4000m / 10000 bytes and a pod of 3000m / 5000 bytes leave cpu (4000-3000)*100//4000 = 25
    and memory (10000-5000)*100//10000 = 50, so (25 + 50) // 2 = 37. The second node, 8000m / 10000,
    gives cpu 62 and memory 50: (62 + 50) // 2 = 56. BalancedAllocation (weight 1) likewise keeps raw.
    """
    nodes = [NodeSpec("n1", cpu=4000, memory=10_000), NodeSpec("n2", cpu=8000, memory=10_000)]
    snap = ClusterSnapshot(nodes)
    fw = Framework(default_profile(), snap, np.random.default_rng(0))
    attempt, _ = fw.schedule(PodSpec("p", cpu=3000, memory=5000), now=1)
    scores = attempt.score_results()
    for node in ("n1", "n2"):
        taint = scores[node]["TaintToleration"]
        assert (taint["raw"], taint["normalized"], taint["final"]) == (0, 100, 300)
        balanced = scores[node]["NodeResourcesBalancedAllocation"]
        assert balanced["final"] == balanced["raw"]
    fit = {node: scores[node]["NodeResourcesFit"] for node in ("n1", "n2")}
    assert (fit["n1"]["raw"], fit["n1"]["final"]) == (37, 37)
    assert (fit["n2"]["raw"], fit["n2"]["final"]) == (56, 56)
    assert attempt.selected == "n2"
