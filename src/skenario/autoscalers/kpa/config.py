"""The Knative Pod Autoscaler's settings: `config-autoscaler` and the revision's annotations, resolved.

`KPAConfig` holds the `config-autoscaler` settings (`pkg/autoscaler/config/config.go`
`defaultConfig`) and the revision's autoscaling annotations, already folded in, with upstream's
defaults, and checks them as upstream's `config.validate` and `ValidateAnnotations` do.
`resolve_metric_target` (`ResolveMetricTarget`) derives the per-pod target from it. The decider's
spec and windows are made from it in `kpa.decider` (as upstream `MakeDecider`, `MakeMetric`), the
replica bounds in `kpa.scaler`. Restated from knative/serving (no code copied). Times are integer
nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from skenario.autoscalers.kpa.windows import AggregationAlgorithm
from skenario.core.time import HOUR, SECOND

TICK_INTERVAL = 2 * SECOND
"""`tickInterval` (`scaling/multiscaler.go`): how often the decider runs."""
TARGET_MIN = 0.01
"""`autoscaling.TargetMin`: the smallest per-pod target."""
DEFAULT_TARGET_UTILIZATION = 0.7
"""`defaultTargetUtilization` (`config.go`): RPS always uses it unless the annotation overrides it."""
WINDOW_MIN = 6 * SECOND
"""`autoscaling.WindowMin`: the shortest stable window."""
WINDOW_MAX = HOUR
"""`autoscaling.WindowMax`: the longest stable window (and scale-down delay, pod retention)."""
PANIC_WINDOW_PERCENTAGE_MIN = 1.0
PANIC_WINDOW_PERCENTAGE_MAX = 100.0
PANIC_THRESHOLD_PERCENTAGE_MIN = 110.0
"""`autoscaling.PanicThresholdPercentageMin`: lower, and the autoscaler would flap in and out of panic.

