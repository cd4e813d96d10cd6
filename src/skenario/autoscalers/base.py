"""What an autoscaler sees and does, the same for built-in ones and user plugins.

An autoscaler gets an `AutoscalerContext` when it starts: the Clock (seed 004: the only view of
time it has, so the same code runs simulated or live), the pods of its workload, the metrics it
asks for (by name, `metric`) or whole samples as the pipeline delivered them, and the two levers
Kubernetes gives: the desired replica count and the pod template's CPU (with evictions to apply
it). It schedules its own ticks with `clock.call_later`.

`ClusterContext` is the context over a simulated `ClusterModel`; anything with the same methods
(for example a client of a real cluster) serves as well.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from skenario.core.clock import Clock, Timer
from skenario.core.random import RandomStreams
from skenario.core.time import format_duration
from skenario.errors import PluginError
from skenario.model.cluster import ClusterModel
from skenario.model.disruption import EvictionBudget
from skenario.model.metrics import Sample
from skenario.model.replicas import Replica, ReplicaState

DEFAULT_CONTAINER = "app"  # the simulated pod's one container, unless the workload names it

# The per-pod metrics an autoscaler can ask for by name (`AutoscalerContext.metric`), from a sample.
POD_METRICS: dict[str, Callable[[Sample], float]] = {
    "cpu_millicores": lambda s: s.cpu_millicores,  # mean CPU in use over the window (metrics-server)
    "cpu_utilization": lambda s: s.cpu_millicores / s.cpu_request if s.cpu_request else 0.0,  # of the request
    "in_flight": lambda s: s.in_flight,  # requests held at the tick
    "concurrency": lambda s: s.concurrency,  # mean requests held over the window (queue-proxy)
    "requests_per_second": lambda s: s.rps,  # arrivals over the window
    "memory_bytes": lambda s: s.memory_bytes or 0.0,  # working set at the tick (memory modelled)
}


@dataclass(frozen=True)
class PodView:
    """One pod of the workload as the Kubernetes API would show it.

    `ready` is the Ready condition; `ready_since` its last transition (None while never ready);
    `started_at` when the pod was created. `phase` is Pending while launching, Running when
    active or restarting a killed container (then not ready), Terminating while it drains. A
    simulated pod has one container, `container`.
    """

    id: int
    name: str
    phase: str
    ready: bool
    started_at: int
    ready_since: int | None
    cpu_request: int
    cpu_limit: int | None
    container: str = DEFAULT_CONTAINER
    memory_request: int | None = None  # bytes
    memory_limit: int | None = None  # bytes
    last_oom: tuple[int, int] | None = None  # (started, killed) of its container's last run, if OOM-killed


@dataclass(frozen=True)
class PodCounters:
    """A pod's running totals, as a scrape of its queue-proxy sees them; rates come from differences.

    `request_ns` is the integral of requests held over time (so its rate is the mean concurrency),
    `requests` the requests that have arrived at the pod. `proxied_request_ns` and
    `proxied_requests` are the part of those that Knative's activator proxied (queue-proxy counts
    them apart; the activator reports them itself).
    """

    request_ns: int
    requests: int
    # `status.startTime`, when its kubelet took the pod: its age decides whether Knative's scraper prefers it.
    started_at: int = 0
    proxied_request_ns: int = 0
    proxied_requests: int = 0


class AutoscalerContext(Protocol):
    """The cluster as an autoscaler sees it."""

    @property
    def clock(self) -> Clock: ...

    def pods(self) -> list[PodView]:
        """The workload's pods that are not yet gone (pending, running or terminating)."""
        ...

    def samples(self) -> dict[int, Sample]:
        """The latest metrics sample of each live pod, by pod id, as the pipeline delivered it."""
        ...

    def metric(self, name: str) -> dict[int, float]:
        """The latest value of one metric (a key of `POD_METRICS`) for each live pod that reported, by pod id."""
        ...

    def subscribe(self, fn: Callable[[Sample], object]) -> None:
        """Call `fn` with each sample as it reaches the metrics sink."""
        ...

    @property
    def desired(self) -> int: ...

    def scale_to(self, replicas: int) -> None: ...

    @property
    def cpu_request(self) -> int:
        """The pod template's CPU request, in millicores."""
        ...

    def set_cpu(self, request: int, limit: int | None = None) -> None:
        """Change the pod template's CPU; running pods keep theirs until replaced."""
        ...

    @property
    def memory_request(self) -> int | None:
        """The pod template's memory request, in bytes (None: it has none)."""
        ...

    def set_memory(self, request: int | None, limit: int | None = None) -> None:
        """Change the pod template's memory (bytes); running pods keep theirs until replaced."""
        ...

    def subscribe_oom(self, fn: Callable[[PodView], object]) -> None:
        """Call `fn` with the pod each time the kernel OOM-kills its container (memory modelled)."""
        ...

    def evict(self, pod_id: int) -> None:
        """Stop a pod; its replacement is made from the current template."""
        ...

    def resize(
        self,
        pod_id: int,
        cpu_request: int,
        cpu_limit: int | None,
        memory_request: int | None = None,
        memory_limit: int | None = None,
    ) -> str:
        """Resize a running pod in place (Kubernetes 1.33+): "Applied", "Deferred", "Infeasible" or "InProgress"."""
        ...

    def eviction_budget(self) -> EvictionBudget | None:
        """The workload's PodDisruptionBudget as the eviction API applies it now; None if it has none."""
        ...

    def buffered_requests(self) -> int:
        """Requests waiting in the activator-like buffer for a pod to become ready."""
        ...

    def buffered_request_ns(self) -> int:
        """The integral of `buffered_requests` over time, in request-ns: its rate is their mean number."""
        ...

    def counters(self) -> dict[int, PodCounters]:
        """Each ready pod's running totals now, by pod id (what Knative's autoscaler scrapes)."""
        ...

    def activator_counters(self) -> PodCounters:
        """The activator's running totals for the workload: every request it took (`requests`) and the
        integral of those it handles, held or proxied until their pod answers (`request_ns`), as its
        concurrency reporter counts them. Without an activator, the requests a buffer holds."""
        ...

    def phase(self, loop: str, period: int, *, shared: bool = False) -> int:
        """How long from now until the autoscaler's loop `loop`, run every `period` ns, first runs: in (0, period].

        An autoscaler there from the start has run since before it, so the run starts at a random
        point of its period (a draw from a stream of the loop's own, from the scenario's seed);
        one started during the run is new, and its loop starts with it (`period`). `shared`: the
        loop is a cluster-wide process's that serves every such autoscaler (the VPA recommender's
        and updater's), so it ticks at one phase for all of them, from before the run.
        """
        ...

    def set_sks_mode(self, proxy: bool) -> None:
        """Knative: route every request through the activator (Proxy) or straight to the pods (Serve).

        Without an activator in front of the pods this does nothing.
        """
        ...

    def subscribe_activator(self, fn: Callable[[], object]) -> None:
        """Call `fn` each time the activator takes a request (Knative; never called without one)."""
        ...

    @property
    def random(self) -> np.random.Generator:
        """The autoscaler's own random stream, drawn from the scenario's seed."""
        ...


