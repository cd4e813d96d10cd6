"""The registry: kube-scheduler's default profile, restated from upstream, and plugins that keep its promises.

The default profile's plugins, their order and score weights are those of kubernetes/kubernetes
`pkg/scheduler/apis/config/v1/default_plugins.go` (`getDefaultPlugins`), restricted to the plugins
skenario models: MultiPoint NodeUnschedulable, TaintToleration (weight 3), NodeAffinity (2),
NodeResourcesFit (1), PodTopologySpread (2), NodeResourcesBalancedAllocation (1), with
SchedulingGates, PrioritySort, NodeName, NodePorts, the volume plugins, InterPodAffinity,
DefaultPreemption, ImageLocality and DefaultBinder in between or around them. SchedulingGates,
PrioritySort, NodeName, DefaultPreemption and DefaultBinder are the scheduler's own machinery
(`BUILT_IN`), not plugin objects.
"""

from __future__ import annotations

import numpy as np
import pytest

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.registry import (
    BUILT_IN,
    DEFAULT_WEIGHTS,
    FILTERS,
    IN_TREE,
    NOT_MODELLED,
    SCORES,
    cannot_disable,
    new_plugins,
)
from skenario.scheduling.snapshot import ClusterSnapshot


def test_the_default_profile_is_upstreams() -> None:
    # v1 `getDefaultPlugins`, in its order, less the plugins skenario does not model.
    assert FILTERS == (
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
    )
    assert DEFAULT_WEIGHTS == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
    assert SCORES == (
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
    )


# v1 `getDefaultPlugins`' multiPoint list, in its order, with DynamicResources (added by its feature gate).
UPSTREAM_DEFAULTS = (
    "SchedulingGates",
    "PrioritySort",
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "EBSLimits",
    "GCEPDLimits",
    "NodeVolumeLimits",
    "AzureDiskLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
    "DynamicResources",
    "DefaultPreemption",
    "NodeResourcesBalancedAllocation",
    "ImageLocality",
    "DefaultBinder",
)


def test_a_name_is_in_exactly_one_map() -> None:
    names = [*IN_TREE, *BUILT_IN, *NOT_MODELLED]
    assert sorted(names) == sorted(UPSTREAM_DEFAULTS)
    assert [name for name in UPSTREAM_DEFAULTS if name in BUILT_IN] == list(BUILT_IN)


def test_the_built_in_plugins_serve_upstreams_extension_points() -> None:
    """Each plugin's Go type: PrioritySort a QueueSortPlugin, SchedulingGates a PreEnqueuePlugin,
    NodeName a PreFilter and FilterPlugin, DefaultPreemption a PostFilter (and, for asynchronous
    preemption, PreEnqueue) plugin, DefaultBinder a BindPlugin."""
    assert {name: (b.point, *b.also) for name, b in BUILT_IN.items()} == {
        "SchedulingGates": ("preEnqueue",),
        "PrioritySort": ("queueSort",),
        "NodeName": ("filter", "preFilter"),
        "DefaultPreemption": ("postFilter", "preEnqueue"),
        "DefaultBinder": ("bind",),
    }


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("PrioritySort", "exactly one QueueSort plugin"),
        ("DefaultBinder", "at least one Bind plugin"),
        ("SchedulingGates", "no queue without the gates"),
    ],
)
def test_a_profile_cannot_do_without_the_queues_order_and_gate_and_the_binder(name: str, why: str) -> None:
    """Upstream's NewFramework refuses a profile whose queueSort list is not one plugin long, or whose
    bind list is empty; skenario has no other of either, and no queue without the gates."""
    problem = cannot_disable(name)
    assert problem is not None and problem.startswith(f"{name} cannot be disabled") and why in problem


@pytest.mark.parametrize("name", ["DefaultPreemption", "NodeName", "NodeResourcesFit", "VolumeRestrictions"])
def test_preemption_and_node_name_may_be_turned_off(name: str) -> None:
    assert cannot_disable(name) is None


@pytest.mark.parametrize("name", list(IN_TREE))
def test_each_plugin_carries_its_registered_name_and_serves_its_extension_points(name: str) -> None:
    filters, scores = new_plugins()
    registration = IN_TREE[name]
    assert (name in filters, name in scores) == (registration.filter, registration.score)
    snap = ClusterSnapshot([NodeSpec("a", cpu=1000, memory=1000), NodeSpec("b", cpu=2000, memory=1000)])
    pod = PodSpec("p", cpu=100, memory=100)
    nodes = np.arange(2, dtype=np.int64)
    if registration.filter:
        assert filters[name].name == name
        assert len(filters[name].filter(pod, snap, nodes).codes) == 2
    if registration.score:
        assert scores[name].name == name
        assert len(scores[name].score(pod, snap, nodes)) == 2
    else:
        assert registration.weight == 0


def test_a_plugin_with_both_points_is_one_instance() -> None:
    filters, scores = new_plugins()
    for name in set(filters) & set(scores):
        assert filters[name] is scores[name]


def test_args_reach_the_plugin() -> None:
    _, scores = new_plugins({"NodeResourcesFit": {"strategy": "MostAllocated"}})
    # MostAllocated on an empty 1000m / 1000-byte node for 500m and 500 bytes: (50 + 50) / 2 = 50;
    # LeastAllocated would also give 50, so a fuller node tells them apart: 900m / 900 bytes on it
    # already, 100m / 100 bytes more -> MostAllocated 100, LeastAllocated 0.
    snap = ClusterSnapshot([NodeSpec("n", cpu=1000, memory=1000)])
    snap.assume(PodSpec("busy", cpu=900, memory=900), 0)
    pod = PodSpec("p", cpu=100, memory=100)
    assert scores["NodeResourcesFit"].score(pod, snap, np.arange(1)).tolist() == [100]
    _, default = new_plugins()
    assert default["NodeResourcesFit"].score(pod, snap, np.arange(1)).tolist() == [0]
