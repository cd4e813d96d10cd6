"""The volume binder: upstream's unit tests restated as data, then the catalog's own promises.

Upstream cases, kubernetes/kubernetes:
- `staging/src/k8s.io/component-helpers/storage/volume/pv_helpers_test.go` @ fa7ba8e2,
  `TestFindMatchVolumeWithNode` (`FindMatchingVolume` on the scheduler's path) and
  `TestDelayBindingMode` (`IsDelayBindingMode`);
- `pkg/scheduler/framework/plugins/volumebinding/binder_test.go` @ f6ddee95,
  `TestFindPodVolumesWithoutProvisioning`, `TestFindPodVolumesWithProvisioning` (the "no CSIDriver"
  run) and `TestAssumePodVolumes`, over that file's fixtures (`BINDER_*` below).
Cases left out: those on volume attributes classes, PV phases other than Available, pre-bound
claims (a claim naming a volume is bound here), generic ephemeral volumes, the selected-node
annotation, CSI migration of in-tree PVs and storage capacity, none of which skenario models.
"""

from __future__ import annotations

import pytest

from skenario.scheduling.affinity import Requirement, Term
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.volumes import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_PV_NOT_EXIST,
    IMMEDIATE,
    NOT_SUPPORTED_PROVISIONER,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeCatalog,
    check_node_affinity,
    find_matching_volume,
    match_topology,
    provisioned_csi_driver,
    provisioned_topology,
)

G = 10**9  # resource.MustParse("1G")
GI = 2**30  # "1Gi"
RWO, ROX, RWX = "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"


def affinity(key: str, *values: str) -> tuple[Term, ...]:
    """One required term with one `In` requirement (upstream's `makeNodeAffinity`, `withNodeAffinity`)."""
    return (Term((Requirement(key, "In", values),)),)


# -- TestFindMatchVolumeWithNode -------------------------------------------------------------------
# makeTestVolume(uid, name, ...): the volumes are named by their UIDs here, which upstream's expected
# matches name (two of its volumes share the name "affinity003"); its excludedVolumes, keyed by
# name, exclude "affinity001" and "affinity002", the volumes "affinity-pv" and "affinity-pv2".
MATCH_VOLUMES = (
    PersistentVolume("local-small", 5 * G, "", (RWO, ROX)),
    PersistentVolume("local-pd-very-large", 200 * 10**18, "large", (RWO, ROX)),
    PersistentVolume("affinity-pv", 100 * G, "wait", (RWO, ROX), affinity("key1", "value1")),
    PersistentVolume("affinity-pv2", 150 * G, "wait", (RWO, ROX), affinity("key1", "value1")),
    PersistentVolume(
        "affinity-prebound", 100 * G, "wait", (RWO, ROX), affinity("key1", "value1"), claim_ref="myns/claim02"
    ),
    PersistentVolume("affinity-pv3", 200 * G, "wait", (RWO, ROX), affinity("key1", "value3")),
)
NODE1, NODE2, NODE3 = {"key1": "value1"}, {"key1": "value2"}, {"key1": "value3"}

MATCH_CASES = [
    ("success-match", "claim01", (RWO,), NODE1, (), "affinity-pv"),
    ("success-prebound", "claim02", (RWO,), NODE1, (), "affinity-prebound"),
    ("success-exclusion", "claim01", (RWO,), NODE1, ("affinity-pv",), "affinity-pv2"),
    ("fail-exclusion", "claim01", (RWO,), NODE1, ("affinity-pv", "affinity-pv2"), None),
    ("fail-accessmode", "claim01", (RWX,), NODE1, (), None),
    ("fail-nodeaffinity", "claim01", (RWO,), NODE2, (), None),
    ("fail-prebound-node-affinity", "claim02", (RWO,), NODE3, (), None),
    ("success-bad-and-good-node-affinity", "claim03", (RWO,), NODE3, (), "affinity-pv3"),
]


