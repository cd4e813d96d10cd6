"""The scenario's `scheduler` section: a KubeSchedulerConfiguration-like profile, plus the simulation's own knobs.

```yaml
spec:
  scheduler:
    percentageOfNodesToScore: 0          # adaptive, as kube-scheduler
    profiles:
      - plugins:
          score:
            disabled: [{name: NodeResourcesBalancedAllocation}]
            enabled: [{name: NodeResourcesFit, weight: 3}]
        pluginConfig:
          - name: NodeResourcesFit
            args: {scoringStrategy: {type: MostAllocated}}
    customPlugins:
      - {name: PreferZoneA, plugin: plugins/zone.py:PreferZoneA, weight: 2}
```

Only one profile (the default scheduler) is modelled. Plugins skenario does not model (`NOT_MODELLED`
in the registry: VolumeRestrictions, DynamicResources, ...) may be named in `disabled` and are
otherwise refused. SchedulingGates, PrioritySort, NodeName, DefaultPreemption and DefaultBinder
(`BUILT_IN`) are the scheduler's own machinery, turned on and off at multiPoint or at the point each
serves (preEnqueue, queueSort, filter, postFilter, bind) as upstream merges a profile
(`plugins/builtin.py`): `postFilter: {disabled: [{name: DefaultPreemption}]}` (or `"*"`) turns
preemption off; a profile left without SchedulingGates, PrioritySort or DefaultBinder is refused.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator
from pydantic.alias_generators import to_camel

from skenario.scenario.format.base import Spec as _Spec
from skenario.scenario.format.units import Duration
from skenario.scheduling.controller import SchedulerSettings
from skenario.scheduling.plugins.builtin import ALL, MULTI_POINT, PointSet, refusals, turned_off
from skenario.scheduling.plugins.registry import BUILT_IN, FILTERS, NOT_MODELLED, SCORES


class PluginRef(_Spec):
    name: str = Field(min_length=1)
    weight: int | None = Field(None, ge=0, le=100, description="Score plugins: the weight; 0 turns it off.")


class PluginSet(_Spec):
    enabled: list[PluginRef] = Field(default_factory=list)
    disabled: list[PluginRef] = Field(default_factory=list, description="'*' disables every default.")


# The extension points whose plugins are objects here (in-tree and users'); the others are served by
# the built-in plugins alone.
_OBJECT_POINTS = ("filter", "score")


class Plugins(_Spec):
    """A profile's plugins by extension point: the filter and score plugins, and the built-in ones'
    points (DefaultPreemption is the only postFilter plugin, DefaultBinder the only bind one, ...)."""

    multi_point: PluginSet | None = None
    pre_enqueue: PluginSet | None = None
    queue_sort: PluginSet | None = None
    filter: PluginSet | None = None
    post_filter: PluginSet | None = None
    score: PluginSet | None = None
    bind: PluginSet | None = None

    def point_sets(self) -> dict[str, PointSet]:
        """Each extension point written, by its KubeSchedulerConfiguration name, as plugin names."""
        return {
            to_camel(point): PointSet([r.name for r in sets.enabled], [r.name for r in sets.disabled])
            for point in type(self).model_fields
            if (sets := getattr(self, point)) is not None
        }

    @model_validator(mode="after")
    def _built_ins(self) -> Plugins:
        for point, sets in self.point_sets().items():
            if point == MULTI_POINT:
                continue
            for name in sets.enabled:  # upstream's `updatePluginList`: "plugin %q does not extend %s plugin"
                built_in = BUILT_IN.get(name)
                if built_in is not None and point not in (built_in.point, *built_in.also):
                    raise ValueError(f"plugin {name!r} does not extend {point}: it serves {built_in.point}")
                if built_in is None and point not in _OBJECT_POINTS:
                    raise ValueError(f"plugin {name!r} does not extend {point}: only built-in plugins serve it here")
        problems = [problem for _, problem in refusals(self.point_sets())]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def preemption(self) -> bool:
        """Whether DefaultPreemption stays on."""
        return "DefaultPreemption" not in turned_off(self.point_sets())


class ResourceWeight(_Spec):
    name: str = Field(min_length=1)
    weight: int = Field(1, ge=1, le=100)


class ShapeSpec(_Spec):
    utilization: int = Field(ge=0, le=100)
    score: int = Field(ge=0, le=10)


class RequestedToCapacityRatioSpec(_Spec):
    shape: list[ShapeSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _increasing(self) -> RequestedToCapacityRatioSpec:
        points = [p.utilization for p in self.shape]
        if points != sorted(set(points)):
            raise ValueError("shape utilization values must increase")
        return self


class ScoringStrategy(_Spec):
    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = "LeastAllocated"
    resources: list[ResourceWeight] = Field(
        default_factory=lambda: [ResourceWeight(name="cpu", weight=1), ResourceWeight(name="memory", weight=1)]
    )
    requested_to_capacity_ratio: RequestedToCapacityRatioSpec | None = None

    @model_validator(mode="after")
    def _shape(self) -> ScoringStrategy:
        if self.type == "RequestedToCapacityRatio" and self.requested_to_capacity_ratio is None:
            raise ValueError("type RequestedToCapacityRatio needs requestedToCapacityRatio.shape")
        return self


class FitArgs(_Spec):
    scoring_strategy: ScoringStrategy = Field(default_factory=ScoringStrategy)


class BalancedArgs(_Spec):
    resources: list[ResourceWeight] = Field(
        default_factory=lambda: [ResourceWeight(name="cpu", weight=1), ResourceWeight(name="memory", weight=1)]
    )


class InterPodAffinityArgs(_Spec):
    """`InterPodAffinityArgs` (kube-scheduler config v1), with upstream's defaults and range."""

    hard_pod_affinity_weight: int = Field(
        1, ge=0, le=100, description="The weight of existing pods' required affinity."
    )
    ignore_preferred_terms_of_existing_pods: bool = Field(
        False, description="Score by the incoming pod's preferred terms alone."
    )


