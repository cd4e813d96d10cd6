"""A `v1` Pod and pod template, read for everything kube-scheduler reads, and turned into a PodSpec.

Containers, init containers and sidecars (init containers with `restartPolicy: Always`), pod
overhead, `priorityClassName`, node and pod (anti-)affinity, tolerations, topology spread, node
selector, `schedulingGates`, host ports, images and persistent volume claims. Fields skenario does
not use (command, env, probes, status) are allowed and ignored, so a real manifest reads as it is.

The request is what kube-scheduler counts (`resourcehelper.PodRequests` in
component-helpers/resource/helpers.go, as `framework.calculateResource` calls it): the sum of the
containers and the sidecars, or the largest init-container stage if that is larger (a stage is an
init container plus the sidecars started before it), plus overhead. The scoring plugins' request is
the same with 100m CPU and 200 MiB memory in place of a container's missing request
(`NonMissingContainerRequests`). As the API server defaults it, a container with a limit and no
request requests its limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from skenario.scenario.format.base import Spec
from skenario.scenario.format.cluster import AffinitySpec, LabelMap, SpreadSpec, TolerationSpec
from skenario.scenario.format.units import MilliQuantity
from skenario.scheduling.affinity import label_key_problem, label_value_problem
from skenario.scheduling.objects import HostPort, PodSpec
from skenario.scheduling.snapshot import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST

DEFAULT_NAMESPACE = "default"
DEFAULT_SCHEDULER = "default-scheduler"
# Resources the scheduler's fit does not compare as skenario models them: local storage and huge pages.
UNMODELLED_RESOURCES = ("ephemeral-storage", "storage")


class _Open(Spec):
    """A part of a Kubernetes object: the fields skenario reads are checked, any others ignored."""

    model_config = ConfigDict(extra="allow", frozen=True)


class ObjectMeta(_Open):
    name: str = Field("", description="The object's name (or generateName's prefix, with a suffix added).")
    generate_name: str = ""
    namespace: str = DEFAULT_NAMESPACE
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _labels(self) -> ObjectMeta:
        for key, value in self.labels.items():
            problem = label_key_problem(key) or label_value_problem(value)
            if problem is not None:
                raise ValueError(problem)
        return self


class ResourceRequirements(_Open):
    requests: dict[str, MilliQuantity] = Field(default_factory=dict)
    limits: dict[str, MilliQuantity] = Field(default_factory=dict)

    def effective_requests(self) -> dict[str, int]:
        """Requests in milli-units, a resource with only a limit requesting its limit (API server defaulting)."""
        return {**self.limits, **self.requests}


class ContainerPort(_Open):
    container_port: int = Field(ge=1, le=65535)
    host_port: int | None = Field(None, ge=0, le=65535)
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"
    host_ip: str = ""


class Container(_Open):
    name: str = Field(min_length=1)
    image: str = ""
    resources: ResourceRequirements | None = None
    ports: list[ContainerPort] = Field(default_factory=list)
    restart_policy: Literal["Always"] | None = Field(None, description="On an init container: a sidecar.")

    def requests(self) -> dict[str, int]:
        return self.resources.effective_requests() if self.resources is not None else {}


class SchedulingGate(_Open):
    name: str = Field(min_length=1)


class ClaimSource(_Open):
    claim_name: str = Field(min_length=1)


class Volume(_Open):
    name: str = Field(min_length=1)
    persistent_volume_claim: ClaimSource | None = None


class PodSpecManifest(_Open):
    """`v1.PodSpec`, the fields the scheduler reads."""

    containers: list[Container] = Field(min_length=1)
    init_containers: list[Container] = Field(default_factory=list)
    overhead: dict[str, MilliQuantity] = Field(default_factory=dict)
    node_name: str = ""
    node_selector: LabelMap = Field(default_factory=dict)
    affinity: AffinitySpec | None = None
    tolerations: list[TolerationSpec] = Field(default_factory=list)
    topology_spread_constraints: list[SpreadSpec] = Field(default_factory=list)
    priority_class_name: str = ""
    priority: int | None = None
    preemption_policy: Literal["PreemptLowerPriority", "Never"] | None = None
    scheduling_gates: list[SchedulingGate] = Field(default_factory=list)
    scheduler_name: str = DEFAULT_SCHEDULER
    volumes: list[Volume] = Field(default_factory=list)

    def requests(self) -> tuple[dict[str, int], dict[str, int]]:
        """The pod's request and the scores' request, in milli-units by resource (`PodRequests`)."""
        return _pod_requests(self, non_missing=False), _pod_requests(self, non_missing=True)

    def build(
        self,
        name: str,
        namespace: str,
        labels: Mapping[str, str],
        priority: int,
        preemption_policy: str,
        *,
        controlled: bool,
    ) -> PodSpec:
        """The pod as the scheduler sees it, with its priority resolved from its PriorityClass."""
        requests, scored = self.requests()
        extended = {
            resource: -(-amount // 1000)
            for resource, amount in requests.items()
            if resource not in ("cpu", "memory") and resource not in UNMODELLED_RESOURCES
            if not resource.startswith("hugepages-") and amount
        }
        affinity = self.affinity or AffinitySpec()
        pod_affinity, pod_anti_affinity = affinity.build_pods(labels)
        sidecars = [c for c in self.init_containers if c.restart_policy == "Always"]
        ports = tuple(  # `util.GetHostPorts`: the containers' and the sidecars'
            HostPort(port.host_port, port.protocol, port.host_ip or "0.0.0.0")
            for container in (*self.containers, *sidecars)
            for port in container.ports
            if port.host_port
        )
        return PodSpec(
            name=name,
            cpu=requests.get("cpu"),
            memory=_bytes(requests.get("memory")),
            extended=extended,
            priority=priority,
            preemption_policy=preemption_policy,
            namespace=namespace,
            labels=dict(labels),
            tolerations=tuple(t.build() for t in self.tolerations),
            affinity=affinity.build_node(self.node_selector),
            spread=tuple(c.build(dict(labels)) for c in self.topology_spread_constraints),
            controlled=controlled,
            pod_affinity=pod_affinity,
            pod_anti_affinity=pod_anti_affinity,
            host_ports=ports,
            images=tuple(c.image for c in (*self.init_containers, *self.containers) if c.image),
            claims=tuple(v.persistent_volume_claim.claim_name for v in self.volumes if v.persistent_volume_claim),
            scheduling_gates=tuple(g.name for g in self.scheduling_gates),
            non_zero=(scored.get("cpu", 0), _bytes(scored.get("memory")) or 0),
        )


def _bytes(milli: int | None) -> int | None:
    return None if milli is None else -(-milli // 1000)


def _with_defaults(requests: dict[str, int]) -> dict[str, int]:
    """`applyNonMissing`: a container's missing cpu or memory request counted as the scheduler's default."""
    return {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST * 1000, **requests}


def _add(total: dict[str, int], more: Mapping[str, int]) -> None:
    for resource, amount in more.items():
        total[resource] = total.get(resource, 0) + amount


def _pod_requests(spec: PodSpecManifest, *, non_missing: bool) -> dict[str, int]:
    """`resourcehelper.PodRequests`: containers summed; each init container's stage (itself plus the
    sidecars before it) and the sidecars' running total bounding it from below; overhead added."""
    totals: dict[str, int] = {}
    for container in spec.containers:
        requests = container.requests()
        _add(totals, _with_defaults(requests) if non_missing else requests)
    sidecars: dict[str, int] = {}
    init: dict[str, int] = {}
    for container in spec.init_containers:
        requests = container.requests()
        requests = _with_defaults(requests) if non_missing else requests
        if container.restart_policy == "Always":
            _add(totals, requests)
            _add(sidecars, requests)
            stage = dict(sidecars)
        else:
            stage = dict(requests)
            _add(stage, sidecars)
        for resource, amount in stage.items():
            init[resource] = max(init.get(resource, 0), amount)
    for resource, amount in init.items():
        totals[resource] = max(totals.get(resource, 0), amount)
    _add(totals, spec.overhead)
    return totals


class PodTemplate(_Open):
    """`v1.PodTemplateSpec`: a Deployment's, ReplicaSet's or Job's pods."""

    metadata: ObjectMeta = Field(default_factory=lambda: ObjectMeta.model_validate({}))
    spec: PodSpecManifest


class PodManifest(_Open):
    """A whole `kind: Pod` document of `apiVersion: v1`."""

    api_version: Literal["v1"]
    kind: Literal["Pod"]
    metadata: ObjectMeta
    spec: PodSpecManifest