@pytest.mark.parametrize(
    ("name", "claim", "modes", "labels", "excluded", "want"), MATCH_CASES, ids=[c[0] for c in MATCH_CASES]
)
def test_find_matching_volume_upstream_cases(
    name: str, claim: str, modes: tuple[str, ...], labels: dict[str, str], excluded: tuple[str, ...], want: str | None
) -> None:
    pvc = PersistentVolumeClaim("myns", claim, "wait", 100 * G, modes)  # makeTestPersistentVolumeClaim: class "wait"
    wait_volumes = [pv for pv in MATCH_VOLUMES if pv.storage_class == "wait"]  # the PV cache lists one class
    got = find_matching_volume(pvc, wait_volumes, labels, excluded)
    assert (got.name if got else None) == want


# -- TestDelayBindingMode --------------------------------------------------------------------------
# The "no-mode-class" case (a class with no mode) cannot arise: the API server defaults the mode.
@pytest.mark.parametrize(
    ("name", "class_name", "delay"),
    [
        ("nil-class", None, False),
        ("class-not-found", "not-here", False),
        ("immediate-mode-class", "immediate-mode", False),
        ("wait-mode-class", "wait-mode", True),
    ],
)
def test_delay_binding_mode_upstream_cases(name: str, class_name: str | None, delay: bool) -> None:
    catalog = VolumeCatalog(
        classes=[
            StorageClass("immediate-mode", "p", IMMEDIATE),
            StorageClass("wait-mode", "p", WAIT_FOR_FIRST_CONSUMER),
        ]
    )
    assert catalog.is_delay_binding(PersistentVolumeClaim("ns", "c", class_name)) == delay


# -- binder_test.go fixtures -----------------------------------------------------------------------
NS = "testns"
NODE_KEY = "nodeKey"
PROVISIONER = "test-provisioner"
BINDER_CLASSES = (
    StorageClass(
        "waitClassWithProvisioner", PROVISIONER, WAIT_FOR_FIRST_CONSUMER, affinity(NODE_KEY, "node1", "reference-value")
    ),
    StorageClass("immediateClass", "", IMMEDIATE),
    StorageClass("waitClass", NOT_SUPPORTED_PROVISIONER, WAIT_FOR_FIRST_CONSUMER),
    StorageClass("topoMismatchClass", PROVISIONER, WAIT_FOR_FIRST_CONSUMER, affinity(NODE_KEY, "reference-value")),
)


def pvc(name: str, size: int, class_name: str, volume: str | None = None) -> PersistentVolumeClaim:
    """makeTestPVC: in namespace testns, bound when it names a volume."""
    return PersistentVolumeClaim(NS, name, class_name, size, volume_name=volume)


def pv(
    name: str, node: str, size: int, class_name: str, claim: PersistentVolumeClaim | None = None
) -> PersistentVolume:
    """makeTestPV: node affinity `nodeKey In [node]`, claimRef to `claim` if given."""
    return PersistentVolume(
        name, size, class_name, node_affinity=affinity(NODE_KEY, node), claim_ref=claim and claim.key
    )


UNBOUND = pvc("unbound-pvc", 1 * G, "waitClass")
UNBOUND2 = pvc("unbound-pvc2", 5 * G, "waitClass")
BOUND = pvc("bound-pvc", 1 * G, "waitClass", "pv-bound")
IMMEDIATE_UNBOUND = pvc("immediate-unbound-pvc", 1 * G, "immediateClass")
IMMEDIATE_BOUND = pvc("immediate-bound-pvc", 1 * G, "immediateClass", "pv-bound-immediate")
PROVISIONED = pvc("provisioned-pvc", 1 * GI, "waitClassWithProvisioner")
NO_PROVISIONER = pvc("no-provisioner-pvc", 1 * GI, "waitClass")
TOPO_MISMATCH = pvc("topo-mismatch-pvc", 1 * GI, "topoMismatchClass")

