"""NodeVolumeLimits: upstream's unit tests restated as data, then the plugin against a count stated afresh.

Upstream cases, kubernetes/kubernetes `pkg/scheduler/framework/plugins/nodevolumelimits/csi_test.go`
@ 991b78f9, `TestCSILimits`, over its fixtures (`getFakeCSIPVLister`, `getFakeCSIPVCLister`,
`getFakeCSIStorageClassLister`, `getNodeWithPodAndVolumeLimits`): for each driver, volumes and
claims `csi-<driver>-0..3` bound to each other; claim `csi-4` unbound of class `csi-sc`, `csi-5`
with no class, `csi-6` of class `csi-sc` bound to a missing volume; `csi-sc` provisioned by the
case's first driver; the node allows `maxVols` volumes of each driver (`limitSource` "csinode"),
or sets no limit ("csinode-with-no-limit"). In-tree AWS EBS volumes are migrated to
`ebs.csi.aws.com` (upstream's `migrationEnabled`): here a PV read from a manifest already names the
driver it migrates to; host-path volumes attach no CSI driver. Left out: the cases on
VolumeAttachments, inline volumes and generic ephemeral volumes, which skenario does not model.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NodeVolumeLimits
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.volumes import PersistentVolume, PersistentVolumeClaim, StorageClass, VolumeCatalog

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
IN_TREE_EBS = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"


def fixtures(drivers: tuple[str, ...]) -> VolumeCatalog:
    """The listers of a case whose driver names are `drivers`."""
    pvs, pvcs = [], []
    for driver in drivers:
        attaches = {IN_TREE_EBS: EBS, HOSTPATH: None}.get(driver, driver)  # migrated, not CSI, or CSI
        for j in range(4):
            name = f"csi-{driver}-{j}"
            pvs.append(PersistentVolume(name, 0, csi_driver=attaches))
            pvcs.append(PersistentVolumeClaim("default", name, volume_name=name))
    pvcs += [
        PersistentVolumeClaim("default", "csi-4", "csi-sc"),
        PersistentVolumeClaim("default", "csi-5"),
        PersistentVolumeClaim("default", "csi-6", "csi-sc", volume_name="missing-in-action"),
    ]
    return VolumeCatalog(pvs, pvcs, [StorageClass("csi-sc", drivers[0])])


def pod(name: str, *claims: str) -> PodSpec:
    return PodSpec(name, claims=claims)


RUNNING = ("running", f"csi-{EBS}-3")
PENDING = ("pending", "csi-4")
UNBOUND_PVC_POD2 = ("pending-2", "csi-4")
MISSING_PV = ("missing-pv", "csi-6")
NO_SC = ("no-sc", "csi-5")
GCE_TWO = ("gce-two", f"csi-{GCE}-1", f"csi-{GCE}-2")
IN_TREE_ONE = ("in-tree-one", f"csi-{IN_TREE_EBS}-0")
IN_TREE_TWO = ("in-tree-two", f"csi-{IN_TREE_EBS}-1", f"csi-{IN_TREE_EBS}-2")
EBS_ONE = ("ebs-one", f"csi-{EBS}-0")
EBS_TWO = ("ebs-two", f"csi-{EBS}-1", f"csi-{EBS}-2")
HOSTPATH_ONE = ("hostpath-one", f"csi-{HOSTPATH}-0")
NO_VOLUMES = ("configmaps-and-secrets",)


@dataclass(frozen=True)
class Case:
    test: str
    new: tuple[str, ...]  # the incoming pod: its name, then its claims
    existing: tuple[tuple[str, ...], ...]
    max_vols: int | None  # None: the node sets no limit
    drivers: tuple[str, ...]
    exceeds: bool


CASES = [
    Case("fits when node volume limit >= new pods CSI volume", EBS_ONE, (RUNNING, EBS_TWO), 4, (EBS,), False),
    Case("doesn't when node volume limit <= pods CSI volume", EBS_ONE, (RUNNING, EBS_TWO), 2, (EBS,), True),
    Case("should when driver does not support volume limits", EBS_ONE, (RUNNING, EBS_TWO), None, (EBS,), False),
    Case("count pending PVCs towards volume limit <= pods CSI volume", EBS_ONE, (PENDING, EBS_TWO), 2, (EBS,), True),
    Case(
        "count multiple pending pvcs towards volume limit >= pods CSI volume",
        EBS_ONE,
        (PENDING, UNBOUND_PVC_POD2, EBS_TWO),
        4,
        (EBS,),
        False,
    ),
    Case("should count PVCs with invalid PV name but valid SC", EBS_ONE, (MISSING_PV, EBS_TWO), 2, (EBS,), True),
    Case("don't count pvcs with missing SC towards volume limit", EBS_ONE, (RUNNING, NO_SC), 2, (EBS,), False),
    Case("count pvcs with the same type towards volume limit", EBS_ONE, (GCE_TWO, EBS_TWO), 2, (EBS, GCE), True),
    Case(
        "don't count pvcs with different type towards volume limit", GCE_TWO, (EBS_TWO, RUNNING), 2, (EBS, GCE), False
    ),
    Case(
        "should count in-tree volumes if migration is enabled", IN_TREE_ONE, (IN_TREE_TWO,), 2, (IN_TREE_EBS, EBS), True
    ),
    Case(
        "should count unbound in-tree volumes if migration is enabled",
        PENDING,
        (IN_TREE_TWO,),
        2,
        (IN_TREE_EBS, EBS),
        True,
    ),
    Case(
        "should not limit pod if volume used does not report limits",
        IN_TREE_ONE,
        (IN_TREE_TWO,),
        None,
        (IN_TREE_EBS, EBS),
        False,
    ),
    Case("should not count non-migratable in-tree volumes", HOSTPATH_ONE, (EBS_TWO,), 2, (HOSTPATH, EBS), False),
    Case(
        "should count in-tree and csi volumes if migration is enabled (when scheduling in-tree volumes)",
        IN_TREE_ONE,
        (EBS_TWO,),
        2,
        (IN_TREE_EBS, EBS),
        True,
    ),
    Case(
        "should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
        EBS_ONE,
        (IN_TREE_TWO,),
        2,
        (IN_TREE_EBS, EBS),
        True,
    ),
    Case("skip Filter when the pod only uses secrets and configmaps", NO_VOLUMES, (), 2, (EBS,), False),
    Case(
        "don't skip Filter when the pod has pvcs",
        ("pvc-with-configmap-and-secret", f"csi-{EBS}-0"),
        (),
        2,
        (EBS,),
        False,
    ),
]


def limits(max_vols: int | None, drivers: tuple[str, ...]) -> dict[str, int]:
    """The node's CSINode: every driver of the case (the in-tree one under its CSI name) allows max_vols."""
    if max_vols is None:
        return {}
    return {{IN_TREE_EBS: EBS}.get(d, d): max_vols for d in drivers}


