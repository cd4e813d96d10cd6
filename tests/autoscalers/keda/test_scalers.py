"""The scalers' metric names and targets (upstream's GetMetricSpecForScaling cases) and their measurements."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from skenario.autoscalers.hpa.types import AverageValueTarget, ExternalMetricSource, ValueTarget
from skenario.autoscalers.keda.cron import parse_schedule
from skenario.autoscalers.keda.scalers import (
    CronScaler,
    KafkaScaler,
    PrometheusScaler,
    QueueScaler,
    ScalerError,
    capped_lag,
    find_factors,
    next_balancing_factor,
)
from skenario.core.stats import LatencyHistogram
from skenario.model.metrics import Sample


class Source:
    """A stream and pods' samples, set by the test."""

    def __init__(self, partitions: list[int] | None = None, waiting: int = 0, samples: dict[int, Sample] | None = None):
        self.partitions = partitions
        self.waiting = waiting
        self._samples = samples or {}

    def consumer_lag(self) -> int | None:
        return None if self.partitions is None else sum(self.partitions)

    def buffered_requests(self) -> int:
        return self.waiting

    def partition_lags(self) -> list[int] | None:
        return self.partitions

    def samples(self) -> dict[int, Sample]:
        return self._samples


AT = datetime(2024, 1, 4, 12, 0, tzinfo=UTC)  # a Thursday noon


def test_metric_names_as_upstream_tests_give_them() -> None:
    # kafka_scaler_test, rabbitmq_scaler_test, aws_sqs_queue_scaler_test, prometheus_scaler_test, cron_scaler_test.
    assert KafkaScaler(0, None, "AverageValue", topic="my-topic").metric_spec().name == "s0-kafka-my-topic"
    assert (
        KafkaScaler(1, None, "AverageValue", consumer_group="my-group").metric_spec().name == "s1-kafka-my-group-topics"
    )
    assert QueueScaler(0, None, "AverageValue", queue="sample").metric_spec().name == "s0-rabbitmq-sample"
    assert (
        QueueScaler(1, None, "AverageValue", queue="namespace/name").metric_spec().name
        == "s1-rabbitmq-namespace-2Fname"
    )
    sqs = QueueScaler(0, None, "AverageValue", kind="aws-sqs-queue", queue="DeleteArtifactQ")
    assert sqs.metric_spec().name == "s0-aws-sqs-DeleteArtifactQ"
    assert PrometheusScaler(1, None, "AverageValue").metric_spec().name == "s1-prometheus"
    cron = CronScaler(
        0, None, "AverageValue", "Etc/UTC", parse_schedule("0 0 * * Thu"), parse_schedule("59 23 * * Thu")
    )
    assert cron.metric_spec().name == "s0-cron-Etc-UTC-00xxThu-5923xxThu"
    every_two = CronScaler(
        1, None, "AverageValue", "Etc/UTC", parse_schedule("0 */2 * * *"), parse_schedule("0 1-23/2 * * *")
    )
    assert every_two.metric_spec().name == "s1-cron-Etc-UTC-0xSl2xxx-01-23Sl2xxx"


def test_targets_are_milli_values() -> None:
    kafka = KafkaScaler(0, None, "AverageValue", topic="t", lag_threshold=50).metric_spec()
    assert isinstance(kafka, ExternalMetricSource) and kafka.target == AverageValueTarget(50_000)
    prometheus = PrometheusScaler(0, None, "Value", threshold=2.5).metric_spec()
    assert prometheus.target == ValueTarget(2_500)


def test_find_factors_and_the_next_balancing_factor() -> None:
    # kafka_scaler_test TestFindFactors and TestGetNextFactor.
    assert find_factors(10) == [1, 2, 5, 10]
    assert find_factors(13) == [1, 13]
    assert find_factors(25) == [1, 5, 25]
    assert find_factors(100) == [1, 2, 4, 5, 10, 20, 25, 50, 100]
    cases = [(10, 1), (20, 2), (40, 4), (50, 5), (99, 10), (100, 10), (101, 20)]
    assert [next_balancing_factor(lag, 100, 10) for lag, _ in cases] == [f for _, f in cases]


def test_the_lag_is_capped_by_the_partitions() -> None:
    # getTotalLag: 4 partitions, threshold 10: 500 of lag counts as 40 (4 consumers at most).
    assert capped_lag([200, 100, 100, 100], 10) == 40
    assert capped_lag([200, 100, 100, 100], 10, allow_idle_consumers=True) == 500
    assert capped_lag([200, 0, 0, 100], 10, limit_to_partitions_with_lag=True) == 20
    assert capped_lag([3, 3, 3, 3, 3, 3], 10, even_distribution=True) == 20  # 18 -> the factor 2 of 6