PV_NODE1A = pv("pv-node1a", "node1", 5 * G, "waitClass")
PV_NODE1B = pv("pv-node1b", "node1", 10 * G, "waitClass")
PV_NODE2 = pv("pv-node2", "node2", 1 * G, "waitClass")
PV_BOUND = pv("pv-bound", "node1", 1 * G, "waitClass", BOUND)
PV_NODE1A_BOUND = pv("pv-node1a", "node1", 5 * G, "waitClass", UNBOUND)
PV_BOUND_IMMEDIATE = pv("pv-bound-immediate", "node1", 1 * G, "immediateClass", IMMEDIATE_BOUND)
PV_BOUND_IMMEDIATE_NODE2 = pv("pv-bound-immediate", "node2", 1 * G, "immediateClass", IMMEDIATE_BOUND)

TEST_NODE = NodeSpec("node1", cpu=1000, memory=1000, labels={NODE_KEY: "node1"})


def binder_catalog(claims: tuple[PersistentVolumeClaim, ...], volumes: tuple[PersistentVolume, ...]) -> VolumeCatalog:
    return VolumeCatalog(volumes, claims, BINDER_CLASSES)


def pod_of(claims: tuple[PersistentVolumeClaim, ...]) -> PodSpec:
    return PodSpec("test-pod", namespace=NS, claims=tuple(c.name for c in claims))


# (case, the pod's claims, the volumes, bindings as (claim, volume) names, claims provisioned, reasons)
FIND_CASES = [
    # TestFindPodVolumesWithoutProvisioning
    ("no-volumes", (), (), (), (), ()),
    ("bound-pvc", (BOUND,), (PV_BOUND,), (), (), ()),
    ("bound-pvc,pv-not-exists", (BOUND,), (), (), (), (ERR_REASON_PV_NOT_EXIST,)),
    ("unbound-pvc,pv-same-node", (UNBOUND,), (PV_NODE2, PV_NODE1A, PV_NODE1B), (("unbound-pvc", "pv-node1a"),), (), ()),
    ("unbound-pvc,pv-different-node", (UNBOUND,), (PV_NODE2,), (), (), (ERR_REASON_BIND_CONFLICT,)),
    (
        "two-unbound-pvcs",
        (UNBOUND, UNBOUND2),
        (PV_NODE1A, PV_NODE1B),
        (("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")),
        (),
        (),
    ),
    (
        "two-unbound-pvcs,order-by-size",
        (UNBOUND2, UNBOUND),
        (PV_NODE1A, PV_NODE1B),
        (("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")),
        (),
        (),
    ),
    (
        "two-unbound-pvcs,partial-match",
        (UNBOUND, UNBOUND2),
        (PV_NODE1A,),
        (("unbound-pvc", "pv-node1a"),),
        (),
        (ERR_REASON_BIND_CONFLICT,),
    ),
    ("one-bound,one-unbound", (UNBOUND, BOUND), (PV_BOUND, PV_NODE1A), (("unbound-pvc", "pv-node1a"),), (), ()),
    ("one-bound,one-unbound,no-match", (UNBOUND, BOUND), (PV_BOUND, PV_NODE2), (), (), (ERR_REASON_BIND_CONFLICT,)),
    ("immediate-bound-pvc", (IMMEDIATE_BOUND,), (PV_BOUND_IMMEDIATE,), (), (), ()),
    (
        "immediate-bound-pvc-wrong-node",
        (IMMEDIATE_BOUND,),
        (PV_BOUND_IMMEDIATE_NODE2,),
        (),
        (),
        (ERR_REASON_NODE_CONFLICT,),
    ),
    # TestFindPodVolumesWithProvisioning
    ("one-provisioned", (PROVISIONED,), (), (), ("provisioned-pvc",), ()),
    (
        "two-unbound-pvcs,one-matched,one-provisioned",
        (UNBOUND, PROVISIONED),
        (PV_NODE1A,),
        (("unbound-pvc", "pv-node1a"),),
        ("provisioned-pvc",),
        (),
    ),
    ("one-bound,one-provisioned", (BOUND, PROVISIONED), (PV_BOUND,), (), ("provisioned-pvc",), ()),
    (
        "one-immediate-bound,one-provisioned",
        (IMMEDIATE_BOUND, PROVISIONED),
        (PV_BOUND_IMMEDIATE,),
        (),
        ("provisioned-pvc",),
        (),
    ),
    ("invalid-provisioner", (NO_PROVISIONER,), (), (), (), (ERR_REASON_BIND_CONFLICT,)),
    ("volume-topology-unsatisfied", (TOPO_MISMATCH,), (), (), (), (ERR_REASON_BIND_CONFLICT,)),
]


