"""The per-node cache plugins share: computed once per key, and again only when the nodes change."""

from __future__ import annotations

from skenario.scheduling.objects import NodeSpec
from skenario.scheduling.plugins.interface import PerNodeCache
from skenario.scheduling.snapshot import ClusterSnapshot


def test_values_are_computed_once_per_key_until_the_snapshot_changes() -> None:
    snap = ClusterSnapshot([NodeSpec("a", cpu=1000, memory=1000), NodeSpec("b", cpu=1000, memory=1000)])
    calls: list[int] = []

    def compute(i: int) -> int:
        calls.append(i)
        return 10 * i

    cache = PerNodeCache()
    assert cache.get("k", snap, compute).tolist() == [0, 10]
    assert cache.get("k", snap, compute).tolist() == [0, 10]
    assert calls == [0, 1]  # the second call computed nothing
    assert cache.get("other", snap, compute).tolist() == [0, 10]
    assert calls == [0, 1, 0, 1]
    snap.add_node(NodeSpec("c", cpu=1000, memory=1000))  # a new snapshot version: computed afresh
    assert cache.get("k", snap, compute).tolist() == [0, 10, 20]
    assert calls == [0, 1, 0, 1, 0, 1, 2]
