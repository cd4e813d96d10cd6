"""The Vertical Pod Autoscaler as pure calculators: the recommender and the updater's decision.

Restated from kubernetes/autoscaler `vertical-pod-autoscaler` (no upstream code is copied):

- recommender: `pkg/recommender/model/aggregate_container_state.go` (CPU samples into a decaying
  histogram), `pkg/recommender/logic/estimator.go` and `recommender.go` (percentile, safety margin,
  confidence multiplier, minimum resources), and `pkg/utils/vpa/capping.go` (minAllowed/maxAllowed);
- updater: `pkg/updater/priority/priority_processor.go` and `update_priority_calculator.go` (which
  pods need an update and in what order), `pkg/updater/restriction` (how many may go at once) and
  `pkg/updater/logic/updater.go` (update modes).

CPU amounts are integer millicores, as upstream's `ResourceAmount` (conversions truncate). The
updater's calculators accept any resource, as upstream, with amounts in milli-units (millicores
for CPU). Times are integer nanoseconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cmp_to_key
from typing import TypeVar

from skenario.autoscalers.vpa_histogram import (
    DEFAULT_HALF_LIFE,
    MIN_SAMPLE_WEIGHT,
    DecayingHistogram,
    HistogramOptions,
    cpu_histogram_options,
)
from skenario.core.time import DAY, HOUR, MINUTE

T = TypeVar("T")

CPU = "cpu"
# model/types.go MaxResourceAmount.
MAX_RESOURCE_AMOUNT = 10**14
# logic/recommender.go CreatePodResourceRecommender: the bounds' confidence multipliers.
UPPER_BOUND_MULTIPLIER, UPPER_BOUND_EXPONENT = 1.0, 1.0
LOWER_BOUND_MULTIPLIER, LOWER_BOUND_EXPONENT = 0.001, -2.0


# --- recommender ----------------------------------------------------------------------------------


def resource_amount_from_float(amount: float) -> int:
    """Mirrors `resourceAmountFromFloat`: clamp to [0, MaxResourceAmount], truncate toward zero.

    NaN (0 x infinity, an empty history under a constant estimator) gives 0; Go's conversion is
    platform-defined there, and after the minimum-resource step both give the minimum."""
    if math.isnan(amount):
        return 0
    if amount > MAX_RESOURCE_AMOUNT:
        return MAX_RESOURCE_AMOUNT
    return math.trunc(max(amount, 0.0))


def scale_resource(amount: int, factor: float) -> int:
    """Mirrors `model.ScaleResource`: `amount * factor`, clamped and truncated."""
    return resource_amount_from_float(float(amount) * factor)


class AggregateContainerState:
    """The CPU history of one container name; mirrors `AggregateContainerState` (CPU part).

    `add_cpu_sample` mirrors `addCPUSample`: the usage goes into a decaying histogram with weight
    `MIN_SAMPLE_WEIGHT` (0.1), as upstream since Feb 2025 (commit ca812b36a3). With
    `request_weighted=True` the weight is `max(request in cores, 0.1)` as in earlier releases, so a
    larger request makes older history count for less. The first and last sample starts and the
    sample count drive the confidence of the bounds.
    """

    __slots__ = ("cpu_usage", "first_sample_start", "last_sample_start", "request_weighted", "total_samples_count")

    def __init__(
        self,
        half_life: int = DEFAULT_HALF_LIFE,
        *,
        request_weighted: bool = False,
        options: HistogramOptions | None = None,
    ) -> None:
        self.cpu_usage = DecayingHistogram(options if options is not None else cpu_histogram_options(), half_life)
        self.request_weighted = request_weighted
        self.first_sample_start: int | None = None
        self.last_sample_start: int | None = None
        self.total_samples_count = 0

    def add_cpu_sample(self, usage_millicores: float, measure_start: int, request_millicores: float = 0.0) -> None:
        """Add one CPU usage sample measured from `measure_start`; mirrors `addCPUSample`."""
        weight = MIN_SAMPLE_WEIGHT
        if self.request_weighted:
            weight = max(request_millicores / 1000.0, MIN_SAMPLE_WEIGHT)
        self.cpu_usage.add_sample(usage_millicores, weight, measure_start)
        if self.last_sample_start is None or measure_start > self.last_sample_start:
            self.last_sample_start = measure_start
        if self.first_sample_start is None or measure_start < self.first_sample_start:
            self.first_sample_start = measure_start
        self.total_samples_count += 1


def get_confidence(state: AggregateContainerState, confidence_interval: int = DAY) -> float:
    """Mirrors `getConfidence`: the lesser of the history's span and its sample count at one per
    minute, both in units of `confidence_interval`; N days of one sample a minute gives N."""
    first, last = state.first_sample_start, state.last_sample_start
    lifespan = float(last - first) / float(confidence_interval) if first is not None and last is not None else 0.0
    # time.Duration.Minutes(): whole minutes plus the fraction.
    minutes = float(confidence_interval // MINUTE) + float(confidence_interval % MINUTE) / float(MINUTE)
    return min(lifespan, float(state.total_samples_count) / minutes)


def percentile_estimate(state: AggregateContainerState, percentile: float) -> int:
    """Mirrors `percentileCPUEstimator.GetCPUEstimation`: the histogram percentile, truncated."""
    return resource_amount_from_float(state.cpu_usage.percentile(percentile))


def margin_estimate(base: int, margin_fraction: float) -> int:
    """Mirrors `cpuMarginEstimator.GetCPUEstimation`: `base + int(base * fraction)`."""
    return base + scale_resource(base, margin_fraction)


def confidence_multiplier_estimate(base: int, multiplier: float, exponent: float, confidence: float) -> int:
    """Mirrors `cpuConfidenceMultiplier.GetCPUEstimation`: `int(base * (1 + multiplier/confidence)^exponent)`.

    With no confidence the factor is infinite (exponent > 0: MaxResourceAmount) or 0 (exponent < 0)."""
    if confidence == 0.0:
        ratio = math.copysign(math.inf, multiplier) if multiplier != 0.0 else math.nan
    else:
        ratio = multiplier / confidence
    return scale_resource(base, math.pow(1.0 + ratio, exponent))


def min_resource_estimate(base: int, min_resource: int) -> int:
    """Mirrors `cpuMinResourceEstimator.GetCPUEstimation`: at least `min_resource`."""
    return max(base, min_resource)


def pod_min_cpu(pod_min_cpu_millicores: float, containers: int = 1) -> int:
    """Mirrors the split in `GetRecommendedPodResources`: the pod minimum shared evenly by containers."""
    if containers < 1:
        raise ValueError("a pod has at least one container")
    return scale_resource(resource_amount_from_float(pod_min_cpu_millicores * 0.001 * 1000.0), 1.0 / containers)


@dataclass(frozen=True, slots=True)
class RecommenderConfig:
    """The recommender's CPU settings; mirrors `RecommendationConfig` with production defaults."""

    target_percentile: float = 0.9  # --target-cpu-percentile
    lower_bound_percentile: float = 0.5
    upper_bound_percentile: float = 0.95
    safety_margin_fraction: float = 0.15  # --recommendation-margin-fraction
    pod_min_cpu_millicores: float = 25.0  # --pod-recommendation-min-cpu-millicores
    confidence_interval: int = DAY  # --confidence-interval-cpu


