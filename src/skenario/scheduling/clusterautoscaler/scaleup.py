"""Scale-up: which node group to grow, by how many nodes, and for which pending pods.

Mirrors cluster-autoscaler's `core/scaleup/orchestrator` (`ScaleUpOrchestrator.ScaleUp`): the
groups that may grow, the pods each could help, the estimate of the nodes it needs
(`estimator`), then the expander's choice (`expander`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.clusterautoscaler.estimator import estimate, node_limit
from skenario.scheduling.clusterautoscaler.expander import ScaleUpOption, best_option
from skenario.scheduling.clusterautoscaler.simulator import StaticFits, fits_empty, node_filters
from skenario.scheduling.objects import PodSpec


@dataclass(frozen=True)
class ScaleUpPlan:
    """The chosen scale-up: add `nodes` nodes to group `group`, expecting them to run `pods`."""

    group: str
    nodes: int
    pods: tuple[PodSpec, ...]


def expansion_options(
    pending: Sequence[PodSpec],
    groups: Sequence[NodeGroup],
    group_sizes: Mapping[str, int],
    settings: CaSettings,
    static_fits: StaticFits = node_filters,
    *,
    cluster_size: int | None = None,
) -> list[ScaleUpOption]:
    """The scale-up options worth choosing from, one per group that would help some pod.

    Mirrors `ScaleUpOrchestrator.ScaleUp` up to the expander: `filterValidScaleUpNodeGroups`
    (groups at max size skipped), `SchedulablePodGroups` (pods that fit no empty template of the
    group left out) and `ComputeExpansionOption` (the estimate); options helping no pod dropped.
    `group_sizes` is each group's current plus upcoming nodes (its target size); `cluster_size`,
    the node count `--max-nodes-total` is checked against, defaults to their sum.
    """
    total = sum(group_sizes.values()) if cluster_size is None else cluster_size
    options = []
    for group in groups:
        size = group_sizes.get(group.name, 0)
        if size >= group.max_size:
            continue
        limit = node_limit(group, size, total, settings)
        if limit <= 0:
            continue
        candidates = [p for p in pending if fits_empty(p, group.template, static_fits)]
        if not candidates:
            continue
        nodes, pods = estimate(candidates, group.template, limit)
        if nodes > 0 and pods:
            options.append(ScaleUpOption(group, nodes, pods))
    return options


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
    """Which group to grow, by how many nodes, and for which pods; None if no group helps.

    Mirrors `ScaleUpOrchestrator.ScaleUp`: `expansion_options`, then `best_option`. The node count
    needs no capping after the expander (upstream's `GetCappedNewNodeCount`): the estimate already
    stopped at the group's max size and `--max-nodes-total`. Not modelled: balancing similar node
    groups, resource quotas (`--cores-total`, `--memory-total`), backoff of failing groups,
    all-or-nothing and zero-or-max scaling.
    """
    if not pending:
        return None
    options = expansion_options(pending, groups, group_sizes, settings, static_fits, cluster_size=cluster_size)
    chosen = best_option(options, settings, rng)
    if chosen is None:
        return None
    return ScaleUpPlan(chosen.group.name, chosen.nodes, chosen.pods)
