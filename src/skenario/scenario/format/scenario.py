"""The scenario file format: a Kubernetes-style document validated with pydantic.

```yaml
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: quickstart}
spec:
  duration: 10m
  seed: 42
  workload:
    replicas: 4
    resources: {requests: {cpu: 1000m}}
    request: {cpuTime: {distribution: exponential, mean: 200ms}}
  traffic: {type: poisson, rate: 15/s}
```

Fields are camelCase as in Kubernetes manifests; unknown fields are errors, so a typo never passes
silently. Every default below is the seeds' or Kubernetes' own; `model.config` documents each.
`spec.events` is the timeline (`skenario.scenario.format.events`); the run ends at the first `done`
event or at `spec.duration`, whichever comes first.
"""

from __future__ import annotations

import copy
from typing import Any, Literal, NamedTuple

from pydantic import ConfigDict, Field, PrivateAttr, ValidatorFunctionWrapHandler, model_validator

from skenario.autoscalers.base import DEFAULT_CONTAINER
from skenario.core.time import SECOND, format_duration
from skenario.model.activator import BREAKER_QUEUE_DEPTH
from skenario.model.config import (
    PLAIN_BUFFER_CAPACITY,
    ActivatorSpec,
    ClientSpec,
    ClusterSpec,
    CpuScheduling,
    LaunchStage,
    MemorySpec,
    MetricsSource,
    MetricsSpec,
    ReplicaSpec,
    RequestClass,
    RequestSpec,
    RoutingPolicy,
    RoutingSpec,
    StreamSpec,
    WarmUp,
)
from skenario.model.cpu.node import IMPLICIT_NODE_MILLICORES
from skenario.model.disruption import DisruptionBudget
from skenario.model.memory import IMPLICIT_NODE_MEMORY
from skenario.model.probes import ReadinessProbe, StartupProbe
from skenario.scenario.format.autoscalers import (
    AutoscalerSpec,
    KpaAutoscaler,
)
from skenario.scenario.format.base import Spec as _Spec
from skenario.scenario.format.clients import Client
from skenario.scenario.format.cluster import Cluster, PodSchedulingSpec
from skenario.scenario.format.distributions import ConstantDistribution, RandomBytes, RandomDuration
from skenario.scenario.format.events import Event, split_target
from skenario.scenario.format.observed import Observed
from skenario.scenario.format.scheduler import SchedulerSpec
from skenario.scenario.format.traffic import TrafficSpec
from skenario.scenario.format.units import ByteQuantity, CpuQuantity, Duration, Ratio, RunLength

API_VERSION = "skenario.dev/v1alpha1"
MAX_SEED = 2**63 - 1  # what the run store (SQLite) keeps as an integer


def _constant(duration: str) -> ConstantDistribution:
    return ConstantDistribution.model_validate({"distribution": "constant", "value": duration})


class CpuResources(_Spec):
    cpu: CpuQuantity | None = Field(
        None, gt=0, description="CPU, as Kubernetes writes it: '500m', 1, '0.5'. Absent: its limit, else none."
    )
    memory: ByteQuantity | None = Field(
        None,
        ge=0,
        description="Memory, such as '512Mi': what the scheduler reserves, the kubelet's eviction ranking and "
        "an HPA's memory utilisation refer to, and what cost counts.",
    )


class ResourceLimits(_Spec):
    cpu: CpuQuantity | None = Field(
        None, gt=0, description="The most CPU a replica may use (the CFS quota); absent: whatever its node has idle."
    )
    memory: ByteQuantity | None = Field(
        None, gt=0, description="Above this working set the kernel OOM-kills the container (with workload.memory)."
    )


class ProbeSpec(_Spec):
    """A container's `readinessProbe`, as in a Pod spec: its timing, with Kubernetes' defaults.

    The handler (httpGet, tcpSocket, exec, grpc) is accepted and not read: the probe succeeds once
    the application has warmed up (the launch's readiness duration)."""

    model_config = ConfigDict(extra="allow", frozen=True)  # the handler and the rest: accepted, not read

    initial_delay_seconds: int = Field(0, ge=0, description="Probes before this are skipped.")
    period_seconds: int = Field(10, ge=1, description="Between probes, from the container's start.")
    success_threshold: int = Field(1, ge=1, description="Successes in a row to turn Ready.")
    failure_threshold: int = Field(3, ge=1, description="Failures in a row to turn not Ready (not modelled yet).")
    timeout_seconds: int = Field(1, ge=1, description="A probe's timeout (not modelled yet).")

    def build(self) -> ReadinessProbe:
        return ReadinessProbe(self.initial_delay_seconds * SECOND, self.period_seconds * SECOND, self.success_threshold)


