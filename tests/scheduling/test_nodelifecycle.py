"""Taints by condition, restated from upstream's TestTaintNodeByCondition and doNoScheduleTaintingPass.

test/integration/scheduler/taint/taint_test.go `TestTaintNodeByCondition`: a node with these
conditions gets these NoSchedule taints, and the scheduler's TaintToleration filter lets these pods
onto it. Upstream's test runs the PodTolerationRestriction admission plugin, which gives every pod
but BestEffort ones a toleration for the memory-pressure taint; that plugin is off by default, so
here a Burstable or Guaranteed pod fits a MemoryPressure node only with that toleration written.
"""

from __future__ import annotations

import pytest

from skenario.scheduling.nodelifecycle import condition_taints, no_schedule_tainting_pass
from skenario.scheduling.objects import NodeSpec
from skenario.scheduling.plugins.tainttoleration import taints_filter
from skenario.scheduling.taints import MEMORY_PRESSURE_TAINT, Taint, TaintEffect, Toleration

NS = TaintEffect.NO_SCHEDULE


def _exists(key: str) -> Toleration:
    return Toleration(key=key, operator="Exists", effect="NoSchedule")


NOT_READY = _exists("node.kubernetes.io/not-ready")
MEMORY_PRESSURE = _exists("node.kubernetes.io/memory-pressure")
DISK_PRESSURE = _exists("node.kubernetes.io/disk-pressure")
NETWORK_UNAVAILABLE = _exists("node.kubernetes.io/network-unavailable")
PID_PRESSURE = _exists("node.kubernetes.io/pid-pressure")

# (name, conditions, expected taint keys, [(tolerations, fits)])
CASES = [
    (
        "not-ready node",
        {"Ready": "False"},
        ["node.kubernetes.io/not-ready"],
        [((), False), ((NOT_READY,), True)],
    ),
    (
        "memory pressure node",
        {"MemoryPressure": "True", "Ready": "True"},
        ["node.kubernetes.io/memory-pressure"],
        [((), False), ((MEMORY_PRESSURE,), True), ((DISK_PRESSURE,), False)],
    ),
    (
        "disk pressure node",
        {"DiskPressure": "True", "Ready": "True"},
        ["node.kubernetes.io/disk-pressure"],
        [((), False), ((DISK_PRESSURE,), True), ((MEMORY_PRESSURE,), False)],
    ),
    (
        "network unavailable and node is ready",
        {"NetworkUnavailable": "True", "Ready": "True"},
        ["node.kubernetes.io/network-unavailable"],
        [((), False), ((NETWORK_UNAVAILABLE,), True)],
    ),
    (
        "network unavailable and node is not ready",
        {"NetworkUnavailable": "True", "Ready": "False"},
        ["node.kubernetes.io/network-unavailable", "node.kubernetes.io/not-ready"],
        [((), False), ((NETWORK_UNAVAILABLE,), False), ((NETWORK_UNAVAILABLE, NOT_READY), True)],
    ),
    (
        "pid pressure node",
        {"PIDPressure": "True", "Ready": "True"},
        ["node.kubernetes.io/pid-pressure"],
        [((), False), ((PID_PRESSURE,), True)],
    ),
    (
        "multi taints on node",
        {"PIDPressure": "True", "MemoryPressure": "True", "DiskPressure": "True", "Ready": "True"},
        ["node.kubernetes.io/pid-pressure", "node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure"],
        [],
    ),
    ("healthy node", {"MemoryPressure": "False", "Ready": "True"}, [], [((), True)]),
    ("unreachable node", {"Ready": "Unknown"}, ["node.kubernetes.io/unreachable"], [((), False)]),
]


@pytest.mark.parametrize(("name", "conditions", "keys", "pods"), CASES, ids=[c[0] for c in CASES])
def test_conditions_become_no_schedule_taints_that_keep_off_pods_without_their_toleration(
    name: str, conditions: dict[str, str], keys: list[str], pods: list[tuple[tuple[Toleration, ...], bool]]
) -> None:
    taints = condition_taints(conditions)
    assert sorted(t.key for t in taints) == sorted(keys)
    assert all(t.effect is NS for t in taints)
    node = no_schedule_tainting_pass(NodeSpec("node-1", cpu=4000, memory=16 * 2**30), conditions)
    assert node is None if not keys else sorted(t.key for t in node.taints) == sorted(keys)
    for tolerations, fits in pods:
        assert (taints_filter(taints, tolerations) is None) is fits, (name, tolerations)


def test_the_pass_swaps_only_the_condition_taints_and_leaves_the_users() -> None:
    user = Taint("example.com/dedicated", NS, "batch")
    stale = Taint("node.kubernetes.io/disk-pressure", NS)
    node = NodeSpec("node-1", cpu=4000, memory=2**30, taints=(user, stale))
    tainted = no_schedule_tainting_pass(node, {"MemoryPressure": "True", "DiskPressure": "False"})
    assert tainted is not None and tainted.taints == (user, MEMORY_PRESSURE_TAINT)
    assert no_schedule_tainting_pass(tainted, {"MemoryPressure": "True"}) is None  # nothing to change
    cleared = no_schedule_tainting_pass(tainted, {"MemoryPressure": "False"})
    assert cleared is not None and cleared.taints == (user,)


def test_a_no_execute_taint_of_a_condition_key_is_not_the_passes_to_remove() -> None:
    # Only NoSchedule taints are candidates (TaintSetFilter on the effect): the NoExecute not-ready
    # taint belongs to the NoExecute pass.
    no_execute = Taint("node.kubernetes.io/not-ready", TaintEffect.NO_EXECUTE)
    node = NodeSpec("node-1", cpu=4000, memory=2**30, taints=(no_execute,))
    assert no_schedule_tainting_pass(node, {"Ready": "True"}) is None
