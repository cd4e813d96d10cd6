"""The scheduler on the clock: a priority queue of pending pods, one pass per instant, and binding.

Mirrors kube-scheduler's `SchedulingQueue` and `scheduleOne` loop with simulated time in place of
goroutines. By default scheduling is instantaneous: at each instant, once every other movement of
that instant has run (`MovingClock.call_when_settled`), the scheduler takes pending pods in queue
order (priority, then creation time, then name) and binds all it can, so the outcome never depends
on the order in which same-time events were written (KEP-140). A pod that fits nowhere waits among
the unschedulable until something that could help happens (a node added or changed, resources
freed on a node where it would fit), as upstream's queueing hints decide; the periodic 5-minute
flush and the retry backoff are not modelled, since in simulated time they only delay.

Preemption follows DefaultPreemption's victim choice and node choice; the preemptor is nominated
and retried once the victims are gone. Nominated pods do not reserve their room against other
pods (the queue's priority order mostly does that), and a node whose victims are still leaving is
not offered to another preemptor. A profile without DefaultPreemption preempts nothing.

Freed resources are seen at once, or, with node heartbeats on (YARN SLS's NodeManagers), at the
node's next heartbeat after the pod ends plus the network delay.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from skenario.core.clock import MovingClock
from skenario.scheduling.attempts import Attempt, PluginResults
from skenario.scheduling.departed import DepartedPods, PodRecord
from skenario.scheduling.framework import FilterOutcome, Framework
from skenario.scheduling.history import AllocationLog, AllocationTracker, Timeline, TimelineEvent
from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.scheduling.plugins.custom import UserPlugin
from skenario.scheduling.pods import Pod, PodEnd, PodsBound, PodsDone, PodSource, PodsPending
from skenario.scheduling.preemption import PreemptionBudget, eligible, pick_node, select_victims_with_budgets
from skenario.scheduling.snapshot import ClusterSnapshot


@dataclass(frozen=True)
class SchedulerSettings:
    latency: int = 0  # ns from the decision to the binding
    heartbeat_interval: int = 0  # ns between a node's heartbeats; 0: freed resources are seen at once
    heartbeat_delay: int = 0  # ns a heartbeat takes to reach the scheduler
    # Which attempts keep every plugin's results (KEP-140): all, only unschedulable ones, or none.
    plugin_results: PluginResults = "all"
    # Pods whose every attempt keeps its plugin results whatever `plugin_results` says (None: no pod).
    results_for: Callable[[str], bool] | None = None
    keep_timeline: bool = True  # off: events are counted by kind (and handed to `timeline.sink`), not kept


class SchedulingController:
    """Owns the pod stocks and the queue; runs the framework when there is something to do."""

    def __init__(
        self,
        clock: MovingClock,
        snapshot: ClusterSnapshot,
        framework: Framework,
        settings: SchedulerSettings,
        rng: np.random.Generator,
    ) -> None:
        self.clock = clock
        self.snapshot = snapshot
        self.framework = framework
        for plugin in (*framework.profile.filters, *(score.plugin for score in framework.profile.scores)):
            if isinstance(plugin, UserPlugin):
                plugin.now = clock.now  # a user's plugin that fails says when
        self.settings = settings
        self._rng = rng
        self.pods: dict[str, Pod] = {}  # by name; with `let_go`, those not yet gone
        self.created = 0  # pods made, ever: the next pod's id
        self.departed: DepartedPods | None = None  # with `let_go`: the pods that are gone
        self.source = PodSource("PodSource", "Pod")  # gives back the pod each create movement names
        self.pending = PodsPending()
        self.bound = PodsBound()
        self.done = PodsDone()
        self.pending.on_add = self._arrived
        self.bound.on_add = self._bound
        self.done.on_add = self._gone
        self.timeline = Timeline(keep=settings.keep_timeline)
        # (time, node, resource deltas) each time a node's requests change, for the analysis.
        self.allocation_log = AllocationLog()
        # (time, allocatable deltas) each time a node comes or goes.
        self.capacity_log: list[tuple[int, tuple[int, ...]]] = []
        # The same changes folded into the summary's allocation mean and peak.
        self.allocation = AllocationTracker()
        for i in snapshot.order.tolist():
            self._capacity_changed(0, tuple(snapshot.allocatable[i].tolist()))
        self.on_bound: Callable[[Pod], object] | None = None  # a replica's launch
        self.on_preempted: Callable[[Pod], object] | None = None  # a replica's graceful end
        self.on_gone: Callable[[Pod], object] | None = None  # a pod's owner hears that it is gone
        # The PodDisruptionBudgets preemption tries not to violate, as they stand now.
        self.preemption_budgets: Callable[[], Sequence[PreemptionBudget]] | None = None
        # Where every attempt goes as it happens, with whether it kept its plugin results (a results
        # file); None: those that kept them stay with their pod (`Pod.attempts`), the others are counted.
        self.on_attempt: Callable[[Pod, Attempt, bool], object] | None = None
        self._active: list[tuple[int, int, str, Pod]] = []
        self._unschedulable: dict[tuple[int, ...] | None, dict[Pod, None]] = {}
        self._pass_due = False
        self._heartbeat_offsets: dict[int, int] = {}
        self.passes = 0

    # -- pods coming and going -------------------------------------------------------------------

    def create(
        self,
        spec: PodSpec,
        at: int | None = None,
        duration: int | None = None,
        owner: Any = None,
        node: str | None = None,
    ) -> Pod:
        """A pod that joins the queue at `at` (now by default); with `node` (its `spec.nodeName`) it is
        bound there without the scheduler, as a pod created with a node name is."""
        if spec.name in self.pods:
            raise ValueError(f"a pod named {spec.name!r} exists already")
        at = max(self.clock.now() if at is None else at, 1)  # 0 belongs to the run's start
        pod = Pod(self.created, spec, at, duration, owner)
        self.created += 1
        pod.node = node
        self.pods[spec.name] = pod
        self.clock.schedule("create_pod", at, self.source, self.pending, pod)
        return pod

    def create_all(self, pods: Iterator[tuple[PodSpec, int, int | None]]) -> None:
        """Many pods, sorted by creation time, fed to the schedule one at a time (the heap stays small)."""
        feed = iter(pods)

        def next_one() -> None:
            item = next(feed, None)
            if item is None:
                return
            spec, at, duration = item
            self.create(spec, at, duration)
            self.clock.call_at(max(at, 1), next_one)

        next_one()

    def let_go(self) -> None:
        """From now on, a pod that is gone leaves `pods` for `departed` (counted, its record on disk), and
        the allocation log is not kept: memory holds what later decisions need, not the run's history.
        Pod names must then be unique over the whole run (a trace's are)."""
        if self.departed is None:
            self.departed = DepartedPods()
        self.allocation_log.keep = False

    def all_pods(self) -> Iterator[Pod | PodRecord]:
        """Every pod made so far in creation order: those gone as records when let go of, the others as they are."""
        if self.departed is None:
            yield from self.pods.values()
            return
        gone: Iterator[Pod | PodRecord] = self.departed.records()
        here: Iterator[Pod | PodRecord] = iter(self.pods.values())
        yield from heapq.merge(gone, here, key=_pod_id)

    def pod_count(self) -> int:
        """Pods made so far, gone or not."""
        return self.created

    def last_moment(self) -> int:
        """The latest creation, binding or finish of any pod (ns; 0 if none)."""
        here = max((max(p.created_at, p.bound_at or 0, p.finished_at or 0) for p in self.pods.values()), default=0)
        return here if self.departed is None else max(here, self.departed.last)

    def wait_times(self, now: int) -> npt.NDArray[np.int64]:
        """Every pod's wait for a node (ns) in creation order, as `Pod.wait_until(now)` gives it."""
        if self.departed is None:
            return np.array([p.wait_until(now) for p in self.pods.values()], dtype=np.int64)
        waits, gone = self.departed.waits(self.created)
        here = np.array([p.wait_until(now) for p in self.pods.values()], dtype=np.int64)
        waits[~gone] = here
        return waits

    def _allocated(self, at: int, i: int, delta: tuple[int, ...]) -> None:
        self.allocation_log.append((at, i, delta))
        self.allocation.allocated(at, delta)

    def _capacity_changed(self, at: int, delta: tuple[int, ...]) -> None:
        self.capacity_log.append((at, delta))
        self.allocation.capacity(at, delta)

    def delete(self, pod: Pod, end: PodEnd = PodEnd.COMPLETED) -> None:
        """The pod goes away now: from the queue if pending, off its node if bound (an end set before stays)."""
        clock = self.clock
        if pod.end is None:
            pod.end = end
        if pod in self.pending:
            if pod.end is PodEnd.COMPLETED:
                pod.end = PodEnd.DELETED
            self._forget(pod)
            clock.schedule("delete_pod", clock.now(), self.pending, self.done, pod)
        elif pod in self.bound:
            clock.schedule("finish_pod", clock.now(), self.bound, self.done, pod)

    def resize(self, pod: Pod, cpu: int | None, memory: int | None) -> str:
        """The kubelet's admission of an in-place resize of a bound pod (KEP-1287, `canResizePod`).

        "Infeasible" when the new requests exceed the node's allocatable, "Deferred" while they do
        not fit beside the other pods, else "Applied": the snapshot counts the new requests from
        now on. A pod not on a node has nothing to resize ("Infeasible").
        """
        snap = self.snapshot
        if pod.node is None or pod.node not in snap.index:
            return "Infeasible"
        i = snap.index[pod.node]
        resized = replace(pod.spec, cpu=cpu, memory=memory)
        new, old = snap.request_of(resized), snap.request_of(pod.spec)
        allocatable = snap.allocatable[i]
        if (new > allocatable).any():
            return "Infeasible"
        if (snap.requested[i] - old + new > allocatable).any():
            return "Deferred"
        snap.release(pod.spec, i)
        pod.spec = resized
        snap.assume(resized, i)
        return "Applied"

    def _arrived(self, pod: Pod) -> None:
        now = self.clock.now()
        self.timeline.append(TimelineEvent(now, "PodCreated", pod.name))
        if pod.node is not None:
            self._bind_named(pod)
        elif pod.spec.scheduling_gates:  # the SchedulingGates PreEnqueue check: it waits outside the queue
            gates = ", ".join(pod.spec.scheduling_gates)
            self.timeline.append(TimelineEvent(now, "PodSchedulingGated", pod.name, None, gates))
        else:
            self._push(pod)

    def _bind_named(self, pod: Pod) -> None:
        """A pod created with `spec.nodeName`: the kubelet of that node runs it; no scheduling cycle."""
        snap, now = self.snapshot, self.clock.now()
        name = pod.node
        if name is None or name not in snap.index:
            pod.node = None
            message = f"node {name!r} not found: the pod waits for it"
            self.timeline.append(TimelineEvent(now, "PodUnscheduled", pod.name, None, message))
            return
        i = snap.index[name]
        snap.assume(pod.spec, i)
        self._allocated(now, i, tuple(snap.request_of(pod.spec).tolist()))
        self.clock.schedule("bind_pod", now, self.pending, self.bound, pod)

    def update_pod(self, pod: Pod, spec: PodSpec) -> None:
        """The pod as patched. A pending pod takes the new spec, and joins the queue once its last
        scheduling gate is gone; a bound pod keeps its node and counts with the new spec there."""
        if spec.name != pod.name:
            raise ValueError(f"a patch cannot rename pod {pod.name!r}")
        snap = self.snapshot
        if pod in self.pending and pod.node is None:
            pod.spec = spec
            self._forget(pod)
            if not spec.scheduling_gates:
                self._push(pod)
            return
        if pod.node is not None and pod.node in snap.index and pod.name in snap.pods_on[snap.index[pod.node]]:
            i = snap.index[pod.node]
            snap.release(pod.spec, i)
            snap.assume(spec, i)
        pod.spec = spec

    def _push(self, pod: Pod) -> None:
        heapq.heappush(self._active, (-pod.spec.priority, pod.created_at, pod.name, pod))
        self._want_pass()

    def _forget(self, pod: Pod) -> None:
        for pool in self._unschedulable.values():
            pool.pop(pod, None)

    def _bound(self, pod: Pod) -> None:
        now = self.clock.now()
        pod.bound_at = now
        self.timeline.append(TimelineEvent(now, "PodScheduled", pod.name, pod.node))
        if self.on_bound is not None and pod.owner is not None:
            self.on_bound(pod)
        elif pod.duration is not None:
            self.clock.schedule("finish_pod", now + pod.duration, self.bound, self.done, pod)

    def _gone(self, pod: Pod) -> None:
        now = self.clock.now()
        pod.finished_at = now
        if pod.end is None:
            pod.end = PodEnd.COMPLETED
        self.timeline.append(TimelineEvent(now, "PodFinished", pod.name, pod.node, str(pod.end)))
        later = False
        if pod.node is not None and pod.node in self.snapshot.index:
            i = self.snapshot.index[pod.node]
            if pod.end is PodEnd.PREEMPTED or not self.settings.heartbeat_interval:
                self._release(pod, i)
            else:
                later = True
                self.clock.call_at(self._seen_at(i, now), lambda: self._release_seen(pod, i))
        if self.on_gone is not None:
            self.on_gone(pod)
        if not later:
            self._depart(pod)

    def _depart(self, pod: Pod) -> None:
        """A pod gone and off its node's books leaves `pods`, when the controller lets go of them."""
        departed = self.departed
        if departed is not None and departed.takes(pod) and self.pods.get(pod.name) is pod:
            departed.add(pod)
            del self.pods[pod.name]

    def _seen_at(self, node: int, at: int) -> int:
        """When the scheduler hears of a change on `node` at `at`: its next heartbeat, plus the delay."""
        interval = self.settings.heartbeat_interval
        offset = self._heartbeat_offsets.get(node)
        if offset is None:
            offset = int(self._rng.integers(interval))
            self._heartbeat_offsets[node] = offset
        beats = -(-(at - offset) // interval)
        return offset + beats * interval + self.settings.heartbeat_delay

    def _release_seen(self, pod: Pod, i: int) -> None:
        """A gone pod's room, once its node's heartbeat has told the scheduler; then the pod may leave."""
        self._release(pod, i)
        self._depart(pod)

    def _release(self, pod: Pod, i: int) -> None:
        snap = self.snapshot
        if not snap.present[i] or pod.name not in snap.pods_on[i]:
            return
        request = snap.request_of(pod.spec)
        snap.release(pod.spec, i)
        self._allocated(self.clock.now(), i, tuple((-request).tolist()))
        self._node_freed(i)

    # -- nodes -----------------------------------------------------------------------------------

    def add_node(self, node: NodeSpec) -> None:
        i = self.snapshot.add_node(node)
        self._capacity_changed(self.clock.now(), tuple(self.snapshot.allocatable[i].tolist()))
        self.cluster_changed()

    def update_node(self, node: NodeSpec) -> None:
        """The node as patched (labels, taints, unschedulable, allocatable); its pods stay where they are."""
        snap = self.snapshot
        i = snap.index[node.name]
        before = snap.allocatable[i].copy()
        snap.update_node(node)
        delta = snap.allocatable[i] - np.pad(before, (0, len(snap.resources) - len(before)))
        if delta.any():
            self._capacity_changed(self.clock.now(), tuple(delta.tolist()))
        self.cluster_changed()

    def remove_node(self, name: str) -> None:
        """Take the node away; pods still counted on it stop counting (the caller ends them)."""
        snap = self.snapshot
        i = snap.index[name]
        now = self.clock.now()
        for spec in list(snap.pods_on[i].values()):
            self._allocated(now, i, tuple((-snap.request_of(spec)).tolist()))
        snap.remove_node(name)
        self._capacity_changed(now, tuple((-snap.allocatable[i]).tolist()))
        self.cluster_changed()

    # -- the queue -------------------------------------------------------------------------------

    def cluster_changed(self) -> None:
        """A node joined or changed: every unschedulable pod is worth another try."""
        for pool in self._unschedulable.values():
            for pod in pool:
                self._push(pod)
        self._unschedulable.clear()

    def _node_freed(self, i: int) -> None:
        snap = self.snapshot
        free = snap.allocatable[i] - snap.requested[i]
        room = snap.pod_count[i] < snap.max_pods[i]
        for key in list(self._unschedulable):
            if key is not None and (not room or any(r > f for r, f in zip(key, free.tolist(), strict=False))):
                continue
            for pod in self._unschedulable.pop(key):
                self._push(pod)

    def _want_pass(self) -> None:
        if not self._pass_due:
            self._pass_due = True
            self.clock.call_when_settled(self._pass)

    def _pass(self) -> None:
        """Schedule every pod in the active queue, best first."""
        self._pass_due = False
        self.passes += 1
        active = self._active
        while active:
            pod = heapq.heappop(active)[3]
            if pod not in self.pending or pod.node is not None:
                continue
            self._schedule_one(pod)

    def _schedule_one(self, pod: Pod) -> None:
        now = self.clock.now()
        settings = self.settings
        keep = settings.plugin_results
        if keep != "all" and settings.results_for is not None and settings.results_for(pod.name):
            keep = "all"
        self.framework.record = keep
        attempt, outcome = self.framework.schedule(pod.spec, now, pod.nominated)
        pod.tries += 1
        if attempt.selected is None:
            self._unschedulable_attempt(pod, attempt, outcome)
        kept = keep == "all" or (keep == "unschedulable" and attempt.selected is None)
        if self.on_attempt is not None:
            self.on_attempt(pod, attempt, kept)
        elif kept:
            pod.keep(attempt)
        if attempt.selected is not None:
            i = self.snapshot.index[attempt.selected]
            self.snapshot.assume(pod.spec, i)
            if pod.spec.claims and self.snapshot.volumes is not None:  # VolumeBinding's Reserve and PreBind
                self.snapshot.volumes.assume(pod.spec, self.snapshot.nodes[i])
            self._allocated(now, i, tuple(self.snapshot.request_of(pod.spec).tolist()))
            pod.node = attempt.selected
            pod.nominated = None
            self.clock.schedule("bind_pod", now + self.settings.latency, self.pending, self.bound, pod)

    def _unschedulable_attempt(self, pod: Pod, attempt: Attempt, outcome: FilterOutcome) -> None:
        """No node fits: say so, try preemption, and put the pod among the unschedulable."""
        now = self.clock.now()
        if pod.unschedulable_since is None:
            pod.unschedulable_since = now
        self.timeline.append(TimelineEvent(now, "PodUnscheduled", pod.name, None, attempt.message))
        nominated = self._preempt(pod, outcome)
        attempt.nominated = nominated
        if nominated is not None:
            pod.nominated = nominated
            self._unschedulable.setdefault(None, {})[pod] = None  # retried as soon as anything frees up
            return
        key = self._hint(pod, outcome)
        self._unschedulable.setdefault(key, {})[pod] = None

    def _hint(self, pod: Pod, outcome: FilterOutcome) -> tuple[int, ...] | None:
        """What could make this pod fit: its request free on some node, or (None) any change at all.

        Only a pod that every examined node turned away for resources alone can wait for room (a node
        too small for it never has that much free); any other refusal (taints, affinity, spread, a
        user's plugin) is retried on every change.
        """
        if set(outcome.messages) <= {"Too many pods"} | {f"Insufficient {r}" for r in self.snapshot.resources}:
            return tuple(self.snapshot.request_of(pod.spec).tolist())
        return None

    # -- preemption ------------------------------------------------------------------------------

    def _preempt(self, pod: Pod, outcome: FilterOutcome) -> str | None:
        """DefaultPreemption's PostFilter: make room on one node by evicting lower-priority pods.

        Only when the profile has DefaultPreemption: upstream's `schedulingCycle` (schedule_one.go)
        runs `RunPostFilterPlugins` only if `HasPostFilterPlugins()`, and otherwise returns the pod
        Unschedulable ("No PostFilter plugins are registered, so no preemption will be performed"):
        it waits among the unschedulable, nominated nowhere, and no victim is chosen.
        """
        spec = pod.spec
        if not self.framework.profile.preemption or not eligible(spec) or not len(outcome.failed):
            return None
        snap = self.snapshot
        if min(snap.priorities, default=spec.priority) >= spec.priority:
            return None  # no pod anywhere has a lower priority: the answer below, without looking at each
        lowest = min(
            (p.priority for i in outcome.failed[outcome.resolvable] for p in snap.pods_on[i].values()),
            default=None,
        )
        if lowest is None or lowest >= spec.priority:
            return None
        candidates: dict[str, list[PodSpec]] = {}
        violations: dict[str, int] = {}
        budgets = self.preemption_budgets() if self.preemption_budgets is not None else ()
        nodes = outcome.failed[outcome.resolvable].tolist()
        started = _StartTimes(self.pods)
        for i in nodes:
            node = snap.nodes[i]
            # Pods already on their way out (earlier victims) are gone as far as a dry run is concerned,
            # and their room is promised to whoever evicted them: neither is offered again.
            if any(self.pods[p.name].preempted_at is not None for p in snap.pods_on[i].values()):
                continue
            pods = list(snap.pods_on[i].values())
            victims = select_victims_with_budgets(spec, node, pods, self._fits_without(i), started, budgets)
            if victims is not None:
                candidates[node.name], violations[node.name] = victims
        if not candidates:
            return None
        chosen = pick_node(candidates, started, violations)
        now = self.clock.now()
        for victim_spec in candidates[chosen]:
            victim = self.pods[victim_spec.name]
            victim.preempted_at = now
            victim.preempted_by = pod.name
            victim.end = PodEnd.PREEMPTED
            self.timeline.append(TimelineEvent(now, "PodPreempted", victim.name, chosen, f"by {pod.name}"))
            if self.on_preempted is not None and victim.owner is not None:
                self.on_preempted(victim)  # the replica ends gracefully; its pod goes when it is gone
            else:
                self.delete(victim, PodEnd.PREEMPTED)
        return chosen

    def _fits_without(self, i: int) -> Callable[[PodSpec, Any, list[PodSpec]], bool]:
        """Whether a pod would fit node `i` if only `remaining` of its pods were there (resources only)."""
        snap = self.snapshot
        pods = list(snap.pods_on[i].values())
        rows = {id(p): k for k, p in enumerate(pods)}
        # Each pod's request once, as a row of one matrix, rather than for every call below.
        requests = np.zeros((len(pods), len(snap.resources)), dtype=np.int64)
        for k, p in enumerate(pods):
            requests[k] = snap.request_of(p)

        def fits(pod: PodSpec, node: Any, remaining: list[PodSpec]) -> bool:
            if len(remaining) + 1 > snap.max_pods[i]:
                return False
            used = requests.take([rows[id(p)] for p in remaining], axis=0).sum(axis=0)
            request = snap.request_of(pod)
            return bool(np.all((request == 0) | (request <= snap.allocatable[i] - used)))

        return fits


def _pod_id(pod: Pod | PodRecord) -> int:
    return pod.id


class _StartTimes(Mapping[str, int]):
    """When each pod on a node started (bound; 0 if not yet), looked up as preemption asks."""

    def __init__(self, pods: Mapping[str, Pod]) -> None:
        self._pods = pods

    def __getitem__(self, name: str) -> int:
        return self._pods[name].bound_at or 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._pods)

    def __len__(self) -> int:
        return len(self._pods)
