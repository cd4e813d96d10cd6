"""DefaultPreemption: which lower-priority pods to evict, and on which node, so a pod can run.

Mirrors kube-scheduler's PostFilter plugin `pkg/scheduler/framework/plugins/defaultpreemption`
(`SelectVictimsOnNode`, `filterPodsWithPDBViolation`, `PodEligibleToPreemptOthers`,
`isPreemptionAllowed`) and `pkg/scheduler/framework/preemption` (`pickOneNodeForPreemption`),
with `util.MoreImportantPod` and `util.GetEarliestPodStartTime`. Pure functions: whether a pod
fits a node is the caller's full filter, passed in as `fits(preemptor, node, remaining_pods)`.

PodDisruptionBudgets are best effort, as upstream: victims whose eviction would take a budget
below zero are reprieved first, and the node with the fewest such violations wins, but
preemption goes ahead even when every choice violates one. Not modelled, and what that means here:
- A budget's `DisruptedPods` (evictions the API server has admitted but not yet seen through):
  the caller's `disruptions_allowed` already counts them.
- Which nodes to try (only those whose filter failure was resolvable; the random offset and the
  `minCandidateNodesPercentage`/`Absolute` sample), nominated pods, extenders, the
  `IsEligiblePod`/`MoreImportantPod` hooks and the eviction itself are the caller's.
- Start times: `started_at` maps a pod's name to when it started; a pod missing from it has not
  started, which upstream reads as "now", later than any start (so it is the least important of
  its priority). Pods tied on priority and start keep their order on the node (upstream's
  `sort.Slice` leaves such ties unspecified).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from skenario.scheduling.objects import NEVER, NodeSpec, PodSpec

# Whether `preemptor` fits `node` with only `remaining` of the node's pods on it: the caller's filter.
FitsFn = Callable[[PodSpec, NodeSpec, list[PodSpec]], bool]

PRIORITY_SHIFT = 2**31  # math.MaxInt32 + 1: makes every priority >= 0 before summing


@dataclass(frozen=True)
class PreemptionBudget:
    """A PodDisruptionBudget as preemption reads it: which pods it covers and `status.disruptionsAllowed`."""

    matches: Callable[[PodSpec], bool]
    disruptions_allowed: int


class Victims(NamedTuple):
    """What `SelectVictimsOnNode` returns: the pods to evict, and how many of them violate a budget."""

    pods: list[PodSpec]
    pdb_violations: int = 0


def filter_pods_with_pdb_violation(
    pods: Sequence[PodSpec], budgets: Sequence[PreemptionBudget]
) -> tuple[list[PodSpec], list[PodSpec]]:
    """The pods split into (violating, non-violating), in their order; mirrors `filterPodsWithPDBViolation`.

    Each pod, in turn, takes one disruption from every budget that covers it; a pod that takes a
    budget below zero violates it. A pod without labels matches no budget.
    """
    allowed = [budget.disruptions_allowed for budget in budgets]
    violating: list[PodSpec] = []
    non_violating: list[PodSpec] = []
    for pod in pods:
        violated = False
        if pod.labels:
            for i, budget in enumerate(budgets):
                if budget.matches(pod):
                    allowed[i] -= 1
                    violated = violated or allowed[i] < 0
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def eligible(preemptor: PodSpec) -> bool:
    """Whether the pod may preempt others at all: not with `preemptionPolicy: Never`.

    Mirrors `PodEligibleToPreemptOthers`, without its nominated-node check (a pod whose earlier
    victims are still terminating waits), as there are no terminating pods here.
    """
    return preemptor.preemption_policy != NEVER


def _start(pod: PodSpec, started_at: Mapping[str, int] | None) -> float:
    """When the pod started; not started (or unknown) is +inf, upstream's `GetPodStartTime` "now"."""
    if started_at is None:
        return math.inf
    return started_at.get(pod.name, math.inf)


def by_importance(pods: Sequence[PodSpec], started_at: Mapping[str, int] | None = None) -> list[PodSpec]:
    """The pods most important first: higher priority, then earlier start. Mirrors `MoreImportantPod`."""
    return sorted(pods, key=lambda p: (-p.priority, _start(p, started_at)))


