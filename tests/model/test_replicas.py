"""Replica lifecycle: launch stages, termination, draining and grace periods."""

from __future__ import annotations

import pytest

from skenario.core.environment import Environment, MovementLog
from skenario.core.movement import IgnoredReason
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.replicas import ReplicaState
from tests.model import ReplicaTrace, build_replicas, stages, stop_order

MS = MILLISECOND


def test_launch_stages_make_a_replica_active_at_their_sum() -> None:
    env, model, trace = build_replicas(
        launch=stages(("schedule", 1 * SECOND), ("pull", 3 * SECOND), ("start", 500 * MS))
    )
    env.call_at(2 * SECOND, lambda: model.scale_to(1))
    seen_stage: dict[int, str | None] = {}
    for pause in (2500 * MS, 4 * SECOND, 6200 * MS, 7 * SECOND):
        env.run(until=pause)
        (replica,) = model.replicas.values()
        seen_stage[pause] = model.replicas_launching.stage_of(replica)
    env.run()
    (replica,) = model.replicas.values()
    # 2 s + 1 s + 3 s + 0.5 s.
    assert replica.created_at == 2 * SECOND
    assert replica.activated_at == 6500 * MS
    assert replica.state is ReplicaState.ACTIVE
    assert seen_stage == {2500 * MS: "schedule", 4 * SECOND: "pull", 6200 * MS: "start", 7 * SECOND: None}
    # Each stage but the first begins with a launch_stage movement naming the stage it starts.
    replica_moves = [(at, kind, note) for at, kind, e, _, note in trace.moves if e is replica]
    assert replica_moves == [
        (2 * SECOND, "begin_launch", None),
        (3 * SECOND, "launch_stage", "pull"),
        (6 * SECOND, "launch_stage", "start"),
        (6500 * MS, "finish_launching", None),
    ]


def test_one_stage_launch_and_no_stages_at_all() -> None:
    env, model, _ = build_replicas(launch=stages(("start", 2 * SECOND)))
    env.call_at(1 * SECOND, lambda: model.scale_to(2))
    env.run()
    assert sorted(r.activated_at for r in model.replicas.values()) == [3 * SECOND, 3 * SECOND]  # type: ignore[type-var]

    env, model, _ = build_replicas(launch=())
    env.call_at(1 * SECOND, lambda: model.scale_to(1))
    env.run()
    (replica,) = model.replicas.values()
    assert replica.activated_at == 1 * SECOND


def test_terminate_while_launching_skips_the_remaining_stages() -> None:
    env, model, trace = build_replicas(launch=stages(("pull", 2 * SECOND), ("start", 3 * SECOND)))
    env.call_at(1 * SECOND, lambda: model.scale_to(1))
    env.call_at(2 * SECOND, lambda: model.scale_to(0))
    states: list[ReplicaState] = []
    env.run(until=1500 * MS)
    (replica,) = model.replicas.values()
    states.append(replica.state)
    env.run()
    states.append(replica.state)
    assert trace.of(replica) == [
        (1 * SECOND, "begin_launch"),
        (2 * SECOND, "terminate_replica"),
        (2 * SECOND, "finish_terminating"),
    ]
    to_stocks = [to for _, _, e, to, _ in trace.moves if e is replica]
    assert to_stocks == [model.replicas_launching, model.replicas_terminating, model.replicas_terminated]
    assert states == [ReplicaState.LAUNCHING, ReplicaState.TERMINATED]
    assert replica.activated_at is None
    assert replica.terminated_at == 2 * SECOND
    # The stage movement it had pending (pull -> start at 3 s) found it gone.
    pending = [i for i in env.ignored if i.movement.what is replica]
    assert [(i.movement.kind, i.movement.occurs_at, i.reason) for i in pending] == [
        ("launch_stage", 3 * SECOND, IgnoredReason.FROM_STOCK_EMPTY)
    ]
    assert model.replicas_active.count() == 0


def test_a_replica_passes_through_terminating_on_its_way_out() -> None:
    # Observed at a pause between the stop and the end of its drain.
    env, model, _ = build_replicas(
        initial_replicas=1, arrivals=[1 * SECOND], cpu_time=1 * SECOND, io_time=None, duration=10 * SECOND
    )
    env.call_at(1500 * MS, lambda: model.scale_to(0))
    env.run(until=1600 * MS)
    (replica,) = model.replicas.values()
    assert replica.state is ReplicaState.TERMINATING
    assert list(model.replicas_terminating) == [replica]
    assert replica not in model.replicas_active
    env.run()
    assert replica.state is ReplicaState.TERMINATED
    assert replica.terminated_at == 2 * SECOND  # when its one request finished


# Two replicas, round robin; each request needs 250 ms of CPU then 250 ms of IO. Arrivals every
# 200 ms alternate between the replicas, so a replica gets one every 400 ms and CPU phases never
# overlap: every request takes exactly 500 ms. replica-1 gets the 400, 800 and 1200 ms arrivals.
# At 1.25 s the scale-down stops replica-1 (both active since 1 ns: the higher id is newer). It
# then holds the 800 ms request (in IO until 1.3 s) and the 1200 ms one (CPU until 1.45 s, IO
# until 1.7 s). Later arrivals (1.3, 2 and 3 s) all go to replica-0.
DRAIN_ARRIVALS = [200 * MS, 400 * MS, 600 * MS, 800 * MS, 1000 * MS, 1200 * MS, 1300 * MS, 2 * SECOND, 3 * SECOND]


