"""PersistentVolume, PersistentVolumeClaim and StorageClass manifests read into the scheduler's volume objects.

The manifests are written as `kubectl get -o yaml` shows them, status and server-set fields
included, so that a real object reads as it is; the expected objects are worked out by hand from
the API's fields (quantities: 10Gi = 10 x 2^30 bytes, 1G = 10^9).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from skenario.scenario.format.manifests.storage import (
    PersistentVolumeClaimManifest,
    PersistentVolumeManifest,
    StorageClassManifest,
)
from skenario.scheduling.affinity import Requirement, Term
from skenario.scheduling.volumes import (
    BINDING_MODES,
    IMMEDIATE,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)

GI = 2**30

LOCAL_PV = """
apiVersion: v1
kind: PersistentVolume
metadata:
  name: local-pv-a
  labels: {topology.kubernetes.io/zone: us-east-1a}
  annotations: {pv.kubernetes.io/bound-by-controller: "yes"}
  resourceVersion: "12345"
  uid: 6f1c
spec:
  capacity: {storage: 10Gi}
  volumeMode: Filesystem
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: local-storage
  local: {path: /mnt/disks/ssd1}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [node-a]}
      - matchExpressions:
        - {key: kubernetes.io/hostname, operator: In, values: [node-b]}
  claimRef: {apiVersion: v1, kind: PersistentVolumeClaim, name: data-web-0, namespace: shop, uid: 9e2d}
status: {phase: Bound}
"""

CSI_PV = """
apiVersion: v1
kind: PersistentVolume
metadata: {name: pvc-3f2a}
spec:
  capacity: {storage: 1G}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  storageClassName: gp3
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-0abc, fsType: ext4}
"""

CLAIM = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-web-0
  namespace: shop
  labels: {app: web}
  annotations: {pv.kubernetes.io/bind-completed: "yes"}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 5Gi}, limits: {storage: 8Gi}}
  storageClassName: local-storage
  volumeMode: Filesystem
  volumeName: local-pv-a
status: {phase: Bound, capacity: {storage: 10Gi}}
"""

CLASS = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: gp3
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: ebs.csi.aws.com
parameters: {type: gp3}
reclaimPolicy: Delete
allowVolumeExpansion: true
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions:
  - key: topology.kubernetes.io/zone
    values: [us-east-1a, us-east-1b]
