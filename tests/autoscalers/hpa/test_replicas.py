"""The HPA replica calculator against upstream's replica_calculator_test.go, case by case.

The cases restate upstream's data (kubernetes/kubernetes pkg/controller/podautoscaler); the
expected values are upstream's. Upstream's harness (a 2 min CPU initialisation period and a 10 s
readiness delay, two containers per pod, samples stamped at Go's zero time, "hot" and "cool"
pods) is restated in `replica_calculator_harness`, which says what each part does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from skenario.autoscalers.hpa.replicas import (
    calculate_requests,
    get_external_metric_replicas,
    get_external_per_pod_metric_replicas,
    get_metric_replicas,
    get_object_metric_replicas,
    get_object_per_pod_metric_replicas,
    get_resource_replicas,
    group_pods,
)
from skenario.autoscalers.hpa.types import (
    CPU,
    MAX_INT32,
    MAX_INT64,
    MEMORY,
    ConditionStatus,
    HPAMetricError,
    ListedContainer,
    ListedPod,
    PodMetric,
    PodPhase,
    ReplicaCalculation,
    Tolerances,
)
from skenario.core.time import HOUR, MINUTE, SECOND
from tests.autoscalers.hpa.replica_calculator_harness import (
    COOL,
    FAIL,
    HOT,
    NOW,
    PEND,
    RUN,
    TEST_CPU_INIT,
    TEST_READINESS_DELAY,
    TEST_TOLERANCES,
    ZERO,
    F,
    T,
    custom_metrics,
    make_pods,
    per_container,
    resource_metrics,
)


def resource_replicas(
    current: int,
    target: int,
    requests: Sequence[int],
    levels: Sequence[Sequence[int]],
    *,
    container: str = "",
    readiness: Sequence[ConditionStatus] | None = None,
    start: Sequence[int] | None = None,
    phase: Sequence[PodPhase] | None = None,
    deleted: Sequence[bool] | None = None,
    pod_names: Sequence[str] = (),
    tolerances: Tolerances = TEST_TOLERANCES,
) -> ReplicaCalculation:
    """One run of upstream's resource harness: pods are max(current, len(phase))."""
    count = max(current, len(phase) if phase else 0)
    pods = make_pods(count, requests, readiness=readiness, start=start, phase=phase, deleted=deleted)
    return get_resource_replicas(
        current,
        target,
        CPU,
        pods,
        resource_metrics(levels, container, pod_names),
        NOW,
        tolerances=tolerances,
        container=container,
        cpu_initialization_period=TEST_CPU_INIT,
        initial_readiness_delay=TEST_READINESS_DELAY,
    )


@dataclass(frozen=True)
class ResourceCase:
    name: str
    current: int
    target: int
    requests: list[int]
    levels: list[list[int]]
    replicas: int
    utilization: int
    raw: int
    container: str = ""
    readiness: list[ConditionStatus] | None = None
    start: list[int] | None = None
    phase: list[PodPhase] | None = None
    deleted: list[bool] | None = None


R1 = 1000  # "1.0" CPU, per container
RUN5_FAIL2 = [RUN] * 5 + [FAIL] * 2
READY5_UNREADY2 = [T] * 5 + [F] * 2