def test_kafka_activity_reads_the_whole_lag() -> None:
    scaler = KafkaScaler(0, None, "AverageValue", topic="t", lag_threshold=10, activation_lag_threshold=50)
    assert scaler.measure(Source([20, 20, 20]), AT) == (30.0, True)  # capped at 3 x 10; 60 > 50 activates
    assert scaler.measure(Source([10, 10, 10]), AT) == (30.0, False)
    with pytest.raises(ScalerError):
        scaler.measure(Source(None), AT)


def test_queues_count_unacknowledged_messages_unless_told_not_to() -> None:
    source = Source([7], waiting=4)  # 7 not consumed, 4 of them still waiting
    assert QueueScaler(0, None, "AverageValue", queue="q").measure(source, AT) == (7.0, True)
    assert QueueScaler(0, None, "AverageValue", queue="q", in_flight=False).measure(source, AT) == (4.0, True)
    assert QueueScaler(0, None, "AverageValue", queue="q", activation=7).measure(source, AT) == (7.0, False)


def _sample(replica: int, rps: float) -> Sample:
    pod: Any = SimpleNamespace(id=replica)
    return Sample(
        replica, pod, 0, 15_000_000_000, cpu_millicores=100.0, in_flight=2, concurrency=1.5, rps=rps, cpu_request=500
    )


def test_prometheus_sums_the_pods_and_treats_no_series_as_zero_by_default() -> None:
    source = Source(samples={1: _sample(1, 3.0), 2: _sample(2, 4.5)})
    assert PrometheusScaler(0, None, "AverageValue", measures="requests_per_second").measure(source, AT) == (7.5, True)
    assert PrometheusScaler(0, None, "AverageValue", measures="in_flight").measure(source, AT) == (4.0, True)
    empty = Source()
    assert PrometheusScaler(0, None, "AverageValue").measure(empty, AT) == (0.0, False)
    with pytest.raises(ScalerError, match="empty"):
        PrometheusScaler(0, None, "AverageValue", ignore_null_values=False).measure(empty, AT)


def test_cron_serves_its_replicas_inside_the_window() -> None:
    scaler = CronScaler(
        0, None, "AverageValue", "Etc/UTC", parse_schedule("0 0 * * Thu"), parse_schedule("59 23 * * Thu"), 10
    )
    assert scaler.measure(Source(), AT) == (10.0, True)
    assert scaler.measure(Source(), datetime(2024, 1, 5, 12, 0, tzinfo=UTC)) == (0.0, False)
    # In Asia/Kolkata (UTC+5:30), Thursday 20:00 UTC is already Friday 01:30.
    kolkata = CronScaler(
        0, None, "AverageValue", "Asia/Kolkata", parse_schedule("0 0 * * Thu"), parse_schedule("59 23 * * Thu"), 10
    )
    assert kolkata.measure(Source(), datetime(2024, 1, 4, 20, 0, tzinfo=UTC)) == (0.0, False)


def test_prometheus_latency_reads_the_requests_completed_since_its_last_read() -> None:
    """histogram_quantile over a rate: the first read sees 100 requests of 0.2 s; the second only the 100 of
    1.5 s completed since; with none completed since, the result is empty (0 with ignoreNullValues)."""
    seen = LatencyHistogram()

    class Latencies(Source):
        def latency(self) -> LatencyHistogram:
            copy = LatencyHistogram()
            copy.merge(seen)
            return copy

    scaler = PrometheusScaler(0, None, "AverageValue", measures="latency_p95_seconds", threshold=0.5)
    seen.record_many(200_000_000, 100)
    first, _ = scaler.measure(Latencies(), AT)
    seen.record_many(1_500_000_000, 100)
    second, active = scaler.measure(Latencies(), AT)
    assert first == pytest.approx(0.2, rel=0.02) and second == pytest.approx(1.5, rel=0.02) and active
    assert scaler.measure(Latencies(), AT) == (0.0, False)
    mean = PrometheusScaler(0, None, "AverageValue", measures="latency_mean_seconds", threshold=0.5)
    assert mean.measure(Latencies(), AT)[0] == pytest.approx((0.2 * 100 + 1.5 * 100) / 200)