"""


def read(text: str) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(text)
    return document


def hostname_in(host: str) -> Term:
    return Term((Requirement("kubernetes.io/hostname", "In", (host,)),))


def test_a_local_persistent_volume_reads_with_its_node_affinity_labels_and_claim() -> None:
    assert PersistentVolumeManifest.model_validate(read(LOCAL_PV)).build() == PersistentVolume(
        name="local-pv-a",
        capacity=10 * GI,
        storage_class="local-storage",
        access_modes=("ReadWriteOnce",),
        node_affinity=(hostname_in("node-a"), hostname_in("node-b")),
        labels={"topology.kubernetes.io/zone": "us-east-1a"},
        csi_driver=None,  # a local volume attaches through no CSI driver
        claim_ref="shop/data-web-0",
    )


def test_a_csi_persistent_volume_names_its_driver_and_is_available_without_claim_ref() -> None:
    assert PersistentVolumeManifest.model_validate(read(CSI_PV)).build() == PersistentVolume(
        name="pvc-3f2a",
        capacity=10**9,
        storage_class="gp3",
        access_modes=("ReadWriteOnce", "ReadOnlyMany"),
        csi_driver="ebs.csi.aws.com",
    )


@pytest.mark.parametrize(
    ("source", "driver"),
    [
        ({"awsElasticBlockStore": {"volumeID": "vol-1"}}, "ebs.csi.aws.com"),
        ({"gcePersistentDisk": {"pdName": "d"}}, "pd.csi.storage.gke.io"),
        ({"azureDisk": {"diskName": "d", "diskURI": "u"}}, "disk.csi.azure.com"),
        ({"cinder": {"volumeID": "v"}}, "cinder.csi.openstack.org"),
        ({"nfs": {"server": "s", "path": "/"}}, None),
        ({"hostPath": {"path": "/tmp"}}, None),
    ],
)
def test_an_in_tree_volume_counts_as_the_csi_driver_it_migrates_to(source: dict[str, Any], driver: str | None) -> None:
    manifest = read(CSI_PV)
    del manifest["spec"]["csi"]
    manifest["spec"].update(source)
    assert PersistentVolumeManifest.model_validate(manifest).build().csi_driver == driver


def test_the_beta_storage_class_annotation_wins_over_storage_class_name() -> None:
    # GetPersistentVolumeClass and GetPersistentVolumeClaimClass read the annotation first.
    pv = read(CSI_PV)
    pv["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "old"}
    assert PersistentVolumeManifest.model_validate(pv).build().storage_class == "old"
    claim = read(CLAIM)
    claim["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"] = "old"
    assert PersistentVolumeClaimManifest.model_validate(claim).build().storage_class == "old"


def test_a_bound_claim_reads_its_request_class_and_volume() -> None:
    assert PersistentVolumeClaimManifest.model_validate(read(CLAIM)).build() == PersistentVolumeClaim(
        namespace="shop",
        name="data-web-0",
        storage_class="local-storage",
        request=5 * GI,  # the request, not the limit nor the capacity it got
        access_modes=("ReadWriteOnce",),
        volume_name="local-pv-a",
    )


def test_an_unbound_claim_without_class_or_namespace() -> None:
    claim = read(CLAIM)
    del claim["spec"]["volumeName"], claim["spec"]["storageClassName"], claim["metadata"]["namespace"]
    built = PersistentVolumeClaimManifest.model_validate(claim).build()
    assert (built.namespace, built.storage_class, built.volume_name) == ("default", None, None)
    claim["spec"]["storageClassName"] = ""  # "" asks for no class, as unset does to the binder
    assert PersistentVolumeClaimManifest.model_validate(claim).build().class_name == ""


def test_a_storage_class_reads_its_provisioner_mode_and_allowed_topologies() -> None:
    assert StorageClassManifest.model_validate(read(CLASS)).build() == StorageClass(
        name="gp3",
        provisioner="ebs.csi.aws.com",
        volume_binding_mode=WAIT_FOR_FIRST_CONSUMER,
        allowed_topologies=(Term((Requirement("topology.kubernetes.io/zone", "In", ("us-east-1a", "us-east-1b")),)),),
    )


def test_a_storage_class_binds_immediately_by_default() -> None:
    sc = read(CLASS)
    del sc["volumeBindingMode"], sc["allowedTopologies"]
    built = StorageClassManifest.model_validate(sc).build()
    assert (built.volume_binding_mode, built.allowed_topologies) == (IMMEDIATE, ())


def test_the_format_knows_the_binding_modes_the_objects_know() -> None:
    sc = read(CLASS)
    for mode in BINDING_MODES:
        sc["volumeBindingMode"] = mode
        assert StorageClassManifest.model_validate(sc).build().volume_binding_mode == mode


@pytest.mark.parametrize(
    ("model", "text", "change", "where"),
    [
        (PersistentVolumeManifest, LOCAL_PV, lambda m: m.update(kind="Pod"), "kind"),
        (PersistentVolumeManifest, LOCAL_PV, lambda m: m["spec"].pop("capacity"), "capacity"),
        (PersistentVolumeManifest, LOCAL_PV, lambda m: m["spec"]["capacity"].update(storage="-1Gi"), "storage"),
        (
            PersistentVolumeManifest,
            LOCAL_PV,
            lambda m: m["spec"].update(accessModes=["ReadWriteSometimes"]),
            "accessModes",
        ),
        (PersistentVolumeManifest, LOCAL_PV, lambda m: m["spec"]["claimRef"].pop("namespace"), "namespace"),
        (PersistentVolumeManifest, CSI_PV, lambda m: m["metadata"].pop("name"), "name"),
        (PersistentVolumeClaimManifest, CLAIM, lambda m: m["spec"]["resources"].pop("requests"), "requests"),
        (StorageClassManifest, CLASS, lambda m: m.update(volumeBindingMode="Later"), "volumeBindingMode"),
        (StorageClassManifest, CLASS, lambda m: m.pop("provisioner"), "provisioner"),
        (
            StorageClassManifest,
            CLASS,
            lambda m: m["allowedTopologies"][0]["matchLabelExpressions"][0].update(values=[]),
            "values",
        ),
        (StorageClassManifest, CLASS, lambda m: m.update(apiVersion="storage.k8s.io/v1beta1"), "apiVersion"),
    ],
)
def test_a_manifest_the_api_server_would_refuse_is_refused_naming_the_field(
    model: type[PersistentVolumeManifest | PersistentVolumeClaimManifest | StorageClassManifest],
    text: str,
    change: Any,
    where: str,
) -> None:
    manifest = read(text)
    change(manifest)
    with pytest.raises(ValidationError, match=where):
        model.model_validate(manifest)
