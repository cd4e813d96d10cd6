"""Scale-up: which node group to grow, by how many nodes, and for which pending pods; and why not.

Mirrors cluster-autoscaler's `core/scaleup/orchestrator` (`ScaleUpOrchestrator.ScaleUp`): the
groups that may grow, the pods each could help (the template check), the estimate of the nodes it
needs (`estimator`), then the expander's choice (`expander`). The pods no group could help keep
each group's reason, as upstream's `ScaleUpStatus.PodsRemainUnschedulable` does for its
NotTriggerScaleUp events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.clusterautoscaler.estimator import estimate, node_limit
from skenario.scheduling.clusterautoscaler.expander import ScaleUpOption, best_option
from skenario.scheduling.clusterautoscaler.simulator import ResourceSimulation, Simulation, StaticFits, node_filters
from skenario.scheduling.objects import PodSpec

# Upstream's skipped-group reasons (`core/scaleup/orchestrator/skippedreasons.go`).
MAX_GROUP_SIZE_REACHED = "max node group size reached"
MAX_CLUSTER_SIZE_REACHED = "max cluster size reached"


@dataclass(frozen=True)
class ScaleUpPlan:
    """The chosen scale-up: add `nodes` nodes to group `group`, expecting them to run `pods`."""

    group: str
    nodes: int
    pods: tuple[PodSpec, ...]


@dataclass
class ScaleUpStatus:
    """What one scale-up pass found (`status.ScaleUpStatus`).

    `options` are the groups that would help some pod; `plan` the one taken (None: none helps);
    `rejected` maps each pod no group could help to every group's reason.
    """

    options: list[ScaleUpOption] = field(default_factory=list)
    plan: ScaleUpPlan | None = None
    rejected: dict[str, dict[str, str]] = field(default_factory=dict)


def not_triggered_message(reasons: Mapping[str, str]) -> str:
    """The NotTriggerScaleUp event's text: each reason with the number of groups that gave it.

    Mirrors `EventingScaleUpStatusProcessor` (`pod didn't trigger scale-up: 1 max node group size
    reached, 2 node(s) didn't match Pod's node affinity/selector`).
    """
    counts = Counter(reasons.values())
    parts = sorted(f"{count} {reason}" for reason, count in counts.items())
    return "pod didn't trigger scale-up: " + ", ".join(parts) if parts else "pod didn't trigger scale-up"


def scale_up_status(
    pending: Sequence[PodSpec],
    groups: Sequence[NodeGroup],
    group_sizes: Mapping[str, int],
    settings: CaSettings,
    simulation: Simulation | None = None,
    rng: np.random.Generator | None = None,
    *,
    cluster_size: int | None = None,
) -> ScaleUpStatus:
    """One scale-up pass: the options, the expander's choice, and why the other pods got none.

    Mirrors `ScaleUpOrchestrator.ScaleUp`: `filterValidScaleUpNodeGroups` (groups at max size, or
    with no room under `--max-nodes-total`, skipped), `SchedulablePodGroups` (the template check,
    `simulation.template_check`), `ComputeExpansionOption` (the estimate on the group's new nodes,
    `simulation.new_nodes`), then `best_option`. `group_sizes` is each group's current plus
    upcoming nodes (its target size); `cluster_size`, the node count `--max-nodes-total` is
    checked against, defaults to their sum. The node count needs no capping after the expander
    (upstream's `GetCappedNewNodeCount`): the estimate already stopped at the group's max size and
    `--max-nodes-total`. Not modelled: balancing similar node groups, resource quotas
    (`--cores-total`, `--memory-total`), backoff of failing groups, all-or-nothing and
    zero-or-max scaling.
    """
    sim = ResourceSimulation() if simulation is None else simulation
    total = sum(group_sizes.values()) if cluster_size is None else cluster_size
    status = ScaleUpStatus()
    reasons: dict[str, dict[str, str]] = {pod.name: {} for pod in pending}
    helped: set[str] = set()
    for group in groups:
        size = group_sizes.get(group.name, 0)
        limit = node_limit(group, size, total, settings)
        if size >= group.max_size or limit <= 0:
            skipped = MAX_GROUP_SIZE_REACHED if size >= group.max_size else MAX_CLUSTER_SIZE_REACHED
            for pod in pending:
                reasons[pod.name][group.name] = skipped
            continue
        candidates = []
        for pod in pending:
            reason = sim.template_check(pod, group.template)
            if reason is None:
                candidates.append(pod)
                helped.add(pod.name)
            else:
                reasons[pod.name][group.name] = reason
        if not candidates:
            continue
        nodes, pods = estimate(candidates, group.template, limit, sim.new_nodes(group.template))
        if nodes > 0 and pods:
            status.options.append(ScaleUpOption(group, nodes, pods))
    chosen = best_option(status.options, settings, rng)
    if chosen is not None:
        status.plan = ScaleUpPlan(chosen.group.name, chosen.nodes, chosen.pods)
    status.rejected = {name: why for name, why in reasons.items() if name not in helped}
    return status


def expansion_options(
    pending: Sequence[PodSpec],
    groups: Sequence[NodeGroup],
    group_sizes: Mapping[str, int],
    settings: CaSettings,
    static_fits: StaticFits = node_filters,
    *,
    cluster_size: int | None = None,
) -> list[ScaleUpOption]:
    """The scale-up options worth choosing from, one per group that would help some pod, counting
    resources and asking `static_fits` about the rest (`ResourceSimulation`)."""
    sim = ResourceSimulation(static_fits)
    return scale_up_status(pending, groups, group_sizes, settings, sim, cluster_size=cluster_size).options


def plan_scale_up(
    pending: Sequence[PodSpec],
    groups: Sequence[NodeGroup],
    group_sizes: Mapping[str, int],
    settings: CaSettings,
    static_fits: StaticFits = node_filters,
    rng: np.random.Generator | None = None,
    *,
    cluster_size: int | None = None,
) -> ScaleUpPlan | None:
    """Which group to grow, by how many nodes, and for which pods; None if no group helps
    (`scale_up_status` over a `ResourceSimulation`)."""
    if not pending:
        return None
    sim = ResourceSimulation(static_fits)
    return scale_up_status(pending, groups, group_sizes, settings, sim, rng, cluster_size=cluster_size).plan
