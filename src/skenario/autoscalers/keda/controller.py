"""KEDA's operator for one ScaledObject: the HPA it makes, the poll that scales to and from zero, the metrics it serves.

As upstream, a ScaledObject runs as two controllers on the same clock:

- the HPA KEDA creates (`newHPAForScaledObject`, controllers/keda/hpa.go: `hpa_spec`), run by the same HPA
  controller as any other, scaling between max(minReplicaCount, 1) and maxReplicaCount on the triggers'
  External metrics, which it asks KEDA's metrics adapter for at each sync (`_serve`: a fresh measurement,
  or the last poll's with `useCachedMetrics`, with the fallback);
- the operator's scale loop (`startScaleLoop`, pkg/scaling/scale_handler.go), every `pollingInterval` at a
  phase of its own: it measures every trigger (`getScaledObjectState`: the ScaledObject is active when any
  trigger is, or when its fallback is on, or always when every trigger is cpu or memory; with
  `scalingModifiers`, when the composite metric is above `activationTarget`) and hands that to
  `request_scale`, which alone moves the target to and from zero (or idle).

Each poll is recorded (`decisions`, a `KedaPoll` each); the HPA's syncs are recorded as an HPA's, under
`<name>/hpa` (`parts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import NamedTuple, Protocol

from skenario.autoscalers.base import MetricsSource, PodLister, Scaler, Timing
from skenario.autoscalers.hpa.behavior import Behavior
from skenario.autoscalers.hpa.config import DEFAULT_CONTROLLER_CONFIG, HPAControllerConfig
from skenario.autoscalers.hpa.controller import HorizontalPodAutoscaler, HPASpec
from skenario.autoscalers.hpa.types import AverageValueTarget, ExternalMetricSource, MetricSpec, ValueTarget
from skenario.autoscalers.keda.executor import ExecutorSpec, request_scale
from skenario.autoscalers.keda.fallback import Fallback, exceeded, fallback_value
from skenario.autoscalers.keda.formula import Formula, FormulaError
from skenario.autoscalers.keda.scalers import AVERAGE_VALUE, KedaSource, ScalerError, metric_target
from skenario.autoscalers.keda.scalers import Scaler as TriggerScaler
from skenario.core.time import SECOND

COMPOSITE_METRIC = "composite-metric"
"""`kedav1alpha1.CompositeMetricName`: the one External metric of a ScaledObject with scalingModifiers."""
DEFAULT_POLLING_INTERVAL = 30 * SECOND
DEFAULT_MAX_REPLICAS = 100
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
"""The wall-clock time a run starts at unless the scenario says (a Monday, midnight UTC): what cron triggers read."""


class KedaContext(Timing, PodLister, MetricsSource, Scaler, KedaSource, Protocol):
    """What KEDA reaches: the HPA's view, and the stream (its lag per partition) and samples its scalers read."""


@dataclass(frozen=True)
class ScalingModifiers:
    """`advanced.scalingModifiers`: the formula over the triggers' names, its target and activation target."""

    formula: Formula
    target: float
    activation_target: float = 0.0
    metric_type: str = AVERAGE_VALUE


@dataclass(frozen=True)
class ScaledObjectSpec:
    """A ScaledObject as KEDA's operator uses it (times in ns)."""

    name: str
    scalers: tuple[TriggerScaler, ...]
    executor: ExecutorSpec = field(default_factory=ExecutorSpec)
    polling_interval: int = DEFAULT_POLLING_INTERVAL
    max_replicas: int = DEFAULT_MAX_REPLICAS
    fallback: Fallback | None = None
    modifiers: ScalingModifiers | None = None
    behavior: Behavior | None = None
    cached: frozenset[int] = frozenset()  # indexes of the triggers with useCachedMetrics
    paused: bool = False  # autoscaling.keda.sh/paused: neither KEDA nor its HPA scales
    paused_replicas: int | None = None  # autoscaling.keda.sh/paused-replicas: the target is held there
    epoch: datetime = EPOCH  # the wall-clock time of the run's start
    hpa_config_name: str | None = None  # advanced.horizontalPodAutoscalerConfig.name

    @property
    def hpa_name(self) -> str:
        """`getHPAName`: advanced.horizontalPodAutoscalerConfig.name, else keda-hpa-<ScaledObject's name>."""
        return self.hpa_config_name or f"keda-hpa-{self.name}"