@dataclass(frozen=True, slots=True)
class ContainerResourcePolicy:
    """A container policy's CPU bounds in millicores; None or 0 means unset, as upstream."""

    min_allowed: int | None = None
    max_allowed: int | None = None


@dataclass(frozen=True, slots=True)
class RecommendedResources:
    """One container's recommendation for any resources (milli-units), as the updater reads it."""

    target: Mapping[str, int]
    lower_bound: Mapping[str, int] = field(default_factory=dict)
    upper_bound: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Recommendation:
    """A container's CPU recommendation in millicores; mirrors `RecommendedContainerResources`.

    `uncapped_target` is the target before the policy's minAllowed/maxAllowed were applied."""

    target: int
    lower_bound: int
    upper_bound: int
    uncapped_target: int

    def as_resources(self) -> RecommendedResources:
        """This recommendation in the updater's per-resource form."""
        return RecommendedResources({CPU: self.target}, {CPU: self.lower_bound}, {CPU: self.upper_bound})


def cap_to_policy(
    recommendation: Recommendation,
    policy: ContainerResourcePolicy | None = None,
    global_max_allowed: int | None = None,
) -> Recommendation:
    """Mirrors `applyVPAPolicyForContainer`: raise target and bounds to minAllowed, then lower them
    to maxAllowed (so max wins a conflict). The global maximum applies when the policy sets none."""
    min_allowed = policy.min_allowed if policy is not None else None
    max_allowed = policy.max_allowed if policy is not None and policy.max_allowed is not None else global_max_allowed

    def cap(amount: int) -> int:
        if min_allowed and amount < min_allowed:
            amount = min_allowed
        if max_allowed and amount > max_allowed:
            amount = max_allowed
        return amount

    return Recommendation(
        cap(recommendation.target),
        cap(recommendation.lower_bound),
        cap(recommendation.upper_bound),
        recommendation.uncapped_target,
    )


