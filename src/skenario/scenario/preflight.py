"""Pre-flight: what a scenario will cost before it runs, and the limits past which `run` refuses it.

The estimate comes from the scenario as `wiring.prepare` read it, before any replica, node or
request is made (building 10 million replicas is itself the runaway): requests from the traffic's
rates over the run (a trace file's count is not read ahead, so it is unknown), rows from the
recording interval and the most replicas the scenario can have, wall time from the measured cost
of a request (`benchmarks/reference.py`: about 5 µs), or for a fluid run of a replica at each step
(`benchmarks/fluid.py`), and memory from the rows and replicas.

The most replicas are each workload's, added up: the most of its initial replicas, those an event
sets, and each autoscaler's bound, the autoscaler as the run builds it (an HPA's maxReplicas from
its manifest of any version, a KPA's max-scale; a VPA changes no count). A KPA without max-scale,
or a plugin, has no bound: the estimate then says so, and counts the pods the KPA would settle on
at the traffic's peak (Little's law over its effective target). `skenario check FILE` prints it;
`skenario run` refuses a scenario past `LIMITS` unless `--force`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skenario.autoscalers.base import Autoscaler
from skenario.autoscalers.hpa.behavior import SelectPolicy
from skenario.autoscalers.hpa.controller import HorizontalPodAutoscaler
from skenario.autoscalers.hpa.types import ContainerResourceMetricSource, ResourceMetricSource
from skenario.autoscalers.kpa.config import KPAConfig, resolve_metric_target
from skenario.autoscalers.kpa.controller import KnativePodAutoscaler
from skenario.autoscalers.vpa.controller import VerticalPodAutoscaler
from skenario.autoscalers.vpa.updater import UpdateMode
from skenario.core.time import SECOND, format_duration
from skenario.scenario.format.cluster import PodSchedulingSpec
from skenario.scenario.format.scenario import ScenarioSpec
from skenario.scenario.format.traffic import (
    ConstantTraffic,
    PoissonTraffic,
    RampTraffic,
    SinusoidalTraffic,
    StepTraffic,
    TrafficBase,
    TrafficSpec,
    UniformTraffic,
)
from skenario.scenario.wiring.operations import Step
from skenario.scenario.wiring.prepare import Prepared, PreparedWorkload
from skenario.scenario.wiring.targets import MAIN
from skenario.scheduling.clusterautoscaler.simulator import node_filters
from skenario.scheduling.objects import DO_NOT_SCHEDULE, NodeSpec
from skenario.scheduling.plugins.podtopologyspread import spread_constraints

WALL_PER_REQUEST_S = 6e-6  # the reference scenario's cost per request, with room
# A fluid run costs per replica, not per request (benchmarks/fluid.py: about 20 µs a replica each 15 s step):
WALL_PER_REPLICA_STEP_S = 5e-6  # the plant's sharing and settling, each fluid step
WALL_PER_REPLICA_SCRAPE_S = 15e-6  # the metrics pipeline's and the HPA's reading of a pod, each 15 s
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
    """What a run of the scenario should cost. `requests` is None when traces make it unknown.

    `replicas` is the most the scenario can have at once; when something has no bound (`unbounded`
    says what), it is the count expected at the traffic's peak instead, or what is known at the start
    when even that is not (a plugin's count, a KPA's on a trace: `expected` is False then).
    """

    duration: int
    requests: int | None
    replicas: int
    nodes: int  # the most nodes it can have
    rows: int
    wall_s: float
    memory_bytes: int
    unbounded: tuple[str, ...] = ()
    expected: bool = True

    def lines(self) -> list[str]:
        requests = "unknown (trace files are not read ahead)" if self.requests is None else f"{self.requests:,}"
        return [
            f"simulated time   {format_duration(self.duration)}",
            f"requests         {requests}",
            f"replicas at most {self._replicas()}",
            f"nodes at most    {self.nodes:,}",
            f"rows recorded    {self.rows:,}",
            f"wall time        {_seconds(self.wall_s)}",
            f"memory           {self.memory_bytes / 2**20:,.0f} MiB",
        ]

    def _replicas(self) -> str:
        if not self.unbounded:
            return f"{self.replicas:,}"
        if self.expected:
            return f"no bound ({'; '.join(self.unbounded)}): about {self.replicas:,} at the traffic's peak"
        return f"no bound ({'; '.join(self.unbounded)}): {self.replicas:,} at the start, more as it scales"

    def over(self, limits: Limits = LIMITS) -> list[str]:
        """The limits this estimate passes, each as a phrase."""
        about = "about " if self.unbounded else ""
        checks = [
            (self.replicas > limits.replicas, f"{about}{self.replicas:,} replicas (limit {limits.replicas:,})"),
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


def estimate(prepared: Prepared) -> Estimate:
    """The cost of running the prepared scenario to its end (the duration, or the first `done` event)."""
    spec = prepared.spec
    end = prepared.end or 0
    requests: int | None = 0
    replicas = 0
    unbounded: list[str] = []
    expected = True
    for key, workload in prepared.workloads.items():
        for entry in _entries(workload.spec.traffic):
            count = _expected_requests(entry, end)
            requests = None if requests is None or count is None else requests + count
        steps = [step for planned in prepared.planned for name, step in planned.steps if name == key]
        most = most_replicas(workload, steps, _where(key, prepared), end)
        replicas += most.count
        unbounded += most.unbounded
        expected = expected and most.expected
    nodes = 0
    if spec.cluster is not None:
        nodes = sum(n.count for n in spec.cluster.nodes) + sum(g.max_size for g in spec.cluster.node_groups)
    intervals = end // spec.recording.interval if spec.recording.interval else 0
    rows = _capped(intervals * (1 + replicas))
    replicas = _capped(replicas)
    if spec.mode == "fluid":  # the most replicas at every step: an upper bound
        fluid_steps, scrapes = end / spec.fluid.step, end / (15 * SECOND)
        per_replica = fluid_steps * WALL_PER_REPLICA_STEP_S + scrapes * WALL_PER_REPLICA_SCRAPE_S
        wall = replicas * per_replica + rows * WALL_PER_ROW_S
    else:
        wall = (requests or 0) * WALL_PER_REQUEST_S + rows * WALL_PER_ROW_S
    memory = rows * BYTES_PER_ROW + replicas * BYTES_PER_REPLICA
    return Estimate(end, requests, replicas, nodes, rows, wall, memory, tuple(unbounded), expected)


def _where(key: str, prepared: Prepared) -> str:
    """The field of a workload's autoscalers: `spec.autoscalers`, or `spec.workloads.<i>.autoscalers`."""
    if key == MAIN:
        return "spec.autoscalers"
    index = [entry.name for entry in prepared.spec.workloads].index(key)
    return f"spec.workloads.{index}.autoscalers"