def hpa_spec(spec: ScaledObjectSpec) -> HPASpec:
    """The HPA KEDA makes of the ScaledObject (`newHPAForScaledObject`, `getScaledObjectMetricSpecs`): from
    max(minReplicaCount, 1) to maxReplicaCount, one metric per trigger sorted by type (a stable sort here),
    or the Resource ones and `composite-metric` with scalingModifiers, and the ScaledObject's behavior."""
    metrics: list[MetricSpec] = [scaler.metric_spec() for scaler in spec.scalers]
    if spec.modifiers is not None:
        modifiers = spec.modifiers
        composite = ExternalMetricSource(COMPOSITE_METRIC, metric_target(modifiers.metric_type, modifiers.target))
        metrics = [m for m in metrics if not isinstance(m, ExternalMetricSource)] + [composite]
    metrics.sort(key=_source_type)
    minimum = spec.executor.min_replicas or 0
    return HPASpec(
        max_replicas=spec.max_replicas,
        min_replicas=minimum if minimum > 0 else 1,
        metrics=tuple(metrics),
        behavior=spec.behavior,
    )


def _source_type(metric: MetricSpec) -> str:
    """The metric's `MetricSourceType`, which KEDA sorts the HPA's metrics by."""
    return type(metric).__name__.removesuffix("MetricSource")


class Fetched(NamedTuple):
    """One trigger fetched (`GetMetricsAndActivityForScaler`, `GetMetricsWithFallback`): its metric in milli-units
    (None: none to give), whether it is active, its error (None: none, or covered by the fallback), and whether
    the fallback stood in."""

    milli: int | None
    active: bool
    failed: str | None
    fell_back: bool


@dataclass
class KedaPoll:
    """One poll of the operator: what each trigger measured (by metric name; a string: its error), whether the
    ScaledObject was active, and what `RequestScale` did: its branch (`action`), the Active condition's reason
    (`condition`), the replicas it set (`desired`; None: left alone) and why, in words (`reason`)."""

    at: int
    current: int
    active: bool
    error: bool
    action: str
    condition: str
    desired: int | None
    reason: str
    triggers: dict[str, float | str | None] = field(default_factory=dict)
    composite: float | None = None
    fallback: list[str] = field(default_factory=list)
    last_active: int | None = None
    cooldown: int = 0


def _reason(action: str, current: int, desired: int | None, active_triggers: list[str]) -> str:
    """A poll's outcome in words."""
    moved = f": {current} -> {desired}" if desired is not None and desired != current else ""
    if action == "activated":
        return f"activated by {', '.join(active_triggers) or 'the forced activation'}{moved}"
    if action == "active":
        return f"active ({', '.join(active_triggers) or 'forced'}): the HPA scales"
    if action == "cooling down":
        return "no trigger active: cooling down"
    if action == "deactivated":
        return f"no trigger active for the cooldown: deactivated{moved}"
    if action == "to idleReplicaCount":
        return f"no trigger active for the cooldown: to idleReplicaCount{moved}"
    if action == "raised to minReplicaCount":
        return f"not active, below minReplicaCount{moved}"
    return action


