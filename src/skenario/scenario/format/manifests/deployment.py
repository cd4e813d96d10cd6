"""An apps/v1 Deployment, read for what the simulation needs: replicas and the container's resources.

`workload.deployment: web.yaml` in a scenario takes `spec.replicas` (default 1, as the API
server) and the CPU and memory `resources` of the container named by `workload.container` (or
the only / first container) from the user's own manifest; fields the scenario sets itself win.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import ConfigDict, Field

from skenario.errors import ScenarioError
from skenario.scenario.format.base import Spec
from skenario.scenario.format.units import ByteQuantity, CpuQuantity


class _Quantities(Spec):
    model_config = ConfigDict(extra="allow", frozen=True)  # ephemeral storage and the rest are not simulated

    cpu: CpuQuantity | None = Field(None, gt=0)
    memory: ByteQuantity | None = Field(None, gt=0)


class ContainerResources(Spec):
    model_config = ConfigDict(extra="allow", frozen=True)

    requests: _Quantities | None = None
    limits: _Quantities | None = None


class ReadResources(NamedTuple):
    """A container's requests and limits (millicores and bytes), a request left out defaulted to its limit."""

    cpu_request: int | None = None
    cpu_limit: int | None = None
    memory_request: int | None = None
    memory_limit: int | None = None


class DeploymentContainer(Spec):
    """A container of the Deployment's pod template (`v1.Container`): its name and its CPU."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    resources: ContainerResources | None = None
    readiness_probe: dict[str, Any] | None = None
    startup_probe: dict[str, Any] | None = None
    image_pull_policy: Literal["IfNotPresent", "Always", "Never"] | None = None


class DeploymentPodSpec(Spec):
    """The pod template's `v1.PodSpec`: skenario reads its containers."""

    model_config = ConfigDict(extra="allow", frozen=True)

    containers: list[DeploymentContainer] = Field(min_length=1)


class DeploymentPodTemplate(Spec):
    """The Deployment's `spec.template` (`v1.PodTemplateSpec`)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    spec: DeploymentPodSpec


class DeploymentSpec(Spec):
    model_config = ConfigDict(extra="allow", frozen=True)

    replicas: int = Field(1, ge=0)
    template: DeploymentPodTemplate


class DeploymentManifest(Spec):
    """A whole `kind: Deployment` document of `apiVersion: apps/v1`."""

    model_config = ConfigDict(extra="allow", frozen=True)

    api_version: Literal["apps/v1"]
    kind: Literal["Deployment"]
    spec: DeploymentSpec

    def container_name(self, container: str | None) -> str:
        """The container the simulation models: the one named, else the first."""
        return container if container is not None else self.spec.template.spec.containers[0].name

    def container(self, container: str | None, *, file: str) -> DeploymentContainer:
        """The named container, else the first; an unknown name is an error naming the ones there."""
        containers = self.spec.template.spec.containers
        if container is None:
            return containers[0]
        match = [c for c in containers if c.name == container]
        if not match:
            names = ", ".join(c.name for c in containers)
            raise ScenarioError(
                f"the Deployment has no container of that name; it has {names}",
                file=file,
                field="workload.container",
                value=container,
            )
        return match[0]

    def resources(self, container: str | None, *, file: str) -> ReadResources:
        """The named (or only / first) container's CPU and memory requests and limits."""
        resources = self.container(container, file=file).resources
        if resources is None:
            return ReadResources()
        none = _Quantities.model_validate({})
        requests = resources.requests or none
        limits = resources.limits or none
        # As the API server defaults it: a limit without a request makes the request equal the limit.
        return ReadResources(
            requests.cpu if requests.cpu is not None else limits.cpu,
            limits.cpu,
            requests.memory if requests.memory is not None else limits.memory,
            limits.memory,
        )
