"""The AutoscalerContext over a simulated ClusterModel: what `skenario run` hands every autoscaler.

It reads the model's replicas, metrics sink, activator and buffer, and pulls the model's levers;
closing it stops the autoscaler it was given to, whatever that autoscaler is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from skenario.autoscalers.base import DEFAULT_CONTAINER, POD_METRICS, PodCounters, PodView
from skenario.core.clock import Clock, Timer
from skenario.core.random import RandomStreams
from skenario.core.stats import LatencyHistogram
from skenario.core.time import format_duration
from skenario.errors import ctrl_c_noted, plugin_failure
from skenario.model.cluster import ClusterModel
from skenario.model.disruption import EvictionBudget
from skenario.model.metrics import Sample
from skenario.model.replicas import Replica, ReplicaState

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
        # Each live pod's view as last listed, with what it showed (`pods`).
        self._views: dict[int, tuple[tuple[object, ...], PodView]] = {}

    def guarded(self, fn: Callable[..., object], method: str | None = None) -> Callable[..., object]:
        """`fn`, reporting what it raises (`SystemExit` too) as its plugin's failure, a PluginError, when the context
        is a plugin's (`errors.plugin_failure`)."""
        plugin = self.plugin
        if plugin is None:
            return fn
        clock = self._model.env

        def call(*args: Any) -> object:
            with ctrl_c_noted():  # its start is called as the run is built, before the run's own handlers
                try:
                    return fn(*args)
                except BaseException as exc:
                    name = method or str(getattr(fn, "__qualname__", None) or repr(fn))
                    failure = plugin_failure(exc, plugin, name, f"at {format_duration(clock.now())}")
                    if failure is None:
                        raise
                    raise failure from exc

        return call

    def close(self) -> None:
        self.closed = True

    @property
    def clock(self) -> Clock:
        return self._clock

    def pods(self) -> list[PodView]:
        """The live pods' views: a pod's view is made again only when what it shows changed (an HPA lists every
        pod at every sync, and most pods have not changed since the last)."""
        kept = self._views
        views: dict[int, tuple[tuple[object, ...], PodView]] = {}
        listed = []
        for replica in self._model.replicas.values():
            state = replica.state
            if state is ReplicaState.TERMINATED:
                continue
            shown: tuple[object, ...] = (
                state,
                replica.ready_since,
                replica.killed_at,
                replica.cpu_request,
                replica.cpu_limit,
                replica.memory_request,
                replica.memory_limit,
                replica.last_run,
            )
            before = kept.get(replica.id)
            view = before[1] if before is not None and before[0] == shown else self._view(replica)
            views[replica.id] = (shown, view)
            listed.append(view)
        self._views = views
        return listed

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

    def consumer_lag(self) -> int | None:
        stream = self._model.stream
        return stream.lag() if stream is not None else None

    def latency(self) -> LatencyHistogram:
        return self._model.requests_complete.latency

    def run_as_jobs(self, messages: int) -> None:
        self._model.run_as_jobs(messages)

    def partition_lags(self) -> list[int] | None:
        stream = self._model.stream
        return stream.partition_lags() if stream is not None else None

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
