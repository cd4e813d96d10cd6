"""VolumeZone: upstream's unit tests restated as data, then the plugin against the rule node by node.

Upstream cases, kubernetes/kubernetes `pkg/scheduler/framework/plugins/volumezone/volume_zone_test.go`
@ 52a622ad: `TestSingleZone`, `TestMultiZone` and `TestWithBinding`, each a pod with one claim
against one node, and the PreFilter or Filter status expected. Two words differ from upstream's,
whose fake listers are not the scheduler's: an unknown class reads `storageclass.storage.k8s.io
"Class_0" not found` (the real lister's resource, where the fake says `storageclasses`); and a
class whose mode upstream's fixture leaves unset ("VolumeBindingMode not set for StorageClass
\"Class_Immediate\"") is Immediate here, as the API server defaults it, so that claim's pod fails
with "PersistentVolume had no name".
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.volumezone import (
    BETA_REGION,
    BETA_ZONE,
    ERR_REASON_CONFLICT,
    GA_REGION,
    GA_ZONE,
    VolumeZone,
    label_zones,
    pod_topologies,
    zone_fits,
)
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.volumes import (
    IMMEDIATE,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeCatalog,
)

USELESS = {"uselessLabel": "none"}


def volumes(*specs: tuple[str, dict[str, str]]) -> tuple[list[PersistentVolume], list[PersistentVolumeClaim]]:
    """Upstream's pvLister and pvcLister: each volume `Vol_X` with its labels, and claim `PVC_X` bound to it."""
    pvs = [PersistentVolume(name, 0, labels=labels) for name, labels in specs]
    pvcs = [PersistentVolumeClaim("default", name.replace("Vol", "PVC"), volume_name=name) for name, _ in specs]
    return pvs, pvcs


SINGLE = volumes(
    ("Vol_1", {BETA_ZONE: "us-west1-a"}),
    ("Vol_2", {BETA_REGION: "us-west1", **USELESS}),
    ("Vol_3", {BETA_REGION: "us-west1"}),
    ("Vol_Stable_1", {GA_ZONE: "us-west1-a"}),
    ("Vol_Stable_2", {GA_REGION: "us-west1", **USELESS}),
    ("Vol_Stable_3", {GA_ZONE: "us-west1-a", GA_REGION: "us-west1-a"}),
)
MULTI = volumes(
    ("Vol_1", {BETA_ZONE: "us-west1-a"}),
    ("Vol_2", {BETA_ZONE: "us-west1-b", **USELESS}),
    ("Vol_3", {BETA_ZONE: "us-west1-c__us-west1-a"}),
    ("Vol_Stable_1", {GA_ZONE: "us-west1-a"}),
    ("Vol_Stable_2", {GA_ZONE: "us-west1-c__us-west1-a"}),
)
CLASS_0, CLASS_WAIT, CLASS_IMMEDIATE = "Class_0", "Class_Wait", "Class_Immediate"
BINDING = (
    [PersistentVolume("Vol_1", 0, labels={BETA_ZONE: "us-west1-a"})],
    [
        PersistentVolumeClaim("default", "PVC_1", volume_name="Vol_1"),
        PersistentVolumeClaim("default", "PVC_NoSC", CLASS_0),
        PersistentVolumeClaim("default", "PVC_EmptySC"),
        PersistentVolumeClaim("default", "PVC_WaitSC", CLASS_WAIT),
        PersistentVolumeClaim("default", "PVC_ImmediateSC", CLASS_IMMEDIATE),
    ],
)
BINDING_CLASSES = [
    StorageClass(CLASS_IMMEDIATE, "p", IMMEDIATE),
    StorageClass(CLASS_WAIT, "p", WAIT_FOR_FIRST_CONSUMER),
]
BINDING_NODE = {BETA_ZONE: "us-west1-a", **USELESS}

