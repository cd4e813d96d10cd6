"""Replica lifecycle: launch stages, scale-down order, termination, draining and grace periods."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from skenario.core.entity import Entity
from skenario.core.environment import Environment, MovementLog
from skenario.core.movement import IgnoredMovement, IgnoredReason, Movement
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, LaunchStage, ReplicaSpec, RequestSpec
from skenario.model.replicas import Replica, ReplicaState

MS = MILLISECOND


class Trace:
    """Observer keeping (time, kind, entity, to_stock, note) of every movement that ran."""

    def __init__(self) -> None:
        self.moves: list[tuple[int, str, Entity, Any, str | None]] = []

    def on_movement(self, movement: Movement, entity: Entity) -> None:
        self.moves.append((movement.occurs_at, movement.kind, entity, movement.to_stock, movement.note))

    def on_ignored(self, ignored: IgnoredMovement) -> None:
        pass

    def of(self, entity: Entity) -> list[tuple[int, str]]:
        return [(at, kind) for at, kind, e, _, _ in self.moves if e is entity]


def stages(*pairs: tuple[str, int]) -> tuple[LaunchStage, ...]:
    return tuple(LaunchStage(name, Constant(duration)) for name, duration in pairs)


def build(
    *,
    duration: int = 20 * SECOND,
    launch: tuple[LaunchStage, ...] = (),
    initial_replicas: int = 0,
    initial_ready: bool = True,
    arrivals: Iterable[int] = (),
    cpu_time: int = 10 * MS,
    io_time: int | None = None,
    grace: int = 30 * SECOND,
) -> tuple[Environment, ClusterModel, Trace]:
    env = Environment(halt_at=duration)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(cpu_time), None if io_time is None else Constant(io_time), 10 * SECOND),
        replica=ReplicaSpec(launch=launch, termination_grace=grace),
        initial_replicas=initial_replicas,
        initial_ready=initial_ready,
    )
    model = ClusterModel(env, spec, iter(list(arrivals)), RandomStreams(1))
    trace = Trace()
    env.observe(trace)
    return env, model, trace


def replica_named(model: ClusterModel, trace: Trace, name: str) -> Replica:
    for _, _, entity, _, _ in trace.moves:
        if isinstance(entity, Replica) and entity.name == name:
            return entity
    for replica in model.replicas.values():
        if replica.name == name:
            return replica
    raise AssertionError(f"no replica {name}")


def test_launch_stages_make_a_replica_active_at_their_sum() -> None:
    env, model, trace = build(launch=stages(("schedule", 1 * SECOND), ("pull", 3 * SECOND), ("start", 500 * MS)))
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
    env, model, _ = build(launch=stages(("start", 2 * SECOND)))
    env.call_at(1 * SECOND, lambda: model.scale_to(2))
    env.run()
    assert sorted(r.activated_at for r in model.replicas.values()) == [3 * SECOND, 3 * SECOND]  # type: ignore[type-var]

    env, model, _ = build(launch=())
    env.call_at(1 * SECOND, lambda: model.scale_to(1))
    env.run()
    (replica,) = model.replicas.values()
    assert replica.activated_at == 1 * SECOND


def stop_order(trace: Trace) -> list[tuple[int, str]]:
    return [(at, e.name) for at, kind, e, _, _ in trace.moves if kind == "terminate_replica"]


def test_scale_down_stops_launching_replicas_newest_first_then_active_newest_first() -> None:
    env, model, trace = build(launch=stages(("start", 1 * SECOND)), initial_replicas=1)
    # replica-0 active at 1 ns; replica-1 launched at 1 s (active 2 s); replica-2 at 3 s (active
    # 4 s); replica-3 and replica-4 launched at 5 s, still launching until 6 s.
    env.call_at(1 * SECOND, lambda: model.scale_to(2))
    env.call_at(3 * SECOND, lambda: model.scale_to(3))
    env.call_at(5 * SECOND, lambda: model.scale_to(5))
    env.call_at(5500 * MS, lambda: model.scale_to(4))  # the newest launching: replica-4
    env.call_at(5600 * MS, lambda: model.scale_to(2))  # replica-3 (launching), then replica-2
    env.call_at(7 * SECOND, lambda: model.scale_to(0))  # replica-1 (active since 2 s), replica-0
    env.run()
    assert stop_order(trace) == [
        (5500 * MS, "replica-4"),
        (5600 * MS, "replica-3"),
        (5600 * MS, "replica-2"),
        (7 * SECOND, "replica-1"),
        (7 * SECOND, "replica-0"),
    ]
    assert model.replica_source.emitted == 5
    assert model.replicas_terminated.count() == 5
    assert model.replicas == {}
    # The two stopped while launching never became active: their finish_launching was ignored.
    ignored = [i.movement.what.name for i in env.ignored if i.movement.kind == "finish_launching"]
    assert sorted(ignored) == ["replica-3", "replica-4"]


def test_scale_down_stops_the_newest_launching_replica_even_after_it_changed_stage() -> None:
    # replica-0 starts launching at 1 s and enters its second stage at 3 s; replica-1 starts at
    # 2 s and is still in its first stage at 3.5 s. replica-1 is the newest, so it is stopped.
    launch = stages(("pull", 2 * SECOND), ("ready", 2 * SECOND))
    env, model, trace = build(launch=launch)
    env.call_at(1 * SECOND, lambda: model.scale_to(1))
    env.call_at(2 * SECOND, lambda: model.scale_to(2))
    env.call_at(3500 * MS, lambda: model.scale_to(1))
    env.run()
    assert stop_order(trace) == [(3500 * MS, "replica-1")]
    survivor = replica_named(model, trace, "replica-0")
    assert survivor.state is ReplicaState.ACTIVE
    assert survivor.activated_at == 5 * SECOND


def test_terminate_while_launching_skips_the_remaining_stages() -> None:
    env, model, trace = build(launch=stages(("pull", 2 * SECOND), ("start", 3 * SECOND)))
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
    env, model, _ = build(
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


def build_drain(grace: int) -> tuple[Environment, ClusterModel, Trace]:
    env, model, trace = build(
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
    assert model.requests_failed.reasons == {"replica_terminated": 1}
    # The 800 ms request finished (at 1.3 s) before the grace period ran out.
    assert model.requests_complete.count() == 8
    assert r1.terminated_at == end
    assert r1.processing.count() == 0
    assert r1.processing.cpu.busy_core_ns() == pytest.approx(busy)


def test_initial_replicas_count_as_desired() -> None:
    env, model, trace = build(initial_replicas=3, launch=stages(("start", 1 * SECOND)))
    assert model.desired == 3
    env.call_at(5 * SECOND, lambda: model.scale_to(3))  # already there: nothing to do
    env.run(until=6 * SECOND)
    kinds = [kind for _, kind, _, _, _ in trace.moves]
    assert kinds.count("start_initial_replica") == 3
    assert "begin_launch" not in kinds
    assert "terminate_replica" not in kinds
    assert model.desired == 3
    assert model.replicas_active.count() == 3
    # One more desired is one more replica (the Go Skenario added N on top of the initial N).
    model.scale_to(4)
    env.run()
    kinds = [kind for _, kind, _, _, _ in trace.moves]
    assert kinds.count("begin_launch") == 1
    assert model.replica_source.emitted == 4
    assert model.replicas_active.count() == 4


def test_initial_replicas_are_active_at_one_nanosecond_when_ready() -> None:
    env, model, _ = build(initial_replicas=2, launch=stages(("start", 1 * SECOND)))
    env.run()
    assert [r.activated_at for r in model.replicas.values()] == [1, 1]


def test_initial_replicas_launch_when_not_ready() -> None:
    env, model, trace = build(initial_replicas=2, initial_ready=False, launch=stages(("boot", 2 * SECOND)))
    assert model.desired == 2
    env.run(until=SECOND)
    assert model.replicas_launching.count() == 2
    assert model.replicas_active.count() == 0
    env.run()
    assert [r.activated_at for r in model.replicas.values()] == [1 + 2 * SECOND] * 2
    kinds = [kind for _, kind, _, _, _ in trace.moves]
    assert kinds.count("begin_launch") == 2
    assert "start_initial_replica" not in kinds
    assert model.desired == 2


def test_movement_log_shows_the_stage_names() -> None:
    # The same stage movements as seen by the opt-in MovementLog.
    env, model, _ = build(launch=stages(("schedule", 1 * SECOND), ("pull", 1 * SECOND), ("start", 1 * SECOND)))
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
    env, model, trace = build(
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


def test_desired_replicas_cannot_be_negative() -> None:
    _, model, _ = build()
    with pytest.raises(ValueError, match="desired replicas"):
        model.scale_to(-1)


def test_replace_stops_one_replica_and_launches_one_from_the_new_template() -> None:
    # Two active replicas of 1000m; at 10 s the template changes to 500m and replica 0 is evicted.
    # With a 2 s launch stage the replacement (a new replica of 500m) is active at 12 s; desired
    # stays 2 throughout and replica 0 ends terminated.
    env = Environment(halt_at=30 * SECOND)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(MILLISECOND)),
        replica=ReplicaSpec(1000, launch=(LaunchStage("start", Constant(2 * SECOND)),)),
        initial_replicas=2,
    )
    model = ClusterModel(env, spec, iter(()), RandomStreams(1))
    first = model.replicas[0]

    def resize() -> None:
        model.set_cpu(500)
        model.replace(first)

    env.call_at(10 * SECOND, resize)
    env.run()
    assert first.terminated_at == 10 * SECOND
    active = list(model.replicas_active)
    assert sorted(r.cpu_request for r in active) == [500, 1000]
    newcomer = next(r for r in active if r.cpu_request == 500)
    assert newcomer.activated_at == 12 * SECOND
    assert newcomer.millicores == 500
    assert model.desired == 2
