"""PodTopologySpread as a framework plugin over the snapshot, calling the pure functions of `topology`.

Counting pods per domain is per pod and per node here, not vectorised: only pods with spread
constraints (their own, or the system defaults for pods a controller owns) pay for it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from skenario.scheduling.objects import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, NodeSpec, PodSpec
from skenario.scheduling.plugins import FilterResult
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.topology import (
    spread_constraints,
    spread_filter,
    spread_normalize,
    spread_prescore,
    spread_raw_score,
)

Ints = npt.NDArray[np.int64]


def _view(snap: ClusterSnapshot) -> tuple[list[int], list[NodeSpec], list[list[PodSpec]]]:
    present = snap.order.tolist()
    return present, [snap.nodes[i] for i in present], [list(snap.pods_on[i].values()) for i in present]


class PodTopologySpreadPlugin:
    """Filter on DoNotSchedule constraints, score on ScheduleAnyway ones (upstream `podtopologyspread`)."""

    name = "PodTopologySpread"

    def __init__(self) -> None:
        self._ignored: list[bool] | None = None  # None: PreScore skipped the last pod, it scores 0 everywhere

    def filter(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> FilterResult:
        if not spread_constraints(pod, DO_NOT_SCHEDULE, pod.controlled):
            return FilterResult(np.zeros(len(nodes), dtype=np.int64))
        present, specs, pods_on = _view(snap)
        position = {node: k for k, node in enumerate(present)}
        failures = spread_filter(pod, specs, pods_on, [position[i] for i in nodes.tolist()], defaulting=pod.controlled)
        reasons = [""]
        code_of: dict[tuple[str, bool], int] = {}
        codes = np.zeros(len(nodes), dtype=np.int64)
        for k, failure in enumerate(failures):
            if failure is None:
                continue
            key = (failure.reason, failure.resolvable)
            if key not in code_of:
                reasons.append(failure.reason)
                code_of[key] = len(reasons) - 1
            codes[k] = code_of[key]
        unresolvable = frozenset(code for (_, resolvable), code in code_of.items() if not resolvable)
        return FilterResult(codes, reasons, unresolvable)

    def score(self, pod: PodSpec, snap: ClusterSnapshot, nodes: Ints) -> Ints:
        self._ignored = None
        if not spread_constraints(pod, SCHEDULE_ANYWAY, pod.controlled):
            return np.zeros(len(nodes), dtype=np.int64)
        present, specs, pods_on = _view(snap)
        position = {node: k for k, node in enumerate(present)}
        chosen = [position[i] for i in nodes.tolist()]
        state = spread_prescore(pod, specs, pods_on, chosen, defaulting=pod.controlled)
        if state is None:
            return np.zeros(len(nodes), dtype=np.int64)
        self._ignored = [specs[k].name in state.ignored for k in chosen]
        return np.array([spread_raw_score(state, pod, specs[k], pods_on[k]) for k in chosen], dtype=np.int64)

    def normalize(self, scores: Ints) -> Ints | None:
        if self._ignored is None:
            return np.zeros(len(scores), dtype=np.int64)
        return np.array(spread_normalize(scores.tolist(), self._ignored), dtype=np.int64)
