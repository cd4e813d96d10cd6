"""The VPA's three parts on the Clock: recommender, admission and updater, around the pure calculators.

- The recommender (`recommender.RunOnce`, every `recommender_interval`, 1 min upstream) feeds each
  CPU sample the pipeline delivers into the aggregate histogram and recomputes the
  recommendation (`recommend`, capped by the policy). When the workload models memory, each
  pod's working set goes into its per-interval peak and each OOM kill into an OOM sample
  (`vpa.memory`), and memory is recommended the same way (`recommend_memory`).
- The admission controller sets new pods' requests to the targets at creation: here, the pod
  template's requests follow them (`request_at_creation`) in every mode but Off, for the
  resources in `controlledResources`. With `controlledValues: RequestsAndLimits` (the default) a
  limit keeps its ratio to the request; with `RequestsOnly` the memory target is capped at the
  limit (`capRecommendationToContainerLimit`) and the limit stays.
- The updater (`updater.RunOnce`, every `updater_interval`, 1 min upstream) evicts the pods
  `pods_to_evict` picks in Recreate and Auto modes; each is replaced from the new template. In
  InPlaceOrRecreate it resizes the pods `pods_to_update` picks in place instead (their CPU share
  and memory limit change at once, no restart), and evicts one only when its resize cannot be
  done: Infeasible at once, Deferred for 5 minutes, InProgress for an hour (`fall_back_to_eviction`).

Samples are weighted by the pod's request or not as the recommender is configured (upstream now
uses a constant weight). HPA and VPA can act on the same workload, as in the seeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from skenario.autoscalers.base import MetricsSource, PodLister, PodView, Resizer, Scaler, Timing
from skenario.autoscalers.vpa.config import RecommenderConfig, UpdaterConfig
from skenario.autoscalers.vpa.memory import MEMORY, ContainerMemory, MemoryConfig, MemoryPeaks, recommend_memory
from skenario.autoscalers.vpa.recommender import (
    CPU,
    AggregateContainerState,
    ContainerResourcePolicy,
    Recommendation,
    RecommendedResources,
    recommend,
)
from skenario.autoscalers.vpa.updater import (
    DEFAULT_UPDATE_MODE,
    PodState,
    UpdateMode,
    fall_back_to_eviction,
    pods_to_evict,
    pods_to_update,
    request_at_creation,
)
from skenario.core.time import MINUTE
from skenario.model.metrics import Sample


class VPAContext(Timing, PodLister, MetricsSource, Scaler, Resizer, Protocol):
    """What the VPA reaches: the clock, the pods, their samples, the replica count (for the updater's
    eviction rate) and the vertical levers."""


@dataclass(frozen=True)
class VPASpec:
    """The parts of a VerticalPodAutoscaler's spec the simulation uses. `policy` bounds CPU
    (millicores), `memory_policy` memory (bytes)."""

    update_mode: UpdateMode = DEFAULT_UPDATE_MODE
    policy: ContainerResourcePolicy | None = None
    controlled_values: str = "RequestsAndLimits"
    controlled_resources: frozenset[str] = frozenset({CPU, MEMORY})
    memory_policy: ContainerResourcePolicy | None = None


@dataclass
class VPADecision:
    """One recommender pass: what it recommended, and the template request that followed."""

    at: int
    target: int | None  # CPU, millicores; None before any CPU sample
    lower_bound: int | None
    upper_bound: int | None
    template_request: int
    evicted: int = 0
    memory_target: int | None = None  # bytes, when memory is modelled
    memory_lower_bound: int | None = None
    memory_upper_bound: int | None = None
    template_memory_request: int | None = None


@dataclass
class VerticalPodAutoscaler:
    """A VPA on one workload's one container."""

    spec: VPASpec = field(default_factory=VPASpec)
    recommender: RecommenderConfig = field(default_factory=RecommenderConfig)
    updater: UpdaterConfig = field(default_factory=UpdaterConfig)
    recommender_interval: int = MINUTE
    updater_interval: int = MINUTE
    request_weighted: bool = False
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    keep_decisions: int = 100_000
    decisions: list[VPADecision] = field(default_factory=list)
    recommendation: Recommendation | None = None
    memory_recommendation: Recommendation | None = None
    _context: VPAContext | None = None
    _state: AggregateContainerState | None = None
    _peaks: MemoryPeaks | None = None
    _containers: dict[int, ContainerMemory] = field(default_factory=dict)
    _resizes: dict[int, tuple[str, int]] = field(default_factory=dict)  # pod -> stuck resize's condition, since

    def start(self, context: VPAContext) -> None:
        self._context = context
        self._state = AggregateContainerState(request_weighted=self.request_weighted)
        self._peaks = MemoryPeaks(self.memory)
        context.subscribe(self._observe)
        context.subscribe_oom(self._oom_killed)
        # The recommender and the updater are a Deployment each, serving every VPA of the cluster:
        # `RunOnce` on a `time.Tick` of their interval (pkg/recommender/main.go, pkg/updater/main.go),
        # so each ticks at its own phase, shared by all VPAs.
        clock = context.clock
        clock.call_later(context.phase("vpa-recommender", self.recommender_interval, shared=True), self._recommend)
        if self.spec.update_mode in (UpdateMode.RECREATE, UpdateMode.AUTO, UpdateMode.IN_PLACE_OR_RECREATE):
            clock.call_later(context.phase("vpa-updater", self.updater_interval, shared=True), self._update)

    def _container(self, pod_id: int) -> ContainerMemory:
        container = self._containers.get(pod_id)
        if container is None:
            assert self._peaks is not None
            container = self._containers[pod_id] = ContainerMemory(self._peaks, self.memory)
        return container

    def _observe(self, sample: Sample) -> None:
        assert self._state is not None
        self._state.add_cpu_sample(sample.cpu_millicores, sample.at - sample.window, sample.cpu_request)
        if sample.memory_bytes is not None:
            self._container(sample.replica_id).add_sample(sample.memory_bytes, sample.at)

    def _oom_killed(self, pod: PodView) -> None:
        """The OOM observer: `RecordOOM` with the container's memory request at the kill."""
        assert self._context is not None
        self._container(pod.id).record_oom(self._context.clock.now(), pod.memory_request or 0)

    def _recommend(self) -> None:
        context = self._context
        assert context is not None and self._state is not None
        controlled = self.spec.controlled_resources
        pods = context.pods()
        if self._state.total_samples_count:
            request, limit = _reference(pods, CPU)
            policy = self._capped_to_limit(self.spec.policy, limit)
            self.recommendation = recommend(self._state, self.recommender, policy=policy)
            target = request_at_creation(self.spec.update_mode, self.recommendation)
            if CPU in controlled and target is not None and target != context.cpu_request:
                context.set_cpu(target, _proportional(limit, request, target, self.spec.controlled_values))
        if self._containers:  # memory samples or OOM kills: a container that dies at once has no CPU history
            self._recommend_memory(context, pods)
        cpu, memory = self.recommendation, self.memory_recommendation
        if (cpu is not None or memory is not None) and len(self.decisions) < self.keep_decisions:
            self.decisions.append(
                VPADecision(
                    context.clock.now(),
                    cpu.target if cpu is not None else None,
                    cpu.lower_bound if cpu is not None else None,
                    cpu.upper_bound if cpu is not None else None,
                    context.cpu_request,
                    memory_target=memory.target if memory is not None else None,
                    memory_lower_bound=memory.lower_bound if memory is not None else None,
                    memory_upper_bound=memory.upper_bound if memory is not None else None,
                    template_memory_request=context.memory_request if memory is not None else None,
                )
            )
        context.clock.call_later(self.recommender_interval, self._recommend)

    def _recommend_memory(self, context: Resizer, pods: list[PodView]) -> None:
        assert self._peaks is not None and self._state is not None
        request, limit = _reference(pods, MEMORY)
        policy = self._capped_to_limit(self.spec.memory_policy, limit)
        self.memory_recommendation = recommend_memory(
            self._peaks, self._state, self.recommender, self.memory, policy=policy
        )
        target = request_at_creation(self.spec.update_mode, self.memory_recommendation)
        if MEMORY in self.spec.controlled_resources and target is not None and target != context.memory_request:
            context.set_memory(target, _proportional(limit, request, target, self.spec.controlled_values))

    def _capped_to_limit(
        self, policy: ContainerResourcePolicy | None, limit: int | None
    ) -> ContainerResourcePolicy | None:
        """Under RequestsOnly the recommendation may not pass the limit it cannot move
        (`capRecommendationToContainerLimit`): the limit joins the policy's maxAllowed."""
        if self.spec.controlled_values != "RequestsOnly" or limit is None:
            return policy
        cap = min(policy.max_allowed, limit) if policy is not None and policy.max_allowed else limit
        return ContainerResourcePolicy(policy.min_allowed if policy is not None else None, cap)

    def _update(self) -> None:
        context = self._context
        assert context is not None
        if self.recommendation is not None or self.memory_recommendation is not None:
            now = context.clock.now()
            views = {p.name: p for p in context.pods() if p.phase != "Terminating"}
            pods = [
                PodState(
                    name,
                    {view.container: self._requests(view)},
                    view.started_at,
                    pending=view.phase == "Pending",
                    oom_terminations={view.container: view.last_oom} if view.last_oom is not None else {},
                )
                for name, view in views.items()
            ]
            containers = {view.container for view in views.values()}
            resources = self._recommended_resources(self.recommendation)
            by_container = {container: resources for container in containers}
            if self.spec.update_mode is UpdateMode.IN_PLACE_OR_RECREATE:
                replicas = context.desired
                chosen = pods_to_update(pods, by_container, now, configured_replicas=replicas, config=self.updater)
                evict = [name for name in chosen if not self._resize(context, views[name], resources, now)]
                budget = context.eviction_budget()
                evict = [n for n in evict if budget is None or budget.evict(pending=False, ready=True)]
            else:
                evict = pods_to_evict(
                    pods,
                    by_container,
                    self.spec.update_mode,
                    now,
                    configured_replicas=context.desired,
                    config=self.updater,
                    budget=context.eviction_budget(),
                )
            for name in evict:
                context.evict(views[name].id)
            if evict and self.decisions:
                self.decisions[-1].evicted += len(evict)
        context.clock.call_later(self.updater_interval, self._update)

    def _resize(self, context: Resizer, view: PodView, rec: RecommendedResources, now: int) -> bool:
        """Try the pod's resize in place; False when it should be evicted instead (`CanEvictInPlacingPod`)."""
        stuck = self._resizes.get(view.id)
        if stuck is not None and fall_back_to_eviction(stuck[0], stuck[1], now):
            del self._resizes[view.id]
            return False
        cpu = rec.target.get(CPU, view.cpu_request)
        memory = rec.target.get(MEMORY, view.memory_request)
        outcome = context.resize(
            view.id,
            cpu,
            _proportional(view.cpu_limit, view.cpu_request, cpu, self.spec.controlled_values),
            memory,
            _proportional(view.memory_limit, view.memory_request, memory, self.spec.controlled_values),
        )
        if outcome == "Applied":
            self._resizes.pop(view.id, None)
            return True
        if stuck is None or stuck[0] != outcome:
            self._resizes[view.id] = (outcome, now)
        return not fall_back_to_eviction(outcome, self._resizes[view.id][1], now)

    def _requests(self, view: PodView) -> dict[str, int]:
        requests = {CPU: view.cpu_request} if view.cpu_request else {}  # BestEffort: no request to compare
        if view.memory_request is not None:
            requests[MEMORY] = view.memory_request
        return requests

    def _recommended_resources(self, cpu: Recommendation | None) -> RecommendedResources:
        """The capped recommendation of each controlled resource, as the updater compares it to requests."""
        target: dict[str, int] = {}
        lower: dict[str, int] = {}
        upper: dict[str, int] = {}
        controlled = self.spec.controlled_resources
        for name, rec in ((CPU, cpu), (MEMORY, self.memory_recommendation)):
            if rec is not None and name in controlled:
                target[name], lower[name], upper[name] = rec.target, rec.lower_bound, rec.upper_bound
        return RecommendedResources(target, lower, upper)


def _reference(pods: list[PodView], resource: str) -> tuple[int | None, int | None]:
    """The (request, limit) of the first pod with a limit on `resource`: the ratio a new limit keeps."""
    for pod in pods:
        if resource == CPU and pod.cpu_limit is not None:
            return pod.cpu_request, pod.cpu_limit
        if resource == MEMORY and pod.memory_limit is not None:
            return pod.memory_request, pod.memory_limit
    return None, None


def _proportional(limit: int | None, request: int | None, new_request: int | None, controlled: str) -> int | None:
    """`GetProportionalLimit`: the limit keeps its ratio to the request (RequestsAndLimits), else stays."""
    if limit is None or not request or new_request is None or controlled == "RequestsOnly":
        return limit
    return max(new_request, round(limit * new_request / request))
