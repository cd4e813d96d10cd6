"""The VPA updater against upstream kubernetes/autoscaler, case by case.

Each `test_upstream_*` restates one upstream unit test (named in its docstring) with its data;
amounts are milli-units (millicores for CPU). Other expected values are worked out by hand from the
formulas in `../shared/reference/autoscaler-algorithms.md` section 2.
"""

from __future__ import annotations

import pytest

from skenario.autoscalers.vpa.config import UpdaterConfig
from skenario.autoscalers.vpa.recommender import Recommendation, RecommendedResources
from skenario.autoscalers.vpa.updater import (
    EvictionRestriction,
    PodPriority,
    PodState,
    UpdateMode,
    get_update_priority,
    is_update_admitted,
    pods_to_evict,
    request_at_creation,
    sort_by_update_priority,
)
from skenario.core.time import HOUR, MINUTE

M = 1_000_000  # memory "M" (10^6 bytes) in the updater's milli-units is 10^9


# --- updater priority (priority_processor_test.go) ---------------------------------------------------


def one(
    target: int, lower: int | None = None, upper: int | None = None, mem: tuple[int, ...] = ()
) -> RecommendedResources:
    """A recommendation for CPU (milli) and optionally memory (target, lower, upper in milli-bytes)."""
    t: dict[str, int] = {"cpu": target}
    lo: dict[str, int] = {} if lower is None else {"cpu": lower}
    up: dict[str, int] = {} if upper is None else {"cpu": upper}
    if mem:
        t["memory"] = mem[0]
        if len(mem) == 3:
            lo["memory"], up["memory"] = mem[1], mem[2]
    return RecommendedResources(t, lo, up)


C1, C2 = "test-container", "test-container-2"
PRIORITY_CASES = [
    ("simple scale up", {C1: {"cpu": 2000}}, {C1: one(10000)}, PodPriority(False, True, 4.0)),
    ("simple scale down", {C1: {"cpu": 4000}}, {C1: one(2000)}, PodPriority(False, False, 0.5)),
    ("no resource diff", {C1: {"cpu": 2000}}, {C1: one(2000)}, PodPriority(False, False, 0.0)),
    ("scale up on milliquantities", {C1: {"cpu": 10}}, {C1: one(900)}, PodPriority(False, True, 89.0)),
    (
        "scale up outside recommended range",
        {C1: {"cpu": 4000}},
        {C1: one(10000, 6000, 14000)},
        PodPriority(True, True, 1.5),
    ),
    (
        "scale down outside recommended range",
        {C1: {"cpu": 8000}},
        {C1: one(2000, 1000, 3000)},
        PodPriority(True, False, 0.75),
    ),
    (
        "multiple resources, both scale up",
        {C1: {"cpu": 3000, "memory": 10 * M * 1000}},
        {C1: one(6000, mem=(20 * M * 1000,))},
        PodPriority(False, True, 2.0),
    ),
    (
        "multiple resources, only one scale up",
        {C1: {"cpu": 4000, "memory": 10 * M * 1000}},
        {C1: one(2000, mem=(20 * M * 1000,))},
        PodPriority(False, True, 1.5),
    ),
    (
        "multiple resources, both scale down",
        {C1: {"cpu": 4000, "memory": 20 * M * 1000}},
        {C1: one(2000, mem=(10 * M * 1000,))},
        PodPriority(False, False, 1.0),
    ),
    (
        "multiple resources, one outside recommended range",
        {C1: {"cpu": 4000, "memory": 20 * M * 1000}},
        {C1: one(2000, 1000, 3000, mem=(10 * M * 1000, 5 * M * 1000, 30 * M * 1000))},
        PodPriority(True, False, 1.0),
    ),
    (
        "multiple containers, both scale up",
        {C1: {"cpu": 1000}, C2: {"cpu": 2000}},
        {C1: one(4000), C2: one(8000)},
        PodPriority(False, True, 3.0),
    ),
    (
        "multiple containers, both scale down",
        {C1: {"cpu": 3000}, C2: {"cpu": 7000}},
        {C1: one(1000), C2: one(2000)},
        PodPriority(False, False, 0.7),
    ),
    (
        "multiple containers, both scale up, one outside range",
        {C1: {"cpu": 1000}, C2: {"cpu": 2000}},
        {C1: one(4000, 1000), C2: one(8000, 3000, 10000)},
        PodPriority(True, True, 3.0),
    ),
    (
        "multiple containers, multiple resources",
        {C1: {"cpu": 6000, "memory": 10 * M * 1000}, C2: {"cpu": 4000, "memory": 30 * M * 1000}},
        {C1: one(8000, mem=(20 * M * 1000,)), C2: one(7000, mem=(30 * M * 1000,))},
        PodPriority(False, True, 0.5 + 0.25),
    ),
]


