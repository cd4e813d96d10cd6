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
from pathlib import Path

from skenario.autoscalers.hpa.behavior import SelectPolicy
from skenario.autoscalers.kpa.config import resolve_metric_target
from skenario.autoscalers.vpa.updater import UpdateMode
from skenario.core.time import SECOND, format_duration
from skenario.errors import SkenarioError
from skenario.scenario.build.autoscalers import hpa_spec, knative_service
from skenario.scenario.format.autoscalers import HpaAutoscaler, KpaAutoscaler, VpaAutoscaler
from skenario.scenario.format.cluster import PodSchedulingSpec
from skenario.scenario.format.manifests.kpa import kpa_config
from skenario.scenario.format.scenario import ScenarioSpec
from skenario.scenario.format.traffic import (
    ConstantTraffic,
    PoissonTraffic,
    RampTraffic,
    SinusoidalTraffic,
    StepTraffic,
    UniformTraffic,
)
from skenario.scheduling.clusterautoscaler.simulator import node_filters
from skenario.scheduling.objects import DO_NOT_SCHEDULE, NodeSpec
from skenario.scheduling.plugins.podtopologyspread import spread_constraints

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
    rows = _capped(intervals * (1 + replicas))
    replicas = _capped(replicas)
    wall = (requests or 0) * WALL_PER_REQUEST_S + rows * WALL_PER_ROW_S
    memory = rows * BYTES_PER_ROW + replicas * BYTES_PER_REPLICA
    return Estimate(end, requests, replicas, nodes, rows, wall, memory)


# Counts past this are past every limit; capping them keeps the arithmetic in floats' range.
_COUNT_CAP = 10**18


def _capped(count: float) -> int:
    """A count as an int no larger than `_COUNT_CAP` (an infinite or overflowing one is the cap)."""
    return _COUNT_CAP if count != count or count >= _COUNT_CAP else int(count)


def _expected_requests(entry: object, end: int) -> int | None:
    start = getattr(entry, "start", 0)
    stop = getattr(entry, "stop", None)
    stop = end if stop is None else min(stop, end)
    span = max(stop - start, 0) / SECOND
    if isinstance(entry, ConstantTraffic | PoissonTraffic):
        return _capped(entry.rate * span)
    if isinstance(entry, StepTraffic):
        switch = min(max(entry.step_at, start), stop)
        return _capped((entry.rate * (switch - start) + entry.step_to * (stop - switch)) / SECOND)
    if isinstance(entry, RampTraffic):
        return _capped((entry.rate_from + entry.rate_to) / 2 * span)
    if isinstance(entry, SinusoidalTraffic):
        return _capped(max(entry.mean, entry.amplitude) * span)  # the mean, or more where the wave is cut at 0
    if isinstance(entry, UniformTraffic):
        return _capped(entry.count)
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


def pitfalls(spec: ScenarioSpec, base_dir: Path | None = None) -> list[str]:
    """Settings that run but rarely do what was meant, each as a sentence.

    With `base_dir` the autoscalers' manifest files are read too; without, only inline specs.
    """
    return [
        *_hpa_and_vpa_on_one_resource(spec),
        *_placement_pitfalls(spec),
        *_hpa_pitfalls(spec, base_dir),
        *_kpa_pitfalls(spec, base_dir),
    ]


def _hpa_and_vpa_on_one_resource(spec: ScenarioSpec) -> list[str]:
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


def _placement_pitfalls(spec: ScenarioSpec) -> list[str]:
    """Taints, node affinity and hard topology spread that no node or node group template satisfies.

    Judged with the scheduler's static filters (`node_filters`: NodeUnschedulable, TaintToleration,
    NodeAffinity) on every node and every group's template, and PodTopologySpread's first rule: a
    node without a DoNotSchedule constraint's topology key never takes the pod.
    """
    cluster = spec.cluster
    if cluster is None:
        return []
    resources = spec.workload.resources
    scheduling = spec.workload.pod or PodSchedulingSpec.model_validate({})
    pod = scheduling.build("preflight", resources.cpu_request or None, resources.memory_request, "preflight")
    candidates: list[tuple[str, NodeSpec]] = [(f"node {n.name}", n) for n in cluster.static_nodes()]
    candidates += [(f"node group {g.name}'s template", g.build().template) for g in cluster.node_groups]
    admitting = [(label, node) for label, node in candidates if node_filters(pod, node)]
    if not admitting:
        return [
            "spec.workload.pod: no node or node group template admits the pods (their tolerations, nodeSelector "
            "and node affinity rule out every one): every pod will stay Pending"
        ]
    found = []
    for constraint in spread_constraints(pod, DO_NOT_SCHEDULE):
        keyed = [label for label, node in admitting if constraint.topology_key in node.labels]
        if not keyed:
            found.append(
                f"spec.workload.pod.topologySpreadConstraints: no node or node group template the pods may use has "
                f"the label {constraint.topology_key!r} (whenUnsatisfiable: DoNotSchedule): every pod will stay Pending"
            )
    if cluster.autoscaler is not None:
        for index, group in enumerate(cluster.node_groups):
            template = group.build().template
            keys = [c.topology_key for c in spread_constraints(pod, DO_NOT_SCHEDULE)]
            missing = [key for key in keys if key not in template.labels]
            if not node_filters(pod, template) or missing:
                why = f"it lacks the label {missing[0]!r}" if missing else "its taints or labels rule the pods out"
                found.append(
                    f"spec.cluster.nodeGroups.{index} ({group.name}): {why}, so the cluster autoscaler will never "
                    "grow it for the workload's pods"
                )
    return found