class StartupProbeSpec(_Spec):
    """A container's `startupProbe`, as in a Pod spec, with Kubernetes' defaults; the handler is accepted, not read."""

    model_config = ConfigDict(extra="allow", frozen=True)

    initial_delay_seconds: int = Field(0, ge=0, description="Probes before this are skipped.")
    period_seconds: int = Field(10, ge=1, description="Between probes, from the container's start.")
    success_threshold: Literal[1] = Field(1, description="Must be 1 for a startup probe, as Kubernetes requires.")
    failure_threshold: int = Field(3, ge=1, description="Failures in a row before the kubelet kills the container.")
    timeout_seconds: int = Field(1, ge=1, description="A probe's timeout (not modelled).")

    def build(self) -> StartupProbe:
        return StartupProbe(self.initial_delay_seconds * SECOND, self.period_seconds * SECOND, self.failure_threshold)


class WarmUpSpec(_Spec):
    """The container's first moments after it turns ready (and after each restart)."""

    duration: Duration = Field(gt=0, description="How long the warm-up lasts after the pod turns ready.")
    slowdown: float = Field(
        1.0, ge=1, description="Requests admitted meanwhile need this many times their CPU (cold caches, no JIT yet)."
    )
    cpu: CpuQuantity = Field(
        0,
        ge=0,
        le=1000,
        description="CPU the container's own warm-up work (loading, compiling) takes meanwhile, as one thread "
        "sharing the CPU with requests: '500m' for the duration is 0.5 × duration of CPU work. Metrics see it.",
    )

    def build(self) -> WarmUp:
        return WarmUp(self.duration, self.slowdown, self.cpu)


class MemoryUse(_Spec):
    """How much memory the workload's container uses: the working set the kubelet and metrics-server see."""

    baseline: RandomBytes = Field(
        description="While the container runs: '200Mi', or a distribution drawn once per replica."
    )
    per_request: RandomBytes | None = Field(
        None, description="Held by each request on the replica until it leaves: '2Mi', or a distribution."
    )


class ImplicitNode(_Spec):
    """The node each pod runs alone on when the scenario has no spec.cluster."""

    cpu: CpuQuantity = Field(
        IMPLICIT_NODE_MILLICORES,
        gt=0,
        description="The node's cores (default 4, a common node size); a pod requesting more gets a node its size.",
    )
    memory: ByteQuantity = Field(
        IMPLICIT_NODE_MEMORY,
        gt=0,
        description="The node's allocatable memory (default 16Gi): above it the kubelet evicts, 100Mi further "
        "the kernel kills.",
    )


class DisruptionBudgetSpec(_Spec):
    """The workload's PodDisruptionBudget (policy/v1 `spec`): what voluntary evictions must leave running."""

    min_available: int | str | None = Field(
        None, description="Pods that must stay ready: a count, or a percentage of the replicas such as '50%'."
    )
    max_unavailable: int | str | None = Field(
        None, description="Pods that may be unready at once: a count, or a percentage of the replicas."
    )
    unhealthy_pod_eviction_policy: Literal["IfHealthyBudget", "AlwaysAllow"] = Field(
        "IfHealthyBudget", description="When an unready pod may be evicted: while the others are enough, or always."
    )

    @model_validator(mode="after")
    def _one_valid_bound(self) -> DisruptionBudgetSpec:
        self.build()
        for value in (self.min_available, self.max_unavailable):
            if isinstance(value, int) and value < 0:
                raise ValueError(f"a disruption budget's bound must not be negative, got {value}")
        return self

    def build(self) -> DisruptionBudget:
        always = self.unhealthy_pod_eviction_policy == "AlwaysAllow"
        return DisruptionBudget(self.min_available, self.max_unavailable, always_allow_unhealthy=always)


