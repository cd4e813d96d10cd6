"""A pod's memory and what the kernel and the kubelet do about it.

A running container's working set is a baseline plus the memory of each request it holds (what
cAdvisor reports as `container_memory_working_set_bytes`). Three things follow, as on a node:

- Over its **memory limit** the container is OOM-killed by the kernel at once (cgroup v2,
  `memory.oom.group`: the whole container). Its requests in flight fail; the kubelet restarts
  it after the crash-loop back-off (`CrashLoopBackOff`).
- When the pods on a node use more than its memory, the **kernel's node OOM killer** takes the
  container with the highest `oom_badness`: its usage plus `oom_score_adj` thousandths of the
  node's memory (`oom_score_adj` from the pod's QoS class, `GetContainerOOMScoreAdjust`).
- Before that, the **kubelet's eviction manager** (every 10 s, one pod per pass) evicts a pod
  while the node's free memory is below the hard threshold (`memory.available<100Mi`), the pod
  ranked first by `rankMemoryPressure`. The same pass sets the node's **MemoryPressure**
  condition, kept for `evictionPressureTransitionPeriod` (5 min) after the threshold was last
  met; while it holds, the kubelet's `Admit` turns away BestEffort pods that do not tolerate the
  `node.kubernetes.io/memory-pressure` taint (the taint itself is the node lifecycle
  controller's, once the kubelet has posted the condition: `model/nodestatus.py`,
  `scheduling/nodelifecycle.py`).

A container's memory is charged from the moment it starts (the end of its `containerStart`
stage), not from when it turns ready: a baseline above the limit is killed at the start.

    node allocatable 1Gi, eviction passes at 0, 10, 20 ... s, pods' working sets pass 1Gi at 23 s:
    30 s   threshold met: MemoryPressure true, one pod evicted
    40 s   below the threshold again (the eviction freed it): the condition holds
    5m30s  five minutes since it was last met: MemoryPressure false

A node's `allocatable` is what its pods may use; its capacity is that plus the hard threshold
(capacity minus kube- and system-reserved, the system using its reservation). So the pods are
under pressure once their working sets pass allocatable, and the kernel kills once they pass
allocatable plus 100Mi.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from skenario.core.environment import Environment
from skenario.core.time import MINUTE, SECOND
from skenario.model.cpu.node import QoSClass

MI = 1024 * 1024
EVICTION_HARD_MEMORY = 100 * MI
"""`DefaultEvictionHard`'s `memory.available<100Mi` (kubelet config v1beta1 defaults)."""
EVICTION_MONITORING_PERIOD = 10 * SECOND
"""`evictionMonitoringPeriod` (pkg/kubelet/kubelet.go): how often the eviction manager looks."""
PRESSURE_TRANSITION_PERIOD = 5 * MINUTE
"""`evictionPressureTransitionPeriod` (kubelet config v1beta1 default 5m0s): how long a node condition
stays true after its threshold was last met (`nodeConditionsObservedSince`)."""
EVICTED = "Evicted"
"""The reason the eviction manager gives a pod it evicts or refuses (`Reason`, pkg/kubelet/eviction)."""
BACKOFF_INITIAL = 10 * SECOND
"""The kubelet's crash-loop back-off base, `backOffPeriod`."""
BACKOFF_MAX = 5 * MINUTE
"""`MaxContainerBackOff`: the back-off never grows beyond this."""
GUARANTEED_OOM_SCORE_ADJ = -997
BESTEFFORT_OOM_SCORE_ADJ = 1000
IMPLICIT_NODE_MEMORY = 16 * 1024 * MI
"""The memory of the node a pod runs alone on without `spec.cluster`: 16Gi, as on the 4-vCPU
general-purpose instances that `IMPLICIT_NODE_MILLICORES` matches."""


def oom_score_adj(qos: QoSClass, memory_request: int, memory_capacity: int) -> int:
    """The container's `oom_score_adj`, as the kubelet's `GetContainerOOMScoreAdjust` sets it.

    Guaranteed -997, BestEffort 1000; Burstable 1000 - 1000·request/capacity (integer division),
    kept within [3, 999] so it always lies between the other two.
    """
    if qos is QoSClass.GUARANTEED:
        return GUARANTEED_OOM_SCORE_ADJ
    if qos is QoSClass.BEST_EFFORT:
        return BESTEFFORT_OOM_SCORE_ADJ
    adjust = 1000 - (1000 * memory_request) // memory_capacity
    if adjust < 1000 + GUARANTEED_OOM_SCORE_ADJ:
        return 1000 + GUARANTEED_OOM_SCORE_ADJ
    if adjust == BESTEFFORT_OOM_SCORE_ADJ:
        return adjust - 1
    return adjust


def oom_badness(usage: int, adj: int, capacity: int) -> float:
    """The kernel's `oom_badness`: pages in use plus `oom_score_adj` thousandths of all pages."""
    return usage + adj * capacity / 1000