def recommend(
    state: AggregateContainerState,
    config: RecommenderConfig = RecommenderConfig(),
    *,
    containers: int = 1,
    policy: ContainerResourcePolicy | None = None,
    global_max_allowed: int | None = None,
) -> Recommendation:
    """A container's CPU recommendation; mirrors `CreatePodResourceRecommender` +
    `GetRecommendedPodResources`, then the capping post-processor (`ApplyVPAPolicy`).

    Each of target / lower / upper is the histogram percentile (0.9 / 0.5 / 0.95) plus the 15%
    margin; the upper bound is scaled by `(1 + 1/confidence)`, the lower by `(1 + 0.001/confidence)^-2`;
    all three are at least the pod minimum (25m) split over `containers`; the policy caps them last.
    """
    min_cpu = pod_min_cpu(config.pod_min_cpu_millicores, containers)
    confidence = get_confidence(state, config.confidence_interval)
    margin = config.safety_margin_fraction
    target = margin_estimate(percentile_estimate(state, config.target_percentile), margin)
    lower = margin_estimate(percentile_estimate(state, config.lower_bound_percentile), margin)
    upper = margin_estimate(percentile_estimate(state, config.upper_bound_percentile), margin)
    lower = confidence_multiplier_estimate(lower, LOWER_BOUND_MULTIPLIER, LOWER_BOUND_EXPONENT, confidence)
    upper = confidence_multiplier_estimate(upper, UPPER_BOUND_MULTIPLIER, UPPER_BOUND_EXPONENT, confidence)
    target = min_resource_estimate(target, min_cpu)
    uncapped = Recommendation(
        target,
        min_resource_estimate(lower, min_cpu),
        min_resource_estimate(upper, min_cpu),
        target,
    )
    return cap_to_policy(uncapped, policy, global_max_allowed)


# --- updater --------------------------------------------------------------------------------------


class UpdateMode(StrEnum):
    """`spec.updatePolicy.updateMode`. Off: recommend only. Initial: set requests at pod creation
    only. Recreate: also evict pods to apply new ones. Auto: deprecated, the same as Recreate."""

    OFF = "Off"
    INITIAL = "Initial"
    RECREATE = "Recreate"
    AUTO = "Auto"


# vpa_api_util.GetUpdateMode: an unset mode is Recreate.
DEFAULT_UPDATE_MODE = UpdateMode.RECREATE


