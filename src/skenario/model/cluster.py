"""The ClusterModel: the stocks of replicas, requests and metrics built whole and joined (seeds 000/002).

Three builders make the paths, each stock given at construction everything it reads and every
hook it calls, in the order the hooks need:

    build_request_sinks   complete, failed, the clients' retries, the buffer or activator, stale endpoints
    build_replica_path    source -> launching -> active <-> restarting -> terminating -> terminated
    build_request_path    traffic -> routing (over the active replicas) -> buffer or a replica
    build_metrics_path    the pipeline's ticker and lag, or metrics-server, into the sink

The clients and the router send to each other (retries one way, failures the other): the clients
ask for the router when they resend, so each is still built whole. What the kubelet does to a
replica's container (OOM kills, restarts, evictions) is `model/kubelet.py`. The model owns the
accounts that span replicas (CPU busy and capacity integrals); the logic lives in the stocks.

Random quantities come from named streams of the scenario's seed:
`cpu-time`, `io-time` (`cpu-time/<class>`, `io-time/<class>` with request classes),
`request-classes`, `routing` (the activator's too), `client.backoff`, `launch.<stage>`, with
memory `memory.baseline`, `memory.per-request` and `restart.<stage>` (a restarted container's
start and readiness), `endpoint-propagation` (how long routers keep a deleted replica),
`pod-addresses` (pod IPs), `fluid.cpu-noise` (a fluid run's CPU noise), and `metrics.housekeeping` and
`metrics.scrape` (metrics-server's),
with `metrics-server.phase` unscoped (one metrics-server serves every workload of the cluster).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from typing import NamedTuple

import numpy as np

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams, sampler
from skenario.core.stocks import Stock
from skenario.model.activator import Activator
from skenario.model.addresses import PodAddresses
from skenario.model.clients import RETRYING, RequestsRetrying
from skenario.model.config import ClusterSpec, RequestClass, RequestSpec
from skenario.model.config import MetricsSource as MetricsSourceKind
from skenario.model.cpu.node import NodeCPU, implicit_node_millicores, pod_capacity
from skenario.model.cpu.quota import CfsQuota
from skenario.model.cpu.sharing import ProcessorSharingCPU
from skenario.model.disruption import EvictionBudget, budget_status
from skenario.model.endpoints import StaleEndpoints
from skenario.model.fluid.buffer import FluidBuffer
from skenario.model.fluid.plant import FluidInputs, FluidPlant
from skenario.model.fluid.processing import FluidCPU, FluidProcessing
from skenario.model.kubelet import Kubelet, ReplicaStocks
from skenario.model.metrics import MetricsPipeline, MetricsSink, MetricsSource, MetricsTicker
from skenario.model.metrics_server import MetricsServer
from skenario.model.processing import ClassWork, RequestsProcessing
from skenario.model.replicas import (
    Placement,
    Replica,
    ReplicasActive,
    ReplicasLaunching,
    ReplicaSource,
    ReplicasRestarting,
    ReplicaState,
    ReplicasTerminated,
    ReplicasTerminating,
    ResizeOutcome,
)
from skenario.model.replicaset import ReplicaSet
from skenario.model.requests import (
    BUFFERED,
    DONE,
    ROUTING,
    Request,
    RequestsBuffered,
    RequestsComplete,
    RequestsFailed,
    RequestsRouting,
    TrafficSource,
)
from skenario.model.routing import make_chooser
from skenario.model.stream import StreamBacklog
from skenario.model.timeouts import RequestTimeouts


class ReplicaPath(NamedTuple):
    """Replicas from their source through launch, service and restarts to termination."""

    source: ReplicaSource
    launching: ReplicasLaunching
    active: ReplicasActive
    restarting: ReplicasRestarting
    terminating: ReplicasTerminating
    terminated: ReplicasTerminated
    replica_set: ReplicaSet


class RequestSinks(NamedTuple):
    """Where requests end or wait, built before the replicas they wait for: the sinks, the clients that
    retry failures, the buffer (or Knative's activator), and the endpoints routers still hold."""

    complete: RequestsComplete
    failed: RequestsFailed
    clients: RequestsRetrying
    failure_sink: RequestsFailed | RequestsRetrying  # the clients when they retry
    activator: Activator | None
    stream: StreamBacklog | None
    buffered: RequestsBuffered
    stale_endpoints: StaleEndpoints | None


class RequestPath(NamedTuple):
    """Requests from traffic through routing to the replicas, with their timeouts."""

    routing: RequestsRouting
    timeouts: RequestTimeouts | None
    traffic: TrafficSource


class MetricsPath(NamedTuple):
    """Samples from the replicas to the autoscalers: the Go Skenario's pipeline, or metrics-server."""

    sink: MetricsSink
    source: MetricsSource
    pipeline: MetricsPipeline
    ticker: MetricsTicker
    server: MetricsServer | None


def build_request_sinks(
    env: Environment,
    spec: ClusterSpec,
    streams: RandomStreams,
    uniform: Callable[[], float],
    abandoned: set[Request],
    routing: Callable[[], RequestsRouting],
    in_flight: Callable[[], int],
) -> RequestSinks:
    """The request path's end and its waiting room. `routing` gives the router once it is built (the
    clients resend retries there, and it sends its failures to them); `abandoned` is shared by the sinks
    and the clients."""
    complete = RequestsComplete(env, len(spec.requests.classes), abandoned)
    failed = RequestsFailed(abandoned)
    buffered: RequestsBuffered
    clients = RequestsRetrying(
        env,
        spec.client,
        routing,
        failed,
        lambda: buffered,
        _uniforms(streams.generator("client.backoff")),
        in_flight,
        abandoned,
    )
    failure_sink: RequestsFailed | RequestsRetrying = clients if spec.client.retries is not None else failed
    activator = None
    if spec.activator is not None:
        activator = Activator(
            env, failure_sink, spec.activator.container_concurrency, uniform, spec.routing.buffer_capacity
        )
    stream = None
    if spec.stream is not None:
        pause = sampler(spec.stream.pause, streams.generator("stream.pause"))
        stream = StreamBacklog(
            env, failure_sink, partitions=spec.stream.partitions, in_flight=spec.stream.in_flight, pause=pause
        )
    if activator is not None:
        buffered = activator
    elif stream is not None:
        buffered = stream
    else:
        buffered = RequestsBuffered(env, spec.routing.buffer_capacity)
    stale_endpoints = None
    if spec.routing.endpoint_propagation is not None:
        propagation = sampler(spec.routing.endpoint_propagation, streams.generator("endpoint-propagation"))
        stale_endpoints = StaleEndpoints(env, propagation, spec.replica.pre_stop_sleep)
    return RequestSinks(complete, failed, clients, failure_sink, activator, stream, buffered, stale_endpoints)


def build_replica_path(
    env: Environment,
    spec: ClusterSpec,
    streams: RandomStreams,
    placement: Placement | None,
    new_replica: Callable[[], Replica],
    kubelet: Kubelet,
    sinks: RequestSinks,
    activated: Callable[[Replica], object],
    terminated: Callable[[Replica], object],
) -> ReplicaPath:
    """The replica stocks, each told at once whom it tells: the kubelet of kills and starts, the activator
    of pods gone, the stale endpoints and the placement of pods deleted, the model of activations and
    terminations. With a placement and a run that starts ready, the initial replicas skip their launch
    stages once bound."""
    replica = spec.replica
    stages = [
        (stage.name, sampler(stage.duration, streams.generator(f"launch.{stage.name}"))) for stage in replica.launch
    ]
    puller = _puller(sinks.activator, sinks.stream)  # hears of pods that stop being ready
    stale = sinks.stale_endpoints
    active = ReplicasActive(env, on_activate=[activated], on_deactivate=[puller.pod_gone] if puller is not None else [])
    instant = range(spec.initial_replicas) if spec.initial_ready and placement is not None else ()
    launching = ReplicasLaunching(
        env,
        stages,
        active,
        placement=placement,
        instant=instant,
        probe=replica.readiness_probe,
        startup=replica.startup_probe,
        backoff=kubelet.startup_backoff,
        on_startup_kill=[kubelet.startup_killed],
        on_container_start=[kubelet.container_started],
    )
    # The ReplicaSet acts on the source and the terminating replicas, and hears from both: they call it
    # once it is made (one call per launch or stop).
    replica_set: ReplicaSet
    gone = ReplicasTerminated(env, on_terminated=[terminated, *([placement.stopped] if placement is not None else [])])
    terminating = ReplicasTerminating(
        env,
        replica.termination_grace,
        gone,
        pre_stop=replica.pre_stop_sleep,
        on_terminating=[
            lambda r: replica_set.replacement_due(r),
            *([stale.deleted] if stale is not None else []),
            *([placement.stopping] if placement is not None else []),
        ],
    )
    restarting = ReplicasRestarting(env, active, kubelet.restart_delay, on_restarting=[kubelet.container_killed])
    source = ReplicaSource(new_replica, on_emit=lambda: replica_set.launch_ran())
    replica_set = ReplicaSet(env, source, launching, active, terminating, restarting)
    return ReplicaPath(source, launching, active, restarting, terminating, gone, replica_set)


def build_request_path(
    env: Environment,
    spec: ClusterSpec,
    arrivals: Iterator[int],
    streams: RandomStreams,
    uniform: Callable[[], float],
    sinks: RequestSinks,
    active: ReplicasActive,
    expire: Callable[[Request], None],
) -> RequestPath:
    """Traffic, and the router that sends each request to a replica `spec.routing` picks among the active
    ones (and the endpoints routers still hold); `expire` hears of each request whose timeout passed."""
    choose = make_chooser(spec.routing, active, uniform)
    stale = sinks.stale_endpoints
    if stale is not None:
        choose = stale.chooser(active, choose, uniform)
    routing = RequestsRouting(
        env, choose, sinks.buffered, sinks.failure_sink, accepts=stale.accepts if stale is not None else None
    )
    requests = spec.requests
    timeouts = RequestTimeouts(env, requests.timeout, expire) if requests.timeout is not None else None
    watch: Callable[[Request], None] | None = timeouts.watch if timeouts is not None else None
    if spec.client.retries is not None and spec.client.retries.per_try_timeout is not None:
        watch = _both(watch, sinks.clients.watch)
    classes = len(requests.classes)
    classify = _classifier(requests.classes, streams) if classes else None
    traffic = TrafficSource(env, arrivals, routing, watch, classify, classes)
    return RequestPath(routing, timeouts, traffic)


def build_metrics_path(
    env: Environment, spec: ClusterSpec, streams: RandomStreams, running: Callable[[], list[Replica]]
) -> MetricsPath:
    """The pipeline's ticker and lag, and with `metrics.source` metrics-server over the `running` pods."""
    sink = MetricsSink()
    source = MetricsSource()
    pipeline = MetricsPipeline(env, spec.metrics.lag, sink)
    ticker = MetricsTicker(env, spec.metrics, source, pipeline)
    server = None
    if spec.metrics.source is MetricsSourceKind.METRICS_SERVER:
        server = _metrics_server(env, spec, streams, running, sink)
    return MetricsPath(sink, source, pipeline, ticker, server)


def _metrics_server(
    env: Environment,
    spec: ClusterSpec,
    streams: RandomStreams,
    running: Callable[[], list[Replica]],
    sink: MetricsSink,
) -> MetricsServer:
    """metrics-server over the running pods, each with a housekeeping phase (stream `metrics.housekeeping`),
    its scrapes at a phase of its own."""
    metrics = spec.metrics
    phases: dict[int, int] = {}
    phase_rng = streams.generator("metrics.housekeeping")

    def phase(replica: Replica) -> int:
        if replica.id not in phases:
            phases[replica.id] = int(phase_rng.random() * metrics.housekeeping)
        return phases[replica.id]

    duration = metrics.scrape_duration
    scrape_duration = sampler(duration, streams.generator("metrics.scrape")) if duration is not None else _no_time
    return MetricsServer(
        env,
        metrics.resolution,
        metrics.housekeeping,
        scrape_duration,
        phase,
        running,
        sink,
        streams.root().phase("metrics-server.phase", metrics.resolution),
    )


class ClusterModel:
    """One workload's replicas and requests on one Environment, assembled from its three paths."""

    def __init__(
        self,
        env: Environment,
        spec: ClusterSpec,
        arrivals: Iterator[int],
        streams: RandomStreams,
        placement: Placement | None = None,
        fluid: FluidInputs | None = None,
    ) -> None:
        self.env = env
        self.spec = spec
        # Fluid mode: requests as rates (`model/fluid/`); the request path stays, empty, for what reads it.
        self.plant: FluidPlant | None = None
        if fluid is not None:
            arrivals = iter(())
        self._work: Sequence[ClassWork] = class_work(spec.requests, streams)
        self.replicas: dict[int, Replica] = {}  # live ones: not yet terminated
        self._addresses = PodAddresses(streams.generator("pod-addresses"))
        # The pod template's resources: what new replicas get; a vertical autoscaler changes them.
        replica = spec.replica
        self.cpu_request = replica.cpu_request
        self.cpu_limit = replica.cpu_limit
        self.memory_request = replica.memory_request
        self.memory_limit = replica.memory_limit
        # Memory: each container's working set, and the kubelet's restarts and evictions.
        self.kubelet = Kubelet(env, replica, streams)
        self.on_oom_kill = self.kubelet.on_oom_kill  # told of each container the kernel kills
        # Accounts that outlive replicas, for cluster-wide CPU utilisation.
        self._retired_busy_core_ns = 0.0
        self._retired_requested_core_ns = 0.0
        self._retired_node_core_ns = 0.0
        self._retired_bound = 0  # terminated replicas whose pods had been bound

        uniform = _uniforms(streams.generator("routing"))
        # Attempts their clients left to their servers: the sinks count them apart.
        self.abandoned: set[Request] = set()
        sinks = build_request_sinks(
            env, spec, streams, uniform, self.abandoned, lambda: self.requests_routing, self._attempts_in_flight
        )
        self.requests_complete = sinks.complete
        self.requests_failed = sinks.failed
        self.clients = sinks.clients
        self._failure_sink = sinks.failure_sink
        # What the autoscalers, the series and the summary read as the activator and the buffer; a fluid run's
        # plant stands for them (below). The request path's own, which hold requests, are `_path_*`.
        self.activator: Activator | FluidBuffer | None = sinks.activator
        self._path_activator = sinks.activator
        self.stream = sinks.stream
        self.requests_buffered: RequestsBuffered | FluidBuffer = sinks.buffered
        self._path_buffer = sinks.buffered
        self.stale_endpoints = sinks.stale_endpoints

        replicas = build_replica_path(
            env, spec, streams, placement, self._new_replica, self.kubelet, sinks, self._activated, self._terminated
        )
        self.replica_source = replicas.source
        self.replicas_launching = replicas.launching
        self.replicas_active = replicas.active
        self.replicas_restarting = replicas.restarting
        self.replicas_terminating = replicas.terminating
        self.replicas_terminated = replicas.terminated
        self.replica_set = replicas.replica_set
        self._stocks = ReplicaStocks(
            replicas.launching, replicas.active, replicas.restarting, replicas.terminating, replicas.replica_set
        )

        requests = build_request_path(env, spec, arrivals, streams, uniform, sinks, replicas.active, self._expire)
        self.requests_routing = requests.routing
        self.timeouts = requests.timeouts
        self.traffic_source = requests.traffic

        if fluid is not None:
            self.plant = FluidPlant(
                env,
                fluid,
                self.requests_complete,
                self.requests_failed,
                self.replicas_active,
                self.replicas.values,
                streams.generator("fluid.cpu-noise"),
                spec.routing.buffer_capacity,
                placement.neighbours if placement is not None else None,
            )
            # What waits for a replica is the plant's: the buffer's stock, and the activator the KPA reads.
            self.requests_buffered = self.plant.buffer
            if self.activator is not None:
                self.activator = self.plant.buffer
            # A replica became active or stopped being: the traffic is shared among those active now.
            plant = self.plant
            self.replicas_active.on_activate.append(lambda replica: plant.route())
            self.replicas_active.on_deactivate.append(lambda replica: plant.route())

        metrics = build_metrics_path(env, spec, streams, self._running)
        self.metrics_sink = metrics.sink
        self.metrics_source = metrics.source
        self.metrics_pipeline = metrics.pipeline
        self.metrics_ticker = metrics.ticker
        self.metrics_server = metrics.server

        if spec.initial_ready and placement is None:
            self.replica_set.start_active([self._new_replica() for _ in range(spec.initial_replicas)])
        else:  # with a placement, initial replicas that start ready still need nodes (`instant` once bound)
            self.replica_set.scale_to(spec.initial_replicas)
        self.traffic_source.start()
        if self.plant is not None:
            self.plant.start()

    # -- wiring --------------------------------------------------------------------------------

    def _new_replica(self) -> Replica:
        spec = self.spec.replica
        id = len(self.replicas) + self.replicas_terminated.count()
        node = implicit_node_millicores(self.cpu_request, spec.node_cpu)
        capacity = pod_capacity(self.cpu_limit, node)
        if self.plant is not None:
            return self._made(id, self.plant.replica(f"FluidProcessing[replica-{id}]", capacity))
        activator = self._path_activator
        puller = _puller(activator, self.stream)  # hears who leaves, to fill the slot
        processing = RequestsProcessing(
            f"RequestsProcessing[replica-{id}]",
            self.env,
            millicores=capacity,
            work=self._work,
            complete=self.requests_complete,
            failed=self._failure_sink,
            concurrency=spec.concurrency,
            capacity=spec.queue_capacity,
            scheduling=spec.cpu_scheduling,
            # Knative's queue-proxy: its breaker's queue overflows with a 503; the activator hears who leaves.
            overflow="queue_proxy_overflow" if activator is not None else "replica_queue_full",
            on_leave=puller.left if puller is not None else None,
        )
        if spec.cfs_quota_period is not None and self.cpu_limit is not None:
            # The limit is a quota per period, not a smooth cap: the quota owns the CPU's capacity.
            assert isinstance(processing.cpu, ProcessorSharingCPU), "a CFS quota drives processor sharing"
            CfsQuota(self.env, processing.cpu, self.cpu_limit, node, spec.cfs_quota_period)
        return self._made(id, processing)

    def _made(self, id: int, processing: RequestsProcessing | FluidProcessing) -> Replica:
        """A new replica around its requests, with its address and memory."""
        replica = Replica(
            id, processing, self.env.now(), self.cpu_request, self.cpu_limit, self.memory_request, self.memory_limit
        )
        replica.address = self._addresses.allocate()
        if self.kubelet.memory_modelled:
            self.kubelet.give_memory(replica, self._stocks, alone=self.replicas_launching.placement is None)
        self.replicas[id] = replica
        return replica

    def _running(self) -> list[Replica]:
        """Pods whose container runs: serving, or draining while they stop."""
        running = (ReplicaState.ACTIVE, ReplicaState.TERMINATING)
        return [replica for replica in self.replicas.values() if replica.state in running]

    def _activated(self, replica: Replica) -> None:
        self.kubelet.container_started(replica)  # no readiness stage: it started just now (else it runs already)
        warm_up = self.spec.replica.warm_up
        if warm_up is not None:  # each start of its container warms up again
            cpu_work = warm_up.cpu_millicores * warm_up.duration // 1000
            replica.processing.warm_up(warm_up.duration, warm_up.slowdown, cpu_work)
        if self.metrics_server is not None:
            self.metrics_server.started(replica)
        else:
            self.metrics_ticker.start(replica)
        if self.plant is not None:
            return  # the plant hands what its buffer holds to the replicas active now (`FluidPlant.route`)
        puller = _puller(self._path_activator, self.stream)
        if puller is not None:  # it sends what it holds into the pod's free slots
            puller.pod_ready(replica)
            return
        env, buffered = self.env, self._path_buffer
        # Requests the buffer held go out again through routing, oldest first.
        for request in buffered.oldest_first():
            if request.stage != BUFFERED:
                continue  # already on its way out, sent by another replica's activation
            request.stage = ROUTING
            env.schedule("route_buffered", env.now(), buffered, self.requests_routing, request)

    def _terminated(self, replica: Replica) -> None:
        if self.plant is not None:
            self.plant.retire(replica)
        self.kubelet.terminated(replica)
        self._addresses.release(replica.address)
        del self.replicas[replica.id]
        self.metrics_sink.forget(replica)
        self._retired_busy_core_ns += replica.processing.cpu.busy_core_ns()
        self._retired_requested_core_ns += self._requested_core_ns(replica)
        self._retired_node_core_ns += self._node_core_ns(replica)
        if replica.bound_at is not None:
            self._retired_bound += 1

    def _expire(self, request: Request) -> None:
        """A request's timeout passed: its client gives up on its live attempt (model/clients.py)."""
        request = self.clients.current(request)
        if (
            request.stage == DONE
            or request in self.abandoned
            or (request in self.clients.items and request.stage != RETRYING)
        ):
            return  # over, or failing already
        self.clients.give_up(request, "timeout")

    def _attempts_in_flight(self) -> int:
        return self.requests_routing.count() + self.requests_buffered.count() + self.requests_processing

    def _requested_core_ns(self, replica: Replica) -> float:
        """Core-ns of CPU the replica requested while serving: from activation until it terminated (or now)."""
        if replica.activated_at is None:
            return 0.0
        end = replica.terminated_at if replica.terminated_at is not None else self.env.now()
        since = replica.request_since if replica.request_since is not None else replica.activated_at
        return replica.requested_core_ns + replica.cpu_request / 1000 * (end - since)

    def _node_core_ns(self, replica: Replica) -> float:
        """Core-ns of the implicit node the replica's pod had to itself, from binding until it terminated (or now)."""
        if replica.bound_at is None:
            return 0.0
        end = replica.terminated_at if replica.terminated_at is not None else self.env.now()
        return (
            implicit_node_millicores(replica.cpu_request, self.spec.replica.node_cpu) / 1000 * (end - replica.bound_at)
        )

    # -- accounts ------------------------------------------------------------------------------

    def busy_core_ns(self) -> float:
        """Integral of CPU in use over every replica, ever, up to now."""
        return self._retired_busy_core_ns + sum(r.processing.cpu.busy_core_ns() for r in self.replicas.values())

    def requested_core_ns(self) -> float:
        """Integral of the CPU requested by serving replicas (active, restarting, terminating), up to now:
        `busy_core_ns() / requested_core_ns()` is CPU utilisation as the HPA reads it, of the request."""
        return self._retired_requested_core_ns + sum(self._requested_core_ns(r) for r in self.replicas.values())

    def node_cpu_core_ns(self) -> tuple[float, float]:
        """CPU in use on the nodes and the nodes' allocatable CPU, both integrated up to now; their ratio is
        node CPU utilisation. With a cluster, its nodes with every workload's pods on them; without one,
        the implicit nodes this workload's pods each have to themselves, from binding to termination."""
        placement = self.replicas_launching.placement
        if placement is not None:
            return placement.node_cpu_core_ns()
        held = self._retired_node_core_ns + sum(self._node_core_ns(r) for r in self.replicas.values())
        return self.busy_core_ns(), held

    def replicas_started(self) -> int:
        """Replicas whose pods were bound to a node, ever: a pod that stayed Pending never started."""
        return self._retired_bound + sum(1 for r in self.replicas.values() if r.bound_at is not None)

    def scale_to(self, desired: int) -> None:
        self.replica_set.scale_to(desired)

    def set_cpu(self, request: int, limit: int | None = None) -> None:
        """Change the pod template's CPU: replicas made from now on get it, running ones keep theirs
        (a request of 0: none, as a BestEffort pod's)."""
        if request < 0 or (limit is not None and limit < request):
            raise ValueError(f"need 0 <= request <= limit, got request {request}, limit {limit}")
        self.cpu_request = request
        self.cpu_limit = limit

    def set_memory(self, request: int | None, limit: int | None = None) -> None:
        """Change the pod template's memory (bytes): replicas made from now on get it."""
        if (request is not None and request <= 0) or (limit is not None and request is not None and limit < request):
            raise ValueError(f"need 0 < request <= limit, got request {request}, limit {limit}")
        self.memory_request = request
        self.memory_limit = limit

    def resize(
        self,
        replica: Replica,
        cpu_request: int,
        cpu_limit: int | None,
        memory_request: int | None = None,
        memory_limit: int | None = None,
    ) -> ResizeOutcome:
        """Resize a running replica's requests and limits in place (KEP-1287), without a restart.

        The kubelet admits it if the node has room (`Applied`), defers it while it does not fit
        (`Deferred`), refuses what can never fit the node (`Infeasible`), and leaves a memory limit
        below the working set accepted but not actuated (`InProgress`). An applied resize changes
        the pod's CPU weight and cap on its node at once, and its memory request and limit.
        """
        if replica.state not in (ReplicaState.ACTIVE, ReplicaState.RESTARTING, ReplicaState.LAUNCHING):
            return ResizeOutcome.INFEASIBLE
        placement = self.replicas_launching.placement
        if placement is not None:
            outcome = placement.resize(replica, cpu_request, memory_request)
        else:
            outcome = self._resize_on_own_node(replica, cpu_request, memory_request)
        if outcome is not ResizeOutcome.APPLIED:
            return outcome
        memory = replica.memory
        if memory is not None and memory_limit is not None and memory_limit < memory.working_set:
            return ResizeOutcome.IN_PROGRESS
        self._apply_cpu(replica, cpu_request, cpu_limit)
        replica.memory_request, replica.memory_limit = memory_request, memory_limit
        if memory is not None:
            memory.request, memory.limit = memory_request or 0, memory_limit
            if memory.node is not None:
                memory.node.attach(memory)  # its oom_score_adj follows the new request
        return ResizeOutcome.APPLIED

    def _resize_on_own_node(self, replica: Replica, cpu_request: int, memory_request: int | None) -> ResizeOutcome:
        spec = self.spec.replica
        node_cpu = implicit_node_millicores(replica.cpu_request, spec.node_cpu)
        node_memory = spec.memory.node_memory if spec.memory is not None else None
        if cpu_request > node_cpu or (node_memory is not None and (memory_request or 0) > node_memory):
            return ResizeOutcome.INFEASIBLE
        return ResizeOutcome.APPLIED

    def _apply_cpu(self, replica: Replica, request: int, limit: int | None) -> None:
        """The new CPU from now on: the capacity held so far is kept, the node re-weighs the pod."""
        now = self.env.now()
        cpu = replica.processing.cpu
        if replica.activated_at is not None:
            replica.requested_core_ns = self._requested_core_ns(replica)
            replica.request_since = now
        replica.cpu_request, replica.cpu_limit = request, limit
        if isinstance(cpu, FluidCPU):  # a fluid replica (no spec.cluster): its fluid drains at the new cap
            cpu.replica.resize(now, pod_capacity(limit, implicit_node_millicores(request, self.spec.replica.node_cpu)))
            return
        if not isinstance(cpu, ProcessorSharingCPU):
            return  # a priority CPU keeps its cores (pods under priority scheduling sit alone on a node)
        owner = cpu.owner
        if isinstance(owner, NodeCPU):
            owner.detach(cpu)
            owner.attach(cpu, request, limit)
        elif owner is None:
            cap = pod_capacity(limit, implicit_node_millicores(request, self.spec.replica.node_cpu))
            cpu.millicores = cap
            cpu.set_cores(cap / 1000)

    def replace(self, replica: Replica) -> None:
        """Stop one replica and launch a replacement from the current template (a VPA eviction)."""
        self.replica_set.replace(replica)

    def run_as_jobs(self, messages: int) -> None:
        """The pods are Jobs (KEDA's ScaledJob): each consumes `messages` of the stream's messages, then completes
        and is not replaced. Needs a stream."""
        if self.stream is None:
            raise ValueError("Jobs consume a stream: the workload has none")
        if messages < 1:
            raise ValueError(f"a Job consumes at least 1 message, got {messages}")
        self.stream.per_job = messages
        self.stream.on_job_done = self.replica_set.finish

    # -- changes and faults that scenario events make --------------------------------------------

    def kill(self, replica: Replica) -> None:
        """The replica dies at once, its requests failing as `replica_killed`; a replacement launches."""
        if replica.state is ReplicaState.TERMINATING:
            self.replicas_terminating.crash(replica)
        elif replica.state is not ReplicaState.TERMINATED:
            self.replicas_terminating.crash(replica)
            self.replica_set.replace(replica)

    def set_request_work(self, work: Sequence[ClassWork]) -> None:
        """What each request needs from now on, on every replica (requests already admitted keep theirs)."""
        self._work = work
        for replica in self.replicas.values():
            replica.processing.set_work(work)

    def set_spec(self, spec: ClusterSpec) -> None:
        """A new spec for what is made from now on: replicas' concurrency and queue, and the grace period."""
        self.spec = spec
        self.kubelet.spec = spec.replica
        self.replicas_terminating.grace = spec.replica.termination_grace
        self.replicas_terminating.pre_stop = spec.replica.pre_stop_sleep

    def metrics_down(self) -> None:
        """The metrics pipeline fails: samples in transit and to come are lost, the sink empties."""
        self.metrics_pipeline.go_down()
        if self.metrics_server is not None:
            self.metrics_server.go_down()
        self.metrics_sink.clear()

    def metrics_up(self) -> None:
        self.metrics_pipeline.come_up()
        if self.metrics_server is not None:
            self.metrics_server.come_up()

    @property
    def desired(self) -> int:
        return self.replica_set.desired

    def eviction_budget(self) -> EvictionBudget | None:
        """The workload's PodDisruptionBudget as the eviction API would apply it now (None: it has none).

        Healthy pods are the ready ones (active); deleting ones (terminating) count for nothing.
        """
        budget = self.spec.disruption_budget
        if budget is None:
            return None
        pods = self.replicas_launching.count() + self.replicas_active.count()
        status = budget_status(budget, pods=pods, scale=self.desired, healthy=self.replicas_active.count())
        return EvictionBudget(status, always_allow_unhealthy=budget.always_allow_unhealthy)

    def processing_stocks(self) -> list[RequestsProcessing | FluidProcessing]:
        return [r.processing for r in self.replicas.values()]

    def stocks(self) -> list[Stock]:
        """Every stock of the model now (processing stocks of live replicas only)."""
        return [
            self.replica_source,
            self.replicas_launching,
            self.replicas_active,
            self.replicas_restarting,
            self.replicas_terminating,
            self.replicas_terminated,
            self.traffic_source,
            self.requests_routing,
            self.requests_buffered,
            *self.processing_stocks(),
            self.clients,
            self.clients.gave_up,
            self.requests_complete,
            self.requests_failed,
            self.metrics_source,
            self.metrics_pipeline,
            *([self.metrics_server] if self.metrics_server is not None else []),
            self.metrics_sink,
        ]

    @property
    def oom_kills(self) -> int:
        """Containers the kernel killed (over their limit, or by a node's OOM killer)."""
        return self.kubelet.oom_kills

    @property
    def evictions(self) -> int:
        """Pods the kubelet evicted under node memory pressure."""
        return self.kubelet.evictions

    @property
    def restarts(self) -> int:
        """Containers started again after a kill."""
        return self.kubelet.restarts

    @property
    def startup_probe_kills(self) -> int:
        """Containers the kubelet killed for failing their startup probe."""
        return self.kubelet.startup_probe_kills

    @property
    def requests_arrived(self) -> int:
        return self.traffic_source.emitted if self.plant is None else self.plant.arrived()

    @property
    def requests_processing(self) -> int:
        return sum(r.processing.count() for r in self.replicas.values())

    @property
    def requests_in_flight(self) -> int:
        """Requests whose clients still wait: attempts anywhere, less those abandoned at their servers."""
        return self._attempts_in_flight() + self.clients.count() - len(self.abandoned)

    def memory_working_set(self) -> int | None:
        """The working sets of every replica now, in bytes; None when memory is not modelled."""
        if not self.kubelet.memory_modelled:
            return None
        return sum(r.memory.working_set for r in self.replicas.values() if r.memory is not None)

    def memory_peak(self) -> int | None:
        """The largest working set any replica has had, in bytes; None when memory is not modelled."""
        if not self.kubelet.memory_modelled:
            return None
        live = (r.memory.peak for r in self.replicas.values() if r.memory is not None)
        return max(self.kubelet.retired_memory_peak, *live, 0)

    def replicas_in(self, state: ReplicaState) -> int:
        return sum(1 for r in self.replicas.values() if r.state is state)


def class_work(requests: RequestSpec, streams: RandomStreams, tag: str = "") -> list[ClassWork]:
    """Samplers of each request class's work (one entry when there are no classes).

    `tag` tells apart the streams of work set by an event (`@<event id>`) from the initial ones.
    """
    if not requests.classes:
        io = requests.io_time
        return [
            ClassWork(
                sampler(requests.cpu_time, streams.generator(f"cpu-time{tag}")),
                sampler(io, streams.generator(f"io-time{tag}")) if io is not None else None,
            )
        ]
    work = []
    for cls in requests.classes:
        io = cls.io_time or requests.io_time
        work.append(
            ClassWork(
                sampler(cls.cpu_time or requests.cpu_time, streams.generator(f"cpu-time/{cls.name}{tag}")),
                sampler(io, streams.generator(f"io-time/{cls.name}{tag}")) if io is not None else None,
                cls.priority,
            )
        )
    return work


def _classifier(classes: Sequence[RequestClass], streams: RandomStreams) -> Callable[[], int]:
    """Each arrival's class index, drawn by share in numpy batches from the `request-classes` stream."""
    rng = streams.generator("request-classes")
    shares = [c.share for c in classes]
    total = sum(shares)
    weights = [share / total for share in shares]

    def batches() -> Iterator[list[int]]:
        while True:
            yield rng.choice(len(weights), size=4096, p=weights).tolist()

    return chain.from_iterable(batches()).__next__


def _puller(activator: Activator | None, stream: StreamBacklog | None) -> Activator | StreamBacklog | None:
    """What sends held requests into pods' free slots, if anything does: the activator or a stream's backlog."""
    return activator if activator is not None else stream


def _no_time() -> int:
    return 0


def _both(first: Callable[[Request], None] | None, second: Callable[[Request], None]) -> Callable[[Request], None]:
    """Watch each new request with both."""
    if first is None:
        return second

    def watch(request: Request) -> None:
        first(request)
        second(request)

    return watch


def _uniforms(rng: np.random.Generator) -> Callable[[], float]:
    """Uniform draws in [0, 1) from `rng`, a batch at a time."""
    uniforms: Iterator[float] = iter(())

    def uniform() -> float:
        nonlocal uniforms
        value: float | None = next(uniforms, None)
        if value is None:
            uniforms = iter(rng.random(4096).tolist())
            value = next(uniforms)
        return value

    return uniform
