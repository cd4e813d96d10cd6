"""The node lifecycle controller's taints by condition: a node's conditions become NoSchedule taints.

Mirrors `doNoScheduleTaintingPass` (pkg/controller/nodelifecycle/node_lifecycle_controller.go):
on every node update its workers map the node's conditions through
`nodeConditionToTaintKeyStatusMap` to NoSchedule taints, compare them with the node's NoSchedule
taints whose keys are condition taints (`taintKeyToNodeConditionMap`), and swap in the
difference (`SwapNodeControllerTaint`). Other taints, the user's, stay as they are. The scheduler's
TaintToleration filter (`plugins/tainttoleration.py`) then keeps off every pod that does not
tolerate them:

    MemoryPressure True -> node.kubernetes.io/memory-pressure:NoSchedule
    a BestEffort, Burstable or Guaranteed pod without a toleration for it: filtered out

The pass runs when the node object changes, so the taint follows the kubelet's status post within
the informer's delivery (milliseconds, taken as none here). The unschedulable taint the same pass
adds for a cordoned node is left to NodeUnschedulable, which reads `spec.unschedulable` itself.
Clusters that enable the PodTolerationRestriction admission plugin (off by default) give every
pod but BestEffort ones a toleration for the memory-pressure taint; skenario's pods carry only
the tolerations their template writes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from skenario.scheduling.objects import NodeSpec
from skenario.scheduling.taints import Taint, TaintEffect

NODE_CONDITION_TAINTS: Mapping[str, Mapping[str, str]] = {
    "Ready": {"False": "node.kubernetes.io/not-ready", "Unknown": "node.kubernetes.io/unreachable"},
    "MemoryPressure": {"True": "node.kubernetes.io/memory-pressure"},
    "DiskPressure": {"True": "node.kubernetes.io/disk-pressure"},
    "NetworkUnavailable": {"True": "node.kubernetes.io/network-unavailable"},
    "PIDPressure": {"True": "node.kubernetes.io/pid-pressure"},
}
"""`nodeConditionToTaintKeyStatusMap`: for each condition type, the statuses that taint and with what key."""

CONDITION_TAINT_KEYS = frozenset(key for statuses in NODE_CONDITION_TAINTS.values() for key in statuses.values())
"""The keys of `taintKeyToNodeConditionMap`: taints the controller owns and may remove."""


def condition_taints(conditions: Mapping[str, str]) -> tuple[Taint, ...]:
    """The NoSchedule taints a node's conditions (type -> status) call for, in the order given."""
    taints = []
    for kind, status in conditions.items():
        key = NODE_CONDITION_TAINTS.get(kind, {}).get(status)
        if key is not None:
            taints.append(Taint(key, TaintEffect.NO_SCHEDULE))
    return tuple(taints)


def no_schedule_tainting_pass(node: NodeSpec, conditions: Mapping[str, str]) -> NodeSpec | None:
    """The node with its condition taints brought in line with `conditions`, or None if they already are.

    `doNoScheduleTaintingPass`: taints to add are those the conditions call for and the node lacks;
    taints to delete are the node's NoSchedule condition taints the conditions no longer call for.
    """
    wanted = condition_taints(conditions)
    owned = [t for t in node.taints if t.effect is TaintEffect.NO_SCHEDULE and t.key in CONDITION_TAINT_KEYS]
    to_add = [t for t in wanted if t not in owned]
    to_delete = [t for t in owned if t not in wanted]
    if not to_add and not to_delete:
        return None
    kept = tuple(t for t in node.taints if t not in to_delete)
    return replace(node, taints=kept + tuple(to_add))