@pytest.mark.parametrize(
    ("name", "claims", "volumes", "bindings", "provisions", "reasons"), FIND_CASES, ids=[c[0] for c in FIND_CASES]
)
def test_find_pod_volumes_upstream_cases(
    name: str,
    claims: tuple[PersistentVolumeClaim, ...],
    volumes: tuple[PersistentVolume, ...],
    bindings: tuple[tuple[str, str], ...],
    provisions: tuple[str, ...],
    reasons: tuple[str, ...],
) -> None:
    found = binder_catalog(claims, volumes).find_pod_volumes(pod_of(claims), TEST_NODE)
    assert tuple((c.name, v.name) for c, v in found.bindings) == bindings
    assert tuple(c.name for c in found.provisions) == provisions
    assert found.reasons == reasons


# The cases upstream expects to fail before FindPodVolumes (`shouldFail`): unbound immediate claims
# and a missing claim. The pod-level classification says why.
@pytest.mark.parametrize(
    ("name", "claims", "volumes"),
    [
        ("immediate-unbound-pvc", (IMMEDIATE_UNBOUND,), ()),
        ("immediate-unbound-pvc,delayed-mode-bound", (IMMEDIATE_UNBOUND, BOUND), (PV_BOUND,)),
        ("immediate-unbound-pvc,delayed-mode-unbound", (IMMEDIATE_UNBOUND, UNBOUND), ()),
    ],
)
def test_unbound_immediate_claims_upstream_cases(
    name: str, claims: tuple[PersistentVolumeClaim, ...], volumes: tuple[PersistentVolume, ...]
) -> None:
    catalog = binder_catalog(claims, volumes)
    assert catalog.pod_claims(pod_of(claims)).immediate == (IMMEDIATE_UNBOUND,)


def test_pvc_not_found_upstream_case() -> None:
    # "pvc-not-found": the pod names bound-pvc, the cache holds no claim.
    assert binder_catalog((), ()).missing_claim(pod_of((BOUND,))) == "bound-pvc"


# -- TestAssumePodVolumes --------------------------------------------------------------------------
# Upstream hands AssumePodVolumes the bindings FindPodVolumes made; `assume` finds them itself, so
# each case gives the catalog from which FindPodVolumes makes those bindings. After it, every claim
# is bound: to the volume of its binding, or to a volume provisioned for it.
ASSUME_CASES = [
    ("all-bound", (BOUND,), (PV_BOUND,), {"bound-pvc": "pv-bound"}),
    ("one-binding", (UNBOUND,), (PV_NODE1A,), {"unbound-pvc": "pv-node1a"}),
    (
        "two-bindings",
        (UNBOUND, UNBOUND2),
        (PV_NODE1A, PV_NODE1B),
        {"unbound-pvc": "pv-node1a", "unbound-pvc2": "pv-node1b"},
    ),
    ("pv-already-bound", (UNBOUND,), (PV_NODE1A_BOUND,), {"unbound-pvc": "pv-node1a"}),
    (
        "one-binding, one-pvc-provisioned",
        (UNBOUND, PROVISIONED),
        (PV_NODE1A,),
        {"unbound-pvc": "pv-node1a", "provisioned-pvc": None},
    ),
]


