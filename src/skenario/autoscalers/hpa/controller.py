"""The HPA controller: the stateful loop around the pure calculators, ticking on the Clock.

Mirrors `HorizontalController.reconcileAutoscaler` (horizontal.go): every sync period (the
workqueue's resync, at a phase of the HPA's own) it lists the pods, reads the metrics the pipeline
delivered, computes a proposal per metric and takes the largest (`compute_replicas_for_metrics`),
then stabilises and rate-limits it (`reconcile_desired_replicas`) and sets the desired replicas.
The calculators do the deciding; this class only turns the cluster into their plain-data inputs
and keeps the history between syncs.

Metrics it can read, from each pod's latest sample:
- Resource / ContainerResource `cpu`: mean CPU usage over the sample window, in millicores.
- Resource / ContainerResource `memory`, when the workload models memory: the working set at the
  sample (metrics-server's memory is the last point), in milli-bytes as `MilliValue()` gives it.
- Pods metrics `in_flight` (requests held at the sample), `concurrency` (their mean over the
  window) and `requests_per_second`, in milli-units as the custom metrics API serves them.
- Object or External `requests_per_second` / `in_flight` / `concurrency`: the sum over pods
  (what an ingress or a load balancer would report), `buffered_requests` (the activator), and
  `consumer_lag` (a stream's unconsumed messages, as a Kafka lag exporter serves it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from skenario.autoscalers.base import MetricsSource, PodLister, PodView, Scaler, Timing
from skenario.autoscalers.hpa.behavior import Behavior, tolerances_for_hpa
from skenario.autoscalers.hpa.config import DEFAULT_CONTROLLER_CONFIG, HPAControllerConfig
from skenario.autoscalers.hpa.metrics import MetricProposal, compute_replicas_for_metrics
from skenario.autoscalers.hpa.normalization import DESIRED_WITHIN_RANGE, READY_FOR_NEW_SCALE
from skenario.autoscalers.hpa.reconcile import HPAHistory, Reconciliation, reconcile_desired_replicas
from skenario.autoscalers.hpa.types import (
    CPU,
    DEFAULT_METRICS,
    DEFAULT_TOLERANCES,
    MEMORY,
    AverageValueTarget,
    ConditionStatus,
    ContainerResourceMetricSource,
    ExternalMetricSource,
    ListedContainer,
    ListedPod,
    MetricReading,
    MetricSpec,
    ObjectMetricSource,
    PodMetric,
    PodPhase,
    PodsMetricSource,
    ResourceMetricSource,
    Tolerances,
    UtilizationTarget,
)
from skenario.model.metrics import Sample


# Per-pod metrics a sample offers, in the units the metrics APIs serve (milli-units).
class HPAContext(Timing, PodLister, MetricsSource, Scaler, Protocol):
    """What the HPA reaches: the clock, the pods, their metrics and the scale subresource."""


_POD_METRICS: dict[str, Callable[[Sample], float]] = {
    "in_flight": lambda s: s.in_flight * 1000,
    "concurrency": lambda s: s.concurrency * 1000,
    "requests_per_second": lambda s: s.rps * 1000,
}
POD_METRIC_NAMES = tuple(_POD_METRICS)  # what a Pods metric can name
METRIC_NAMES = (*_POD_METRICS, "buffered_requests", "consumer_lag")  # what an Object or External metric can name


@dataclass(frozen=True)
class HPASpec:
    """The parts of an autoscaling/v2 HorizontalPodAutoscaler's spec the controller uses."""

    max_replicas: int
    min_replicas: int = 1
    metrics: tuple[MetricSpec, ...] = ()
    behavior: Behavior | None = None


