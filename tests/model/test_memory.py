"""Memory: the kubelet's and the kernel's rules restated as data, and crash loops and evictions on a timeline."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.core.environment import Environment
from skenario.core.time import MINUTE, SECOND
from skenario.model.cpu.node import QoSClass
from skenario.model.memory import (
    PRESSURE_TRANSITION_PERIOD,
    CrashLoopBackOff,
    NodeMemory,
    PodMemory,
    PodUsage,
    admit,
    oom_badness,
    oom_score_adj,
    rank_memory_pressure,
    under_pressure,
)

MI = 2**20
GI = 2**30


# -- oom_score_adj: GetContainerOOMScoreAdjust (pkg/kubelet/qos/policy.go) ------------------------


@pytest.mark.parametrize(
    ("qos", "memory_request", "capacity", "expected"),
    [
        (QoSClass.GUARANTEED, 1 * GI, 8 * GI, -997),
        (QoSClass.BEST_EFFORT, 0, 8 * GI, 1000),
        (QoSClass.BURSTABLE, 2 * GI, 8 * GI, 750),  # 1000 - 1000 * 2/8
        (QoSClass.BURSTABLE, 1, 3, 1000 - 333),  # integer division: 1000 // 3 = 333
        (QoSClass.BURSTABLE, 8 * GI, 8 * GI, 3),  # 0, raised to 1000 + guaranteed's -997
        (QoSClass.BURSTABLE, 9 * GI, 8 * GI, 3),  # negative, raised likewise
        (QoSClass.BURSTABLE, 0, 8 * GI, 999),  # a CPU-only request: just below BestEffort
    ],
)
def test_oom_score_adj_follows_the_kubelets_formula(
    qos: QoSClass, memory_request: int, capacity: int, expected: int
) -> None:
    assert oom_score_adj(qos, memory_request, capacity) == expected


def test_the_kernel_kills_the_largest_usage_plus_adj_share_of_memory() -> None:
    # 10 GiB node: a BestEffort pod using 1 GiB scores 1 + 10 GiB (adj 1000 = all of memory),
    # far above a Guaranteed pod using 5 GiB (5 - 9.97 GiB).
    capacity = 10 * GI
    assert oom_badness(1 * GI, 1000, capacity) == pytest.approx(11 * GI)
    assert oom_badness(5 * GI, -997, capacity) == pytest.approx(5 * GI - 9.97 * GI)


# -- rankMemoryPressure (pkg/kubelet/eviction/helpers.go) ------------------------------------------


def test_pods_over_their_request_go_first_then_lower_priority_then_most_above_request() -> None:
    pods = [
        PodUsage(usage=100 * MI, request=200 * MI, priority=0),  # within its request
        PodUsage(usage=300 * MI, request=200 * MI, priority=10),  # over, high priority
        PodUsage(usage=250 * MI, request=200 * MI, priority=0),  # over by 50Mi
        PodUsage(usage=400 * MI, request=200 * MI, priority=0),  # over by 200Mi
        PodUsage(usage=50 * MI, request=0, priority=0),  # BestEffort: always over
    ]
    # Over and priority 0: by usage above request (200, 50, 50 BestEffort: stable); then priority
    # 10; the pod within its request comes last whatever its priority.
    assert rank_memory_pressure(pods) == [3, 2, 4, 1, 0]


@given(st.lists(st.tuples(st.integers(0, 10**10), st.integers(0, 10**10), st.integers(-5, 5)), max_size=12))
def test_the_ranking_is_a_permutation_that_puts_pods_over_their_request_first(rows: list[tuple[int, int, int]]) -> None:
    pods = [PodUsage(*row) for row in rows]
    order = rank_memory_pressure(pods)
    assert sorted(order) == list(range(len(pods)))
    over = [pods[i].usage > pods[i].request for i in order]
    assert over == sorted(over, reverse=True)


# -- the node condition and the kubelet's admission (pkg/kubelet/eviction/eviction_manager.go) ------

# TestMemoryPressure's admission checks (eviction_manager_test.go), as data: the manager synchronized
# at each step (minutes from its start, whether the threshold is met then), then a BestEffort pod and
# a Burstable pod asked to be admitted. The steps are upstream's: no pressure; pressure; pressure
# relieved 1 minute later (the 5 minute transition period holds the condition); 5 minutes after that.
MEMORY_PRESSURE_STEPS = [
    # (minute, threshold met, MemoryPressure, BestEffort admitted, Burstable admitted)
    (0, False, False, True, True),
    (21, True, True, False, True),
    (22, False, True, False, True),
    (27, False, False, True, True),
]


def test_the_admission_checks_of_upstreams_memory_pressure_test() -> None:
    last_met: int | None = None
    for minute, met, pressure, best_effort, burstable in MEMORY_PRESSURE_STEPS:
        now = minute * MINUTE
        if met:
            last_met = now
        assert under_pressure(last_met, now) is pressure, minute
        assert (admit(QoSClass.BEST_EFFORT, False, pressure) is None) is best_effort, minute
        assert (admit(QoSClass.BURSTABLE, False, pressure) is None) is burstable, minute


@pytest.mark.parametrize(
    ("qos", "tolerates", "memory_pressure", "admitted"),
    [
        # TestAdmitUnderNodeConditions: no condition, every class admitted ...
        (QoSClass.GUARANTEED, False, False, True),
        (QoSClass.BURSTABLE, False, False, True),
        (QoSClass.BEST_EFFORT, False, False, True),
        # ... under MemoryPressure, all but BestEffort.
        (QoSClass.GUARANTEED, False, True, True),
        (QoSClass.BURSTABLE, False, True, True),
        (QoSClass.BEST_EFFORT, False, True, False),
        # Admit: a BestEffort pod tolerating node.kubernetes.io/memory-pressure:NoSchedule is admitted.
        (QoSClass.BEST_EFFORT, True, True, True),
    ],
)
def test_admit_turns_away_only_best_effort_pods_under_memory_pressure(
    qos: QoSClass, tolerates: bool, memory_pressure: bool, admitted: bool
) -> None:
    refused = admit(qos, tolerates, memory_pressure)
    assert (refused is None) is admitted
    if refused is not None:
        assert refused == "The node had condition: [MemoryPressure]. "  # nodeConditionMessageFmt


def test_the_condition_holds_for_less_than_the_transition_period() -> None:
    # nodeConditionsObservedSince: true while now - last observed < 5m, so false exactly 5m later.
    assert under_pressure(None, 0) is False
    assert under_pressure(10 * SECOND, 10 * SECOND + PRESSURE_TRANSITION_PERIOD - 1) is True
    assert under_pressure(10 * SECOND, 10 * SECOND + PRESSURE_TRANSITION_PERIOD) is False
    assert PRESSURE_TRANSITION_PERIOD == 5 * MINUTE


# -- the crash-loop back-off: doBackOff over flowcontrol.Backoff -----------------------------------


def test_the_waits_after_each_exit_are_0_10_20_40_80_160_then_300_seconds() -> None:
    backoff = CrashLoopBackOff()
    waits, now = [], 0
    for _ in range(9):
        restart = backoff.restart_at(now)
        waits.append((restart - now) // SECOND)
        now = restart + 1 * SECOND  # runs a second, then dies again
    assert waits == [0, 10, 20, 40, 80, 160, 300, 300, 300]


def test_the_back_off_starts_over_after_ten_minutes_of_running() -> None:
    backoff = CrashLoopBackOff()
    backoff.restart_at(0)
    assert backoff.restart_at(SECOND) == 11 * SECOND  # in back-off: 10 s
    # More than 2 x 5 min after that restart: the entry has expired, the restart is immediate.
    assert backoff.restart_at(11 * SECOND + 10 * MINUTE + 1) == 11 * SECOND + 10 * MINUTE + 1
    assert backoff.restart_at(12 * SECOND + 10 * MINUTE) == 22 * SECOND + 10 * MINUTE  # 10 s again


# -- a container's working set and its node --------------------------------------------------------


def _pod(baseline: int, request: int | None, limit: int | None, qos: QoSClass = QoSClass.BURSTABLE) -> PodMemory:
    pod = PodMemory(baseline, request, limit, qos)
    pod.on_oom = lambda: killed.append(pod)
    pod.on_evict = lambda: evicted.append(pod)
    return pod


killed: list[PodMemory] = []
evicted: list[PodMemory] = []


@pytest.fixture(autouse=True)
def _fresh_records() -> Iterator[None]:
    killed.clear()
    evicted.clear()
    yield


def test_a_container_over_its_limit_is_killed_and_its_memory_freed() -> None:
    pod = _pod(200 * MI, 256 * MI, 512 * MI)
    pod.start()
    for _ in range(7):
        pod.grow(44 * MI)  # 200 + 7 x 44 = 508Mi: still under the limit
    assert killed == [] and pod.working_set == 508 * MI
    pod.grow(5 * MI)  # 513Mi > 512Mi: the charge fails at the limit
    assert killed == [pod] and pod.working_set == 0 and not pod.running
    pod.shrink(44 * MI)  # a request of the dead container leaving changes nothing
    assert pod.working_set == 0 and pod.peak == 512 * MI


@pytest.mark.parametrize(
    ("burstable_request", "victim"),
    [
        # adj 1000 - 1000·100/1124 = 912: badness 600 + 0.912·1124 = 1625Mi, above BestEffort's
        # 100 + 1124 = 1224Mi: the pod far above its request dies.
        (100 * MI, "burstable"),
        # adj 1000 - 1000·700/1124 = 378: 600 + 0.378·1124 = 1025Mi, below BestEffort's 1224Mi:
        # the BestEffort pod dies though it uses least.
        (700 * MI, "besteffort"),
    ],
)
def test_the_nodes_oom_killer_takes_the_highest_badness_once_pods_pass_its_memory(
    burstable_request: int, victim: str
) -> None:
    env = Environment(halt_at=MINUTE)
    node = NodeMemory(env, allocatable=1024 * MI)  # capacity 1124Mi
    pods = {
        "guaranteed": _pod(500 * MI, 500 * MI, 500 * MI, QoSClass.GUARANTEED),  # 500 - 0.997·1124 < 0
        "besteffort": _pod(100 * MI, None, None, QoSClass.BEST_EFFORT),
        "burstable": _pod(300 * MI, burstable_request, None),
    }
    for pod in pods.values():
        node.attach(pod)
        pod.start()
    assert node.used == 900 * MI and killed == []
    pods["burstable"].grow(300 * MI)  # 1200Mi > 1124Mi
    assert killed == [pods[victim]] and node.oom_kills == 1
    assert node.used == 1200 * MI - pods[victim].peak


def test_the_eviction_manager_evicts_one_pod_per_ten_second_pass_while_under_pressure() -> None:
    env = Environment(halt_at=MINUTE)
    node = NodeMemory(env, allocatable=1 * GI, started_at=3 * SECOND)  # passes at 3, 13, 23 ... s
    within = _pod(400 * MI, 500 * MI, None)
    over_a_little = _pod(300 * MI, 250 * MI, None)
    over_a_lot = _pod(300 * MI, 100 * MI, None)
    for pod in (within, over_a_little, over_a_lot):
        node.attach(pod)
        pod.start()
    env.call_at(5 * SECOND, lambda: within.grow(50 * MI))  # 1050Mi > 1024Mi: pressure from 5 s
    env.run()
    # Nothing frees memory here, so every pass evicts the first-ranked pod again: the first pass
    # after 5 s is at 13 s, then 23 s, ... The pod most over its request is first.
    assert evicted[0] is over_a_lot
    assert len(evicted) == 5  # passes at 13, 23, 33, 43, 53 s, none at or after the 60 s halt


def test_the_eviction_manager_sets_memory_pressure_at_a_pass_and_clears_it_five_minutes_after_the_last() -> None:
    # Passes at 0, 10, 20 ... s. The pods pass 1Gi at 23 s: the 30 s pass sets the condition and
    # evicts the pod; the eviction frees the memory (the test's on_evict stops it), so the 40 s
    # pass finds the threshold unmet but the condition holds until the pass at 30 s + 5 min.
    env = Environment(halt_at=10 * MINUTE)
    node = NodeMemory(env, allocatable=1 * GI)
    seen: list[tuple[int, bool]] = []
    node.on_condition.append(lambda pressure: seen.append((env.now(), pressure)))
    big = _pod(600 * MI, 100 * MI, None)
    small = _pod(400 * MI, 500 * MI, None)
    big.on_evict = lambda: (evicted.append(big), big.stop())
    for pod in (big, small):
        node.attach(pod)
        pod.start()
    env.call_at(23 * SECOND, lambda: big.grow(100 * MI))  # 1100Mi > 1024Mi
    env.run()
    assert evicted == [big] and node.evictions == 1
    assert seen == [(30 * SECOND, True), (30 * SECOND + 5 * MINUTE, False)]
    assert node.pressure_observed_at == 30 * SECOND and not node.memory_pressure


@pytest.mark.parametrize("listened", [False, True])
def test_passes_go_on_after_the_threshold_only_while_someone_reads_the_condition(listened: bool) -> None:
    # A pod alone on its implicit node is evicted at the 10 s pass. With no listener (no scheduler
    # reads the node) the passes stop there, and nothing clears the condition; with one, the pass
    # at 10 s + 5 min clears it.
    env = Environment(halt_at=10 * MINUTE)
    node = NodeMemory(env, allocatable=1 * GI)
    if listened:
        node.on_condition.append(lambda pressure: None)
    pod = _pod(1100 * MI, None, None, QoSClass.BEST_EFFORT)
    pod.on_evict = lambda: pod.stop()
    node.attach(pod)
    env.call_at(5 * SECOND, pod.start)
    env.run()
    assert node.evictions == 1 and node.pressure_observed_at == 10 * SECOND
    assert node.memory_pressure is not listened