@pytest.mark.parametrize(("name", "claims", "volumes", "want"), ASSUME_CASES, ids=[c[0] for c in ASSUME_CASES])
def test_assume_pod_volumes_upstream_cases(
    name: str,
    claims: tuple[PersistentVolumeClaim, ...],
    volumes: tuple[PersistentVolume, ...],
    want: dict[str, str | None],
) -> None:
    catalog = binder_catalog(claims, volumes)
    catalog.assume(pod_of(claims), TEST_NODE)
    for claim_name, volume_name in want.items():
        claim = catalog.claim(NS, claim_name)
        assert claim is not None and claim.volume_name is not None
        if volume_name is not None:
            assert claim.volume_name == volume_name
        bound_to = catalog.volume(claim.volume_name)
        assert bound_to is not None and bound_to.claim_ref == f"{NS}/{claim_name}"  # validateAssume: the PV's ClaimRef


def test_a_provisioned_volume_is_the_claims_size_and_class_on_the_nodes_topology() -> None:
    catalog = binder_catalog((PROVISIONED,), ())
    version = catalog.version
    catalog.assume(pod_of((PROVISIONED,)), TEST_NODE)
    claim = catalog.claim(NS, "provisioned-pvc")
    assert claim is not None and claim.volume_name == "pvc-testns-provisioned-pvc"
    made = catalog.volume(claim.volume_name)
    # The class allows `nodeKey In [node1, reference-value]`: the volume keeps node1's value of that key.
    assert made == PersistentVolume(
        "pvc-testns-provisioned-pvc",
        1 * GI,
        "waitClassWithProvisioner",
        node_affinity=affinity(NODE_KEY, "node1"),
        csi_driver=PROVISIONER,
        claim_ref="testns/provisioned-pvc",
    )
    assert catalog.version != version
    assert catalog.volumes_of("waitClassWithProvisioner") == [made]
    # Bound now, the pod's claim ties it to node1 and passes there.
    assert catalog.find_pod_volumes(pod_of((PROVISIONED,)), TEST_NODE).reasons == ()


def test_assume_leaves_a_claim_it_can_neither_match_nor_provision_and_changes_nothing_else() -> None:
    catalog = binder_catalog((NO_PROVISIONER, BOUND), (PV_BOUND,))
    version = catalog.version
    catalog.assume(pod_of((NO_PROVISIONER, BOUND)), TEST_NODE)
    assert catalog.claim(NS, "no-provisioner-pvc") == NO_PROVISIONER
    assert catalog.version == version


def test_a_provisioned_volume_takes_a_free_name() -> None:
    taken = PersistentVolume("pvc-testns-provisioned-pvc", 1, "other")
    catalog = binder_catalog((PROVISIONED,), (taken,))
    catalog.assume(pod_of((PROVISIONED,)), TEST_NODE)
    claim = catalog.claim(NS, "provisioned-pvc")
    assert claim is not None and claim.volume_name == "pvc-testns-provisioned-pvc-2"


# -- the catalog's own rules -----------------------------------------------------------------------


def test_the_worked_picture_of_the_module() -> None:
    local = StorageClass("local", NOT_SUPPORTED_PROVISIONER, WAIT_FOR_FIRST_CONSUMER)
    host = "kubernetes.io/hostname"
    volumes = [
        PersistentVolume("a-20", 20 * GI, "local", node_affinity=affinity(host, "a")),
        PersistentVolume("a-50", 50 * GI, "local", node_affinity=affinity(host, "a")),
        PersistentVolume("b-100", 100 * GI, "local", node_affinity=affinity(host, "b")),
    ]
    claims = [PersistentVolumeClaim("default", f"data-web-{i}", "local", 10 * GI) for i in range(2)]
    catalog = VolumeCatalog(volumes, claims, [local])
    a, b, c = (NodeSpec(n, cpu=1, memory=1) for n in "abc")
    web0, web1 = (PodSpec(f"web-{i}", claims=(f"data-web-{i}",)) for i in range(2))
    assert [catalog.find_pod_volumes(web0, n).reasons for n in (a, b, c)] == [(), (), (ERR_REASON_BIND_CONFLICT,)]
    catalog.assume(web0, a)
    assert catalog.claim("default", "data-web-0") == PersistentVolumeClaim(
        "default", "data-web-0", "local", 10 * GI, volume_name="a-20"
    )
    assert catalog.volume("a-20") == PersistentVolume(
        "a-20", 20 * GI, "local", node_affinity=affinity(host, "a"), claim_ref="default/data-web-0"
    )
    assert [[v.name for _, v in catalog.find_pod_volumes(web1, n).bindings] for n in (a, b)] == [["a-50"], ["b-100"]]
    assert [catalog.find_pod_volumes(web0, n).reasons for n in (a, b)] == [(), (ERR_REASON_NODE_CONFLICT,)]