def _entries(traffic: TrafficSpec | None) -> list[TrafficBase]:
    if traffic is None:
        return []
    return list(traffic) if isinstance(traffic, tuple | list) else [traffic]


@dataclass(frozen=True)
class MostReplicas:
    """A workload's most replicas: the bound, or with `unbounded` reasons the count expected at the peak."""

    count: int
    unbounded: tuple[str, ...] = ()
    expected: bool = True


def most_replicas(
    workload: PreparedWorkload, steps: list[Step], where: str = "spec.autoscalers", end: int = 0
) -> MostReplicas:
    """The most replicas `workload` can have at once: its initial count and any an event sets, and each of its
    autoscalers' bounds (those it starts with and those events start), as the run builds them."""
    counts = [workload.spec.workload.replicas or 0]
    autoscalers = [(f"{where}.{i}", a) for i, (_, a) in enumerate(workload.autoscalers)]
    for step in steps:
        if step.started is not None:
            autoscalers.append((step.where, step.started))
        patched = step.objects_after.workload.get("replicas")
        if isinstance(patched, int) and not isinstance(patched, bool):
            counts.append(patched)
    unbounded: list[str] = []
    peak: list[int] = []
    known = True  # every unbounded autoscaler's count at the peak is known
    for field, autoscaler in autoscalers:
        if isinstance(autoscaler, HorizontalPodAutoscaler):
            counts.append(autoscaler.max_replicas)
        elif isinstance(autoscaler, KnativePodAutoscaler):
            config = autoscaler.config
            counts.append(max(config.min_scale, config.initial_scale))
            if autoscaler.max_replicas is not None:
                counts.append(autoscaler.max_replicas)
                continue
            unbounded.append(f"{field}: a KPA without max-scale")
            settled = _kpa_at_peak(workload.spec, config, end)
            known = known and settled is not None
            peak += [settled] if settled is not None else []
        elif not isinstance(autoscaler, VerticalPodAutoscaler):  # a VPA changes no count
            unbounded.append(f"{field}: a plugin")
            known = False
    if not unbounded:
        return MostReplicas(max(counts))
    return MostReplicas(max([*counts, *peak]), tuple(unbounded), known)


