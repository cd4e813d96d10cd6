"""What a cluster model is made of, as plain data: the scenario layer fills these in.

Durations are integer ns and random quantities are `Distribution`s; the model draws from the
scenario's named random streams, so these values say nothing about seeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from skenario.core.random import Constant, Distribution
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cpu.node import IMPLICIT_NODE_MILLICORES, implicit_node_millicores, pod_capacity
from skenario.model.disruption import DisruptionBudget
from skenario.model.memory import IMPLICIT_NODE_MEMORY
from skenario.model.probes import ReadinessProbe, StartupProbe


@dataclass(frozen=True)
class LaunchStage:
    """One step of starting a pod (scheduling, image pull, container start, readiness)."""

    name: str
    duration: Distribution


class CpuScheduling(StrEnum):
    """How a replica's CPU picks among the requests on it."""

    PROCESSOR_SHARING = "ProcessorSharing"  # every request in its CPU phase progresses at once
    PRIORITY_PREEMPTIVE = "PriorityPreemptive"  # a higher class takes a core from a lower one at once
    PRIORITY_NON_PREEMPTIVE = "PriorityNonPreemptive"  # a higher class goes first when a core frees up


@dataclass(frozen=True)
class MemorySpec:
    """How much memory a container uses, in bytes: a baseline while it runs plus a draw per request held.

    Without a cluster each pod's node has `node_memory` allocatable (model/memory.py).
    """

    baseline: Distribution
    per_request: Distribution | None = None
    node_memory: int = IMPLICIT_NODE_MEMORY


@dataclass(frozen=True)
class WarmUp:
    """A container's first moments after it turns ready: requests need `slowdown` times their CPU (cold
    caches, code not yet compiled) and it burns `cpu_millicores` of CPU work meanwhile (loading, compiling)."""

    duration: int  # ns after the pod turns ready
    slowdown: float = 1.0
    cpu_millicores: int = 0  # the background work: this much CPU for `duration`, shared with requests


@dataclass(frozen=True)
class ReplicaSpec:
    """One replica: its CPU, how many requests it takes at once, how it starts and stops.

    Without a cluster each pod runs alone on a node of `node_cpu` millicores (or of its request,
    if larger): it may use the whole node, or up to its limit when it has one (model/cpu/node.py).
    """

    cpu_request: int = 1000  # millicores
    cpu_limit: int | None = None
    node_cpu: int = IMPLICIT_NODE_MILLICORES
    cfs_quota_period: int | None = None  # ns; a limit enforced per CFS period instead of as a smooth cap
    concurrency: int | None = None  # requests served at once; None is unbounded
    queue_capacity: int | None = None  # requests waiting for a slot; None is unbounded
    launch: tuple[LaunchStage, ...] = ()
    termination_grace: int = 30 * SECOND  # Kubernetes' terminationGracePeriodSeconds default
    pre_stop_sleep: int = 0  # ns a stopping replica keeps accepting requests before it stops (a preStop sleep)
    readiness_probe: ReadinessProbe | None = None  # None: ready when the readiness stage ends
    startup_probe: StartupProbe | None = None  # None: no startup probe
    warm_up: WarmUp | None = None  # None: at full speed from the start
    cpu_scheduling: CpuScheduling = CpuScheduling.PROCESSOR_SHARING
    memory_request: int | None = None  # bytes
    memory_limit: int | None = None  # bytes; the kernel OOM-kills the container above it
    memory: MemorySpec | None = None  # its usage; None: memory use is not modelled (no working set, no OOM)

    @property
    def cpu_capacity(self) -> int:
        """Millicores a pod can use alone on its node: its limit, or else the whole node."""
        return pod_capacity(self.cpu_limit, implicit_node_millicores(self.cpu_request, self.node_cpu))


@dataclass(frozen=True)
class RequestClass:
    """A kind of request: its share of arrivals, its priority on the CPU, and its own work if set."""

    name: str
    share: float
    priority: int = 0  # a higher number is served first under the priority CPU schedulers
    cpu_time: Distribution | None = None  # None: the workload's
    io_time: Distribution | None = None  # None: the workload's


@dataclass(frozen=True)
class RequestSpec:
    """What one request needs: CPU time on one full core, then IO time that uses no CPU.

    With `classes`, each arrival is of one class, drawn by share; without, all are alike.
    """

    cpu_time: Distribution
    io_time: Distribution | None = None
    timeout: int | None = 10 * SECOND  # the Go Skenario's default request timeout
    classes: tuple[RequestClass, ...] = ()


PLAIN_BUFFER_CAPACITY = 1000
"""Requests held while no replica is active, without Knative's activator (which holds 10,000)."""


class RoutingPolicy(StrEnum):
    ROUND_ROBIN = "roundRobin"
    RANDOM = "random"
    LEAST_REQUESTS = "leastRequests"


