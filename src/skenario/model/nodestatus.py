"""The kubelet's node status loop: when the API server learns of a node's MemoryPressure condition.

The eviction manager holds the condition itself (`model/memory.py`, `NodeMemory.memory_pressure`)
and its own `Admit` reads it at once. Everyone else (the node lifecycle controller that taints the
node, the scheduler) sees the node object, which the kubelet writes in `syncNodeStatus`: every
`nodeStatusUpdateFrequency` (10 s) it fills the status in (`setNodeStatus`, whose
`MemoryPressureCondition` setter asks the eviction manager's `IsUnderMemoryPressure`) and posts it
when anything changed (`tryUpdateNodeStatus`, `nodeStatusHasChanged`). So a change reaches the API
server at the node's next sync, 0 to 10 s later:

    node status syncs at 4, 14, 24 ... s (its phase); eviction passes at 0, 10, 20 ... s
    30 s   the eviction manager sets MemoryPressure
    34 s   the kubelet posts it (the node lifecycle controller taints the node at once)
    5m30s  the eviction manager clears it; 5m34s the kubelet posts that, the taint goes

The loop's phase is the kubelet's own (it started with the node, and `wait.JitterUntil` drifts it
by up to 4% a period), drawn per node from the scenario's seed by whoever builds the node.
"""

from __future__ import annotations

from collections.abc import Callable

from skenario.core.environment import Environment
from skenario.core.time import SECOND

NODE_STATUS_UPDATE_FREQUENCY = 10 * SECOND
"""`nodeStatusUpdateFrequency` (kubelet config v1beta1 default 10s): how often `syncNodeStatus` runs."""


def next_sync(now: int, phase: int, period: int = NODE_STATUS_UPDATE_FREQUENCY) -> int:
    """The first sync of a loop that runs at `phase + k·period` (any integer k) at or after `now`."""
    return phase + -(-(now - phase) // period) * period


class NodeStatus:
    """One node's MemoryPressure as the API server holds it, posted by the kubelet's sync loop.

    `observe` is the eviction manager telling of a change; at the next sync the kubelet posts what
    holds then (a change undone before the sync posts nothing) and `on_posted` hooks hear the new
    value. Only a pending change schedules a sync: the same posts as a loop that never stops.
    """

    __slots__ = ("_env", "_observed", "_sync_due", "memory_pressure", "name", "on_posted", "period", "phase")

    def __init__(
        self, env: Environment, phase: int, name: str = "node", period: int = NODE_STATUS_UPDATE_FREQUENCY
    ) -> None:
        self._env = env
        self.phase = phase
        self.period = period
        self.name = name
        self.memory_pressure = False  # as posted
        self._observed = False  # as the eviction manager holds it now
        self._sync_due = False
        self.on_posted: list[Callable[[bool], object]] = []

    def observe(self, memory_pressure: bool) -> None:
        """The eviction manager's condition changed; the next sync posts it."""
        self._observed = memory_pressure
        if self._sync_due or memory_pressure == self.memory_pressure:
            return
        self._sync_due = True
        self._env.call_at(next_sync(self._env.now(), self.phase, self.period), self._sync)

    def _sync(self) -> None:
        """One `syncNodeStatus`: post the condition if it differs from what the API server has."""
        self._sync_due = False
        if self._observed == self.memory_pressure:
            return
        self.memory_pressure = self._observed
        for hook in self.on_posted:
            hook(self.memory_pressure)
