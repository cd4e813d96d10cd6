"""`v1` PersistentVolume and PersistentVolumeClaim, `storage.k8s.io/v1` StorageClass: what the volume plugins read.

Each `build()` gives the plain object of `skenario.scheduling.volumes`. Read are what the
VolumeBinding, VolumeZone and NodeVolumeLimits plugins read: sizes (`capacity.storage`,
`resources.requests.storage`), classes, access modes, a PV's node affinity, labels, CSI driver
and `claimRef`, a claim's `volumeName`, a class's provisioner, binding mode and allowed
topologies. Every other field (reclaim policy, mount options, parameters, status) is allowed and
ignored, so a real manifest reads as it is.

As upstream's `GetPersistentVolumeClass` and `GetPersistentVolumeClaimClass`, the beta annotation
`volume.beta.kubernetes.io/storage-class` wins over `storageClassName`. A PV of an in-tree volume
type that CSI migration hands to a driver (AWS EBS, GCE PD, Azure Disk, Cinder) counts as a volume
of that driver, as the scheduler translates it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from skenario.scenario.format.cluster import NodeSelectorSpec
from skenario.scenario.format.manifests.pod import ObjectMeta, _Open
from skenario.scenario.format.units import ByteQuantity
from skenario.scheduling.affinity import Requirement, Term
from skenario.scheduling.volumes import (
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"  # v1.BetaStorageClassAnnotation
AccessMode = Literal["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"]
BindingMode = Literal["Immediate", "WaitForFirstConsumer"]

# In-tree volume sources and the CSI driver csi-translation-lib migrates each to.
IN_TREE_SOURCES = {
    "aws_elastic_block_store": "ebs.csi.aws.com",
    "gce_persistent_disk": "pd.csi.storage.gke.io",
    "azure_disk": "disk.csi.azure.com",
    "cinder": "cinder.csi.openstack.org",
}


class StorageMeta(ObjectMeta):
    """The object's metadata (its namespace read for claims only), which must name it: no `generateName` here."""

    name: str = Field(min_length=1)


class ClaimReference(_Open):
    """A PV's `claimRef` (`v1.ObjectReference`): the claim it is bound or pre-bound to."""

    name: str = Field(min_length=1)
    namespace: str = Field(min_length=1)


class VolumeNodeAffinitySpec(_Open):
    required: NodeSelectorSpec | None = None


class CSISource(_Open):
    driver: str = Field(min_length=1)


class StorageQuantity(_Open):
    storage: ByteQuantity = Field(ge=0)


class PersistentVolumeSpecManifest(_Open):
    capacity: StorageQuantity
    storage_class_name: str = ""
    access_modes: list[AccessMode] = Field(default_factory=list)
    node_affinity: VolumeNodeAffinitySpec | None = None
    claim_ref: ClaimReference | None = None
    csi: CSISource | None = None
    aws_elastic_block_store: dict[str, Any] | None = None
    gce_persistent_disk: dict[str, Any] | None = None
    azure_disk: dict[str, Any] | None = None
    cinder: dict[str, Any] | None = None

    def csi_driver(self) -> str | None:
        """The CSI driver that attaches the volume: its own, or the one its in-tree type migrates to."""
        if self.csi is not None:
            return self.csi.driver
        return next((driver for source, driver in IN_TREE_SOURCES.items() if getattr(self, source) is not None), None)


class PersistentVolumeManifest(_Open):
    """A whole `kind: PersistentVolume` of `apiVersion: v1`."""

    api_version: Literal["v1"]
    kind: Literal["PersistentVolume"]
    metadata: StorageMeta
    spec: PersistentVolumeSpecManifest

    def build(self) -> PersistentVolume:
        spec, meta = self.spec, self.metadata
        required = spec.node_affinity.required if spec.node_affinity is not None else None
        return PersistentVolume(
            name=meta.name,
            capacity=spec.capacity.storage,
            storage_class=meta.annotations.get(BETA_STORAGE_CLASS_ANNOTATION, spec.storage_class_name),
            access_modes=tuple(spec.access_modes),
            node_affinity=() if required is None else tuple(t.build() for t in required.node_selector_terms),
            labels=dict(meta.labels),
            csi_driver=spec.csi_driver(),
            claim_ref=None if spec.claim_ref is None else f"{spec.claim_ref.namespace}/{spec.claim_ref.name}",
        )


class ClaimResources(_Open):
    requests: StorageQuantity


class PersistentVolumeClaimSpecManifest(_Open):
    access_modes: list[AccessMode] = Field(default_factory=list)
    storage_class_name: str | None = None
    resources: ClaimResources
    volume_name: str = ""


class PersistentVolumeClaimManifest(_Open):
    """A whole `kind: PersistentVolumeClaim` of `apiVersion: v1`; bound when it names its `volumeName`."""

    api_version: Literal["v1"]
    kind: Literal["PersistentVolumeClaim"]
    metadata: StorageMeta
    spec: PersistentVolumeClaimSpecManifest

    def build(self) -> PersistentVolumeClaim:
        spec, meta = self.spec, self.metadata
        return PersistentVolumeClaim(
            namespace=meta.namespace,
            name=meta.name,
            storage_class=meta.annotations.get(BETA_STORAGE_CLASS_ANNOTATION, spec.storage_class_name),
            request=spec.resources.requests.storage,
            access_modes=tuple(spec.access_modes),
            volume_name=spec.volume_name or None,
        )


class TopologyRequirement(_Open):
    """A `v1.TopologySelectorLabelRequirement`: the label `key` has one of `values`."""

    key: str = Field(min_length=1)
    values: list[str] = Field(min_length=1)


class TopologyTerm(_Open):
    match_label_expressions: list[TopologyRequirement] = Field(default_factory=list)

    def build(self) -> Term:
        return Term(tuple(Requirement(r.key, "In", tuple(r.values)) for r in self.match_label_expressions))


class StorageClassManifest(_Open):
    """A whole `kind: StorageClass` of `apiVersion: storage.k8s.io/v1` (its fields are top-level, not under spec)."""

    api_version: Literal["storage.k8s.io/v1"]
    kind: Literal["StorageClass"]
    metadata: StorageMeta
    provisioner: str = Field(min_length=1)
    volume_binding_mode: BindingMode = "Immediate"
    allowed_topologies: list[TopologyTerm] = Field(default_factory=list)

    def build(self) -> StorageClass:
        return StorageClass(
            name=self.metadata.name,
            provisioner=self.provisioner,
            volume_binding_mode=self.volume_binding_mode,
            allowed_topologies=tuple(t.build() for t in self.allowed_topologies),
        )