class Resources(_Spec):
    """A container's `resources`, as in a Pod spec: a request left out defaults to its limit, and a
    container with neither is BestEffort (`resources: {}`). Without `resources` at all a replica
    requests 1000m of CPU."""

    requests: CpuResources = Field(default_factory=lambda: CpuResources.model_validate({}))
    limits: ResourceLimits | None = Field(
        None,
        description="CPU: a replica never uses more (the CFS quota); else it may use whatever CPU its node has "
        "idle. Memory: the container is OOM-killed above it.",
    )

    @model_validator(mode="after")
    def _limit_not_below_request(self) -> Resources:
        limits = self.limits
        cpu = self.requests.cpu
        if limits is not None and limits.cpu is not None and cpu is not None and limits.cpu < cpu:
            raise ValueError(f"limits.cpu ({limits.cpu}m) must not be below requests.cpu ({cpu}m)")
        memory = self.requests.memory
        if limits is not None and limits.memory is not None and memory is not None and limits.memory < memory:
            limit = limits.memory
            raise ValueError(f"limits.memory ({limit} bytes) must not be below requests.memory ({memory} bytes)")
        return self

    @property
    def cpu_request(self) -> int:
        """The CPU request in millicores, defaulted to the limit as the API server does; 0: none."""
        cpu = self.requests.cpu
        return cpu if cpu is not None else self.cpu_limit or 0

    @property
    def cpu_limit(self) -> int | None:
        return self.limits.cpu if self.limits is not None else None

    @property
    def memory_limit(self) -> int | None:
        return self.limits.memory if self.limits is not None else None

    @property
    def memory_request(self) -> int | None:
        """The memory request; Kubernetes defaults a request left out to the limit."""
        memory = self.requests.memory
        return memory if memory is not None else self.memory_limit


class RequestWork(_Spec):
    """What each request needs from its replica."""

    cpu_time: RandomDuration = Field(description="CPU time on one full core, shared with other requests.")
    io_time: RandomDuration | None = Field(None, description="Time after the CPU work that uses no CPU.")
    timeout: Duration | None = Field(
        10 * SECOND, gt=0, description="From arrival; a request still unfinished then fails. null: never."
    )


class RequestClassSpec(_Spec):
    """One kind of request: its share of the traffic, its CPU priority, and its own work if it differs."""

    name: str = Field(min_length=1)
    share: float = Field(gt=0, description="Relative share of arrivals (shares need not add up to 1).")
    priority: int = Field(0, description="Served first under a priority cpuScheduling when higher.")
    cpu_time: RandomDuration | None = Field(None, description="CPU time of this class; the workload's when absent.")
    io_time: RandomDuration | None = Field(None, description="IO time of this class; the workload's when absent.")

    def build(self) -> RequestClass:
        return RequestClass(
            self.name,
            self.share,
            self.priority,
            self.cpu_time.build() if self.cpu_time is not None else None,
            self.io_time.build() if self.io_time is not None else None,
        )


class Launch(_Spec):
    """How long each stage of starting a replica takes: a duration or a distribution.

    The defaults add up to the Go Skenario's 5 s launch delay.
    """

    scheduling: RandomDuration = Field(default_factory=lambda: _constant("0s"))
    image_pull: RandomDuration = Field(default_factory=lambda: _constant("0s"))
    container_start: RandomDuration = Field(default_factory=lambda: _constant("1s"))
    readiness: RandomDuration = Field(default_factory=lambda: _constant("4s"))

    def stages(self) -> tuple[LaunchStage, ...]:
        named = (
            ("scheduling", self.scheduling),
            ("imagePull", self.image_pull),
            ("containerStart", self.container_start),
            ("readiness", self.readiness),
        )
        return tuple(
            LaunchStage(name, spec.build())
            for name, spec in named
            if not (isinstance(spec, ConstantDistribution) and spec.value == 0)
        )


class Stream(_Spec):
    """The pods consume a stream or queue: messages wait in the topic until a pod pulls them (model/stream.py)."""

    partitions: int | None = Field(
        None,
        ge=1,
        description="The topic's partitions, spread over the ready consumers as Kafka's range assignor does "
        "(more consumers than partitions leaves some idle). null: one queue every consumer pulls from.",
    )
    in_flight: int = Field(1, ge=1, description="Messages one consumer works on at once.")
    rebalance_pause: RandomDuration = Field(
        default_factory=lambda: _constant("0s"),
        description="When the number of ready consumers changes, all of them stop pulling this long: a consumer "
        "group's rebalance, or a Flink job's restart from its checkpoint in reactive mode.",
    )

    def build(self) -> StreamSpec:
        return StreamSpec(self.partitions, self.in_flight, self.rebalance_pause.build())


class SimulatedPods(NamedTuple):
    """The workload's pods as an autoscaler's manifest is checked against them."""

    container: str
    memory: bool = False  # whether a working set is modelled (spec.workload.memory)
    concurrency: int | None = None  # requests one pod serves at once (containerConcurrency); None: no limit
    stream: bool = False  # whether the pods consume a stream (spec.workload.stream), whose lag is a metric


