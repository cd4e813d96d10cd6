"""The Knative Pod Autoscaler's decider: window averages in, a desired pod count out.

`KPADecider` mirrors knative/serving `pkg/autoscaler/scaling/autoscaler.go` `autoscaler` (no code
copied). It ticks every 2 s. `scale` reads the stable and panic window averages (`kpa.windows`),
turns them into a desired pod count with the max scale-up / scale-down rates, panic mode (entered
when the panic-window demand is `panic_threshold` times the ready pods, kept for at least a stable
window, never scaling down meanwhile), activation scale and the scale-down delay, and computes the
excess burst capacity. It knows nothing of min/max/initial scale or grace periods, and it happily
returns 0 when there is no traffic: the reconciler's scaler (`kpa.scaler`) applies those.

Each valid `ScaleResult` carries the `ScaleInputs` it came from: the stable and panic averages,
the pod counts they ask for and the rule that set `DesiredPodCount` (one of `DECIDER_RULES`), the
numbers upstream's debug log prints, so a run can say why it chose 281 pods.

`make_decider_spec` resolves the settings (`kpa.config.KPAConfig`) into the numbers the decider
uses (`DeciderSpec`), as upstream `MakeDecider` (`kpa/resources/decider.go`) does, and
`make_metric_collection` makes the windows it reads, as `MakeMetric`. Times are integer
nanoseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from skenario.autoscalers.kpa.config import TICK_INTERVAL, KPAConfig, ScalingMetric, resolve_metric_target
from skenario.autoscalers.kpa.windows import BUCKET_SIZE, MaxTimeWindow, MetricCollection
from skenario.core.time import SECOND


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


def panic_window(config: KPAConfig) -> int:
    """`MakeMetric`: the stable window times the panic percentage, rounded to whole seconds, at least 1 s."""
    window = int(float(config.stable_window) * config.panic_window_percentage / 100.0)  # Go truncates here
    seconds, rest = divmod(window, SECOND)
    rounded = (seconds + (1 if 2 * rest >= SECOND else 0)) * SECOND  # Duration.Round: halves away from zero
    return max(rounded, BUCKET_SIZE)


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


DECIDER_RULES: dict[str, str] = {
    "stable-window": "the stable window's average over the target, rounded up",
    "panic-window": "panic mode: the panic window's average over the target, rounded up, above the stable one's",
    "panic-hold": "panic mode never scales down: it holds the most pods it has asked for since it began",
    "max-scale-up-rate": "limited to max-scale-up-rate times the ready pods, rounded up",
    "max-scale-down-rate": "limited to the ready pods over max-scale-down-rate, rounded down",
    "activation-scale": "raised to activation-scale, as there is demand",
    "scale-down-delay": "the largest count asked for within scale-down-delay",
}
"""The rules that can set `Scale`'s `DesiredPodCount`, in the order `Scale` applies them, by key."""


@dataclass(frozen=True, slots=True)
class ScaleInputs:
    """What one `Scale` read and worked out: the figures of upstream's debug log lines in `Scale`.

    `observed_stable` and `observed_panic` are the windows' averages (concurrency or requests per
    second, as the spec's metric); `stable_pods` and `panic_pods` are upstream's `dspc` and `dppc`,
    ceil(average / target), before the rate limits. `rule` is the key (in `DECIDER_RULES`) of the
    rule that set the result.
    """

    observed_stable: float
    observed_panic: float
    stable_pods: int
    panic_pods: int
    rule: str


@dataclass(frozen=True, slots=True)
class ScaleResult:
    """`scaling.ScaleResult`. When `scale_valid` is False the caller keeps the previous decision.

    `inputs` (not upstream's, and not compared) says what a valid result came from.
    """

    desired_pod_count: int
    excess_burst_capacity: int
    scale_valid: bool = True
    inputs: ScaleInputs | None = field(default=None, compare=False)


INVALID_SCALE_RESULT = ScaleResult(0, 0, False)
"""`invalidSR`: `Scale` had nothing to decide on: its metric client answered `ErrNoData` (no sample
in the stable window yet) or the ready pods could not be counted."""


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
        stable_rule = _limit_rule(dspc, max_scale_down, max_scale_up, "stable-window")
        panic_rule = _limit_rule(dppc, max_scale_down, max_scale_up, "panic-window")
        if spec.activation_scale > 1:
            if dspc > 0 and spec.activation_scale > desired_stable:
                desired_stable = spec.activation_scale
                stable_rule = "activation-scale"
            if dppc > 0 and spec.activation_scale > desired_panic:
                desired_panic = spec.activation_scale
                panic_rule = "activation-scale"

        over_threshold = dppc / ready >= spec.panic_threshold
        if over_threshold:
            self.panic_time = now  # enter panic, or extend it
        elif self.panic_time is not None and self.panic_time + spec.stable_window < now:
            self.panic_time = None  # the surge has made its way into the stable window
            self.max_panic_pods = 0

        desired, rule = desired_stable, stable_rule
        if self.panic_time is not None:
            # Provision for the larger of the two, and never scale down while panicking.
            if desired_panic > desired:
                desired, rule = desired_panic, panic_rule
            if self.max_panic_pods > desired:
                rule = "panic-hold"
            self.max_panic_pods = max(self.max_panic_pods, desired)
            desired = self.max_panic_pods

        if spec.reachable and self._delay_window is not None:
            self._delay_window.record(now, desired)
            delayed = self._delay_window.current()
            if delayed != desired:
                desired, rule = delayed, "scale-down-delay"

        # Excess burst capacity: spare capacity beyond the target burst capacity, from the panic value.
        if spec.target_burst_capacity == 0:
            ebc = 0
        elif spec.target_burst_capacity > 0:
            ebc = math.floor(ready_pods * spec.total_value - spec.target_burst_capacity - observed_panic)
        else:
            ebc = -1
        return ScaleResult(desired, ebc, True, ScaleInputs(observed_stable, observed_panic, dspc, dppc, rule))


def _limit_rule(pods: int, max_scale_down: int, max_scale_up: int, rule: str) -> str:
    """The rule that set `min(max(pods, max_scale_down), max_scale_up)`: a rate limit, or `rule` itself."""
    if pods > max_scale_up:
        return "max-scale-up-rate"
    if pods < max_scale_down:
        return "max-scale-down-rate"
    return rule
