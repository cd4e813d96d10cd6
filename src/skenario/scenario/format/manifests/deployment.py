"""An apps/v1 Deployment, read for what the simulation needs: replicas and the container's CPU.

`workload.deployment: web.yaml` in a scenario takes `spec.replicas` (default 1, as the API
server) and the CPU `resources` of the container named by `workload.container` (or the only /
first container) from the user's own manifest; fields the scenario sets itself win.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from skenario.errors import ScenarioError
from skenario.scenario.format.base import Spec
from skenario.scenario.format.units import CpuQuantity


class _Cpu(Spec):
    model_config = ConfigDict(extra="allow", frozen=True)  # memory and the rest are not simulated

    cpu: CpuQuantity | None = Field(None, gt=0)


class ContainerResources(Spec):
    model_config = ConfigDict(extra="allow", frozen=True)

    requests: _Cpu | None = None
    limits: _Cpu | None = None


class DeploymentContainer(Spec):
    """A container of the Deployment's pod template (`v1.Container`): its name and its CPU."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str
    resources: ContainerResources | None = None


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

    def cpu(self, container: str | None, *, file: str) -> tuple[int | None, int | None]:
        """The named (or only / first) container's CPU request and limit, in millicores."""
        containers = self.spec.template.spec.containers
        chosen = containers[0]
        if container is not None:
            match = [c for c in containers if c.name == container]
            if not match:
                names = ", ".join(c.name for c in containers)
                raise ScenarioError(
                    f"the Deployment has no container of that name; it has {names}",
                    file=file,
                    field="workload.container",
                    value=container,
                )
            chosen = match[0]
        resources = chosen.resources
        if resources is None:
            return None, None
        request = resources.requests.cpu if resources.requests is not None else None
        limit = resources.limits.cpu if resources.limits is not None else None
        # As the API server defaults it: a limit without a request makes the request equal the limit.
        return (request if request is not None else limit), limit
