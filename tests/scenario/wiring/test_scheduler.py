"""The scenario's kube-scheduler profile: plugin args from pluginConfig reach the plugins, and a profile
without DefaultPreemption reaches the run as no preemption."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from skenario.scenario.format.scheduler import SchedulerSpec
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from skenario.scenario.wiring.scheduler import build_profile
from skenario.scheduling.plugins.interpodaffinity import InterPodAffinityPlugin
from skenario.scheduling.pods import PodEnd


def profile_with(config: list[dict[str, Any]]) -> Any:
    spec = SchedulerSpec.model_validate({"profiles": [{"pluginConfig": config}]})
    return build_profile(spec, Path("."))


def affinity_plugin(profile: Any) -> InterPodAffinityPlugin:
    [plugin] = [p for p in profile.filters if isinstance(p, InterPodAffinityPlugin)]
    return plugin


def test_inter_pod_affinity_args_have_upstreams_defaults() -> None:
    """SetDefaults_InterPodAffinityArgs: hardPodAffinityWeight 1."""
    plugin = affinity_plugin(profile_with([]))
    assert (plugin.hard_pod_affinity_weight, plugin.ignore_preferred_terms_of_existing_pods) == (1, False)


def test_inter_pod_affinity_args_are_set_from_plugin_config() -> None:
    args = {"hardPodAffinityWeight": 50, "ignorePreferredTermsOfExistingPods": True}
    plugin = affinity_plugin(profile_with([{"name": "InterPodAffinity", "args": args}]))
    assert (plugin.hard_pod_affinity_weight, plugin.ignore_preferred_terms_of_existing_pods) == (50, True)


def test_a_hard_pod_affinity_weight_out_of_range_is_refused() -> None:
    """ValidateInterPodAffinityArgs: hardPodAffinityWeight in 0..100."""
    with pytest.raises(ValidationError, match="100"):
        profile_with([{"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}])


# -- DefaultPreemption on and off -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plugins", "preemption"),
    [
        (None, True),
        ({"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}, False),
        ({"postFilter": {"disabled": [{"name": "*"}]}}, False),
        ({"multiPoint": {"disabled": [{"name": "DefaultPreemption"}]}}, False),
        ({"postFilter": {"disabled": [{"name": "*"}], "enabled": [{"name": "DefaultPreemption"}]}}, True),
        ({"filter": {"disabled": [{"name": "NodeName"}]}}, True),
    ],
)
def test_the_profile_carries_whether_default_preemption_is_on(plugins: Any, preemption: bool) -> None:
    profile = [{"plugins": plugins}] if plugins is not None else [{}]
    assert build_profile(SchedulerSpec.model_validate({"profiles": profile}), Path(".")).preemption is preemption


def test_disabling_node_name_leaves_the_filters_as_they_were() -> None:
    """NodeName is no plugin object here: the filters run are the default profile's either way."""
    default = build_profile(SchedulerSpec.model_validate({}), Path("."))
    spec = SchedulerSpec.model_validate({"profiles": [{"plugins": {"filter": {"disabled": [{"name": "NodeName"}]}}}]})
    assert [f.name for f in build_profile(spec, Path(".")).filters] == [f.name for f in default.filters]


# One 1-core node: `web` (priority 0) runs its one 1-core pod from the start; at 5 s `urgent`
# (priority 100) asks for one 1-core pod too. With DefaultPreemption, urgent-0 evicts web-0 and
# takes the node (web's replacement then waits); without it, urgent-0 waits and web-0 runs on.
PREEMPTING = {
    "apiVersion": "skenario.dev/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "web"},
    "spec": {
        "duration": "10s",
        "seed": 1,
        "workload": {"replicas": 1, "resources": {"requests": {"cpu": 1}}, "request": {"cpuTime": "10ms"}},
        "traffic": {"type": "constant", "rate": "1/s"},
        "cluster": {"nodes": [{"name": "node", "cpu": 1, "memory": "4Gi"}]},
        "workloads": [
            {
                "name": "urgent",
                "workload": {
                    "replicas": 0,
                    "resources": {"requests": {"cpu": 1}},
                    "request": {"cpuTime": "10ms"},
                    "pod": {"priority": 100},
                },
                "traffic": {"type": "constant", "rate": "1/s"},
            }
        ],
        "events": [{"id": "urgent", "at": "5s", "patch": {"target": "workload/urgent", "patch": {"replicas": 1}}}],
    },
}


def run_preempting(scheduler: dict[str, Any] | None) -> dict[str, Any]:
    document = yaml.safe_load(yaml.safe_dump(PREEMPTING))
    if scheduler is not None:
        document["spec"]["scheduler"] = scheduler
    simulation = Simulation(parse_scenario(yaml.safe_dump(document)))
    simulation.run()
    assert simulation.placement is not None
    return {
        "pods": simulation.placement.controller.pods,
        "preempted": [e.pod for e in simulation.placement.controller.timeline if e.kind == "PodPreempted"],
    }


def test_with_default_preemption_the_urgent_pod_evicts_the_running_one() -> None:
    run = run_preempting(None)
    assert run["preempted"] == ["web-0"]
    assert run["pods"]["urgent-0"].node == "node"
    assert run["pods"]["web-0"].end is PodEnd.PREEMPTED


@pytest.mark.parametrize("disabled", ["DefaultPreemption", "*"])
def test_without_default_preemption_the_urgent_pod_waits_and_the_running_one_stays(disabled: str) -> None:
    run = run_preempting({"profiles": [{"plugins": {"postFilter": {"disabled": [{"name": disabled}]}}}]})
    assert run["preempted"] == []
    urgent, web = run["pods"]["urgent-0"], run["pods"]["web-0"]
    assert (urgent.node, urgent.bound_at) == (None, None)
    assert [(a.selected, a.nominated) for a in urgent.attempts] == [(None, None)]
    assert (web.node, web.end, web.preempted_at) == ("node", None, None)
