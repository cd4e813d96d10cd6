"""The cluster objects of a KEP-140 scenario, validated as the API server validates them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from skenario.scenario.format.manifests.kube import PriorityClassManifest


def priority_class(name: str, value: int) -> PriorityClassManifest:
    document = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}}
    return PriorityClassManifest.model_validate({**document, "value": value})


@pytest.mark.parametrize(
    ("name", "value"),
    # pkg/apis/scheduling: the two built-in classes, and the highest a user's class may have.
    [("system-cluster-critical", 2_000_000_000), ("system-node-critical", 2_000_001_000), ("high", 1_000_000_000)],
)
def test_the_system_classes_and_user_classes_up_to_a_billion_are_valid(name: str, value: int) -> None:
    assert priority_class(name, value).value == value


def test_a_user_class_above_a_billion_is_refused() -> None:
    """ValidatePriorityClass: above HighestUserDefinablePriority only for system- names."""
    with pytest.raises(ValidationError, match="only system- classes"):
        priority_class("urgent", 1_000_000_001)
