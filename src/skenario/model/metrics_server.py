"""metrics-server: one scrape of every running pod per resolution, and CPU as a rate between two scrapes.

What the HPA and the VPA read in a real cluster (kubernetes-sigs/metrics-server):

- `server.runScrape` (started by `RunUntil`) calls `tick` at once, then on a `time.NewTicker` of
  `resolution` (`--metric-resolution`: 15 s in the shipped manifests and Helm chart): each tick
  scrapes all kubelets at once. The scrapes therefore fall at `phase + k × resolution`, where
  the phase is set by when metrics-server started: at a random point of its period relative to
  the controllers that read it (`RandomStreams.phase`, stream `metrics-server.phase`; one
  metrics-server serves the whole cluster, so every workload's scrapes share it).
- Each kubelet serves the container's cumulative CPU as of its last housekeeping
  (`resourceMetricsCollector.collectContainerCPUMetrics`, pkg/kubelet/metrics/collectors: the
  counter `UsageCoreNanoSeconds` stamped with cAdvisor's stats time; cAdvisor refreshes them every
  `housekeeping`, 10 s, at its own phase per container), so a point is up to that old: its
  timestamp is the housekeeping's, its values the cumulative CPU used and the working set then.
  The scrape may take a while (`scrape_duration`, a distribution) before its points are served.
- `podStorage.Store` keeps each pod's last two points; a container that restarted starts afresh.
  One whose age at the point is at least 10 s (`freshContainerMinMetricsResolution`) and less
  than the resolution gets a synthetic previous point at its start with no CPU used, so it shows
  up after one scrape; otherwise a pod needs two.
- `GetMetrics` serves CPU as `(cum_last − cum_prev) / (t_last − t_prev)` (`resourceUsage`) with
  that window and the last point's timestamp, and memory as the last working set.

Each served point becomes a `Sample` in the model's MetricsSink. The queue-proxy-like figures a
Sample also carries (requests in flight, their mean, arrivals per second) come from the same two
points, as a custom-metrics adapter scraping at the same times would give them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from skenario.core.environment import Environment
from skenario.core.stocks import KeyedStock
from skenario.core.time import SECOND
from skenario.model.metrics import MetricsSink, Sample
from skenario.model.replicas import Replica

FRESH_CONTAINER_MIN_RESOLUTION = 10 * SECOND
"""`freshContainerMinMetricsResolution` (pkg/storage/pod.go): the youngest container given a synthetic first point."""


class StatsPoint(NamedTuple):
    """A container's stats as the kubelet serves them: taken at its last housekeeping."""

    at: int
    started_at: int  # the container's start; a later one than the stored point's means a restart
    cpu_core_ns: float  # CPU used since the replica started, in core-ns
    in_flight_area: int
    arrived: int
    in_flight: int
    working_set: int | None


