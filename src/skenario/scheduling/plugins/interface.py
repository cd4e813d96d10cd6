"""What a Filter or Score plugin promises the framework, each run over many nodes in one vector operation.

Mirrors kube-scheduler's `pkg/scheduler/framework/interface.go` (`FilterPlugin`, `ScorePlugin`,
`ScoreExtensions`, `MaxNodeScore`). A filter returns, for the nodes it is given, a status code per
node: 0 passes, any other code indexes the reasons it returns (`framework.Status` messages), and
codes in `unresolvable` are `UnschedulableAndUnresolvable` (no preemption can help). A score plugin
returns raw integer scores and, if it has one, a `normalize` (`ScoreExtensions.NormalizeScore`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from skenario.scheduling.objects import PodSpec
from skenario.scheduling.snapshot import ClusterSnapshot

Ints = npt.NDArray[np.int64]

MAX_NODE_SCORE = 100  # framework.MaxNodeScore


@dataclass
class FilterResult:
    """Per-node codes (0 = pass), the messages the codes stand for, and which codes are final."""

    codes: Ints
    reasons: Sequence[str] = ("",)
    unresolvable: frozenset[int] = frozenset()


class FilterPlugin(Protocol):
    """A filter. It may also have `pre_filter_skips(pod, snap) -> bool`: True when its PreFilter
    would return Skip (it has nothing to check for this pod, so every node passes), which lets the
    framework leave it out of a cycle whose verdicts nobody records."""

    name: str

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult: ...


class ScorePlugin(Protocol):
    """A score. It may also have `pre_score_skips(pod, snap) -> bool`: True when its PreScore would
    return Skip, or more generally when its normalised score is the same on every node, which adds
    the same to every total and so cannot change the choice."""

    name: str

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints: ...

    def normalize(self, scores: Ints) -> Ints | None:
        """The scores scaled to 0..100, or None when the plugin has no NormalizeScore."""
        ...


class PerNodeCache:
    """Per-node facts that depend only on a pod key and the nodes (labels, taints): computed once."""

    def __init__(self) -> None:
        self._version = -1
        self._values: dict[Hashable, Ints] = {}

    def get(self, key: Hashable, snap: ClusterSnapshot, compute: Callable[[int], int]) -> Ints:
        if snap.version != self._version:
            self._values.clear()
            self._version = snap.version
        values = self._values.get(key)
        if values is None:
            values = np.array([compute(i) for i in range(len(snap.nodes))], dtype=np.int64)
            self._values[key] = values
        return values