# (test, case, the volumes, the pod's claim (None: no volume), the node's labels, the failure expected)
CASES = [
    ("TestSingleZone", "pod without volume", SINGLE, None, {BETA_ZONE: "us-west1-a"}, ""),
    ("TestSingleZone", "node without labels", SINGLE, "PVC_1", {}, ""),
    ("TestSingleZone", "beta zone label matched", SINGLE, "PVC_1", {BETA_ZONE: "us-west1-a", **USELESS}, ""),
    ("TestSingleZone", "beta region label matched", SINGLE, "PVC_2", {BETA_REGION: "us-west1", **USELESS}, ""),
    (
        "TestSingleZone",
        "beta region label doesn't match",
        SINGLE,
        "PVC_2",
        {BETA_REGION: "no_us-west1", **USELESS},
        ERR_REASON_CONFLICT,
    ),
    (
        "TestSingleZone",
        "beta zone label doesn't match",
        SINGLE,
        "PVC_1",
        {BETA_ZONE: "no_us-west1-a", **USELESS},
        ERR_REASON_CONFLICT,
    ),
    ("TestSingleZone", "zone label matched", SINGLE, "PVC_Stable_1", {GA_ZONE: "us-west1-a", **USELESS}, ""),
    ("TestSingleZone", "region label matched", SINGLE, "PVC_Stable_2", {GA_REGION: "us-west1", **USELESS}, ""),
    (
        "TestSingleZone",
        "region label doesn't match",
        SINGLE,
        "PVC_Stable_2",
        {GA_REGION: "no_us-west1", **USELESS},
        ERR_REASON_CONFLICT,
    ),
    (
        "TestSingleZone",
        "zone label doesn't match",
        SINGLE,
        "PVC_Stable_1",
        {GA_ZONE: "no_us-west1-a", **USELESS},
        ERR_REASON_CONFLICT,
    ),
    (
        "TestSingleZone",
        "pv with zone and region, node with only zone",
        SINGLE,
        "PVC_Stable_3",
        {GA_ZONE: "us-west1-a"},
        ERR_REASON_CONFLICT,
    ),
    (
        "TestSingleZone",
        "pv with zone,node with beta zone",
        SINGLE,
        "PVC_Stable_1",
        {BETA_ZONE: "us-west1-a"},
        ERR_REASON_CONFLICT,
    ),
    ("TestSingleZone", "pv with beta label,node with ga label, matched", SINGLE, "PVC_1", {GA_ZONE: "us-west1-a"}, ""),
    (
        "TestSingleZone",
        "pv with beta label,node with ga label, don't match",
        SINGLE,
        "PVC_1",
        {GA_ZONE: "us-west1-b"},
        ERR_REASON_CONFLICT,
    ),
    ("TestMultiZone", "node without labels", MULTI, "PVC_3", {}, ""),
    ("TestMultiZone", "beta zone label matched", MULTI, "PVC_3", {BETA_ZONE: "us-west1-a", **USELESS}, ""),
    (
        "TestMultiZone",
        "beta zone label doesn't match",
        MULTI,
        "PVC_1",
        {BETA_ZONE: "us-west1-b", **USELESS},
        ERR_REASON_CONFLICT,
    ),
    ("TestMultiZone", "zone label matched", MULTI, "PVC_Stable_2", {GA_ZONE: "us-west1-a", **USELESS}, ""),
    (
        "TestMultiZone",
        "zone label doesn't match",
        MULTI,
        "PVC_Stable_1",
        {GA_ZONE: "us-west1-b", **USELESS},
        ERR_REASON_CONFLICT,
    ),
    ("TestWithBinding", "label zone failure domain matched", BINDING, "PVC_1", BINDING_NODE, ""),
    (
        "TestWithBinding",
        "unbound volume empty storage class",
        BINDING,
        "PVC_EmptySC",
        BINDING_NODE,
        "PersistentVolumeClaim had no pv name and storageClass name",
    ),
    (
        "TestWithBinding",
        "unbound volume no storage class",
        BINDING,
        "PVC_NoSC",
        BINDING_NODE,
        'storageclass.storage.k8s.io "Class_0" not found',
    ),
    (
        "TestWithBinding",
        "unbound volume immediate binding mode",
        BINDING,
        "PVC_ImmediateSC",
        BINDING_NODE,
        "PersistentVolume had no name",
    ),
    ("TestWithBinding", "unbound volume wait binding mode", BINDING, "PVC_WaitSC", BINDING_NODE, ""),
]


@pytest.mark.parametrize(
    ("test", "name", "world", "claim", "labels", "want"), CASES, ids=[f"{c[0]}/{c[1]}" for c in CASES]
)
def test_volume_zone_upstream_cases(
    test: str,
    name: str,
    world: tuple[list[PersistentVolume], list[PersistentVolumeClaim]],
    claim: str | None,
    labels: dict[str, str],
    want: str,
) -> None:
    snap = ClusterSnapshot([NodeSpec("host1", cpu=1000, memory=1000, labels=labels)])
    snap.volumes = VolumeCatalog(world[0], world[1], BINDING_CLASSES)
    pod = PodSpec("pod_1", claims=() if claim is None else (claim,))
    result = VolumeZone().filter(pod, snap, np.array([0], dtype=np.int64))
    code = int(result.codes[0])
    assert result.reasons[code] == want
    assert code == 0 or code in result.unresolvable  # every VolumeZone status is UnschedulableAndUnresolvable