def test_a_claim_naming_its_volume_makes_the_volume_name_it_back() -> None:
    catalog = VolumeCatalog(
        [PersistentVolume("pv-a", 1)], [PersistentVolumeClaim("ns", "c", "x", 1, volume_name="pv-a")]
    )
    volume = catalog.volume("pv-a")
    assert volume is not None and volume.claim_ref == "ns/c"


@pytest.mark.parametrize(
    ("volumes", "claims", "classes", "message"),
    [
        ([PersistentVolume("a", 1), PersistentVolume("a", 2)], [], [], "PersistentVolume 'a' is defined twice"),
        (
            [],
            [PersistentVolumeClaim("n", "c"), PersistentVolumeClaim("n", "c", "x")],
            [],
            "PersistentVolumeClaim 'n/c'",
        ),
        ([], [], [StorageClass("s", "p"), StorageClass("s", "q")], "StorageClass 's' is defined twice"),
    ],
)
def test_a_name_defined_twice_is_refused(
    volumes: list[PersistentVolume], claims: list[PersistentVolumeClaim], classes: list[StorageClass], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        VolumeCatalog(volumes, claims, classes)


def test_an_unknown_binding_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown volumeBindingMode 'Later'"):
        StorageClass("s", "p", "Later")


def test_node_affinity_matches_labels_only_as_check_node_affinity_does() -> None:
    by_name = PersistentVolume(
        "v", 1, node_affinity=(Term(match_fields=(Requirement("metadata.name", "In", ("n1",)),)),)
    )
    # volume.CheckNodeAffinity builds a node of labels alone: its name is "", so a matchFields term never matches.
    assert not check_node_affinity(by_name, {"kubernetes.io/hostname": "n1"})
    assert check_node_affinity(PersistentVolume("w", 1), {})  # no node affinity: any node
    assert not check_node_affinity(PersistentVolume("e", 1, node_affinity=(Term(),)), {"a": "b"})  # an empty term: none


def test_topology_terms_follow_match_topology_selector_terms() -> None:
    assert match_topology((), {})  # no term: every node
    assert not match_topology((Term(),), {"a": "b"})  # an empty term selects nothing
    two = affinity("zone", "z1") + affinity("zone", "z2")
    assert match_topology(two, {"zone": "z2"}) and not match_topology(two, {"zone": "z3"})


def test_provisioned_volumes_take_the_zone_without_allowed_topologies_and_their_csi_driver() -> None:
    sc = StorageClass("s", "ebs.csi.aws.com", WAIT_FOR_FIRST_CONSUMER)
    assert provisioned_topology(sc, {"topology.kubernetes.io/zone": "z1", "x": "y"}) == affinity(
        "topology.kubernetes.io/zone", "z1"
    )
    assert provisioned_topology(sc, {"x": "y"}) == ()  # no zone: usable anywhere
    assert provisioned_csi_driver("ebs.csi.aws.com") == "ebs.csi.aws.com"
    assert provisioned_csi_driver("kubernetes.io/gce-pd") == "pd.csi.storage.gke.io"  # migrated to CSI
    assert provisioned_csi_driver("kubernetes.io/host-path") is None  # in-tree, not CSI