def select_victims(
    preemptor: PodSpec,
    node: NodeSpec,
    pods_on_node: Sequence[PodSpec],
    fits: FitsFn,
    started_at: Mapping[str, int] | None = None,
) -> list[PodSpec] | None:
    """The pods to evict from `node` so `preemptor` fits; None if none can do (no budgets: see
    `select_victims_with_budgets`)."""
    chosen = select_victims_with_budgets(preemptor, node, pods_on_node, fits, started_at)
    return None if chosen is None else chosen.pods


def select_victims_with_budgets(
    preemptor: PodSpec,
    node: NodeSpec,
    pods_on_node: Sequence[PodSpec],
    fits: FitsFn,
    started_at: Mapping[str, int] | None = None,
    budgets: Sequence[PreemptionBudget] = (),
) -> Victims | None:
    """The pods to evict from `node` so `preemptor` fits, and how many violate a budget; None if none can do.

    Mirrors `SelectVictimsOnNode`: take off every pod of lower priority; if there is none, or the
    preemptor still does not fit, the node is no candidate (None). Then put them back one by one,
    keeping each one the preemptor still fits beside: first those whose eviction would violate a
    budget, then the others, each group most important first; the rest are the victims. The
    greedy reprieve keeps the victims minimal in the sense that no single victim could have stayed
    (for a `fits` that only gets harder as pods are added, as resources do). No victims means the
    preemptor fits with every lower-priority pod kept, which upstream's dry run treats as an error
    and a filter that had failed on this node cannot produce.
    """
    lower = [i for i, p in enumerate(pods_on_node) if p.priority < preemptor.priority]
    if not lower:
        return None  # upstream: "No preemption victims found for incoming pod"
    kept = [True] * len(pods_on_node)
    for i in lower:
        kept[i] = False

    def remaining() -> list[PodSpec]:
        return [p for p, keep in zip(pods_on_node, kept, strict=True) if keep]

    if not fits(preemptor, node, remaining()):
        return None
    order = sorted(lower, key=lambda i: (-pods_on_node[i].priority, _start(pods_on_node[i], started_at)))
    index = {id(pods_on_node[i]): i for i in order}
    violating, non_violating = filter_pods_with_pdb_violation([pods_on_node[i] for i in order], budgets)
    victims: list[PodSpec] = []
    violations = 0
    for group, violate in ((violating, True), (non_violating, False)):
        for pod in group:
            i = index[id(pod)]
            kept[i] = True
            if not fits(preemptor, node, remaining()):
                kept[i] = False
                victims.append(pod)
                violations += violate
    return Victims(victims, violations)


def _earliest_start_of_highest(victims: Sequence[PodSpec], started_at: Mapping[str, int] | None) -> float:
    """The earliest start among the victims of the highest priority (`GetEarliestPodStartTime`)."""
    top = max(p.priority for p in victims)
    return min(_start(p, started_at) for p in victims if p.priority == top)


def pick_node(
    candidates: Mapping[str, Sequence[PodSpec]],
    started_at: Mapping[str, int] | None = None,
    pdb_violations: Mapping[str, int] | None = None,
) -> str:
    """The node to preempt on, among `candidates` (node name -> its victims). Mirrors `pickOneNodeForPreemption`.

    A candidate with no victims wins at once (older upstream; the current one never gets such a
    candidate). Otherwise the tie-breaks, each applied to the nodes still tied: the fewest
    victims that violate a disruption budget (`pdb_violations`, by node); the lowest
    highest-victim priority; the smallest sum of victim priorities, each shifted by MaxInt32 + 1
    so that more victims always weigh more; the fewest victims; the latest earliest-start among
    the highest-priority victims; then the first node in the mapping's order (upstream's map
    order is random). Raises ValueError for no candidates (upstream returns "").
    """
    if not candidates:
        raise ValueError("no preemption candidates to pick from")
    for name, victims in candidates.items():
        if not victims:
            return name
    violations = pdb_violations or {}
    names = list(candidates)
    fewest = min(violations.get(n, 0) for n in names)
    names = [n for n in names if violations.get(n, 0) == fewest]
    criteria: tuple[Callable[[Sequence[PodSpec]], float], ...] = (
        lambda v: -max(p.priority for p in v),
        lambda v: -sum(p.priority + PRIORITY_SHIFT for p in v),
        lambda v: -len(v),
        lambda v: _earliest_start_of_highest(v, started_at),
    )
    for score in criteria:
        scores = [score(candidates[n]) for n in names]
        best = max(scores)
        names = [n for n, s in zip(names, scores, strict=True) if s == best]
        if len(names) == 1:
            break
    return names[0]