@runtime_checkable
class Autoscaler(Protocol):
    """A horizontal or vertical autoscaler: built in, or a user's plugin.

    `start` is called once, at the start of the run, with the context it will act through; the
    autoscaler schedules its own work on `context.clock` from then on.
    """

    def start(self, context: AutoscalerContext) -> None: ...


_PHASES = {
    ReplicaState.LAUNCHING: "Pending",
    ReplicaState.ACTIVE: "Running",
    ReplicaState.RESTARTING: "Running",
    ReplicaState.TERMINATING: "Terminating",
}


class ClusterContext:
    """An AutoscalerContext over a simulated ClusterModel.

    Each autoscaler gets its own. `close()` stops the autoscaler it was given to: its pending
    calls and subscriptions do nothing from then on and its levers are ignored, so any
    autoscaler, a plugin too, can be stopped without knowing how. `on_action`, when set, hears
    every lever pulled (what the run records for autoscalers that keep no decisions of their own).
    `container` names the pods' one container, as their manifests do. `phases`, the workload's
    random streams and the autoscaler's name, draws its loops' phases: stream
    `autoscaler.<name>.<loop>.phase`, or `<loop>.phase` unscoped for a shared loop; without it
    every loop is aligned with the start.
    """

    def __init__(
        self,
        model: ClusterModel,
        on_action: Callable[..., object] | None = None,
        container: str = DEFAULT_CONTAINER,
        random: np.random.Generator | None = None,
        plugin: str | None = None,
        phases: tuple[RandomStreams, str] | None = None,
    ) -> None:
        self._model = model
        self._on_action = on_action
        self._container = container
        self._random = random if random is not None else np.random.default_rng(0)
        self._phases = phases  # the workload's streams and the autoscaler's name; None: every loop aligned
        self.closed = False
        # A user's plugin: an exception in what it scheduled is reported as the plugin's, in one line.
        self.plugin = plugin
        self._clock = _ClosableClock(model.env, self)

    def guarded(self, fn: Callable[..., object], method: str | None = None) -> Callable[..., object]:
        """`fn`, reporting an exception it raises as its plugin's (a PluginError) when the context is a plugin's."""
        plugin = self.plugin
        if plugin is None:
            return fn
        clock = self._model.env

        def call(*args: Any) -> object:
            try:
                return fn(*args)
            except PluginError:
                raise
            except Exception as exc:
                name = method or getattr(fn, "__qualname__", repr(fn))
                raise PluginError(
                    f"plugin {plugin} raised {type(exc).__name__} in {name} at {format_duration(clock.now())}: {exc}"
                ) from exc

        return call

    def close(self) -> None:
        self.closed = True

    @property
    def clock(self) -> Clock:
        return self._clock

    def pods(self) -> list[PodView]:
        return [self._view(r) for r in self._model.replicas.values() if r.state is not ReplicaState.TERMINATED]

    def _view(self, replica: Replica) -> PodView:
        return PodView(
            id=replica.id,
            name=replica.name,
            phase=_PHASES[replica.state],
            ready=replica.state is ReplicaState.ACTIVE,
            started_at=replica.created_at,
            ready_since=replica.killed_at if replica.state is ReplicaState.RESTARTING else replica.ready_since,
            cpu_request=replica.cpu_request,
            cpu_limit=replica.cpu_limit,
            container=self._container,
            memory_request=replica.memory_request,
            memory_limit=replica.memory_limit,
            last_oom=replica.last_run,
        )

    def samples(self) -> dict[int, Sample]:
        return dict(self._model.metrics_sink.latest)

    def metric(self, name: str) -> dict[int, float]:
        value = POD_METRICS.get(name)
        if value is None:
            raise ValueError(f"no metric named {name!r}; there are {', '.join(POD_METRICS)}")
        return {pod: value(sample) for pod, sample in self._model.metrics_sink.latest.items()}

    def subscribe(self, fn: Callable[[Sample], object]) -> None:
        guarded = self.guarded(fn)

        def feed(sample: Sample) -> None:
            if not self.closed:
                guarded(sample)

        self._model.metrics_sink.subscribe(feed)

    @property
    def desired(self) -> int:
        return self._model.desired

    def scale_to(self, replicas: int) -> None:
        if self.closed:
            return
        if replicas != self._model.desired:
            if self._on_action is not None:
                self._on_action("scale_to", desired=replicas, current=self._model.desired)
            self._model.scale_to(replicas)

    @property
    def cpu_request(self) -> int:
        return self._model.cpu_request

    def set_cpu(self, request: int, limit: int | None = None) -> None:
        if self.closed:
            return
        if self._on_action is not None:
            self._on_action("set_cpu", cpu_request=request, cpu_limit=limit)
        self._model.set_cpu(request, limit)

    @property
    def memory_request(self) -> int | None:
        return self._model.memory_request

    def set_memory(self, request: int | None, limit: int | None = None) -> None:
        if self.closed:
            return
        if self._on_action is not None:
            self._on_action("set_memory", memory_request=request, memory_limit=limit)
        self._model.set_memory(request, limit)

    def subscribe_oom(self, fn: Callable[[PodView], object]) -> None:
        guarded = self.guarded(fn)

        def feed(replica: Replica) -> None:
            if not self.closed and replica.state is not ReplicaState.TERMINATED:
                guarded(self._view(replica))

        self._model.on_oom_kill.append(feed)

    def evict(self, pod_id: int) -> None:
        if self.closed:
            return
        replica = self._model.replicas.get(pod_id)
        evictable = (ReplicaState.LAUNCHING, ReplicaState.ACTIVE, ReplicaState.RESTARTING)
        if replica is not None and replica.state in evictable:
            if self._on_action is not None:
                self._on_action("evict", pod=replica.name)
            self._model.replace(replica)

    def resize(
        self,
        pod_id: int,
        cpu_request: int,
        cpu_limit: int | None,
        memory_request: int | None = None,
        memory_limit: int | None = None,
    ) -> str:
        replica = self._model.replicas.get(pod_id)
        if self.closed or replica is None:
            return "Infeasible"
        outcome = self._model.resize(replica, cpu_request, cpu_limit, memory_request, memory_limit)
        if self._on_action is not None:
            self._on_action(
                "resize",
                pod=replica.name,
                outcome=outcome.value,
                cpu_request=cpu_request,
                cpu_limit=cpu_limit,
                memory_request=memory_request,
                memory_limit=memory_limit,
            )
        return outcome.value

    def eviction_budget(self) -> EvictionBudget | None:
        return self._model.eviction_budget()

    def buffered_requests(self) -> int:
        return self._model.requests_buffered.count()

    def buffered_request_ns(self) -> int:
        return self._model.requests_buffered.held_area()

    def counters(self) -> dict[int, PodCounters]:
        return {
            replica.id: PodCounters(
                (processing := replica.processing).in_flight_area(),
                processing.arrived,
                replica.bound_at if replica.bound_at is not None else replica.created_at,  # its kubelet's startTime
                processing.proxied_area(),
                processing.proxied,
            )
            for replica in self._model.replicas_active
        }

    def activator_counters(self) -> PodCounters:
        activator = self._model.activator
        if activator is None:
            return PodCounters(self._model.requests_buffered.held_area(), 0)
        return PodCounters(activator.reported_area(), activator.taken)

    def phase(self, loop: str, period: int, *, shared: bool = False) -> int:
        if self._phases is None:
            return period
        streams, name = self._phases
        now = self._model.env.now()
        if shared:  # the process ticks at its own phase from before the run: its next tick
            return (streams.root().phase(f"{loop}.phase", period) - now) % period or period
        if now > 0:
            return period
        return streams.phase(f"autoscaler.{name}.{loop}.phase", period)

    def set_sks_mode(self, proxy: bool) -> None:
        activator = self._model.activator
        if activator is not None and not self.closed and activator.in_path != proxy:
            if self._on_action is not None:
                self._on_action("set_sks_mode", mode="Proxy" if proxy else "Serve")
            activator.in_path = proxy

    def subscribe_activator(self, fn: Callable[[], object]) -> None:
        activator = self._model.activator
        if activator is None:
            return

        def feed(request: object) -> None:
            if not self.closed:
                fn()

        activator.on_request.append(feed)

    @property
    def random(self) -> np.random.Generator:
        return self._random


class _ClosableClock:
    """The model's clock, through which a closed context's pending calls come to nothing."""

    def __init__(self, clock: Clock, context: ClusterContext) -> None:
        self._clock = clock
        self._context = context

    def now(self) -> int:
        return self._clock.now()

    def call_at(self, at: int, fn: Callable[[], object]) -> Timer:
        return self._clock.call_at(at, self._unless_closed(fn))

    def call_later(self, delay: int, fn: Callable[[], object]) -> Timer:
        return self._clock.call_later(delay, self._unless_closed(fn))

    def _unless_closed(self, fn: Callable[[], object]) -> Callable[[], None]:
        context = self._context
        guarded = context.guarded(fn)

        def call() -> None:
            if not context.closed:
                guarded()

        return call
