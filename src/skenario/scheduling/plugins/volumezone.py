"""VolumeZone: a pod's bound volumes labelled with a zone or region keep it to nodes labelled alike.

Mirrors `pkg/scheduler/framework/plugins/volumezone/volume_zone.go` (`PreFilter`, `getPVbyPod`,
`Filter`, `translateToGALabel`) and `volumehelpers.LabelZonesToSet`. The labels read are the
legacy topology labels a volume carries, beta and GA, zone and region
(`failure-domain.beta.kubernetes.io/zone`, `.../region`, `topology.kubernetes.io/zone`,
`.../region`); a value may list several zones joined by `__`. Node affinity is VolumeBinding's
business, not this plugin's.

For the whole pod first (upstream's PreFilter; every node fails alike, UnschedulableAndUnresolvable):
a missing claim, an unbound claim with no class, of an unknown class, or of an Immediate class, a
bound claim whose volume is missing, each with upstream's words. An unbound WaitForFirstConsumer
claim is skipped: its volume is yet to be chosen. Then per node: a node with none of the four
labels passes (a single-zone cluster); otherwise each label of each volume must be on the node
(a beta label on the volume may be met by the GA label on the node) with one of the volume's
values: "node(s) had no available volume zone".

A pod without claims, or whose volumes carry none of the labels, passes every node at once; the
verdicts per node are kept per distinct set of volume labels until the nodes change.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.interface import FilterResult, Ints, PerNodeCache
from skenario.scheduling.plugins.volumebinding import claim_not_found, everywhere
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.volumes import WAIT_FOR_FIRST_CONSUMER, VolumeCatalog

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)  # upstream's topologyLabels, in its order
GA_LABEL = {BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION}  # translateToGALabel
MULTI_ZONE_DELIMITER = "__"  # volumehelpers' LabelMultiZoneDelimiter


@dataclass(frozen=True)
class PVTopology:
    """One topology label of a bound volume (`pvTopology`): its key and the zones or regions it allows."""

    pv_name: str
    key: str
    values: frozenset[str]


def label_zones(value: str) -> frozenset[str] | None:
    """The zones a label value lists (`LabelZonesToSet`), None when one is empty (upstream ignores the label)."""
    zones = [zone.strip() for zone in value.split(MULTI_ZONE_DELIMITER)]
    return None if any(not zone for zone in zones) else frozenset(zones)


def pod_topologies(pod: PodSpec, catalog: VolumeCatalog | None) -> tuple[PVTopology, ...] | str:
    """The topology labels of the pod's bound volumes, or the reason the pod fails everywhere (`getPVbyPod`)."""
    found: list[PVTopology] = []
    for name in pod.claims:
        claim = None if catalog is None else catalog.claim(pod.namespace, name)
        if catalog is None or claim is None:
            return claim_not_found(name)
        if not claim.volume_name:
            if not claim.class_name:
                return "PersistentVolumeClaim had no pv name and storageClass name"
            sc = catalog.storage_class(claim.class_name)
            if sc is None:
                return f'storageclass.storage.k8s.io "{claim.class_name}" not found'
            if sc.volume_binding_mode == WAIT_FOR_FIRST_CONSUMER:
                continue
            return "PersistentVolume had no name"
        pv = catalog.volume(claim.volume_name)
        if pv is None:
            return f'persistentvolume "{claim.volume_name}" not found'
        for key in TOPOLOGY_LABELS:
            value = pv.labels.get(key)
            zones = None if value is None else label_zones(value)
            if zones is not None:
                found.append(PVTopology(pv.name, key, zones))
    return tuple(found)


def zone_fits(topologies: Sequence[PVTopology], labels: Mapping[str, str]) -> bool:
    """Whether a node with these labels meets every volume topology label (`Filter`)."""
    if not any(key in labels for key in TOPOLOGY_LABELS):
        return True  # a node without zone labels: a single-zone cluster
    for topology in topologies:
        value = labels.get(topology.key)
        if value is None:
            value = labels.get(GA_LABEL.get(topology.key, topology.key))
        if value is None or value not in topology.values:
            return False
    return True


class VolumeZone:
    """Filter: the node's zone and region labels meet those of the pod's bound volumes. Mirrors `VolumeZone`."""

    name = "VolumeZone"

    def __init__(self) -> None:
        self._fits = PerNodeCache()

    def pre_filter_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        return not pod.claims

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        if not pod.claims:
            return FilterResult(np.zeros(len(nodes), dtype=np.int64))
        topologies = pod_topologies(pod, snap.volumes)
        if isinstance(topologies, str):
            return everywhere(len(nodes), topologies)
        if not topologies:  # PreFilter: Skip
            return FilterResult(np.zeros(len(nodes), dtype=np.int64))
        key: Hashable = tuple((t.key, t.values) for t in topologies)
        fits = self._fits.get(key, snap, lambda i: zone_fits(topologies, snap.nodes[i].labels))
        return FilterResult(1 - fits[nodes], ("", ERR_REASON_CONFLICT), frozenset({1}))