@dataclass(frozen=True, slots=True)
class UpdaterConfig:
    """The updater's settings; mirrors `UpdateConfig` and the updater flags, production defaults."""

    min_change_priority: float = 0.1  # DefaultUpdateThreshold
    pod_lifetime_update_threshold: int = 12 * HOUR  # --in-recommendation-bounds-eviction-lifetime-threshold
    evict_after_oom_threshold: int = 10 * MINUTE  # --evict-after-oom-threshold
    min_replicas: int = 2  # --min-replicas
    eviction_tolerance: float = 0.5  # --eviction-tolerance


@dataclass(frozen=True, slots=True)
class PodState:
    """What the updater reads of a pod.

    `requests` maps container name to its requests (resource name to milli-units); a resource left
    out has no request. `oom_terminations` maps a container whose last termination was OOMKilled to
    that run's (started_at, finished_at). `pending` is phase Pending."""

    name: str
    requests: Mapping[str, Mapping[str, int]]
    start_time: int | None = None
    pending: bool = False
    oom_terminations: Mapping[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PodPriority:
    """Mirrors `PodPriority`: outside the bounds, wants to grow, and the summed relative change."""

    outside_recommended_range: bool = False
    scale_up: bool = False
    resource_diff: float = 0.0

    def less(self, other: PodPriority) -> bool:
        """Mirrors `PodPriority.Less`: scaling up beats not; then the larger resource diff wins."""
        if self.scale_up != other.scale_up:
            return other.scale_up
        return self.resource_diff < other.resource_diff


def get_update_priority(
    requests: Mapping[str, Mapping[str, int]], recommendation: Mapping[str, RecommendedResources]
) -> PodPriority:
    """Mirrors `defaultPriorityProcessor.GetUpdatePriority`.

    For every container with a recommendation and every resource in its target: a request below the
    lower bound or above the upper bound is outside the range, a target above the request is a
    scale-up, and a missing request is both. `resource_diff` sums over resources
    `|total request - total target| / max(total request, 1)`."""
    outside = scale_up = False
    total_request: dict[str, int] = {}
    total_target: dict[str, int] = {}
    for container, container_requests in requests.items():
        recommended = recommendation.get(container)
        if recommended is None:
            continue
        for resource, target in recommended.target.items():
            total_target[resource] = total_target.get(resource, 0) + target
            request = container_requests.get(resource)
            if request is None:
                scale_up = outside = True
                continue
            total_request[resource] = total_request.get(resource, 0) + request
            if target > request:
                scale_up = True
            lower = recommended.lower_bound.get(resource)
            upper = recommended.upper_bound.get(resource)
            if (lower is not None and request < lower) or (upper is not None and request > upper):
                outside = True
    diff = 0.0
    for resource in sorted(total_target):
        request_total = max(float(total_request.get(resource, 0)), 1.0)
        diff += abs(request_total - float(total_target[resource])) / request_total
    return PodPriority(outside, scale_up, diff)


def has_quick_oom(pod: PodState, evict_after_oom_threshold: int = 10 * MINUTE) -> bool:
    """Mirrors the quick-OOM test in `AddPod`: a container was OOMKilled after running less than
    the threshold."""
    return any(finished - started < evict_after_oom_threshold for started, finished in pod.oom_terminations.values())


def is_update_admitted(
    pod: PodState,
    priority: PodPriority,
    now: int,
    config: UpdaterConfig = UpdaterConfig(),
) -> bool:
    """Mirrors the admission rule of `UpdatePriorityCalculator.AddPod`.

    A pod is queued if its request is outside the bounds, or a container had a quick OOM, or it has
    lived at least `pod_lifetime_update_threshold` and `resource_diff >= min_change_priority`. A
    quick-OOM pod whose resources would not change is not queued."""
    quick_oom = has_quick_oom(pod, config.evict_after_oom_threshold)
    if not priority.outside_recommended_range and not quick_oom:
        if pod.start_time is None:
            return False
        if now < pod.start_time + config.pod_lifetime_update_threshold:
            return False
        if priority.resource_diff < config.min_change_priority:
            return False
    return not (quick_oom and priority.resource_diff == 0.0)


def sort_by_update_priority(candidates: Sequence[tuple[T, PodPriority]]) -> list[T]:
    """Mirrors `GetSortedPods` (with the default admission): highest priority first. The sort is
    stable, so ties keep their input order (Go's sort leaves them unspecified)."""

    def compare(a: tuple[T, PodPriority], b: tuple[T, PodPriority]) -> int:
        if b[1].less(a[1]):
            return -1
        return 1 if a[1].less(b[1]) else 0

    return [item for item, _ in sorted(candidates, key=cmp_to_key(compare))]


class EvictionRestriction:
    """How many pods of one replica group may be evicted now; mirrors `GetCreatorMaps` and
    `PodsEvictionRestrictionImpl` (`CanEvict`, `Evict`, `singleGroupStats.isPodDisruptable`).

    A group with fewer live pods than `min_replicas` is left alone. Otherwise a pending pod may
    always go, and a running one while more than `configured - int(configured * tolerance)` would
    stay running, or (tolerance rounding to 0) when all configured replicas run and none was evicted.
    """

    __slots__ = ("_members", "_tracked", "configured", "evicted", "running", "tolerance")

    def __init__(
        self,
        pods: Sequence[PodState],
        configured_replicas: int | None = None,
        *,
        min_replicas: int = 2,
        eviction_tolerance: float = 0.5,
    ) -> None:
        self._members = {pod.name for pod in pods}
        self._tracked = len(pods) >= min_replicas
        self.configured = len(pods) if configured_replicas is None else configured_replicas
        self.tolerance = math.trunc(float(self.configured) * eviction_tolerance)
        self.running = len(pods) - sum(1 for pod in pods if pod.pending)
        self.evicted = 0

    def can_evict(self, pod: PodState) -> bool:
        if not self._tracked or pod.name not in self._members:
            return False
        if pod.pending:
            return True
        should_be_alive = self.configured - self.tolerance
        actually_alive = self.running - self.evicted
        return actually_alive > should_be_alive or (
            self.configured == self.running and self.tolerance == 0 and self.evicted == 0
        )

    def evict(self, pod: PodState) -> bool:
        """Record an eviction if allowed; False (upstream: an error) if not."""
        if not self.can_evict(pod):
            return False
        if not pod.pending:
            self.evicted += 1
        return True


def pods_to_evict(
    pods: Sequence[PodState],
    recommendation: Mapping[str, RecommendedResources],
    mode: UpdateMode | None,
    now: int,
    *,
    configured_replicas: int | None = None,
    config: UpdaterConfig = UpdaterConfig(),
) -> list[str]:
    """The names of the pods one updater pass evicts, in order; mirrors `updater.RunOnce` for one VPA
    whose pods form one replica group (pass the live pods, the capped recommendation by container).

    Off and Initial never evict. Recreate and Auto (and an unset mode) keep the pods the eviction
    restriction allows, rank those `is_update_admitted` accepts, and evict down that list while the
    restriction still allows."""
    if (mode or DEFAULT_UPDATE_MODE) in (UpdateMode.OFF, UpdateMode.INITIAL):
        return []
    restriction = EvictionRestriction(
        pods, configured_replicas, min_replicas=config.min_replicas, eviction_tolerance=config.eviction_tolerance
    )
    queued: list[tuple[PodState, PodPriority]] = []
    for pod in pods:
        if not restriction.can_evict(pod):
            continue
        priority = get_update_priority(pod.requests, recommendation)
        if is_update_admitted(pod, priority, now, config):
            queued.append((pod, priority))
    evicted: list[str] = []
    for pod in sort_by_update_priority(queued):
        if restriction.evict(pod):  # re-checks the budget, as RunOnce's CanEvict before Evict
            evicted.append(pod.name)
    return evicted


def request_at_creation(mode: UpdateMode | None, recommendation: Recommendation | None) -> int | None:
    """The CPU request the admission controller gives a new pod: the (capped) target unless the mode
    is Off or there is no recommendation yet, when the pod keeps its own request (None)."""
    if recommendation is None or mode == UpdateMode.OFF:
        return None
    return recommendation.target
