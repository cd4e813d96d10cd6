"""KEDA's operator for one ScaledJob: every poll, Jobs for the messages waiting.

A ScaledJob makes no HPA. Every `pollingInterval` the operator measures its triggers
(`getScaledJobMetrics`: each trigger's queue over its target average value), decides how many Jobs to
create (`jobs_to_create`, the calculators of `keda.jobs`), and creates them. Each Job runs one pod of the
workload's template, which consumes `messages_per_job` of the stream's messages and completes; running
Jobs are those not yet completed, pending ones those whose pod is not yet running.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from skenario.autoscalers.base import PodLister, Scaler, Timing
from skenario.autoscalers.hpa.types import AverageValueTarget
from skenario.autoscalers.keda.controller import EPOCH
from skenario.autoscalers.keda.jobs import (
    DEFAULT_MAX_REPLICAS,
    ScalerMetrics,
    Strategy,
    jobs_to_create,
    scaled_job_active,
    scaler_metrics,
)
from skenario.autoscalers.keda.scalers import KedaSource, ScalerError
from skenario.autoscalers.keda.scalers import Scaler as TriggerScaler
from skenario.core.time import SECOND


class JobsContext(Timing, PodLister, Scaler, KedaSource, Protocol):
    """What KEDA reaches for a ScaledJob: the clock, the pods, the scale (`run_as_jobs`), and the stream."""


@dataclass(frozen=True)
class ScaledJobSpec:
    """A ScaledJob as KEDA's operator uses it (times in ns)."""

    name: str
    scalers: tuple[TriggerScaler, ...]
    polling_interval: int = 30 * SECOND
    min_replicas: int = 0
    max_replicas: int = DEFAULT_MAX_REPLICAS
    strategy: Strategy = field(default_factory=Strategy)
    calculation: str = "max"  # multipleScalersCalculation
    messages_per_job: int = 1  # skenario's: what one Job's pod consumes before it completes
    epoch: datetime = EPOCH


@dataclass
class KedaJobPoll:
    """One poll of a ScaledJob: each trigger's queue (by metric name; a string: its error), whether it was
    active, the Jobs running and pending, and the Jobs it created."""

    at: int
    active: bool
    error: bool
    running: int
    pending: int
    created: int
    reason: str
    triggers: dict[str, float | str] = field(default_factory=dict)


class KedaScaledJob:
    """A ScaledJob on one workload (its pods are the Jobs' pods). Start it with a context."""

    def __init__(self, spec: ScaledJobSpec) -> None:
        self.spec = spec
        self.decisions: list[KedaJobPoll] = []
        self._context: JobsContext | None = None

    @property
    def max_replicas(self) -> int:
        return self.spec.max_replicas

    def start(self, context: JobsContext) -> None:
        self._context = context
        context.run_as_jobs(self.spec.messages_per_job)
        context.clock.call_later(context.phase("poll", self.spec.polling_interval), self._poll)

    def _poll(self) -> None:
        context = self._context
        assert context is not None
        self.decisions.append(self.poll_once(context.clock.now()))
        context.clock.call_later(self.spec.polling_interval, self._poll)

    def poll_once(self, now: int) -> KedaJobPoll:
        """`checkScalers` for a ScaledJob: measure, decide, create."""
        context = self._context
        assert context is not None
        spec = self.spec
        at = spec.epoch + timedelta(microseconds=now // 1000)
        metrics: list[ScalerMetrics] = []
        triggers: dict[str, float | str] = {}
        error = False
        for scaler in spec.scalers:
            name = scaler.metric_spec().name
            try:
                value, active = scaler.measure(context, at)
            except ScalerError as exc:
                triggers[name], error = str(exc), True
                continue
            triggers[name] = value
            target = scaler.metric_spec().target  # getTargetAverageValue reads AverageValue targets only
            milli = target.average_value if isinstance(target, AverageValueTarget) else 0
            metrics.append(scaler_metrics(value, milli / 1000, spec.max_replicas, active))
        active, scale_to, max_scale = scaled_job_active(metrics, spec.calculation, spec.min_replicas, spec.max_replicas)
        pods = context.pods()
        running = context.desired  # created and not completed
        pending = sum(1 for pod in pods if pod.phase == "Pending")
        created = jobs_to_create(
            spec.strategy,
            active=active,
            scale_to=scale_to,
            max_scale=max_scale,
            running=running,
            pending=pending,
            min_replicas=spec.min_replicas,
            max_replicas=spec.max_replicas,
        )
        if created:
            context.scale_to(running + created)
            reason = f"created {created} job(s): {scale_to} asked for, {running} running ({pending} pending)"
        elif active:
            reason = f"no job created: {scale_to} asked for, {running} running ({pending} pending)"
        else:
            reason = "not active"
        return KedaJobPoll(now, active, error, running, pending, created, reason, triggers)
