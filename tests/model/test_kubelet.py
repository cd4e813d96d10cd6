"""The kubelet on a model (`model/kubelet.py`): crash loops on the back-off, what fails, and evictions."""

from __future__ import annotations

from itertools import pairwise

from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, LaunchStage, MemorySpec, ReplicaSpec, RequestSpec
from skenario.model.replicas import ReplicaState
from skenario.workloads.patterns import constant_arrivals

MI = 2**20
GI = 2**30


# -- on a model: crash loops, what fails, and evictions -------------------------------------------


def _model(
    *,
    baseline: int,
    per_request: int,
    limit: int | None,
    node_memory: int = 16 * GI,
    rate: float = 0.0,
    duration: int = 10 * MINUTE,
    initial_ready: bool = True,
) -> tuple[Environment, ClusterModel]:
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
        initial_ready=initial_ready,
    )
    arrivals = constant_arrivals(rate, 0, duration) if rate else iter(())
    return env, ClusterModel(env, spec, arrivals, RandomStreams(1))


def test_a_baseline_above_the_limit_is_killed_as_its_container_starts_on_the_kubelets_back_off() -> None:
    # The replica launches: its container starts after 1 s of containerStart, and its 600Mi
    # baseline is charged then, over the 512Mi limit: killed at 1 s, before its 4 s of readiness.
    # Each restart is the back-off (0, 10, 20, 40, 80, 160, then 300 s) from the kill, plus the
    # container's 1 s start, where it dies again:
    #   1, 1+0+1 = 2, 2+10+1 = 13, 13+20+1 = 34, 34+40+1 = 75, 75+80+1 = 156, 156+160+1 = 317,
    #   317+300+1 = 618, 618+300+1 = 919; the next, 1220 s, is after the 20 min run.
    env, model = _model(baseline=600 * MI, per_request=0, limit=512 * MI, duration=20 * MINUTE, initial_ready=False)
    kills: list[int] = []
    model.replicas_restarting.on_restarting.append(lambda replica: kills.append(env.now()))
    env.run()
    assert kills == [t * SECOND + 1 for t in (1, 2, 13, 34, 75, 156, 317, 618, 919)]  # launched at 1 ns
    gaps = [b - a for a, b in pairwise(kills)]
    assert gaps == [(backoff + 1) * SECOND for backoff in (0, 10, 20, 40, 80, 160, 300, 300)]
    assert model.oom_kills == 9 and model.restarts == 8  # each kill but the first follows a restart
    (replica,) = model.replicas.values()
    assert replica.state is ReplicaState.RESTARTING and replica.activated_at is None  # never ready
    assert replica.last_run == (919 * SECOND + 1, 919 * SECOND + 1)  # started and killed at once: a quick OOM


def test_an_initial_replica_dies_as_it_starts_and_then_at_each_container_start() -> None:
    # An initial replica's container runs from 1 ns; then as above, restarts at the back-off plus
    # the 1 s start: 0, 0+0+1 = 1, 1+10+1 = 12, 33, 74, 155, 316; 316+300+1 = 617 > 600 s.
    env, model = _model(baseline=600 * MI, per_request=0, limit=512 * MI)
    kills: list[int] = []
    model.replicas_restarting.on_restarting.append(lambda replica: kills.append(env.now()))
    env.run()
    assert [round(t / SECOND) for t in kills] == [0, 1, 12, 33, 74, 155, 316]
    assert model.oom_kills == 7 and model.restarts == 6


def test_a_container_is_charged_from_its_start_and_its_back_off_resets_after_ten_minutes_up() -> None:
    # 100Mi baseline under a 250Mi limit; the test pushes the working set over the limit at chosen
    # times (200Mi more). containerStart 1 s, readiness 4 s, an initial replica.
    #   30 s   killed (first exit): restarted at once, container starts at 31 s, ready at 35 s
    #   40 s   killed: in back-off, 10 s: restarted at 50 s, starts at 51 s, ready at 55 s
    #   720 s  killed: 670 s since the restart at 50 s, more than 2 x 5 min: the back-off has
    #          expired, restarted at once, starts at 721 s, ready at 725 s
    env, model = _model(baseline=100 * MI, per_request=0, limit=250 * MI, duration=15 * MINUTE)
    (replica,) = model.replicas.values()
    starts: list[tuple[int, int]] = []  # (time, working set) at each activation
    model.replicas_active.on_activate.append(lambda r: starts.append((env.now(), r.memory.working_set)))

    def push() -> None:
        assert replica.memory is not None
        replica.memory.grow(200 * MI)

    working_sets: dict[int, int] = {}

    def look(at: int) -> None:
        assert replica.memory is not None
        working_sets[at] = replica.memory.working_set

    for at in (30, 40, 720):
        env.call_at(at * SECOND, push)
    for at in (30.5, 31.5, 45, 50.5, 51.5):
        env.call_at(int(at * SECOND), lambda at=at: look(at))  # type: ignore[misc]
    kills: list[int] = []
    model.replicas_restarting.on_restarting.append(lambda r: kills.append(env.now()))
    env.run()
    assert kills == [30 * SECOND, 40 * SECOND, 720 * SECOND]
    # Charged from the container's start, before it is ready: nothing while it waits, the baseline
    # from its start on.
    assert working_sets == {30.5: 0, 31.5: 100 * MI, 45: 0, 50.5: 0, 51.5: 100 * MI}
    assert [t for t, _ in starts] == [1, 35 * SECOND, 55 * SECOND, 725 * SECOND]
    assert model.restarts == 3 and replica.last_run == (51 * SECOND, 720 * SECOND)


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
