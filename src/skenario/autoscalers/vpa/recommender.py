"""The Vertical Pod Autoscaler's recommender: CPU samples in, a capped CPU recommendation out.

Restated from kubernetes/autoscaler `vertical-pod-autoscaler` (no upstream code is copied):
`pkg/recommender/model/aggregate_container_state.go` (CPU samples into a decaying histogram),
`pkg/recommender/logic/estimator.go` and `recommender.go` (percentile, safety margin, confidence
multiplier, minimum resources), and `pkg/utils/vpa/capping.go` (minAllowed/maxAllowed). Each
function's docstring names the upstream function it mirrors; `vpa.updater` acts on the result.

CPU amounts are integer millicores, as upstream's `ResourceAmount` (conversions truncate). Times
are integer nanoseconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from skenario.autoscalers.vpa.config import DEFAULT_RECOMMENDER_CONFIG, RecommenderConfig
from skenario.autoscalers.vpa.histogram import (
    DEFAULT_HALF_LIFE,
    MIN_SAMPLE_WEIGHT,
    DecayingHistogram,
    HistogramOptions,
    cpu_histogram_options,
)
from skenario.core.time import DAY, MINUTE

CPU = "cpu"
# model/types.go MaxResourceAmount.
MAX_RESOURCE_AMOUNT = 10**14
# logic/recommender.go CreatePodResourceRecommender: the bounds' confidence multipliers.
UPPER_BOUND_MULTIPLIER, UPPER_BOUND_EXPONENT = 1.0, 1.0
LOWER_BOUND_MULTIPLIER, LOWER_BOUND_EXPONENT = 0.001, -2.0


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
    config: RecommenderConfig = DEFAULT_RECOMMENDER_CONFIG,
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