def under_pressure(last_observed_at: int | None, now: int, period: int = PRESSURE_TRANSITION_PERIOD) -> bool:
    """Whether a node condition holds at `now`, its threshold last met at `last_observed_at`.

    `nodeConditionsObservedSince` (pkg/kubelet/eviction/helpers.go): true while less than the
    transition period has passed since the last observation (None: never met).
    """
    return last_observed_at is not None and now - last_observed_at < period


def admit(qos: QoSClass, tolerates_memory_pressure: bool, memory_pressure: bool) -> str | None:
    """The eviction manager's `Admit` for a pod arriving at the kubelet: None to admit it, else why not.

    With no node condition every pod is admitted. Under MemoryPressure alone (the only condition
    modelled), pods other than BestEffort are admitted, and a BestEffort pod only if it tolerates
    the `node.kubernetes.io/memory-pressure:NoSchedule` taint. Critical pods, always admitted
    upstream, are not modelled. The message is upstream's `nodeConditionMessageFmt`.
    """
    if not memory_pressure or qos is not QoSClass.BEST_EFFORT or tolerates_memory_pressure:
        return None
    return "The node had condition: [MemoryPressure]. "


class PodUsage(NamedTuple):
    """What the eviction manager's ranking reads of a pod."""

    usage: int  # working set, bytes
    request: int  # memory request, bytes (0 without one)
    priority: int = 0


def rank_memory_pressure(pods: Sequence[PodUsage]) -> list[int]:
    """Indices of `pods` in the order the kubelet evicts them under memory pressure.

    `rankMemoryPressure` (pkg/kubelet/eviction/helpers.go) orders by `exceedMemoryRequests` (pods
    using more than their request first), then `priority` (lower first), then `memory` (the most
    usage above the request first). The sort is stable, as Go's `sort.Sort` over `multiSorter` is
    not guaranteed to be; ties keep the given order.
    """

    def key(index: int) -> tuple[bool, int, int]:
        pod = pods[index]
        return (pod.usage <= pod.request, pod.priority, -(pod.usage - pod.request))

    return sorted(range(len(pods)), key=key)


@dataclass
class CrashLoopBackOff:
    """A container's restart back-off, as `doBackOff` (kuberuntime_manager.go) drives `flowcontrol.Backoff`.

    On each exit the kubelet asks whether the container is still in back-off since it finished
    (`IsInBackOffSince`: less than the current back-off has passed); once it is not, it restarts
    the container and calls `Next`, which doubles the back-off up to the maximum, or starts it
    again at the initial value when the entry has expired (more than twice the maximum, 10 min,
    since the last restart). So the first restart is immediate and the waits after the exits are
    0, 10, 20, 40, 80, 160, 300, 300, ... s, back to 0 after 10 min of running.
    """

    initial: int = BACKOFF_INITIAL
    maximum: int = BACKOFF_MAX
    backoff: int | None = None  # the entry's back-off; None: no entry yet
    last_update: int = 0  # when the last restart happened

    def restart_at(self, finished_at: int) -> int:
        """When a container that exited at `finished_at` starts again; the back-off moves on."""
        expired = self.backoff is None or finished_at - self.last_update > 2 * self.maximum
        if expired:
            at = finished_at
            self.backoff = self.initial
        else:
            assert self.backoff is not None
            at = finished_at + self.backoff
            self.backoff = min(self.backoff * 2, self.maximum)
        self.last_update = at
        return at


class PodMemory:
    """One container's working set while it runs: a baseline plus what its requests hold.

    `on_oom` is called (once per run of the container) when the kernel kills it: over its limit,
    or chosen by its node's OOM killer. The memory is free from that instant. `on_evict` is how
    the kubelet's eviction manager evicts its pod. `start` comes when the container starts, so a
    baseline above the limit dies then (the kernel refuses the charge at once).
    """

    __slots__ = (
        "baseline",
        "limit",
        "node",
        "on_evict",
        "on_oom",
        "oom_adj",
        "peak",
        "priority",
        "qos",
        "request",
        "running",
        "working_set",
    )

    def __init__(
        self,
        baseline: int,
        request: int | None,
        limit: int | None,
        qos: QoSClass,
        priority: int = 0,
        *,
        on_oom: Callable[[], object] | None = None,
        on_evict: Callable[[], object] | None = None,
    ) -> None:
        self.baseline = baseline
        self.request = request or 0
        self.limit = limit
        self.qos = qos
        self.priority = priority
        self.working_set = 0
        self.peak = 0  # the largest working set it has had
        self.running = False
        self.node: NodeMemory | None = None
        self.on_oom = on_oom
        self.on_evict = on_evict
        self.oom_adj = 0  # set by the node it joins

    def start(self) -> None:
        """The container (re)starts: its working set is the baseline."""
        self.running = True
        self._change(self.baseline)

    def grow(self, amount: int) -> None:
        if self.running:
            self._change(amount)

    def shrink(self, amount: int) -> None:
        if self.running:
            self._change(-amount)

    def kill(self) -> None:
        """The kernel kills the container: its memory is free, and its owner hears of it."""
        if self.running:
            self.stop()
            if self.on_oom is not None:
                self.on_oom()

    def stop(self) -> None:
        """The container stops (its pod ends): its memory is free."""
        if self.running:
            self.running = False
            freed, self.working_set = self.working_set, 0
            if self.node is not None:
                self.node.changed(-freed)

    def _change(self, delta: int) -> None:
        limit = self.limit
        if limit is not None and self.working_set + delta > limit:
            # The cgroup cannot charge it: the container never holds more than its limit; it dies.
            self.peak = max(self.peak, limit)
            self.kill()
            return
        self.working_set += delta
        if self.working_set > self.peak:
            self.peak = self.working_set
        if self.node is not None:
            self.node.changed(delta)


