"""What an autoscaler sees and does, the same for built-in ones and user plugins.

An autoscaler gets an `AutoscalerContext` when it starts. As upstream hands its controllers
separate listers and clients, the context is the union of small protocols, one per thing an
autoscaler can reach:

    Timing           the Clock (seed 004: the only view of time, so the same code runs simulated
                     or live), its loops' phases and its own random stream
    PodLister        the pods of its workload
    MetricsSource    the metrics it asks for by name (`metric`), whole samples as the pipeline
                     delivered them, and the requests an activator-like buffer holds
    RequestCounters  the running totals Knative scrapes from queue-proxies and its activator
    Scaler           the desired replica count, and the lever to change it (or to run Jobs)
    Resizer          the pod template's CPU and memory, in-place resizes, evictions (with the
                     workload's PodDisruptionBudget) and OOM kills
    ServingMode      Knative's serverless service: Proxy or Serve, and the activator's requests

Each built-in controller names only the protocols it uses (`HPAContext`, `KPAContext`,
`VPAContext`), so a reader sees what it can reach; a plugin may ask for the whole
`AutoscalerContext`. It schedules its own ticks with `clock.call_later`.

`skenario.autoscalers.cluster.ClusterContext` is the context over a simulated cluster; anything
with the same methods (for example a client of a real cluster) serves as well.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from skenario.core.clock import Clock
from skenario.core.stats import LatencyHistogram
from skenario.model.disruption import EvictionBudget
from skenario.model.metrics import Sample

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


class Timing(Protocol):
    """Time as an autoscaler sees it: the clock, where its loops start, and its own random stream."""

    @property
    def clock(self) -> Clock: ...

    def phase(self, loop: str, period: int, *, shared: bool = False) -> int:
        """How long from now until the autoscaler's loop `loop`, run every `period` ns, first runs: in (0, period].

        An autoscaler there from the start has run since before it, so the run starts at a random
        point of its period (a draw from a stream of the loop's own, from the scenario's seed);
        one started during the run is new, and its loop starts with it (`period`). `shared`: the
        loop is a cluster-wide process's that serves every such autoscaler (the VPA recommender's
        and updater's), so it ticks at one phase for all of them, from before the run.
        """
        ...

    @property
    def random(self) -> np.random.Generator:
        """The autoscaler's own random stream, drawn from the scenario's seed."""
        ...


class PodLister(Protocol):
    """The workload's pods, as a pod lister (client-go's `PodLister`) shows them."""

    def pods(self) -> list[PodView]:
        """The workload's pods that are not yet gone (pending, running or terminating)."""
        ...


class MetricsSource(Protocol):
    """The metrics pipeline: what metrics-server (or a custom metrics API) serves for the pods."""

    def samples(self) -> dict[int, Sample]:
        """The latest metrics sample of each live pod, by pod id, as the pipeline delivered it."""
        ...

    def metric(self, name: str) -> dict[int, float]:
        """The latest value of one metric (a key of `POD_METRICS`) for each live pod that reported, by pod id."""
        ...

    def subscribe(self, fn: Callable[[Sample], object]) -> None:
        """Call `fn` with each sample as it reaches the metrics sink."""
        ...

    def buffered_requests(self) -> int:
        """Requests waiting in the activator-like buffer for a pod to become ready."""
        ...

    def buffered_request_ns(self) -> int:
        """The integral of `buffered_requests` over time, in request-ns: its rate is their mean number."""
        ...

    def consumer_lag(self) -> int | None:
        """Messages of the stream the pods consume not yet consumed (waiting or held); None: no stream."""
        ...

    def partition_lags(self) -> list[int] | None:
        """That lag per partition of the stream's topic; None when it has no partitions (or there is no stream)."""
        ...

    def latency(self) -> LatencyHistogram:
        """Every completed request's latency so far, a copy (`LatencyHistogram.since` gives a window of it)."""
        ...


class RequestCounters(Protocol):
    """The running totals Knative's autoscaler scrapes: each pod's queue-proxy, and the activator's."""

    def counters(self) -> dict[int, PodCounters]:
        """Each ready pod's running totals now, by pod id (what Knative's autoscaler scrapes)."""
        ...

    def activator_counters(self) -> PodCounters:
        """The activator's running totals for the workload: every request it took (`requests`) and the
        integral of those it handles, held or proxied until their pod answers (`request_ns`), as its
        concurrency reporter counts them. Without an activator, the requests a buffer holds."""
        ...


class Scaler(Protocol):
    """The scale subresource: the desired replica count, read and written; or, for Jobs, how many run."""

    @property
    def desired(self) -> int: ...

    def scale_to(self, replicas: int) -> None: ...

    def run_as_jobs(self, messages: int) -> None:
        """From now on the pods are Jobs (KEDA's ScaledJob): each consumes `messages` of the workload's stream
        and completes, and is not replaced; `desired` counts those not completed."""
        ...


class Resizer(Protocol):
    """The vertical levers: the pod template's resources, in-place resizes, evictions, and OOM kills."""

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


class ServingMode(Protocol):
    """Knative's ServerlessService: whether the activator sits in the request path, and what it takes."""

    def set_sks_mode(self, proxy: bool) -> None:
        """Knative: route every request through the activator (Proxy) or straight to the pods (Serve).

        Without an activator in front of the pods this does nothing.
        """
        ...

    def subscribe_activator(self, fn: Callable[[], object]) -> None:
        """Call `fn` each time the activator takes a request (Knative; never called without one)."""
        ...


class AutoscalerContext(Timing, PodLister, MetricsSource, RequestCounters, Scaler, Resizer, ServingMode, Protocol):
    """The cluster as an autoscaler sees it: every small protocol at once (what a plugin gets)."""


@runtime_checkable
class Autoscaler(Protocol):
    """A horizontal or vertical autoscaler: built in, or a user's plugin.

    `start` is called once, at the start of the run, with the context it will act through; the
    autoscaler schedules its own work on `context.clock` from then on.
    """

    def start(self, context: AutoscalerContext) -> None: ...
