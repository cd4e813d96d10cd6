"""The metrics pipeline of seeds 000/002: MetricsSource -> MetricsPipeline -> MetricsSink.

Each active replica has a `metrics_tick` every `interval` (the first `first_after` its
activation). A tick takes a Sample of the replica over the window since its last tick and sends
it into the pipeline, where it waits `lag` (the scrape delay of metrics-server) before it reaches
the sink that autoscalers read. The sink keeps only each live replica's latest sample.
"""

from __future__ import annotations

from collections.abc import Callable

from skenario.core.entity import Entity
from skenario.core.environment import Environment
from skenario.core.stocks import KeyedStock, Source
from skenario.core.time import SECOND
from skenario.model.config import MetricsSpec
from skenario.model.replicas import Replica, ReplicaState


class Sample(Entity):
    """What one replica showed over one window, as metrics-server and queue-proxy report it.

    `cpu_millicores` is the mean CPU in use over the window (metrics-server's usage), `in_flight`
    the requests held at the tick, `concurrency` their mean over the window (Knative's
    stable-window input) and `rps` the requests that arrived per second. `memory_bytes` is the
    working set at the tick (metrics-server serves memory as the last point, not a mean); None
    when memory is not modelled.
    """

    __slots__ = (
        "at",
        "concurrency",
        "cpu_millicores",
        "cpu_request",
        "in_flight",
        "memory_bytes",
        "memory_request",
        "replica",
        "replica_id",
        "rps",
        "window",
    )
    kind = "Sample"

    def __init__(
        self,
        id: int,
        replica: Replica,
        at: int,
        window: int,
        cpu_millicores: float,
        in_flight: int,
        concurrency: float,
        rps: float,
        cpu_request: int,
        memory_bytes: int | None = None,
        memory_request: int | None = None,
    ) -> None:
        self.id = id
        self.replica = replica
        self.replica_id = replica.id
        self.at = at
        self.window = window
        self.cpu_millicores = cpu_millicores
        self.in_flight = in_flight
        self.concurrency = concurrency
        self.rps = rps
        self.cpu_request = cpu_request
        self.memory_bytes = memory_bytes
        self.memory_request = memory_request

    @property
    def cpu_utilisation(self) -> float:
        """CPU in use as a fraction of the replica's CPU request (what an HPA target means)."""
        return self.cpu_millicores / self.cpu_request if self.cpu_request else 0.0


class MetricsTick(Entity):
    """A replica's metrics clock: where its previous window ended (the integrals' values then)."""

    __slots__ = ("arrived", "at", "busy", "in_flight_area", "replica", "run")
    kind = "MetricsTick"

    def __init__(self, replica: Replica, at: int) -> None:
        self.id = replica.id
        self.replica = replica
        self.run = replica.restarts  # which run of its container this tick follows
        processing = replica.processing
        self.at = at
        self.busy = processing.cpu.busy_core_ns()
        self.in_flight_area = processing.in_flight_area()
        self.arrived = processing.arrived