class Workload(_Spec):
    """The replicas of one service and the requests they serve."""

    replicas: int | None = Field(
        None, ge=0, description="Replicas at the start; they count as desired. From `deployment` when absent."
    )
    deployment: str | dict[str, Any] | None = Field(
        None,
        description="An apps/v1 Deployment giving replicas and the container's CPU resources: a YAML file, "
        "or the manifest inline.",
    )
    container: str | None = Field(
        None,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        max_length=63,
        description="The container the simulation models (an HPA's ContainerResource or a VPA's containerName "
        "names it) and which container of the Deployment to read; when absent, the Deployment's first, else 'app'.",
    )
    initial_ready: bool = Field(True, description="Initial replicas start active instead of launching.")
    resources: Resources = Field(default_factory=lambda: Resources.model_validate({"requests": {"cpu": "1000m"}}))
    concurrency: int | None = Field(
        None, ge=1, description="Requests one replica serves at once (containerConcurrency); null: no limit."
    )
    queue_capacity: int | None = Field(
        None, ge=0, description="Requests that may wait on one replica for a slot; more fail. null: no limit."
    )
    request: RequestWork
    launch: Launch = Field(default_factory=lambda: Launch.model_validate({}))
    termination_grace_period: Duration = Field(
        30 * SECOND, ge=0, description="How long a stopping replica drains before its requests are cut off."
    )
    readiness_probe: ProbeSpec | None = Field(
        None,
        description="The container's readinessProbe: the pod turns ready only at a probe, every periodSeconds "
        "(default 10) from its start, once launch.readiness has passed. Absent: ready when launch.readiness ends "
        "(read from the Deployment manifest when one is given).",
    )
    startup_probe: StartupProbeSpec | None = Field(
        None,
        description="The container's startupProbe: readiness is probed only once it passes (at a probe after "
        "launch.readiness); after failureThreshold failures (default 3, every 10s) the container is killed and "
        "restarts after the crash-loop back-off. Read from the Deployment manifest when one is given.",
    )
    image_pull_policy: Literal["IfNotPresent", "Always"] = Field(
        "IfNotPresent",
        description="With spec.cluster: IfNotPresent (Kubernetes' default for a tagged image) skips "
        "launch.imagePull on a node that has pulled the image before; Always pulls every time.",
    )
    warm_up: WarmUpSpec | None = Field(
        None,
        description="A warm-up after the pod turns ready: slower requests and CPU of its own, which the HPA's "
        "metrics see (its CPU initialization period is for that). null: full speed at once.",
    )
    pre_stop_sleep: Duration = Field(
        0,
        ge=0,
        description="A preStop sleep: a stopping replica keeps accepting requests this long, then drains "
        "(within terminationGracePeriod). 0: none, Kubernetes' default.",
    )
    cpu_scheduling: CpuScheduling = Field(
        CpuScheduling.PROCESSOR_SHARING,
        description="ProcessorSharing (every request on the CPU progresses), PriorityPreemptive or "
        "PriorityNonPreemptive (by requestClasses' priority; FCFS within one).",
    )
    request_classes: list[RequestClassSpec] = Field(
        default_factory=list, description="Kinds of request, drawn by share for each arrival; none: all alike."
    )
    cfs_quota_period: Duration | None = Field(
        None,
        gt=0,
        description="Enforce CPU limits as the kernel does, a quota of CPU time per CFS period (the kubelet's "
        "default period is 100ms), instead of as a smooth cap; without spec.cluster and with ProcessorSharing.",
    )
    node: ImplicitNode | None = Field(
        None,
        description="Without spec.cluster, each pod runs alone on a node of this size (default 4 cores, 16Gi): "
        "a pod without a CPU limit may use all of its cores.",
    )
    memory: MemoryUse | None = Field(
        None,
        description="The container's working set; with it, memory limits OOM-kill, nodes under memory pressure "
        "evict, and HPAs and VPAs can read memory. Absent: memory use is not modelled.",
    )
    pod: PodSchedulingSpec | None = Field(
        None, description="The pods' scheduling fields (priority, tolerations, affinity, spread); with spec.cluster."
    )
    stream: Stream | None = Field(
        None,
        description="The pods consume a stream: each arrival is a message that waits in the topic (its lag) until "
        "a consumer pulls it, at the speed its CPU allows. Messages never time out. null: requests are pushed.",
    )

    @model_validator(mode="after")
    def _replicas_from_somewhere(self) -> Workload:
        if self.replicas is None and self.deployment is None:
            raise ValueError("set 'replicas', or 'deployment' to read them from a Deployment manifest")
        names = [c.name for c in self.request_classes]
        if len(set(names)) != len(names):
            raise ValueError(f"requestClasses need distinct names, got {names}")
        if self.stream is not None and "timeout" in self.request.model_fields_set and self.request.timeout:
            raise ValueError("a stream's messages wait in the topic until consumed: request.timeout must be null")
        return self

    @property
    def container_name(self) -> str:
        """The simulated pod's one container (after `with_deployment`, the Deployment's)."""
        return self.container if self.container is not None else DEFAULT_CONTAINER

    @property
    def simulated(self) -> SimulatedPods:
        """What autoscalers may read of the pods: their container, and whether memory use is modelled."""
        return SimulatedPods(self.container_name, self.memory is not None, self.concurrency, self.stream is not None)

    def cluster_spec(
        self,
        routing: Routing,
        metrics: Metrics,
        disruption_budget: DisruptionBudget | None = None,
        knative: bool = False,
        client: ClientSpec | None = None,
    ) -> ClusterSpec:
        """What the model runs; `knative` puts Knative's activator in front of the pods (a KPA scales them)."""
        request = self.request
        resources = self.resources
        memory = self.memory
        assert self.replicas is not None, "with_deployment() fills in replicas from the manifest"
        return ClusterSpec(
            requests=RequestSpec(
                cpu_time=request.cpu_time.build(),
                io_time=request.io_time.build() if request.io_time is not None else None,
                timeout=None if self.stream is not None else request.timeout,
                classes=tuple(c.build() for c in self.request_classes),
            ),
            replica=ReplicaSpec(
                cpu_request=resources.cpu_request,
                cpu_limit=resources.cpu_limit,
                memory_request=resources.memory_request,
                memory_limit=resources.memory_limit,
                memory=MemorySpec(
                    memory.baseline.build(),
                    memory.per_request.build() if memory.per_request is not None else None,
                    self.node.memory if self.node is not None else IMPLICIT_NODE_MEMORY,
                )
                if memory is not None
                else None,
                concurrency=self.concurrency,
                queue_capacity=self.queue_capacity,
                launch=self.launch.stages(),
                termination_grace=self.termination_grace_period,
                pre_stop_sleep=self.pre_stop_sleep,
                readiness_probe=self.readiness_probe.build() if self.readiness_probe is not None else None,
                startup_probe=self.startup_probe.build() if self.startup_probe is not None else None,
                warm_up=self.warm_up.build() if self.warm_up is not None else None,
                cpu_scheduling=self.cpu_scheduling,
                node_cpu=self.node.cpu if self.node is not None else IMPLICIT_NODE_MILLICORES,
                cfs_quota_period=self.cfs_quota_period,
            ),
            initial_replicas=self.replicas,
            initial_ready=self.initial_ready,
            routing=RoutingSpec(
                RoutingPolicy(routing.policy),
                routing.choices,
                routing.buffer_capacity
                if routing.buffer_capacity is not None
                else (BREAKER_QUEUE_DEPTH if knative else PLAIN_BUFFER_CAPACITY),
                routing.endpoint_propagation.build() if routing.endpoint_propagation is not None else None,
            ),
            metrics=metrics.build(),
            disruption_budget=disruption_budget,
            activator=ActivatorSpec(self.concurrency or 0) if knative else None,
            stream=self.stream.build() if self.stream is not None else None,
            client=client or ClientSpec(),
        )


