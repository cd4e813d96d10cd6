"""A scenario's cluster wired in: the workloads' replicas become pods that the scheduler places on nodes.

With `spec.cluster` set, a new replica is Pending until its pod is bound; then its launch stages
run, and its CPU shares the node's cores with the other pods bound there (`model/cpu/node.py`:
by CPU request under contention, up to its limit, idle cores to whoever wants them); with memory
modelled its working set counts against the node's allocatable memory (`model/memory.py`: the
kubelet's evictions, the kernel's OOM killer). A node under memory pressure gets the MemoryPressure
condition and then its NoSchedule taint (`model/nodeconditions.py`), which keeps new pods off it;
before the taint, the kubelet's admission (`model/admission.py`) turns away the BestEffort pods
bound there (the pod fails, its ReplicaSet makes another). A replica that stops releases its pod's
node; a pod preempted or evicted (cluster autoscaler scale-down) ends its replica gracefully and
the ReplicaSet replaces it, as Kubernetes does. Each workload's disruption budget steers
preemption away from its pods where another choice exists.

Several workloads share one cluster (`spec.workloads`): each has its `WorkloadPlacement`, the
model's `Placement` for its replicas, and their pods meet on the nodes, in the scheduler's queue
and in each node's cores and memory.

Scenario events change nodes while the run goes on (`add_node`, `patch_node`, `drain_node`); a
drain is `kubectl drain` then the node's deletion (`model/drain.py`), through the eviction API and
each workload's disruption budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams
from skenario.model.admission import REJECTION_TURNAROUND, admit, reject
from skenario.model.cluster import ClusterModel
from skenario.model.cpu.node import NodeCPU, cpu_weight, pod_capacity
from skenario.model.cpu.sharing import ProcessorSharingCPU
from skenario.model.disruption import EvictionBudget
from skenario.model.drain import NodeDrains, Report, ending, eviction_request
from skenario.model.fluid.processing import FluidCPU, NodeShare
from skenario.model.memory import NodeMemory
from skenario.model.nodeconditions import NodeConditions
from skenario.model.nodestatus import NodeStatus
from skenario.model.replicas import Replica, ReplicaState, ResizeOutcome
from skenario.scenario.format.cluster import Cluster, PodSchedulingSpec
from skenario.scenario.format.scheduler import SchedulerSpec
from skenario.scenario.wiring.scheduler import build_profile
from skenario.scheduling.analysis import SchedulingSummary, attempt_records, node_records, pod_records
from skenario.scheduling.clusterautoscaler.controller import ClusterAutoscaler
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.framework import Framework, Profile
from skenario.scheduling.history import TimelineEvent
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.pods import Pod, PodEnd
from skenario.scheduling.preemption import PreemptionBudget
from skenario.scheduling.replay import summarize
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import TaintEffect


class WorkloadPlacement:
    """One workload's replicas as pods on the shared cluster: its model's `Placement`."""

    def __init__(
        self, cluster: ClusterPlacement, template: PodSchedulingSpec, app: str, memory: int | None, pull_policy: str
    ) -> None:
        self.cluster = cluster
        self.template = template
        self.app = app
        self.memory = memory
        self.pull_policy = pull_policy  # the container's imagePullPolicy: Always pulls on every node, every time
        self.model: ClusterModel | None = None
        self.pod_of: dict[Replica, Pod] = {}
        self.images: set[str] = set()  # nodes holding the workload's image

    def attach(self, model: ClusterModel) -> None:
        """The model this places the replicas of, for its disruption budget."""
        self.model = model

    def neighbours(self) -> Iterator[Replica]:
        for workload in self.cluster.workloads:
            if workload.model is not None:
                yield from workload.model.replicas.values()

    def stopping(self, replica: Replica) -> None:
        self.cluster.stopping(self, replica)

    def stopped(self, replica: Replica) -> None:
        self.cluster.stopped(self, replica)

    def place(self, replica: Replica, placed: Callable[[], object]) -> None:
        cpu = replica.cpu_request or None  # a pod without a CPU request (BestEffort) has none to count
        spec = self.template.build(f"{self.app}-{replica.id}", cpu, self.memory, self.app)
        self.pod_of[replica] = self.cluster.create(spec, replica, self, placed)

    def resize(self, replica: Replica, cpu_request: int, memory_request: int | None) -> ResizeOutcome:
        """The kubelet's admission of the replica's pod's in-place resize, against its node's room."""
        pod = self.pod_of.get(replica)
        if pod is None:
            return ResizeOutcome.INFEASIBLE
        return ResizeOutcome(self.cluster.controller.resize(pod, cpu_request, memory_request))

    def has_image(self, replica: Replica) -> bool:
        pod = self.pod_of.get(replica)
        return pod is not None and pod.node in self.images

    def image_pulled(self, replica: Replica) -> None:
        pod = self.pod_of.get(replica)
        if pod is not None and pod.node is not None and self.pull_policy == "IfNotPresent":
            self.images.add(pod.node)  # kept for the run: the kubelet's image GC is not modelled

    def eviction_budget(self) -> EvictionBudget | None:
        return self.model.eviction_budget() if self.model is not None else None

    def node_cpu_core_ns(self) -> tuple[float, float]:
        return self.cluster.node_cpu_core_ns()


class ClusterPlacement:
    """The scheduler (and cluster autoscaler) for one scenario, shared by its workloads."""

    def __init__(
        self,
        env: Environment,
        cluster: Cluster,
        scheduler: SchedulerSpec,
        streams: RandomStreams,
        base_dir: Path,
        profile: Profile | None = None,
    ) -> None:
        self.env = env
        self.snapshot = ClusterSnapshot(cluster.static_nodes())
        profile = profile or build_profile(scheduler, base_dir)  # given when `wiring.prepare` built it
        self.framework = Framework(profile, self.snapshot, streams.generator("scheduler.tie-break"))
        self.controller = SchedulingController(
            env, self.snapshot, self.framework, scheduler.settings(), streams.generator("scheduler.heartbeats")
        )
        self.cluster_autoscaler: ClusterAutoscaler | None = None
        groups = [g.build() for g in cluster.node_groups]
        if cluster.autoscaler is None:  # the groups keep their initial size
            for group, spec in zip(groups, cluster.node_groups, strict=True):
                for i in range(spec.start_size):
                    self.controller.add_node(group.new_node(i))
        elif groups:
            settings = cluster.autoscaler.build()
            self.cluster_autoscaler = ClusterAutoscaler(
                env,
                self.controller,
                groups,
                settings,
                streams.generator("cluster-autoscaler"),
                {g.name: g.start_size for g in cluster.node_groups},
                on_evict=self._end_replica,
                pdb_tracker=self._pdb_tracker,
            )
        self._node_cpus: dict[str, NodeCPU] = {}
        # CPU used on each node: the pods' CPUs on it now, and what the pods gone from it used there.
        self._node_of_cpu: dict[ProcessorSharingCPU[Any] | FluidCPU, str] = {}
        self._node_busy: dict[str, float] = {}
        self._allocatable = (0, 0, 0.0, 0)  # (log entries read, millicores now, millicore-ns until then, then)
        self._node_memories: dict[str, NodeMemory] = {}
        self.conditions = NodeConditions(env, self.controller, streams.generator("kubelet.node-status"))
        self.cpu_weights = cluster.cpu_weights
        self.workloads: list[WorkloadPlacement] = []
        self._placed: dict[Pod, Callable[[], object]] = {}
        self._workload_of: dict[Pod, WorkloadPlacement] = {}  # each workload's pods, until they are gone
        self._to_add: dict[str, tuple[NodeSpec, Report]] = {}  # created while a node of that name drains
        # The eviction API's view at an instant: each workload's budget, drawn on together that instant.
        self._budgets: tuple[int, dict[WorkloadPlacement, EvictionBudget | None]] = (-1, {})
        self.drains = NodeDrains(env, self.controller, self._pods_on, self._eviction_budget, self._evict, self._drained)
        self.controller.on_bound = self._bound
        self.controller.on_preempted = self._end_replica
        self.controller.preemption_budgets = self._preemption_budgets

    def workload(
        self, template: PodSchedulingSpec, app: str, memory: int | None, pull_policy: str = "IfNotPresent"
    ) -> WorkloadPlacement:
        """A workload joins the cluster: its pods are built from `template`, named `<app>-<replica id>`."""
        workload = WorkloadPlacement(self, template, app, memory, pull_policy)
        self.workloads.append(workload)
        return workload

    # -- the workloads' pods ---------------------------------------------------------------------

    def create(self, spec: PodSpec, replica: Replica, workload: WorkloadPlacement, placed: Callable[[], object]) -> Pod:
        pod = self.controller.create(spec, owner=replica)
        self._placed[pod] = placed
        self._workload_of[pod] = workload
        return pod

    def _bound(self, pod: Pod) -> None:
        placed = self._placed.pop(pod, None)
        if placed is None:
            return
        refused = admit(pod, self._node_memories.get(pod.node) if pod.node is not None else None)
        if refused is not None:
            self._reject(pod, refused)
            return
        self._share_node(pod)
        placed()

    def _reject(self, pod: Pod, message: str) -> None:
        """The kubelet refused the pod (`model/admission.py`); its ReplicaSet makes another in its place."""
        workload = self._workload_of.pop(pod, None)
        replica = pod.owner
        reject(self.controller, pod, message, self.env.now())
        if workload is not None and isinstance(replica, Replica):
            workload.pod_of.pop(replica, None)
            model = workload.model
            if model is not None:
                self.env.call_later(REJECTION_TURNAROUND, lambda: model.replica_set.replace(replica))

    def _share_node(self, pod: Pod) -> None:
        """The replica's CPU joins its node's: the node's cores are shared among the pods on it from now on."""
        replica, name = pod.owner, pod.node
        if not isinstance(replica, Replica) or name is None:
            return
        spec = self.snapshot.nodes[self.snapshot.index[name]]
        node = self._node_cpus.get(name)
        if node is None:
            node = self._node_cpus[name] = NodeCPU(spec.cpu, name=name, weights=self.cpu_weights)
        cpu = replica.processing.cpu
        if isinstance(cpu, FluidCPU):  # a fluid replica: its plant shares the node among the fluid pods on it
            weight = cpu_weight(replica.cpu_request, self.cpu_weights)
            cpu.node = NodeShare(name, spec.cpu, weight, pod_capacity(replica.cpu_limit, spec.cpu))
            self._node_of_cpu[cpu] = name
            return
        assert isinstance(cpu, ProcessorSharingCPU), "scenarios with spec.cluster use processor sharing"
        node.attach(cpu, replica.cpu_request, replica.cpu_limit)
        cpu.share(node)
        self._node_of_cpu[cpu] = name
        if replica.memory is not None:
            memory = self._node_memories.get(name)
            if memory is None:
                memory = self._node_memories[name] = NodeMemory(self.env, spec.memory, name, self.env.now())
                self.conditions.watch(memory)
            replica.memory.priority = pod.spec.priority  # the eviction manager ranks by it
            memory.attach(replica.memory)

    def stopping(self, workload: WorkloadPlacement, replica: Replica) -> None:
        pod = workload.pod_of.get(replica)
        if pod is not None and pod.node is None:  # stopped while Pending: it leaves the queue
            workload.pod_of.pop(replica)
            self._placed.pop(pod, None)
            self._workload_of.pop(pod, None)
            self.controller.delete(pod, PodEnd.DELETED)

    def stopped(self, workload: WorkloadPlacement, replica: Replica) -> None:
        cpu = replica.processing.cpu
        node_name = self._node_of_cpu.pop(cpu, None) if isinstance(cpu, ProcessorSharingCPU | FluidCPU) else None
        if node_name is not None:
            self._node_busy[node_name] = self._node_busy.get(node_name, 0.0) + cpu.busy_core_ns()
        pod = workload.pod_of.pop(replica, None)
        if pod is not None and pod.node is not None and pod.node in self._node_cpus:
            cpu = replica.processing.cpu
            if isinstance(cpu, ProcessorSharingCPU):
                cpu.share(None)
                self._node_cpus[pod.node].detach(cpu)
        if pod is not None:
            self._placed.pop(pod, None)
            self._workload_of.pop(pod, None)
            self.controller.delete(pod, PodEnd.COMPLETED)
            self.drains.pod_gone(pod)

    def _pdb_tracker(self) -> _WorkloadPdbTracker | None:
        """The workloads' disruption budgets for one cluster-autoscaler pass, if any has one."""
        budgets = {w: b for w in self.workloads if (b := w.eviction_budget()) is not None}
        return _WorkloadPdbTracker(budgets, self._workload_of) if budgets else None

    def _preemption_budgets(self) -> list[PreemptionBudget]:
        """Each workload's disruption budget as preemption reads it: its pods, and the disruptions allowed now."""
        budgets = []
        for workload in self.workloads:
            budget = workload.eviction_budget()
            if budget is not None:
                names = frozenset(pod.name for pod in workload.pod_of.values())
                budgets.append(PreemptionBudget(_named(names), budget.allowed))
        return budgets

    def _end_replica(self, pod: Pod) -> None:
        workload = self._workload_of.get(pod)
        replica = pod.owner
        if workload is not None and workload.model is not None and isinstance(replica, Replica):
            workload.model.replica_set.replace(replica)

    # -- nodes that scenario events add, change and drain ----------------------------------------

    def add_node(self, node: NodeSpec, report: Report) -> str:
        """A node joins the cluster; one named as a node still draining joins once that one is gone."""
        if node.name in self.snapshot.index:
            self._to_add[node.name] = (node, report)
            return f"node {node.name} joins once the node {node.name} being drained is gone"
        self._join(node)
        return f"node {node.name} added"

    def _join(self, node: NodeSpec) -> None:
        name = node.name
        for accounts in (self._node_cpus, self._node_memories):
            accounts.pop(name, None)  # a node of a name used before has its own cores, memory and status
        self.conditions.forget(name)
        for workload in self.workloads:
            workload.images.discard(name)
        self.controller.timeline.append(TimelineEvent(self.env.now(), "NodeAdded", "", name))
        self.controller.add_node(node)

    def patch_node(self, node: NodeSpec) -> str:
        """The node as patched, in place (`SchedulingController.update_node`); its pods stay, even those
        its smaller allocatable no longer holds (the kubelet does not evict on an allocatable change),
        but not those that do not tolerate a NoExecute taint: the taint manager deletes them at once
        (`processPodOnNode` in pkg/controller/tainteviction; tolerationSeconds is not modelled)."""
        waiting = self._to_add.get(node.name)
        if waiting is not None:
            self._to_add[node.name] = (node, waiting[1])
            return f"it joins as patched once the node {node.name} being drained is gone"
        # The node lifecycle controller puts back the condition taints a patch left out.
        self.controller.update_node(self.conditions.tainted(node) or node)
        taints = [t for t in node.taints if t.effect is TaintEffect.NO_EXECUTE]
        if not taints:
            return ""
        evicted = []
        for pod in self._pods_on(node.name):
            tolerations = pod.spec.tolerations
            if ending(pod) or all(any(t.tolerates(taint) for t in tolerations) for taint in taints):
                continue
            self._evict(pod)
            evicted.append(pod.name)
        return f"{', '.join(evicted)} evicted: a NoExecute taint they do not tolerate" if evicted else ""

    def drain_node(self, name: str, report: Report) -> str:
        """`kubectl drain` and the node's deletion (`model/drain.py`); a node still waiting to join never does."""
        if self._to_add.pop(name, None) is not None:
            return f"node {name} never joined: the node {name} before it was still being drained"
        return self.drains.drain(name, report)

    def _pods_on(self, name: str) -> list[Pod]:
        """The pods on the node now, by name: bound or assumed there, and not gone (a pod whose replica
        has terminated goes in this instant; with heartbeats its node hears of it later)."""
        snap, pods = self.snapshot, self.controller.pods
        listed = [pods[spec] for spec in sorted(snap.pods_on[snap.index[name]])]
        return [pod for pod in listed if pod.finished_at is None and not _terminated(pod)]

    def _eviction_budget(self, pod: Pod) -> EvictionBudget | None:
        """The budget the eviction API checks for the pod, one per workload and instant: evictions of one
        instant draw on it together. A pod of no workload (a bare pod) has none."""
        workload = self._workload_of.get(pod)
        if workload is None:
            return None
        now = self.env.now()
        if self._budgets[0] != now:
            self._budgets = (now, {})
        budgets = self._budgets[1]
        if workload not in budgets:
            budgets[workload] = workload.eviction_budget()
        return budgets[workload]

    def _evict(self, pod: Pod) -> None:
        pod.end = PodEnd.EVICTED
        if isinstance(pod.owner, Replica):
            self._end_replica(pod)  # it ends gracefully; the ReplicaSet makes another
        else:
            self.controller.delete(pod, PodEnd.EVICTED)

    def _drained(self, name: str) -> None:
        """A drained node is gone: one of its name waiting to join joins now."""
        waiting = self._to_add.pop(name, None)
        if waiting is not None:
            node, added = waiting
            self._join(node)
            added(f"node {name} added")

    # -- results ---------------------------------------------------------------------------------

    @property
    def node_memories(self) -> dict[str, NodeMemory]:
        """Each node's memory account, by node name (nodes that have had a pod with memory modelled)."""
        return dict(self._node_memories)

    @property
    def node_statuses(self) -> dict[str, NodeStatus]:
        """What the API server holds of each node's MemoryPressure, by node name (the same nodes)."""
        return dict(self.conditions.statuses)

    def gauges(self) -> dict[str, float | int | None]:
        """The cluster at this instant, for the recorder's rows: nodes present, pods waiting for one,
        whether the cluster is full (pods wait and no node group can grow: every group is at its
        maxSize, or there is no cluster autoscaler), and the share of the nodes' allocatable CPU and
        memory that pods request."""
        allocation = self.snapshot.allocation()
        pending = self.controller.pending.count()
        autoscaler = self.cluster_autoscaler
        return {
            "nodes": int(self.snapshot.present.sum()),
            "pods_pending": pending,
            "cluster_full": int(pending > 0 and (autoscaler is None or not autoscaler.can_grow())),
            "node_cpu_allocation": allocation.get("cpu"),
            "node_memory_allocation": allocation.get("memory"),
        }

    def node_cpu_core_ns(self) -> tuple[float, float]:
        """CPU in use on the nodes (every workload's pods) and the nodes' allocatable CPU, integrated up to now."""
        busy = math.fsum(self._node_busy.values()) + math.fsum(cpu.busy_core_ns() for cpu in self._node_of_cpu)
        return busy, self._allocatable_millicore_ns() / 1000

    def _allocatable_millicore_ns(self) -> float:
        """The integral of the nodes' allocatable CPU up to now, from the controller's capacity log (read once)."""
        log = self.controller.capacity_log
        read, millicores, integral, then = self._allocatable
        for at, delta in log[read:]:
            integral += millicores * (at - then)
            millicores, then = millicores + delta[0], at
        self._allocatable = (len(log), millicores, integral, then)
        return integral + millicores * (self.env.now() - then)

    def node_cpu_utilisation(self) -> dict[str, float | None]:
        """Each node's CPU used over its allocatable CPU while it was in the cluster, by node name."""
        now = self.env.now()
        busy = dict(self._node_busy)
        for cpu, name in self._node_of_cpu.items():
            busy[name] = busy.get(name, 0.0) + cpu.busy_core_ns()
        added = {e.node: e.at for e in self.controller.timeline if e.kind == "NodeAdded"}
        removed = {e.node: e.at for e in self.controller.timeline if e.kind == "NodeRemoved"}
        shares: dict[str, float | None] = {}
        for node in self.snapshot.nodes:
            held = node.cpu / 1000 * (removed.get(node.name, now) - added.get(node.name, 0))
            shares[node.name] = busy.get(node.name, 0.0) / held if held > 0 else None
        return shares

    def summary(self) -> SchedulingSummary:
        return summarize(self.controller, self.env.now())

    def results(self) -> dict[str, Any]:
        """The scheduling results as plain data: the summary (with the cluster autoscaler's figures),
        the pods, nodes and attempts tables as records, and KEP-140's per-pod results."""
        controller = self.controller
        pods = list(controller.pods.values())
        groups = self.cluster_autoscaler.node_group if self.cluster_autoscaler is not None else {}
        used = self.node_cpu_utilisation()
        nodes = [record | {"cpu_utilisation": used.get(record["node"])} for record in node_records(controller, groups)]
        return {
            "scheduling": {**self.summary().as_dict(), **self.autoscaler_figures()},
            "pods": pod_records(pods),
            "nodes": nodes,
            "attempts": attempt_records(pods),
            "kep140": {"pods": [pod.result() for pod in pods]},
        }

    def autoscaler_figures(self) -> dict[str, int]:
        """The cluster autoscaler's scale-ups and scale-downs, and the most nodes the cluster had."""
        ca = self.cluster_autoscaler
        if ca is None:
            return {}
        nodes = peak = 0
        for _, delta in self.controller.capacity_log:
            nodes += 1 if delta[0] > 0 else -1
            peak = max(peak, nodes)
        return {"scale-ups": ca.scale_ups, "scale-downs": ca.scale_downs, "nodes at the peak": peak}


