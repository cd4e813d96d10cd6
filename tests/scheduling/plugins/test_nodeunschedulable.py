"""NodeUnschedulable worked by hand: a cordoned node refuses a pod unless it tolerates the unschedulable taint.

The rule is upstream's `nodeunschedulable` plugin: `spec.unschedulable` fails the filter as
UnschedulableAndUnresolvable with "node(s) were unschedulable", unless the pod tolerates
`node.kubernetes.io/unschedulable:NoSchedule` (an Exists toleration for that key, or one for every key).
"""

from __future__ import annotations

import numpy as np
import pytest

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.nodeunschedulable import NodeUnschedulable
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import Toleration


def _cluster() -> ClusterSnapshot:
    snap = ClusterSnapshot([NodeSpec("open", cpu=1000, memory=1000), NodeSpec("cordoned", cpu=1000, memory=1000)])
    snap.cordon("cordoned")
    return snap


def test_a_cordoned_node_refuses_a_pod_for_good() -> None:
    snap = _cluster()
    result = NodeUnschedulable().filter(PodSpec("p"), snap, np.array([snap.index["open"], snap.index["cordoned"]]))
    assert result.codes.tolist()[0] == 0
    code = result.codes.tolist()[1]
    assert result.reasons[code] == "node(s) were unschedulable"
    assert code in result.unresolvable


@pytest.mark.parametrize(
    "toleration",
    [
        Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),
        Toleration("node.kubernetes.io/unschedulable", "Exists"),  # every effect
        Toleration("", "Exists"),  # every taint
    ],
)
def test_a_pod_tolerating_the_unschedulable_taint_passes(toleration: Toleration) -> None:
    snap = _cluster()
    result = NodeUnschedulable().filter(PodSpec("p", tolerations=(toleration,)), snap, np.arange(2))
    assert result.codes.tolist() == [0, 0]


def test_a_toleration_for_another_effect_does_not_help() -> None:
    snap = _cluster()
    wrong = Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoExecute")
    result = NodeUnschedulable().filter(PodSpec("p", tolerations=(wrong,)), snap, np.array([snap.index["cordoned"]]))
    assert result.codes.tolist() != [0]