def _kpa_at_peak(spec: ScenarioSpec, config: KPAConfig, end: int) -> int | None:
    """The pods a KPA settles on at the traffic's peak rate: the requests in flight then (Little's law: the
    rate times a request's mean time at full speed) over its per-pod target (`ResolveMetricTarget`), or
    the rate over an RPS target. None when the peak is unknown (a trace)."""
    rate = 0.0
    for entry in _entries(spec.traffic):
        peak = _peak_rate(entry, end)
        if peak is None:
            return None
        rate += peak
    target, _ = resolve_metric_target(config)
    request = spec.workload.request
    if config.scaling_metric == "rps":
        load = rate
    else:
        seconds = request.cpu_time.build().mean() / SECOND
        if request.io_time is not None:
            seconds += request.io_time.build().mean() / SECOND
        load = rate * seconds
    return _capped(math.ceil(load / target)) if load == load and load != math.inf else _COUNT_CAP


def _peak_rate(entry: TrafficBase, end: int) -> float | None:
    """The most requests a second a traffic object sends; None for a trace file."""
    if isinstance(entry, ConstantTraffic | PoissonTraffic):
        return entry.rate
    if isinstance(entry, StepTraffic):
        return max(entry.rate, entry.step_to)
    if isinstance(entry, RampTraffic):
        return max(entry.rate_from, entry.rate_to)
    if isinstance(entry, SinusoidalTraffic):
        return entry.mean + entry.amplitude
    if isinstance(entry, UniformTraffic):
        start, stop = entry.window(end)
        span = (stop - start) / SECOND
        return entry.count / span if span > 0 else float(entry.count)
    return None


# Counts past this are past every limit; capping them keeps the arithmetic in floats' range.
_COUNT_CAP = 10**18


def _capped(count: float) -> int:
    """A count as an int from 0 to `_COUNT_CAP` (an infinite or overflowing one is the cap)."""
    if count != count or count >= _COUNT_CAP:
        return _COUNT_CAP
    return max(int(count), 0) if count > -_COUNT_CAP else 0


def _expected_requests(entry: object, end: int) -> int | None:
    start = getattr(entry, "start", 0)
    stop = getattr(entry, "stop", None)
    stop = end if stop is None else min(stop, end)
    span = max(stop - start, 0) / SECOND
    if isinstance(entry, ConstantTraffic | PoissonTraffic):
        return _capped(entry.rate * span)
    if isinstance(entry, StepTraffic):
        if stop <= start:  # its window is after the run's end
            return 0
        switch = min(max(entry.step_at, start), stop)
        return _capped((entry.rate * (switch - start) + entry.step_to * (stop - switch)) / SECOND)
    if isinstance(entry, RampTraffic):
        return _capped((entry.rate_from + entry.rate_to) / 2 * span)
    if isinstance(entry, SinusoidalTraffic):
        return _capped(max(entry.mean, entry.amplitude) * span)  # the mean, or more where the wave is cut at 0
    if isinstance(entry, UniformTraffic):
        return _capped(entry.count)
    return None  # a trace file