# TestReplicaCalcResourceScale, all 24 subtests.
RESOURCE_SCALE_CASES = [
    ResourceCase("scale up", 3, 30, [R1] * 3, per_container(300, 500, 700), 5, 50, 1000),
    ResourceCase(
        "scale up: container metric",
        3,
        30,
        [R1] * 3,
        [[1000, 300], [1000, 500], [1000, 700]],
        5,
        50,
        500,
        container="container2",
    ),
    ResourceCase(
        "scale up: unready pod scales less",
        3,
        30,
        [R1] * 3,
        per_container(300, 500, 700),
        4,
        60,
        1200,
        readiness=[F, T, T],
    ),
    ResourceCase(
        "scale up: hot-CPU container scales less",
        3,
        30,
        [R1] * 3,
        [[0, 300], [0, 500], [0, 700]],
        4,
        60,
        600,
        container="container2",
        start=[HOT, COOL, COOL],
    ),
    ResourceCase(
        "scale up: hot-CPU pod scales less",
        3,
        30,
        [R1] * 3,
        per_container(300, 500, 700),
        4,
        60,
        1200,
        start=[HOT, COOL, COOL],
    ),
    ResourceCase(
        "no scale: unready pods ignored", 3, 30, [R1] * 3, per_container(400, 500, 700), 3, 40, 800, readiness=[T, F, F]
    ),
    ResourceCase(
        "no scale: hot-CPU pods ignored",
        3,
        30,
        [R1] * 3,
        per_container(400, 500, 700),
        3,
        40,
        800,
        readiness=[T, F, F],
        start=[COOL, HOT, HOT],
    ),
    ResourceCase(
        "scale up: failed pods ignored",
        2,
        30,
        [R1] * 4,
        per_container(500, 700),
        4,
        60,
        1200,
        readiness=[T, T, F, F],
        phase=[RUN, RUN, FAIL, FAIL],
    ),
    ResourceCase(
        "scale up: failed pods ignored with missing container metric",
        2,
        30,
        [R1] * 4,
        [[1000, 500], [9000, 700], [1000], [9000]],
        4,
        60,
        600,
        container="container2",
        readiness=[T, T, F, F],
        phase=[RUN, RUN, FAIL, FAIL],
    ),
    ResourceCase(
        "scale up: container metrics with failed pods ignored",
        2,
        30,
        [R1] * 4,
        [[1000, 500], [9000, 700]],
        4,
        60,
        600,
        container="container2",
        readiness=[T, T, F, F],
        phase=[RUN, RUN, FAIL, FAIL],
    ),
    ResourceCase(
        "scale up: pods being deleted are ignored",
        2,
        30,
        [R1] * 4,
        per_container(500, 700),
        4,
        60,
        1200,
        readiness=[T, T, F, F],
        phase=[RUN] * 4,
        deleted=[False, False, True, True],
    ),
    ResourceCase(
        "scale up: container metrics with pods being deleted ignored",
        2,
        30,
        [R1] * 4,
        per_container(500, 700),
        4,
        60,
        600,
        container="container1",
        readiness=[T, T, F, F],
        phase=[RUN] * 4,
        deleted=[False, False, True, True],
    ),
    ResourceCase("scale down", 5, 50, [R1] * 5, per_container(100, 300, 500, 250, 250), 3, 28, 560),
    ResourceCase(
        "scale down: container metric",
        5,
        50,
        [R1] * 5,
        [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
        3,
        28,
        280,
        container="container2",
    ),
    ResourceCase(
        "scale down: exclude unready pods",
        5,
        50,
        [R1] * 5,
        per_container(100, 300, 500, 250, 250),
        2,
        30,
        600,
        readiness=[T, T, T, F, F],
    ),
    ResourceCase(
        "scale down: container metric excludes unready pods",
        5,
        50,
        [R1] * 5,
        [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
        2,
        30,
        300,
        container="container2",
        readiness=[T, T, T, F, F],
    ),
    ResourceCase(
        "scale down: exclude unscheduled pods",
        5,
        50,
        [R1] * 5,
        per_container(100),
        1,
        10,
        200,
        readiness=[T, F, F, F, F],
        phase=[RUN, PEND, PEND, PEND, PEND],
    ),
    ResourceCase(
        "scale down: container metric excludes unscheduled pods",
        5,
        50,
        [R1] * 5,
        [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
        1,
        10,
        100,
        container="container2",
        readiness=[T, F, F, F, F],
        phase=[RUN, PEND, PEND, PEND, PEND],
    ),
    ResourceCase(
        "scale down: ignore hot-CPU pods",
        5,
        50,
        [R1] * 5,
        per_container(100, 300, 500, 250, 250),
        2,
        30,
        600,
        start=[COOL, COOL, COOL, HOT, HOT],
    ),
    ResourceCase(
        "scale down: container metric ignores hot-CPU pods",
        5,
        50,
        [R1] * 5,
        [[1000, 100], [1000, 300], [1000, 500], [1000, 1000], [1000, 1000]],
        2,
        30,
        300,
        container="container2",
        start=[COOL, COOL, COOL, HOT, HOT],
    ),
    ResourceCase(
        "scale down: failed pods ignored",
        5,
        50,
        [R1] * 7,
        per_container(100, 300, 500, 250, 250),
        3,
        28,
        560,
        readiness=READY5_UNREADY2,
        phase=RUN5_FAIL2,
    ),
    ResourceCase(
        "scale down: container metric with failed pods ignored",
        5,
        50,
        [R1] * 7,
        [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
        3,
        28,
        280,
        container="container2",
        readiness=READY5_UNREADY2,
        phase=RUN5_FAIL2,
    ),
    ResourceCase(
        "scale down: pods being deleted are ignored",
        5,
        50,
        [R1] * 7,
        per_container(100, 300, 500, 250, 250),
        3,
        28,
        560,
        readiness=READY5_UNREADY2,
        phase=[RUN] * 7,
        deleted=[False] * 5 + [True] * 2,
    ),
    ResourceCase(
        "scale down: still-running pods being deleted are ignored",
        5,
        50,
        [R1] * 7,
        [[1000, 100], [1000, 300], [1000, 500], [1000, 250], [1000, 250]],
        3,
        28,
        280,
        container="container2",
        readiness=READY5_UNREADY2,
        phase=[RUN] * 7,
        deleted=[False] * 5 + [True] * 2,
    ),
]


@pytest.mark.parametrize("case", RESOURCE_SCALE_CASES, ids=[c.name for c in RESOURCE_SCALE_CASES])
def test_resource_scale(case: ResourceCase) -> None:
    got = resource_replicas(
        case.current,
        case.target,
        case.requests,
        case.levels,
        container=case.container,
        readiness=case.readiness,
        start=case.start,
        phase=case.phase,
        deleted=case.deleted,
    )
    assert (got.replicas, got.utilization, got.usage) == (case.replicas, case.utilization, case.raw)


# Single-function upstream tests on the resource path: (name, current, target, requests, levels, kwargs,
# expected replicas, utilization, raw average).
RESOURCE_SINGLE_CASES = [
    ("TestReplicaCalcTolerance", 3, 100, [900, 1000, 1100], per_container(1010, 1030, 1020), {}, 3, 102, 2040),
    (
        "TestReplicaCalcSuperfluousMetrics",
        4,
        100,
        [R1] * 4,
        per_container(4000, 9500, 3000, 7000, 3200, 2000),
        {},
        24,
        587,
        11750,
    ),
    # 2 of 4 pods report: 990m of 4000m is 24%; the missing two count at 100% of request: 62%, 3 pods.
    ("TestReplicaCalcMissingMetrics", 4, 100, [R1] * 4, per_container(400, 95), {}, 3, 24, 495),
    ("TestReplicaCalcMissingMetricsNoChangeEq", 2, 100, [R1] * 2, per_container(1000), {}, 2, 100, 2000),
    ("TestReplicaCalcMissingMetricsNoChangeGt", 2, 100, [R1] * 2, per_container(1900), {}, 2, 190, 3800),
    ("TestReplicaCalcMissingMetricsNoChangeLt", 2, 100, [R1] * 2, per_container(600), {}, 2, 60, 1200),
    (
        "TestReplicaCalcMissingMetricsUnreadyChange",
        3,
        50,
        [R1] * 3,
        per_container(100, 450),
        {"readiness": [F, T, T]},
        3,
        45,
        900,
    ),
    (
        "TestReplicaCalcMissingMetricsHotCpuNoChange",
        3,
        50,
        [R1] * 3,
        per_container(100, 450),
        {"start": [HOT, COOL, COOL]},
        3,
        45,
        900,
    ),
    (
        "TestReplicaCalcMissingMetricsUnreadyScaleUp",
        3,
        50,
        [R1] * 3,
        per_container(100, 2000),
        {"readiness": [F, T, T]},
        4,
        200,
        4000,
    ),
    (
        "TestReplicaCalcMissingMetricsHotCpuScaleUp",
        3,
        50,
        [R1] * 3,
        per_container(100, 2000),
        {"readiness": [F, T, T], "start": [HOT, COOL, COOL]},
        4,
        200,
        4000,
    ),
    (
        "TestReplicaCalcMissingMetricsUnreadyScaleDown",
        4,
        50,
        [R1] * 4,
        per_container(100, 100, 100),
        {"readiness": [F, T, T, T]},
        3,
        10,
        200,
    ),
    (
        "TestReplicaCalcMissingMetricsScaleDownTargetOver100",
        4,
        300,
        [R1, R1, 2000, 2000],
        per_container(200, 100, 100),
        {"readiness": [F, T, T, T]},
        2,
        6,
        200,
    ),
    (
        "TestReplicaCalcDuringRollingUpdateWithMaxSurge",
        2,
        50,
        [R1] * 3,
        per_container(100, 100),
        {"phase": [RUN, RUN, RUN]},
        2,
        10,
        200,
    ),
]


@pytest.mark.parametrize(
    ("current", "target", "requests", "levels", "kwargs", "replicas", "utilization", "raw"),
    [c[1:] for c in RESOURCE_SINGLE_CASES],
    ids=[c[0] for c in RESOURCE_SINGLE_CASES],
)
def test_resource_single_cases(
    current: int,
    target: int,
    requests: list[int],
    levels: list[list[int]],
    kwargs: dict[str, object],
    replicas: int,
    utilization: int,
    raw: int,
) -> None:
    got = resource_replicas(current, target, requests, levels, **kwargs)  # type: ignore[arg-type]
    assert (got.replicas, got.utilization, got.usage) == (replicas, utilization, raw)


CONFIGURABLE_TOLERANCE_CASES = [
    ("Outside of a 0% tolerance", Tolerances(0.0, 0.0), per_container(909, 1010, 1111), 4, 101, 2020),
    ("Within a 200% scale-up tolerance", Tolerances(0.1, 2.0), per_container(1890, 1910, 1900), 3, 190, 3800),
    ("Outside 8% scale-up tolerance", Tolerances(2.0, 0.08), per_container(1100, 1080, 1090), 4, 109, 2180),
    ("Within a 36% scale-down tolerance", Tolerances(0.36, 0.1), per_container(660, 640, 650), 3, 65, 1300),
    ("Outside a 34% scale-down tolerance", Tolerances(0.34, 0.1), per_container(660, 640, 650), 2, 65, 1300),
]


@pytest.mark.parametrize(
    ("tolerances", "levels", "replicas", "utilization", "raw"),
    [c[1:] for c in CONFIGURABLE_TOLERANCE_CASES],
    ids=[c[0] for c in CONFIGURABLE_TOLERANCE_CASES],
)
def test_configurable_tolerance(
    tolerances: Tolerances, levels: list[list[int]], replicas: int, utilization: int, raw: int
) -> None:
    """TestReplicaCalcConfigurableTolerance: per-direction tolerances (KEP-4951)."""
    got = resource_replicas(3, 100, [900, 1000, 1100], levels, tolerances=tolerances)
    assert (got.replicas, got.utilization, got.usage) == (replicas, utilization, raw)


def test_computed_tolerance_alg_implementation() -> None:
    """TestReplicaCalcComputedToleranceAlgImplementation, with upstream's arithmetic done by hand.

    Ten pods use 150m per container (3000m in all) against requests averaging 300m per
    container (6000m): 50%. A target of int(100 * (1/(2 * 0.9) + 0.01)) = 56% gives a ratio of
    0.893, outside the 0.1 tolerance: ceil(8.93) = 9 pods. A target of int(100 * (1/1.8 + 0.004))
    = 55% gives 0.909, inside it: 10 pods stay.
    """
    requests = [400, 200, 310, 290, 302, 298, 301, 299, 300, 300]
    levels = per_container(*[150] * 10)
    got = resource_replicas(10, 56, requests, levels)
    assert (got.replicas, got.utilization, got.usage) == (9, 50, 300)
    got = resource_replicas(10, 55, requests, levels)
    assert (got.replicas, got.utilization, got.usage) == (10, 50, 300)


def test_disjoint_resource_metrics() -> None:
    """TestReplicaCalcDisjointResourcesMetrics: a sample for a pod no longer listed matches nothing."""
    with pytest.raises(HPAMetricError, match="no metrics returned matched known pods"):
        resource_replicas(1, 100, [R1], per_container(100), pod_names=["an-older-pod-name"])


def test_empty_metrics() -> None:
    """TestReplicaCalcEmptyMetrics."""
    with pytest.raises(HPAMetricError, match="unable to get metrics for resource cpu: no metrics returned"):
        resource_replicas(4, 100, [R1] * 3, [])


def test_empty_cpu_request() -> None:
    """TestReplicaCalcEmptyCPURequest."""
    with pytest.raises(HPAMetricError, match="missing request for"):
        resource_replicas(1, 100, [], per_container(200))


def pods_metric(
    current: int,
    target: int,
    levels: Sequence[int],
    *,
    readiness: Sequence[ConditionStatus] | None = None,
    start: Sequence[int] | None = None,
    phase: Sequence[PodPhase] | None = None,
    tolerances: Tolerances = TEST_TOLERANCES,
) -> ReplicaCalculation:
    count = max(current, len(phase) if phase else 0)
    pods = make_pods(count, readiness=readiness, start=start, phase=phase)
    return get_metric_replicas(current, target, "qps", pods, custom_metrics(levels), NOW, tolerances=tolerances)


# Pods (custom) metrics: (name, current, target, levels, kwargs, expected replicas, expected usage).
PODS_METRIC_CASES = [
    ("TestReplicaCalcScaleUpCM", 3, 15000, [20000, 10000, 30000], {}, 4, 20000),
    (
        "TestReplicaCalcScaleUpCMUnreadyHotCpuNoLessScale",
        3,
        15000,
        [50000, 10000, 30000],
        {"readiness": [T, T, F], "start": [COOL, COOL, HOT]},
        6,
        30000,
    ),
    (
        "TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown",
        3,
        15000,
        [50000, 15000, 30000],
        {"readiness": [F, T, F], "start": [HOT, COOL, HOT]},
        7,
        31666,
    ),
    ("TestReplicaCalcScaleDownCM", 5, 20000, [12000] * 5, {}, 3, 12000),
    ("TestReplicaCalcToleranceCM", 3, 20000, [20000, 21000, 21000], {}, 3, 20666),
    (
        "TestReplicaCalcConfigurableToleranceCM",
        3,
        20000,
        [20000, 21000, 21000],
        {"tolerances": Tolerances(0.1, 0.01)},
        4,
        20666,
    ),
    ("TestPlainMetricReplicaCalcMissingMetricsNoChangeEq", 5, 20000, [20000, 19000, 21000], {}, 5, 20000),
    (
        "TestReplicaCalcDuringRollingUpdateWithMaxSurgeCM",
        2,
        17000,
        [10000, 10000],
        {"phase": [RUN, RUN, RUN]},
        2,
        10000,
    ),
]


@pytest.mark.parametrize(
    ("current", "target", "levels", "kwargs", "replicas", "usage"),
    [c[1:] for c in PODS_METRIC_CASES],
    ids=[c[0] for c in PODS_METRIC_CASES],
)
def test_pods_metric(
    current: int, target: int, levels: list[int], kwargs: dict[str, object], replicas: int, usage: int
) -> None:
    got = pods_metric(current, target, levels, **kwargs)  # type: ignore[arg-type]
    assert (got.replicas, got.usage) == (replicas, usage)


# Object and External metrics: (name, kind, current, target, levels, tolerances, readiness, replicas, usage).
DEFAULT_TOL = TEST_TOLERANCES
CONF_TOL = Tolerances(0.1, 0.01)
OBJECT_EXTERNAL_CASES = [
    ("TestReplicaCalcScaleUpCMObject", "object", 3, 15000, [20000], DEFAULT_TOL, None, 4, 20000),
    ("TestReplicaCalcScaleUpCMPerPodObject", "objectPerPod", 3, 5000, [20000], DEFAULT_TOL, None, 4, 6667),
    ("TestReplicaCalcScaleUpCMObjectIgnoresUnreadyPods", "object", 3, 10000, [50000], DEFAULT_TOL, [F, T, F], 5, 50000),
    (
        "TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods",
        "external",
        3,
        4400,
        [8600],
        DEFAULT_TOL,
        [F, T, F],
        2,
        8600,
    ),
    ("TestReplicaCalcScaleUpPerPodCMExternal", "externalPerPod", 3, 2150, [8600], DEFAULT_TOL, None, 4, 2867),
    ("TestReplicaCalcScaleDownPerPodCMObject", "objectPerPod", 5, 2000, [6000], DEFAULT_TOL, None, 3, 1200),
    ("TestReplicaCalcScaleDownCMObject", "object", 5, 20000, [12000], DEFAULT_TOL, None, 3, 12000),
    ("TestReplicaCalcScaleDownCMExternal", "external", 5, 14334, [8600], DEFAULT_TOL, None, 3, 8600),
    ("TestReplicaCalcScaleDownPerPodCMExternal", "externalPerPod", 5, 2867, [8600], DEFAULT_TOL, None, 3, 1720),
    ("TestReplicaCalcToleranceCMObject", "object", 3, 20000, [20666], DEFAULT_TOL, None, 3, 20666),
    ("TestReplicaCalcTolerancePerPodCMObject", "objectPerPod", 4, 5000, [20166], DEFAULT_TOL, None, 4, 5042),
    ("TestReplicaCalcToleranceCMExternal", "external", 3, 8888, [8600], DEFAULT_TOL, None, 3, 8600),
    ("TestReplicaCalcTolerancePerPodCMExternal", "externalPerPod", 3, 2900, [8600], DEFAULT_TOL, None, 3, 2867),
    ("TestReplicaCalcConfigurableToleranceCMObject", "object", 3, 20000, [20666], CONF_TOL, None, 4, 20666),
    ("TestReplicaCalcConfigurableTolerancePerPodCMObject", "objectPerPod", 4, 5000, [20208], CONF_TOL, None, 5, 5052),
    ("TestReplicaCalcConfigurableToleranceCMExternal", "external", 3, 8800, [8900], CONF_TOL, None, 4, 8900),
    (
        "TestReplicaCalcConfigurableTolerancePerPodCMExternal",
        "externalPerPod",
        3,
        2800,
        [8600],
        CONF_TOL,
        None,
        4,
        2867,
    ),
    ("TestReplicaCalcScaleUpOverflow", "object", 3, 1, [MAX_INT64], DEFAULT_TOL, None, MAX_INT32, MAX_INT64),
    (
        "TestExternalPerPodMetricReplicaOverflow",
        "externalPerPod",
        1,
        1,
        [MAX_INT64],
        DEFAULT_TOL,
        None,
        MAX_INT32,
        MAX_INT64,
    ),
    (
        "TestExternalPerPodMetricUsageOverflow",
        "externalPerPod",
        1,
        MAX_INT64,
        [MAX_INT64],
        DEFAULT_TOL,
        None,
        1,
        MAX_INT64,
    ),
    (
        "TestReplicaCalcExternalMetricUsageOverflow",
        "external",
        3,
        MAX_INT64,
        [MAX_INT64 // 2 + 1, MAX_INT64 // 2 + 1],
        DEFAULT_TOL,
        None,
        3,
        MAX_INT64,
    ),
]


@pytest.mark.parametrize(
    ("kind", "current", "target", "levels", "tolerances", "readiness", "replicas", "usage"),
    [c[1:] for c in OBJECT_EXTERNAL_CASES],
    ids=[c[0] for c in OBJECT_EXTERNAL_CASES],
)
def test_object_and_external(
    kind: str,
    current: int,
    target: int,
    levels: list[int],
    tolerances: Tolerances,
    readiness: list[ConditionStatus] | None,
    replicas: int,
    usage: int,
) -> None:
    pods = make_pods(current, readiness=readiness)
    if kind == "object":
        got = get_object_metric_replicas(current, target, levels[0], pods, tolerances=tolerances)
    elif kind == "objectPerPod":
        got = get_object_per_pod_metric_replicas(current, target, levels[0], tolerances=tolerances)
    elif kind == "external":
        got = get_external_metric_replicas(current, target, levels, pods, tolerances=tolerances)
    else:
        got = get_external_per_pod_metric_replicas(current, target, levels, tolerances=tolerances)
    assert (got.replicas, got.usage) == (replicas, usage)


# TestGroupPods: (name, pods, metrics, resource, ready count, unready, missing, ignored).
GROUP_PODS_CASES = [
    ("void", [], {}, CPU, 0, set(), set(), set()),
    (
        "count in a ready pod - memory",
        [ListedPod("bentham", phase=PodPhase.SUCCEEDED, ready=None, start_time=None)],
        {"bentham": PodMetric(1, NOW, MINUTE)},
        MEMORY,
        1,
        set(),
        set(),
        set(),
    ),
    (
        "unready a pod without ready condition - CPU",
        [ListedPod("lucretius", phase=PodPhase.SUCCEEDED, ready=None, start_time=NOW)],
        {"lucretius": PodMetric(1)},
        CPU,
        0,
        {"lucretius"},
        set(),
        set(),
    ),
    (
        "count in a ready pod with fresh metrics during initialization period - CPU",
        [ListedPod("bentham", PodPhase.SUCCEEDED, T, NOW - 30 * SECOND, NOW - MINUTE)],
        {"bentham": PodMetric(1, NOW, 30 * SECOND)},
        CPU,
        1,
        set(),
        set(),
        set(),
    ),
    (
        "unready a ready pod without fresh metrics during initialization period - CPU",
        [ListedPod("bentham", PodPhase.SUCCEEDED, T, NOW - 30 * SECOND, NOW - MINUTE)],
        {"bentham": PodMetric(1, NOW, 60 * SECOND)},
        CPU,
        0,
        {"bentham"},
        set(),
        set(),
    ),
    (
        "unready an unready pod during initialization period - CPU",
        [ListedPod("lucretius", PodPhase.SUCCEEDED, F, NOW - 9 * MINUTE - 54 * SECOND, NOW - 10 * MINUTE)],
        {"lucretius": PodMetric(1)},
        CPU,
        0,
        {"lucretius"},
        set(),
        set(),
    ),
    (
        "count in a ready pod without fresh metrics after initialization period - CPU",
        [ListedPod("bentham", PodPhase.SUCCEEDED, T, NOW - 3 * MINUTE, NOW - 3 * MINUTE)],
        {"bentham": PodMetric(1, NOW - 2 * MINUTE, MINUTE)},
        CPU,
        1,
        set(),
        set(),
        set(),
    ),
    (
        "count in an unready pod that was ready after initialization period - CPU",
        [ListedPod("lucretius", PodPhase.SUCCEEDED, F, NOW - 9 * MINUTE, NOW - 10 * MINUTE)],
        {"lucretius": PodMetric(1)},
        CPU,
        1,
        set(),
        set(),
        set(),
    ),
    (
        "unready pod that has never been ready after initialization period - CPU",
        [ListedPod("lucretius", PodPhase.SUCCEEDED, F, NOW - 9 * MINUTE - 50 * SECOND, NOW - 10 * MINUTE)],
        {"lucretius": PodMetric(1)},
        CPU,
        1,
        set(),
        set(),
        set(),
    ),
    (
        "a missing pod",
        [ListedPod("epicurus", PodPhase.SUCCEEDED, None, start_time=NOW - 3 * MINUTE)],
        {},
        CPU,
        0,
        set(),
        {"epicurus"},
        set(),
    ),
    (
        "several pods",
        [
            ListedPod("lucretius", PodPhase.SUCCEEDED, None, start_time=NOW),
            ListedPod("niccolo", PodPhase.SUCCEEDED, T, NOW - 3 * MINUTE, NOW - 3 * MINUTE),
            ListedPod("epicurus", PodPhase.SUCCEEDED, None, start_time=NOW - 3 * MINUTE),
        ],
        {"lucretius": PodMetric(1), "niccolo": PodMetric(1)},
        CPU,
        1,
        {"lucretius"},
        {"epicurus"},
        set(),
    ),
    (
        "pending pods are unreadied",
        [ListedPod("unscheduled", PEND, None, start_time=None)],
        {},
        CPU,
        0,
        {"unscheduled"},
        set(),
        set(),
    ),
    (
        "ignore pods with deletion timestamps",
        [ListedPod("deleted", PEND, None, start_time=None, deletion_time=1 * SECOND)],
        {"deleted": PodMetric(1)},
        CPU,
        0,
        set(),
        set(),
        {"deleted"},
    ),
    (
        "ignore pods in a failed state",
        [ListedPod("failed", FAIL, None, start_time=None)],
        {"failed": PodMetric(1)},
        CPU,
        0,
        set(),
        set(),
        {"failed"},
    ),
]


@pytest.mark.parametrize(
    ("pods", "metrics", "resource", "ready", "unready", "missing", "ignored"),
    [c[1:] for c in GROUP_PODS_CASES],
    ids=[c[0] for c in GROUP_PODS_CASES],
)
def test_group_pods(
    pods: list[ListedPod],
    metrics: dict[str, PodMetric],
    resource: str,
    ready: int,
    unready: set[str],
    missing: set[str],
    ignored: set[str],
) -> None:
    got = group_pods(
        pods,
        metrics,
        resource,
        NOW,
        cpu_initialization_period=TEST_CPU_INIT,
        initial_readiness_delay=TEST_READINESS_DELAY,
    )
    assert (got.ready_count, got.unready, got.missing, got.ignored) == (ready, unready, missing, ignored)


C100 = ListedContainer("container1", {CPU: 100})
C50 = ListedContainer("container2", {CPU: 50})

# TestCalculateRequests: (name, pod, container, pod-level gate, expected request or error text).
CALCULATE_REQUESTS_CASES = [
    (
        "Sum container requests if pod-level feature is disabled",
        ListedPod("test-pod", containers=(C100, C50)),
        "",
        False,
        150,
    ),
    (
        "Pod-level resources are enabled, but not set: fallback to sum container requests",
        ListedPod("test-pod", containers=(C100, C50)),
        "",
        True,
        150,
    ),
    (
        "Pod-level resources override container requests when feature enabled and pod resources specified",
        ListedPod("test-pod", containers=(C100, C50), requests={CPU: 800}),
        "",
        True,
        800,
    ),
    (
        "Fail if at least one of the containers is missing requests and pod-level feature/requests are not set",
        ListedPod("test-pod", containers=(ListedContainer("container1"), C50)),
        "",
        False,
        "missing request for cpu in container container1 of Pod test-pod",
    ),
    (
        "Pod-level resources override missing container requests when feature enabled and pod resources specified",
        ListedPod("test-pod", containers=(ListedContainer("container1"), C50), requests={CPU: 800}),
        "",
        True,
        800,
    ),
    (
        "Container: if a container name is specified, calculate requests only for that container",
        ListedPod("test-pod", containers=(C100, C50)),
        "container1",
        False,
        100,
    ),
    (
        "Container: if a container name is specified, calculate requests only for that container and ignore pod-level",
        ListedPod("test-pod", containers=(C100, C50), requests={CPU: 800}),
        "container1",
        True,
        100,
    ),
    (
        "pod with restartable init containers",
        ListedPod(
            "test-pod",
            containers=(C100,),
            init_containers=(
                ListedContainer("init-container1", {CPU: 20}),
                ListedContainer("restartable-container1", {CPU: 50}, restart_policy_always=True),
            ),
        ),
        "",
        False,
        150,
    ),
    (
        "TestCalculatePodRequestsFromContainers_NonExistentContainer",
        ListedPod("test-pod", containers=(ListedContainer("container1", {CPU: 100}),)),
        "non-existent-container",
        False,
        "container non-existent-container not found in Pod test-pod",
    ),
]


@pytest.mark.parametrize(
    ("pod", "container", "gate", "expected"),
    [c[1:] for c in CALCULATE_REQUESTS_CASES],
    ids=[c[0] for c in CALCULATE_REQUESTS_CASES],
)
def test_calculate_requests(pod: ListedPod, container: str, gate: bool, expected: int | str) -> None:
    if isinstance(expected, str):
        with pytest.raises(HPAMetricError) as err:
            calculate_requests([pod], container, CPU, pod_level_resources=gate)
        assert str(err.value) == expected
    else:
        assert calculate_requests([pod], container, CPU, pod_level_resources=gate) == {"test-pod": expected}


def test_calculate_requests_void() -> None:
    assert calculate_requests([], "", CPU) == {}


def test_production_cpu_initialization_period() -> None:
    """With the 5 min production period a pod started 3 min ago is still initialising: its sample,
    taken less than a window after it turned ready, is left out (the harness's 2 min would use it)."""
    pod = ListedPod("p", ready=T, ready_transition_time=NOW - 3 * MINUTE + 20 * SECOND, start_time=NOW - 3 * MINUTE)
    stale = {"p": PodMetric(1, timestamp=NOW - 3 * MINUTE + 30 * SECOND, window=MINUTE)}
    assert group_pods([pod], stale, CPU, NOW).unready == {"p"}
    harness = group_pods([pod], stale, CPU, NOW, cpu_initialization_period=TEST_CPU_INIT)
    assert harness.ready_count == 1


def test_production_readiness_delay() -> None:
    """A pod that turned unready 20 s after starting, past the init period: with the 30 s delay it
    counts as never ready (ignored); with the harness's 10 s it was ready once (counted)."""
    pod = ListedPod("p", ready=F, ready_transition_time=NOW - 10 * MINUTE + 20 * SECOND, start_time=NOW - 10 * MINUTE)
    metrics = {"p": PodMetric(1)}
    assert group_pods([pod], metrics, CPU, NOW).unready == {"p"}
    assert group_pods([pod], metrics, CPU, NOW, initial_readiness_delay=TEST_READINESS_DELAY).ready_count == 1


def test_readiness_unknown_is_neither_ready_nor_unready() -> None:
    """A Ready condition of Unknown is not False, so after the init period the CPU sample is used;
    but the pod is not ready for the Object metric's ready-pod count."""
    pod = ListedPod("p", ready=ConditionStatus.UNKNOWN, start_time=NOW - HOUR)
    assert group_pods([pod], {"p": PodMetric(1)}, CPU, NOW).ready_count == 1
    assert get_object_metric_replicas(1, 100, 200, [pod, ListedPod("q")]).replicas == 2  # ceil(2.0 x 1 ready pod)


# Properties.
@given(
    target=st.integers(1, 10**6),
    deviations=st.lists(st.floats(-0.09, 0.09), min_size=1, max_size=30),
    current=st.integers(1, 50),
)
def test_within_tolerance_replicas_unchanged(target: int, deviations: list[float], current: int) -> None:
    """A Pods metric whose mean is within 10% of the target never changes the replica count."""
    values = [max(0, round(target * (1 + d))) for d in deviations]
    mean = sum(values) // len(values)
    assume(0.9 <= mean / target <= 1.1)
    pods = make_pods(len(values))
    got = get_metric_replicas(current, target, "qps", pods, custom_metrics(values), NOW)
    assert got.replicas == current


@given(
    target=st.integers(10, 200),
    requests=st.lists(st.integers(1, 40).map(lambda k: 100 * k), min_size=1, max_size=20),
)
def test_usage_at_target_keeps_replicas(target: int, requests: list[int]) -> None:
    """Pods each using exactly target% of their request (whole millicores) sit at ratio 1: no change."""
    pods = [ListedPod(f"p{i}", containers=(ListedContainer("c", {CPU: r}),)) for i, r in enumerate(requests)]
    metrics = {f"p{i}": PodMetric(r * target // 100) for i, r in enumerate(requests)}
    got = get_resource_replicas(len(pods), target, CPU, pods, metrics, NOW)
    assert (got.replicas, got.utilization, got.usage_ratio) == (len(pods), target, 1.0)


STATES = st.sampled_from(["ready", "unready", "missing", "hot"])


@given(
    target=st.integers(10, 300),
    pods_spec=st.lists(st.tuples(STATES, st.integers(0, 5000), st.integers(100, 2000)), min_size=1, max_size=20),
)
def test_never_moves_against_the_usage_ratio(target: int, pods_spec: list[tuple[str, int, int]]) -> None:
    """Rebalancing missing and unready pods may cancel a change but never reverses its direction."""
    pods = []
    metrics = {}
    for i, (state, usage, request) in enumerate(pods_spec):
        name = f"p{i}"
        ready = F if state == "unready" else T
        start = NOW if state == "hot" else ZERO
        pods.append(ListedPod(name, ready=ready, start_time=start, containers=(ListedContainer("c", {CPU: request}),)))
        if state != "missing":
            metrics[name] = PodMetric(usage, timestamp=ZERO, window=MINUTE)
    assume(any(state == "ready" for state, _, _ in pods_spec))
    current = len(pods)
    got = get_resource_replicas(current, target, CPU, pods, metrics, NOW)
    if got.usage_ratio > 1.0:
        assert got.replicas >= current
    elif got.usage_ratio < 1.0:
        assert got.replicas <= current
    else:
        assert got.replicas == current