@dataclass
class HPADecision:
    """What one sync decided, and from what, for the run's record.

    `metrics` holds each metric's proposal: the replicas it asked for, the usage the HPA status
    would report (milli-units), the utilisation percent for Utilization targets, usage over
    target, the pods left out as unready or missing a metric, and the target it was held to
    (`target_type` Utilization, AverageValue or Value as the spec writes it; `target` in percent
    for Utilization, milli-units otherwise). `min_replicas` and `max_replicas` are the spec's
    bounds (ScalingLimited's TooFewReplicas and TooManyReplicas). `error` is the first metric
    failure, as the HPA's ScalingActive condition says it. `conditions` are the HPA's
    AbleToScale, ScalingActive and ScalingLimited as `kubectl describe hpa` shows them
    ("True ReadyForNewScale"); `stabilized` the stabilisation window's recommendation; `rule` the
    rule that set `desired` (`decision_rule`).
    """

    at: int
    current: int
    proposed: int | None
    desired: int
    reason: str
    metrics: dict[str, dict[str, float | int | str | None]] = field(default_factory=dict)
    error: str | None = None
    conditions: dict[str, str] = field(default_factory=dict)
    stabilized: int | None = None
    rule: str = ""
    min_replicas: int | None = None
    max_replicas: int | None = None


def target_of(metric: MetricSpec) -> tuple[str, int]:
    """A metric's target as the API writes it: its type (`Utilization`, `AverageValue`, `Value`) and value.

    Utilization in percent of request; AverageValue and Value in milli-units (`Quantity.MilliValue()`).
    """
    target = metric.target
    if isinstance(target, UtilizationTarget):
        return "Utilization", target.average_utilization
    if isinstance(target, AverageValueTarget):
        return "AverageValue", target.average_value
    return "Value", target.value


def hpa_conditions(current: int, proposed: int | None, error: str | None, reconciled: Reconciliation) -> dict[str, str]:
    """The HPA's status conditions after one sync, as `reconcileAutoscaler` and `normalizeDesiredReplicas*` set them."""
    normalization = reconciled.normalization
    if current == 0:
        active = "False ScalingDisabled"
    elif proposed is None and error is not None:
        active = "False FailedGetMetric"
    else:
        active = "True ValidMetricFound"
    if normalization is None:
        able, limited = f"True {READY_FOR_NEW_SCALE}", f"False {DESIRED_WITHIN_RANGE}"
    else:
        able = f"True {normalization.able_to_scale_reason}"
        limited = f"{normalization.scaling_limited} {normalization.limit_reason}"
    return {"AbleToScale": able, "ScalingActive": active, "ScalingLimited": limited}


def decision_rule(
    current: int,
    proposed: int | None,
    error: str | None,
    reconciled: Reconciliation,
    ratios: dict[str, float],
    tolerances: Tolerances = DEFAULT_TOLERANCES,
) -> str:
    """Which rule set the sync's result, in the order `reconcileAutoscaler` applies them."""
    normalization = reconciled.normalization
    desired = reconciled.desired_replicas
    if normalization is None:
        return reconciled.reason if proposed is not None or error is None else f"no usable metric: {error}"
    stabilized = normalization.stabilized_replicas
    if normalization.scaling_limited:
        return f"{normalization.limit_reason}: the recommendation {stabilized} was limited to {desired}"
    if proposed is not None and stabilized != proposed:
        return (
            f"{normalization.able_to_scale_reason}: the stabilisation window's recommendation {stabilized} "
            f"held over the metrics' {proposed}"
        )
    if proposed == current and ratios and all(tolerances.is_within(ratio) for ratio in ratios.values()):
        shown = ", ".join(f"{metric} {ratio:.3f}" for metric, ratio in ratios.items())
        band = f"{1 - tolerances.scale_down:g}..{1 + tolerances.scale_up:g}"
        return f"within tolerance: usage over target {shown} inside {band}, no change"
    return f"metrics: {proposed} replicas proposed ({reconciled.reason})"