class KedaScaledObject:
    """A ScaledObject on one workload: KEDA's operator and the HPA it made. Start it with a context."""

    def __init__(self, spec: ScaledObjectSpec, config: HPAControllerConfig = DEFAULT_CONTROLLER_CONFIG) -> None:
        self.spec = spec
        self.hpa = HorizontalPodAutoscaler(hpa_spec(spec), config, external_metrics=self._serve)
        self.decisions: list[KedaPoll] = []
        self.parts = {"hpa": self.hpa}  # its HPA's decisions, recorded under <name>/hpa
        self._context: KedaContext | None = None
        self._created = 0
        self._last_active: int | None = None
        self._failures: dict[str, int] = {}  # numberOfFailures, by metric name
        self._cache: dict[str, int | None] = {}  # the last poll's value of each useCachedMetrics trigger (milli)
        self._names = {scaler.metric_spec().name: scaler for scaler in spec.scalers if scaler.external}

    @property
    def max_replicas(self) -> int:
        return self.spec.max_replicas

    def start(self, context: KedaContext) -> None:
        """The ScaledObject is created now: its HPA starts syncing, and the operator polls at a phase of its own."""
        self._context = context
        self._created = context.clock.now()
        spec = self.spec
        if spec.paused_replicas is not None:
            context.scale_to(spec.paused_replicas)
        if spec.paused or spec.paused_replicas is not None:
            return  # KEDA removes the HPA and does not poll while paused
        self.hpa.start(context)
        context.clock.call_later(context.phase("poll", spec.polling_interval), self._poll)

    # -- the scale loop ------------------------------------------------------------------------

    def _poll(self) -> None:
        context = self._context
        assert context is not None
        clock = context.clock
        now = clock.now()
        record = self.poll_once(now)
        self.decisions.append(record)
        clock.call_later(self.spec.polling_interval, self._poll)

    def poll_once(self, now: int) -> KedaPoll:
        """`checkScalers` once: measure the triggers, then `RequestScale`."""
        context = self._context
        assert context is not None
        spec = self.spec
        current = context.desired
        active = error = False
        triggers: dict[str, float | str | None] = {}
        active_triggers: list[str] = []
        fetched = self._fetch_all(current)
        for name, scaler, got in fetched:
            if scaler.index in spec.cached:
                self._cache[name] = got.milli if got.failed is None else None
            triggers[name] = got.failed if got.failed is not None else (None if got.milli is None else got.milli / 1000)
            if got.failed is not None:
                error = True
            elif got.active or got.fell_back:
                active = True
                active_triggers.append(name)
        falling_back = [name for name, _, got in fetched if got.fell_back]
        composite: float | None = None
        modifiers = spec.modifiers
        if modifiers is not None:
            active = False
            composite = self._composite(fetched, current)
            if not error and composite is not None:
                active = composite > modifiers.activation_target
            active_triggers = [COMPOSITE_METRIC] if active else []
        if spec.scalers and all(not scaler.external for scaler in spec.scalers) and not error:
            active = True  # only cpu and memory: always active, never to zero
            active_triggers = ["cpu and memory triggers only"]
        result = request_scale(
            spec.executor,
            current=current,
            active=active,
            error=error,
            last_active=self._last_active,
            created=self._created,
            now=now,
        )
        self._last_active = result.last_active
        if result.replicas is not None and result.replicas != current:
            context.scale_to(result.replicas)
        return KedaPoll(
            now,
            current,
            active,
            error,
            result.action,
            result.reason,
            result.replicas,
            _reason(result.action, current, result.replicas, active_triggers),
            triggers,
            composite,
            falling_back,
            self._last_active,
            spec.executor.cooldown,
        )

    def _fetch_all(self, current: int) -> list[tuple[str, TriggerScaler, Fetched]]:
        """Every External trigger fetched now, by metric name."""
        return [(name, scaler, self._fetch(scaler, name, current)) for name, scaler in self._names.items()]

    def _fetch(self, scaler: TriggerScaler, name: str, current: int) -> Fetched:
        """`GetMetricsAndActivityForScaler` then `GetMetricsWithFallback`: the metric (milli-units; None when it
        failed with no fallback value), whether the scaler is active, its error (None: none, or covered by
        the fallback), and whether the fallback stood in."""
        context = self._context
        assert context is not None
        spec = self.spec
        at = spec.epoch + timedelta(microseconds=context.clock.now() // 1000)
        try:
            value, active = scaler.measure(context, at)
        except ScalerError as exc:
            fallback = spec.fallback
            if fallback is None:
                return Fetched(None, False, str(exc), False)
            failures = self._failures[name] = self._failures.get(name, 0) + 1
            if not exceeded(fallback, failures):
                return Fetched(None, False, str(exc), False)
            if fallback.behavior == "scalingModifiers":
                return Fetched(None, False, None, False)  # a placeholder the formula reads as nil; not a fallback
            target = scaler.metric_spec().target
            ready: int | None = None
            if isinstance(target, ValueTarget):
                milli_target, ready = target.value, sum(1 for pod in context.pods() if pod.ready)
            else:
                milli_target = target.average_value if isinstance(target, AverageValueTarget) else 0
            milli = fallback_value(fallback, milli_target / 1000, current, ready)
            if milli is None:
                return Fetched(None, False, "error performing fallback", False)
            return Fetched(milli, False, None, True)
        if spec.fallback is not None:
            self._failures[name] = 0
        return Fetched(int(value * 1000), active, None, False)

    def _composite(self, fetched: list[tuple[str, TriggerScaler, Fetched]], current: int) -> float | None:
        """`HandleScalingModifiers`: the formula over the named triggers' values (nil where a trigger gave none);
        with the fallback on (not of the scalingModifiers behavior), the first fallback metric instead. None
        when the formula fails."""
        modifiers = self.spec.modifiers
        assert modifiers is not None
        fallback = self.spec.fallback
        values = {
            scaler.name: None if got.milli is None else got.milli / 1000
            for _, scaler, got in fetched
            if scaler.name is not None
        }
        if any(got.fell_back for _, _, got in fetched) and fallback is not None:
            milli = fallback_value(fallback, modifiers.target, current)
            return None if milli is None else milli / 1000
        try:
            result = modifiers.formula.evaluate(values)
        except FormulaError:
            return None
        if result is None:
            if fallback is None:
                return None
            return fallback.replicas * modifiers.target
        return result

    # -- the metrics adapter -------------------------------------------------------------------

    def _serve(self, name: str) -> int | None:
        """What KEDA's metrics adapter answers the HPA for External metric `name` (milli-units; None: an error):
        `GetScaledObjectMetrics`, measuring the trigger now unless it uses cached metrics."""
        context = self._context
        assert context is not None
        current = context.desired
        if name == COMPOSITE_METRIC and self.spec.modifiers is not None:
            composite = self._composite(self._fetch_all(current), current)
            return None if composite is None else int(composite * 1000)
        served = self._names.get(name)
        if served is None:
            return None
        if served.index in self.spec.cached and name in self._cache:
            return self._cache[name]
        got = self._fetch(served, name, current)
        return None if got.failed is not None else got.milli
