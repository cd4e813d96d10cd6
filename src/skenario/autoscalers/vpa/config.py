"""The Vertical Pod Autoscaler's settings: the recommender's and the updater's flags.

Restated from kubernetes/autoscaler `vertical-pod-autoscaler` (no upstream code is copied):
`pkg/recommender/logic/recommender.go` `RecommendationConfig` and the recommender's flags, read by
`vpa.recommender`; `pkg/updater/priority` `UpdateConfig` and the updater's flags, read by
`vpa.updater`. Both with production defaults; each field names its flag. What one VPA object asks
for (update mode, container policy) is in `vpa.updater` and `vpa.recommender`. Times are integer
nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from skenario.core.time import DAY, HOUR, MINUTE


@dataclass(frozen=True, slots=True)
class RecommenderConfig:
    """The recommender's CPU settings; mirrors `RecommendationConfig` with production defaults."""

    target_percentile: float = 0.9  # --target-cpu-percentile
    lower_bound_percentile: float = 0.5
    upper_bound_percentile: float = 0.95
    safety_margin_fraction: float = 0.15  # --recommendation-margin-fraction
    pod_min_cpu_millicores: float = 25.0  # --pod-recommendation-min-cpu-millicores
    confidence_interval: int = DAY  # --confidence-interval-cpu


# The recommender's default `config`, one shared instance (it is frozen).
DEFAULT_RECOMMENDER_CONFIG = RecommenderConfig()


@dataclass(frozen=True, slots=True)
class UpdaterConfig:
    """The updater's settings; mirrors `UpdateConfig` and the updater flags, production defaults."""

    min_change_priority: float = 0.1  # DefaultUpdateThreshold
    pod_lifetime_update_threshold: int = 12 * HOUR  # --in-recommendation-bounds-eviction-lifetime-threshold
    evict_after_oom_threshold: int = 10 * MINUTE  # --evict-after-oom-threshold
    min_replicas: int = 2  # --min-replicas
    eviction_tolerance: float = 0.5  # --eviction-tolerance


# The updater's default `config`, one shared instance (it is frozen).
DEFAULT_UPDATER_CONFIG = UpdaterConfig()