class Routing(_Spec):
    """How requests reach replicas."""

    policy: Literal["roundRobin", "random", "leastRequests"] = "roundRobin"
    choices: int = Field(2, ge=1, description="leastRequests: replicas compared per request (Envoy: 2).")
    buffer_capacity: int | None = Field(
        None,
        ge=0,
        description="Requests held while no replica is active, or Knative's activator holds; more fail as "
        "buffer_full, 0: fail them. null: 10000 with a KPA (the activator's breakerQueueDepth), else 1000.",
    )
    endpoint_propagation: RandomDuration | None = Field(
        None,
        description="From a replica's deletion until routers (kube-proxy, ingresses, meshes) stop sending it "
        "requests: '1s', or a distribution. Requests it gets once stopped fail as `refused`. null: at once "
        "(production: about a second, with a tail to tens of seconds).",
    )


class Metrics(_Spec):
    """The metrics the HPA and VPA read: metrics-server's (the default) or the Go Skenario's ticks."""

    source: MetricsSource = Field(
        MetricsSource.METRICS_SERVER,
        description="metricsServer: one scrape of all pods every `resolution` (from a seeded phase), CPU as the rate "
        "between a pod's last two points, as metrics-server serves it; ticks: a tick per replica every "
        "`interval`, then `lag` (the Go Skenario's pipeline, faster than a real one).",
    )
    resolution: Duration = Field(
        15 * SECOND, ge=10 * SECOND, description="metricsServer: --metric-resolution (its manifests' 15s)."
    )
    housekeeping: Duration = Field(
        10 * SECOND,
        gt=0,
        description="metricsServer: how often the kubelet refreshes a container's stats (cAdvisor's 10s); a "
        "scrape serves them as of the last refresh, at a phase of its own per pod.",
    )
    scrape_duration: RandomDuration | None = Field(
        None, description="metricsServer: how long a scrape takes before it serves ('1s' or a distribution)."
    )
    interval: Duration = Field(10 * SECOND, gt=0, description="ticks: between a replica's metrics ticks.")
    first_after: Duration = Field(5 * SECOND, ge=0, description="ticks: from activation to a replica's first tick.")
    lag: Duration = Field(4 * SECOND, ge=0, description="ticks: from a tick to the sample reaching the sink.")

    def build(self) -> MetricsSpec:
        return MetricsSpec(
            self.source,
            self.resolution,
            self.housekeeping,
            self.scrape_duration.build() if self.scrape_duration is not None else None,
            self.interval,
            self.first_after,
            self.lag,
        )


