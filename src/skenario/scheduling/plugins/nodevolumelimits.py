"""NodeVolumeLimits: a node may attach only so many volumes of each CSI driver.

Mirrors `pkg/scheduler/framework/plugins/nodevolumelimits/csi.go` (`CSILimits`: `PreFilter`,
`Filter`, `filterAttachableVolumes`, `getCSIDriverInfo`, `getCSIDriverInfoFromSC`). A worked
picture: a node whose CSINode allows 2 volumes of `ebs.csi.aws.com` runs a pod with one EBS
claim; the incoming pod has two EBS claims, one of them the claim already there. The node counts
1 attached; the incoming pod brings 1 new (the shared one is counted once); 1 + 1 <= 2, it fits.

A claim's volume is its bound PV's CSI driver and name; a PV without a CSI driver (nor an in-tree
one migrated to CSI) is not counted. An unbound claim, or one whose PV is missing, counts under
its class's provisioner (an in-tree one's CSI driver), as a volume of its own; with no class, or
an unknown one, it is not counted. The limits are `NodeSpec.volume_limits` (CSINode's
`allocatable.count` per driver, or the node's `attachable-volumes-csi-*`); a node without any
passes, and so does a driver the node sets no limit for. Exceeding a limit is `Unschedulable`
(evicting a pod frees its volumes): "node(s) exceed max volume count".

A pod without claims passes every node at once (upstream's PreFilter: Skip); so does a pod whose
claims count for no driver. A claim of the pod that does not exist fails every node, unresolvable,
with the words kube-scheduler reports for it: upstream, VolumeBinding's PreFilter (which runs
before any filter) refuses the pod as `persistentvolumeclaim "<name>" not found` before this
filter would say `looking up PVC <namespace>/<name>: ...`; skenario has no PreFilter stage and
runs this filter first, so it says what the cycle says. Not modelled: inline (non-claim) volumes
migrated to CSI, generic ephemeral volumes, and the VolumeAttachments upstream's newest also counts.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.interface import FilterResult, Ints
from skenario.scheduling.plugins.volumebinding import claim_not_found, everywhere
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.volumes import PersistentVolumeClaim, VolumeCatalog, csi_driver_of

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

Volume = tuple[str, str]  # (CSI driver, volume handle): upstream's volumeUniqueName


def csi_volume(claim: PersistentVolumeClaim, catalog: VolumeCatalog) -> Volume | None:
    """The CSI volume a claim attaches, or None when it counts for no driver (`getCSIDriverInfo`).

    A bound claim: its PV's driver and name. An unbound one, or one whose PV is missing: its class's
    provisioner and a handle of its own, the claim (`getCSIDriverInfoFromSC`, whose random prefix
    keeps such handles apart from real ones).
    """
    if claim.volume_name:
        pv = catalog.volume(claim.volume_name)
        if pv is not None:
            return (pv.csi_driver, pv.name) if pv.csi_driver else None
    if not claim.class_name:
        return None
    sc = catalog.storage_class(claim.class_name)
    if sc is None or not sc.provisioner:
        return None
    return (csi_driver_of(sc.provisioner), f"claim:{claim.key}")


def pod_volumes(pod: PodSpec, catalog: VolumeCatalog) -> dict[Volume, str]:
    """The CSI volumes of a pod already on a node, each with its driver; a missing claim is skipped."""
    volumes: dict[Volume, str] = {}
    for name in pod.claims:
        claim = catalog.claim(pod.namespace, name)
        volume = None if claim is None else csi_volume(claim, catalog)
        if volume is not None:
            volumes[volume] = volume[0]
    return volumes


def exceeds(new: dict[Volume, str], attached: dict[Volume, str], limits: dict[str, int]) -> bool:
    """Whether the new volumes (less those already attached) push some driver past its limit (`Filter`)."""
    attached_count = Counter(attached.values())
    new_count = Counter(driver for volume, driver in new.items() if volume not in attached)
    return any(
        driver in limits and attached_count[driver] + count > limits[driver] for driver, count in new_count.items()
    )


class NodeVolumeLimits:
    """Filter: the node's CSI volume limits hold with the pod's volumes added. Mirrors `CSILimits`."""

    name = "NodeVolumeLimits"

    def pre_filter_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        return not pod.claims

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        codes = np.zeros(len(nodes), dtype=np.int64)
        if not pod.claims:  # PreFilter: Skip
            return FilterResult(codes)
        catalog: VolumeCatalog | None = snap.volumes
        new: dict[Volume, str] = {}
        for name in pod.claims:
            claim = None if catalog is None else catalog.claim(pod.namespace, name)
            if catalog is None or claim is None:
                return everywhere(len(nodes), claim_not_found(name))
            volume = csi_volume(claim, catalog)
            if volume is not None:
                new[volume] = volume[0]
        drivers = set(new.values())
        if not new:
            return FilterResult(codes)
        assert catalog is not None
        for k, i in enumerate(nodes.tolist()):
            limits = dict(snap.nodes[i].volume_limits)
            if not drivers & limits.keys():
                continue  # no limit on the pod's drivers: nothing to count
            attached: dict[Volume, str] = {}
            for other in snap.pods_on[i].values():
                if other.claims:
                    attached.update(pod_volumes(other, catalog))
            if exceeds(new, attached, limits):
                codes[k] = 1
        return FilterResult(codes, ("", ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED))