@dataclass(frozen=True)
class RoutingSpec:
    """How requests find a replica, and the activator-like buffer for when none is active."""

    policy: RoutingPolicy = RoutingPolicy.ROUND_ROBIN
    choices: int = 2  # least requests: replicas compared per request (Envoy's default is 2)
    buffer_capacity: int = PLAIN_BUFFER_CAPACITY  # 0: fail at once when no replica is active
    # From a replica's deletion until the routers stop sending it requests; None: at once.
    endpoint_propagation: Distribution | None = None


class MetricsSource(StrEnum):
    """Where the samples autoscalers read come from."""

    METRICS_SERVER = "metricsServer"  # a scrape of all pods per resolution, rates between two (model/metrics_server.py)
    TICKS = "ticks"  # the Go Skenario's: a tick per replica, then a constant lag (model/metrics.py)


@dataclass(frozen=True)
class MetricsSpec:
    """The metrics HPA and VPA read: metrics-server's scrapes, or the per-replica ticks of seeds 000/002."""

    source: MetricsSource = MetricsSource.METRICS_SERVER
    resolution: int = 15 * SECOND  # metrics-server's --metric-resolution in its manifests
    housekeeping: int = 10 * SECOND  # how often the kubelet refreshes a container's stats
    scrape_duration: Distribution | None = None  # how long a scrape takes before it serves; None: no time
    interval: int = 10 * SECOND  # ticks: between a replica's ticks
    first_after: int = 5 * SECOND  # ticks: from activation to the first
    lag: int = 4 * SECOND  # ticks: from a tick to the sink


RETRIABLE = frozenset(
    {
        "refused",
        "queue_proxy_overflow",
        "replica_queue_full",
        "buffer_full",
        "no_active_replica",
        "killed",
        "replica_killed",
        "oom",
        "evicted",
        "per_try_timeout",
    }
)
"""The failures a client retries by default: Envoy's `5xx`, `reset`, `connect-failure` and per-try timeouts."""


@dataclass(frozen=True)
class RetryPolicy:
    """How clients retry a failed attempt (Envoy's route retry policy, or gRPC's retryPolicy).

    The n-th retry waits a uniform random time up to min(max, (2^n − 1) × base) (Envoy's jittered
    exponential back-off), or up to min(max, base × multiplier^(n−1)) with a `multiplier` (gRPC's).
    With a budget, a retry is allowed only while retries in flight stay under `budget` (a fraction)
    of the attempts in flight, or under `min_retry_concurrency` (Envoy's `retry_budget`).
    """

    attempts: int = 2  # tries per request, the first included (Envoy: num_retries 1; gRPC: maxAttempts)
    per_try_timeout: int | None = None  # ns; an attempt not answered by then is given up and retried
    backoff_base: int = 25 * MILLISECOND
    backoff_max: int = 250 * MILLISECOND
    backoff_multiplier: float | None = None  # None: Envoy's back-off; a number: gRPC's
    retry_on: frozenset[str] = RETRIABLE
    budget: float | None = None  # e.g. 0.2: Envoy's retry budget of 20%
    min_retry_concurrency: int = 3


@dataclass(frozen=True)
class ClientSpec:
    """The clients: whether a server stops work its client gave up on (`cancel`), and their retries."""

    cancel: bool = False  # False: servers keep working on abandoned requests, as real ones do
    retries: RetryPolicy | None = None


@dataclass(frozen=True)
class ActivatorSpec:
    """Knative's activator in front of the pods (model/activator.py): slots per pod from containerConcurrency."""

    container_concurrency: int = 0  # 0: no per-pod limit (the throttler's infinite breaker)


@dataclass(frozen=True)
class StreamSpec:
    """The pods consume a stream (model/stream.py): messages wait in partitions until a consumer pulls them."""

    partitions: int | None = None  # None: one queue every consumer pulls from
    in_flight: int = 1  # messages a consumer works on at once
    pause: Distribution = field(default_factory=lambda: Constant(0))  # on each change of the consumers


@dataclass(frozen=True)
class ClusterSpec:
    """Everything the ClusterModel needs besides the clock, the arrivals and the random streams."""

    requests: RequestSpec = field(default_factory=lambda: RequestSpec(Constant(0)))
    replica: ReplicaSpec = field(default_factory=ReplicaSpec)
    initial_replicas: int = 1
    initial_ready: bool = True  # initial replicas start active rather than launching
    routing: RoutingSpec = field(default_factory=RoutingSpec)
    metrics: MetricsSpec = field(default_factory=MetricsSpec)
    disruption_budget: DisruptionBudget | None = None  # the workload's PodDisruptionBudget, if it has one
    activator: ActivatorSpec | None = None  # Knative's activator holds requests (else a plain buffer)
    stream: StreamSpec | None = None  # the pods consume a stream: its partitions hold the messages
    client: ClientSpec = field(default_factory=ClientSpec)
