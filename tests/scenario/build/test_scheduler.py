"""The scenario's kube-scheduler profile: plugin args from pluginConfig reach the plugins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from skenario.scenario.build.scheduler import build_profile
from skenario.scenario.format.scheduler import SchedulerSpec
from skenario.scheduling.plugins.interpodaffinity import InterPodAffinityPlugin


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
