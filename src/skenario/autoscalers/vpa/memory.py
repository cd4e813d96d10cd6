"""The VPA recommender's memory pipeline: one peak per container per interval, the OOM bump, the estimate.

Restated from kubernetes/autoscaler `vertical-pod-autoscaler` (no upstream code is copied):
`pkg/recommender/model/container.go` (`addMemorySample`, `RecordOOM`),
`aggregate_container_state.go` (peaks into a decaying histogram with weight 1),
`aggregations_config.go` (buckets, intervals, the OOM bump's defaults) and `logic/recommender.go`
(the same percentile, margin and confidence chain as CPU, with a 250Mi pod minimum).

With upstream's 24 h aggregation interval each pod adds about one value, its largest working set,
per day; a run of hours feeds the histogram one peak per pod. `memory_aggregation_interval` (a
recommender flag) scales that down. Amounts are integer bytes; times integer ns.
"""

from __future__ import annotations

from dataclasses import dataclass

from skenario.autoscalers.vpa.config import DEFAULT_RECOMMENDER_CONFIG, RecommenderConfig
from skenario.autoscalers.vpa.histogram import (
    BUCKET_SIZE_GROWTH,
    EPSILON,
    DecayingHistogram,
    ExponentialHistogramOptions,
)
from skenario.autoscalers.vpa.recommender import (
    LOWER_BOUND_EXPONENT,
    LOWER_BOUND_MULTIPLIER,
    UPPER_BOUND_EXPONENT,
    UPPER_BOUND_MULTIPLIER,
    AggregateContainerState,
    ContainerResourcePolicy,
    Recommendation,
    cap_to_policy,
    confidence_multiplier_estimate,
    get_confidence,
    margin_estimate,
    min_resource_estimate,
    resource_amount_from_float,
    scale_resource,
)
from skenario.core.time import DAY

MEMORY = "memory"
MI = 1024 * 1024
# aggregations_config.go memoryHistogramOptions: first bucket 1e7 bytes, max 1e12 bytes.
MEMORY_FIRST_BUCKET_BYTES = 1e7
MEMORY_MAX_BYTES = 1e12
MEMORY_SAMPLE_WEIGHT = 1.0  # aggregate_container_state.go addMemorySample


def memory_histogram_options() -> ExponentialHistogramOptions:
    """The memory bucket scheme of `AggregationsConfig.memoryHistogramOptions`, in bytes."""
    return ExponentialHistogramOptions(MEMORY_MAX_BYTES, MEMORY_FIRST_BUCKET_BYTES, 1.0 + BUCKET_SIZE_GROWTH, EPSILON)


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """The recommender's memory flags, with upstream's defaults."""

    aggregation_interval: int = DAY  # --memory-aggregation-interval
    half_life: int = DAY  # --memory-histogram-decay-half-life
    oom_bump_up_ratio: float = 1.2  # --oom-bump-up-ratio (DefaultOOMBumpUpRatio)
    oom_min_bump_up_bytes: int = 100 * MI  # --oom-min-bump-up-bytes (the comment says 100MB; it is 100Mi)
    pod_min_memory_mb: float = 250.0  # --pod-recommendation-min-memory-mb (MiB, as upstream multiplies by 1024²)


DEFAULT_MEMORY_CONFIG = MemoryConfig()


class MemoryPeaks:
    """The memory histogram of one container name: every pod's peaks go in, decaying with age."""

    __slots__ = ("histogram",)

    def __init__(self, config: MemoryConfig = DEFAULT_MEMORY_CONFIG) -> None:
        self.histogram = DecayingHistogram(memory_histogram_options(), config.half_life)

    def add(self, usage: int, at: int) -> None:
        self.histogram.add_sample(float(usage), MEMORY_SAMPLE_WEIGHT, at)

    def subtract(self, usage: int, at: int) -> None:
        self.histogram.subtract_sample(float(usage), MEMORY_SAMPLE_WEIGHT, at)


