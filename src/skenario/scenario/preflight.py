"""Pre-flight: what a scenario will cost before it runs, and the limits past which `run` refuses it.

The estimate comes from the scenario alone, before anything is built (building 10 million
replicas is itself the runaway): requests from the traffic's rates over the run (trace files are
not read, so they count as unknown), rows from the recording interval and the most replicas the
scenario can have, wall time from the measured cost of a request (`benchmarks/reference.py`: about
5 µs) and memory from the rows and replicas. `skenario check FILE` prints it; `skenario run`
refuses a scenario past `LIMITS` unless `--force`.
"""

from __future__ import annotations

from dataclasses import dataclass

from skenario.autoscalers.vpa.updater import UpdateMode
from skenario.core.time import SECOND, format_duration
from skenario.scenario.format.autoscalers import HpaAutoscaler, VpaAutoscaler
from skenario.scenario.format.scenario import ScenarioSpec
from skenario.scenario.format.traffic import (
    ConstantTraffic,
    PoissonTraffic,
    RampTraffic,
    SinusoidalTraffic,
    StepTraffic,
    UniformTraffic,
)

WALL_PER_REQUEST_S = 6e-6  # the reference scenario's cost per request, with room
WALL_PER_ROW_S = 20e-6  # one recorded row (series or a replica's)
BYTES_PER_ROW = 400  # a replica's recorded row, in memory until the run ends
BYTES_PER_REPLICA = 8_000  # a replica with its stocks and CPU


@dataclass(frozen=True)
class Limits:
    """Past any of these, `skenario run` refuses a scenario unless `--force` (documented in the README)."""

    replicas: int = 150_000  # Kubernetes' envelope: 150,000 pods in a cluster
    nodes: int = 15_000  # three times Kubernetes' 5,000 nodes
    rows: int = 50_000_000  # recorded rows (series and per replica)
    wall_s: float = 4 * 3600.0  # estimated wall time
    memory_bytes: int = 8 * 2**30


LIMITS = Limits()


@dataclass(frozen=True)
class Estimate:
    """What a run of the scenario should cost. `requests` is None when traces make it unknown."""

    duration: int
    requests: int | None
    replicas: int  # the most the scenario can have at once
    nodes: int  # the most nodes it can have
    rows: int
    wall_s: float
    memory_bytes: int

    def lines(self) -> list[str]:
        requests = "unknown (trace files are not read ahead)" if self.requests is None else f"{self.requests:,}"
        return [
            f"simulated time   {format_duration(self.duration)}",
            f"requests         {requests}",
            f"replicas at most {self.replicas:,}",
            f"nodes at most    {self.nodes:,}",
            f"rows recorded    {self.rows:,}",
            f"wall time        {_seconds(self.wall_s)}",
            f"memory           {self.memory_bytes / 2**20:,.0f} MiB",
        ]

    def over(self, limits: Limits = LIMITS) -> list[str]:
        """The limits this estimate passes, each as a phrase."""
        checks = [
            (self.replicas > limits.replicas, f"{self.replicas:,} replicas (limit {limits.replicas:,})"),
            (self.nodes > limits.nodes, f"{self.nodes:,} nodes (limit {limits.nodes:,})"),
            (self.rows > limits.rows, f"{self.rows:,} rows recorded (limit {limits.rows:,})"),
            (
                self.wall_s > limits.wall_s,
                f"about {_seconds(self.wall_s)} of wall time (limit {_seconds(limits.wall_s)})",
            ),
            (
                self.memory_bytes > limits.memory_bytes,
                f"about {self.memory_bytes / 2**30:,.1f} GiB of memory (limit {limits.memory_bytes / 2**30:,.0f} GiB)",
            ),
        ]
        return [phrase for passed, phrase in checks if passed]


def estimate(spec: ScenarioSpec) -> Estimate:
    """The cost of running `spec` to its end (the duration, or the first `done` event)."""
    end = spec.end or 0
    requests: int | None = 0
    traffic = spec.traffic if isinstance(spec.traffic, tuple | list) else [spec.traffic]
    for entry in traffic:
        count = _expected_requests(entry, end)
        requests = None if requests is None or count is None else requests + count
    replicas = max([spec.workload.replicas or 0, *_max_replicas(spec)])
    nodes = 0
    if spec.cluster is not None:
        nodes = sum(n.count for n in spec.cluster.nodes) + sum(g.max_size for g in spec.cluster.node_groups)
    intervals = end // spec.recording.interval if spec.recording.interval else 0
    rows = intervals * (1 + replicas)
    wall = (requests or 0) * WALL_PER_REQUEST_S + rows * WALL_PER_ROW_S
    memory = rows * BYTES_PER_ROW + replicas * BYTES_PER_REPLICA
    return Estimate(end, requests, replicas, nodes, rows, wall, memory)


def _expected_requests(entry: object, end: int) -> int | None:
    start = getattr(entry, "start", 0)
    stop = getattr(entry, "stop", None)
    stop = end if stop is None else min(stop, end)
    span = max(stop - start, 0) / SECOND
    if isinstance(entry, ConstantTraffic | PoissonTraffic):
        return round(entry.rate * span)
    if isinstance(entry, StepTraffic):
        switch = min(max(entry.step_at, start), stop)
        return round((entry.rate * (switch - start) + entry.step_to * (stop - switch)) / SECOND)
    if isinstance(entry, RampTraffic):
        return round((entry.rate_from + entry.rate_to) / 2 * span)
    if isinstance(entry, SinusoidalTraffic):
        return round(max(entry.mean, entry.amplitude) * span)  # the mean, or more where the wave is cut at 0
    if isinstance(entry, UniformTraffic):
        return entry.count
    return None  # a trace file


def _max_replicas(spec: ScenarioSpec) -> list[int]:
    """The HPAs' maxReplicas written inline (a manifest file is read later, at build time)."""
    found = []
    for entry in spec.autoscalers:
        if isinstance(entry, HpaAutoscaler) and entry.spec is not None:
            found.append(entry.spec.max_replicas)
    return found


def _seconds(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    if seconds < 60:
        return f"{seconds:.0f} s"
    return format_duration(round(seconds) * SECOND)


def pitfalls(spec: ScenarioSpec) -> list[str]:
    """Settings that run but rarely do what was meant, each as a sentence (inline autoscaler specs only)."""
    found = []
    hpa_resources = {
        (metric.resource or metric.container_resource).name  # type: ignore[union-attr]
        for entry in spec.autoscalers
        if isinstance(entry, HpaAutoscaler) and entry.spec is not None
        for metric in entry.spec.metrics
        if metric.resource is not None or metric.container_resource is not None
    }
    container = spec.workload.container_name
    for index, entry in enumerate(spec.autoscalers):
        if not isinstance(entry, VpaAutoscaler) or entry.spec is None:
            continue
        vpa = entry.spec.build(container)
        if vpa.update_mode is UpdateMode.OFF:
            continue
        for resource in sorted(hpa_resources & vpa.controlled_resources):
            found.append(
                f"spec.autoscalers.{index}: a VPA sets the pods' {resource} while an HPA scales on its utilisation; "
                "each undoes the other (Kubernetes advises against it: use the VPA in Off mode or another metric)"
            )
    return found
