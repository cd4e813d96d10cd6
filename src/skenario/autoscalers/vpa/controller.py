"""The VPA's three parts on the Clock: recommender, admission and updater, around the pure calculators.

- The recommender (`recommender.RunOnce`, every `recommender_interval`, 1 min upstream) feeds each
  CPU sample the pipeline delivers into the aggregate histogram and recomputes the
  recommendation (`recommend`, capped by the policy).
- The admission controller sets new pods' CPU request to the target at creation: here, the pod
  template's request follows the target (`request_at_creation`) in every mode but Off. The limit
  keeps its ratio to the request, as with `controlledValues: RequestsAndLimits` (the default).
- The updater (`updater.RunOnce`, every `updater_interval`, 1 min upstream) evicts the pods
  `pods_to_evict` picks in Recreate and Auto modes; each is replaced from the new template.

Samples are weighted by the pod's request or not as the recommender is configured (upstream now
uses a constant weight). HPA and VPA can act on the same workload, as in the seeds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skenario.autoscalers.base import AutoscalerContext
from skenario.autoscalers.vpa.config import RecommenderConfig, UpdaterConfig
from skenario.autoscalers.vpa.recommender import (
    AggregateContainerState,
    ContainerResourcePolicy,
    Recommendation,
    recommend,
)
from skenario.autoscalers.vpa.updater import (
    DEFAULT_UPDATE_MODE,
    PodState,
    UpdateMode,
    pods_to_evict,
    request_at_creation,
)
from skenario.core.time import MINUTE
from skenario.model.metrics import Sample


@dataclass(frozen=True)
class VPASpec:
    """The parts of a VerticalPodAutoscaler's spec the simulation uses (CPU only)."""

    update_mode: UpdateMode = DEFAULT_UPDATE_MODE
    policy: ContainerResourcePolicy | None = None
    controlled_values: str = "RequestsAndLimits"


@dataclass
class VPADecision:
    """One recommender pass: what it recommended, and the template request that followed."""

    at: int
    target: int
    lower_bound: int
    upper_bound: int
    template_request: int
    evicted: int = 0


@dataclass
class VerticalPodAutoscaler:
    """A VPA on one workload's one container."""

    spec: VPASpec = field(default_factory=VPASpec)
    recommender: RecommenderConfig = field(default_factory=RecommenderConfig)
    updater: UpdaterConfig = field(default_factory=UpdaterConfig)
    recommender_interval: int = MINUTE
    updater_interval: int = MINUTE
    request_weighted: bool = False
    keep_decisions: int = 100_000
    decisions: list[VPADecision] = field(default_factory=list)
    recommendation: Recommendation | None = None
    _context: AutoscalerContext | None = None
    _state: AggregateContainerState | None = None

    def start(self, context: AutoscalerContext) -> None:
        self._context = context
        self._state = AggregateContainerState(request_weighted=self.request_weighted)
        context.subscribe(self._observe)
        context.clock.call_later(self.recommender_interval, self._recommend)
        if self.spec.update_mode in (UpdateMode.RECREATE, UpdateMode.AUTO):
            context.clock.call_later(self.updater_interval, self._update)

    def _observe(self, sample: Sample) -> None:
        assert self._state is not None
        self._state.add_cpu_sample(sample.cpu_millicores, sample.at - sample.window, sample.cpu_request)

    def _recommend(self) -> None:
        context = self._context
        assert context is not None and self._state is not None
        if self._state.total_samples_count:
            self.recommendation = recommend(self._state, self.recommender, policy=self.spec.policy)
            target = request_at_creation(self.spec.update_mode, self.recommendation)
            if target is not None and target != context.cpu_request:
                context.set_cpu(target, self._limit_for(target))
            if len(self.decisions) < self.keep_decisions:
                rec = self.recommendation
                self.decisions.append(
                    VPADecision(context.clock.now(), rec.target, rec.lower_bound, rec.upper_bound, context.cpu_request)
                )
        context.clock.call_later(self.recommender_interval, self._recommend)

    def _limit_for(self, request: int) -> int | None:
        """Keep the limit's ratio to the request (RequestsAndLimits), or leave it (RequestsOnly)."""
        context = self._context
        assert context is not None
        pods = context.pods()
        limit = next((p.cpu_limit for p in pods if p.cpu_limit is not None), None)
        if limit is None or self.spec.controlled_values == "RequestsOnly":
            return limit if limit is None or limit >= request else request
        reference = next((p.cpu_request for p in pods if p.cpu_limit is not None), request)
        return max(request, round(limit * request / reference))

    def _update(self) -> None:
        context = self._context
        assert context is not None
        rec = self.recommendation
        if rec is not None:
            now = context.clock.now()
            views = {p.name: p for p in context.pods() if p.phase != "Terminating"}
            pods = [
                PodState(
                    name, {view.container: {"cpu": view.cpu_request}}, view.started_at, pending=view.phase == "Pending"
                )
                for name, view in views.items()
            ]
            containers = {view.container for view in views.values()}
            evict = pods_to_evict(
                pods,
                {container: rec.as_resources() for container in containers},
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
