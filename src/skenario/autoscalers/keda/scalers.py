"""KEDA's scalers: for each trigger, the HPA metric KEDA makes of it and what the scaler measures at a poll.

Each scaler mirrors its upstream file in pkg/scalers: `GetMetricSpecForScaling` (the metric's name, built by
`GenerateMetricNameWithIndex` and `NormalizeString`, and its target) and `GetMetricsAndActivity` (the value
and whether it passes the activation threshold). What they read comes from the simulated cluster through
`KedaSource`: a stream's lag, per partition too (Kafka, RabbitMQ, SQS: the broker), the pods' latest
samples (what a Prometheus query over queue-proxy's or the app's metrics would sum), and the wall clock
(cron).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol
from urllib.parse import quote_plus

from skenario.autoscalers.hpa.types import (
    AverageValueTarget,
    ContainerResourceMetricSource,
    ExternalMetricSource,
    MetricSpec,
    MetricTarget,
    ResourceMetricSource,
    UtilizationTarget,
    ValueTarget,
)
from skenario.autoscalers.keda.cron import CronSchedule, in_window, timezone
from skenario.core.stats import LatencyHistogram
from skenario.core.time import SECOND
from skenario.model.metrics import Sample

AVERAGE_VALUE = "AverageValue"
VALUE = "Value"
UTILIZATION = "Utilization"


class ScalerError(Exception):
    """A scaler that could not get its metric this time (`GetMetricsAndActivity`'s error)."""


class KedaSource(Protocol):
    """What KEDA's scalers read from the simulated cluster."""

    def consumer_lag(self) -> int | None:
        """Messages not yet consumed (waiting, or held by a consumer and not finished); None: no stream."""
        ...

    def buffered_requests(self) -> int:
        """Messages (or requests) waiting, not yet pulled by a consumer."""
        ...

    def partition_lags(self) -> list[int] | None:
        """Each partition's lag; None when the stream has no partitions (or there is no stream)."""
        ...

    def samples(self) -> dict[int, Sample]:
        """Each running pod's latest sample."""
        ...

    def latency(self) -> LatencyHistogram:
        """Every completed request's latency so far (a copy)."""
        ...


def metric_name(index: int, name: str) -> str:
    """`GenerateMetricNameWithIndex(index, NormalizeString(name))` (pkg/scalers/scaler.go, pkg/util)."""
    for character in "/.:%()":
        name = name.replace(character, "-")
    return f"s{index}-{name}"


def metric_target(metric_type: str, value: float) -> MetricTarget:
    """`GetMetricTarget` / `GetMetricTargetMili`: the value as a Quantity's milli-value, AverageValue unless Value."""
    milli = max(int(value * 1000), 0) if math.isfinite(value) else 0
    return ValueTarget(milli) if metric_type == VALUE else AverageValueTarget(milli)


@dataclass(frozen=True)
class Scaler:
    """A trigger's scaler: its index among the triggers, its name (for formulas), and its metric type."""

    index: int
    name: str | None
    metric_type: str  # AverageValue (the default) or Value; Utilization for cpu and memory only

    @property
    def external(self) -> bool:
        """Whether the HPA reads it as an External metric through KEDA (cpu and memory are Resource metrics)."""
        return True

    def metric_spec(self) -> MetricSpec:
        raise NotImplementedError

    def measure(self, source: KedaSource, at: datetime) -> tuple[float, bool]:
        """The metric's value and whether the trigger is active (`GetMetricsAndActivity`); ScalerError if it
        fails. `at` is the wall-clock time (UTC)."""
        raise NotImplementedError


@dataclass(frozen=True)
class ResourceScaler(Scaler):
    """`cpu` / `memory` (cpu_memory_scaler.go): a Resource metric (ContainerResource with `containerName`) the
    HPA reads from metrics-server itself. It never activates; a ScaledObject of only these is always active."""

    resource: str = "cpu"
    value: int = 0  # percent for Utilization; milli-units for AverageValue
    container: str | None = None

    @property
    def external(self) -> bool:
        return False

    def metric_spec(self) -> MetricSpec:
        target: MetricTarget = (
            UtilizationTarget(self.value) if self.metric_type == UTILIZATION else AverageValueTarget(self.value)
        )
        if self.container:
            return ContainerResourceMetricSource(self.resource, self.container, target)
        return ResourceMetricSource(self.resource, target)

    def measure(self, source: KedaSource, at: datetime) -> tuple[float, bool]:
        return 0.0, False


def _lag(source: KedaSource) -> int:
    lag = source.consumer_lag()
    if lag is None:
        raise ScalerError("the workload consumes no stream")
    return lag


def find_factors(n: int) -> list[int]:
    """`FindFactors` (kafka_scaler.go): n's divisors, ascending."""
    if n < 1:
        return []
    factors: set[int] = set()
    for i in range(1, math.isqrt(n) + 1):
        if n % i == 0:
            factors.update((i, n // i))
    return sorted(factors)


def next_balancing_factor(total_lag: int, partitions: int, lag_threshold: int) -> int:
    """`getNextFactorThatBalancesConsumersToTopicPartitions`: the least divisor f of the partitions with
    f × lagThreshold >= the lag (the partitions when none is)."""
    for factor in find_factors(partitions):
        if factor * lag_threshold >= total_lag:
            return factor
    return partitions


def capped_lag(
    lags: list[int],
    lag_threshold: int,
    *,
    allow_idle_consumers: bool = False,
    limit_to_partitions_with_lag: bool = False,
    even_distribution: bool = False,
) -> int:
    """`kafkaScaler.getTotalLag`'s scaling lag from each partition's lag: capped so that the HPA never asks for
    more consumers than partitions (or partitions with lag), and rounded up to a divisor of the partitions
    with `ensureEvenDistributionOfPartitions`."""
    total = sum(lags)
    if not allow_idle_consumers or limit_to_partitions_with_lag or even_distribution:
        bound = len(lags)
        if even_distribution:
            total = next_balancing_factor(total, len(lags), lag_threshold) * lag_threshold
        if limit_to_partitions_with_lag:
            bound = sum(1 for lag in lags if lag > 0)
        if total // lag_threshold > bound:
            total = bound * lag_threshold
    return total


@dataclass(frozen=True)
class KafkaScaler(Scaler):
    """`kafka` (kafka_scaler.go): the consumer group's lag over the topic's partitions, capped by them."""

    topic: str = ""
    consumer_group: str = ""
    lag_threshold: int = 10
    activation_lag_threshold: int = 0
    allow_idle_consumers: bool = False
    limit_to_partitions_with_lag: bool = False
    even_distribution: bool = False

    def metric_spec(self) -> MetricSpec:
        name = f"kafka-{self.topic}" if self.topic else f"kafka-{self.consumer_group}-topics"
        return ExternalMetricSource(metric_name(self.index, name), metric_target(self.metric_type, self.lag_threshold))

    def measure(self, source: KedaSource, at: datetime) -> tuple[float, bool]:
        total = _lag(source)
        lags = source.partition_lags()
        if lags is None:
            raise ScalerError("the stream has no partitions")
        scaled = capped_lag(
            lags,
            self.lag_threshold,
            allow_idle_consumers=self.allow_idle_consumers,
            limit_to_partitions_with_lag=self.limit_to_partitions_with_lag,
            even_distribution=self.even_distribution,
        )
        return float(scaled), total > self.activation_lag_threshold


@dataclass(frozen=True)
class QueueScaler(Scaler):
    """`rabbitmq` in QueueLength mode (rabbitmq_scaler.go: ready and unacknowledged messages, or ready ones
    with `excludeUnacknowledged`) and `aws-sqs-queue` (aws_sqs_queue_scaler.go: visible and, with
    `scaleOnInFlight`, in flight): messages in the queue against a target per consumer."""

    kind: str = "rabbitmq"
    queue: str = ""
    target: float = 20.0
    activation: float = 0.0
    in_flight: bool = True  # count the messages consumers hold (unacknowledged, or SQS's not visible)

    def metric_spec(self) -> MetricSpec:
        if self.kind == "rabbitmq":
            return ExternalMetricSource(
                metric_name(self.index, f"rabbitmq-{quote_plus(self.queue)}"),
                metric_target(self.metric_type, self.target),
            )
        return ExternalMetricSource(
            metric_name(self.index, f"aws-sqs-{self.queue}"), metric_target(self.metric_type, int(self.target))
        )

    def measure(self, source: KedaSource, at: datetime) -> tuple[float, bool]:
        messages = _lag(source) if self.in_flight else source.buffered_requests()
        return float(messages), messages > self.activation


POD_SUMS: dict[str, Callable[[Sample], float]] = {
    "requests_per_second": lambda s: s.rps,
    "in_flight": lambda s: s.in_flight,
    "concurrency": lambda s: s.concurrency,
    "cpu_millicores": lambda s: s.cpu_millicores,
}
"""What a Prometheus query can measure, summed over the pods' latest samples (as `sum(rate(...))` over their
metrics would be); `buffered_requests` and `consumer_lag` are read whole."""
LATENCIES: dict[str, float | None] = {
    "latency_p50_seconds": 50.0,
    "latency_p95_seconds": 95.0,
    "latency_p99_seconds": 99.0,
    "latency_mean_seconds": None,
}
"""Latency of the requests completed since the trigger was last read, as `histogram_quantile` over a rate reads a
latency histogram (a percentile, or the mean); no request completed is an empty result."""
QUERYABLE = (*POD_SUMS, *LATENCIES, "buffered_requests", "consumer_lag")


@dataclass(frozen=True)
class PrometheusScaler(Scaler):
    """`prometheus` (prometheus_scaler.go): one value a query returns, against `threshold`. The query is one of
    `QUERYABLE`, named for it in the scenario (KEDA would send it to Prometheus). With no series (no pod
    has a sample), the value is 0 when `ignoreNullValues` (the default), else an error."""

    measures: str = "requests_per_second"
    threshold: float = 1.0
    activation_threshold: float = 0.0
    ignore_null_values: bool = True
    _last: dict[str, LatencyHistogram] = field(default_factory=dict, compare=False, repr=False)  # latency read

    def metric_spec(self) -> MetricSpec:
        return ExternalMetricSource(
            metric_name(self.index, "prometheus"), metric_target(self.metric_type, self.threshold)
        )

    def measure(self, source: KedaSource, at: datetime) -> tuple[float, bool]:
        value = self._value(source)
        if value is None:
            if not self.ignore_null_values:
                raise ScalerError("prometheus query returned an empty result")
            value = 0.0
        return value, value > self.activation_threshold

    def _value(self, source: KedaSource) -> float | None:
        if self.measures in LATENCIES:
            seen = source.latency()
            window = seen.since(self._last.get("latency"))
            self._last["latency"] = seen
            q = LATENCIES[self.measures]
            value = window.mean() if q is None else window.percentile(q)
            return None if value is None else value / SECOND
        if self.measures == "buffered_requests":
            return float(source.buffered_requests())
        if self.measures == "consumer_lag":
            lag = source.consumer_lag()
            return None if lag is None else float(lag)
        samples = source.samples()
        if not samples:
            return None
        read = POD_SUMS[self.measures]
        return float(sum(read(sample) for sample in samples.values()))


def cron_time_format(text: str) -> str:
    """`parseCronTimeFormat` (cron_scaler.go): a schedule as it goes into the metric's name."""
    for old, new in ((" ", ""), ("*", "x"), ("/", "Sl"), ("?", "Qm"), (",", "Cm")):
        text = text.replace(old, new)
    return text


@dataclass(frozen=True)
class CronScaler(Scaler):
    """`cron` (cron_scaler.go): `desiredReplicas` inside the start/end window (in `timezone`), 0 outside, against
    a target of 1 per replica."""

    timezone_name: str = "UTC"
    start: CronSchedule | None = None
    end: CronSchedule | None = None
    desired_replicas: int = 1

    def metric_spec(self) -> MetricSpec:
        assert self.start is not None and self.end is not None
        name = f"cron-{self.timezone_name}-{cron_time_format(self.start.text)}-{cron_time_format(self.end.text)}"
        return ExternalMetricSource(metric_name(self.index, name), metric_target(self.metric_type, 1))

    def measure(self, source: KedaSource, at: datetime) -> tuple[float, bool]:
        assert self.start is not None and self.end is not None
        local = at.astimezone(timezone(self.timezone_name)).replace(tzinfo=None)
        inside = in_window(self.start, self.end, local)
        return (float(self.desired_replicas) if inside else 0.0), inside
