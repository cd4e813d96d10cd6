"""A policy/v1 PodDisruptionBudget, read for what the simulation needs: its bounds and its unhealthy-pod policy.

In a multi-document scenario file it becomes the workload's `spec.disruptionBudget`; its selector
is taken to select the workload's pods (a scenario has one workload).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from skenario.scenario.format.base import Loose, Spec


class PodDisruptionBudgetSpec(Spec):
    """The manifest's `spec`: `minAvailable` or `maxUnavailable`, and `unhealthyPodEvictionPolicy`."""

    model_config = ConfigDict(extra="allow", frozen=True)

    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    selector: Loose | None = None
    unhealthy_pod_eviction_policy: Literal["IfHealthyBudget", "AlwaysAllow"] | None = None

    def as_budget(self) -> dict[str, Any]:
        """The scenario's `disruptionBudget` section this spec stands for."""
        fields = {
            "minAvailable": self.min_available,
            "maxUnavailable": self.max_unavailable,
            "unhealthyPodEvictionPolicy": self.unhealthy_pod_eviction_policy,
        }
        return {key: value for key, value in fields.items() if value is not None}


class PodDisruptionBudgetManifest(Spec):
    """A whole `kind: PodDisruptionBudget` document of `apiVersion: policy/v1`."""

    model_config = ConfigDict(extra="allow", frozen=True)

    api_version: Literal["policy/v1"]
    kind: Literal["PodDisruptionBudget"]
    spec: PodDisruptionBudgetSpec = Field(default_factory=lambda: PodDisruptionBudgetSpec.model_validate({}))