@pytest.mark.parametrize(
    ("requests", "recommendation", "expected"), [c[1:] for c in PRIORITY_CASES], ids=[c[0] for c in PRIORITY_CASES]
)
def test_upstream_get_update_priority(
    requests: dict[str, dict[str, int]], recommendation: dict[str, RecommendedResources], expected: PodPriority
) -> None:
    """TestGetUpdatePriority, case by case (requests and targets in milli-units)."""
    assert get_update_priority(requests, recommendation) == expected


def test_upstream_get_update_priority_no_recommendation_for_container() -> None:
    """TestGetUpdatePriority_NoRecommendationForContainer: nothing to compare, a zero priority."""
    assert get_update_priority({C1: {"cpu": 5000, "memory": 10_000}}, {}) == PodPriority()


def test_request_on_a_bound_is_inside() -> None:
    """The reference: outside means request < lowerBound or > upperBound; the bounds themselves are inside."""
    rec = {C1: one(500, 400, 600)}
    assert not get_update_priority({C1: {"cpu": 400}}, rec).outside_recommended_range
    assert not get_update_priority({C1: {"cpu": 600}}, rec).outside_recommended_range
    assert get_update_priority({C1: {"cpu": 399}}, rec).outside_recommended_range
    assert get_update_priority({C1: {"cpu": 601}}, rec).outside_recommended_range


def test_missing_request_is_outside_and_scale_up() -> None:
    """GetUpdatePriority: a container without a request counts as 0, outside the range and growing."""
    assert get_update_priority({C1: {}}, {C1: one(500, 400, 600)}) == PodPriority(True, True, 499.0)


@pytest.mark.parametrize(
    ("prio", "other", "is_less"),
    [
        (PodPriority(scale_up=False, resource_diff=0.1), PodPriority(), False),
        (PodPriority(scale_up=True, resource_diff=0.1), PodPriority(), False),
        (PodPriority(scale_up=True, resource_diff=0.1), PodPriority(scale_up=True, resource_diff=1.0), True),
        (PodPriority(scale_up=False, resource_diff=0.9), PodPriority(scale_up=False, resource_diff=0.1), False),
    ],
    ids=["scale down more than empty", "scale up more than empty", "two scale ups", "two scale downs"],
)
def test_upstream_less_pod_priority(prio: PodPriority, other: PodPriority, is_less: bool) -> None:
    """TestLessPodPriority."""
    assert prio.less(other) is is_less
    assert other.less(prio) is (not is_less)


# --- update admission and order (update_priority_calculator_test.go) --------------------------------

UPDATE_CONFIG = UpdaterConfig(min_change_priority=0.1)
STRICT = UpdaterConfig(min_change_priority=0.5)
STARTED = 1_000 * HOUR  # every test pod's start time


def pod(
    name: str, cpu: int = 1000, *, pending: bool = False, oom_terminations: dict[str, tuple[int, int]] | None = None
) -> PodState:
    return PodState(name, {"container1": {"cpu": cpu}}, STARTED, pending, oom_terminations or {})


def admitted_in_order(
    prios: dict[str, PodPriority], now: int, config: UpdaterConfig, pods: list[PodState] | None = None
) -> list[str]:
    """AddPod with a fake priority processor, then GetSortedPods with the default admission."""
    pods = pods if pods is not None else [pod(name) for name in prios]
    queued = [(p.name, prios[p.name]) for p in pods if is_update_admitted(p, prios[p.name], now, config)]
    return sort_by_update_priority(queued)


def test_upstream_sort_priority() -> None:
    """TestSortPriority: the larger resource diff goes first."""
    prios = {
        "POD1": PodPriority(resource_diff=4.0),
        "POD2": PodPriority(resource_diff=1.5),
        "POD3": PodPriority(resource_diff=9.0),
        "POD4": PodPriority(resource_diff=2.33),
    }
    assert admitted_in_order(prios, STARTED + 24 * HOUR, UPDATE_CONFIG) == ["POD3", "POD1", "POD4", "POD2"]


def test_upstream_sort_priority_resources_decrease() -> None:
    """TestSortPriorityResourcesDecrease: a pod that wants to grow first, then the larger reclaim."""
    prios = {
        "POD1": PodPriority(scale_up=True, resource_diff=0.25),
        "POD2": PodPriority(scale_up=False, resource_diff=0.25),
        "POD3": PodPriority(scale_up=False, resource_diff=0.5),
    }
    assert admitted_in_order(prios, STARTED + 24 * HOUR, UPDATE_CONFIG) == ["POD1", "POD3", "POD2"]


