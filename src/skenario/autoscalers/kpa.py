"""The Knative Pod Autoscaler (KPA) as pure calculators, restated from knative/serving (no code copied).

Upstream splits the KPA in two, and so does this module:

1. The **decider** (`KPADecider`, mirroring `pkg/autoscaler/scaling/autoscaler.go` `autoscaler`)
   ticks every 2 s. `scale` reads the stable and panic window averages (`kpa_windows`), turns them
   into a desired pod count with the max scale-up / scale-down rates, panic mode (entered when the
   panic-window demand is `panic_threshold` times the ready pods, kept for at least a stable
   window, never scaling down meanwhile), activation scale and the scale-down delay, and computes
   the excess burst capacity. It knows nothing of min/max/initial scale or grace periods, and it
   happily returns 0 when there is no traffic.
2. The **reconciler's scaler** (`reconcile_scale`, mirroring `pkg/reconciler/autoscaling/kpa/scaler.go`
   `scaler.scale` and `handleScaleToZero`) turns the decider's number into the replicas to set:
   min/max scale, initial scale until it is first reached, and scale to zero. A desired 0 is held
   at 1 while the PodAutoscaler has been Active for less than a stable window; after that the PA is
   marked Inactive (the caller's job, `compute_active_state`) and only once the activator is in the
   path and the PA has been Inactive for `max(scale-to-zero-grace-period, pod retention)` (or the
   SKS has proxied for the grace period) may replicas go to 0. **The grace period is honoured here,
   by the caller of the decider, never by the decider.**

`KPAConfig` holds the `config-autoscaler` settings and the revision's autoscaling annotations,
already resolved, with upstream's defaults; `make_decider_spec` resolves it into the numbers the
decider uses (`DeciderSpec`), as upstream `MakeDecider` does. Times are integer nanoseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from skenario.autoscalers.kpa_windows import BUCKET_SIZE, AggregationAlgorithm, MaxTimeWindow, MetricCollection
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
ACTIVATION_TIMEOUT_BUFFER = 30 * SECOND
"""`activationTimeoutBuffer` (`kpa/scaler.go`), added to the progress deadline."""
PROGRESS_DEADLINE_DEFAULT = 600 * SECOND
"""`deployment.ProgressDeadlineDefault` (`config-deployment`)."""
SCALE_UNKNOWN = -1
"""`scaleUnknown`: no decision yet (the decider has no metrics)."""
PROXY_REQUEUE = 3 * SECOND
"""`handleScaleToZero` re-enqueues an idle Active PA after this when the SKS already proxies."""

ScalingMetric = Literal["concurrency", "rps"]


class KPAConfigError(ValueError):
    """An invalid KPA setting; `field` names the `config-autoscaler` key or annotation."""

    def __init__(self, field: str, value: object, message: str) -> None:
        super().__init__(f"{field} = {value!r}: {message}")
        self.field = field
        self.value = value


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


def panic_window(config: KPAConfig) -> int:
    """`MakeMetric`: the stable window times the panic percentage, rounded to whole seconds, at least 1 s."""
    window = int(float(config.stable_window) * config.panic_window_percentage / 100.0)  # Go truncates here
    seconds, rest = divmod(window, SECOND)
    rounded = (seconds + (1 if 2 * rest >= SECOND else 0)) * SECOND  # Duration.Round: halves away from zero
    return max(rounded, BUCKET_SIZE)


@dataclass(frozen=True, slots=True)
class DeciderSpec:
    """`scaling.DeciderSpec`: the resolved parameters of one revision's decider."""

    target_value: float
    total_value: float
    target_burst_capacity: float = 211.0
    panic_threshold: float = 2.0
    max_scale_up_rate: float = 1000.0
    max_scale_down_rate: float = 2.0
    stable_window: int = 60 * SECOND
    scale_down_delay: int = 0
    scaling_metric: ScalingMetric = "concurrency"
    activator_capacity: float = 100.0
    initial_scale: int = 1
    reachable: bool = True
    activation_scale: int = 0


def make_decider_spec(config: KPAConfig) -> DeciderSpec:
    """`MakeDecider` (`kpa/resources/decider.go`)."""
    target, total = resolve_metric_target(config)
    return DeciderSpec(
        target_value=target,
        total_value=total,
        target_burst_capacity=config.target_burst_capacity,
        panic_threshold=config.panic_threshold_percentage / 100.0,
        max_scale_up_rate=config.max_scale_up_rate,
        max_scale_down_rate=config.max_scale_down_rate,
        stable_window=config.stable_window,
        scale_down_delay=config.scale_down_delay,
        scaling_metric=config.scaling_metric,
        activator_capacity=config.activator_capacity,
        initial_scale=config.initial_scale,
        reachable=config.reachable,
        activation_scale=config.activation_scale,
    )


def make_metric_collection(config: KPAConfig) -> MetricCollection:
    """`MakeMetric` + `newCollection`: the windows the decider reads, scraped unless TBC is -1."""
    return MetricCollection(
        config.stable_window,
        panic_window(config),
        config.aggregation_algorithm,
        scrape_target=config.target_burst_capacity != -1,
    )


def initial_excess_burst_capacity(spec: DeciderSpec) -> int:
    """The EBC a new decider reports before its first tick (`MultiScaler.createScaler`)."""
    if spec.target_burst_capacity in (-1, 0):
        return int(spec.target_burst_capacity)
    return int(spec.initial_scale * spec.total_value - spec.target_burst_capacity)