def _seconds(seconds: float) -> str:
    if seconds < 1:
        return "under a second"
    if seconds < 60:
        return f"{seconds:.0f} s"
    return format_duration(round(seconds) * SECOND)


def pitfalls(prepared: Prepared) -> list[str]:
    """Settings that run but rarely do what was meant, each as a sentence, judged on what the run will use:
    the specs as resolved and the autoscalers as built (manifests read)."""
    main = prepared.workloads[MAIN]
    return [
        *_hpa_and_vpa_on_one_resource(main),
        *_placement_pitfalls(prepared.spec),
        *_hpa_pitfalls(main),
        *_kpa_pitfalls(main),
    ]


def _fields(workload: PreparedWorkload) -> list[tuple[str, Autoscaler]]:
    return [(f"spec.autoscalers.{index}", autoscaler) for index, (_, autoscaler) in enumerate(workload.autoscalers)]


def _hpa_and_vpa_on_one_resource(workload: PreparedWorkload) -> list[str]:
    found = []
    hpa_resources = {
        metric.name
        for _, autoscaler in workload.autoscalers
        if isinstance(autoscaler, HorizontalPodAutoscaler)
        for metric in autoscaler.spec.metrics
        if isinstance(metric, ResourceMetricSource | ContainerResourceMetricSource)
    }
    for field, autoscaler in _fields(workload):
        if not isinstance(autoscaler, VerticalPodAutoscaler) or autoscaler.spec.update_mode is UpdateMode.OFF:
            continue
        for resource in sorted(hpa_resources & autoscaler.spec.controlled_resources):
            found.append(
                f"{field}: a VPA sets the pods' {resource} while an HPA scales on its utilisation; "
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


def _hpa_pitfalls(workload: PreparedWorkload) -> list[str]:
    """An HPA that cannot change the count, or whose scale-down cannot act within the run."""
    found = []
    duration = workload.spec.duration
    for field, autoscaler in _fields(workload):
        if not isinstance(autoscaler, HorizontalPodAutoscaler):
            continue
        hpa = autoscaler.spec
        if hpa.min_replicas == hpa.max_replicas:
            found.append(f"{field}: minReplicas equals maxReplicas ({hpa.max_replicas}): the HPA never changes it")
        rules = hpa.behavior.scale_down if hpa.behavior is not None else None
        if rules is not None and rules.select_policy is SelectPolicy.DISABLED:
            continue  # said plainly in the spec
        window = (
            rules.stabilization_window_seconds * SECOND
            if rules is not None and rules.stabilization_window_seconds is not None
            else autoscaler.config.downscale_stabilization
        )
        if duration is not None and window >= duration:
            found.append(
                f"{field}: the scale-down stabilisation window ({format_duration(window)}) is as long as the run "
                f"({format_duration(duration)}): the HPA can never scale down in it"
            )
    return found


def _kpa_pitfalls(workload: PreparedWorkload) -> list[str]:
    """A KPA target a pod's CPU cannot reach, judged from the mean CPU time of a request.

    The target is the KPA's own, as the run builds it (`ResolveMetricTarget`: containerConcurrency or the
    default 100 in flight, or an RPS of 200, or the target annotation capped at containerConcurrency,
    times the utilisation: 70% of 1 in flight is 0.7 with containerConcurrency 1). A pod with c cores (its
    limit, else its request) serves at most c / cpuTime requests a second; at a concurrency target t its
    requests share the cores, each taking about t x cpuTime / c.
    """
    found = []
    spec = workload.spec
    resources = spec.workload.resources
    cores = (resources.cpu_limit or resources.cpu_request) / 1000
    request = spec.workload.request
    if cores <= 0 or request is None:
        return []
    cpu_time_s = request.cpu_time.build().mean() / SECOND
    if cpu_time_s <= 0:
        return []
    for field, autoscaler in _fields(workload):
        if not isinstance(autoscaler, KnativePodAutoscaler):
            continue
        config = autoscaler.config
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