class MetricsTicker(KeyedStock[MetricsTick]):
    """Holds each active replica's tick between firings; a firing is a self-loop movement."""

    __slots__ = ("_env", "_pipeline", "_source", "spec")

    def __init__(
        self,
        env: Environment,
        spec: MetricsSpec,
        source: MetricsSource,
        pipeline: MetricsPipeline,
    ) -> None:
        super().__init__("MetricsTicktock", "MetricsTick")
        self._env = env
        self.spec = spec
        self._source = source
        self._pipeline = pipeline

    def start(self, replica: Replica) -> None:
        """Begin ticking for a replica that just became active."""
        now = self._env.now()
        tick = MetricsTick(replica, now)
        if now + self.spec.first_after < self._env.halt_at:
            self._items[tick] = None
            self._env.schedule("metrics_tick", now + self.spec.first_after, self, self, tick)

    def add(self, entity: MetricsTick) -> None:
        if entity.replica.state is not ReplicaState.ACTIVE or entity.run != entity.replica.restarts:
            return  # no longer active, or restarted since (with a tick of its own): this tick stops here
        self._items[entity] = None
        env = self._env
        now = env.now()
        sample = self._sample(entity, now)
        if sample is not None:
            env.schedule("send_metrics_to_pipeline", now, self._source, self._pipeline, sample)
        if now + self.spec.interval < env.halt_at:  # else the run ends first: the tick stops here
            env.schedule("metrics_tick", now + self.spec.interval, self, self, entity)

    def _sample(self, tick: MetricsTick, now: int) -> Sample | None:
        window = now - tick.at
        if window <= 0:
            return None
        replica = tick.replica
        processing = replica.processing
        busy = processing.cpu.busy_core_ns()
        area = processing.in_flight_area()
        arrived = processing.arrived
        memory = replica.memory
        sample = Sample(
            self._source.emitted,
            replica,
            now,
            window,
            cpu_millicores=(busy - tick.busy) * 1000 / window,
            in_flight=processing.count(),
            concurrency=(area - tick.in_flight_area) / window,
            rps=(arrived - tick.arrived) * SECOND / window,
            cpu_request=replica.cpu_request,
            memory_bytes=memory.working_set if memory is not None else None,
            memory_request=memory.request if memory is not None else None,
        )
        tick.at, tick.busy, tick.in_flight_area, tick.arrived = now, busy, area, arrived
        return sample


class MetricsSource(Source[Sample]):
    """Gives the samples the ticks take; named so the movements have a from-stock."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("MetricsSource", "Sample")


class MetricsPipeline(KeyedStock[Sample]):
    """Samples on their way to the sink; each takes `lag` to arrive.

    While the pipeline is down (a fault a scenario event injects) it loses every sample: those
    in transit when it went down, and those given to it since.
    """

    __slots__ = ("_env", "_sink", "down", "lag", "lost")

    def __init__(self, env: Environment, lag: int, sink: MetricsSink) -> None:
        super().__init__("MetricsPipeline", "Sample")
        self._env = env
        self.lag = lag
        self._sink = sink
        self.down = False
        self.lost = 0

    def add(self, entity: Sample) -> None:
        if self.down:
            self.lost += 1
            return
        env = self._env
        if env.now() + self.lag < env.halt_at:  # else it would reach the sink after the run
            self._items[entity] = None
            env.schedule("send_metrics_to_sink", env.now() + self.lag, self, self._sink, entity)

    def go_down(self) -> None:
        """Lose what is in transit (its deliveries will find nothing) and every sample until `come_up`."""
        self.lost += len(self._items)
        self._items.clear()
        self.down = True

    def come_up(self) -> None:
        self.down = False


class MetricsSink:
    """The metrics autoscalers read: the latest sample of each live replica.

    `subscribe(fn)` calls `fn(sample)` as each sample arrives (an autoscaler's Stat feed).
    """

    __slots__ = ("_count", "_subscribers", "kind_stocked", "latest", "name")

    def __init__(self) -> None:
        self.name = "MetricsSink"
        self.kind_stocked = "Sample"
        self._count = 0
        self.latest: dict[int, Sample] = {}
        self._subscribers: list[Callable[[Sample], object]] = []

    def subscribe(self, fn: Callable[[Sample], object]) -> None:
        self._subscribers.append(fn)

    def add(self, entity: Sample) -> None:
        self._count += 1
        if entity.replica.state is ReplicaState.TERMINATED:
            return  # arrived after its replica went away: nobody lists that pod any more
        self.latest[entity.replica_id] = entity
        for fn in self._subscribers:
            fn(entity)

    def forget(self, replica: Replica) -> None:
        self.latest.pop(replica.id, None)

    def clear(self) -> None:
        """Forget every sample: the metrics API has nothing to serve (its pipeline is down)."""
        self.latest.clear()

    def count(self) -> int:
        return self._count