@dataclass(frozen=True, slots=True)
class ScaleResult:
    """`scaling.ScaleResult`. When `scale_valid` is False the caller keeps the previous decision."""

    desired_pod_count: int
    excess_burst_capacity: int
    scale_valid: bool = True


INVALID_SCALE_RESULT = ScaleResult(0, 0, False)
"""`invalidSR`: no metrics yet (upstream `ErrNoData`)."""


class MetricClient(Protocol):
    """What the decider reads (`metrics.MetricClient`): None means no data yet."""

    def stable_and_panic_concurrency(self, now: int) -> tuple[float, float] | None: ...

    def stable_and_panic_rps(self, now: int) -> tuple[float, float] | None: ...


M = TypeVar("M", bound=MetricClient)


class KPADecider(Generic[M]):
    """One revision's decider: `autoscaler` in `pkg/autoscaler/scaling/autoscaler.go`.

    A decider created while more than one pod is ready starts in panic mode with
    `max_panic_pods` = those pods (`newAutoscaler`), so a restart with no metric history does not
    scale down. `panic_time` is None outside panic mode.
    """

    __slots__ = ("_delay_window", "_spec", "max_panic_pods", "metrics", "panic_time")

    def __init__(
        self, spec: DeciderSpec, metrics: M, *, now: int, ready_pods: int, tick_interval: int = TICK_INTERVAL
    ) -> None:
        """`New` / `newAutoscaler`: the delay window exists only when the scale-down delay is positive."""
        self._spec = spec
        self.metrics = metrics
        self._delay_window = MaxTimeWindow(spec.scale_down_delay, tick_interval) if spec.scale_down_delay > 0 else None
        self.panic_time: int | None = now if ready_pods > 1 else None
        self.max_panic_pods = ready_pods

    @staticmethod
    def from_config(config: KPAConfig, *, now: int, ready_pods: int) -> KPADecider[MetricCollection]:
        """A decider with its own stable and panic windows, built from the settings (`MakeDecider`, `MakeMetric`)."""
        return KPADecider(
            make_decider_spec(config),
            make_metric_collection(config),
            now=now,
            ready_pods=ready_pods,
            tick_interval=config.tick_interval,
        )

    @property
    def spec(self) -> DeciderSpec:
        return self._spec

    @property
    def in_panic(self) -> bool:
        return self.panic_time is not None

    def update(self, spec: DeciderSpec) -> None:
        """`Update`: new parameters. As upstream, the scale-down-delay window made at creation is kept."""
        self._spec = spec

    def scale(self, now: int, ready_pods: int) -> ScaleResult:
        """`Scale`: read the windows at `now` and decide; invalid when there is no data yet."""
        if self._spec.scaling_metric == "rps":
            observed = self.metrics.stable_and_panic_rps(now)
        else:
            observed = self.metrics.stable_and_panic_concurrency(now)
        if observed is None:
            return INVALID_SCALE_RESULT
        return self.scale_observed(now, ready_pods, observed[0], observed[1])

    def scale_observed(self, now: int, ready_pods: int, observed_stable: float, observed_panic: float) -> ScaleResult:
        """The body of `Scale` once the stable and panic averages are known. Updates the panic state."""
        spec = self._spec
        ready = max(1.0, float(ready_pods))  # zero ready pods count as one
        # Rate limits; ceil/floor so a small rate can still add or remove a pod.
        max_scale_up = math.ceil(spec.max_scale_up_rate * ready)
        max_scale_down = math.floor(ready / spec.max_scale_down_rate) if spec.reachable else 0
        dspc = math.ceil(observed_stable / spec.target_value)
        dppc = math.ceil(observed_panic / spec.target_value)
        desired_stable = min(max(dspc, max_scale_down), max_scale_up)
        desired_panic = min(max(dppc, max_scale_down), max_scale_up)
        if spec.activation_scale > 1:
            if dspc > 0 and spec.activation_scale > desired_stable:
                desired_stable = spec.activation_scale
            if dppc > 0 and spec.activation_scale > desired_panic:
                desired_panic = spec.activation_scale

        over_threshold = dppc / ready >= spec.panic_threshold
        if over_threshold:
            self.panic_time = now  # enter panic, or extend it
        elif self.panic_time is not None and self.panic_time + spec.stable_window < now:
            self.panic_time = None  # the surge has made its way into the stable window
            self.max_panic_pods = 0

        desired = desired_stable
        if self.panic_time is not None:
            # Provision for the larger of the two, and never scale down while panicking.
            desired = max(desired, desired_panic)
            self.max_panic_pods = max(self.max_panic_pods, desired)
            desired = self.max_panic_pods

        if spec.reachable and self._delay_window is not None:
            self._delay_window.record(now, desired)
            desired = self._delay_window.current()

        # Excess burst capacity: spare capacity beyond the target burst capacity, from the panic value.
        if spec.target_burst_capacity == 0:
            ebc = 0
        elif spec.target_burst_capacity > 0:
            ebc = math.floor(ready_pods * spec.total_value - spec.target_burst_capacity - observed_panic)
        else:
            ebc = -1
        return ScaleResult(desired, ebc, True)