Knative checks this range on the annotation only (`ValidateAnnotations`), not on the ConfigMap key."""
PANIC_THRESHOLD_PERCENTAGE_MAX = 1000.0
PROGRESS_DEADLINE_DEFAULT = 600 * SECOND
"""`deployment.ProgressDeadlineDefault` (`config-deployment`)."""

ScalingMetric = Literal["concurrency", "rps"]


class KPAConfigError(ValueError):
    """An invalid KPA setting; `field` names the `config-autoscaler` key or annotation."""

    def __init__(self, field: str, value: object, message: str) -> None:
        super().__init__(f"{field} = {value!r}: {message}")
        self.field = field
        self.value = value
        self.message = message


@dataclass(frozen=True, slots=True)
class KPAConfig:
    """KPA settings: `config-autoscaler` defaults (`pkg/autoscaler/config/config.go` `defaultConfig`).

    The revision's annotations, where set, are already folded in (`target`, `min_scale`, ...).
    As upstream, two utilisations exist: `container_concurrency_target_percentage` (the
    ConfigMap's `container-concurrency-target-percentage`, as a percentage) applies to concurrency
    only, while RPS uses a fixed 70 %; the `target-utilization-percentage` annotation
    (`target_utilization_percentage`, None = unset) overrides both.
    `container_concurrency` is the revision's hard limit (0 = unlimited); `target` is the
    `autoscaling.knative.dev/target` annotation (None = unset); `activation_scale` 0 means unset.
    `progress_deadline` is `config-deployment`'s, which bounds activation. `tick_interval` is the
    decider's period.
    """

    scaling_metric: ScalingMetric = "concurrency"
    container_concurrency: int = 0
    target: float | None = None
    container_concurrency_target_percentage: float = 70.0
    target_utilization_percentage: float | None = None
    container_concurrency_target_default: float = 100.0
    rps_target_default: float = 200.0
    target_burst_capacity: float = 211.0
    activator_capacity: float = 100.0
    stable_window: int = 60 * SECOND
    panic_window_percentage: float = 10.0
    panic_threshold_percentage: float = 200.0
    max_scale_up_rate: float = 1000.0
    max_scale_down_rate: float = 2.0
    scale_to_zero_grace_period: int = 30 * SECOND
    scale_to_zero_pod_retention_period: int = 0
    scale_down_delay: int = 0
    enable_scale_to_zero: bool = True
    initial_scale: int = 1
    allow_zero_initial_scale: bool = False
    min_scale: int = 0
    max_scale: int = 0
    activation_scale: int = 0
    reachable: bool = True
    aggregation_algorithm: AggregationAlgorithm = "linear"
    tick_interval: int = TICK_INTERVAL
    progress_deadline: int = PROGRESS_DEADLINE_DEFAULT

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Upstream's `config.validate` plus the annotation checks (`ValidateAnnotations`) that apply.

        Raises `KPAConfigError` naming the key.
        """

        def bad(field: str, value: object, message: str) -> KPAConfigError:
            return KPAConfigError(field, value, message)

        if self.scaling_metric not in ("concurrency", "rps"):
            raise bad("metric", self.scaling_metric, "must be 'concurrency' or 'rps'")
        if self.container_concurrency < 0:
            raise bad("containerConcurrency", self.container_concurrency, "must be at least 0")
        if self.target is not None and self.target < TARGET_MIN:
            raise bad("target", self.target, f"must be at least {TARGET_MIN}")
        if self.scale_to_zero_grace_period <= 0:
            raise bad("scale-to-zero-grace-period", self.scale_to_zero_grace_period, "must be positive")
        if not 0 <= self.scale_down_delay <= WINDOW_MAX:
            raise bad("scale-down-delay", self.scale_down_delay, "must be in [0s, 1h]")
        if self.scale_down_delay % SECOND:
            raise bad("scale-down-delay", self.scale_down_delay, "must be specified with at most second precision")
        if not 0 <= self.scale_to_zero_pod_retention_period <= WINDOW_MAX:
            raise bad(
                "scale-to-zero-pod-retention-period", self.scale_to_zero_pod_retention_period, "must be in [0s, 1h]"
            )
        if self.target_burst_capacity < 0 and self.target_burst_capacity != -1:
            raise bad("target-burst-capacity", self.target_burst_capacity, "must be non-negative or -1 (unlimited)")
        if not 0 < self.container_concurrency_target_percentage <= 100:
            raise bad(
                "container-concurrency-target-percentage",
                self.container_concurrency_target_percentage,
                "must be in (0, 100]",
            )
        if self.target_utilization_percentage is not None and not 1 <= self.target_utilization_percentage <= 100:
            raise bad("target-utilization-percentage", self.target_utilization_percentage, "must be in [1, 100]")
        if self.container_concurrency_target_percentage / 100 * self.container_concurrency_target_default < TARGET_MIN:
            raise bad(
                "container-concurrency-target-default",
                self.container_concurrency_target_default,
                f"with the target percentage gives a target below {TARGET_MIN}",
            )
        if self.rps_target_default < TARGET_MIN:
            raise bad("requests-per-second-target-default", self.rps_target_default, f"must be at least {TARGET_MIN}")
        if self.activator_capacity < 1:
            raise bad("activator-capacity", self.activator_capacity, "must be at least 1")
        if self.max_scale_up_rate <= 1:
            raise bad("max-scale-up-rate", self.max_scale_up_rate, "must be greater than 1.0")
        if self.max_scale_down_rate <= 1:
            raise bad("max-scale-down-rate", self.max_scale_down_rate, "must be greater than 1.0")
        if not WINDOW_MIN <= self.stable_window <= WINDOW_MAX:
            raise bad("stable-window", self.stable_window, "must be in [6s, 1h]")
        if self.stable_window % SECOND:
            raise bad("stable-window", self.stable_window, "must be specified with at most second precision")
        if not PANIC_WINDOW_PERCENTAGE_MIN <= self.panic_window_percentage <= PANIC_WINDOW_PERCENTAGE_MAX:
            raise bad("panic-window-percentage", self.panic_window_percentage, "must be in [1, 100]")
        if self.initial_scale < 0 or (self.initial_scale == 0 and not self.allow_zero_initial_scale):
            raise bad("initial-scale", self.initial_scale, "must be at least 1 (0 only with allow-zero-initial-scale)")
        if self.min_scale < 0:
            raise bad("min-scale", self.min_scale, "must be at least 0")
        if self.max_scale < 0:
            raise bad("max-scale", self.max_scale, "must be at least 0 (0 = unbounded)")
        if 0 < self.max_scale < self.min_scale:
            raise bad("max-scale", self.max_scale, f"is less than min-scale={self.min_scale}")
        if self.activation_scale:
            if self.activation_scale < 2:
                raise bad("activation-scale", self.activation_scale, "must be greater than 1")
            if self.activation_scale < self.min_scale:
                raise bad("activation-scale", self.activation_scale, f"is less than min-scale={self.min_scale}")
            if 0 < self.max_scale < self.activation_scale:
                raise bad("activation-scale", self.activation_scale, f"is greater than max-scale={self.max_scale}")
        if self.aggregation_algorithm not in ("linear", "weighted-exponential", "weightedExponential"):
            raise bad(
                "metric-aggregation-algorithm", self.aggregation_algorithm, "must be linear or weighted-exponential"
            )
        if self.tick_interval <= 0:
            raise bad("tick-interval", self.tick_interval, "must be positive")
        if self.progress_deadline <= 0:
            raise bad("progress-deadline", self.progress_deadline, "must be positive")


def resolve_metric_target(config: KPAConfig) -> tuple[float, float]:
    """`ResolveMetricTarget` (`reconciler/autoscaling/resources/target.go`): `(target, total)` per pod.

    `total` is what one pod can take: containerConcurrency (or the default 100) for concurrency,
    200 for RPS, or the `target` annotation (capped at containerConcurrency when that is set);
    `target = max(TARGET_MIN, total * utilisation)`, the utilisation being the ConfigMap's
    percentage for concurrency, 70 % for RPS, or the annotation's for either.
    """
    if config.scaling_metric == "rps":
        total = config.rps_target_default
        utilization = DEFAULT_TARGET_UTILIZATION
    else:
        total = float(config.container_concurrency) or config.container_concurrency_target_default
        utilization = config.container_concurrency_target_percentage / 100
    if config.target is not None:
        total = config.target
        if config.scaling_metric == "concurrency" and config.container_concurrency != 0:
            total = min(config.target, float(config.container_concurrency))
    if config.target_utilization_percentage is not None:
        utilization = config.target_utilization_percentage / 100
    return max(TARGET_MIN, total * utilization), total