class ContainerMemory:
    """One pod's container as the recommender keeps it: its current interval's peak; mirrors `ContainerState`."""

    __slots__ = ("_config", "_peaks", "last_sample_start", "memory_peak", "oom_peak", "window_end")

    def __init__(self, peaks: MemoryPeaks, config: MemoryConfig = DEFAULT_MEMORY_CONFIG) -> None:
        self._peaks = peaks
        self._config = config
        self.window_end: int | None = None
        self.memory_peak = 0
        self.oom_peak = 0
        self.last_sample_start: int | None = None

    def max_peak(self) -> int:
        """`GetMaxMemoryPeak`: the interval's peak, usage or OOM estimate."""
        return max(self.memory_peak, self.oom_peak)

    def add_sample(self, usage: int, at: int, *, oom: bool = False) -> bool:
        """Mirrors `addMemorySample`: keep one peak per aggregation interval in the histogram.

        A sample inside the current window that beats its peak replaces it (the old one is
        subtracted); one at or after the window's end moves the window on by whole intervals and
        starts a new peak. Samples out of order are dropped, OOM ones never. Peaks are recorded at
        the window's end, which is where their decay counts from."""
        if usage < 0 or (not oom and self.last_sample_start is not None and at < self.last_sample_start):
            return False
        self.last_sample_start = at
        if self.window_end is None:
            self.window_end = at
        add_new_peak = False
        if at < self.window_end:
            old = self.max_peak()
            if old != 0 and usage > old:
                self._peaks.subtract(old, self.window_end)
                add_new_peak = True
        else:
            interval = self._config.aggregation_interval
            shift = (at - self.window_end) // interval * interval + interval
            self.window_end += shift
            self.memory_peak = 0
            self.oom_peak = 0
            add_new_peak = True
        if add_new_peak:
            self._peaks.add(usage, self.window_end)
            if oom:
                self.oom_peak = usage
            else:
                self.memory_peak = usage
        return True

    def record_oom(self, at: int, requested: int) -> bool:
        """Mirrors `RecordOOM`: an OOM kill becomes a sample of what the container must have needed.

        `max(used + 100Mi, used x 1.2)` where `used` is the larger of the memory request and this
        interval's usage peak (not an earlier OOM's estimate, so repeated OOMs do not compound).
        An OOM older than one interval before the window's end is discarded."""
        config = self._config
        if self.window_end is not None and at < self.window_end - config.aggregation_interval:
            return False
        used = max(requested, self.memory_peak)
        needed = max(used + config.oom_min_bump_up_bytes, scale_resource(used, config.oom_bump_up_ratio))
        return self.add_sample(needed, at, oom=True)


def pod_min_memory(pod_min_memory_mb: float, containers: int = 1) -> int:
    """Mirrors the memory half of the split in `GetRecommendedPodResources`: MiB to bytes, shared evenly."""
    if containers < 1:
        raise ValueError("a pod has at least one container")
    return scale_resource(resource_amount_from_float(pod_min_memory_mb * 1024 * 1024), 1.0 / containers)


def recommend_memory(
    peaks: MemoryPeaks,
    state: AggregateContainerState,
    config: RecommenderConfig = DEFAULT_RECOMMENDER_CONFIG,
    memory: MemoryConfig = DEFAULT_MEMORY_CONFIG,
    *,
    containers: int = 1,
    policy: ContainerResourcePolicy | None = None,
) -> Recommendation:
    """A container's memory recommendation in bytes; the chain of `CreatePodResourceRecommender`.

    Target / lower / upper are the peaks' 0.9 / 0.5 / 0.95 percentiles plus the 15% margin, the
    bounds scaled by the confidence (from `state`, the CPU history: upstream counts CPU samples
    only), all at least the pod minimum (250Mi split over `containers`), then capped by the policy.
    """
    minimum = pod_min_memory(memory.pod_min_memory_mb, containers)
    confidence = get_confidence(state, config.confidence_interval)
    margin = config.safety_margin_fraction

    def estimate(percentile: float) -> int:
        return margin_estimate(resource_amount_from_float(peaks.histogram.percentile(percentile)), margin)

    target = estimate(config.target_percentile)
    lower = confidence_multiplier_estimate(
        estimate(config.lower_bound_percentile), LOWER_BOUND_MULTIPLIER, LOWER_BOUND_EXPONENT, confidence
    )
    upper = confidence_multiplier_estimate(
        estimate(config.upper_bound_percentile), UPPER_BOUND_MULTIPLIER, UPPER_BOUND_EXPONENT, confidence
    )
    target = min_resource_estimate(target, minimum)
    uncapped = Recommendation(
        target, min_resource_estimate(lower, minimum), min_resource_estimate(upper, minimum), target
    )
    return cap_to_policy(uncapped, policy)