def test_upstream_update_not_required() -> None:
    """TestUpdateNotRequired: no resource diff, no update."""
    assert admitted_in_order({"POD1": PodPriority()}, STARTED + 24 * HOUR, UPDATE_CONFIG) == []


def test_upstream_no_pods() -> None:
    """TestNoPods."""
    assert sort_by_update_priority([]) == []


def test_upstream_update_longlived_pods() -> None:
    """TestUpdateLonglivedPods: after 13 h, a pod inside the range needs diff >= 0.5; outside always goes."""
    prios = {
        "POD1": PodPriority(False, True, 0.25),
        "POD2": PodPriority(False, True, 4.0),
        "POD3": PodPriority(True, False, 0.25),
    }
    assert admitted_in_order(prios, STARTED + 13 * HOUR, STRICT) == ["POD2", "POD3"]


def test_upstream_update_shortlived_pods() -> None:
    """TestUpdateShortlivedPods: before 12 h only a pod outside the range is updated."""
    prios = {
        "POD1": PodPriority(False, True, 0.25),
        "POD2": PodPriority(False, True, 0.0),
        "POD3": PodPriority(True, False, 0.9),
    }
    assert admitted_in_order(prios, STARTED + 11 * HOUR, STRICT) == ["POD3"]


def oomed(now: int, ran_for: int) -> PodState:
    """A pod whose container was last OOMKilled 3 minutes ago after running `ran_for`."""
    return pod("POD1", cpu=4000, oom_terminations={"container1": (now - 3 * MINUTE - ran_for, now - 3 * MINUTE)})


def test_upstream_update_pod_with_quick_oom() -> None:
    """TestUpdatePodWithQuickOOM: an OOM after 2 minutes admits a young pod inside the range."""
    now = STARTED + 11 * HOUR
    prios = {"POD1": PodPriority(scale_up=True, resource_diff=0.25)}
    assert admitted_in_order(prios, now, STRICT, [oomed(now, 2 * MINUTE)]) == ["POD1"]


def test_upstream_dont_update_pod_with_quick_oom_no_resource_change() -> None:
    """TestDontUpdatePodWithQuickOOMNoResourceChange: a quick OOM with nothing to change is skipped."""
    now = STARTED + 11 * HOUR
    prios = {"POD1": PodPriority(scale_up=True, resource_diff=0.0)}
    assert admitted_in_order(prios, now, UPDATE_CONFIG, [oomed(now, 2 * MINUTE)]) == []


def test_upstream_dont_update_pod_with_oom_after_long_run() -> None:
    """TestDontUpdatePodWithOOMAfterLongRun: an OOM after 57 minutes is not quick."""
    now = STARTED + 11 * HOUR
    prios = {"POD1": PodPriority(scale_up=True, resource_diff=0.0)}
    assert admitted_in_order(prios, now, STRICT, [oomed(now, 57 * MINUTE)]) == []


def test_pod_without_start_time_needs_to_be_outside() -> None:
    """AddPod: no start time and inside the range: not updated; outside the range: updated."""
    nostart = PodState("p", {"c": {"cpu": 100}})
    assert not is_update_admitted(nostart, PodPriority(False, True, 5.0), 100 * HOUR)
    assert is_update_admitted(nostart, PodPriority(True, True, 5.0), 100 * HOUR)


# --- eviction restriction (pods_eviction_restriction_test.go) --------------------------------------


def test_upstream_evict_too_few_replicas() -> None:
    """TestEvictTooFewReplicas: 5 live pods under minReplicas 10: none may go."""
    pods = [pod(f"p{i}") for i in range(5)]
    restriction = EvictionRestriction(pods, 5, min_replicas=10, eviction_tolerance=0.5)
    assert not any(restriction.can_evict(p) for p in pods)
    assert not any(restriction.evict(p) for p in pods)


def test_upstream_eviction_tolerance() -> None:
    """TestEvictionTolerance: 5 replicas, tolerance 0.8 -> int(4.0) = 4 may go, the fifth may not."""
    pods = [pod(f"p{i}") for i in range(5)]
    restriction = EvictionRestriction(pods, 5, min_replicas=2, eviction_tolerance=0.8)
    assert all(restriction.can_evict(p) for p in pods)
    assert [restriction.evict(p) for p in pods] == [True, True, True, True, False]


