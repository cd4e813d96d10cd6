"""NodeUnschedulable: a cordoned node takes only pods that tolerate its `unschedulable` taint.

Mirrors `pkg/scheduler/framework/plugins/nodeunschedulable`: a node with `spec.unschedulable`
fails the filter, as UnschedulableAndUnresolvable, unless the pod tolerates
`node.kubernetes.io/unschedulable:NoSchedule`. It has no score.
"""

from __future__ import annotations

import numpy as np

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.interface import FilterResult, Ints
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import UNSCHEDULABLE_TAINT


class NodeUnschedulable:
    """A cordoned node takes only pods tolerating its `unschedulable` taint. Mirrors `nodeunschedulable`."""

    name = "NodeUnschedulable"

    def pre_filter_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        """Nothing to check when no node is cordoned (upstream has no PreFilter; every node passes)."""
        return not snap.cluster_fact("cordoned", lambda: bool(snap.unschedulable[snap.order].any()))

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        if any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return FilterResult(np.zeros(len(nodes), dtype=np.int64))
        codes = snap.unschedulable[nodes].astype(np.int64)
        return FilterResult(codes, ("", "node(s) were unschedulable"), frozenset({1}))
