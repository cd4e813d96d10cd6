"""The HPA's metric combination (`computeReplicasForMetrics`): the largest proposal wins.

A failed metric blocks a scale-down but not a scale-up. Pods and samples come from upstream's
replica calculator harness (`replica_calculator_harness`); a test that restates an upstream case
(horizontal_test.go, at the calculator level) names it in its docstring.
"""

from __future__ import annotations

from skenario.autoscalers.hpa.config import HPAControllerConfig
from skenario.autoscalers.hpa.metrics import compute_replicas_for_metrics
from skenario.autoscalers.hpa.types import (
    CPU,
    AverageValueTarget,
    ContainerResourceMetricSource,
    ExternalMetricSource,
    ListedPod,
    MetricReading,
    ObjectMetricSource,
    PodMetric,
    PodsMetricSource,
    ResourceMetricSource,
    UtilizationTarget,
    ValueTarget,
)
from tests.autoscalers.hpa.replica_calculator_harness import NOW, ZERO, custom_metrics, make_pods


# computeReplicasForMetrics: several metrics, the largest wins; failures block only scale-downs.
def _pods3() -> list[ListedPod]:
    return make_pods(3, [500] * 3, start=[ZERO] * 3)


def test_compute_replicas_for_metrics_takes_the_largest() -> None:
    """CPU asks for 5 (50% against 30%); the Pods metric for 4 (avg 20 against 15): 5 wins."""
    specs = [
        ResourceMetricSource(CPU, UtilizationTarget(30)),
        PodsMetricSource("qps", AverageValueTarget(15000)),
    ]
    readings = [
        MetricReading(pod_metrics={f"test-pod-{i}": PodMetric(v) for i, v in enumerate([300, 500, 700])}),
        MetricReading(pod_metrics=custom_metrics([20000, 10000, 30000])),
    ]
    got = compute_replicas_for_metrics(specs, readings, spec_replicas=3, status_replicas=3, pods=_pods3(), now=NOW)
    assert got.replicas == 5
    assert got.metric == "cpu resource utilization (percentage of request)"
    assert [p.replicas if p else None for p in got.proposals] == [5, 4]
    assert got.error is None


def test_compute_replicas_for_metrics_invalid_metric_allows_scale_up() -> None:
    """TestScaleUpOneMetricEmpty, calculator level: the External metric fails, CPU asks for 4 > 3."""
    specs = [ResourceMetricSource(CPU, UtilizationTarget(30)), ExternalMetricSource("qps", ValueTarget(100))]
    readings = [MetricReading(pod_metrics={f"test-pod-{i}": PodMetric(v) for i, v in enumerate([300, 400, 500])}), None]
    got = compute_replicas_for_metrics(specs, readings, spec_replicas=3, status_replicas=3, pods=_pods3(), now=NOW)
    assert got.replicas == 4
    assert got.error is not None and got.error.startswith("invalid metrics (1 invalid out of 2)")


def test_compute_replicas_for_metrics_invalid_metric_blocks_scale_down() -> None:
    """TestNoScaleDownOneMetricEmpty, calculator level: CPU asks for 3 < 5, the other metric failed."""
    pods = make_pods(5, [500] * 5)
    specs = [ResourceMetricSource(CPU, UtilizationTarget(50)), ExternalMetricSource("qps", ValueTarget(1000))]
    levels = [100, 300, 500, 250, 250]
    readings = [MetricReading(pod_metrics={f"test-pod-{i}": PodMetric(v) for i, v in enumerate(levels)}), None]
    got = compute_replicas_for_metrics(specs, readings, spec_replicas=5, status_replicas=5, pods=pods, now=NOW)
    assert got.replicas is None
    assert got.proposals[0] is not None and got.proposals[0].replicas == 3


def test_compute_replicas_for_metrics_all_invalid() -> None:
    specs = [ObjectMetricSource("qps", ValueTarget(1000)), ExternalMetricSource("qps", ValueTarget(1000))]
    got = compute_replicas_for_metrics(specs, [None, None], spec_replicas=3, status_replicas=3, pods=_pods3(), now=NOW)
    assert got.replicas is None
    assert got.error == "invalid metrics (2 invalid out of 2), first error is: unable to get metric qps"


def test_compute_replicas_for_metrics_tolerance_from_config() -> None:
    """Without per-HPA tolerances the controller flag applies: a mean 5% over target is within 0.1
    but not within a 0.01 flag."""
    pods = make_pods(3)
    spec = [PodsMetricSource("qps", AverageValueTarget(20000))]
    reading = [MetricReading(pod_metrics=custom_metrics([21000] * 3))]
    kwargs = {"spec_replicas": 3, "status_replicas": 3, "pods": pods, "now": NOW}
    assert compute_replicas_for_metrics(spec, reading, **kwargs).replicas == 3  # type: ignore[arg-type]
    tight = HPAControllerConfig(tolerance=0.01)
    assert compute_replicas_for_metrics(spec, reading, config=tight, **kwargs).replicas == 4  # type: ignore[arg-type]


def test_compute_replicas_for_metric_target_kinds() -> None:
    """Object and External AverageValue use the status replicas; Value targets the spec replicas."""
    pods = make_pods(4)
    per_pod = ObjectMetricSource("qps", AverageValueTarget(5000))
    got = compute_replicas_for_metrics(
        [per_pod], [MetricReading(value=20000)], spec_replicas=3, status_replicas=4, pods=pods, now=NOW
    )
    assert got.replicas == 4  # 20000 / (5000 x 4 status replicas) = 1.0: unchanged from status
    container = ContainerResourceMetricSource(CPU, "container2", AverageValueTarget(300))
    reading = MetricReading(pod_metrics={f"test-pod-{i}": PodMetric(600) for i in range(4)})
    got = compute_replicas_for_metrics([container], [reading], spec_replicas=4, status_replicas=4, pods=pods, now=NOW)
    assert got.replicas == 8  # mean 600m against 300m: ratio 2, 4 ready pods
