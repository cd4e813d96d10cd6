"""The Vertical Pod Autoscaler as pure calculators: the recommender and the updater's decision.

The recommender (`vpa_recommender`, on the decaying histogram in `vpa_histogram`) turns CPU
samples into a capped recommendation; the updater (`vpa_updater`) decides which pods to evict to
apply it. Each module names the kubernetes/autoscaler `vertical-pod-autoscaler` files it
restates. Their public names are re-exported here, so `from skenario.autoscalers.vpa import ...`
reaches all of them.
"""

from __future__ import annotations

from skenario.autoscalers.vpa_recommender import (
    CPU,
    LOWER_BOUND_EXPONENT,
    LOWER_BOUND_MULTIPLIER,
    MAX_RESOURCE_AMOUNT,
    UPPER_BOUND_EXPONENT,
    UPPER_BOUND_MULTIPLIER,
    AggregateContainerState,
    ContainerResourcePolicy,
    Recommendation,
    RecommendedResources,
    RecommenderConfig,
    cap_to_policy,
    confidence_multiplier_estimate,
    get_confidence,
    margin_estimate,
    min_resource_estimate,
    percentile_estimate,
    pod_min_cpu,
    recommend,
    resource_amount_from_float,
    scale_resource,
)
from skenario.autoscalers.vpa_updater import (
    DEFAULT_UPDATE_MODE,
    EvictionRestriction,
    PodPriority,
    PodState,
    UpdateMode,
    UpdaterConfig,
    get_update_priority,
    has_quick_oom,
    is_update_admitted,
    pods_to_evict,
    request_at_creation,
    sort_by_update_priority,
)

__all__ = [
    "CPU",
    "DEFAULT_UPDATE_MODE",
    "LOWER_BOUND_EXPONENT",
    "LOWER_BOUND_MULTIPLIER",
    "MAX_RESOURCE_AMOUNT",
    "UPPER_BOUND_EXPONENT",
    "UPPER_BOUND_MULTIPLIER",
    "AggregateContainerState",
    "ContainerResourcePolicy",
    "EvictionRestriction",
    "PodPriority",
    "PodState",
    "Recommendation",
    "RecommendedResources",
    "RecommenderConfig",
    "UpdateMode",
    "UpdaterConfig",
    "cap_to_policy",
    "confidence_multiplier_estimate",
    "get_confidence",
    "get_update_priority",
    "has_quick_oom",
    "is_update_admitted",
    "margin_estimate",
    "min_resource_estimate",
    "percentile_estimate",
    "pod_min_cpu",
    "pods_to_evict",
    "recommend",
    "request_at_creation",
    "resource_amount_from_float",
    "scale_resource",
    "sort_by_update_priority",
]