class NodeMemory:
    """A node's memory shared by the pods on it: the kernel's OOM killer and the kubelet's eviction manager.

    The eviction manager evicts through the pod's `on_evict` (the model ends the pod with a 1 s
    grace period and its ReplicaSet replaces it). Its passes fall every 10 s from `started_at`; one
    is scheduled only while the node is under pressure, or, when someone listens to the node's
    condition (`on_condition`), while MemoryPressure holds: the same passes as polling.
    `memory_pressure` is the condition as the eviction manager holds it (`IsUnderMemoryPressure`);
    what the API server sees of it comes later, with the kubelet's node status (`nodestatus.py`).
    """

    __slots__ = (
        "_check_due",
        "_env",
        "allocatable",
        "evictions",
        "memory_pressure",
        "name",
        "on_condition",
        "oom_kills",
        "pods",
        "pressure_observed_at",
        "started_at",
        "used",
    )

    def __init__(
        self,
        env: Environment,
        allocatable: int,
        name: str = "node",
        started_at: int = 0,
    ) -> None:
        self._env = env
        self.allocatable = allocatable
        self.name = name
        self.started_at = started_at
        self.pods: dict[PodMemory, None] = {}
        self.used = 0
        self._check_due = False
        self.evictions = 0
        self.oom_kills = 0
        self.memory_pressure = False
        self.pressure_observed_at: int | None = None  # the last pass that found the threshold met
        self.on_condition: list[Callable[[bool], object]] = []  # told when MemoryPressure turns true or false

    @property
    def capacity(self) -> int:
        return self.allocatable + EVICTION_HARD_MEMORY

    def attach(self, pod: PodMemory) -> None:
        self.pods[pod] = None
        pod.node = self
        pod.oom_adj = oom_score_adj(pod.qos, pod.request, self.capacity)
        if pod.working_set:
            self.changed(pod.working_set)

    def detach(self, pod: PodMemory) -> None:
        if self.pods.pop(pod, 0) is None:
            self.used -= pod.working_set
            pod.node = None

    def changed(self, delta: int) -> None:
        self.used += delta
        if delta <= 0:
            return
        while self.used > self.capacity:
            victim = self._oom_victim()
            if victim is None:
                break
            self.oom_kills += 1
            victim.kill()
        if self.used > self.allocatable and not self._check_due:
            self._schedule_check()

    def _oom_victim(self) -> PodMemory | None:
        """The running container the kernel's `select_bad_process` picks: the highest `oom_badness`."""
        running = [pod for pod in self.pods if pod.running and pod.working_set > 0]
        if not running:
            return None
        return max(running, key=lambda pod: oom_badness(pod.working_set, pod.oom_adj, self.capacity))

    def _schedule_check(self) -> None:
        # The next pass strictly after now: a pass at this very instant has run, or (a node made
        # now, a pod started now) would find no stats for the pod yet.
        now = self._env.now()
        since = now - self.started_at
        at = now + EVICTION_MONITORING_PERIOD - since % EVICTION_MONITORING_PERIOD
        if at >= self._env.halt_at:
            return
        self._check_due = True
        self._env.call_at(at, self._synchronize)

    def admit(self, qos: QoSClass, tolerates_memory_pressure: bool) -> str | None:
        """The kubelet's admission of a pod bound to this node (`managerImpl.Admit`): None, or why not."""
        return admit(qos, tolerates_memory_pressure, self.memory_pressure)

    def _synchronize(self) -> None:
        """One pass of the eviction manager (`managerImpl.synchronize`): the node condition from what it
        observes now (`nodeConditionsLastObservedAt`, `nodeConditionsObservedSince`), then at most one
        eviction while the threshold is met."""
        self._check_due = False
        env = self._env
        now = env.now()
        met = self.used > self.allocatable  # memory.available = capacity - used < 100Mi
        if met:
            self.pressure_observed_at = now
        pressure = under_pressure(self.pressure_observed_at, now)
        if pressure != self.memory_pressure:
            self.memory_pressure = pressure
            for hook in self.on_condition:
                hook(pressure)
        if met:
            candidates = [pod for pod in self.pods if pod.running]
            if candidates:
                order = rank_memory_pressure([PodUsage(p.working_set, p.request, p.priority) for p in candidates])
                victim = candidates[order[0]]
                if victim.on_evict is not None:
                    self.evictions += 1
                    victim.on_evict()
        watched = pressure and bool(self.on_condition)  # the pass that clears the condition matters
        if (met or watched) and now + EVICTION_MONITORING_PERIOD < env.halt_at:
            self._check_due = True
            env.call_later(EVICTION_MONITORING_PERIOD, self._synchronize)