@pytest.mark.parametrize("case", CASES, ids=[c.test for c in CASES])
def test_csi_limits_upstream_cases(case: Case) -> None:
    snap = ClusterSnapshot(
        [NodeSpec("node-for-max-pd-test-1", 1000, 1000, volume_limits=limits(case.max_vols, case.drivers))]
    )
    snap.volumes = fixtures(case.drivers)
    for existing in case.existing:
        snap.assume(pod(*existing), 0)
    result = NodeVolumeLimits().filter(pod(*case.new), snap, np.array([0], dtype=np.int64))
    code = int(result.codes[0])
    assert (code != 0) == case.exceeds
    if case.exceeds:
        assert result.reasons[code] == ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
        assert code not in result.unresolvable  # Unschedulable: evicting a pod frees its volumes


def test_a_missing_claim_fails_every_node_as_the_cycle_reports_it() -> None:
    snap = ClusterSnapshot([NodeSpec("a", 1, 1), NodeSpec("b", 1, 1)])
    nodes = np.arange(2, dtype=np.int64)
    result = NodeVolumeLimits().filter(pod("p", "data"), snap, nodes)  # no catalog: no claim exists
    assert [result.reasons[c] for c in result.codes.tolist()] == ['persistentvolumeclaim "data" not found'] * 2
    assert set(result.codes.tolist()) <= result.unresolvable
    snap.volumes = fixtures((EBS,))
    result = NodeVolumeLimits().filter(pod("p", f"csi-{EBS}-0", "absent"), snap, nodes)
    assert [result.reasons[c] for c in result.codes.tolist()] == ['persistentvolumeclaim "absent" not found'] * 2


# -- random nodes against the count stated afresh ----------------------------------------------

DRIVERS = ("d1", "d2")


@st.composite
def worlds(draw: st.DrawFn) -> tuple[ClusterSnapshot, PodSpec, list[list[PodSpec]]]:
    pvs = [PersistentVolume(f"v{i}", 0, csi_driver=draw(st.sampled_from((*DRIVERS, None)))) for i in range(6)]
    pvcs = [PersistentVolumeClaim("default", f"c{i}", volume_name=f"v{i}") for i in range(6)]
    pvcs += [PersistentVolumeClaim("default", "u1", "sc1"), PersistentVolumeClaim("default", "u2", "sc2")]
    catalog = VolumeCatalog(pvs, pvcs, [StorageClass("sc1", "d1"), StorageClass("sc2", "d2")])
    names = [c.name for c in pvcs]
    nodes, on = [], []
    for i in range(draw(st.integers(1, 4))):
        limit = draw(st.fixed_dictionaries({}, optional={d: st.integers(0, 4) for d in DRIVERS}))
        nodes.append(NodeSpec(f"n{i}", 1, 1, volume_limits=limit))
        on.append(
            [
                pod(f"p{i}-{k}", *draw(st.lists(st.sampled_from(names), max_size=3)))
                for k in range(draw(st.integers(0, 3)))
            ]
        )
    snap = ClusterSnapshot(nodes)
    snap.volumes = catalog
    for i, pods in enumerate(on):
        for p in pods:
            snap.assume(p, i)
    return snap, pod("incoming", *draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))), on


@settings(max_examples=300, deadline=None)
@given(worlds())
def test_the_plugin_counts_distinct_volumes_per_driver_node_by_node(
    world: tuple[ClusterSnapshot, PodSpec, list[list[PodSpec]]],
) -> None:
    snap, incoming, on = world
    codes = NodeVolumeLimits().filter(incoming, snap, np.arange(len(snap.nodes), dtype=np.int64)).codes
    # A claim's volume, stated afresh: a bound claim is its volume (if the volume has a driver); the
    # unbound u1 and u2 are volumes of their own, of d1 and d2.
    driver_of = {f"c{i}": snap.volumes.volume(f"v{i}").csi_driver for i in range(6)} | {"u1": "d1", "u2": "d2"}
    for code, node, pods in zip(codes.tolist(), snap.nodes, on, strict=True):
        there = {c for p in pods for c in p.claims if driver_of[c]}
        mine = {c for c in incoming.claims if driver_of[c]}
        count = Counter(driver_of[c] for c in there | mine)
        over = any(
            count[d] > node.volume_limits[d] for d in {driver_of[c] for c in mine - there} if d in node.volume_limits
        )
        assert (code != 0) == over
