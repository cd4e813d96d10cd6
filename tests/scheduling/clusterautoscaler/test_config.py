"""The cluster autoscaler's configuration: upstream's flag defaults, and bad settings refused by name.

The defaults are those of cluster-autoscaler's config/const.go and config/flags/flags.go.
"""

from __future__ import annotations

from typing import Any

import pytest

from skenario.core.time import MINUTE, SECOND
from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.objects import HOSTNAME_LABEL
from tests.scheduling.clusterautoscaler.builders import DEFAULTS, GiB, node


def test_defaults_are_upstreams() -> None:
    # config/const.go and config/flags/flags.go of cluster-autoscaler.
    assert DEFAULTS.scan_interval == 10 * SECOND
    assert DEFAULTS.scale_down_utilization_threshold == 0.5
    assert DEFAULTS.scale_down_gpu_utilization_threshold == 0.5
    assert DEFAULTS.scale_down_unneeded_time == 10 * MINUTE
    assert DEFAULTS.scale_down_delay_after_add == 10 * MINUTE
    assert DEFAULTS.scale_down_delay_after_delete == 0
    assert DEFAULTS.scale_down_delay_after_failure == 3 * MINUTE
    assert DEFAULTS.max_node_provision_time == 15 * MINUTE
    assert DEFAULTS.expanders == ("least-waste",)
    assert DEFAULTS.max_nodes_total == 0
    assert DEFAULTS.max_nodes_per_scale_up == 1000
    assert DEFAULTS.scale_down_enabled is True
    assert DEFAULTS.scale_down_parallelism == 10
    assert DEFAULTS.max_drain_parallelism == 1


def test_the_deprecated_bulk_delete_flag_replaces_the_parallelism_when_set() -> None:
    assert CaSettings(max_empty_bulk_delete=3).scale_down_parallelism == 3


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"expander": "priority"}, "expander"),  # not implemented
        ({"expander": "least-waste,least-waste"}, "expander"),
        ({"expander": ""}, "expander"),
        ({"scale_down_utilization_threshold": 1.5}, "scale_down_utilization_threshold"),
        ({"scan_interval": 0}, "scan_interval"),
        ({"scale_down_delay_after_add": -1}, "scale_down_delay_after_add"),
        ({"max_nodes_per_scale_up": 0}, "max_nodes_per_scale_up"),
    ],
)
def test_bad_settings_are_refused_by_name(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        CaSettings(**kwargs)


def test_an_expander_chain_parses() -> None:
    assert CaSettings(expander="most-pods, least-waste").expanders == ("most-pods", "least-waste")


@pytest.mark.parametrize(
    ("min_size", "max_size", "field"),
    [(-1, 3, "min_size"), (0, 0, "max_size"), (4, 3, "min_size")],
)
def test_bad_group_sizes_are_refused_by_name(min_size: int, max_size: int, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        NodeGroup("g", node("t", 1000), min_size, max_size)


def test_a_new_node_is_the_template_under_its_own_name() -> None:
    g = NodeGroup("pool", node("t", 2000, labels={"tier": "web"}), 0, 5)
    n = g.new_node(3)
    assert n.name == "pool-3"
    assert n.labels == {"tier": "web", HOSTNAME_LABEL: "pool-3"}
    assert (n.cpu, n.memory, n.pods) == (2000, 8 * GiB, 110)
