"""The desired replica count and the controller that makes the replicas match it.

Autoscalers (and timeline events) only set `desired`; like Kubernetes' ReplicaSet controller,
`ReplicaSet` then launches or stops replicas until launching + active equals it. Initial
replicas count as desired from the start, which the Go Skenario got wrong.

Which replica stops is decided when the stop movement runs, not when it is scheduled, so it is
always one that is still there: launching replicas first, newest first, then active ones, the
most recently activated first (the ReplicaSet controller's ranking: not-ready before ready,
then the most recently ready).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from skenario.core.environment import Environment
from skenario.model.replicas import (
    Replica,
    ReplicasActive,
    ReplicasLaunching,
    ReplicaSource,
    ReplicasRestarting,
    ReplicasTerminating,
)

# Movements other than the start need a time after 0.
FIRST_INSTANT = 1


class ReplicasRunning:
    """Launching, restarting and active replicas seen as one stock, to take scale-down victims from."""

    __slots__ = ("_active", "_launching", "_on_miss", "_on_take", "_restarting", "kind_stocked", "name")

    def __init__(
        self,
        launching: ReplicasLaunching,
        active: ReplicasActive,
        on_take: Callable[[], object],
        on_miss: Callable[[Replica], object],
        restarting: ReplicasRestarting | None = None,
    ) -> None:
        self.name = "ReplicasLaunchingOrActive"
        self.kind_stocked = "Replica"
        self._launching = launching
        self._active = active
        self._restarting = restarting
        self._on_take = on_take
        self._on_miss = on_miss  # told when a named replica is no longer here to take

    def count(self) -> int:
        restarting = self._restarting.count() if self._restarting is not None else 0
        return self._launching.count() + restarting + self._active.count()

    def remove(self, entity: Replica | None = None) -> Replica | None:
        self._on_take()
        restarting = self._restarting
        if entity is not None:
            taken = self._launching.remove(entity) or self._active.remove(entity)
            if taken is None and restarting is not None:
                taken = restarting.remove(entity)
            if taken is None:
                self._on_miss(entity)
            return taken
        victim = self._launching.newest()
        if victim is not None:
            return self._launching.remove(victim)
        if restarting is not None and restarting.count():  # not ready: before the ready ones
            return restarting.remove()
        victim = self._active.newest()
        return self._active.remove(victim) if victim is not None else None


class ReplicaSet:
    """Holds `desired` and reconciles launching + active replicas toward it with movements.

    It counts on hearing from the stocks it acts on, joined when they are built (`build_replica_path`):
    the source calls `launch_ran` as each launch runs, the terminating stock `replacement_due` as
    each replica begins to stop.
    """

    def __init__(
        self,
        env: Environment,
        source: ReplicaSource,
        launching: ReplicasLaunching,
        active: ReplicasActive,
        terminating: ReplicasTerminating,
        restarting: ReplicasRestarting | None = None,
    ) -> None:
        self._env = env
        self._source = source
        self._launching = launching
        self._active = active
        self._terminating = terminating
        self.running = ReplicasRunning(launching, active, self._stop_ran, self._replaced_already_gone, restarting)
        self.desired = 0
        self._pending_launches = 0  # begin_launch movements scheduled and not yet run
        self._pending_stops = 0  # terminate_replica movements scheduled and not yet run
        # Evicted, to be replaced once they stop; a dict for its order (a set's varies by process).
        self._replacing: dict[Replica, None] = {}

    @property
    def current(self) -> int:
        """Replicas launching or active, counting movements already scheduled and replacements to come."""
        return self._pending_launches + self.running.count() - self._pending_stops + len(self._replacing)

    def scale_to(self, desired: int) -> None:
        if desired < 0:
            raise ValueError(f"desired replicas must be >= 0, got {desired}")
        self.desired = desired
        env = self._env
        at = max(env.now(), FIRST_INSTANT)
        for _ in range(desired - self.current):
            self._pending_launches += 1
            env.schedule("begin_launch", at, self._source, self._launching)
        excess = self.current - desired
        while excess > 0 and self._replacing:
            self._replacing.popitem()  # the newest eviction's replacement is no longer wanted
            excess -= 1
        for _ in range(excess):
            self._pending_stops += 1
            env.schedule("terminate_replica", at, self.running, self._terminating)

    def replace(self, replica: Replica) -> None:
        """Stop this replica and launch another in its place: desired does not change.

        The replacement launches when the eviction runs, so an eviction that finds its replica
        already gone launches nothing.
        """
        env = self._env
        self._pending_stops += 1
        self._replacing[replica] = None
        env.schedule("evict_replica", max(env.now(), FIRST_INSTANT), self.running, self._terminating, replica)

    def finish(self, replica: Replica) -> None:
        """This replica has done its work (a Job's pod that completed): it stops, and no other takes its place.

        Desired goes down by one, as a Job controller's completed pod leaves the count of those wanted.
        """
        if self.desired > 0:
            self.desired -= 1
        env = self._env
        self._pending_stops += 1
        env.schedule("complete_replica", max(env.now(), FIRST_INSTANT), self.running, self._terminating, replica)

    def _replaced_already_gone(self, replica: Replica) -> None:
        self._replacing.pop(replica, None)  # an eviction that found nothing: no replacement comes

    def replacement_due(self, replica: Replica) -> None:
        if replica in self._replacing:
            del self._replacing[replica]
            self._pending_launches += 1
            env = self._env
            env.schedule("begin_launch", env.now(), self._source, self._launching)

    def start_active(self, replicas: Iterable[Replica]) -> None:
        """Initial replicas that are up when the run starts: desired, and active at 1 ns."""
        for replica in replicas:
            self.desired += 1
            self._pending_launches += 1
            self._env.schedule("start_initial_replica", FIRST_INSTANT, self._source, self._active, replica)

    def launch_ran(self) -> None:
        self._pending_launches -= 1

    def _stop_ran(self) -> None:
        self._pending_stops -= 1
