"""Each node's MemoryPressure, from its eviction manager through its kubelet's status to a taint.

The eviction manager (`model/memory.py`) sets the condition; the kubelet posts it at its next
status sync (`model/nodestatus.py`, its phase drawn per node from the stream `kubelet.node-status`);
the node lifecycle controller's `doNoScheduleTaintingPass` (`scheduling/nodelifecycle.py`) follows at
once, so the `node.kubernetes.io/memory-pressure` NoSchedule taint keeps new pods off the node:

    30 s   the eviction manager sets MemoryPressure on node a
    34 s   a's kubelet posts it: NodeHasInsufficientMemory, then NodeTainted
    5m34s  it posts the pressure gone: NodeHasSufficientMemory, then NodeUntainted

It drives the scheduler (the taint is a node update), so it sits in layer 3 beside `apiserver.py`.
"""

from __future__ import annotations

import numpy as np

from skenario.core.environment import Environment
from skenario.model.memory import NodeMemory
from skenario.model.nodestatus import NODE_STATUS_UPDATE_FREQUENCY, NodeStatus
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.history import TimelineEvent
from skenario.scheduling.nodelifecycle import no_schedule_tainting_pass
from skenario.scheduling.objects import NodeSpec
from skenario.scheduling.taints import MEMORY_PRESSURE_TAINT


class NodeConditions:
    """What the API server holds of each node's MemoryPressure (`statuses`), and the taints it brings.

    A node's conditions are modelled once a pod with memory modelled has run there (`watch`); a node
    of a name used before starts afresh (`forget`). `phases` draws each node's status-sync phase.
    """

    def __init__(self, env: Environment, controller: SchedulingController, phases: np.random.Generator) -> None:
        self.env = env
        self.controller = controller
        self._phases = phases
        self.statuses: dict[str, NodeStatus] = {}

    def watch(self, memory: NodeMemory) -> None:
        """The node's MemoryPressure goes from its eviction manager through its kubelet's status to a taint."""
        name = memory.name
        phase = self.env.now() + int(self._phases.random() * NODE_STATUS_UPDATE_FREQUENCY)
        status = self.statuses[name] = NodeStatus(self.env, phase, name)
        memory.on_condition.append(status.observe)
        status.on_posted.append(lambda pressure: self._posted(status, pressure))

    def forget(self, name: str) -> None:
        self.statuses.pop(name, None)

    def _posted(self, status: NodeStatus, pressure: bool) -> None:
        """The kubelet posted the node's MemoryPressure (its `NodeHasInsufficientMemory` or
        `NodeHasSufficientMemory` event); the node lifecycle controller's `doNoScheduleTaintingPass`
        follows at once."""
        snapshot = self.controller.snapshot
        name, now = status.name, self.env.now()
        if self.statuses.get(name) is not status or name not in snapshot.index:
            return  # the node is gone, or another of its name took its place
        kind = "NodeHasInsufficientMemory" if pressure else "NodeHasSufficientMemory"
        self.controller.timeline.append(TimelineEvent(now, kind, "", name))
        node = snapshot.nodes[snapshot.index[name]]
        tainted = self.tainted(node)
        if tainted is not None:
            change = "NodeTainted" if pressure else "NodeUntainted"
            detail = f"{MEMORY_PRESSURE_TAINT.key}:{MEMORY_PRESSURE_TAINT.effect}"
            self.controller.timeline.append(TimelineEvent(now, change, "", name, detail))
            self.controller.update_node(tainted)

    def tainted(self, node: NodeSpec) -> NodeSpec | None:
        """The node with the taints its posted conditions call for, or None if it has them already (or its
        conditions are not modelled: no pod with memory modelled has run there)."""
        status = self.statuses.get(node.name)
        if status is None:
            return None
        return no_schedule_tainting_pass(node, {"MemoryPressure": "True" if status.memory_pressure else "False"})
