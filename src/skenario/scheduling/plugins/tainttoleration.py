"""TaintToleration: which nodes a pod may go to, and which it would rather avoid.

Mirrors `pkg/scheduler/framework/plugins/tainttoleration` (taint_toleration.go): the filter
refuses a node with a NoSchedule or NoExecute taint the pod does not tolerate
(`v1.Toleration.ToleratesTaint`, in `skenario.scheduling.taints`); the score counts the node's
PreferNoSchedule taints the pod does not tolerate (a cost, normalised in reverse so the cleanest
node gets 100). The rules are pure functions here, tested against the API's rules; the plugin
class applies them per node, once per distinct set of tolerations and nodes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.helper import default_normalize, normalize_default
from skenario.scheduling.plugins.interface import FilterResult, Ints, PerNodeCache
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import Taint, TaintEffect, Toleration


def untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: set[TaintEffect]) -> list[Taint]:
    """The taints with one of `effects` that no toleration tolerates."""
    return [t for t in taints if t.effect in effects and not any(tol.tolerates(t) for tol in tolerations)]


def taints_filter(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    """The first taint that keeps the pod off the node, or None if it may go there."""
    blocking = untolerated(taints, tolerations, {TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE})
    return blocking[0] if blocking else None


def taints_score(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> int:
    """How many PreferNoSchedule taints the pod does not tolerate (lower is better).

    Only tolerations whose effect is PreferNoSchedule or empty count, as upstream.
    """
    preferring = [t for t in tolerations if t.effect in ("", TaintEffect.PREFER_NO_SCHEDULE)]
    return len(untolerated(taints, preferring, {TaintEffect.PREFER_NO_SCHEDULE}))


def taints_normalize(scores: Sequence[int]) -> list[int]:
    """Fewest untolerated PreferNoSchedule taints scores 100 (`DefaultNormalizeScore`, reversed)."""
    return default_normalize(scores, reverse=True)


def _tolerations_key(pod: PodSpec) -> Hashable:
    return pod.tolerations


class TaintTolerationPlugin:
    """Filter: no untolerated NoSchedule/NoExecute taint. Score: untolerated PreferNoSchedule taints, reversed."""

    name = "TaintToleration"

    def __init__(self) -> None:
        self._blocked = PerNodeCache()
        self._costs = PerNodeCache()

    def pre_filter_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        """Nothing to check when no node has a NoSchedule or NoExecute taint (upstream has no PreFilter)."""
        return not snap.cluster_fact(
            "blocking taints", lambda: _any_taint(snap, {TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE})
        )

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        tolerations = pod.tolerations
        blocked = self._blocked.get(
            _tolerations_key(pod), snap, lambda i: taints_filter(snap.nodes[i].taints, tolerations) is not None
        )
        codes = blocked[nodes]
        if not codes.any():
            return FilterResult(codes)
        # One message per distinct blocking taint, as upstream names the taint.
        reasons = [""]
        out = np.zeros(len(nodes), dtype=np.int64)
        seen: dict[str, int] = {}
        for k in np.flatnonzero(codes):
            taint = taints_filter(snap.nodes[nodes[k]].taints, tolerations)
            assert taint is not None
            text = f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
            if text not in seen:
                reasons.append(text)
                seen[text] = len(reasons) - 1
            out[k] = seen[text]
        return FilterResult(out, reasons, frozenset(range(1, len(reasons))))

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        tolerations: tuple[Toleration, ...] = pod.tolerations
        costs = self._costs.get(_tolerations_key(pod), snap, lambda i: taints_score(snap.nodes[i].taints, tolerations))
        return costs[nodes]

    def normalize(self, scores: Ints) -> Ints | None:
        return normalize_default(scores, reverse=True)


def _any_taint(snap: ClusterSnapshot, effects: set[TaintEffect]) -> bool:
    """Whether any present node has a taint with one of `effects`."""
    return any(t.effect in effects for i in snap.order.tolist() for t in snap.nodes[i].taints)