def test_a_missing_claim_or_volume_fails_the_pod_with_the_listers_words() -> None:
    pvs, pvcs = SINGLE
    snap = ClusterSnapshot([NodeSpec("host1", cpu=1000, memory=1000)])
    snap.volumes = VolumeCatalog(pvs, [*pvcs, PersistentVolumeClaim("default", "PVC_4", volume_name="Vol_not_exist")])
    nodes = np.array([0], dtype=np.int64)
    for claim, reason in [
        ("PVC_4", 'persistentvolume "Vol_not_exist" not found'),
        ("PVC_9", 'persistentvolumeclaim "PVC_9" not found'),
    ]:
        result = VolumeZone().filter(PodSpec("p", claims=(claim,)), snap, nodes)
        assert result.reasons[int(result.codes[0])] == reason
    snap.volumes = None  # no catalog: the claim is not found
    result = VolumeZone().filter(PodSpec("p", claims=("PVC_1",)), snap, nodes)
    assert result.reasons[int(result.codes[0])] == 'persistentvolumeclaim "PVC_1" not found'


def test_label_zones_splits_on_double_underscores_and_refuses_an_empty_zone() -> None:
    assert label_zones("us-west1-c__us-west1-a") == {"us-west1-c", "us-west1-a"}
    assert label_zones(" a __ b ") == {"a", "b"}  # TrimSpace
    assert label_zones("a____b") is None  # an empty zone between the delimiters: upstream ignores the label
    pvs = [PersistentVolume("v", 0, labels={GA_ZONE: "a____b", GA_REGION: "r"})]
    catalog = VolumeCatalog(pvs, [PersistentVolumeClaim("default", "c", volume_name="v")])
    topologies = pod_topologies(PodSpec("p", claims=("c",)), catalog)
    assert not isinstance(topologies, str)
    assert [(t.key, t.values) for t in topologies] == [(GA_REGION, frozenset({"r"}))]


ZONE_VALUES = ("a", "b", "a__b")
node_labels = st.fixed_dictionaries(
    {},
    optional={key: st.sampled_from(("a", "b", "r")) for key in (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION, "other")},
)
volume_labels = st.fixed_dictionaries(
    {}, optional={key: st.sampled_from(ZONE_VALUES) for key in (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)}
)


@settings(max_examples=300, deadline=None)
@given(st.lists(node_labels, min_size=1, max_size=5), st.lists(volume_labels, min_size=1, max_size=3))
def test_the_plugin_applies_the_rule_node_by_node(nodes: list[dict[str, str]], labels: list[dict[str, str]]) -> None:
    snap = ClusterSnapshot([NodeSpec(f"n{i}", cpu=1, memory=1, labels=ls) for i, ls in enumerate(nodes)])
    pvs = [PersistentVolume(f"v{i}", 0, labels=ls) for i, ls in enumerate(labels)]
    pvcs = [PersistentVolumeClaim("default", f"c{i}", volume_name=f"v{i}") for i in range(len(labels))]
    snap.volumes = VolumeCatalog(pvs, pvcs)
    pod = PodSpec("p", claims=tuple(c.name for c in pvcs))
    codes = VolumeZone().filter(pod, snap, np.arange(len(nodes), dtype=np.int64)).codes
    for code, node in zip(codes.tolist(), snap.nodes, strict=True):
        # The rule stated afresh: a node with no zone or region label passes; otherwise each volume
        # label must be on the node (a beta one also as its GA key) with one of the volume's values.
        fits = not any(k in node.labels for k in (BETA_ZONE, BETA_REGION, GA_ZONE, GA_REGION)) or all(
            (node.labels.get(k) or node.labels.get({BETA_ZONE: GA_ZONE, BETA_REGION: GA_REGION}.get(k, k)))
            in v.split("__")
            for pv in pvs
            for k, v in pv.labels.items()
        )
        assert (code == 0) == fits
        topologies = pod_topologies(pod, snap.volumes)
        assert not isinstance(topologies, str)
        assert zone_fits(topologies, node.labels) == fits
