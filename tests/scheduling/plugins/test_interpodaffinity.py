"""InterPodAffinity checked against upstream's unit tests and a node-by-node reference.

The cases restate, as data, kubernetes/kubernetes `pkg/scheduler/framework/plugins/interpodaffinity`
filtering_test.go @ 072825f9 (TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes)
and scoring_test.go @ 8a4d98ac (TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight).
Each case carries its upstream test function and `name`. How upstream's builders map onto ours:

- `PodAffinityIn(key, topologyKey, values, ...)` is a term whose selector is `key In values`;
  `NotIn`/`Exists` likewise. `createPodWithAffinityTerms` gives required terms.
- Upstream's default namespace is "" (`defaultNamespace`, and `st.MakePod()` without one); here it
  is "default", also where a term lists "" in `namespaces`.
- `namespaces` (the Namespace objects the informers hold) is `snap.namespaces`: subteam1.team1 and
  subteam2.team1 labelled team=team1, subteam1.team2 and subteam2.team2 team=team2 (and NS1,
  without labels, in TestRequiredAffinityMultipleNodes).
- Our nodes also carry `kubernetes.io/hostname`, which no case uses as a topology key.
- A status of Skip (PreFilter or PreScore) is `affinity_prefilter`/`affinity_score_map` returning
  None, and the plugin passing every node or scoring 0 everywhere.

Left out: the cases with invalid label values ("PodAffinity fails PreFilter with an invalid
affinity label syntax", "PodAntiAffinity fails PreFilter with an invalid antiaffinity label
syntax", "invalid Affinity fails PreScore", "invalid AntiAffinity fails PreScore"): label values
are not validated here. In "pod matches its own Label in PodAffinity and that matches the existing
pod Labels" the existing pod is on node2, which upstream's snapshot holds without a Node object;
here node2 is a node without labels, and only node1 is filtered, as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.affinity import Requirement
from skenario.scheduling.objects import (
    LabelSelector,
    NodeSpec,
    PodAffinity,
    PodAffinityTerm,
    PodSpec,
    WeightedPodAffinityTerm,
)
from skenario.scheduling.plugins import interpodaffinity
from skenario.scheduling.plugins.interpodaffinity import (
    AFFINITY,
    ANTI_AFFINITY,
    EXISTING_ANTI_AFFINITY,
    REASONS,
    InterPodAffinityPlugin,
    affinity_normalize,
    affinity_prefilter,
    affinity_score_map,
    term_matches,
)
from skenario.scheduling.snapshot import ClusterSnapshot

SINGLE = "filtering_test.go TestRequiredAffinitySingleNode"
MULTIPLE = "filtering_test.go TestRequiredAffinityMultipleNodes"
PREFERRED = "scoring_test.go TestPreferredAffinity"
HARD = "scoring_test.go TestPreferredAffinityWithHardPodAffinitySymmetricWeight"

OK, AFF, ANTI, EXISTING = 0, AFFINITY, ANTI_AFFINITY, EXISTING_ANTI_AFFINITY

T1, T2 = {"team": "team1"}, {"team": "team2"}
NAMESPACES = {"subteam1.team1": T1, "subteam2.team1": T1, "subteam1.team2": T2, "subteam2.team2": T2}
TEAM1 = LabelSelector(match_expressions=(Requirement("team", "In", ("team1",)),))


def In(key: str, *values: str) -> Requirement:  # upstream's operator names
    return Requirement(key, "In", values)


def NotIn(key: str, *values: str) -> Requirement:
    return Requirement(key, "NotIn", values)


def Exists(key: str) -> Requirement:
    return Requirement(key, "Exists")


def DoesNotExist(key: str) -> Requirement:
    return Requirement(key, "DoesNotExist")


def term(
    topology_key: str,
    *requirements: Requirement,
    namespaces: tuple[str, ...] = (),
    namespace_selector: LabelSelector | None = None,
) -> PodAffinityTerm:
    return PodAffinityTerm(topology_key, LabelSelector(match_expressions=requirements), namespaces, namespace_selector)


def pref(weight: int, t: PodAffinityTerm) -> WeightedPodAffinityTerm:
    return WeightedPodAffinityTerm(weight, t)


def pod(
    labels: Mapping[str, str] | None = None,
    *,
    namespace: str = "default",
    affinity: tuple[PodAffinityTerm, ...] = (),
    anti: tuple[PodAffinityTerm, ...] = (),
    preferred: tuple[WeightedPodAffinityTerm, ...] = (),
    preferred_anti: tuple[WeightedPodAffinityTerm, ...] = (),
    name: str = "incoming",
) -> PodSpec:
    return PodSpec(
        name,
        namespace=namespace,
        labels=dict(labels or {}),
        pod_affinity=PodAffinity(affinity, preferred),
        pod_anti_affinity=PodAffinity(anti, preferred_anti),
    )


def node(name: str, **labels: str) -> NodeSpec:
    return NodeSpec(name, cpu=1000, memory=1000, labels=labels)


def snapshot(
    nodes: tuple[NodeSpec, ...], existing: tuple[tuple[str, PodSpec], ...], namespaces: Mapping[str, Mapping[str, str]]
) -> ClusterSnapshot:
    snap = ClusterSnapshot(nodes)
    snap.namespaces = dict(namespaces)
    for k, (node_name, p) in enumerate(existing):
        snap.assume(replace(p, name=f"existing-{k}"), snap.index[node_name])
    return snap


def every(snap: ClusterSnapshot) -> np.ndarray:
    return np.arange(len(snap.nodes), dtype=np.int64)


# --------------------------------------------------------------------------------------------------
# Filter


@dataclass(frozen=True)
class FilterCase:
    test: str
    name: str
    pod: PodSpec
    nodes: tuple[NodeSpec, ...]
    existing: tuple[tuple[str, PodSpec], ...]
    want: Mapping[str, int]  # the nodes filtered, and their code
    skip: bool = False  # upstream's PreFilter returns Skip
    namespaces: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: NAMESPACES)


SERVICE = {"service": "securityscan"}  # podLabel
SECURITY = {"security": "S1"}  # podLabel2
NODE1 = node("node1", region="r1", zone="z11")
ON_NODE1 = (("node1", pod(SERVICE)),)  # upstream's `pod`


def single(
    name: str, p: PodSpec, want: int, existing: tuple[tuple[str, PodSpec], ...] = ON_NODE1, **kw: bool
) -> FilterCase:
    return FilterCase(SINGLE, name, p, (NODE1,), existing, {"node1": want}, **kw)


SERVICE_IN_REGION = term("region", In("service", "securityscan", "value2"))
ANTIVIRUS_BY_NODE = term("node", In("service", "antivirusscan", "value2"))
SECURITYSCAN_BY_ZONE = term("zone", In("service", "securityscan", "value2"))

SINGLE_CASES = [
    single(
        "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
        pod(),
        OK,
        (),
        skip=True,
    ),
    single(
        "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that "
        "matches the existing pod",
        pod(SECURITY, affinity=(SERVICE_IN_REGION,)),
        OK,
    ),
    single(
        "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator "
        "in labelSelector that matches the existing pod",
        pod(SECURITY, affinity=(term("region", NotIn("service", "securityscan3", "value3")),)),
        OK,
    ),
    # The term has no topologyKey (""), which no node has, besides the namespace.
    single(
        "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
        pod(SECURITY, affinity=(term("", In("service", "securityscan", "value2"), namespaces=("DiffNameSpace",)),)),
        AFF,
        (("node1", pod(SERVICE, namespace="ns")),),
    ),
    single(
        "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
        pod(SERVICE, affinity=(term("", In("service", "antivirusscan", "value2")),)),
        AFF,
    ),
    single(
        "satisfies the PodAffinity with different label Operators in multiple "
        "RequiredDuringSchedulingIgnoredDuringExecution ",
        pod(
            SECURITY,
            affinity=(
                term("region", Exists("service"), DoesNotExist("wrongkey")),
                term("region", In("service", "securityscan"), NotIn("service", "WrongValue")),
            ),
        ),
        OK,
    ),
    single(
        "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node "
        "because one of the matchExpression item don't match.",
        pod(
            SECURITY,
            affinity=(
                term("region", Exists("service"), DoesNotExist("wrongkey")),
                term("region", In("service", "securityscan2"), NotIn("service", "WrongValue")),
            ),
        ),
        AFF,
    ),
    single(
        "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
        pod(SECURITY, affinity=(SERVICE_IN_REGION,), anti=(ANTIVIRUS_BY_NODE,)),
        OK,
    ),
    single(
        "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
        pod(SECURITY, affinity=(SERVICE_IN_REGION,), anti=(ANTIVIRUS_BY_NODE,)),
        OK,
        (("node1", pod(SERVICE, anti=(ANTIVIRUS_BY_NODE,))),),
    ),
    single(
        "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
        pod(SECURITY, affinity=(SERVICE_IN_REGION,), anti=(SECURITYSCAN_BY_ZONE,)),
        ANTI,
    ),
    single(
        "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the "
        "existing pod",
        pod(SERVICE, affinity=(SERVICE_IN_REGION,), anti=(ANTIVIRUS_BY_NODE,)),
        EXISTING,
        (("node1", pod(SERVICE, anti=(SECURITYSCAN_BY_ZONE,))),),
    ),
    # node2 holds the pod, without labels; only node1 is filtered.
    FilterCase(
        SINGLE,
        "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
        pod(SERVICE, affinity=(term("region", NotIn("service", "securityscan", "value2")),)),
        (NODE1, node("node2")),
        (("node2", pod(SERVICE)),),
        {"node1": AFF},
    ),
    single(
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "doesn't satisfy PodAntiAffinity symmetry with the existing pod",
        pod(SERVICE),
        EXISTING,
        (("node1", pod(SERVICE, anti=(SECURITYSCAN_BY_ZONE,))),),
    ),
    single(
        "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. "
        "satisfy PodAntiAffinity symmetry with the existing pod",
        pod(SERVICE),
        OK,
        (("node1", pod(SERVICE, anti=(term("zone", NotIn("service", "securityscan", "value2")),))),),
        skip=True,
    ),
    single(
        "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with "
        "incoming pod",
        pod(SERVICE, anti=(term("region", Exists("service")), term("region", Exists("security")))),
        ANTI,
        (("node1", pod(SECURITY, anti=(term("zone", Exists("security")),))),),
    ),
    single(
        "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod(SERVICE, anti=(term("zone", Exists("service")), term("zone", Exists("security")))),
        ANTI,
        (("node1", pod(SECURITY, anti=(term("zone", Exists("security")),))),),
    ),
    single(
        "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod(SECURITY, anti=(term("zone", Exists("security")),)),
        EXISTING,
        (("node1", pod(SERVICE, anti=(term("zone", Exists("service")), term("zone", Exists("security"))))),),
    ),
    single(
        "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
        pod({"abc": "", "xyz": ""}, anti=(term("zone", Exists("abc")), term("zone", Exists("def")))),
        ANTI,
        (("node1", pod({"def": "", "xyz": ""}, anti=(term("zone", Exists("abc")), term("zone", Exists("def"))))),),
    ),
    single(
        "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
        pod({"def": "", "xyz": ""}, anti=(term("zone", Exists("abc")), term("zone", Exists("def")))),
        ANTI,
        (("node1", pod({"abc": "", "xyz": ""}, anti=(term("zone", Exists("abc")), term("zone", Exists("def"))))),),
    ),
    single(
        "affinity with NamespaceSelector",
        pod(SECURITY, affinity=(term("region", In("service", "securityscan", "value2"), namespace_selector=TEAM1),)),
        OK,
        (("node1", pod(SERVICE, namespace="subteam1.team1")),),
    ),
    single(
        "affinity with non-matching NamespaceSelector",
        pod(SECURITY, affinity=(term("region", In("service", "securityscan", "value2"), namespace_selector=TEAM1),)),
        AFF,
        (("node1", pod(SERVICE, namespace="subteam1.team2")),),
    ),
    single(
        "anti-affinity with matching NamespaceSelector",
        pod(
            SECURITY,
            namespace="subteam1.team1",
            anti=(term("zone", In("service", "securityscan", "value2"), namespace_selector=TEAM1),),
        ),
        ANTI,
        (("node1", pod(SERVICE, namespace="subteam2.team1")),),
    ),
    single(
        "anti-affinity with matching all NamespaceSelector",
        pod(
            SECURITY,
            namespace="subteam1.team1",
            anti=(term("zone", In("service", "securityscan", "value2"), namespace_selector=LabelSelector()),),
        ),
        ANTI,
        (("node1", pod(SERVICE, namespace="subteam2.team1")),),
    ),
    single(
        "anti-affinity with non-matching NamespaceSelector",
        pod(
            SECURITY,
            namespace="subteam1.team1",
            anti=(term("zone", In("service", "securityscan", "value2"), namespace_selector=TEAM1),),
        ),
        OK,
        (("node1", pod(SERVICE, namespace="subteam1.team2")),),
    ),
]

CHINA, CHINA_AZ1, INDIA = {"region": "China"}, {"region": "China", "az": "az1"}, {"region": "India"}
R1Z1A, R1Z1B = (
    node("nodeA", region="r1", zone="z1", hostname="nodeA"),
    node("nodeB", region="r1", zone="z1", hostname="nodeB"),
)
R1Z2B = node("nodeB", region="r1", zone="z2", hostname="nodeB")
FOO_BAR = {"foo": "", "bar": ""}


def multiple(
    name: str,
    p: PodSpec,
    nodes: tuple[NodeSpec, ...],
    existing: tuple[tuple[str, PodSpec], ...],
    *want: int,
    skip: bool = False,
) -> FilterCase:
    verdicts = dict(zip((n.name for n in nodes), want, strict=True))
    return FilterCase(MULTIPLE, name, p, nodes, existing, verdicts, skip, {"NS1": {}})


MULTIPLE_CASES = [
    multiple(
        "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them "
        "has an existing pod that matches the affinity rules",
        pod(affinity=(term("region", In("foo", "bar")),)),
        (node("node1", **CHINA), node("node2", **CHINA_AZ1), node("node3", **INDIA)),
        (("node1", pod({"foo": "bar"})),),
        OK,
        OK,
        AFF,
    ),
    multiple(
        "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the "
        "collection should not be blocked from being scheduled onto any node, even there's no existing pod that "
        "matches the rule anywhere.",
        pod(
            {"foo": "bar", "service": "securityscan"},
            affinity=(term("zone", In("foo", "bar")), term("zone", In("service", "securityscan"))),
        ),
        (node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az2", hostname="h2")),
        (("nodeA", pod({"foo": "bar"})),),
        OK,
        OK,
    ),
    multiple(
        "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
        pod(
            {"foo": "bar", "service": "securityscan"},
            affinity=(term("zone", In("foo", "bar")), term("zone", In("service", "securityscan"))),
        ),
        (node("nodeA", zoneLabel="az1", hostname="h1"), node("nodeB", zoneLabel="az2", hostname="h2")),
        (("nodeA", pod({"foo": "bar"})),),
        AFF,
        AFF,
    ),
    multiple(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
        "affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
        pod(anti=(term("region", In("foo", "abc")),)),
        (node("nodeA", region="r1", hostname="nodeA"), node("nodeB", region="r1", hostname="nodeB")),
        (("nodeA", pod({"foo": "abc"})),),
        ANTI,
        ANTI,
    ),
    multiple(
        "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
        pod(anti=(term("region", In("foo", "abc")), term("zone", In("service", "securityscan")))),
        (node("nodeA", region="r1", zone="z1", hostname="nodeA"), R1Z2B),
        (("nodeA", pod({"foo": "abc", "service": "securityscan"})),),
        ANTI,
        ANTI,
    ),
    multiple(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
        "affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
        pod(anti=(term("region", In("foo", "abc")),)),
        (node("nodeA", **CHINA), node("nodeB", **CHINA_AZ1), node("nodeC", **INDIA)),
        (("nodeA", pod({"foo": "abc"})),),
        ANTI,
        ANTI,
        OK,
    ),
    multiple(
        "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod "
        "affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an "
        "existing pod that match the inter pod affinity rule but in different namespace)",
        pod({"foo": "123"}, namespace="NS1", anti=(term("region", In("foo", "bar")),)),
        (node("nodeA", **CHINA), node("nodeB", **CHINA_AZ1), node("nodeC", **INDIA)),
        (
            ("nodeA", pod({"foo": "bar"}, namespace="NS1")),
            ("nodeC", pod(namespace="NS2", anti=(term("region", In("foo", "123")),))),
        ),
        ANTI,
        ANTI,
        OK,
    ),
    multiple(
        "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of "
        "the term is firstly checked, and then topologyKey of the term is also checked",
        pod({"foo": ""}),
        (R1Z1A, R1Z1B),
        (("nodeA", pod(anti=(term("invalid-node-label", Exists("foo")),))),),
        OK,
        OK,
        skip=True,
    ),
    multiple(
        "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
        pod(anti=(term("invalid-node-label", Exists("foo")),)),
        (R1Z1A, R1Z1B),
        (("nodeA", pod({"foo": ""})),),
        OK,
        OK,
    ),
    multiple(
        "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each "
        "existingPod's terms on all nodes",
        pod(FOO_BAR),
        (node("nodeA", region="r1", zone="z1", hostname="nodeA"), R1Z2B),
        (
            ("nodeA", pod(anti=(term("zone", Exists("foo")),))),
            ("nodeA", pod(anti=(term("region", Exists("bar")),))),
        ),
        EXISTING,
        EXISTING,
    ),
    multiple(
        "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one "
        "anti-affinity rule of existingPod",
        pod(anti=(term("zone", Exists("foo")), term("region", Exists("bar")))),
        (node("nodeA", region="r1", zone="z1", hostname="nodeA"), R1Z2B),
        (("nodeA", pod({"foo": ""})), ("nodeB", pod({"bar": ""}))),
        ANTI,
        ANTI,
    ),
    multiple(
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
        pod(FOO_BAR),
        (node("nodeA", region="r1", zone="z1", hostname="nodeA"), R1Z2B),
        (("nodeA", pod(anti=(term("invalid-node-label", Exists("foo")), term("zone", Exists("bar"))))),),
        EXISTING,
        OK,
    ),
    multiple(
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when one term has invalid topologyKey",
        pod(anti=(term("invalid-node-label", Exists("foo")), term("zone", Exists("bar")))),
        (node("nodeA", region="r1", zone="z1", hostname="nodeA"), R1Z2B),
        (("nodeA", pod(FOO_BAR)),),
        ANTI,
        OK,
    ),
    multiple(
        "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
        pod(FOO_BAR),
        (node("nodeA", region="r1", zone="z1", hostname="nodeA"), R1Z2B),
        (("nodeA", pod(anti=(term("region", Exists("foo")), term("zone", Exists("bar"))))),),
        EXISTING,
        EXISTING,
    ),
    multiple(
        "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a "
        "single term match - case when all terms have valid topologyKey",
        pod(anti=(term("region", Exists("foo")), term("zone", Exists("bar")))),
        (node("nodeA", region="r1", zone="z1", hostname="nodeA"), R1Z2B),
        (("nodeA", pod(FOO_BAR)),),
        ANTI,
        ANTI,
    ),
    multiple(
        "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term "
        "matches incoming pod, so incoming pod can only be scheduled to nodeC",
        pod(FOO_BAR),
        (
            node("nodeA", region="r1", zone="z1", hostname="nodeA"),
            R1Z2B,
            node("nodeC", region="r1", zone="z3", hostname="nodeC"),
        ),
        (
            ("nodeA", pod(anti=(term("zone", Exists("foo")), term("zone", Exists("labelA"))))),
            ("nodeB", pod(anti=(term("zone", Exists("bar")), term("zone", Exists("labelB"))))),
        ),
        EXISTING,
        EXISTING,
        OK,
    ),
    multiple(
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
        "match",
        pod(affinity=(term("region", Exists("foo")), term("zone", Exists("bar")))),
        (R1Z1A, R1Z1B),
        (("nodeA", pod(FOO_BAR)),),
        OK,
        OK,
    ),
    multiple(
        "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys "
        "match, and the match logic should be satisfied on the same pod",
        pod(affinity=(term("region", Exists("foo")), term("zone", Exists("bar")))),
        (node("nodeA", region="r1", zone="z1", hostname="nodeA"), R1Z2B),
        (("nodeA", pod({"foo": ""})), ("nodeB", pod({"bar": ""}))),
        AFF,
        AFF,
    ),
]

FILTER_CASES = SINGLE_CASES + MULTIPLE_CASES


@pytest.mark.parametrize("case", [pytest.param(c, id=f"{c.test.split()[-1]}: {c.name}") for c in FILTER_CASES])
def test_filter_upstream(case: FilterCase) -> None:
    snap = snapshot(case.nodes, case.existing, case.namespaces)
    assert (affinity_prefilter(case.pod, snap) is None) == case.skip
    nodes = np.array([snap.index[name] for name in case.want], dtype=np.int64)
    result = InterPodAffinityPlugin().filter(case.pod, snap, nodes)
    assert dict(zip(case.want, result.codes.tolist(), strict=True)) == dict(case.want)


def test_filter_reasons_and_statuses_are_upstreams() -> None:
    """filtering.go's ErrReason* strings; only the pod's own affinity is UnschedulableAndUnresolvable."""
    snap = snapshot((NODE1,), ON_NODE1, NAMESPACES)
    result = InterPodAffinityPlugin().filter(pod(affinity=(term("zone", Exists("nope")),)), snap, every(snap))
    assert result.reasons[AFFINITY] == "node(s) didn't match pod affinity rules"
    assert result.reasons[ANTI_AFFINITY] == "node(s) didn't match pod anti-affinity rules"
    assert result.reasons[EXISTING_ANTI_AFFINITY] == "node(s) didn't satisfy existing pods anti-affinity rules"
    assert tuple(result.reasons) == REASONS
    assert result.unresolvable == frozenset({AFFINITY})


def test_the_first_failing_check_names_the_node() -> None:
    """A node failing affinity, anti-affinity and existing anti-affinity at once reports affinity, as upstream."""
    existing = pod({"app": "db"}, anti=(term("zone", Exists("web")),))
    incoming = pod({"web": ""}, affinity=(term("zone", Exists("cache")),), anti=(term("zone", Exists("app")),))
    snap = snapshot((node("n1", zone="a"), node("n2", zone="a")), (("n1", existing), ("n2", pod({"cache": ""}))), {})
    # n1's zone has the cache pod (affinity holds), the db pod (anti-affinity fails) and its term against "web".
    assert InterPodAffinityPlugin().filter(incoming, snap, every(snap)).codes.tolist() == [ANTI, ANTI]
    lonely = snapshot((node("n1", zone="a"),), (("n1", existing),), {})
    assert InterPodAffinityPlugin().filter(incoming, lonely, every(lonely)).codes.tolist() == [AFF]


# --------------------------------------------------------------------------------------------------
# Score


@dataclass(frozen=True)
class ScoreCase:
    test: str
    name: str
    pod: PodSpec
    nodes: tuple[NodeSpec, ...]
    existing: tuple[tuple[str, PodSpec], ...]
    want: tuple[int, ...]  # normalised, per node
    skip: bool = False  # upstream's PreScore returns Skip
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


S1, S2 = {"security": "S1"}, {"security": "S2"}
SERVICE_S1 = {"service": "S1"}
AZ1, AZ2 = {"az": "az1"}, {"az": "az2"}

STAY_WITH_S1_IN_REGION = pref(5, term("region", In("security", "S1")))
STAY_WITH_S2_IN_REGION = pref(6, term("region", In("security", "S2")))
AFFINITY3 = (
    pref(8, term("region", NotIn("security", "S1"), In("security", "S2"))),
    pref(2, term("region", Exists("security"), DoesNotExist("wrongkey"))),
)
HARD_AFFINITY = (
    term("region", In("security", "S1", "value2")),
    term("region", Exists("security"), DoesNotExist("wrongkey")),
)
AWAY_FROM_S1_IN_AZ = pref(5, term("az", In("security", "S1")))
AWAY_FROM_S2_IN_AZ = pref(5, term("az", In("security", "S2")))
WITH_S1_AWAY_FROM_S2: dict = {
    "preferred": (pref(8, term("region", In("security", "S1"))),),
    "preferred_anti": (pref(5, term("az", In("security", "S2"))),),
}
NS_SELECTED = pref(5, term("region", In("security", "S1"), namespaces=("subteam2.team2",), namespace_selector=TEAM1))

N3 = (node("node1", **CHINA), node("node2", **INDIA), node("node3", **AZ1))
N2_CHINA_INDIA = (node("node1", **CHINA), node("node2", **INDIA))
N5 = (
    node("node1", **CHINA),
    node("node2", **INDIA),
    node("node3", **CHINA),
    node("node4", **CHINA),
    node("node5", **INDIA),
)


def on(node_name: str, labels: Mapping[str, str] | None = None, **kw: object) -> tuple[str, PodSpec]:
    return node_name, pod(labels, name="existing", **kw)  # type: ignore[arg-type]


def preferred(
    name: str, p: PodSpec, nodes: tuple[NodeSpec, ...], existing: tuple, *want: int, **kw: object
) -> ScoreCase:
    return ScoreCase(PREFERRED, name, p, nodes, existing, want, **kw)  # type: ignore[arg-type]


NS_PODS = (
    on("node1", S1, namespace="subteam1.team1"),
    on("node1", S1, namespace="subteam1.team1"),
    on("node1", S1, namespace="subteam1.team2"),
    on("node2", S1, namespace="subteam2.team1"),
)
NS_PODS_WITH_LISTED = (*NS_PODS[:2], on("node1", S1, namespace="subteam2.team2"), NS_PODS[3])

PREFERRED_CASES = [
    preferred("all nodes are same priority as Affinity is nil", pod(S1), N3, (), 0, 0, 0, skip=True),
    preferred(
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing to others"
        "which doesn't match either pods in nodes or in topology key",
        pod(S1, preferred=(STAY_WITH_S1_IN_REGION,)),
        N3,
        (on("node1", S1), on("node2", S2), on("node3", S1)),
        100,
        0,
        0,
    ),
    preferred(
        "All the nodes that have the same topology key & label value with one of them has an existing pod that match "
        "the affinity rules, have the same score",
        pod(preferred=(STAY_WITH_S1_IN_REGION,)),
        (node("node1", **CHINA), node("node2", **CHINA_AZ1), node("node3", **INDIA)),
        (on("node1", S1),),
        100,
        100,
        0,
    ),
    preferred(
        "Affinity: nodes in one region has more matching pods comparing to other region, so the region which has more "
        "matches will get high score",
        pod(S1, preferred=(STAY_WITH_S2_IN_REGION,)),
        N5,
        tuple(on(n, S2) for n in ("node1", "node1", "node2", "node3", "node4", "node5")),
        100,
        0,
        100,
        100,
        0,
    ),
    preferred(
        "Affinity: different Label operators and values for pod affinity scheduling preference, including some match "
        "failures ",
        pod(S1, preferred=AFFINITY3),
        N3,
        (on("node1", S1), on("node2", S2), on("node3", S1)),
        20,
        100,
        0,
    ),
    preferred(
        "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in pod affinity "
        "symmetry",
        pod(S2),
        N3,
        (on("node1", S1, preferred=(STAY_WITH_S1_IN_REGION,)), on("node2", S2, preferred=(STAY_WITH_S2_IN_REGION,))),
        0,
        100,
        0,
    ),
    preferred(
        "Affinity symmetry with namespace selector",
        pod(S1, namespace="subteam1.team1"),
        N3,
        (on("node1", S1, preferred=(NS_SELECTED,)), on("node2", S2, preferred=(STAY_WITH_S2_IN_REGION,))),
        100,
        0,
        0,
    ),
    preferred(
        "AntiAffinity symmetry with namespace selector",
        pod(S1, namespace="subteam1.team1"),
        N3,
        (on("node1", S1, preferred_anti=(NS_SELECTED,)), on("node2", S2, preferred=(STAY_WITH_S2_IN_REGION,))),
        0,
        100,
        100,
    ),
    preferred(
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod affinity symmetry",
        pod(S1),
        N3,
        (on("node1", S1, affinity=HARD_AFFINITY), on("node2", S2, affinity=HARD_AFFINITY)),
        100,
        100,
        0,
    ),
    preferred(
        "Anti Affinity: pod that does not match existing pods in node will get high score ",
        pod(S1, preferred_anti=(AWAY_FROM_S1_IN_AZ,)),
        (node("node1", **AZ1), node("node2", **CHINA)),
        (on("node1", S1), on("node2", S2)),
        0,
        100,
    ),
    preferred(
        "Anti Affinity: pod that does not match topology key & match the pods in nodes will get higher score "
        "comparing to others ",
        pod(S1, preferred_anti=(AWAY_FROM_S1_IN_AZ,)),
        (node("node1", **AZ1), node("node2", **CHINA)),
        (on("node1", S1), on("node2", S1)),
        0,
        100,
    ),
    preferred(
        "Anti Affinity: one node has more matching pods comparing to other node, so the node which has more unmatches "
        "will get high score",
        pod(S1, preferred_anti=(AWAY_FROM_S1_IN_AZ,)),
        (node("node1", **AZ1), node("node2", **INDIA)),
        (on("node1", S1), on("node1", S1), on("node2", S2)),
        0,
        100,
    ),
    preferred(
        "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get high score",
        pod(S2),
        (node("node1", **AZ1), node("node2", **AZ2)),
        (on("node1", S1, preferred_anti=(AWAY_FROM_S2_IN_AZ,)), on("node2", S2, preferred_anti=(AWAY_FROM_S1_IN_AZ,))),
        0,
        100,
    ),
    preferred(
        "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution in both pod "
        "affinity & anti affinity",
        pod(S1, **WITH_S1_AWAY_FROM_S2),
        (node("node1", **CHINA), node("node2", **AZ1)),
        (on("node1", S1), on("node2", S1)),
        100,
        0,
    ),
    preferred(
        "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to schedule and existing "
        "pods have the same labels",
        pod(S1, **WITH_S1_AWAY_FROM_S2),
        (node("node1", **CHINA_AZ1), *N5[1:]),
        tuple(on(n, S1) for n in ("node1", "node1", "node2", "node3", "node3", "node4", "node5")),
        100,
        0,
        100,
        100,
        0,
    ),
    preferred(
        "Affinity and Anti Affinity and symmetry: considered only preferredDuringSchedulingIgnoredDuringExecution in "
        "both pod affinity & anti affinity & symmetry",
        pod(S1, **WITH_S1_AWAY_FROM_S2),
        (node("node1", **CHINA), node("node2", **AZ1), node("node3", **INDIA), node("node4", **AZ2)),
        (
            on("node1", S1),
            on("node2", S2),
            on("node3", **WITH_S1_AWAY_FROM_S2),
            on("node4", preferred_anti=(AWAY_FROM_S1_IN_AZ,)),
        ),
        100,
        0,
        100,
        0,
    ),
    preferred(
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        pod(S1),
        (node("node1", **CHINA), node("node2", **CHINA)),
        (on("node1", S1), on("node2", **WITH_S1_AWAY_FROM_S2)),
        0,
        0,
    ),
    preferred(
        "Affinity with pods matching NamespaceSelector",
        pod(S1, namespace="subteam1.team1", preferred=(NS_SELECTED,)),
        N2_CHINA_INDIA,
        NS_PODS,
        100,
        0,
    ),
    preferred(
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod(S1, namespace="subteam1.team1", preferred=(NS_SELECTED,)),
        N2_CHINA_INDIA,
        NS_PODS_WITH_LISTED,
        100,
        0,
    ),
    # Upstream gives the next two the names of the two before; their pods' terms are anti-affinity.
    preferred(
        "Affinity with pods matching NamespaceSelector",
        pod(S1, namespace="subteam1.team1", preferred_anti=(NS_SELECTED,)),
        N2_CHINA_INDIA,
        NS_PODS,
        0,
        100,
    ),
    preferred(
        "Affinity with pods matching both NamespaceSelector and Namespaces fields",
        pod(S1, namespace="subteam1.team1", preferred_anti=(NS_SELECTED,)),
        N2_CHINA_INDIA,
        NS_PODS_WITH_LISTED,
        0,
        100,
    ),
    preferred(
        "Ignore preferred terms of existing pods",
        pod(S2),
        N2_CHINA_INDIA,
        (on("node1", S1, **WITH_S1_AWAY_FROM_S2), on("node2", S2, preferred=(STAY_WITH_S2_IN_REGION,))),
        0,
        0,
        skip=True,
        ignore_preferred_terms_of_existing_pods=True,
    ),
    preferred(
        "Do not ignore preferred terms of existing pods",
        pod(S2),
        N2_CHINA_INDIA,
        (on("node1", S1, **WITH_S1_AWAY_FROM_S2), on("node2", S2, preferred=(STAY_WITH_S2_IN_REGION,))),
        0,
        100,
    ),
    preferred("No nodes to score", pod(S2), (), (), skip=True),
]

# "" in the term's namespaces is upstream's default namespace.
HARD_POD_AFFINITY = (
    term("region", In("service", "S1"), namespaces=("default", "subteam2.team2"), namespace_selector=TEAM1),
)
HARD_EXISTING = (on("node1", affinity=HARD_POD_AFFINITY), on("node2", affinity=HARD_POD_AFFINITY))


def hard(name: str, namespace: str, weight: int, *want: int, skip: bool = False) -> ScoreCase:
    return ScoreCase(HARD, name, pod(SERVICE_S1, namespace=namespace), N3, HARD_EXISTING, want, skip, weight)


HARD_CASES = [
    hard("with default weight", "default", 1, 100, 100, 0),
    hard("with zero weight", "default", 0, 0, 0, 0, skip=True),
    hard("with no matching namespace", "subteam1.team2", 1, 0, 0, 0, skip=True),
    hard("with matching NamespaceSelector", "subteam1.team1", 1, 100, 100, 0),
    hard("with matching Namespaces", "subteam2.team2", 1, 100, 100, 0),
]

SCORE_CASES = PREFERRED_CASES + HARD_CASES


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.test.split()[-1]}[{i}]: {c.name}") for i, c in enumerate(SCORE_CASES)]
)
def test_score_upstream(case: ScoreCase) -> None:
    snap = snapshot(case.nodes, case.existing, NAMESPACES)
    plugin = InterPodAffinityPlugin(case.hard_pod_affinity_weight, case.ignore_preferred_terms_of_existing_pods)
    state = affinity_score_map(
        case.pod, snap, case.hard_pod_affinity_weight, case.ignore_preferred_terms_of_existing_pods
    )
    assert (state is None) == case.skip
    raw = plugin.score(case.pod, snap, every(snap))
    normalized = plugin.normalize(raw)
    assert normalized is not None
    assert tuple(normalized.tolist()) == case.want


@pytest.mark.parametrize(
    ("index", "raw"),
    [
        # S2 pods: two on node1 and one on node3, node4 (China), one on node2, node5 (India); weight 6.
        (3, [24, 12, 24, 24, 12]),
        # node1 (China): its S1 pod matches only the Exists term (2); node2 (India): S2 matches both (8 + 2).
        (4, [2, 10, 0]),
        # Affinity 8 for S1 in China, -5 for S2 in az1; node3's pod likes S1 in India (8), node4's shuns S1 in az2.
        (15, [8, -5, 8, -5]),
        # Two S1 pods in namespaces the selector picks on node1, one on node2; the team2 pod does not count.
        (17, [10, 5]),
        (18, [15, 5]),
    ],
)
def test_raw_scores_worked_by_hand(index: int, raw: list[int]) -> None:
    case = SCORE_CASES[index]
    snap = snapshot(case.nodes, case.existing, NAMESPACES)
    assert InterPodAffinityPlugin().score(case.pod, snap, every(snap)).tolist() == raw


def test_normalize_is_min_max_truncated() -> None:
    """NormalizeScore: 100 * (s - min) / (max - min), truncated; all equal gives 0."""
    assert affinity_normalize(np.array([2, 10, 0])).tolist() == [20, 100, 0]
    assert affinity_normalize(np.array([-5, 0, 0])).tolist() == [0, 100, 100]
    assert affinity_normalize(np.array([1, 2, 4])).tolist() == [0, 33, 100]  # 33.3 truncated
    assert affinity_normalize(np.array([7, 7])).tolist() == [0, 0]
    assert affinity_normalize(np.zeros(0, dtype=np.int64)).tolist() == []


# --------------------------------------------------------------------------------------------------
# Terms, args and cost


def test_a_term_selects_in_its_namespaces() -> None:
    """`AffinityTerm.Matches`: listed namespaces or selected ones, else the owner's; no label selector, no pod."""
    ns = {"prod": {"env": "prod"}}
    web_prod, web_dev = pod({"app": "web"}, namespace="prod"), pod({"app": "web"}, namespace="dev")
    own = term("zone", In("app", "web"))
    assert term_matches(own, "prod", web_prod, ns) and not term_matches(own, "prod", web_dev, ns)
    assert term_matches(term("zone", In("app", "web"), namespaces=("dev",)), "prod", web_dev, ns)
    env = LabelSelector(match_labels={"env": "prod"})
    assert term_matches(term("zone", In("app", "web"), namespace_selector=env), "dev", web_prod, ns)
    assert not term_matches(term("zone", In("app", "web"), namespace_selector=env), "prod", web_dev, ns)
    assert term_matches(term("zone", In("app", "web"), namespace_selector=LabelSelector()), "prod", web_dev, ns)
    assert not term_matches(PodAffinityTerm("zone"), "prod", web_prod, ns)
    # dev is not in `namespaces`: it has no labels, so a selector on a missing label picks it.
    no_env = LabelSelector(match_expressions=(DoesNotExist("env"),))
    assert term_matches(term("zone", In("app", "web"), namespace_selector=no_env), "prod", web_dev, ns)


