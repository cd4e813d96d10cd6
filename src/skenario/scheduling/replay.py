"""Replaying a batch trace through the scheduler on the event clock (YARN-1187's simulator, seed 004).

Pods arrive at their trace creation times, wait for the scheduler, run for their trace duration
once bound and then leave; a month of trace runs in seconds because nothing waits on a wall clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

import numpy as np

from skenario.core.environment import Environment
from skenario.core.garbage import young_garbage_tolerated
from skenario.core.random import RandomStreams
from skenario.core.time import SECOND
from skenario.errors import SkenarioError
from skenario.scheduling.analysis import (
    SchedulingSummary,
    attempt_records,
    pod_records,
)
from skenario.scheduling.controller import SchedulerSettings, SchedulingController
from skenario.scheduling.framework import Framework, Profile, default_profile
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.queues.kueue import (
    GROUP_LABEL,
    QUEUE_LABEL,
    KueueAdmission,
    gated,
    local_queue_of,
    pod_group_of,
)
from skenario.scheduling.queues.kueue_config import KueueConfig
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.traces import TracePod
from skenario.scheduling.traces.base import PodStream

HORIZON = 100 * 365 * 86_400 * SECOND  # far beyond any trace: the replay stops when nothing is left


@dataclass
class BatchReplay:
    """A trace's pods on a set of nodes, run to the end of the trace (or `until`, in ns). It meets
    `skenario.runs.Runnable`: its phase is Pending, then Completed (a replay has no pause)."""

    kind: ClassVar[str] = "trace"
    keeping: ClassVar[Literal["none"]] = "none"  # its tables go where the user says (skenario.runs.protocol)

    nodes: Sequence[NodeSpec]
    # A stream is taken lazily, in its order (a trace's `pod_stream`); in front of Kueue it is read twice.
    pods: Sequence[TracePod] | PodStream
    profile: Profile | None = None
    settings: SchedulerSettings = field(default_factory=SchedulerSettings)
    seed: int = 0
    until: int | None = None
    kueue: KueueConfig | None = None  # Kueue's queues admit the pods that name one before kube-scheduler sees them
    # Let go of the trace's pods as they are created and of pods once gone (`SchedulingController.let_go`):
    # `pods` is then empty once the replay is made, and the tables read the pods gone back from disk.
    release: bool = False

    def __post_init__(self) -> None:
        if not self.nodes:
            raise ValueError("a replay needs nodes: give a node file or nodes in the scenario")
        streams = RandomStreams(self.seed)
        self.end = 0
        self.snapshot = ClusterSnapshot(self.nodes)
        self.framework = Framework(self.profile or default_profile(), self.snapshot, streams.generator("tie-break"))
        self.phase = "Pending"
        self.message: str | None = "not started"
        pods, stream = self.pods, None
        if isinstance(pods, Sequence):
            self.pod_count = len(pods)
            self._first_created = min((p.created_at for p in pods), default=0)
            self._last_created = max((p.created_at for p in pods), default=0)
        else:
            stream = pods
            self.pod_count, self._first_created, self._last_created = (
                stream.count,
                stream.first_created,
                stream.last_created,
            )
        # Without `until`, the run goes on until nothing more can happen (see `run`).
        self.env = Environment(halt_at=max(self.until if self.until is not None else HORIZON, 2))
        self.controller = SchedulingController(
            self.env, self.snapshot, self.framework, self.settings, streams.generator("heartbeats")
        )
        self.controller.allocation.start = self._first_created
        if self.release:
            self.controller.let_go()
        self.admission: KueueAdmission | None = None
        labels = _KueueLabels()
        if self.kueue is not None:
            # Kueue's LocalQueues are checked and its pod groups counted from every pod first: a stream is read
            # twice, and the pods' queues and groups go on their labels, as Kueue's pod integration reads them.
            sizes = _check_local_queues(self.kueue, self.pods)
            _check_flavors(self.kueue, self.nodes)
            self.admission = KueueAdmission(
                self.kueue,
                self.controller,
                self.env,
                queue_of=lambda pod: local_queue_of(pod.spec),
                group_of=lambda pod: _group(pod_group_of(pod.spec), sizes),
            )
        # Bare pods from a trace have no controller to recreate them: the cluster autoscaler may not move them
        # (the trace readers say so already; a copy only for pods given otherwise).
        if stream is not None:  # in order already, read as the replay takes them
            taken: Iterator[TracePod] = iter(stream)
        else:
            assert isinstance(pods, Sequence)
            taken = _taken(sorted(pods, key=_order, reverse=True))  # taken from the end, each as it is created
        if self.release:
            self.pods = ()
        kueue = self.kueue is not None
        self.controller.create_all(
            (
                labels.admitted_by(p, replace(p.spec, movable=False) if p.spec.movable else p.spec, kueue),
                p.created_at,
                p.duration,
            )
            for p in taken
        )

    def run(
        self, until: int | None = None, *, steps: int = 1, progress: Callable[[int], object] | None = None
    ) -> SchedulingSummary:
        """Run to `until`, or until every pod has arrived and nothing is left to happen; `progress(now)`
        hears the end (the replay's stretches are its own). The end is fixed when the replay is made
        (its halt is scheduled then): `until` here may only repeat it."""
        if until is not None and until != self.until:
            raise ValueError(f"this replay ends at {self.until}: give until={until} when making it")
        with young_garbage_tolerated():
            summary = self._run()
        self.phase, self.message = "Completed", f"replayed to {self.end / SECOND:,.0f} s"
        if progress is not None:
            progress(self.end)
        return summary

    def _run(self) -> SchedulingSummary:
        env = self.env
        if self.until is not None:
            env.run()
            self.end = env.now()
            return self.summary()
        stop = self._last_created + SECOND
        while True:
            env.run(until=min(stop, env.halt_at - 1))
            if env.pending <= 1 or env.now() >= env.halt_at - 1:  # only the halt movement is left
                break
            stop = 2 * stop
        self.end = self.controller.last_moment() + 1
        return self.summary()

    @property
    def timeline(self) -> list[Any]:
        """The scheduler's timeline: every attempt, binding, preemption and departure."""
        return list(self.controller.timeline)

    def simulated(self) -> int:
        return self.end

    def pause_soon(self) -> None:
        """Return from the kernel after the movement under way (a stop is then the caller's to make)."""
        self.env.pause_soon()

    def fail(self, message: str) -> None:
        """Mark the replay Failed: it was stopped from outside."""
        self.phase, self.message = "Failed", message

    def record(self) -> None:
        """A replay is not kept in the run store."""
        return None

    def documents(self) -> dict[str, Any]:
        """The summary, the pods and the attempts tables, as a KEP-140 run keeps them."""
        pods = list(self.controller.all_pods())
        return {"scheduling": self.summary().as_dict(), "pods": pod_records(pods), "attempts": attempt_records(pods)}

    def summary(self) -> SchedulingSummary:
        return summarize(self.controller, self.end)


def _group(name: str | None, sizes: Counter[str]) -> tuple[str, int] | None:
    return None if name is None else (name, sizes[name])


class _KueueLabels:
    """What Kueue reads of a trace's pod, on its labels: the LocalQueue it names (`kueue.x-k8s.io/queue-name`) and
    its pod group (`kueue.x-k8s.io/pod-group-name`: its job), with the admission gate. Pods alike (one mapping of
    labels, one queue and group) share one mapping of them."""

    def __init__(self) -> None:
        self._shared: dict[tuple[int, str, str | None], tuple[Mapping[str, str], Mapping[str, str]]] = {}

    def admitted_by(self, pod: TracePod, spec: PodSpec, kueue: bool) -> PodSpec:
        """The pod gated for Kueue's admission when it names a LocalQueue."""
        local = local_queue_of(pod.spec, pod.queue) if kueue else None
        if local is None:
            return spec
        group = pod_group_of(pod.spec, pod.job)
        key = (id(spec.labels), local, group)
        kept = self._shared.get(key)
        if kept is None or kept[0] is not spec.labels:
            if len(self._shared) >= 4096:
                self._shared.clear()
            named = {QUEUE_LABEL: local} | ({GROUP_LABEL: group} if group is not None else {})
            kept = self._shared[key] = (spec.labels, {**spec.labels, **named})
        return gated(replace(spec, labels=kept[1]))


def _check_local_queues(config: KueueConfig, pods: Iterable[TracePod]) -> Counter[str]:
    """Every LocalQueue a pod names is one `config` defines; the pods of each pod group counted."""
    sizes: Counter[str] = Counter()
    for pod in pods:
        local = local_queue_of(pod.spec, pod.queue)
        if local is None:
            continue
        if (pod.spec.namespace, local) not in config.local_queues:
            known = ", ".join(f"{ns}/{name}" for ns, name in config.local_queues) or "none"
            raise SkenarioError(
                f"pod {pod.spec.name} names LocalQueue {pod.spec.namespace}/{local}, which {config.file} does not "
                f"define (LocalQueues: {known})",
                file=config.file,
                field=QUEUE_LABEL,
                value=local,
            )
        group = pod_group_of(pod.spec, pod.job)
        if group is not None:
            sizes[group] += 1
    return sizes


def _check_flavors(config: KueueConfig, nodes: Sequence[NodeSpec]) -> None:
    """A flavor a ClusterQueue names must be one some node offers: every node carries its `nodeLabels`
    (a flavor without labels is every node's), or its workloads could be admitted and never placed."""
    named = {flavor for cq in config.cluster_queues.values() for group in cq.groups for flavor, _ in group.flavors}
    for name in sorted(named):
        labels = config.flavors[name].node_labels
        if labels and not any(all(node.labels.get(k) == v for k, v in labels.items()) for node in nodes):
            wanted = ", ".join(f"{k}={v}" for k, v in labels.items())
            raise SkenarioError(
                f"ResourceFlavor {name} is offered by no node: none has the labels {wanted}",
                file=config.file,
                field=f"ResourceFlavor {name}: spec.nodeLabels",
                value=wanted,
            )


def _order(pod: TracePod) -> tuple[int, str]:
    return pod.created_at, pod.spec.name


def _taken(pods: list[TracePod]) -> Iterator[TracePod]:
    """The pods from the last to the first, each let go of by the list as it is handed out."""
    while pods:
        yield pods.pop()


def summarize(controller: SchedulingController, now: int) -> SchedulingSummary:
    """The scheduler's summary at `now`: its pods (those gone too) and the allocation tracker's mean
    (from its `start`) and peak."""
    pods = controller.pods.values()
    departed = controller.departed
    bound = sum(1 for p in pods if p.bound_at is not None) + (departed.bound if departed is not None else 0)
    preempted = sum(1 for p in pods if p.preempted_at is not None) + (departed.preempted if departed else 0)
    count = controller.pod_count()
    waits = controller.wait_times(now) / SECOND
    means, peaks = controller.allocation.summary(controller.snapshot.resources, now)
    return SchedulingSummary(
        pods=count,
        bound=bound,
        pending=controller.pending.count(),
        preempted=preempted,
        unschedulable_attempts=controller.timeline.counts["PodUnscheduled"],
        mean_wait_s=float(waits.mean()) if len(waits) else 0.0,
        p99_wait_s=float(np.percentile(waits, 99)) if len(waits) else 0.0,
        allocation_mean=means,
        allocation_peak=peaks,
        nodes=int(controller.snapshot.present.sum()),
        never_bound=count - bound,
        max_wait_s=float(waits.max()) if len(waits) else 0.0,
    )
