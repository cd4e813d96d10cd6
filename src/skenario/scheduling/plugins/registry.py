"""Every in-tree plugin, once: its name, how to make it, where it runs and how much its score weighs.

Mirrors kube-scheduler's `pkg/scheduler/framework/plugins/registry.go` (`NewInTreeRegistry`, a map
from each plugin's name to its factory) together with `pkg/scheduler/apis/config/v1/default_plugins.go`
(the default profile: its plugins in this order, and the weights of their scores). A plugin that
has both a filter and a score is one object serving both extension points, as one instance per
profile serves them upstream.

Everything else reads names and weights from here: the framework's `default_profile`, and the
scenario's `scheduler` section (which names `enabled` and `disabled` may hold, and the profile it
builds). Adding a plugin is one module in this package and one line in `IN_TREE`. Every in-tree
name upstream has is in exactly one of `IN_TREE` (a plugin object here), `BUILT_IN` (the
scheduler's own behaviour: the queue's order and gate, preemption, binding, spec.nodeName) and
`NOT_MODELLED`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from skenario.scheduling.plugins.balancedallocation import BalancedAllocationScore
from skenario.scheduling.plugins.imagelocality import ImageLocality
from skenario.scheduling.plugins.interface import FilterPlugin, ScorePlugin
from skenario.scheduling.plugins.interpodaffinity import InterPodAffinityPlugin
from skenario.scheduling.plugins.nodeaffinity import NodeAffinityPlugin
from skenario.scheduling.plugins.nodeports import NodePorts
from skenario.scheduling.plugins.noderesources import NodeResourcesFit
from skenario.scheduling.plugins.nodeunschedulable import NodeUnschedulable
from skenario.scheduling.plugins.nodevolumelimits import NodeVolumeLimits
from skenario.scheduling.plugins.podtopologyspread import PodTopologySpreadPlugin
from skenario.scheduling.plugins.tainttoleration import TaintTolerationPlugin
from skenario.scheduling.plugins.volumebinding import VolumeBinding
from skenario.scheduling.plugins.volumezone import VolumeZone


@dataclass(frozen=True)
class Registration:
    """One in-tree plugin: its factory (keyword arguments are its `pluginConfig` args), its extension
    points, and its score's weight in the default profile (0 for a plugin with no score)."""

    factory: Callable[..., object]
    filter: bool = False
    score: bool = False
    weight: int = 0


IN_TREE: dict[str, Registration] = {
    "NodeUnschedulable": Registration(NodeUnschedulable, filter=True),
    "TaintToleration": Registration(TaintTolerationPlugin, filter=True, score=True, weight=3),
    "NodeAffinity": Registration(NodeAffinityPlugin, filter=True, score=True, weight=2),
    "NodePorts": Registration(NodePorts, filter=True),
    "NodeResourcesFit": Registration(NodeResourcesFit, filter=True, score=True, weight=1),
    "NodeVolumeLimits": Registration(NodeVolumeLimits, filter=True),
    "VolumeBinding": Registration(VolumeBinding, filter=True),
    "VolumeZone": Registration(VolumeZone, filter=True),
    "PodTopologySpread": Registration(PodTopologySpreadPlugin, filter=True, score=True, weight=2),
    "InterPodAffinity": Registration(InterPodAffinityPlugin, filter=True, score=True, weight=2),
    "NodeResourcesBalancedAllocation": Registration(BalancedAllocationScore, score=True, weight=1),
    "ImageLocality": Registration(ImageLocality, score=True, weight=1),
}


@dataclass(frozen=True)
class BuiltIn:
    """An in-tree plugin whose behaviour is built into skenario's scheduler rather than a plugin object.

    `point` is the extension point whose work skenario does in its place, as a
    KubeSchedulerConfiguration spells it (where a profile's `enabled` and `disabled` lists turn it
    on and off, besides multiPoint); `does` is that work; `required`, when set, is why a profile
    without it is refused; `also` are the other points it implements upstream, which change
    nothing here (DefaultPreemption's PreEnqueue holds back a pod whose asynchronous preemption is
    under way; skenario's preemption is immediate).
    """

    point: str
    does: str
    required: str | None = None
    also: tuple[str, ...] = ()


# kube-scheduler's in-tree plugins whose behaviour is skenario's own (`scheduling/controller.py`), in
# `getDefaultPlugins` order. Whether a profile leaves each on is merged as upstream merges it
# (`plugins/builtin.py`). Three cannot be off: upstream's `NewFramework` refuses a profile without
# exactly one QueueSort plugin or without a Bind plugin, and skenario has no other of either; nor
# has it a queue without the gates. DefaultPreemption may be off: an unschedulable pod then waits
# and nobody is evicted. NodeName may be off and nothing changes, as upstream: its scheduler never
# queues a pod that has spec.nodeName, so its NodeName filter only ever sees pods without one.
BUILT_IN = {
    "SchedulingGates": BuiltIn(
        "preEnqueue",
        "a pod with schedulingGates waits outside the queue until they are removed",
        "skenario has no queue without the gates (upstream would try a gated pod and its API server refuse"
        " the binding: 'pod has non-empty .spec.schedulingGates')",
    ),
    "PrioritySort": BuiltIn(
        "queueSort",
        "the queue orders pods by priority, then creation time, then name",
        "kube-scheduler's NewFramework requires exactly one QueueSort plugin and skenario has no other",
    ),
    "NodeName": BuiltIn(
        "filter", "a pod with spec.nodeName is bound to that node at once, never queued", also=("preFilter",)
    ),
    "DefaultPreemption": BuiltIn(
        "postFilter",
        "a pod that fits nowhere evicts lower-priority pods to make room (scheduling/preemption.py)",
        also=("preEnqueue",),
    ),
    "DefaultBinder": BuiltIn(
        "bind",
        "a pod is bound to the node its cycle chose, after scheduler.latency",
        "kube-scheduler's NewFramework requires at least one Bind plugin and skenario has no other",
    ),
}

# kube-scheduler's in-tree plugins that skenario does not model: a profile may disable them, not enable them.
NOT_MODELLED = (
    "VolumeRestrictions",
    "EBSLimits",
    "GCEPDLimits",
    "AzureDiskLimits",
    "DynamicResources",
)


def cannot_disable(name: str) -> str | None:
    """Why a profile may not turn the plugin `name` off (it is built in and required), or None."""
    built_in = BUILT_IN.get(name)
    if built_in is None or built_in.required is None:
        return None
    return f"{name} cannot be disabled: {built_in.required}"


# Views of IN_TREE, in its order.
FILTERS = tuple(name for name, plugin in IN_TREE.items() if plugin.filter)
SCORES = tuple(name for name, plugin in IN_TREE.items() if plugin.score)
DEFAULT_WEIGHTS = {name: plugin.weight for name, plugin in IN_TREE.items() if plugin.score}


def new_plugins(
    args: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[dict[str, FilterPlugin], dict[str, ScorePlugin]]:
    """One instance of every in-tree plugin, made with its args, by extension point and in `IN_TREE` order."""
    filters: dict[str, FilterPlugin] = {}
    scores: dict[str, ScorePlugin] = {}
    for name, registration in IN_TREE.items():
        plugin = registration.factory(**(args or {}).get(name, {}))
        if registration.filter:
            filters[name] = cast(FilterPlugin, plugin)
        if registration.score:
            scores[name] = cast(ScorePlugin, plugin)
    return filters, scores