def build_drain(grace: int) -> tuple[Environment, ClusterModel, ReplicaTrace]:
    env, model, trace = build_replicas(
        initial_replicas=2,
        arrivals=DRAIN_ARRIVALS,
        cpu_time=250 * MS,
        io_time=250 * MS,
        grace=grace,
        duration=4 * SECOND,
    )
    env.call_at(1250 * MS, lambda: model.scale_to(1))
    return env, model, trace


def test_a_terminating_replica_takes_no_new_requests_and_drains_the_ones_it_holds() -> None:
    env, model, trace = build_drain(grace=30 * SECOND)
    r0, r1 = model.replicas[0], model.replicas[1]
    env.run(until=1500 * MS)
    assert r1.state is ReplicaState.TERMINATING
    assert [r.arrived_at for r in r1.processing] == [1200 * MS]
    env.run()
    sends = [(at, to) for at, kind, _, to, _ in trace.moves if kind == "send_to_replica"]
    assert [to for at, to in sends if at > 1250 * MS] == [r0.processing] * 3
    assert [to for at, to in sends if at <= 1250 * MS] == [r0.processing, r1.processing] * 3
    assert r1.state is ReplicaState.TERMINATED
    assert r1.terminated_at == 1700 * MS  # when the 1200 ms request completed
    assert model.requests_complete.count() == 9
    assert model.requests_failed.count() == 0
    latency = model.requests_complete.latency
    assert latency.min == latency.max == 500 * MS


@pytest.mark.parametrize(
    ("grace", "busy"),
    [
        # Grace ends at 1.35 s, while the 1200 ms request is in its CPU phase (150 ms of it done).
        (100 * MS, 250 * MS + 250 * MS + 150 * MS),
        # Grace ends at 1.55 s, while it is in IO (all 250 ms of CPU done).
        (300 * MS, 3 * 250 * MS),
    ],
)
def test_grace_period_running_out_fails_the_remaining_requests(grace: int, busy: int) -> None:
    env, model, trace = build_drain(grace=grace)
    r1 = model.replicas[1]
    env.run()
    end = 1250 * MS + grace
    failures = [(at, e.arrived_at) for at, _, e, to, _ in trace.moves if to is model.requests_failed]
    assert failures == [(end, 1200 * MS)]
    assert model.requests_failed.reasons == {"killed": 1}
    # The 800 ms request finished (at 1.3 s) before the grace period ran out.
    assert model.requests_complete.count() == 8
    assert r1.terminated_at == end
    assert r1.processing.count() == 0
    assert r1.processing.cpu.busy_core_ns() == pytest.approx(busy)


def test_movement_log_shows_the_stage_names() -> None:
    # The same stage movements as seen by the opt-in MovementLog.
    env, model, _ = build_replicas(launch=stages(("schedule", 1 * SECOND), ("pull", 1 * SECOND), ("start", 1 * SECOND)))
    log = MovementLog()
    env.observe(log)
    env.call_at(1 * SECOND, lambda: model.scale_to(2))
    env.run()
    notes = [(m.occurs_at, m.note) for m in log.movements if m.kind == "launch_stage"]
    assert notes == [(2 * SECOND, "pull"), (2 * SECOND, "pull"), (3 * SECOND, "start"), (3 * SECOND, "start")]
    assert [r.activated_at for r in model.replicas.values()] == [4 * SECOND, 4 * SECOND]


def test_a_request_routed_in_the_instant_its_replica_stops_is_still_served() -> None:
    # At 2 s the scale-down and an arrival coincide. The scale-down's call was scheduled first
    # (before the run), so it runs first and schedules the stop; the arrival (scheduled at 1 s)
    # then routes to replica-1, still active until the stop runs. replica-1 stops with the request
    # on its way in; its first finish_terminating (at once, it looked empty) finds the request
    # there and is ignored, and it terminates when the request completes, 110 ms later.
    env, model, trace = build_replicas(
        initial_replicas=2, arrivals=[1 * SECOND, 2 * SECOND], cpu_time=100 * MS, io_time=10 * MS, duration=5 * SECOND
    )
    env.call_at(2 * SECOND, lambda: model.scale_to(1))
    r1 = model.replicas[1]
    env.run()
    sends = [(at, to) for at, kind, _, to, _ in trace.moves if kind == "send_to_replica"]
    assert sends == [(1 * SECOND, model.replicas[0].processing), (2 * SECOND, r1.processing)]
    assert stop_order(trace) == [(2 * SECOND, "replica-1")]
    assert model.requests_complete.count() == 2
    assert model.requests_complete.latency.max == 110 * MS
    assert r1.terminated_at == 2110 * MS
    ignored = [(i.movement.kind, i.movement.occurs_at) for i in env.ignored if i.movement.what is r1]
    assert ignored == [("finish_terminating", 2 * SECOND)]