@dataclass
class HorizontalPodAutoscaler:
    """An HPA on one workload. Start it with a context; it syncs every `config.sync_period`."""

    spec: HPASpec
    config: HPAControllerConfig = DEFAULT_CONTROLLER_CONFIG
    configurable_tolerance: bool = True
    keep_decisions: int = 100_000
    external_metrics: Callable[[str], int | None] | None = None
    """An external metrics API of its own (KEDA's metrics adapter): an External metric's value by name, in
    milli-units (None: the adapter failed), in place of the metrics skenario's pipeline serves."""
    decisions: list[HPADecision] = field(default_factory=list)
    _context: HPAContext | None = None
    _history: HPAHistory = field(default_factory=HPAHistory)
    # Each pod as last listed, by the view it was listed from (`_listed`).
    _listed: dict[int, tuple[PodView, ListedPod]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def max_replicas(self) -> int:
        """The most replicas it may set (`spec.maxReplicas`): the run records it beside the desired count."""
        return self.spec.max_replicas

    def start(self, context: HPAContext) -> None:
        """Sync from a phase of this HPA's own: the controller's workqueue takes each HPA one sync
        period after it last finished with it (`processNextWorkItem` re-adds it with
        `AddRateLimited`, whose `FixedItemIntervalRateLimiter` waits the period), so every HPA
        keeps the phase it got when the informer first listed it, independent of the others' and
        of metrics-server's scrapes."""
        self._context = context
        context.clock.call_later(context.phase("sync", self.config.sync_period), self._sync)

    def _sync(self) -> None:
        context = self._context
        assert context is not None
        clock = context.clock
        now = clock.now()
        self.sync_once(now)
        clock.call_later(self.config.sync_period, self._sync)

    def sync_once(self, now: int) -> HPADecision:
        """One reconcile: read, compute, normalise, scale."""
        context = self._context
        assert context is not None
        spec = self.spec
        views = context.pods()
        pods = self._list(views, now)
        samples = context.samples()
        metrics = spec.metrics or DEFAULT_METRICS
        external = self.external_metrics
        readings = [
            _external(metric, external)
            if external is not None and isinstance(metric, ExternalMetricSource)
            else _reading(metric, views, samples, context)
            for metric in metrics
        ]
        current = context.desired
        live = sum(1 for view in views if view.phase != "Terminating")
        tolerances = tolerances_for_hpa(
            spec.behavior, self.config.tolerance, configurable_tolerance=self.configurable_tolerance
        )
        recommendation = compute_replicas_for_metrics(
            metrics,
            readings,
            spec_replicas=current,
            status_replicas=live,
            pods=pods,
            now=now,
            tolerances=tolerances,
            config=self.config,
        )
        reconciliation = reconcile_desired_replicas(
            self._history,
            current_replicas=current,
            metric_desired_replicas=recommendation.replicas,
            min_replicas=spec.min_replicas,
            max_replicas=spec.max_replicas,
            behavior=spec.behavior,
            now=now,
            downscale_stabilization=self.config.downscale_stabilization,
        )
        self._history = reconciliation.history
        if reconciliation.rescale:
            context.scale_to(reconciliation.desired_replicas)
        decision = HPADecision(
            now,
            current,
            recommendation.replicas,
            reconciliation.desired_replicas,
            reconciliation.reason,
            metrics={p.metric: _metric_detail(p) for p in recommendation.proposals if p is not None},
            error=recommendation.error,
            conditions=hpa_conditions(current, recommendation.replicas, recommendation.error, reconciliation),
            stabilized=None
            if reconciliation.normalization is None
            else reconciliation.normalization.stabilized_replicas,
            rule=decision_rule(
                current,
                recommendation.replicas,
                recommendation.error,
                reconciliation,
                {p.metric: p.calculation.usage_ratio for p in recommendation.proposals if p is not None},
                tolerances,
            ),
            min_replicas=spec.min_replicas,
            max_replicas=spec.max_replicas,
        )
        if len(self.decisions) < self.keep_decisions:
            self.decisions.append(decision)
        return decision

    def _list(self, views: list[PodView], now: int) -> list[ListedPod]:
        """The pods as the HPA's lister shows them (`_pod`); a pod listed from the same view as at the last sync is
        the same (a context keeps a pod's view while it shows the same), unless it is being deleted (its
        deletion time is the sync's)."""
        kept, listed = self._listed, {}
        pods = []
        for view in views:
            before = kept.get(view.id)
            if before is not None and before[0] is view and view.phase != "Terminating":
                pod = before[1]
            else:
                pod = _pod(view, now)
            listed[view.id] = (view, pod)
            pods.append(pod)
        self._listed = listed
        return pods


def _metric_detail(proposal: MetricProposal) -> dict[str, float | int | str | None]:
    """One metric's proposal for the decision's record (`HPADecision.metrics`)."""
    calculation = proposal.calculation
    target_type, target = target_of(proposal.spec)
    return {
        "replicas": proposal.replicas,
        "usage": calculation.usage,
        "utilization": calculation.utilization,
        "usage_ratio": calculation.usage_ratio,
        "unready": calculation.unready,
        "missing": calculation.missing,
        "target_type": target_type,
        "target": target,
    }


def _pod(view: PodView, now: int) -> ListedPod:
    """A pod as the HPA's lister shows it: its one container, whose request is the pod's."""
    return ListedPod(
        name=view.name,
        phase=PodPhase.PENDING if view.phase == "Pending" else PodPhase.RUNNING,
        ready=ConditionStatus.TRUE if view.ready else ConditionStatus.FALSE,
        ready_transition_time=view.ready_since if view.ready_since is not None else view.started_at,
        start_time=view.started_at,
        deletion_time=now if view.phase == "Terminating" else None,
        containers=(ListedContainer(view.container, _requests(view)),),
    )


def _requests(view: PodView) -> dict[str, int]:
    """The container's requests in milli-units: millicores and memory in milli-bytes, each when it has one
    (a BestEffort pod has neither: an HPA on its CPU fails with upstream's "missing request")."""
    requests = {CPU: view.cpu_request} if view.cpu_request else {}
    if view.memory_request is not None:
        requests[MEMORY] = view.memory_request * 1000
    return requests


def _external(metric: ExternalMetricSource, serve: Callable[[str], int | None]) -> MetricReading | None:
    """An External metric from the HPA's own external metrics API (one series), or None when it failed."""
    value = serve(metric.name)
    return None if value is None else MetricReading(value=value, values=(value,))


def _reading(
    metric: MetricSpec, views: list[PodView], samples: dict[int, Sample], context: MetricsSource
) -> MetricReading | None:
    """The metric's current values, or None when skenario does not produce that metric."""
    if isinstance(metric, ResourceMetricSource | ContainerResourceMetricSource):
        if metric.name == MEMORY:
            memory = {i: s for i, s in samples.items() if s.memory_bytes is not None}
            return MetricReading(pod_metrics=_per_pod(views, memory, lambda s: (s.memory_bytes or 0) * 1000))
        if metric.name != CPU:
            return None  # only CPU and memory are modelled
        return MetricReading(pod_metrics=_per_pod(views, samples, lambda s: s.cpu_millicores))
    if isinstance(metric, PodsMetricSource):
        value = _POD_METRICS.get(metric.name)
        return None if value is None else MetricReading(pod_metrics=_per_pod(views, samples, value))
    if isinstance(metric, ObjectMetricSource | ExternalMetricSource):
        if metric.name == "buffered_requests":
            total = context.buffered_requests() * 1000
        elif metric.name == "consumer_lag":
            lag = context.consumer_lag()
            if lag is None:
                return None  # the pods consume no stream
            total = lag * 1000
        elif metric.name in _POD_METRICS:
            value = _POD_METRICS[metric.name]
            total = round(sum(value(s) for s in samples.values()))
        else:
            return None
        return MetricReading(value=total, values=(total,))
    return None


def _per_pod(
    views: list[PodView], samples: dict[int, Sample], value: Callable[[Sample], float]
) -> dict[str, PodMetric]:
    metrics = {}
    for view in views:
        sample = samples.get(view.id)
        if sample is not None:
            metrics[view.name] = PodMetric(round(value(sample)), timestamp=sample.at, window=sample.window)
    return metrics
