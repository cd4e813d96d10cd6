"""An autoscaling.k8s.io/v1 VerticalPodAutoscaler, read as the VPA's CRD validation reads it.

CPU and memory are simulated (memory when the workload models it): `minAllowed` / `maxAllowed` of
the container policy that applies (the one naming the workload's container, else the one named
`*`), its `mode`, `controlledResources` (default both; a resource left out is left alone),
`controlledValues`, and `updatePolicy.updateMode` (default `Auto`, which today behaves as
`Recreate`). Other resources in the policies are accepted and ignored; `metadata`, `targetRef`
and `status` are read loosely.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from skenario.autoscalers.base import DEFAULT_CONTAINER
from skenario.autoscalers.vpa.controller import VPASpec
from skenario.autoscalers.vpa.recommender import ContainerResourcePolicy
from skenario.autoscalers.vpa.updater import UpdateMode
from skenario.scenario.format.base import Loose, Spec
from skenario.scenario.format.units import ByteQuantity, CpuQuantity


class ResourceList(Spec):
    """A `v1.ResourceList` (a policy's minAllowed / maxAllowed): cpu and memory are read, the rest accepted."""

    model_config = ConfigDict(extra="allow", frozen=True)  # others (ephemeral storage...): accepted, not simulated

    cpu: CpuQuantity | None = None
    memory: ByteQuantity | None = None


class ContainerPolicy(Spec):
    container_name: str = Field("*", min_length=1)
    mode: Literal["Auto", "Off"] = "Auto"
    min_allowed: ResourceList | None = None
    max_allowed: ResourceList | None = None
    controlled_resources: list[str] | None = None
    controlled_values: Literal["RequestsAndLimits", "RequestsOnly"] = "RequestsAndLimits"

    @model_validator(mode="after")
    def _min_not_above_max(self) -> ContainerPolicy:
        for resource in ("cpu", "memory"):
            low = getattr(self.min_allowed, resource) if self.min_allowed is not None else None
            high = getattr(self.max_allowed, resource) if self.max_allowed is not None else None
            if low is not None and high is not None and low > high:
                raise ValueError(f"minAllowed.{resource} must not be greater than maxAllowed.{resource}")
        return self


class ResourcePolicy(Spec):
    container_policies: list[ContainerPolicy] = Field(default_factory=list)


class UpdatePolicy(Spec):
    update_mode: Literal["Off", "Initial", "Recreate", "Auto", "InPlaceOrRecreate"] = "Auto"
    min_replicas: int | None = Field(None, gt=0)


class VPASpecModel(Spec):
    """`spec` of a VerticalPodAutoscaler."""

    target_ref: Loose | None = None
    update_policy: UpdatePolicy = Field(default_factory=lambda: UpdatePolicy.model_validate({}))
    resource_policy: ResourcePolicy | None = None
    recommenders: list[Loose] | None = None

    def build(self, container: str = DEFAULT_CONTAINER) -> VPASpec:
        """The VPA for a workload whose pods' one container is `container`."""
        policy = self._policy(container)
        resources = frozenset({"cpu", "memory"})
        if policy is not None and policy.controlled_resources is not None:
            resources = frozenset(policy.controlled_resources) & resources
        if policy is not None and (policy.mode == "Off" or not resources):
            mode = UpdateMode.OFF
        else:
            mode = UpdateMode(self.update_policy.update_mode)
        cpu = memory = None
        if policy is not None:
            low, high = policy.min_allowed, policy.max_allowed
            cpu = ContainerResourcePolicy(low.cpu if low else None, high.cpu if high else None)
            memory = ContainerResourcePolicy(low.memory if low else None, high.memory if high else None)
        controlled = policy.controlled_values if policy is not None else "RequestsAndLimits"
        return VPASpec(
            update_mode=mode,
            policy=cpu,
            controlled_values=controlled,
            controlled_resources=resources,
            memory_policy=memory,
        )

    def unmatched_policies(self, container: str) -> tuple[str, str, str] | None:
        """Policies that name containers the simulated pod lacks, and none for it nor `*`: upstream
        accepts them and applies none, which in a simulation is a misnamed container, not a choice."""
        policies = self.resource_policy.container_policies if self.resource_policy is not None else []
        if not policies or self._policy(container) is not None:
            return None
        return (
            "resourcePolicy.containerPolicies.0.containerName",
            f"no container policy names the workload's container '{container}' (and none is '*'), so the VPA "
            "would apply none; name it here, or set workload.container",
            policies[0].container_name,
        )

    def _policy(self, container: str) -> ContainerPolicy | None:
        """`GetContainerResourcePolicy`: the policy naming the container, else the `*` one."""
        policies = self.resource_policy.container_policies if self.resource_policy is not None else []
        default = None
        for policy in policies:
            if policy.container_name == container:
                return policy
            if policy.container_name == "*":
                default = policy
        return default


class VerticalPodAutoscalerManifest(Spec):
    """A whole `kind: VerticalPodAutoscaler` document of `apiVersion: autoscaling.k8s.io/v1`."""

    api_version: Literal["autoscaling.k8s.io/v1"]
    kind: Literal["VerticalPodAutoscaler"]
    metadata: Loose | None = None
    spec: VPASpecModel
    status: Loose | None = None
