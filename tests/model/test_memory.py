"""Memory: the kubelet's and the kernel's rules restated as data, and crash loops and evictions on a timeline."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, LaunchStage, MemorySpec, ReplicaSpec, RequestSpec
from skenario.model.cpu.node import QoSClass
from skenario.model.memory import (
    CrashLoopBackOff,
    NodeMemory,
    PodMemory,
    PodUsage,
    oom_badness,
    oom_score_adj,
    rank_memory_pressure,
)
from skenario.model.replicas import ReplicaState
from skenario.workloads.patterns import constant_arrivals

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


# -- on a model: crash loops, what fails, and evictions -------------------------------------------


def _model(
    *, baseline: int, per_request: int, limit: int | None, node_memory: int = 16 * GI, rate: float = 0.0
) -> tuple[Environment, ClusterModel]:
    duration = 10 * MINUTE
    env = Environment(halt_at=duration)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(100 * MILLISECOND), timeout=None),
        replica=ReplicaSpec(
            cpu_request=500,
            memory_request=256 * MI,
            memory_limit=limit,
            memory=MemorySpec(Constant(baseline), Constant(per_request) if per_request else None, node_memory),
            launch=(
                LaunchStage("containerStart", Constant(1 * SECOND)),
                LaunchStage("readiness", Constant(4 * SECOND)),
            ),
        ),
        initial_replicas=1,
    )
    arrivals = constant_arrivals(rate, 0, duration) if rate else iter(())
    return env, ClusterModel(env, spec, arrivals, RandomStreams(1))


def test_a_baseline_above_the_limit_crash_loops_on_the_kubelets_back_off() -> None:
    # Killed as it becomes ready (1 ns), then each restart takes the back-off plus 1 s of start
    # and 4 s of readiness before it is killed again: kills at 0, 5, 20, 45, 90, 175, 340 s; the
    # next would be at 340 + 300 + 5 = 645 s, after the 600 s run.
    env, model = _model(baseline=600 * MI, per_request=0, limit=512 * MI)
    kills: list[int] = []
    model.replicas_restarting.on_restarting.append(lambda replica: kills.append(env.now()))
    env.run()
    assert [round(t / SECOND) for t in kills] == [0, 5, 20, 45, 90, 175, 340]
    assert model.oom_kills == 7 and model.restarts == 6  # the last restart would come at 645 s
    (replica,) = model.replicas.values()
    assert replica.state is ReplicaState.RESTARTING and model.replicas_active.count() == 0


def test_requests_in_flight_when_the_container_dies_fail_as_oom() -> None:
    # A request every 50 ms, each 100 ms of CPU on a pod with idle cores: two in flight at once.
    # At 100Mi each over a 100Mi baseline, the second passes the 250Mi limit.
    env, model = _model(baseline=100 * MI, per_request=100 * MI, limit=250 * MI, rate=20)
    env.run()
    failed = model.requests_failed.reasons
    assert model.oom_kills > 0 and failed["oom"] > 0
    arrived = model.requests_arrived
    assert arrived == model.requests_complete.count() + model.requests_failed.count() + model.requests_in_flight


def test_a_pod_without_a_limit_grows_into_its_node_and_is_evicted_and_replaced() -> None:
    # No limit, node of 1Gi allocatable: the baseline fits, but requests push the pod past the
    # node's allocatable; the kubelet evicts it (1 s grace) and the ReplicaSet makes another.
    env, model = _model(baseline=900 * MI, per_request=100 * MI, limit=None, node_memory=1 * GI, rate=20)
    env.run()
    assert model.evictions > 0
    assert model.requests_failed.reasons["evicted"] + model.requests_failed.reasons["oom"] > 0
    assert model.replica_source.emitted > 1  # replacements
    assert model.desired == 1