class Recording(_Spec):
    """What the run keeps: time series sampled every `interval`."""

    interval: Duration = Field(10 * SECOND, gt=0, description="Between rows of the time series.")


class Slo(_Spec):
    """The service-level objectives runs are judged by (`skenario show`, `compare`, the report)."""

    latency: Duration = Field(gt=0, description="The latency target for the percentile, such as '500ms'.")
    percentile: Literal[50, 95, 99] = Field(99, description="Which latency percentile the target is for.")
    error_rate: Ratio = Field(0.01, ge=0, le=1, description="Most failed / finished requests allowed: 0.01 or '1%'.")


def _check_placement(workload: Workload, on_cluster: bool, where: str) -> None:
    """What a workload's pods may ask for where they run: alone on their own node, or on spec.cluster's."""
    if workload.pod is not None and not on_cluster:
        raise ValueError(f"{where}.pod is for the scheduler: set spec.cluster too")
    if on_cluster and workload.cpu_scheduling is not CpuScheduling.PROCESSOR_SHARING:
        raise ValueError(
            "with spec.cluster, pods share their node's cores by processor sharing; "
            f"{where}.cpuScheduling priorities on shared nodes are not modelled yet"
        )
    quota = workload.cfs_quota_period is not None
    if quota and (on_cluster or workload.cpu_scheduling is not CpuScheduling.PROCESSOR_SHARING):
        raise ValueError(
            f"{where}.cfsQuotaPeriod is modelled for pods alone on their nodes (no spec.cluster) under ProcessorSharing"
        )
    if workload.node is not None and on_cluster:
        raise ValueError(
            f"{where}.node sizes the node of a scenario without spec.cluster; here pods run on spec.cluster's nodes"
        )


class ColocatedWorkload(_Spec):
    """Another workload on `spec.cluster`'s nodes, with its own pods, traffic and autoscalers.

    Its pods compete with the scenario's workload (and each other) for the nodes' room and
    cores; the metrics pipeline, the recording interval, the seed and the timeline are shared.
    Its pods are named `<name>-<id>` and carry the label `app: <name>`.
    """

    name: str = Field(
        pattern=r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
        max_length=63,
        description="A DNS-1035 label naming the workload: its pods, its series and its events' targets.",
    )
    workload: Workload
    traffic: TrafficSpec
    routing: Routing = Field(default_factory=lambda: Routing.model_validate({}))
    autoscalers: tuple[AutoscalerSpec, ...] = Field((), description="Autoscalers acting on this workload.")
    disruption_budget: DisruptionBudgetSpec | None = Field(None, description="This workload's PodDisruptionBudget.")
    client: Client = Field(default_factory=lambda: Client.model_validate({}), description="This workload's clients.")

    def as_spec(self, spec: ScenarioSpec) -> ScenarioSpec:
        """The scenario as this workload sees it: its own objects on the shared cluster, clock and metrics."""
        return spec.model_copy(
            update={
                "workload": self.workload,
                "traffic": self.traffic,
                "routing": self.routing,
                "autoscalers": self.autoscalers,
                "disruption_budget": self.disruption_budget,
                "client": self.client,
                "events": (),
                "workloads": (),
            }
        )


class FluidSettings(_Spec):
    """How a fluid run steps (`spec.mode: fluid`)."""

    step: Duration = Field(
        SECOND,
        gt=0,
        le=15 * SECOND,
        description="How often the traffic is shared out among the replicas again; no longer than the autoscalers' "
        "ticks.",
    )


FLUID_EVENTS = ("traffic", "replica", "metrics", "autoscaler", "done")
"""What a fluid run's events may act on (a workload's patch may change its requests' work, which a fluid
replica keeps)."""