def test_args_are_upstreams() -> None:
    plugin = InterPodAffinityPlugin()
    assert (plugin.hard_pod_affinity_weight, plugin.ignore_preferred_terms_of_existing_pods) == (1, False)
    for bad in (-1, 101):
        with pytest.raises(ValueError, match="hardPodAffinityWeight"):
            InterPodAffinityPlugin(hard_pod_affinity_weight=bad)


def test_a_pod_without_terms_in_a_cluster_without_any_touches_no_pod(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(snap: ClusterSnapshot) -> None:
        raise AssertionError("pods visited")

    monkeypatch.setattr(interpodaffinity, "_groups", fail)
    monkeypatch.setattr(interpodaffinity, "_affinity_pods", fail)
    snap = snapshot(N3, (on("node1", S1), on("node2", S2)), {})
    plugin = InterPodAffinityPlugin()
    assert plugin.filter(pod(S1), snap, every(snap)).codes.tolist() == [0, 0, 0]
    assert plugin.score(pod(S1), snap, every(snap)).tolist() == [0, 0, 0]


def test_a_subset_of_nodes_is_judged_against_the_whole_cluster() -> None:
    """PreFilter counts over every node; Filter and Score look only at the nodes given, in their order."""
    snap = snapshot(N5, (on("node1", S1),), {})
    incoming = pod(S1, affinity=(term("region", In("security", "S1")),), preferred=(STAY_WITH_S1_IN_REGION,))
    nodes = np.array([4, 2], dtype=np.int64)  # node5 (India), node3 (China)
    plugin = InterPodAffinityPlugin()
    assert plugin.filter(incoming, snap, nodes).codes.tolist() == [AFF, OK]
    assert plugin.score(incoming, snap, nodes).tolist() == [0, 5]


def test_node_labels_changing_are_seen() -> None:
    snap = snapshot((node("n1", zone="a"), node("n2", zone="b")), (("n1", pod({"app": "db"})),), {})
    incoming = pod(anti=(term("zone", Exists("app")),))
    plugin = InterPodAffinityPlugin()
    assert plugin.filter(incoming, snap, every(snap)).codes.tolist() == [ANTI, OK]
    snap.update_node(node("n2", zone="a"))
    assert plugin.filter(incoming, snap, every(snap)).codes.tolist() == [ANTI, ANTI]


# --------------------------------------------------------------------------------------------------
# The vectorised plugin against a reference that judges one node at a time


KEYS = ("zone", "rack")
APPS = ("a", "b")


def _reference_matches(t: PodAffinityTerm, owner: str, p: PodSpec, ns: Mapping[str, Mapping[str, str]]) -> bool:
    if t.label_selector is None:
        return False
    if t.namespaces or t.namespace_selector is not None:
        selected = t.namespace_selector is not None and t.namespace_selector.matches(ns.get(p.namespace, {}))
        inside = p.namespace in t.namespaces or selected
    else:
        inside = p.namespace == owner
    return inside and t.label_selector.matches(p.labels)


def _same_domain(key: str, a: NodeSpec, b: NodeSpec) -> bool:
    return key in a.labels and a.labels.get(key) == b.labels.get(key)


def _reference_filter(
    incoming: PodSpec, nodes: list[NodeSpec], placed: list[tuple[PodSpec, int]], ns: dict
) -> list[int]:
    """Upstream's Filter for one node, written from its doc comments without counts."""
    required, required_anti = incoming.pod_affinity.required, incoming.pod_anti_affinity.required
    matching = [
        (p, i)
        for p, i in placed
        if required and all(_reference_matches(t, incoming.namespace, p, ns) for t in required)
    ]
    anywhere = any(t.topology_key in nodes[i].labels for _, i in matching for t in required)
    itself = bool(required) and all(_reference_matches(t, incoming.namespace, incoming, ns) for t in required)
    out = []
    for n in nodes:
        if any(t.topology_key not in n.labels for t in required):
            out.append(AFF)
            continue
        near = all(any(_same_domain(t.topology_key, nodes[i], n) for _, i in matching) for t in required)
        if not near and (anywhere or not itself):
            out.append(AFF)
        elif any(
            _reference_matches(t, incoming.namespace, p, ns) and _same_domain(t.topology_key, nodes[i], n)
            for t in required_anti
            for p, i in placed
        ):
            out.append(ANTI)
        elif any(
            _reference_matches(t, p.namespace, incoming, ns) and _same_domain(t.topology_key, nodes[i], n)
            for p, i in placed
            for t in p.pod_anti_affinity.required
        ):
            out.append(EXISTING)
        else:
            out.append(OK)
    return out


def _reference_score(
    incoming: PodSpec, nodes: list[NodeSpec], placed: list[tuple[PodSpec, int]], ns: dict
) -> list[int]:
    """Upstream's raw Score for one node: every (term, pod) pair whose pod sits in the node's domain."""
    out = []
    for n in nodes:
        total = 0
        for p, i in placed:
            pairs = [(w.term, incoming.namespace, p, w.weight) for w in incoming.pod_affinity.preferred] + [
                (w.term, incoming.namespace, p, -w.weight) for w in incoming.pod_anti_affinity.preferred
            ]
            pairs += [(t, p.namespace, incoming, 1) for t in p.pod_affinity.required]
            pairs += [(w.term, p.namespace, incoming, w.weight) for w in p.pod_affinity.preferred]
            pairs += [(w.term, p.namespace, incoming, -w.weight) for w in p.pod_anti_affinity.preferred]
            for t, owner, target, weight in pairs:
                if _reference_matches(t, owner, target, ns) and _same_domain(t.topology_key, nodes[i], n):
                    total += weight
        out.append(total)
    return out


namespace_names = st.sampled_from(("default", "other"))
random_terms = st.builds(
    lambda key, app, listed, selected: term(
        key,
        In("app", app),
        namespaces=("other",) if listed else (),
        namespace_selector=TEAM1 if selected else None,
    ),
    st.sampled_from(KEYS),
    st.sampled_from(APPS),
    st.booleans(),
    st.booleans(),
)
few_terms = st.lists(random_terms, max_size=2).map(tuple)
few_preferred = st.lists(st.builds(pref, st.integers(1, 100), random_terms), max_size=2).map(tuple)
random_pods = st.builds(
    lambda app, namespace, affinity, anti, preferred, preferred_anti: pod(
        {"app": app} if app else {},
        namespace=namespace,
        affinity=affinity,
        anti=anti,
        preferred=preferred,
        preferred_anti=preferred_anti,
    ),
    st.sampled_from(("", *APPS)),
    namespace_names,
    few_terms,
    few_terms,
    few_preferred,
    few_preferred,
)
random_labels = st.fixed_dictionaries(
    {}, optional={"zone": st.sampled_from(("z1", "z2")), "rack": st.sampled_from(("r1", "r2"))}
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(random_labels, min_size=1, max_size=5),
    st.lists(st.tuples(random_pods, st.integers(0, 4)), max_size=6),
    random_pods,
    st.booleans(),
)
def test_the_plugin_agrees_with_the_one_node_reference(
    labels: list[dict[str, str]], placed: list[tuple[PodSpec, int]], incoming: PodSpec, team1: bool
) -> None:
    nodes = [node(f"n{i}", **ls) for i, ls in enumerate(labels)]
    placed = [(p, i % len(nodes)) for p, i in placed]
    ns = {"other": T1} if team1 else {}
    snap = snapshot(tuple(nodes), tuple((nodes[i].name, p) for p, i in placed), ns)
    plugin = InterPodAffinityPlugin()
    assert plugin.filter(incoming, snap, every(snap)).codes.tolist() == _reference_filter(incoming, nodes, placed, ns)
    assert plugin.score(incoming, snap, every(snap)).tolist() == _reference_score(incoming, nodes, placed, ns)
