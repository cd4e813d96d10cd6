"""TaintToleration: its filter and score worked by hand from the API's rules, its plugin checked against them.

Each hand case states the rule it checks (the TaintToleration filter: untolerated NoSchedule and
NoExecute taints block; the score: untolerated PreferNoSchedule taints, normalised in reverse);
the plugin is then compared node by node with the pure functions on the random clusters of
`clusters`.
"""

from __future__ import annotations

from hypothesis import given, settings

from skenario.scheduling.plugins.tainttoleration import (
    TaintTolerationPlugin,
    taints_filter,
    taints_normalize,
    taints_score,
)
from skenario.scheduling.taints import Taint, TaintEffect, Toleration
from tests.scheduling.plugins.clusters import Cluster, clusters, every_node

NO_SCHEDULE = TaintEffect.NO_SCHEDULE
PREFER = TaintEffect.PREFER_NO_SCHEDULE
NO_EXECUTE = TaintEffect.NO_EXECUTE


def test_the_filter_blocks_only_untolerated_noschedule_and_noexecute_taints() -> None:
    taints = [Taint("a", PREFER), Taint("b", NO_SCHEDULE), Taint("c", NO_EXECUTE)]
    assert taints_filter(taints, []) == Taint("b", NO_SCHEDULE)
    assert taints_filter(taints, [Toleration("b", "Exists")]) == Taint("c", NO_EXECUTE)
    assert taints_filter(taints, [Toleration("b", "Exists"), Toleration("c", "Exists")]) is None
    assert taints_filter([Taint("a", PREFER)], []) is None  # PreferNoSchedule never blocks


def test_the_score_counts_untolerated_prefer_no_schedule_taints_and_normalises_in_reverse() -> None:
    # Three nodes: no taint; one PreferNoSchedule taint the pod tolerates; two it does not.
    tolerations = [Toleration("foo", "Equal", "bar", "PreferNoSchedule")]
    nodes = [
        [],
        [Taint("foo", PREFER, "bar")],
        [Taint("cpu-type", PREFER, "arm64"), Taint("disk-type", PREFER, "ssd")],
    ]
    raw = [taints_score(n, tolerations) for n in nodes]
    assert raw == [0, 0, 2]
    # DefaultNormalizeScore(100, reverse): 100 - 100 * s // max.
    assert taints_normalize(raw) == [100, 100, 0]
    # A toleration with a NoSchedule effect does not count for PreferNoSchedule taints.
    assert taints_score([Taint("foo", PREFER, "bar")], [Toleration("foo", "Equal", "bar", "NoSchedule")]) == 1
    assert taints_normalize([0, 0]) == [100, 100]  # all clean: all best


@settings(max_examples=300)
@given(clusters())
def test_taint_toleration_score_and_normalize_match_the_pure_functions(cluster: Cluster) -> None:
    plugin = TaintTolerationPlugin()
    snap = cluster.snapshot()
    raw = plugin.score(cluster.pod, snap, every_node(cluster))
    want_raw = [taints_score(n.taints, cluster.pod.tolerations) for n in cluster.nodes]
    assert raw.tolist() == want_raw
    normalized = plugin.normalize(raw)
    assert normalized is not None
    assert normalized.tolist() == taints_normalize(want_raw)
    blocked = plugin.filter(cluster.pod, snap, every_node(cluster)).codes != 0
    assert blocked.tolist() == [taints_filter(n.taints, cluster.pod.tolerations) is not None for n in cluster.nodes]
