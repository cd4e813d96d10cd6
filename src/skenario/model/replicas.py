"""Replicas: ReplicaSource -> ReplicasLaunching -> ReplicasActive -> ReplicasTerminating -> Terminated.

A replica launches through stages (scheduling, image pull, container start, readiness), each a
`launch_stage` movement, and becomes active when the last ends. A replica told to stop while it
is still launching goes straight to terminating (its pending stage movement is then ignored as
`from_stock_empty`, which is what happened to it). A terminating replica takes no new requests,
drains the ones it holds, and is cut off when its grace period runs out. A replica whose
container is OOM-killed (once it has started: while it warms up, or serving) waits in
ReplicasRestarting (not ready, no traffic) for the kubelet to start it again, then becomes active
once more; killed again before it is ready, it starts its wait over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from enum import IntEnum, StrEnum
from typing import Protocol

from skenario.core.clock import Timer
from skenario.core.entity import Entity
from skenario.core.environment import Environment
from skenario.core.stocks import FifoStock, KeyedStock, Sink, Source
from skenario.model.fluid.processing import FluidProcessing
from skenario.model.memory import PodMemory
from skenario.model.probes import ReadinessProbe, StartupProbe, ready_at, startup_outcome
from skenario.model.processing import RequestsProcessing

ReplicaHook = Callable[["Replica"], object]


def _no_backoff(replica: Replica) -> int:
    """A killed container starts again at once (the model gives the kubelet's back-off when it has one)."""
    return 0


class Placement(Protocol):
    """Where a new replica must first be placed (a scheduler binding its pod to a node).

    `place` calls `placed` once the replica's pod is bound; until then the replica is Pending.
    `resize` is the kubelet's admission of an in-place resize of a bound pod's requests.
    `stopping` and `stopped` hear as the replica begins to stop and once it is gone.
    """

    def place(self, replica: Replica, placed: Callable[[], object]) -> None: ...

    def stopping(self, replica: Replica) -> None: ...

    def stopped(self, replica: Replica) -> None: ...

    def resize(self, replica: Replica, cpu_request: int, memory_request: int | None) -> ResizeOutcome: ...

    def has_image(self, replica: Replica) -> bool:
        """Whether the node the replica's pod is bound to already holds the workload's image."""
        ...

    def image_pulled(self, replica: Replica) -> None:
        """The replica's node has pulled the workload's image: later pods there need not pull it."""
        ...

    def node_cpu_core_ns(self) -> tuple[float, float]:
        """CPU in use on the cluster's nodes (every workload's) and their allocatable CPU, integrated up to now."""
        ...

    def neighbours(self) -> Iterator[Replica]:
        """Every workload's live replicas on the cluster: those whose pods may share a node's cores with these."""
        ...


class ResizeOutcome(StrEnum):
    """What the kubelet makes of an in-place resize (KEP-1287, the pod's resize conditions)."""

    APPLIED = "Applied"
    DEFERRED = "Deferred"  # does not fit the node now; retried later
    INFEASIBLE = "Infeasible"  # can never fit this node
    IN_PROGRESS = "InProgress"  # accepted, not actuated (a memory limit below the usage)


class ReplicaState(IntEnum):
    LAUNCHING = 0
    ACTIVE = 1
    TERMINATING = 2
    TERMINATED = 3
    RESTARTING = 4  # its container was killed; the kubelet starts it again after a back-off


class Replica(Entity):
    """A replica (a pod); the requests it holds live in its own `processing` stock."""

    __slots__ = (
        "activated_at",
        "address",
        "bound_at",
        "container_started_at",
        "cpu_limit",
        "cpu_request",
        "created_at",
        "killed_at",
        "last_run",
        "memory",
        "memory_limit",
        "memory_request",
        "processing",
        "ready_since",
        "request_since",
        "requested_core_ns",
        "restarts",
        "stage",
        "state",
        "terminated_at",
    )
    kind = "Replica"

    def __init__(
        self,
        id: int,
        processing: RequestsProcessing | FluidProcessing,
        created_at: int,
        cpu_request: int,
        cpu_limit: int | None = None,
        memory_request: int | None = None,
        memory_limit: int | None = None,
    ) -> None:
        self.id = id
        self.processing = processing
        self.created_at = created_at
        self.cpu_request = cpu_request  # millicores; what HPA utilisation and VPA bounds refer to
        self.cpu_limit = cpu_limit
        self.memory_request = memory_request  # bytes
        self.memory_limit = memory_limit
        # When its pod was bound to a node (None while Pending): it is billed, and counts as started, from then.
        self.bound_at: int | None = None
        self.activated_at: int | None = None  # when it first became active
        self.requested_core_ns = 0.0  # CPU requested while serving, before `request_since` (a resize then)
        self.request_since: int | None = None
        self.ready_since: int | None = None  # when it last became active (after a restart, later)
        self.terminated_at: int | None = None
        self.state = ReplicaState.LAUNCHING
        self.stage = -1  # index of the launch stage it is in
        self.memory: PodMemory | None = None  # its container's working set, when the workload models memory
        self.restarts = 0  # times its container was killed and started again
        self.killed_at: int | None = None  # when its container was last killed
        self.container_started_at: int | None = None  # when its container last started (with memory modelled)
        self.last_run: tuple[int, int] | None = None  # (started, killed) of the container's last killed run
        self.address = ""  # its pod IP (model/addresses.py), when the model gives one

    @property
    def millicores(self) -> int:
        """The CPU it can use alone on its node: its limit when set, else the node's cores."""
        return self.processing.cpu.millicores


class ReplicaSource(Source[Replica]):
    """Makes replicas: `remove()` builds a new one with the factory the model gives it.

    `on_emit` is told each time a launch movement runs, so the ReplicaSet can count them.
    """

    __slots__ = ("on_emit",)

    def __init__(self, factory: Callable[[], Replica], on_emit: Callable[[], object] | None = None) -> None:
        super().__init__("ReplicaSource", "Replica", factory)
        self.on_emit = on_emit

    def remove(self, entity: Replica | None = None) -> Replica | None:
        if self.on_emit is not None:
            self.on_emit()
        return super().remove(entity)


PENDING = -2  # Replica.stage while it waits to be placed


class ReplicasLaunching(KeyedStock[Replica]):
    """Replicas starting up; each stage is a self-loop movement, the last leads to active.

    With a `placement` (a scheduler), a new replica first waits, Pending, until its pod is bound;
    those in `instant` (the initial replicas of a run that starts ready) then skip the stages.
    Without one, its pod is bound when its `scheduling` stage ends (at once when there is none).
    Until it is bound a replica is Pending: not started, and not billed (`Replica.bound_at`).
    `on_container_start` hooks hear when its container starts: as its `readiness` stage (the
    application's warm-up) begins; without that stage, it starts as it turns active.
    """

    __slots__ = (
        "_active",
        "_bound_after",
        "_env",
        "_killing",
        "_stages",
        "backoff",
        "instant",
        "on_container_start",
        "on_startup_kill",
        "placement",
        "probe",
        "startup",
    )

    def __init__(
        self,
        env: Environment,
        stages: list[tuple[str, Callable[[], int]]],
        active: ReplicasActive,
        *,
        placement: Placement | None = None,
        instant: Iterable[int] = (),
        probe: ReadinessProbe | None = None,
        startup: StartupProbe | None = None,
        backoff: Callable[[Replica], int] | None = None,
        on_startup_kill: Iterable[ReplicaHook] = (),
        on_container_start: Iterable[ReplicaHook] = (),
    ) -> None:
        super().__init__("ReplicasLaunching", "Replica")
        self._env = env
        self._stages = stages
        names = [name for name, _ in stages]
        self._bound_after = names.index("scheduling") if "scheduling" in names else -1  # the stage binding ends
        self._active = active
        self.placement = placement
        self.instant: set[int] = set(instant)
        self.probe = probe  # with one, the pod is ready at a probe (model/probes.py)
        self.startup = startup  # with one, it must pass first or its container is killed
        self.backoff: Callable[[Replica], int] = backoff or _no_backoff  # a killed container's wait to restart
        self.on_startup_kill: list[ReplicaHook] = list(on_startup_kill)
        self.on_container_start: list[ReplicaHook] = list(on_container_start)
        self._killing: set[Replica] = set()  # killed by their startup probe when their movement comes

    def add(self, entity: Replica) -> None:
        self._items[entity] = None
        entity.state = ReplicaState.LAUNCHING
        if entity in self._killing:
            self._startup_killed(entity)
            return
        if entity.stage == -1 and self.placement is not None:
            entity.stage = PENDING
            self.placement.place(entity, lambda: self._placed(entity))
            return
        self._next_stage(entity)

    def _placed(self, entity: Replica) -> None:
        if entity not in self._items or entity.stage != PENDING:
            return  # stopped while it waited
        entity.bound_at = self._env.now()
        if entity.id in self.instant:
            self.instant.discard(entity.id)
            env = self._env
            env.schedule("finish_launching", env.now(), self, self._active, entity)
            return
        entity.stage = -1
        self._next_stage(entity)

    def _next_stage(self, entity: Replica) -> None:
        entity.stage += 1
        stages = self._stages
        env = self._env
        if entity.bound_at is None and entity.stage > self._bound_after:
            entity.bound_at = env.now()
        if entity.stage >= len(stages):  # no stages at all
            at = env.now() if self.probe is None else ready_at(env.now(), 0, self.probe)
            env.schedule("finish_launching", at, self, self._active, entity)
            return
        name, duration = stages[entity.stage]
        at = env.now() + duration()
        if name == "readiness":
            for hook in self.on_container_start:
                hook(entity)
        placement = self.placement
        if placement is not None:
            if name == "imagePull" and placement.has_image(entity):
                at = env.now()  # imagePullPolicy IfNotPresent: the node has it, nothing to pull
            elif entity.stage > 0 and stages[entity.stage - 1][0] == "imagePull":
                placement.image_pulled(entity)
        if entity.stage + 1 < len(stages):
            env.schedule("launch_stage", at, self, self, entity, stages[entity.stage + 1][0])
            return
        if self.probe is not None or self.startup is not None:
            # The readiness stage is the application's warm-up; probes find it ready.
            started, warm_up = (env.now(), at - env.now()) if name == "readiness" else (at, 0)
            if self.startup is not None:
                passed, when = startup_outcome(started, warm_up, self.startup)
                if not passed:
                    self._killing.add(entity)
                    env.schedule("startup_probe_kill", when, self, self, entity)
                    return
                warm_up = when - started  # readiness probes count only from then on
                at = when
            if self.probe is not None:
                at = ready_at(started, warm_up, self.probe)
        env.schedule("finish_launching", at, self, self._active, entity)

    def _startup_killed(self, entity: Replica) -> None:
        """Its startup probe failed too often: the kubelet kills the container, which starts again after the
        crash-loop back-off and goes through its start and warm-up anew."""
        self._killing.discard(entity)
        entity.restarts += 1
        for hook in self.on_startup_kill:
            hook(entity)
        names = [name for name, _ in self._stages]
        restart = names.index("containerStart") if "containerStart" in names else len(names) - 1
        entity.stage = restart - 1  # the next stage is the container's start
        env = self._env
        env.schedule("launch_stage", env.now() + self.backoff(entity), self, self, entity, names[restart])

    def stage_of(self, replica: Replica) -> str | None:
        """The launch stage a launching replica is in."""
        if replica not in self._items:
            return None
        if replica.stage == PENDING:
            return "pending"
        if not self._stages:
            return None
        return self._stages[min(replica.stage, len(self._stages) - 1)][0]

    def pending(self) -> int:
        """Replicas whose pods are not bound to a node yet."""
        return sum(1 for replica in self._items if replica.bound_at is None)

    def newest(self) -> Replica | None:
        """The replica that started launching last (the one a scale-down stops first)."""
        # Not the dict's last entry: each stage's self-loop re-adds a replica at the end.
        return max(self._items, key=lambda r: (r.created_at, r.id), default=None)


class ReplicasActive(FifoStock[Replica]):
    """Replicas that take traffic, in round-robin order (see `FifoStock.rotate`)."""

    __slots__ = ("_env", "on_activate", "on_deactivate")

    def __init__(
        self, env: Environment, *, on_activate: Iterable[ReplicaHook] = (), on_deactivate: Iterable[ReplicaHook] = ()
    ) -> None:
        super().__init__("ReplicasActive", "Replica")
        self._env = env
        self.on_activate: list[ReplicaHook] = list(on_activate)
        self.on_deactivate: list[ReplicaHook] = list(on_deactivate)

    def add(self, entity: Replica) -> None:
        self._items.append(entity)
        entity.state = ReplicaState.ACTIVE
        now = self._env.now()
        if entity.activated_at is None:
            entity.activated_at = now
        if entity.bound_at is None:  # an initial replica, up from the start
            entity.bound_at = now
        entity.ready_since = now
        for hook in self.on_activate:
            hook(entity)

    def remove(self, entity: Replica | None = None) -> Replica | None:
        replica = super().remove(entity)
        if replica is not None:
            for hook in self.on_deactivate:
                hook(replica)
        return replica

    def newest(self) -> Replica | None:
        """The replica that became active last (Kubernetes scales down the newest first)."""
        if not self._items:
            return None
        return max(self._items, key=lambda r: (r.ready_since or 0, r.id))

    def at(self, index: int) -> Replica:
        return self._items[index]


class ReplicasRestarting(KeyedStock[Replica]):
    """Replicas whose container was killed: Running but not ready, until the kubelet starts it again.

    `restart_delay` says how long from the kill until the replica is ready again (the kubelet's
    back-off, then the container's start and readiness); `on_restarting` hooks hear each kill. A
    replica killed again while it waits (its container started, then died before it was ready)
    leaves and comes back (an `oom_kill` self-loop): its pending restart is cancelled and a new one
    follows the next back-off. The restart is a timer that moves the replica when it fires, so a
    replica that left never comes back by an old restart.
    """

    __slots__ = ("_active", "_env", "_restarts", "on_restarting", "restart_delay")

    def __init__(
        self,
        env: Environment,
        active: ReplicasActive,
        restart_delay: Callable[[Replica], int],
        *,
        on_restarting: Iterable[ReplicaHook] = (),
    ) -> None:
        super().__init__("ReplicasRestarting", "Replica")
        self._env = env
        self._active = active
        self.restart_delay = restart_delay
        self.on_restarting: list[ReplicaHook] = list(on_restarting)
        self._restarts: dict[Replica, Timer] = {}  # each waiting replica's restart

    def add(self, entity: Replica) -> None:
        self._items[entity] = None
        entity.state = ReplicaState.RESTARTING
        entity.restarts += 1
        env = self._env
        entity.killed_at = now = env.now()
        started = entity.container_started_at
        if started is None:
            started = entity.ready_since if entity.ready_since is not None else entity.created_at
        entity.last_run = (started, now)
        for hook in self.on_restarting:
            hook(entity)
        at = now + self.restart_delay(entity)
        self._restarts[entity] = env.call_at(at, lambda: self._restart(entity))

    def _restart(self, entity: Replica) -> None:
        self._restarts.pop(entity, None)
        env = self._env
        env.schedule("restart_container", env.now(), self, self._active, entity)

    def remove(self, entity: Replica | None = None) -> Replica | None:
        replica = super().remove(entity)
        if replica is not None:
            _cancel(self._restarts, replica)
        return replica


class ReplicasTerminating(KeyedStock[Replica]):
    """Replicas shutting down: no new requests; done when drained or when the grace period ends."""

    __slots__ = ("_crashing", "_env", "_graces", "_terminated", "_timers", "grace", "on_terminating", "pre_stop")

    def __init__(
        self,
        env: Environment,
        grace: int,
        terminated: ReplicasTerminated,
        *,
        pre_stop: int = 0,
        on_terminating: Iterable[ReplicaHook] = (),
    ) -> None:
        super().__init__("ReplicasTerminating", "Replica")
        self._env = env
        self.on_terminating: list[ReplicaHook] = list(on_terminating)
        self.grace = grace  # for replicas that begin terminating from now on
        self.pre_stop = pre_stop  # ns of preStop sleep before the container stops and drains
        self._terminated = terminated
        self._timers: dict[Replica, Timer] = {}
        self._crashing: dict[Replica, str] = {}  # replica -> why its requests fail
        self._graces: dict[Replica, tuple[int, str]] = {}  # replica -> its own grace period and failure reason

    def add(self, entity: Replica) -> None:
        self._items[entity] = None
        entity.state = ReplicaState.TERMINATING
        for hook in self.on_terminating:
            hook(entity)
        reason = self._crashing.pop(entity, None)
        if reason is not None:
            self._cut_off(entity, reason)
            return
        grace, reason = self._graces.pop(entity, (self.grace, "killed"))
        self._timers[entity] = self._env.call_later(grace, lambda: self._grace_over(entity, reason))
        if self.pre_stop and reason == "killed":
            # The preStop sleep runs first (part of the grace period); the container drains after it.
            self._env.call_later(self.pre_stop, lambda: self._drain(entity))
        else:
            self._drain(entity)

    def _drain(self, entity: Replica) -> None:
        if entity in self._items and entity in self._timers:
            entity.processing.drain(lambda: self._finish(entity))

    def crash(self, replica: Replica, reason: str = "replica_killed") -> None:
        """The replica dies without draining: now if it is terminating, else as soon as it gets here."""
        if replica in self._items:
            _cancel(self._timers, replica)
            self._cut_off(replica, reason)
        else:
            self._crashing[replica] = reason

    def shorten(self, replica: Replica, grace: int, reason: str) -> None:
        """When it gets here, the replica has only `grace` to drain; then its requests fail as `reason`
        (a kubelet eviction's grace period override)."""
        self._graces[replica] = (grace, reason)

    def remove(self, entity: Replica | None = None) -> Replica | None:
        if entity is not None and entity.processing.count():
            # A request routed to it in the instant it stopped being active arrived after the
            # drain finished: not done yet, drain again.
            entity.processing.drain(lambda: self._finish(entity))
            return None
        replica = super().remove(entity)
        if replica is not None:
            _cancel(self._timers, replica)
        return replica

    def _grace_over(self, replica: Replica, reason: str) -> None:
        self._timers.pop(replica, None)
        self._cut_off(replica, reason)

    def _cut_off(self, replica: Replica, reason: str) -> None:
        # The failures are scheduled now, ahead of the finish, so the replica leaves empty.
        replica.processing.fail_all(reason)
        self._finish(replica)

    def _finish(self, replica: Replica) -> None:
        env = self._env
        env.schedule("finish_terminating", env.now(), self, self._terminated, replica)


class ReplicasTerminated(Sink[Replica]):
    """Replicas that are gone; counted, not kept. `on_terminated` hooks settle their accounts."""

    __slots__ = ("_env", "on_terminated")

    def __init__(self, env: Environment, *, on_terminated: Iterable[ReplicaHook] = ()) -> None:
        super().__init__("ReplicasTerminated", "Replica")
        self._env = env
        self.on_terminated: list[ReplicaHook] = list(on_terminated)

    def add(self, entity: Replica) -> None:
        self._count += 1
        entity.state = ReplicaState.TERMINATED
        entity.terminated_at = self._env.now()
        for hook in self.on_terminated:
            hook(entity)


def _cancel(timers: dict[Replica, Timer], replica: Replica) -> None:
    """Cancel the replica's pending timer, if it has one, and forget it."""
    timer = timers.pop(replica, None)
    if timer is not None:
        timer.cancel()
