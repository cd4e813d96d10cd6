"""The scenario's kube-scheduler profile, built before the run: defaults, plugin args, users' plugins loaded.

The in-tree plugins come from `skenario.scheduling.plugins.registry`; a profile's `disabled` and
`enabled` lists are then merged over the defaults as kube-scheduler's `NewFramework` merges them.
Of the built-in plugins only DefaultPreemption may be off (the format refuses a profile without
the others, `plugins/builtin.py`), and the profile carries whether it is on.
"""

from __future__ import annotations

from pathlib import Path

from skenario.scenario.format.scheduler import BalancedArgs, FitArgs, InterPodAffinityArgs, SchedulerSpec
from skenario.scenario.wiring.plugins import load_class
from skenario.scheduling.framework import Profile, WeightedScore
from skenario.scheduling.plugins.custom import UserPlugin
from skenario.scheduling.plugins.noderesources import ShapePoint
from skenario.scheduling.plugins.registry import DEFAULT_WEIGHTS, FILTERS, SCORES, new_plugins
from skenario.scheduling.plugins.resourceallocation import ResourceSpec


def build_profile(scheduler: SchedulerSpec, base_dir: Path, field: str = "spec.scheduler") -> Profile:
    """The profile: the defaults, then each extension point's disabled and enabled lists, merged as upstream."""
    spec = scheduler.profiles[0]
    config = {c.name: c.args for c in spec.plugin_config}
    fit = FitArgs.model_validate(config.get("NodeResourcesFit", {})).scoring_strategy
    balanced = BalancedArgs.model_validate(config.get("NodeResourcesBalancedAllocation", {}))
    affinity = InterPodAffinityArgs.model_validate(config.get("InterPodAffinity", {}))
    shape = fit.requested_to_capacity_ratio.shape if fit.requested_to_capacity_ratio is not None else []
    filters, scores = new_plugins(
        {
            "NodeResourcesFit": {
                "strategy": fit.type,
                "resources": tuple(ResourceSpec(r.name, r.weight) for r in fit.resources),
                "shape": tuple(ShapePoint(p.utilization, p.score) for p in shape),
            },
            "NodeResourcesBalancedAllocation": {
                "resources": tuple(ResourceSpec(r.name, r.weight) for r in balanced.resources)
            },
            "InterPodAffinity": {
                "hard_pod_affinity_weight": affinity.hard_pod_affinity_weight,
                "ignore_preferred_terms_of_existing_pods": affinity.ignore_preferred_terms_of_existing_pods,
            },
        }
    )
    weights = dict(DEFAULT_WEIGHTS)
    filter_on = list(FILTERS)
    score_on = list(SCORES)
    for index, custom in enumerate(scheduler.custom_plugins):
        where = f"{field}.customPlugins.{index}.plugin"
        instance = load_class(custom.plugin, base_dir, where, custom.options, ("filter", "score"), any_of=True)
        user = UserPlugin(custom.name, instance, where, custom.plugin)
        if user.filters:
            filters[custom.name] = user
            filter_on.append(custom.name)
        if user.scores:
            scores[custom.name] = user
            score_on.append(custom.name)
            weights[custom.name] = custom.weight
    plugins = spec.plugins
    if plugins is not None:
        for point, names in ((plugins.multi_point, None), (plugins.filter, filter_on), (plugins.score, score_on)):
            if point is None:
                continue
            targets = [filter_on, score_on] if names is None else [names]
            for ref in point.disabled:
                for target in targets:
                    if ref.name == "*":
                        target.clear()
                    elif ref.name in target:
                        target.remove(ref.name)
            for ref in point.enabled:
                for target, known in ((filter_on, filters), (score_on, scores)):
                    if target in targets and ref.name in known and ref.name not in target:
                        target.append(ref.name)
                if ref.weight is not None:
                    weights[ref.name] = ref.weight
    return Profile(
        filters=[filters[name] for name in filter_on],
        scores=[WeightedScore(scores[name], weights[name]) for name in score_on if weights.get(name, 1) > 0],
        percentage_of_nodes_to_score=scheduler.percentage_of_nodes_to_score,
        tie_break=scheduler.tie_break,
        preemption=plugins is None or plugins.preemption(),
    )
