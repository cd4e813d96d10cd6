"""Taints on nodes and the tolerations of pods, as the Kubernetes API defines them.

Mirrors `v1.Taint`, `v1.Toleration` and `Toleration.ToleratesTaint` (k8s.io/api/core/v1). What
the scheduler makes of them is the TaintToleration plugin's business (`plugins.tainttoleration`:
the filter, the score) and NodeUnschedulable's (`UNSCHEDULABLE_TAINT`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class TaintEffect(StrEnum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


@dataclass(frozen=True)
class Taint:
    key: str
    effect: TaintEffect
    value: str = ""


@dataclass(frozen=True)
class Toleration:
    """An empty key with operator Exists tolerates every taint; an empty effect, every effect."""

    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # "" or a TaintEffect

    def tolerates(self, taint: Taint) -> bool:
        """Mirrors `Toleration.ToleratesTaint`."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return False


UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", TaintEffect.NO_SCHEDULE)
"""What a cordoned node carries for the NodeUnschedulable filter (`v1.TaintNodeUnschedulable`)."""

MEMORY_PRESSURE_TAINT = Taint("node.kubernetes.io/memory-pressure", TaintEffect.NO_SCHEDULE)
"""What the node lifecycle controller puts on a node under MemoryPressure (`v1.TaintNodeMemoryPressure`)."""
