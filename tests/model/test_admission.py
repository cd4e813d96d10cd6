"""The kubelet's admission of a bound pod: under MemoryPressure it refuses BestEffort pods that do not
tolerate the memory-pressure taint, and nothing else. The story (the window before the taint, the
ReplicaSet's replacement) is told through a scenario in `tests/scenario/wiring/test_placement_pressure.py`."""

from __future__ import annotations

from skenario.core.environment import Environment
from skenario.core.time import SECOND
from skenario.model.admission import admit
from skenario.model.memory import NodeMemory
from skenario.model.replicas import Replica
from skenario.scheduling.objects import PodSpec
from skenario.scheduling.pods import Pod
from skenario.scheduling.taints import Toleration

GIB = 1024**3
REFUSED = "The node had condition: [MemoryPressure]. "  # upstream's nodeConditionMessageFmt


def pod(cpu_request: int, *, tolerations: tuple[Toleration, ...] = (), owned: bool = True) -> Pod:
    """A replica's pod: BestEffort when it requests nothing (no CPU, no memory), Burstable otherwise."""
    replica = Replica(0, None, 0, cpu_request) if owned else None  # type: ignore[arg-type]  # its requests alone count
    return Pod(0, PodSpec("web-0", tolerations=tolerations), SECOND, owner=replica)


def test_under_memory_pressure_only_best_effort_pods_without_the_toleration_are_refused() -> None:
    memory = NodeMemory(Environment(halt_at=SECOND), 4 * GIB, "a")
    memory.memory_pressure = True  # as the eviction manager holds it
    tolerant = (Toleration("node.kubernetes.io/memory-pressure", "Exists", effect="NoSchedule"),)
    assert admit(pod(0), memory) == REFUSED
    assert admit(pod(100), memory) is None  # Burstable
    assert admit(pod(0, tolerations=tolerant), memory) is None
    assert admit(pod(0, owned=False), memory) is None  # a bare pod: no replica for the kubelet to run


def test_without_pressure_or_without_memory_modelled_every_pod_is_admitted() -> None:
    memory = NodeMemory(Environment(halt_at=SECOND), 4 * GIB, "a")
    assert admit(pod(0), memory) is None
    assert admit(pod(0), None) is None
