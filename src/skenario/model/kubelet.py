"""What a pod's kubelet does with its container: starts it, restarts it after a kill, evicts the pod.

The kernel kills a container over its memory limit, or its node's OOM killer picks it; the
kubelet's startup probe kills one that never passes. Either way the kubelet starts it again after
the crash-loop back-off (`memory.CrashLoopBackOff`), then its `containerStart` and `readiness`
stages again (it keeps its node and its image):

    OOM-killed at 60 s while serving, back-off 10 s, containerStart 2 s, readiness 5 s:
    60 s  active -> restarting, its requests fail as `oom`
    72 s  its container runs again: its memory is charged from now
    77 s  ready: restarting -> active

Under node memory pressure the kubelet's eviction manager evicts the pod instead: 1 s to drain,
then its ReplicaSet replaces it. The memory itself (working sets, limits, the node's killer and
eviction passes) is `model/memory.py`; this is what the kubelet does about it to the replica.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams, sampler
from skenario.core.time import SECOND
from skenario.model.config import ReplicaSpec
from skenario.model.cpu.node import qos_class
from skenario.model.memory import CrashLoopBackOff, NodeMemory, PodMemory
from skenario.model.probes import ready_at
from skenario.model.replicas import (
    Replica,
    ReplicasActive,
    ReplicasLaunching,
    ReplicasRestarting,
    ReplicaState,
    ReplicasTerminating,
)
from skenario.model.replicaset import ReplicaSet

RESTART_STAGES = ("containerStart", "readiness")
"""The launch stages a restarted container goes through again (it keeps its node and its image)."""
KUBELET_EVICTION_GRACE = SECOND
"""`immediateEvictionGracePeriodSeconds` (pkg/kubelet/eviction/eviction_manager.go): a hard eviction's grace."""


class ReplicaStocks(NamedTuple):
    """The stocks a kill or an eviction moves a replica between."""

    launching: ReplicasLaunching
    active: ReplicasActive
    restarting: ReplicasRestarting
    terminating: ReplicasTerminating
    replica_set: ReplicaSet