class MetricsServer(KeyedStock[Sample]):
    """Scrapes the pods `running()` lists every `resolution` and serves their rates to `sink`.

    The first scrape is at `phase` (in (0, resolution]; the whole resolution, the default, is the
    aligned server), the others every `resolution` after it. `housekeeping_phase(replica)` gives
    each container's housekeeping phase (ns in [0, housekeeping)), drawn once per replica;
    `scrape_duration()` how long each scrape takes. The samples of a scrape wait in this stock
    until it has taken that long.
    """

    __slots__ = (
        "_env",
        "_last",
        "_pending",
        "_phase",
        "_prev",
        "_running",
        "_scrape_duration",
        "_sink",
        "_started",
        "_tick",
        "down",
        "housekeeping",
        "lost",
        "resolution",
        "scrapes",
        "served",
    )

    def __init__(
        self,
        env: Environment,
        resolution: int,
        housekeeping: int,
        scrape_duration: Callable[[], int],
        housekeeping_phase: Callable[[Replica], int],
        running: Callable[[], Iterable[Replica]],
        sink: MetricsSink,
        phase: int | None = None,
    ) -> None:
        super().__init__("MetricsServer", "Sample")
        if resolution < FRESH_CONTAINER_MIN_RESOLUTION:
            raise ValueError(f"metric resolution must be at least 10s, got {resolution} ns")
        phase = resolution if phase is None else phase
        if not 0 < phase <= resolution:
            raise ValueError(f"the first scrape must be in (0, {resolution}] ns, got {phase} ns")
        self._env = env
        self.resolution = resolution
        self.housekeeping = housekeeping
        self._scrape_duration = scrape_duration
        self._phase = housekeeping_phase
        self._running = running
        self._sink = sink
        self._last: dict[Replica, StatsPoint] = {}
        self._prev: dict[Replica, StatsPoint] = {}
        self._pending: dict[Replica, StatsPoint] = {}  # each pod's stats for the next scrape
        self._started: dict[Replica, StatsPoint] = {}  # each pod's counters when its container started
        self.down = False  # a fault: scrapes fail and nothing is served
        self.lost = 0  # samples a down server did not serve
        self.scrapes = 0
        self.served = 0
        self._tick = phase  # the instant of the last scrape scheduled
        self._schedule_scrape(phase)

    def _schedule_scrape(self, at: int) -> None:
        """The scrape of the instant `at` (a tick); it serves after its duration."""
        env = self._env
        self._tick = at
        served = at + self._scrape_duration()
        if served < env.halt_at:
            for replica in self._running():  # first, so a read at the scrape's instant comes before it
                self._read_before(replica, at)
            env.call_at(served, lambda: self._scrape(at))

    def started(self, replica: Replica) -> None:
        """A pod's container started (it turned ready: before that it uses no CPU in the model).

        Its counters now are the synthetic first point's, and its stats are read for the next
        scrape if it has a housekeeping before it.
        """
        self._started[replica] = self._point(replica)
        now = self._env.now()
        scrape = self._tick if self._tick > now else self._tick + self.resolution  # the next tick after now
        self._read_before(replica, scrape)

    def _read_before(self, replica: Replica, scrape: int) -> None:
        """Read the pod's stats at its last housekeeping before the scrape at `scrape`."""
        env = self._env
        at = scrape - (scrape - self._phase(replica)) % self.housekeeping
        if at >= env.now():
            env.call_at(at, lambda: self._read(replica))

    def _read(self, replica: Replica) -> None:
        self._pending[replica] = self._point(replica)

    def _point(self, replica: Replica) -> StatsPoint:
        """The pod's stats now, as its kubelet's housekeeping takes them."""
        processing = replica.processing
        memory = replica.memory
        started = replica.ready_since if replica.ready_since is not None else self._env.now()
        return StatsPoint(
            self._env.now(),
            started,
            processing.cpu.busy_core_ns(),
            processing.in_flight_area(),
            processing.arrived,
            processing.count(),
            memory.working_set if memory is not None else None,
        )

    def _scrape(self, at: int) -> None:
        """`podStorage.Store` with the points read for the scrape at `at`, then `GetMetrics` into the sink."""
        self.scrapes += 1
        pending, self._pending = self._pending, {}
        self._schedule_scrape(at + self.resolution)
        running = set(self._running())
        if self.down:  # the scrape fails: nothing is stored, so each pod needs two scrapes again
            self.lost += sum(1 for replica in pending if replica in running)
            self._last, self._prev = {}, {}
            return
        last: dict[Replica, StatsPoint] = {}
        prev: dict[Replica, StatsPoint] = {}
        for replica, point in pending.items():
            if replica not in running:
                continue
            last[replica] = point
            age = point.at - point.started_at
            stored = self._last.get(replica)
            if FRESH_CONTAINER_MIN_RESOLUTION <= age < self.resolution and replica in self._started:
                prev[replica] = self._started[replica]  # synthetic: at the start, nothing used since
            elif stored is not None and point.started_at < stored.at:  # the same container as before
                if point.at > stored.at:
                    prev[replica] = stored
                elif replica in self._prev and self._prev[replica].at < point.at:
                    prev[replica] = self._prev[replica]
        self._last, self._prev = last, prev
        for replica in [r for r in self._started if r not in running]:
            del self._started[replica]
        env = self._env
        for replica, point in last.items():
            before = prev.get(replica)
            if before is None:
                continue
            sample = _sample(self.served, replica, before, point)
            self.served += 1
            self._items[sample] = None
            env.schedule("send_metrics_to_sink", env.now(), self, self._sink, sample)

    def go_down(self) -> None:
        """Serve nothing until `come_up`: what is scraped meanwhile is lost."""
        self.down = True

    def come_up(self) -> None:
        self.down = False


def _sample(id: int, replica: Replica, prev: StatsPoint, last: StatsPoint) -> Sample:
    window = last.at - prev.at
    return Sample(
        id,
        replica,
        last.at,
        window,
        cpu_millicores=(last.cpu_core_ns - prev.cpu_core_ns) * 1000 / window,
        in_flight=last.in_flight,
        concurrency=(last.in_flight_area - prev.in_flight_area) / window,
        rps=(last.arrived - prev.arrived) * SECOND / window,
        cpu_request=replica.cpu_request,
        memory_bytes=last.working_set,
        memory_request=replica.memory.request if replica.memory is not None else None,
    )
