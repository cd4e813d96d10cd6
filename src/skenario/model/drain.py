"""`kubectl drain` and the node's deletion, through the eviction API and the pods' disruption budgets.

Cordon the node, evict the pods listed at the start through the eviction API (each workload's
budget, as the cluster autoscaler uses it), retry a refused eviction every 5 s, wait for the pods
to go, remove the node (`Helper.RunCordonOrUncordon`, `evictPods`, `waitForDelete`):

    delete node/a at 10s, PodDisruptionBudget minAvailable 2, three ready pods on a:
    10s  a cordoned; run-0 evicted (3 healthy, 1 disruption allowed); run-1, run-2 refused (429)
    15s  the replacement of run-0 is ready elsewhere: run-1 evicted; run-2 refused again
    20s  run-2 evicted ... and once its pod is gone, a is removed

It drives the scheduler (cordon, node removal), so it sits in layer 3 beside `apiserver.py`. What
a pod is and how it goes (its workload's budget, its eviction, the pods on a node) the placement
that owns the pods says, through the callables it hands over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from skenario.core.clock import SettlingClock
from skenario.core.time import SECOND
from skenario.model.disruption import EvictionBudget
from skenario.model.replicas import Replica, ReplicaState
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.history import TimelineEvent
from skenario.scheduling.pods import Pod

# kubectl drain's wait after an eviction the API refused with 429 (a PodDisruptionBudget): its
# `EvictErrorRetryDelay`, 5 s in pkg/cmd/drain, slept in `Helper.evictPods` (pkg/drain/drain.go).
DRAIN_RETRY = 5 * SECOND

Report = Callable[[str], object]  # a line for the results timeline


@dataclass
class Drain:
    """One node being drained: the pods `kubectl drain` listed at the start, until each is gone."""

    node: str
    report: Report
    pods: dict[Pod, None]  # listed and not gone yet; a dict for its order
    refused: set[Pod] = field(default_factory=set)  # refused at least once, told in the timeline


class NodeDrains:
    """The drains under way, by node name.

    `pods_on(node)` lists the pods on a node now; `eviction_budget(pod)` is the budget the eviction
    API checks for a pod (None: it has none); `evict(pod)` evicts it; `removed(node)` hears that a
    drained node is gone.
    """

    def __init__(
        self,
        clock: SettlingClock,
        controller: SchedulingController,
        pods_on: Callable[[str], list[Pod]],
        eviction_budget: Callable[[Pod], EvictionBudget | None],
        evict: Callable[[Pod], object],
        removed: Callable[[str], object],
    ) -> None:
        self.clock = clock
        self.controller = controller
        self._pods_on = pods_on
        self._eviction_budget = eviction_budget
        self._evict = evict
        self._removed = removed
        self._drains: dict[str, Drain] = {}

    def drain(self, name: str, report: Report) -> str:
        """`kubectl drain` and the node's deletion: cordon now, evict each pod on it through the
        eviction API, retry the ones its disruption budget refuses every 5 s, and remove the node
        once every pod listed at the start is gone (`Helper.RunCordonOrUncordon`, `evictPods`)."""
        snap = self.controller.snapshot
        node = snap.nodes[snap.index[name]]
        if not node.unschedulable:
            self.controller.update_node(replace(node, unschedulable=True))
        drain = Drain(name, report, dict.fromkeys(self._pods_on(name)))
        self._drains[name] = drain
        if not drain.pods:
            said: list[str] = []
            self._remove_drained(drain, said.append)
            return f"node {name} cordoned, no pods on it; " + "; ".join(said)
        return "; ".join([f"node {name} cordoned", *self._evict_listed(drain)])

    def pod_gone(self, pod: Pod) -> None:
        """A pod is gone; if a drain listed it, that drain waits for one fewer."""
        drain = self._drains.get(pod.node) if pod.node is not None else None
        if drain is not None and pod in drain.pods:
            self._gone(drain, pod)

    def _gone(self, drain: Drain, pod: Pod) -> None:
        """A listed pod is gone (kubectl's `waitForDelete`); the node goes after the last, once the
        instant has settled and the pod has left the node's books."""
        del drain.pods[pod]
        if not drain.pods:
            self.clock.call_when_settled(lambda: self._remove_drained(drain, drain.report))

    def _evict_listed(self, drain: Drain) -> list[str]:
        """One round of `evictPods`: each listed pod not yet going is evicted, or refused (429) for now."""
        evicted, refused = [], []
        for pod in list(drain.pods):
            if ending(pod):
                continue  # already being deleted: drain only waits for it
            pending, ready = eviction_request(pod)
            budget = self._eviction_budget(pod)
            if budget is None or budget.evict(pending=pending, ready=ready):
                self._evict(pod)
                evicted.append(pod.name)
                if not isinstance(pod.owner, Replica):
                    self._gone(drain, pod)  # deleted now: no replica to see it go
            else:
                refused.append(pod)
        said = [f"{', '.join(evicted)} evicted"] if evicted else []
        new = [pod.name for pod in refused if pod not in drain.refused]
        if new:
            said.append(
                f"eviction of {', '.join(new)} refused: the disruption budget allows no more now; "
                f"retried every {DRAIN_RETRY // SECOND} s"
            )
        drain.refused.update(refused)
        if refused:
            self.clock.call_later(DRAIN_RETRY, lambda: self.clock.call_when_settled(lambda: self._retry(drain)))
        return said

    def _retry(self, drain: Drain) -> None:
        if self._drains.get(drain.node) is drain and drain.pods:
            said = self._evict_listed(drain)
            if said:
                drain.report("; ".join(said))

    def _remove_drained(self, drain: Drain, report: Report) -> None:
        """The node goes. A pod that came after the cordon (one tolerating it) was not listed: the pod
        garbage collector deletes it with the node, as after the cluster autoscaler's removal."""
        name = drain.node
        if self._drains.get(name) is not drain:
            return
        del self._drains[name]
        late = [pod for pod in self._pods_on(name) if not ending(pod)]
        for pod in late:
            self._evict(pod)
        now = self.clock.now()
        detail = f"drained; {len(late)} pod(s) deleted with it" if late else "drained"
        self.controller.timeline.append(TimelineEvent(now, "NodeRemoved", "", name, detail))
        self.controller.remove_node(name)
        report(f"node {name} removed" + (f"; {', '.join(p.name for p in late)} deleted with it" if late else ""))
        self._removed(name)


def eviction_request(pod: Pod) -> tuple[bool, bool]:
    """The pod as the eviction API weighs it, (pending, ready): a replica still launching has not
    started its containers and a terminating one is already being deleted, so neither needs the budget."""
    replica = pod.owner
    ready = isinstance(replica, Replica) and replica.state is ReplicaState.ACTIVE
    return not ready, ready


def ending(pod: Pod) -> bool:
    """Whether the pod is on its way out already (evicted, preempted, or its replica stopping)."""
    replica = pod.owner
    stopping = isinstance(replica, Replica) and replica.state in (ReplicaState.TERMINATING, ReplicaState.TERMINATED)
    return pod.end is not None or stopping