class _WorkloadPdbTracker:
    """The workloads' budgets as the cluster autoscaler's `RemainingPdbTracker` sees them in one pass.

    A pod whose replica is still launching has not started its containers (phase Pending) and a
    terminating one is already being deleted: the eviction API lets both go without the budget.
    """

    def __init__(
        self, budgets: dict[WorkloadPlacement, EvictionBudget], workload_of: Mapping[Pod, WorkloadPlacement]
    ) -> None:
        self.budgets = budgets
        self.workload_of = workload_of

    def can_remove_pods(self, pods: Sequence[Pod]) -> bool:
        # The removal goes ahead only if every workload's budget takes its own pods; a pod of no
        # workload with a budget has none.
        requests: dict[WorkloadPlacement, list[tuple[bool, bool]]] = {}
        for pod in pods:
            workload = self.workload_of.get(pod)
            if workload in self.budgets and isinstance(pod.owner, Replica):
                requests.setdefault(workload, []).append(eviction_request(pod))
        # All or nothing, as one node is drained whole: a refusal gives back what the others took.
        before = {workload: self.budgets[workload].allowed for workload in requests}
        if all(self.budgets[workload].evict_all(asked) for workload, asked in requests.items()):
            return True
        for workload, allowed in before.items():
            self.budgets[workload].allowed = allowed
        return False


def _named(names: frozenset[str]) -> Callable[[PodSpec], bool]:
    """Whether a pod is one of these, by name."""
    return lambda spec: spec.name in names


def _terminated(pod: Pod) -> bool:
    replica = pod.owner
    return isinstance(replica, Replica) and replica.state is ReplicaState.TERMINATED
