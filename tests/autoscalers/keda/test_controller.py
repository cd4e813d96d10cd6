"""KEDA's operator on a clock: the scale to and from zero timed by hand, the HPA it makes, fallback and formulas."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from skenario.autoscalers.base import PodView
from skenario.autoscalers.hpa.types import (
    AverageValueTarget,
    ExternalMetricSource,
    ResourceMetricSource,
    UtilizationTarget,
)
from skenario.autoscalers.keda.controller import (
    COMPOSITE_METRIC,
    KedaScaledObject,
    ScaledObjectSpec,
    ScalingModifiers,
    hpa_spec,
)
from skenario.autoscalers.keda.executor import ExecutorSpec
from skenario.autoscalers.keda.fallback import Fallback
from skenario.autoscalers.keda.formula import parse
from skenario.autoscalers.keda.scalers import KafkaScaler, PrometheusScaler, ResourceScaler
from skenario.core.environment import Environment
from skenario.core.time import SECOND
from skenario.model.metrics import Sample


class Cluster:
    """A fake cluster for the operator and its HPA: a stream whose lag the test sets over time, ready pods as
    many as desired, no samples; every loop at its aligned phase (a whole period from the start)."""

    def __init__(self, env: Environment, replicas: int, lag: Callable[[int], int], partitions: int = 4) -> None:
        self.clock = env
        self.desired = replicas
        self.lag = lag
        self.partitions = partitions
        self.scaled: list[tuple[int, int]] = []  # (when, to)
        self.random = np.random.default_rng(1)

    def phase(self, loop: str, period: int, *, shared: bool = False) -> int:
        return period

    def scale_to(self, replicas: int) -> None:
        self.scaled.append((self.clock.now(), replicas))
        self.desired = replicas

    def pods(self) -> list[PodView]:
        return [PodView(i, f"pod-{i}", "Running", True, 0, 0, 500, None) for i in range(self.desired)]

    def samples(self) -> dict[int, Sample]:
        return {}

    def metric(self, name: str) -> dict[int, float]:
        return {}

    def subscribe(self, fn: Callable[[Sample], object]) -> None:
        return None

    def buffered_requests(self) -> int:
        return 0

    def buffered_request_ns(self) -> int:
        return 0

    def consumer_lag(self) -> int:
        return self.lag(self.clock.now())

    def partition_lags(self) -> list[int]:
        total = self.consumer_lag()
        share, extra = divmod(total, self.partitions)
        return [share + (1 if p < extra else 0) for p in range(self.partitions)]


def kafka(activation: int = 10, threshold: int = 50) -> KafkaScaler:
    return KafkaScaler(
        0, "lag", "AverageValue", topic="orders", lag_threshold=threshold, activation_lag_threshold=activation
    )


def run(
    spec: ScaledObjectSpec, cluster_of: Callable[[Environment], Cluster], until: int
) -> tuple[KedaScaledObject, Cluster]:
    env = Environment(halt_at=until)
    cluster = cluster_of(env)
    keda = KedaScaledObject(spec)
    keda.start(cluster)  # type: ignore[arg-type]
    env.run()
    return keda, cluster


def test_from_zero_and_back_timed_by_hand() -> None:
    """Polls every 30 s; the lag is 50 from 100 s to 400 s. The first poll to see it is at 120 s (0 -> 1); the
    last to see it at 390 s (lastActiveTime); the cooldown of 300 s has passed strictly at 720 s, not 690 s."""
    spec = ScaledObjectSpec("orders", (kafka(),), ExecutorSpec(min_replicas=0, cooldown=300 * SECOND))
    keda, cluster = run(
        spec, lambda env: Cluster(env, 0, lambda t: 50 if 100 * SECOND <= t < 400 * SECOND else 0), 800 * SECOND
    )
    operator_moves = [(poll.at // SECOND, poll.desired) for poll in keda.decisions if poll.desired is not None]
    assert operator_moves == [(120, 1), (720, 0)]
    assert [poll.at // SECOND for poll in keda.decisions][:4] == [30, 60, 90, 120]
    cooling = [poll.at // SECOND for poll in keda.decisions if poll.action == "cooling down"]
    assert cooling[0] == 420 and cooling[-1] == 690
    # Between, the HPA held 1 consumer: 50 of lag at 50 per consumer.
    assert all(to == 1 for at, to in cluster.scaled if 120 * SECOND < at < 720 * SECOND)


def test_the_hpa_scales_on_the_lag_between_one_and_max() -> None:
    """A lag of 1,000 at 50 per consumer asks for 20, capped at the 4 partitions' 4 consumers (the scaler's cap)."""
    spec = ScaledObjectSpec("orders", (kafka(),), ExecutorSpec(min_replicas=0), max_replicas=10)
    keda, cluster = run(spec, lambda env: Cluster(env, 0, lambda t: 1000), 200 * SECOND)
    assert cluster.scaled[0] == (30 * SECOND, 1)  # the operator's activation
    assert cluster.desired == 4  # then its HPA: at most one consumer per partition
    [(metric, detail)] = keda.hpa.decisions[-1].metrics.items()
    assert (metric, detail["target"]) == ("external metric s0-kafka-orders", 50_000)


def test_the_hpa_keda_makes() -> None:
    """newHPAForScaledObject: min max(minReplicaCount, 1), max maxReplicaCount, metrics sorted by type."""
    cpu = ResourceScaler(1, None, "Utilization", resource="cpu", value=60)
    spec = ScaledObjectSpec("orders", (kafka(), cpu), ExecutorSpec(min_replicas=0), max_replicas=12)
    made = hpa_spec(spec)
    assert (made.min_replicas, made.max_replicas) == (1, 12)
    assert made.metrics == (
        ExternalMetricSource("s0-kafka-orders", AverageValueTarget(50_000)),
        ResourceMetricSource("cpu", UtilizationTarget(60)),
    )
    assert spec.hpa_name == "keda-hpa-orders"
    modified = ScaledObjectSpec("orders", (kafka(), cpu), modifiers=ScalingModifiers(parse("lag * 2", {"lag"}), 20.0))
    assert hpa_spec(modified).metrics == (
        ExternalMetricSource(COMPOSITE_METRIC, AverageValueTarget(20_000)),
        ResourceMetricSource("cpu", UtilizationTarget(60)),
    )


def test_only_cpu_and_memory_triggers_keep_it_active() -> None:
    cpu = ResourceScaler(0, None, "Utilization", resource="cpu", value=60)
    spec = ScaledObjectSpec("web", (cpu,), ExecutorSpec(min_replicas=0))
    keda, cluster = run(spec, lambda env: Cluster(env, 2, lambda t: 0), 100 * SECOND)
    assert all(poll.active for poll in keda.decisions)
    assert (0, 0) not in [(at, to) for at, to in cluster.scaled]


def test_fallback_after_the_threshold_counts_every_fetch() -> None:
    """GetMetricsWithFallback: each failed fetch adds one; past failureThreshold 3 the HPA is served
    replicas x target. A Prometheus query with no series fails when ignoreNullValues is false."""
    failing = PrometheusScaler(0, None, "AverageValue", threshold=5.0, ignore_null_values=False)
    spec = ScaledObjectSpec(
        "web", (failing,), ExecutorSpec(min_replicas=1, fallback_replicas=6), fallback=Fallback(3, 6)
    )
    env = Environment(halt_at=SECOND)
    cluster = Cluster(env, 2, lambda t: 0)
    keda = KedaScaledObject(spec)
    keda._context = cluster  # type: ignore[assignment]  # the adapter alone, without the loops
    served = [keda._serve("s0-prometheus") for _ in range(5)]
    assert served == [None, None, None, 30_000, 30_000]  # 6 replicas x 5


def test_scaling_modifiers_compose_and_activate() -> None:
    """A formula over two triggers: (lag + in flight) / 2 against activationTarget 20."""

    class Busy(Cluster):
        def samples(self) -> dict[int, Sample]:
            pod: Any = type("Pod", (), {"id": 1})()
            return {1: Sample(1, pod, 0, 15 * SECOND, 100.0, in_flight=30, concurrency=0.0, rps=0.0, cpu_request=500)}

    lag = KafkaScaler(0, "lag", "AverageValue", topic="t", lag_threshold=50, activation_lag_threshold=1000)
    flight = PrometheusScaler(
        1, "flight", "AverageValue", measures="in_flight", threshold=1.0, activation_threshold=1000
    )
    modifiers = ScalingModifiers(parse("(lag + flight) / 2", {"lag", "flight"}), target=10.0, activation_target=20.0)
    spec = ScaledObjectSpec("web", (lag, flight), ExecutorSpec(min_replicas=0), modifiers=modifiers)
    keda, _ = run(spec, lambda env: Busy(env, 0, lambda t: 16 if t < 60 * SECOND else 8), 100 * SECOND)
    first, _, third = keda.decisions[:3]
    assert (first.composite, first.active) == ((16 + 30) / 2, True)  # 23 > 20, though neither trigger is
    assert first.desired == 1
    assert (third.composite, third.active) == ((8 + 30) / 2, False)  # 19