def fluid_refusals(spec: ScenarioSpec) -> list[tuple[str, str]]:
    """What in `spec` a fluid run does not model yet: (field, why); empty when it runs as written."""
    out: list[tuple[str, str]] = []
    workload = spec.workload
    for index, event in enumerate(spec.events):
        kind = split_target(event.body.target)[0] if event.operation != "done" else "done"  # type: ignore[union-attr]
        if kind not in FLUID_EVENTS:
            out.append(
                (f"spec.events.{index}", f"events on {kind}: a fluid run's events are on {', '.join(FLUID_EVENTS)}")
            )
    if spec.client.retries is not None:
        out.append(("spec.client.retries", "client retries"))
    if spec.client.cancel:
        out.append(("spec.client.cancel", "clients that cancel what they gave up on"))
    if spec.routing.endpoint_propagation is not None:
        out.append(("spec.routing.endpointPropagation", "stale endpoints"))
    for name, value, why in (
        ("requestClasses", workload.request_classes, "request classes"),
        ("concurrency", workload.concurrency, "a concurrency limit per replica"),
        ("queueCapacity", workload.queue_capacity, "a queue capacity per replica"),
        ("warmUp", workload.warm_up, "warm-up"),
        ("cfsQuotaPeriod", workload.cfs_quota_period, "CFS quota periods"),
        ("memory", workload.memory, "memory"),
        ("stream", workload.stream, "a stream's consumers"),
    ):
        if value:
            out.append((f"spec.workload.{name}", why))
    if workload.cpu_scheduling is not CpuScheduling.PROCESSOR_SHARING:
        out.append(("spec.workload.cpuScheduling", "priority CPU scheduling"))
    return out


class ScenarioSpec(_Spec):
    mode: Literal["discrete", "fluid"] = Field(
        "discrete",
        description="discrete: every request simulated; fluid: requests as flows, for weeks of traffic in seconds.",
    )
    fluid: FluidSettings = Field(default_factory=lambda: FluidSettings.model_validate({}))
    duration: RunLength | None = Field(
        None, gt=0, description="Simulated time to run, such as '10m'; a `done` event may end the run sooner."
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Every random draw comes from this seed.")
    offset: Duration = Field(
        0,
        ge=0,
        description="Where in the scenario's time the run starts: its traffic from then on, for `duration` (a "
        "critical hour of a long scenario: `skenario run --window`). The run's own clock starts at 0.",
    )
    workload: Workload
    traffic: TrafficSpec
    routing: Routing = Field(default_factory=lambda: Routing.model_validate({}))
    metrics: Metrics = Field(default_factory=lambda: Metrics.model_validate({}))
    recording: Recording = Field(default_factory=lambda: Recording.model_validate({}))
    autoscalers: tuple[AutoscalerSpec, ...] = Field((), description="Autoscalers acting on the workload.")
    events: tuple[Event, ...] = Field((), description="The timeline: timed create, patch, delete and done operations.")
    slo: Slo | None = Field(None, description="Objectives to judge the run by.")
    cluster: Cluster | None = Field(
        None, description="Nodes (and node groups with a cluster autoscaler): replicas then need a node to start."
    )
    scheduler: SchedulerSpec | None = Field(None, description="How pods are placed on spec.cluster's nodes.")
    disruption_budget: DisruptionBudgetSpec | None = Field(
        None, description="The workload's PodDisruptionBudget: the VPA updater's evictions respect it."
    )
    client: Client = Field(
        default_factory=lambda: Client.model_validate({}),
        description="The clients: retries, and whether servers stop work their clients gave up on.",
    )
    observed: Observed | None = Field(
        None,
        description="What a real cluster recorded running this workload (replicas, CPU, lag): `skenario replay` "
        "and `skenario calibrate` compare the run with it.",
    )
    workloads: tuple[ColocatedWorkload, ...] = Field(
        (),
        description="More workloads sharing spec.cluster's nodes and scheduler, each with its own pods, traffic "
        "and autoscalers; events address them as workload/<name>, traffic/<name>, autoscaler/<name>/<autoscaler> "
        "and replica/<name>[/<id>].",
    )

    @model_validator(mode="after")
    def _colocated_workloads(self) -> ScenarioSpec:
        if self.workloads and self.cluster is None:
            raise ValueError("spec.workloads share spec.cluster's nodes: set spec.cluster too")
        names = [entry.name for entry in self.workloads]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"two entries of spec.workloads are named '{twice[0]}'; give each a distinct name")
        for index, entry in enumerate(self.workloads):
            _check_placement(entry.workload, True, f"spec.workloads.{index}.workload")
        return self

    @model_validator(mode="after")
    def _scheduler_needs_nodes(self) -> ScenarioSpec:
        if self.scheduler is not None and self.cluster is None:
            raise ValueError("spec.scheduler places pods on spec.cluster's nodes: set spec.cluster too")
        _check_placement(self.workload, self.cluster is not None, "spec.workload")
        return self

    @model_validator(mode="after")
    def _stream_is_pulled(self) -> ScenarioSpec:
        if self.workload.stream is not None and self.knative:
            raise ValueError(
                "spec.workload.stream: a stream's consumers pull their messages, Knative pushes requests through "
                "its activator; scale a stream with an HPA (or a plugin), not a KPA"
            )
        return self

    @model_validator(mode="after")
    def _offset_is_for_traffic(self) -> ScenarioSpec:
        self.check_offset()
        return self

    def check_offset(self) -> None:
        """A run `offset` into the scenario's time needs its length, and moves only its traffic."""
        if self.offset:
            if self.duration is None:
                raise ValueError("spec.offset starts the run into the scenario's traffic: give spec.duration too")
            for what, value in (("spec.events", self.events), ("spec.observed", self.observed)):
                if value:
                    raise ValueError(f"{what} with spec.offset is not modelled yet: their times are the scenario's")

    @property
    def end(self) -> int | None:
        """When the run ends: the first `done` event or the duration, whichever is sooner; None if neither."""
        ends = [event.at for event in self.events if event.done is not None]
        if self.duration is not None:
            ends.append(self.duration)
        return min(ends) if ends else None

    @property
    def knative(self) -> bool:
        """Whether Knative serves the workload: a KPA scales it, so its activator and queue-proxy are in the path."""
        return any(isinstance(entry, KpaAutoscaler) for entry in self.autoscalers)

    def cluster_spec(self) -> ClusterSpec:
        budget = self.disruption_budget.build() if self.disruption_budget is not None else None
        return self.workload.cluster_spec(self.routing, self.metrics, budget, self.knative, self.client.build())


