"""A scenario's cluster wired in: the workload's replicas become pods that the scheduler places on nodes.

With `spec.cluster` set, a new replica is Pending until its pod is bound; then its launch stages
run, and its CPU shares the node's cores with the other pods bound there (`model/cpu/node.py`:
by CPU request under contention, up to its limit, idle cores to whoever wants them); with memory
modelled its working set counts against the node's allocatable memory (`model/memory.py`: the
kubelet's evictions, the kernel's OOM killer). A replica
that stops releases its pod's node; a pod preempted or evicted (cluster autoscaler scale-down)
ends its replica gracefully and the ReplicaSet replaces it, as Kubernetes does. The workload's
disruption budget steers preemption away from its pods where another choice exists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from skenario.core.environment import Environment
from skenario.core.random import RandomStreams
from skenario.model.cluster import ClusterModel
from skenario.model.cpu.node import NodeCPU
from skenario.model.cpu.sharing import ProcessorSharingCPU
from skenario.model.disruption import EvictionBudget
from skenario.model.memory import NodeMemory
from skenario.model.replicas import Replica, ReplicaState, ResizeOutcome
from skenario.scenario.build.scheduler import build_profile
from skenario.scenario.format.cluster import Cluster, PodSchedulingSpec
from skenario.scenario.format.scheduler import SchedulerSpec
from skenario.scheduling.analysis import SchedulingSummary, attempt_records, node_records, pod_records
from skenario.scheduling.clusterautoscaler.controller import ClusterAutoscaler
from skenario.scheduling.controller import SchedulingController
from skenario.scheduling.framework import Framework
from skenario.scheduling.pods import Pod, PodEnd
from skenario.scheduling.preemption import PreemptionBudget
from skenario.scheduling.replay import summarize
from skenario.scheduling.snapshot import ClusterSnapshot


class ClusterPlacement:
    """The scheduler (and cluster autoscaler) for one scenario; the model's `Placement`."""

    def __init__(
        self,
        env: Environment,
        cluster: Cluster,
        scheduler: SchedulerSpec,
        template: PodSchedulingSpec,
        app: str,
        memory: int | None,
        streams: RandomStreams,
        base_dir: Path,
    ) -> None:
        self.env = env
        self.template = template
        self.app = app
        self.memory = memory
        self.snapshot = ClusterSnapshot(cluster.static_nodes())
        profile = build_profile(scheduler, base_dir)
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
        self._node_memories: dict[str, NodeMemory] = {}
        self.cpu_weights = cluster.cpu_weights
        self._placed: dict[Pod, Callable[[], object]] = {}
        self._pod_of: dict[Replica, Pod] = {}
        self._images: set[str] = set()  # nodes holding the workload's image
        self.pull_policy = "IfNotPresent"  # the container's imagePullPolicy: Always pulls on every node, every time
        self._model: ClusterModel | None = None
        self.controller.on_bound = self._bound
        self.controller.on_preempted = self._end_replica
        self.controller.preemption_budgets = self._preemption_budgets

    def attach(self, model: ClusterModel) -> None:
        """Follow the model's replicas as they stop."""
        self._model = model
        model.replicas_terminating.on_terminating.append(self._stopping)
        model.replicas_terminated.on_terminated.append(self._stopped)

    # -- the model's Placement -------------------------------------------------------------------

    def place(self, replica: Replica, placed: Callable[[], object]) -> None:
        spec = self.template.build(f"{self.app}-{replica.id}", replica.cpu_request, self.memory, self.app)
        pod = self.controller.create(spec, owner=replica)
        self._placed[pod] = placed
        self._pod_of[replica] = pod

    def resize(self, replica: Replica, cpu_request: int, memory_request: int | None) -> ResizeOutcome:
        """The kubelet's admission of the replica's pod's in-place resize, against its node's room."""
        pod = self._pod_of.get(replica)
        if pod is None:
            return ResizeOutcome.INFEASIBLE
        return ResizeOutcome(self.controller.resize(pod, cpu_request, memory_request))

    def has_image(self, replica: Replica) -> bool:
        pod = self._pod_of.get(replica)
        return pod is not None and pod.node in self._images

    def image_pulled(self, replica: Replica) -> None:
        pod = self._pod_of.get(replica)
        if pod is not None and pod.node is not None and self.pull_policy == "IfNotPresent":
            self._images.add(pod.node)  # kept for the run: the kubelet's image GC is not modelled

    def _bound(self, pod: Pod) -> None:
        placed = self._placed.pop(pod, None)
        if placed is not None:
            self._share_node(pod)
            placed()

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
        assert isinstance(cpu, ProcessorSharingCPU), "scenarios with spec.cluster use processor sharing"
        node.attach(cpu, replica.cpu_request, replica.cpu_limit)
        cpu.share(node)
        if replica.memory is not None:
            memory = self._node_memories.get(name)
            if memory is None:
                memory = self._node_memories[name] = NodeMemory(self.env, spec.memory, name, self.env.now())
            replica.memory.priority = pod.spec.priority  # the eviction manager ranks by it
            memory.attach(replica.memory)

    def _stopping(self, replica: Replica) -> None:
        pod = self._pod_of.get(replica)
        if pod is not None and pod.node is None:  # stopped while Pending: it leaves the queue
            self._pod_of.pop(replica)
            self._placed.pop(pod, None)
            self.controller.delete(pod, PodEnd.DELETED)

    def _stopped(self, replica: Replica) -> None:
        pod = self._pod_of.pop(replica, None)
        if pod is not None and pod.node is not None and pod.node in self._node_cpus:
            cpu = replica.processing.cpu
            if isinstance(cpu, ProcessorSharingCPU):
                cpu.share(None)
                self._node_cpus[pod.node].detach(cpu)
        if pod is not None:
            self._placed.pop(pod, None)
            self.controller.delete(pod, PodEnd.COMPLETED)

    def _pdb_tracker(self) -> _WorkloadPdbTracker | None:
        """The workload's disruption budget for one cluster-autoscaler pass, if it has one."""
        budget = self._model.eviction_budget() if self._model is not None else None
        return _WorkloadPdbTracker(budget) if budget is not None else None

    def _preemption_budgets(self) -> list[PreemptionBudget]:
        """The workload's disruption budget as preemption reads it: its pods, and the disruptions allowed now."""
        budget = self._model.eviction_budget() if self._model is not None else None
        if budget is None:
            return []
        names = {pod.name for pod in self._pod_of.values()}
        return [PreemptionBudget(lambda spec: spec.name in names, budget.allowed)]

    def _end_replica(self, pod: Pod) -> None:
        assert self._model is not None
        replica = pod.owner
        if isinstance(replica, Replica):
            self._model.replica_set.replace(replica)

    # -- results ---------------------------------------------------------------------------------

    @property
    def node_memories(self) -> dict[str, NodeMemory]:
        """Each node's memory account, by node name (nodes that have had a pod with memory modelled)."""
        return dict(self._node_memories)

    def gauges(self) -> dict[str, float | int | None]:
        """The cluster at this instant, for the recorder's rows: nodes present, pods waiting for one,
        and the share of the nodes' allocatable CPU and memory that pods request."""
        allocation = self.snapshot.allocation()
        return {
            "nodes": int(self.snapshot.present.sum()),
            "pods_pending": self.controller.pending.count(),
            "node_cpu_allocation": allocation.get("cpu"),
            "node_memory_allocation": allocation.get("memory"),
        }

    def summary(self) -> SchedulingSummary:
        return summarize(self.controller, self.env.now())

    def results(self) -> dict[str, Any]:
        """The scheduling results as plain data: the summary (with the cluster autoscaler's figures),
        the pods, nodes and attempts tables as records, and KEP-140's per-pod results."""
        controller = self.controller
        pods = list(controller.pods.values())
        groups = self.cluster_autoscaler.node_group if self.cluster_autoscaler is not None else {}
        return {
            "scheduling": {**self.summary().as_dict(), **self.autoscaler_figures()},
            "pods": pod_records(pods),
            "nodes": node_records(controller, groups),
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
    """The workload's budget as the cluster autoscaler's `RemainingPdbTracker` sees it in one pass.

    A pod whose replica is still launching has not started its containers (phase Pending) and a
    terminating one is already being deleted: the eviction API lets both go without the budget.
    """

    def __init__(self, budget: EvictionBudget) -> None:
        self.budget = budget

    def can_remove_pods(self, pods: Sequence[Pod]) -> bool:
        states = []
        for pod in pods:
            replica = pod.owner
            if not isinstance(replica, Replica):
                continue  # not the workload's: no budget of ours covers it
            ignore = replica.state is not ReplicaState.ACTIVE
            states.append((ignore, not ignore))
        return self.budget.evict_all(states)
