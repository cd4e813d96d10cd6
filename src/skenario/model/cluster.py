"""The ClusterModel wires the stocks of replicas, requests and metrics together (seeds 000/002).

It owns the stocks and the accounts that span replicas (CPU busy and capacity integrals); the
logic lives in the stocks. Random quantities come from named streams of the scenario's seed:
`cpu-time`, `io-time` (`cpu-time/<class>`, `io-time/<class>` with request classes),
`request-classes`, `routing` (the activator's too), `client.backoff`, `launch.<stage>`, with
memory `memory.baseline`, `memory.per-request` and `restart.<stage>` (a restarted container's
start and readiness), `endpoint-propagation` (how long routers keep a deleted replica),
`pod-addresses` (pod IPs), and `metrics.housekeeping` and `metrics.scrape` (metrics-server's),
with `metrics-server.phase` unscoped (one metrics-server serves every workload of the cluster).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import chain

import numpy as np

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams, sampler
from skenario.core.stocks import Stock
from skenario.core.time import SECOND
from skenario.model.activator import Activator
from skenario.model.addresses import PodAddresses
from skenario.model.clients import RETRYING, RequestsRetrying
from skenario.model.config import ClusterSpec, RequestClass, RequestSpec
from skenario.model.config import MetricsSource as MetricsSourceKind
from skenario.model.cpu.node import NodeCPU, implicit_node_millicores, pod_capacity, qos_class
from skenario.model.cpu.quota import CfsQuota
from skenario.model.cpu.sharing import ProcessorSharingCPU
from skenario.model.disruption import EvictionBudget, budget_status
from skenario.model.endpoints import StaleEndpoints
from skenario.model.memory import CrashLoopBackOff, NodeMemory, PodMemory
from skenario.model.metrics import MetricsPipeline, MetricsSink, MetricsSource, MetricsTicker
from skenario.model.metrics_server import MetricsServer
from skenario.model.probes import ready_at
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
from skenario.model.timeouts import RequestTimeouts

RESTART_STAGES = ("containerStart", "readiness")
"""The launch stages a restarted container goes through again (it keeps its node and its image)."""
KUBELET_EVICTION_GRACE = SECOND
"""`immediateEvictionGracePeriodSeconds` (pkg/kubelet/eviction/eviction_manager.go): a hard eviction's grace."""


