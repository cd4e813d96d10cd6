"""The cluster section's own checks: node names unique, and a node count that is checked at once."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from skenario.scenario.format.cluster import MAX_NODES_PER_ENTRY, Cluster


def test_names_made_from_counts_clash_with_named_nodes() -> None:
    # `web` with count 3 names web-0, web-1, web-2: a node called web-1 clashes with it.
    with pytest.raises(ValidationError, match="names must be unique: web-1"):
        Cluster.model_validate(
            {
                "nodes": [
                    {"name": "web", "count": 3, "cpu": 1, "memory": "1Gi"},
                    {"name": "web-1", "cpu": 1, "memory": "1Gi"},
                ]
            }
        )


def test_a_count_past_the_bound_is_refused_without_making_the_nodes() -> None:
    entry = {"name": "n", "count": MAX_NODES_PER_ENTRY + 1, "cpu": 1, "memory": "1Gi"}
    with pytest.raises(ValidationError, match="less than or equal to 100000"):
        Cluster.model_validate({"nodes": [entry]})
    assert len(Cluster.model_validate({"nodes": [{**entry, "count": 20_000}]}).static_nodes()) == 20_000