PLUGIN_ARGS: dict[str, type[_Spec]] = {
    "NodeResourcesFit": FitArgs,
    "NodeResourcesBalancedAllocation": BalancedArgs,
    "InterPodAffinity": InterPodAffinityArgs,
}
"""The plugins whose args a profile's pluginConfig sets, and the args each takes."""


class PluginConfig(_Spec):
    name: Literal["NodeResourcesFit", "NodeResourcesBalancedAllocation", "InterPodAffinity"]
    args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _args(self) -> PluginConfig:
        PLUGIN_ARGS[self.name].model_validate(self.args)
        return self


class ProfileSpec(_Spec):
    scheduler_name: str = "default-scheduler"
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = Field(default_factory=list)


class CustomPlugin(_Spec):
    """A user's Filter and/or Score plugin: a class with `filter(pod, node)` and/or `score(pod, node)`."""

    name: str = Field(min_length=1)
    plugin: str = Field(
        pattern=r"^[^:]+:[A-Za-z_][A-Za-z0-9_]*$",
        description="'file.py:Class' or 'module:Class' (a module the user allows: --allow-plugin-module).",
    )
    weight: int = Field(1, ge=0, le=100, description="Its score's weight.")
    options: dict[str, Any] = Field(default_factory=dict)


class SchedulerSpec(_Spec):
    """How pods are scheduled; every default is kube-scheduler's."""

    percentage_of_nodes_to_score: int = Field(0, ge=0, le=100, description="0: adaptive (50 - nodes/125, >= 5%).")
    tie_break: Literal["random", "first"] = Field("random", description="Among nodes with the best score.")
    latency: Duration = Field(0, ge=0, description="From a pod's scheduling decision to its binding.")
    heartbeat_interval: Duration = Field(0, ge=0, description="Node heartbeats; 0: freed room is seen at once.")
    heartbeat_delay: Duration = Field(0, ge=0, description="How long a heartbeat takes to reach the scheduler.")
    record_plugin_results: bool = Field(True, description="Keep every attempt's filter and score results.")
    profiles: list[ProfileSpec] = Field(default_factory=lambda: [ProfileSpec()], min_length=1, max_length=1)
    custom_plugins: list[CustomPlugin] = Field(default_factory=list)

    @model_validator(mode="after")
    def _known(self) -> SchedulerSpec:
        plugins = self.profiles[0].plugins
        custom = {c.name for c in self.custom_plugins}
        for point in (getattr(plugins, p) for p in Plugins.model_fields) if plugins is not None else ():
            if point is None:
                continue
            for ref in point.enabled:
                if ref.name not in (*FILTERS, *SCORES, *BUILT_IN) and ref.name not in custom:
                    raise ValueError(f"plugin {ref.name!r} is not one skenario models; known: {', '.join(SCORES)}")
            for ref in point.disabled:
                if ref.name != ALL and ref.name not in (*FILTERS, *SCORES, *BUILT_IN, *NOT_MODELLED):
                    raise ValueError(f"unknown plugin {ref.name!r} in disabled")
        return self

    def settings(self) -> SchedulerSettings:
        return SchedulerSettings(
            latency=self.latency,
            heartbeat_interval=self.heartbeat_interval,
            heartbeat_delay=self.heartbeat_delay,
            plugin_results="all" if self.record_plugin_results else "none",
        )