def _hpa_pitfalls(spec: ScenarioSpec, base_dir: Path | None) -> list[str]:
    """An HPA that cannot change the count, or whose scale-down cannot act within the run."""
    found = []
    duration = spec.duration
    for index, entry in enumerate(spec.autoscalers):
        if not isinstance(entry, HpaAutoscaler) or (entry.spec is None and base_dir is None):
            continue
        field = f"spec.autoscalers.{index}"
        try:
            hpa = hpa_spec(entry, base_dir or Path("."), field)
        except SkenarioError:
            continue  # the run reports it, with its file and line
        if hpa.min_replicas == hpa.max_replicas:
            found.append(f"{field}: minReplicas equals maxReplicas ({hpa.max_replicas}): the HPA never changes it")
        rules = hpa.behavior.build().scale_down if hpa.behavior is not None else None
        if rules is not None and rules.select_policy is SelectPolicy.DISABLED:
            continue  # said plainly in the spec
        window = (
            rules.stabilization_window_seconds * SECOND
            if rules is not None and rules.stabilization_window_seconds is not None
            else entry.downscale_stabilization
        )
        if duration is not None and window >= duration:
            found.append(
                f"{field}: the scale-down stabilisation window ({format_duration(window)}) is as long as the run "
                f"({format_duration(duration)}): the HPA can never scale down in it"
            )
    return found


def _kpa_pitfalls(spec: ScenarioSpec, base_dir: Path | None) -> list[str]:
    """A KPA target a pod's CPU cannot reach, judged from the mean CPU time of a request.

    A pod with c cores (its limit, else its request) serves at most c / cpuTime requests a second;
    at a concurrency target t its requests share the cores, each taking about t x cpuTime / c.
    """
    found = []
    resources = spec.workload.resources
    cores = (resources.cpu_limit or resources.cpu_request) / 1000
    request = spec.workload.request
    if cores <= 0 or request is None:
        return []
    cpu_time_s = request.cpu_time.build().mean() / SECOND
    if cpu_time_s <= 0:
        return []
    for index, entry in enumerate(spec.autoscalers):
        if not isinstance(entry, KpaAutoscaler) or (entry.manifest is not None and base_dir is None):
            continue
        field = f"spec.autoscalers.{index}"
        try:
            service = knative_service(entry, base_dir or Path("."), field)
            config = kpa_config(
                service.annotations,
                entry.config,
                container_concurrency=spec.workload.concurrency or 0,
                field=field,
                file=service.file,
            )
        except SkenarioError:
            continue
        target, _ = resolve_metric_target(config)
        capacity = cores / cpu_time_s
        if config.scaling_metric == "rps" and target > capacity:
            found.append(
                f"{field}: the KPA's target of {target:g} requests/s per pod is beyond what a pod's CPU serves "
                f"({cores:g} core(s) / {cpu_time_s * 1000:g} ms per request = {capacity:.0f}/s): pods saturate "
                "before the KPA adds any"
            )
        timeout = request.timeout
        stretched = target * cpu_time_s / cores
        if config.scaling_metric == "concurrency" and timeout is not None and stretched * SECOND >= timeout:
            found.append(
                f"{field}: at the KPA's target of {target:g} requests in flight per pod, each request would take "
                f"about {stretched:.1f} s on {cores:g} core(s), past the timeout of {format_duration(timeout)}: "
                "requests time out before the KPA adds pods"
            )
    return found