class ClusterModel:
    """One workload's replicas and requests on one Environment."""

    def __init__(
        self,
        env: Environment,
        spec: ClusterSpec,
        arrivals: Iterator[int],
        streams: RandomStreams,
        placement: Placement | None = None,
    ) -> None:
        self.env = env
        self.spec = spec
        replica = spec.replica
        requests = spec.requests
        self._work: Sequence[ClassWork] = class_work(requests, streams)
        uniform = _uniforms(streams.generator("routing"))

        # Replicas.
        self.replicas: dict[int, Replica] = {}  # live ones: not yet terminated
        self._addresses = PodAddresses(streams.generator("pod-addresses"))
        # The pod template's CPU: what new replicas get; a vertical autoscaler changes it.
        self.cpu_request = replica.cpu_request
        self.cpu_limit = replica.cpu_limit
        self.memory_request = replica.memory_request
        self.memory_limit = replica.memory_limit
        self.replica_source = ReplicaSource(self._new_replica)
        self.replicas_active = ReplicasActive(env)
        stages = [
            (stage.name, sampler(stage.duration, streams.generator(f"launch.{stage.name}"))) for stage in replica.launch
        ]
        # Memory: each container's working set, and the kubelet's restarts of killed containers.
        memory = replica.memory
        self._baseline = sampler(memory.baseline, streams.generator("memory.baseline")) if memory else None
        per_request = memory.per_request if memory else None
        self._per_request = sampler(per_request, streams.generator("memory.per-request")) if per_request else None
        self._restart_stages = [
            (stage.name, sampler(stage.duration, streams.generator(f"restart.{stage.name}")))
            for stage in replica.launch
            if stage.name in RESTART_STAGES
        ]
        self._backoffs: dict[Replica, CrashLoopBackOff] = {}
        self.oom_kills = 0  # containers the kernel killed (over their limit, or by a node's OOM killer)
        self.evictions = 0  # pods the kubelet evicted under node memory pressure
        self.restarts = 0  # containers started again after a kill
        self._retired_memory_peak = 0
        self.on_oom_kill: list[Callable[[Replica], object]] = []  # told of each container the kernel kills
        self.replicas_launching = ReplicasLaunching(env, stages, self.replicas_active)
        self.replicas_launching.placement = placement
        self.replicas_launching.probe = replica.readiness_probe
        self.replicas_launching.startup = replica.startup_probe
        self.replicas_launching.backoff = self._startup_backoff
        self.replicas_launching.on_startup_kill.append(self._startup_killed)
        self.replicas_launching.on_container_start.append(self._container_started)
        self.startup_probe_kills = 0  # containers the kubelet killed for failing their startup probe
        self.replicas_terminated = ReplicasTerminated(env)
        self.replicas_terminating = ReplicasTerminating(env, replica.termination_grace, self.replicas_terminated)
        self.replicas_terminating.pre_stop = replica.pre_stop_sleep
        self.replicas_restarting = ReplicasRestarting(env, self.replicas_active, self._restart_delay)
        self.replicas_restarting.on_restarting.append(self._container_killed)
        self.replica_set = ReplicaSet(
            env,
            self.replica_source,
            self.replicas_launching,
            self.replicas_active,
            self.replicas_terminating,
            self.replicas_restarting,
        )

        # Requests.
        classes = len(requests.classes)
        self.requests_complete = RequestsComplete(env, classes)
        self.requests_failed = RequestsFailed()
        self.activator: Activator | None = None
        if spec.activator is not None:
            self.activator = Activator(
                env, self.requests_failed, spec.activator.container_concurrency, uniform, spec.routing.buffer_capacity
            )
            self.replicas_active.on_deactivate.append(self.activator.pod_gone)
        self.requests_buffered = (
            self.activator if self.activator is not None else RequestsBuffered(env, spec.routing.buffer_capacity)
        )
        choose = make_chooser(spec.routing, self.replicas_active, uniform)
        self.stale_endpoints: StaleEndpoints | None = None
        if spec.routing.endpoint_propagation is not None:
            propagation = sampler(spec.routing.endpoint_propagation, streams.generator("endpoint-propagation"))
            self.stale_endpoints = StaleEndpoints(env, propagation, replica.pre_stop_sleep)
            choose = self.stale_endpoints.chooser(self.replicas_active, choose, uniform)
            self.replicas_terminating.on_terminating.append(self.stale_endpoints.deleted)
        self.requests_routing = RequestsRouting(env, choose, self.requests_buffered, self.requests_failed)
        if self.stale_endpoints is not None:
            self.requests_routing.accepts = self.stale_endpoints.accepts
        # The clients: retries (failed attempts go through them), and what a server does with abandoned ones.
        self.abandoned: set[Request] = set()
        self.requests_complete.abandoned = self.requests_failed.abandoned = self.abandoned
        self.clients = RequestsRetrying(
            env,
            spec.client,
            self.requests_routing,
            self.requests_failed,
            self.requests_buffered,
            _uniforms(streams.generator("client.backoff")),
            self._attempts_in_flight,
            self.abandoned,
        )
        self._failure_sink: RequestsFailed | RequestsRetrying = self.requests_failed
        if spec.client.retries is not None:
            self._failure_sink = self.clients
            self.requests_routing.failed = self.clients
            if self.activator is not None:
                self.activator.failed = self.clients
        self.timeouts: RequestTimeouts | None = None
        if requests.timeout is not None:
            self.timeouts = RequestTimeouts(env, requests.timeout, self._expire)
        watch: Callable[[Request], None] | None = self.timeouts.watch if self.timeouts is not None else None
        if spec.client.retries is not None and spec.client.retries.per_try_timeout is not None:
            watch = _both(watch, self.clients.watch)
        classify = _classifier(requests.classes, streams) if classes else None
        self.traffic_source = TrafficSource(env, arrivals, self.requests_routing, watch, classify, classes)

        # Metrics.
        self.metrics_sink = MetricsSink()
        self.metrics_source = MetricsSource()
        self.metrics_pipeline = MetricsPipeline(env, spec.metrics.lag, self.metrics_sink)
        self.metrics_ticker = MetricsTicker(env, spec.metrics, self.metrics_source, self.metrics_pipeline)
        self.metrics_server: MetricsServer | None = None
        if spec.metrics.source is MetricsSourceKind.METRICS_SERVER:
            self.metrics_server = self._metrics_server(spec, streams)

        # Accounts that outlive replicas, for cluster-wide CPU utilisation.
        self._retired_busy_core_ns = 0.0
        self._retired_requested_core_ns = 0.0
        self._retired_node_core_ns = 0.0
        self._retired_bound = 0  # terminated replicas whose pods had been bound

        self.replicas_active.on_activate.append(self._activated)
        self.replicas_terminated.on_terminated.append(self._terminated)

        if spec.initial_ready and placement is not None:
            # Initial replicas still need nodes; once bound they are active at once.
            self.replicas_launching.instant = set(range(spec.initial_replicas))
            self.replica_set.scale_to(spec.initial_replicas)
        elif spec.initial_ready:
            self.replica_set.start_active([self._new_replica() for _ in range(spec.initial_replicas)])
        else:
            self.replica_set.scale_to(spec.initial_replicas)
        self.traffic_source.start()

    # -- wiring --------------------------------------------------------------------------------

    def _new_replica(self) -> Replica:
        spec = self.spec.replica
        id = len(self.replicas) + self.replicas_terminated.count()
        node = implicit_node_millicores(self.cpu_request, spec.node_cpu)
        capacity = pod_capacity(self.cpu_limit, node)
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
        )
        if self.activator is not None:
            # Knative's queue-proxy: its breaker's queue overflows with a 503; the activator hears who leaves.
            processing.overflow = "queue_proxy_overflow"
            processing.on_leave = self.activator.left
        if spec.cfs_quota_period is not None and self.cpu_limit is not None:
            # The limit is a quota per period, not a smooth cap: the quota owns the CPU's capacity.
            assert isinstance(processing.cpu, ProcessorSharingCPU), "a CFS quota drives processor sharing"
            CfsQuota(self.env, processing.cpu, self.cpu_limit, node, spec.cfs_quota_period)
        replica = Replica(
            id, processing, self.env.now(), self.cpu_request, self.cpu_limit, self.memory_request, self.memory_limit
        )
        replica.address = self._addresses.allocate()
        if self._baseline is not None:
            self._give_memory(replica)
        self.replicas[id] = replica
        return replica

    def _metrics_server(self, spec: ClusterSpec, streams: RandomStreams) -> MetricsServer:
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
            self.env,
            metrics.resolution,
            metrics.housekeeping,
            scrape_duration,
            phase,
            self._running,
            self.metrics_sink,
            streams.root().phase("metrics-server.phase", metrics.resolution),
        )

    def _running(self) -> list[Replica]:
        """Pods whose container runs: serving, or draining while they stop."""
        running = (ReplicaState.ACTIVE, ReplicaState.TERMINATING)
        return [replica for replica in self.replicas.values() if replica.state in running]

    def _give_memory(self, replica: Replica) -> None:
        """The replica's container gets a working set; alone on its node without a cluster."""
        assert self._baseline is not None and self.spec.replica.memory is not None
        qos = qos_class(replica.cpu_request, replica.cpu_limit, replica.memory_request, replica.memory_limit)
        memory = PodMemory(self._baseline(), replica.memory_request, replica.memory_limit, qos)
        memory.on_oom = lambda: self._oom_killed(replica)
        memory.on_evict = lambda: self._kubelet_evicts(replica)
        replica.memory = memory
        replica.processing.hold_memory(memory, self._per_request)
        if self.replicas_launching.placement is None:
            # Its kubelet has run since the start: eviction passes every 10 s from 0.
            node = NodeMemory(self.env, self.spec.replica.memory.node_memory, f"node-{replica.id}")
            node.attach(memory)

    def _oom_killed(self, replica: Replica) -> None:
        """The kernel killed the replica's container: it restarts if it was warming up or serving (killed
        again while it waits to restart, it waits anew), else its pod ends now."""
        self.oom_kills += 1
        for hook in self.on_oom_kill:
            hook(replica)
        env = self.env
        state = replica.state
        if state is ReplicaState.ACTIVE:
            env.schedule("oom_kill", env.now(), self.replicas_active, self.replicas_restarting, replica)
        elif state is ReplicaState.LAUNCHING:  # its container had started: its launch ends here
            env.schedule("oom_kill", env.now(), self.replicas_launching, self.replicas_restarting, replica)
        elif state is ReplicaState.RESTARTING:
            env.schedule("oom_kill", env.now(), self.replicas_restarting, self.replicas_restarting, replica)
        elif state is ReplicaState.TERMINATING:
            self.replicas_terminating.crash(replica, "oom")

    def _container_started(self, replica: Replica) -> None:
        """The replica's container starts (the kubelet's `startContainer`): its memory is charged from now,
        as cAdvisor sees the cgroup from its creation; a baseline above the limit dies at once. A start
        after a kill is a restart."""
        memory = replica.memory
        if memory is None or memory.running:
            return
        killed, started = replica.killed_at, replica.container_started_at
        if killed is not None and (started is None or started <= killed):
            self.restarts += 1
        replica.container_started_at = self.env.now()
        memory.start()

    def _restarted(self, replica: Replica) -> None:
        """The kubelet started the killed container again; the replica is still waiting to be ready."""
        if replica.state is ReplicaState.RESTARTING:
            self._container_started(replica)

    def _container_killed(self, replica: Replica) -> None:
        replica.processing.fail_all("oom")

    def _restart_delay(self, replica: Replica) -> int:
        """From the kill to ready again: the kubelet's back-off, then the container's start and readiness."""
        now = self.env.now()
        backoff = self._backoffs.setdefault(replica, CrashLoopBackOff())
        durations = {name: stage() for name, stage in self._restart_stages}
        started = backoff.restart_at(now) + durations.get("containerStart", 0)
        warm_up = durations.get("readiness", 0)
        probe = self.spec.replica.readiness_probe
        ready = started + warm_up if probe is None else ready_at(started, warm_up, probe)
        if started < ready:  # else it starts as it turns active
            self.env.call_at(started, lambda: self._restarted(replica))
        return ready - now

    def _startup_backoff(self, replica: Replica) -> int:
        """How long a container killed by its startup probe waits to start again (the crash-loop back-off)."""
        now = self.env.now()
        return self._backoffs.setdefault(replica, CrashLoopBackOff()).restart_at(now) - now

    def _startup_killed(self, replica: Replica) -> None:
        self.startup_probe_kills += 1
        self.restarts += 1
        if replica.memory is not None:
            replica.memory.stop()  # the killed container's memory is free; its next start charges it again

    def _kubelet_evicts(self, replica: Replica) -> None:
        """The kubelet evicts the pod under node memory pressure: 1 s to drain, then its ReplicaSet replaces it."""
        if replica.state in (ReplicaState.TERMINATING, ReplicaState.TERMINATED):
            return
        self.evictions += 1
        self.replicas_terminating.shorten(replica, KUBELET_EVICTION_GRACE, "evicted")
        self.replica_set.replace(replica)

    def _activated(self, replica: Replica) -> None:
        self._container_started(replica)  # no readiness stage: it started just now (else it runs already)
        warm_up = self.spec.replica.warm_up
        if warm_up is not None:  # each start of its container warms up again
            cpu_work = warm_up.cpu_millicores * warm_up.duration // 1000
            replica.processing.warm_up(warm_up.duration, warm_up.slowdown, cpu_work)
        if self.metrics_server is not None:
            self.metrics_server.started(replica)
        else:
            self.metrics_ticker.start(replica)
        if self.activator is not None:  # it sends what it holds into the pod's free slots
            self.activator.pod_ready(replica)
            return
        env = self.env
        # Requests the buffer held go out again through routing, oldest first.
        for request in self.requests_buffered.oldest_first():
            if request.stage != BUFFERED:
                continue  # already on its way out, sent by another replica's activation
            request.stage = ROUTING
            env.schedule("route_buffered", env.now(), self.requests_buffered, self.requests_routing, request)

    def _terminated(self, replica: Replica) -> None:
        if replica.memory is not None:
            replica.memory.stop()
            if replica.memory.node is not None:
                replica.memory.node.detach(replica.memory)
            self._retired_memory_peak = max(self._retired_memory_peak, replica.memory.peak)
        self._backoffs.pop(replica, None)
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

    def processing_stocks(self) -> list[RequestsProcessing]:
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
    def requests_arrived(self) -> int:
        return self.traffic_source.emitted

    @property
    def requests_processing(self) -> int:
        return sum(r.processing.count() for r in self.replicas.values())

    @property
    def requests_in_flight(self) -> int:
        """Requests whose clients still wait: attempts anywhere, less those abandoned at their servers."""
        return self._attempts_in_flight() + self.clients.count() - len(self.abandoned)

    def memory_working_set(self) -> int | None:
        """The working sets of every replica now, in bytes; None when memory is not modelled."""
        if self._baseline is None:
            return None
        return sum(r.memory.working_set for r in self.replicas.values() if r.memory is not None)

    def memory_peak(self) -> int | None:
        """The largest working set any replica has had, in bytes; None when memory is not modelled."""
        if self._baseline is None:
            return None
        live = (r.memory.peak for r in self.replicas.values() if r.memory is not None)
        return max(self._retired_memory_peak, *live, 0)

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
