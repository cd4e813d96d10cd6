"""The kubelet's admission of a pod bound to its node, and what it does with one it refuses.

The eviction manager's `Admit` (`NodeMemory.admit`, `model/memory.py`) turns away a BestEffort pod
that does not tolerate the `node.kubernetes.io/memory-pressure` taint while its node is under
MemoryPressure: the window between the condition and the taint (`model/nodeconditions.py`), when
the scheduler still binds such pods there. The refused pod fails, Evicted (`rejectPod`), and its
ReplicaSet makes another:

    30 s     a's eviction manager sets MemoryPressure; a BestEffort pod is bound to a
    30 s     the kubelet refuses it: PodRejected, the pod fails
    31 s     its ReplicaSet's replacement is created (REJECTION_TURNAROUND later)

It writes to the scheduler's timeline and deletes the pod, so it sits in layer 3 beside
`apiserver.py`.
"""

from __future__ import annotations

from skenario.core.time import SECOND
from skenario.model.cpu.node import qos_class
from skenario.model.memory import EVICTED, NodeMemory
from skenario.model.replicas import Replica
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.history import TimelineEvent
from skenario.scheduling.pods import Pod, PodEnd
from skenario.scheduling.taints import MEMORY_PRESSURE_TAINT

# From a pod's binding to its replacement when the kubelet refuses it at admission: the kubelet sees
# the binding through its watch and rejects the pod, posts it Failed, the ReplicaSet controller sees
# that and creates another, which the scheduler binds. Each hop is a watch event or an API call
# (milliseconds); taken together as 1 s here (not verified against source), so that a refusal loop
# on a node not yet tainted stays finite, as the real one does.
REJECTION_TURNAROUND = SECOND


def admit(pod: Pod, memory: NodeMemory | None) -> str | None:
    """Why the kubelet refuses a replica's pod bound to the node whose memory is `memory`, or None to
    admit it: the eviction manager's `Admit` (a BestEffort pod not tolerating the memory-pressure taint
    is refused under MemoryPressure). A node whose memory is not modelled admits every pod."""
    replica = pod.owner
    if memory is None or not isinstance(replica, Replica):
        return None
    qos = qos_class(replica.cpu_request, replica.cpu_limit, replica.memory_request, replica.memory_limit)
    tolerates = any(t.tolerates(MEMORY_PRESSURE_TAINT) for t in pod.spec.tolerations)
    return memory.admit(qos, tolerates)


def reject(controller: SchedulingController, pod: Pod, message: str, now: int) -> None:
    """The kubelet refused the pod (`rejectPod`): it fails, Evicted, off its node. Its owner makes
    another in its place REJECTION_TURNAROUND later; the refused replica never started."""
    controller.timeline.append(TimelineEvent(now, "PodRejected", pod.name, pod.node, f"{EVICTED}: {message}"))
    controller.delete(pod, PodEnd.REJECTED)