class Kubelet:
    """One workload's containers: their working sets, kills, restarts and evictions, and their counts.

    Streams: `memory.baseline`, `memory.per-request`, and `restart.<stage>` for a restarted
    container's start and readiness.
    """

    def __init__(self, env: Environment, replica: ReplicaSpec, streams: RandomStreams) -> None:
        self.env = env
        self.spec = replica
        memory = replica.memory
        self.baseline = sampler(memory.baseline, streams.generator("memory.baseline")) if memory else None
        per_request = memory.per_request if memory else None
        self.per_request = sampler(per_request, streams.generator("memory.per-request")) if per_request else None
        self._restart_stages = [
            (stage.name, sampler(stage.duration, streams.generator(f"restart.{stage.name}")))
            for stage in replica.launch
            if stage.name in RESTART_STAGES
        ]
        self._backoffs: dict[Replica, CrashLoopBackOff] = {}
        self.oom_kills = 0  # containers the kernel killed (over their limit, or by a node's OOM killer)
        self.evictions = 0  # pods the kubelet evicted under node memory pressure
        self.restarts = 0  # containers started again after a kill
        self.startup_probe_kills = 0  # containers the kubelet killed for failing their startup probe
        self.retired_memory_peak = 0
        self.on_oom_kill: list[Callable[[Replica], object]] = []  # told of each container the kernel kills

    @property
    def memory_modelled(self) -> bool:
        return self.baseline is not None

    def give_memory(self, replica: Replica, stocks: ReplicaStocks, alone: bool) -> PodMemory:
        """The replica's container gets a working set; `alone` on a node of its own (without a cluster)."""
        assert self.baseline is not None and self.spec.memory is not None
        qos = qos_class(replica.cpu_request, replica.cpu_limit, replica.memory_request, replica.memory_limit)
        memory = PodMemory(
            self.baseline(),
            replica.memory_request,
            replica.memory_limit,
            qos,
            on_oom=lambda: self._oom_killed(replica, stocks),
            on_evict=lambda: self._evicts(replica, stocks),
        )
        replica.memory = memory
        replica.processing.hold_memory(memory, self.per_request)
        if alone:
            # Its kubelet has run since the start: eviction passes every 10 s from 0.
            node = NodeMemory(self.env, self.spec.memory.node_memory, f"node-{replica.id}")
            node.attach(memory)
        return memory

    def _oom_killed(self, replica: Replica, stocks: ReplicaStocks) -> None:
        """The kernel killed the replica's container: it restarts if it was warming up or serving (killed
        again while it waits to restart, it waits anew), else its pod ends now."""
        self.oom_kills += 1
        for hook in self.on_oom_kill:
            hook(replica)
        env = self.env
        state = replica.state
        if state is ReplicaState.ACTIVE:
            env.schedule("oom_kill", env.now(), stocks.active, stocks.restarting, replica)
        elif state is ReplicaState.LAUNCHING:  # its container had started: its launch ends here
            env.schedule("oom_kill", env.now(), stocks.launching, stocks.restarting, replica)
        elif state is ReplicaState.RESTARTING:
            env.schedule("oom_kill", env.now(), stocks.restarting, stocks.restarting, replica)
        elif state is ReplicaState.TERMINATING:
            stocks.terminating.crash(replica, "oom")

    def _evicts(self, replica: Replica, stocks: ReplicaStocks) -> None:
        """The kubelet evicts the pod under node memory pressure: 1 s to drain, then its ReplicaSet replaces it."""
        if replica.state in (ReplicaState.TERMINATING, ReplicaState.TERMINATED):
            return
        self.evictions += 1
        stocks.terminating.shorten(replica, KUBELET_EVICTION_GRACE, "evicted")
        stocks.replica_set.replace(replica)

    def container_started(self, replica: Replica) -> None:
        """The replica's container starts (the kubelet's `startContainer`): its memory is charged from now,
        as cAdvisor sees the cgroup from its creation; a baseline above the limit dies at once. A start
        after a kill is a restart."""
        memory = replica.memory
        if memory is None or memory.running:
            return
        killed, started = replica.killed_at, replica.container_started_at
        if killed is not None and (started is None or started <= killed):
            self.restarts += 1
        replica.container_started_at = self.env.now()
        memory.start()

    def _restarted(self, replica: Replica) -> None:
        """The kubelet started the killed container again; the replica is still waiting to be ready."""
        if replica.state is ReplicaState.RESTARTING:
            self.container_started(replica)

    def container_killed(self, replica: Replica) -> None:
        replica.processing.fail_all("oom")

    def restart_delay(self, replica: Replica) -> int:
        """From the kill to ready again: the kubelet's back-off, then the container's start and readiness."""
        now = self.env.now()
        backoff = self._backoffs.setdefault(replica, CrashLoopBackOff())
        durations = {name: stage() for name, stage in self._restart_stages}
        started = backoff.restart_at(now) + durations.get("containerStart", 0)
        warm_up = durations.get("readiness", 0)
        probe = self.spec.readiness_probe
        ready = started + warm_up if probe is None else ready_at(started, warm_up, probe)
        if started < ready:  # else it starts as it turns active
            self.env.call_at(started, lambda: self._restarted(replica))
        return ready - now

    def startup_backoff(self, replica: Replica) -> int:
        """How long a container killed by its startup probe waits to start again (the crash-loop back-off)."""
        now = self.env.now()
        return self._backoffs.setdefault(replica, CrashLoopBackOff()).restart_at(now) - now

    def startup_killed(self, replica: Replica) -> None:
        self.startup_probe_kills += 1
        self.restarts += 1
        if replica.memory is not None:
            replica.memory.stop()  # the killed container's memory is free; its next start charges it again

    def terminated(self, replica: Replica) -> None:
        """The pod is gone: its memory is free and leaves its node; its back-off is forgotten."""
        if replica.memory is not None:
            replica.memory.stop()
            if replica.memory.node is not None:
                replica.memory.node.detach(replica.memory)
            self.retired_memory_peak = max(self.retired_memory_peak, replica.memory.peak)
        self._backoffs.pop(replica, None)
