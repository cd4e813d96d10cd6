"""TaintToleration: which nodes a pod may go to, and which it would rather avoid.

Mirrors `pkg/scheduler/framework/plugins/tainttoleration` and `v1.Toleration.ToleratesTaint`:
the filter refuses a node with a NoSchedule or NoExecute taint the pod does not tolerate; the
score counts the node's PreferNoSchedule taints the pod does not tolerate (a cost, normalised in
reverse so the cleanest node gets 100).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from skenario.scheduling.scoring import default_normalize


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