class Metadata(_Spec):
    name: str = Field(min_length=1)
    description: str | None = None


class Scenario(_Spec):
    """A whole scenario document.

    It keeps the document as written (`document`), because events patch objects as the user wrote
    them: a JSON merge patch needs '250ms', not the nanoseconds it was read into.
    """

    api_version: Literal["skenario.dev/v1alpha1"]
    kind: Literal["Scenario"]
    metadata: Metadata
    spec: ScenarioSpec
    _document: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_document(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        scenario = handler(data)
        if isinstance(data, dict) and isinstance(scenario, Scenario):
            scenario._document = copy.deepcopy(data)
        return scenario

    @model_validator(mode="after")
    def _workload_names(self) -> Scenario:
        for index, entry in enumerate(self.spec.workloads):
            if entry.name == self.metadata.name:
                raise ValueError(
                    f"spec.workloads.{index}.name '{entry.name}' is the scenario's name, which names spec.workload's "
                    "pods; give it another"
                )
        return self

    @property
    def document(self) -> dict[str, Any]:
        """The document as written (a copy): camelCase keys, quantities with their units."""
        return copy.deepcopy(self._document)

    def with_window(self, offset: int, duration: int, replicas: int | None = None) -> Scenario:
        """The scenario from `offset` into its time, for `duration` (`skenario run --window`), starting with
        `replicas` when given; its document saying so."""
        if offset < 0 or duration <= 0:
            raise ValueError(f"a window starts at 0 or later and lasts: offset {offset} ns, duration {duration} ns")
        spec = self.spec.model_copy(update={"offset": offset, "duration": duration})
        if replicas is not None:
            spec = spec.model_copy(update={"workload": spec.workload.model_copy(update={"replicas": replicas})})
        spec.check_offset()
        changed = self.model_copy(update={"spec": spec})
        document = self.document
        written = document.setdefault("spec", {})
        written["offset"], written["duration"] = format_duration(offset), format_duration(duration)
        if replicas is not None:
            written.setdefault("workload", {})["replicas"] = replicas
        changed._document = document
        return changed

    def with_mode(self, mode: Literal["discrete", "fluid"] | str) -> Scenario:
        """The scenario run in `mode` (`skenario run --mode`), its document saying so."""
        if mode not in ("discrete", "fluid"):
            raise ValueError(f"a scenario's mode is discrete or fluid, not {mode!r}")
        changed = self.model_copy(update={"spec": self.spec.model_copy(update={"mode": mode})})
        document = self.document
        document.setdefault("spec", {})["mode"] = mode
        changed._document = document
        return changed
