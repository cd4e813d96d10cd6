"""Tests of the cluster model (src/skenario/model), one module per source module, and the two small
worlds several of them build.

- The request path (test_requests, test_processing, test_routing): `build_requests` wires a
  ClusterModel with a `RequestTrace` watching it; `Cycle` hands out given work times in turn.
- The replicas (test_replicas, test_replicaset): `build_replicas` wires one with a `ReplicaTrace`;
  `stages` writes launch stages and `stop_order` reads which replicas a scale-down stopped, when.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from skenario.core.entity import Entity
from skenario.core.environment import Environment
from skenario.core.movement import IgnoredMovement, Movement
from skenario.core.random import Constant, Distribution, RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import (
    ClientSpec,
    ClusterSpec,
    LaunchStage,
    ReplicaSpec,
    RequestSpec,
    RoutingPolicy,
    RoutingSpec,
)

MS = MILLISECOND
TEN_MS = Constant(10 * MILLISECOND)


# -- the request path ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Cycle:
    """A test distribution: the given values in turn (each batch starts again from the first)."""

    values: tuple[int, ...]

    def batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.resize(np.array(self.values, dtype=np.float64), size)

    def mean(self) -> float:
        return sum(self.values) / len(self.values)


class RequestTrace:
    """Observer keeping (time, kind, entity, from_stock, to_stock) of every movement that ran."""

    def __init__(self) -> None:
        self.moves: list[tuple[int, str, Entity, Any, Any]] = []

    def on_movement(self, movement: Movement, entity: Entity) -> None:
        self.moves.append((movement.occurs_at, movement.kind, entity, movement.from_stock, movement.to_stock))

    def on_ignored(self, ignored: IgnoredMovement) -> None:
        pass

    def kind(self, kind: str) -> list[tuple[int, Entity, Any, Any]]:
        return [(at, e, f, t) for at, k, e, f, t in self.moves if k == kind]


def build_requests(
    *,
    arrivals: Iterable[int],
    duration: int = 10 * SECOND,
    cpu_time: Distribution = TEN_MS,
    io_time: Distribution | None = None,
    timeout: int | None = 10 * SECOND,
    replicas: int = 0,
    launch: tuple[LaunchStage, ...] = (),
    buffer_capacity: int = 1000,
    concurrency: int | None = None,
    policy: RoutingPolicy = RoutingPolicy.ROUND_ROBIN,
    choices: int = 2,
    seed: int = 1,
    client: ClientSpec | None = None,
) -> tuple[Environment, ClusterModel, RequestTrace]:
    env = Environment(halt_at=duration)
    spec = ClusterSpec(
        requests=RequestSpec(cpu_time, io_time, timeout),
        replica=ReplicaSpec(cpu_limit=1000, launch=launch, concurrency=concurrency),  # one core each
        initial_replicas=replicas,
        routing=RoutingSpec(policy=policy, choices=choices, buffer_capacity=buffer_capacity),
        client=client or ClientSpec(),
    )
    model = ClusterModel(env, spec, iter(arrivals), RandomStreams(seed))
    trace = RequestTrace()
    env.observe(trace)
    return env, model, trace


# -- the replicas --------------------------------------------------------------------------------


class ReplicaTrace:
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


def build_replicas(
    *,
    duration: int = 20 * SECOND,
    launch: tuple[LaunchStage, ...] = (),
    initial_replicas: int = 0,
    initial_ready: bool = True,
    arrivals: Iterable[int] = (),
    cpu_time: int = 10 * MS,
    io_time: int | None = None,
    grace: int = 30 * SECOND,
) -> tuple[Environment, ClusterModel, ReplicaTrace]:
    env = Environment(halt_at=duration)
    spec = ClusterSpec(
        requests=RequestSpec(Constant(cpu_time), None if io_time is None else Constant(io_time), 10 * SECOND),
        replica=ReplicaSpec(cpu_limit=1000, launch=launch, termination_grace=grace),  # one core each
        initial_replicas=initial_replicas,
        initial_ready=initial_ready,
    )
    model = ClusterModel(env, spec, iter(list(arrivals)), RandomStreams(1))
    trace = ReplicaTrace()
    env.observe(trace)
    return env, model, trace


def stop_order(trace: ReplicaTrace) -> list[tuple[int, str]]:
    return [(at, e.name) for at, kind, e, _, _ in trace.moves if kind == "terminate_replica"]
