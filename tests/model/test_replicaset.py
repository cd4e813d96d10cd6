"""ReplicaSet: desired replicas, initial ones, and which replica a scale-down or a replacement stops."""

from __future__ import annotations

import pytest

from skenario.core.environment import Environment
from skenario.core.random import Constant, RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClusterSpec, LaunchStage, ReplicaSpec, RequestSpec
from skenario.model.replicas import Replica, ReplicaState
from tests.model import ReplicaTrace, build_replicas, stages, stop_order

MS = MILLISECOND


def replica_named(model: ClusterModel, trace: ReplicaTrace, name: str) -> Replica:
    for _, _, entity, _, _ in trace.moves:
        if isinstance(entity, Replica) and entity.name == name:
            return entity
    for replica in model.replicas.values():
        if replica.name == name:
            return replica
    raise AssertionError(f"no replica {name}")


def test_scale_down_stops_launching_replicas_newest_first_then_active_newest_first() -> None:
    env, model, trace = build_replicas(launch=stages(("start", 1 * SECOND)), initial_replicas=1)
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
    env, model, trace = build_replicas(launch=launch)
    env.call_at(1 * SECOND, lambda: model.scale_to(1))
    env.call_at(2 * SECOND, lambda: model.scale_to(2))
    env.call_at(3500 * MS, lambda: model.scale_to(1))
    env.run()
    assert stop_order(trace) == [(3500 * MS, "replica-1")]
    survivor = replica_named(model, trace, "replica-0")
    assert survivor.state is ReplicaState.ACTIVE
    assert survivor.activated_at == 5 * SECOND


def test_initial_replicas_count_as_desired() -> None:
    env, model, trace = build_replicas(initial_replicas=3, launch=stages(("start", 1 * SECOND)))
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
    env, model, _ = build_replicas(initial_replicas=2, launch=stages(("start", 1 * SECOND)))
    env.run()
    assert [r.activated_at for r in model.replicas.values()] == [1, 1]


def test_initial_replicas_launch_when_not_ready() -> None:
    env, model, trace = build_replicas(initial_replicas=2, initial_ready=False, launch=stages(("boot", 2 * SECOND)))
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


def test_desired_replicas_cannot_be_negative() -> None:
    _, model, _ = build_replicas()
    with pytest.raises(ValueError, match="desired replicas"):
        model.scale_to(-1)


def test_replace_stops_one_replica_and_launches_one_from_the_new_template() -> None:
    # Two active replicas of 1000m; at 10 s the template changes to 500m and replica 0 is evicted.
    # With a 2 s launch stage the replacement (a new replica of 500m) is active at 12 s; desired
    # stays 2 throughout and replica 0 ends terminated.
    env = Environment(halt_at=30 * SECOND)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(MILLISECOND)),
        replica=ReplicaSpec(1000, cpu_limit=1000, launch=(LaunchStage("start", Constant(2 * SECOND)),)),
        initial_replicas=2,
    )
    model = ClusterModel(env, spec, iter(()), RandomStreams(1))
    first = model.replicas[0]

    def resize() -> None:
        model.set_cpu(500, 500)
        model.replace(first)

    env.call_at(10 * SECOND, resize)
    env.run()
    assert first.terminated_at == 10 * SECOND
    active = list(model.replicas_active)
    assert sorted(r.cpu_request for r in active) == [500, 1000]
    newcomer = next(r for r in active if r.cpu_request == 500)
    assert newcomer.activated_at == 12 * SECOND
    assert newcomer.millicores == 500  # its new limit
    assert model.desired == 2
