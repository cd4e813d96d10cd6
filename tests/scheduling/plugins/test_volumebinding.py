"""VolumeBinding: upstream's unit tests restated as data, then the plugin against the binder node by node.

Upstream cases, kubernetes/kubernetes `pkg/scheduler/framework/plugins/volumebinding/volume_binding_test.go`
@ 645c553f, `TestVolumeBinding`: a pod's claims, the volumes and the nodes, and the PreFilter and
Filter statuses expected (its scores are left out with the score). The classes are that file's:
`wait-sc` and `wait-hdd-sc` wait for the first consumer and have no provisioner, `immediate-sc`
binds at once. Where upstream lists two reasons the first is reported here. Left out: "pv not found
claim lost" (claim phases are not modelled).

The random catalogs at the end compare the plugin, which works over all nodes at once, with
`VolumeCatalog.find_pod_volumes`, which follows binder.go node by node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.affinity import Requirement, Term
from skenario.scheduling.objects import HOSTNAME_LABEL, ZONE_LABEL, NodeSpec, PodSpec
from skenario.scheduling.plugins.volumebinding import ERR_REASON_UNBOUND_IMMEDIATE, VolumeBinding
from skenario.scheduling.snapshot import ClusterSnapshot
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
)

GI = 2**30
REGION = "topology.kubernetes.io/region"
CLASSES = (
    StorageClass("immediate-sc", "", IMMEDIATE),
    StorageClass("wait-sc", "", WAIT_FOR_FIRST_CONSUMER),
    StorageClass("wait-hdd-sc", "", WAIT_FOR_FIRST_CONSUMER),
)


def requires(**labels: str) -> tuple[Term, ...]:
    """`withNodeAffinity(map[key][]values)`: one term, one `In` requirement per key."""
    return (Term(tuple(Requirement(k.replace("_", "."), "In", (v,)) for k, v in labels.items())),)


def on_host(host: str) -> tuple[Term, ...]:
    return (Term((Requirement(HOSTNAME_LABEL, "In", (host,)),)),)


def zonal(region: str, zone: str) -> tuple[Term, ...]:
    return (Term((Requirement(REGION, "In", (region,)), Requirement(ZONE_LABEL, "In", (zone,)))),)


def claim(name: str, class_name: str, request: int = 0, volume: str | None = None) -> PersistentVolumeClaim:
    """makePVC: in the default namespace; `withBoundPV` names the volume."""
    return PersistentVolumeClaim("default", name, class_name, request, volume_name=volume)


def node(name: str, **labels: str) -> NodeSpec:
    return NodeSpec(name, cpu=1000, memory=1000, labels={k.replace("_", "."): v for k, v in labels.items()})


def zone_node(name: str, region: str, zone: str) -> NodeSpec:
    return NodeSpec(name, cpu=1000, memory=1000, labels={REGION: region, ZONE_LABEL: zone})


@dataclass(frozen=True)
class Case:
    name: str
    claims: tuple[str, ...]  # the pod's claims, by name
    nodes: tuple[NodeSpec, ...]
    pvcs: tuple[PersistentVolumeClaim, ...]
    pvs: tuple[PersistentVolume, ...]
    want: tuple[str, ...]  # per node: the reason it fails, "" when it passes


LOCAL_PVS = (
    PersistentVolume("pv-a-0", 200 * GI, "wait-sc", node_affinity=on_host("node-a")),
    PersistentVolume("pv-a-1", 200 * GI, "wait-sc", node_affinity=on_host("node-a")),
    PersistentVolume("pv-b-0", 100 * GI, "wait-sc", node_affinity=on_host("node-b")),
    PersistentVolume("pv-b-1", 100 * GI, "wait-sc", node_affinity=on_host("node-b")),
)
HDD_PVS = (
    PersistentVolume("pv-a-2", 200 * GI, "wait-hdd-sc", node_affinity=on_host("node-a")),
    PersistentVolume("pv-a-3", 200 * GI, "wait-hdd-sc", node_affinity=on_host("node-a")),
    PersistentVolume("pv-b-2", 100 * GI, "wait-hdd-sc", node_affinity=on_host("node-b")),
    PersistentVolume("pv-b-3", 100 * GI, "wait-hdd-sc", node_affinity=on_host("node-b")),
)
ZONAL_PVS = (
    PersistentVolume("pv-a-0", 200 * GI, "wait-sc", node_affinity=zonal("region-a", "zone-a")),
    PersistentVolume("pv-a-1", 200 * GI, "wait-sc", node_affinity=zonal("region-a", "zone-a")),
    PersistentVolume("pv-b-0", 100 * GI, "wait-sc", node_affinity=zonal("region-b", "zone-b")),
    PersistentVolume("pv-b-1", 100 * GI, "wait-sc", node_affinity=zonal("region-b", "zone-b")),
)
ZONE_NODES = tuple(
    zone_node(f"zone-{z}-node-{n}", f"region-{z}", f"zone-{z}") for z in ("a", "b", "c") for n in ("a", "b")
)
NOT_FOUND = 'persistentvolumeclaim "{}" not found'

CASES = [
    Case("pod has not pvcs", (), (node("node-a"),), (), (), ("",)),
    Case(
        "all bound",
        ("pvc-a",),
        (node("node-a"),),
        (claim("pvc-a", "wait-sc", volume="pv-a"),),
        (PersistentVolume("pv-a", 0, "wait-sc"),),
        ("",),
    ),
    Case(
        "all bound with local volumes",
        ("pvc-a", "pvc-b"),
        (node("node-a"),),
        (claim("pvc-a", "wait-sc", volume="pv-a"), claim("pvc-b", "wait-sc", volume="pv-b")),
        (
            PersistentVolume("pv-a", 0, "wait-sc", node_affinity=on_host("node-a")),
            PersistentVolume("pv-b", 0, "wait-sc", node_affinity=on_host("node-a")),
        ),
        ("",),
    ),
    Case("PVC does not exist", ("pvc-a",), (node("node-a"),), (), (), (NOT_FOUND.format("pvc-a"),)),
    Case(
        "Part of PVCs do not exist",
        ("pvc-a", "pvc-b"),
        (node("node-a"),),
        (claim("pvc-a", "wait-sc", volume="pv-a"),),
        (),
        (NOT_FOUND.format("pvc-b"),),
    ),
    Case(
        "immediate claims not bound",
        ("pvc-a",),
        (node("node-a"),),
        (claim("pvc-a", "immediate-sc"),),
        (),
        (ERR_REASON_UNBOUND_IMMEDIATE,),
    ),
    Case(
        "unbound claims no matches",
        ("pvc-a",),
        (node("node-a"),),
        (claim("pvc-a", "wait-sc"),),
        (),
        (ERR_REASON_BIND_CONFLICT,),
    ),
    Case(
        # Upstream: ErrReasonNodeConflict and ErrReasonBindConflict; the first is reported.
        "bound and unbound unsatisfied",
        ("pvc-a", "pvc-b"),
        (node("node-a", foo="barbar"),),
        (claim("pvc-a", "wait-sc", volume="pv-a"), claim("pvc-b", "wait-sc")),
        (PersistentVolume("pv-a", 0, "wait-sc", node_affinity=requires(foo="bar")),),
        (ERR_REASON_NODE_CONFLICT,),
    ),
    Case("pvc not found", ("pvc-a",), (node("node-a"),), (), (), (NOT_FOUND.format("pvc-a"),)),
    Case(
        "pv not found",
        ("pvc-a",),
        (node("node-a"),),
        (claim("pvc-a", "wait-sc", volume="pv-a"),),
        (),
        (ERR_REASON_PV_NOT_EXIST,),
    ),
    Case(
        "local volumes with close capacity are preferred",
        ("pvc-a",),
        (node("node-a"), node("node-b"), node("node-c")),
        (claim("pvc-a", "wait-sc", 50 * GI),),
        LOCAL_PVS,
        ("", "", ERR_REASON_BIND_CONFLICT),
    ),
    Case(
        "local volumes with close capacity are preferred (multiple pvcs)",
        ("pvc-0", "pvc-1"),
        (node("node-a"), node("node-b"), node("node-c")),
        (claim("pvc-0", "wait-sc", 50 * GI), claim("pvc-1", "wait-hdd-sc", 100 * GI)),
        LOCAL_PVS + HDD_PVS,
        ("", "", ERR_REASON_BIND_CONFLICT),
    ),
    Case(
        "zonal volumes with close capacity are preferred",
        ("pvc-a",),
        ZONE_NODES,
        (claim("pvc-a", "wait-sc", 50 * GI),),
        ZONAL_PVS,
        ("", "", "", "", ERR_REASON_BIND_CONFLICT, ERR_REASON_BIND_CONFLICT),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_volume_binding_upstream_cases(case: Case) -> None:
    snap = ClusterSnapshot(case.nodes)
    snap.volumes = VolumeCatalog(case.pvs, case.pvcs, CLASSES)
    pod = PodSpec("pod-a", claims=case.claims)
    result = VolumeBinding().filter(pod, snap, np.arange(len(case.nodes), dtype=np.int64))
    assert [result.reasons[c] for c in result.codes.tolist()] == list(case.want)
    # Every VolumeBinding status upstream is UnschedulableAndUnresolvable.
    assert all(c in result.unresolvable for c in result.codes.tolist() if c)


def test_a_pod_with_claims_and_no_catalog_finds_no_claim() -> None:
    snap = ClusterSnapshot([node("n")])  # a scenario without volumes: snap.volumes is None
    result = VolumeBinding().filter(PodSpec("p", claims=("data", "logs")), snap, np.array([0], dtype=np.int64))
    assert result.reasons[int(result.codes[0])] == NOT_FOUND.format("data")


def test_two_claims_of_one_class_do_not_take_the_same_volume() -> None:
    # findMatchingVolumes excludes the volumes chosen for earlier claims: node a has one volume, node b two.
    pvs = (
        PersistentVolume("a-0", 10 * GI, "wait-sc", node_affinity=on_host("a")),
        PersistentVolume("b-0", 10 * GI, "wait-sc", node_affinity=on_host("b")),
        PersistentVolume("b-1", 20 * GI, "wait-sc", node_affinity=on_host("b")),
    )
    pvcs = (claim("x", "wait-sc", 5 * GI), claim("y", "wait-sc", 5 * GI))
    snap = ClusterSnapshot([node("a"), node("b")])
    snap.volumes = VolumeCatalog(pvs, pvcs, CLASSES)
    result = VolumeBinding().filter(PodSpec("p", claims=("x", "y")), snap, np.arange(2, dtype=np.int64))
    assert [result.reasons[c] for c in result.codes.tolist()] == [ERR_REASON_BIND_CONFLICT, ""]


# -- the plugin against the binder, node by node ---------------------------------------------------

HOSTS = ("n0", "n1", "n2", "n3")
ZONES = ("z1", "z2")
SC_NAMES = ("wait-np", "wait-p", "wait-p-z1", "imm")
RANDOM_CLASSES = (
    StorageClass("wait-np", NOT_SUPPORTED_PROVISIONER, WAIT_FOR_FIRST_CONSUMER),
    StorageClass("wait-p", "csi.example.com", WAIT_FOR_FIRST_CONSUMER),
    StorageClass(
        "wait-p-z1", "csi.example.com", WAIT_FOR_FIRST_CONSUMER, (Term((Requirement(ZONE_LABEL, "In", ("z1",)),)),)
    ),
    StorageClass("imm", "csi.example.com", IMMEDIATE),
)
CLAIM_CLASSES = ("wait-np", "wait-p", "wait-p-z1", "wait-np", "wait-p-z1", "imm")  # immediate claims now and then
MODES = ("ReadWriteOnce", "ReadWriteMany")


@st.composite
def node_affinities(draw: st.DrawFn) -> tuple[Term, ...]:
    kind = draw(st.sampled_from(("none", "host", "zone", "two-hosts", "not-zone")))
    if kind == "host":
        return on_host(draw(st.sampled_from(HOSTS)))
    if kind == "two-hosts":
        return on_host(draw(st.sampled_from(HOSTS))) + on_host(draw(st.sampled_from(HOSTS)))
    if kind == "zone":
        return (Term((Requirement(ZONE_LABEL, "In", (draw(st.sampled_from(ZONES)),)),)),)
    if kind == "not-zone":
        return (Term((Requirement(ZONE_LABEL, "NotIn", ("z2",)),)),)
    return ()


@st.composite
def worlds(draw: st.DrawFn, *, crowded: bool = False) -> tuple[ClusterSnapshot, PodSpec]:
    """A few nodes, claims and volumes; `crowded`: unbound claims of one class only, competing for its volumes."""
    nodes = [
        NodeSpec(
            h,
            cpu=1000,
            memory=1000,
            labels=draw(st.fixed_dictionaries({}, optional={ZONE_LABEL: st.sampled_from(ZONES)})),
        )
        for h in HOSTS[: draw(st.integers(1, len(HOSTS)))]
    ]
    claim_names = [f"c{i}" for i in range(draw(st.integers(1, 4)))]
    pvcs = [
        PersistentVolumeClaim(
            "default",
            name,
            "wait-np" if crowded else draw(st.sampled_from(CLAIM_CLASSES)),
            draw(st.integers(1, 4)) * GI,
            tuple(draw(st.lists(st.sampled_from(MODES), max_size=1, unique=True))),
        )
        for name in claim_names
    ]
    pvs = []
    for i in range(draw(st.integers(4 if crowded else 0, 8))):
        refs = [*(f"default/{n}" for n in claim_names), "other/x"]
        ref = None if crowded and i % 4 else draw(st.one_of(st.none(), st.sampled_from(refs)))
        pvs.append(
            PersistentVolume(
                f"pv{i}",
                draw(st.integers(1, 4)) * GI,
                "wait-np" if crowded else draw(st.sampled_from(SC_NAMES[:3])),
                tuple(draw(st.lists(st.sampled_from(MODES), max_size=2, unique=True))),
                draw(node_affinities()),
                claim_ref=ref,
            )
        )
    # Some claims come bound: to an existing volume of theirs, or to one that does not exist.
    bound = []
    for c in pvcs:
        choice = "unbound" if crowded else draw(st.sampled_from(("unbound", "unbound", "bound", "missing")))
        if choice == "bound":
            free = [pv for pv in pvs if pv.claim_ref is None]
            if free:
                pv = draw(st.sampled_from(free))
                pvs[pvs.index(pv)] = PersistentVolume(
                    pv.name, pv.capacity, pv.storage_class, pv.access_modes, pv.node_affinity, claim_ref=c.key
                )
                c = PersistentVolumeClaim(c.namespace, c.name, c.storage_class, c.request, c.access_modes, pv.name)
        elif choice == "missing":
            c = PersistentVolumeClaim(c.namespace, c.name, c.storage_class, c.request, c.access_modes, "gone")
        bound.append(c)
    snap = ClusterSnapshot(nodes)
    snap.volumes = VolumeCatalog(pvs, bound, RANDOM_CLASSES)
    wanted = draw(st.lists(st.sampled_from(claim_names), min_size=1, max_size=3, unique=True))
    if not crowded and draw(st.integers(0, 9)) == 7:  # now and then (hypothesis favours the bounds)
        wanted.insert(draw(st.integers(0, len(wanted))), "missing-claim")
    return snap, PodSpec("p", claims=tuple(wanted))


@settings(max_examples=400, deadline=None)
@given(st.one_of(worlds(), worlds(crowded=True)))
def test_the_plugin_agrees_with_the_binder_node_by_node(world: tuple[ClusterSnapshot, PodSpec]) -> None:
    snap, pod = world
    catalog: VolumeCatalog = snap.volumes
    nodes = np.arange(len(snap.nodes), dtype=np.int64)
    result = VolumeBinding().filter(pod, snap, nodes)
    got = [result.reasons[c] for c in result.codes.tolist()]
    missing = catalog.missing_claim(pod)
    if missing is not None:
        assert got == [NOT_FOUND.format(missing)] * len(nodes)
    elif catalog.pod_claims(pod).immediate:
        assert got == [ERR_REASON_UNBOUND_IMMEDIATE] * len(nodes)
    else:
        want = [next(iter(catalog.find_pod_volumes(pod, n).reasons), "") for n in snap.nodes]
        assert got == want


@settings(max_examples=200, deadline=None)
@given(st.one_of(worlds(), worlds(crowded=True)))
def test_after_assume_on_a_node_that_passes_the_pods_claims_are_bound_and_it_still_passes(
    world: tuple[ClusterSnapshot, PodSpec],
) -> None:
    snap, pod = world
    catalog: VolumeCatalog = snap.volumes
    plugin = VolumeBinding()
    nodes = np.arange(len(snap.nodes), dtype=np.int64)
    passing = np.flatnonzero(plugin.filter(pod, snap, nodes).codes == 0).tolist()
    if not passing:
        return
    chosen = snap.nodes[passing[0]]
    catalog.assume(pod, chosen)
    claims = catalog.pod_claims(pod)
    assert not claims.delayed and not claims.immediate
    assert plugin.filter(pod, snap, np.array([passing[0]], dtype=np.int64)).codes.tolist() == [0]
    # Each claim of the pod holds a volume that names it back, and no two claims hold the same one.
    held = [c.volume_name for c in claims.bound]
    assert len(held) == len(set(held))
    for c in claims.bound:
        volume = catalog.volume(c.volume_name or "")
        assert volume is not None and volume.claim_ref == c.key