def test_upstream_evict_at_least_one() -> None:
    """TestEvictAtLeastOne: tolerance 0.1 of 5 truncates to 0, yet one pod may go when all run."""
    pods = [pod(f"p{i}") for i in range(5)]
    restriction = EvictionRestriction(pods, 5, min_replicas=2, eviction_tolerance=0.1)
    assert all(restriction.can_evict(p) for p in pods)
    assert [restriction.evict(p) for p in pods] == [True, False, False, False, False]


def test_upstream_evict_emit_event() -> None:
    """TestEvictEmitEvent: pending pods may always go; one running pod under minReplicas 2 may not."""
    pending = [pod("test-1", pending=True), pod("test-2", pending=True)]
    restriction = EvictionRestriction(pending, 4, min_replicas=2, eviction_tolerance=0.5)
    assert [restriction.evict(p) for p in pending] == [True, True]
    lonely = [pod("test-3")]
    assert not EvictionRestriction(lonely, 4, min_replicas=2, eviction_tolerance=0.5).evict(lonely[0])


def test_foreign_pod_cannot_be_evicted() -> None:
    """CanEvict: a pod outside the replica group is not ours to evict."""
    restriction = EvictionRestriction([pod("a"), pod("b")], 2)
    assert not restriction.can_evict(pod("z"))


# --- update modes (updater_test.go TestRunOnce_Mode) ------------------------------------------------

RUN_ONCE_PODS = [
    PodState(f"test_{i}", {"container1": {"cpu": 1000, "memory": 100 * M * 1000}}, start_time=0) for i in range(5)
]
RUN_ONCE_RECOMMENDATION = {"container1": RecommendedResources({"cpu": 2000, "memory": 200 * M * 1000})}


@pytest.mark.parametrize(
    ("mode", "evictions"),
    [(UpdateMode.AUTO, 5), (UpdateMode.RECREATE, 5), (None, 5), (UpdateMode.INITIAL, 0), (UpdateMode.OFF, 0)],
)
def test_upstream_run_once_mode(mode: UpdateMode | None, evictions: int) -> None:
    """TestRunOnce_Mode: 5 long-lived pods at 1 CPU / 100M against a 2 CPU / 200M target. Auto and
    Recreate (also the default mode) evict all 5; Initial and Off evict none. Upstream mocks CanEvict
    to always allow; an eviction tolerance of 1.0 stands in for that here."""
    config = UpdaterConfig(eviction_tolerance=1.0)
    evicted = pods_to_evict(RUN_ONCE_PODS, RUN_ONCE_RECOMMENDATION, mode, 24 * HOUR, config=config)
    assert len(evicted) == evictions


def test_recreate_evicts_replicas_outside_bounds_within_tolerance() -> None:
    """4 replicas requesting 100m against 587m (585m..1174m): all below the lower bound, but the default
    tolerance int(4 x 0.5) = 2 lets two go this pass; a replica already at 587m stays."""
    rec = {"c": Recommendation(587, 585, 1174, 587).as_resources()}
    pods = [PodState(f"r{i}", {"c": {"cpu": 100}}, start_time=0) for i in range(4)]
    assert pods_to_evict(pods, rec, UpdateMode.RECREATE, MINUTE) == ["r0", "r1"]
    resized = [PodState("r0", {"c": {"cpu": 587}}, start_time=0), *pods[1:]]
    assert pods_to_evict(resized, rec, UpdateMode.RECREATE, MINUTE) == ["r1", "r2"]


def test_young_replica_inside_bounds_waits_for_lifetime_threshold() -> None:
    """Inside [lower, upper] but 40% off target: not before 12 h of life, then yes (diff 0.4 >= 0.1)."""
    rec = {"c": RecommendedResources({"cpu": 700}, {"cpu": 400}, {"cpu": 2000})}
    pods = [PodState(f"r{i}", {"c": {"cpu": 500}}, start_time=0) for i in range(2)]
    assert pods_to_evict(pods, rec, UpdateMode.RECREATE, 12 * HOUR - 1) == []
    assert pods_to_evict(pods, rec, UpdateMode.RECREATE, 12 * HOUR) == ["r0"]


def test_request_at_creation() -> None:
    """The admission controller sets the (capped) target at creation unless the mode is Off."""
    rec = Recommendation(300, 200, 400, 587)
    assert request_at_creation(UpdateMode.OFF, rec) is None
    assert request_at_creation(UpdateMode.INITIAL, rec) == 300
    assert request_at_creation(UpdateMode.RECREATE, rec) == 300
    assert request_at_creation(None, rec) == 300
    assert request_at_creation(UpdateMode.AUTO, None) is None
