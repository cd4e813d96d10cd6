"""NodeAffinity: the filter on a pod's nodeSelector and required node affinity, the score on its preferred terms.

Mirrors `pkg/scheduler/framework/plugins/nodeaffinity` (node_affinity.go): the filter passes a node
that satisfies the nodeSelector and the required terms; the score is the sum of the weights of the
preferred terms the node matches, normalised so the best node gets 100. The matching itself is the
API's (`skenario.scheduling.affinity`, as upstream's component-helpers); the plugin class applies
it per node, once per distinct affinity and set of nodes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.helper import default_normalize, normalize_default
from skenario.scheduling.plugins.interface import FilterResult, Ints, PerNodeCache
from skenario.scheduling.snapshot import ClusterSnapshot


def affinity_normalize(scores: Sequence[int]) -> list[int]:
    """The best node scores 100 (`DefaultNormalizeScore`, not reversed); all 0 stays 0."""
    return default_normalize(scores, reverse=False)


def _affinity_key(pod: PodSpec) -> Hashable:
    a = pod.affinity
    return (tuple(sorted(a.node_selector.items())), a.required, a.preferred)


class NodeAffinityPlugin:
    """Filter: nodeSelector and required terms. Score: weights of matching preferred terms, normalised."""

    name = "NodeAffinity"

    def __init__(self) -> None:
        self._allowed = PerNodeCache()
        self._weights = PerNodeCache()

    def pre_filter_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        return not pod.affinity.node_selector and pod.affinity.required is None

    def pre_score_skips(self, pod: PodSpec, snap: ClusterSnapshot) -> bool:
        return not pod.affinity.preferred

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        affinity = pod.affinity
        if not affinity.node_selector and affinity.required is None:
            return FilterResult(np.zeros(len(nodes), dtype=np.int64))
        allowed = self._allowed.get(
            _affinity_key(pod), snap, lambda i: affinity.allows(snap.nodes[i].labels, snap.nodes[i].name)
        )
        codes = 1 - allowed[nodes]
        return FilterResult(codes, ("", "node(s) didn't match Pod's node affinity/selector"), frozenset({1}))

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        affinity = pod.affinity
        if not affinity.preferred:
            return np.zeros(len(nodes), dtype=np.int64)
        weights = self._weights.get(
            _affinity_key(pod), snap, lambda i: affinity.score(snap.nodes[i].labels, snap.nodes[i].name)
        )
        return weights[nodes]

    def normalize(self, scores: Ints) -> Ints | None:
        return normalize_default(scores, reverse=False)
