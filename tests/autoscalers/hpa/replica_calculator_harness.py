"""Upstream's replica calculator test harness (replica_calculator_test.go), restated for the HPA tests.

kubernetes/kubernetes pkg/controller/podautoscaler's fake pod lister and metrics clients; no test
code is copied:

- the calculator runs with a CPU initialisation period of 2 min and a readiness delay of 10 s
  (production: 5 min and 30 s), and a tolerance of 0.1;
- every pod has two containers, `container1` and `container2`, and a pod's request level is
  given to *each* container; a metric level is per container too, and a pod's Resource metric
  is the sum over its containers (so "1.0" CPU makes a 2000m pod);
- samples are stamped at Go's zero time with a 1 min window, and pods whose start time is not
  given started at the zero time with their Ready condition last changed then; "hot" pods
  started now and "cool" ones 3 min ago. Go's zero time is far before `NOW` here.
"""

from __future__ import annotations

from collections.abc import Sequence

from skenario.autoscalers.hpa.types import (
    CPU,
    ConditionStatus,
    ListedContainer,
    ListedPod,
    PodMetric,
    PodPhase,
    Tolerances,
)
from skenario.core.time import HOUR, MINUTE, SECOND

# replica_calculator_test.go's harness constants (defaultTesting*).
TEST_CPU_INIT = 2 * MINUTE
TEST_READINESS_DELAY = 10 * SECOND
TEST_TOLERANCES = Tolerances(0.1, 0.1)

NOW = 2 * HOUR
ZERO = 0  # Go's zero time, long before NOW
HOT = NOW  # hotCPUCreationTime
COOL = NOW - 3 * MINUTE  # coolCPUCreationTime
T, F = ConditionStatus.TRUE, ConditionStatus.FALSE
RUN, PEND, FAIL = PodPhase.RUNNING, PodPhase.PENDING, PodPhase.FAILED
CONTAINERS = ("container1", "container2")


def make_pods(
    count: int,
    requests: Sequence[int] = (),
    *,
    readiness: Sequence[ConditionStatus] | None = None,
    start: Sequence[int] | None = None,
    phase: Sequence[PodPhase] | None = None,
    deleted: Sequence[bool] | None = None,
) -> list[ListedPod]:
    """Upstream's fake pod lister: `requests[i]` (milli) on each of pod i's two containers."""
    pods = []
    for i in range(count):
        req = {CPU: requests[i]} if i < len(requests) else {}
        pods.append(
            ListedPod(
                name=f"test-pod-{i}",
                phase=phase[i] if phase else RUN,
                ready=readiness[i] if readiness and i < len(readiness) else T,
                ready_transition_time=ZERO,
                start_time=start[i] if start else ZERO,
                deletion_time=NOW if deleted and deleted[i] else None,
                containers=tuple(ListedContainer(name, req) for name in CONTAINERS),
            )
        )
    return pods


def per_container(*levels: int) -> list[list[int]]:
    """makePodMetricLevels: every container of pod i reports levels[i]."""
    return [[level, level] for level in levels]


def resource_metrics(
    levels: Sequence[Sequence[int]], container: str = "", pod_names: Sequence[str] = ()
) -> dict[str, PodMetric]:
    """Upstream's fake metrics-server: a pod's sum over containers, or the named container's usage."""
    metrics = {}
    for i, pod_levels in enumerate(levels):
        name = pod_names[i] if i < len(pod_names) else f"test-pod-{i}"
        if container:
            index = CONTAINERS.index(container)
            if index >= len(pod_levels):
                continue
            value = pod_levels[index]
        else:
            value = sum(pod_levels)
        metrics[name] = PodMetric(value, timestamp=ZERO, window=MINUTE)
    return metrics


def custom_metrics(levels: Sequence[int]) -> dict[str, PodMetric]:
    return {f"test-pod-{i}": PodMetric(level, timestamp=ZERO) for i, level in enumerate(levels)}
