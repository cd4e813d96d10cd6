"""A fluid replica behind the face of `RequestsProcessing`, so the replica path, the kubelet, the metrics
pipeline, the autoscalers' context and the recorder read it as they read a discrete replica.

It holds no request entities: `count()` is the requests the plant estimates it holds (its queue's
backlog and those in their IO, `FluidReplica.hold`) rounded, `in_flight_area()` their integral, the
CPU the fluid's exact integral, and a drain completes at the first step of the plant that finds it
holding less than half a request. What the discrete replica does per request (memory per request, warm-up
work, Knative's proxied requests) is not modelled: a fluid run refuses the scenarios that need it.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from skenario.core.environment import Environment
from skenario.core.time import SECOND
from skenario.model.fluid.replica import FluidReplica

DITHER = (0.6180339887498949, 0.7548776662466927)
"""Irrational steps of the dithering `FluidProcessing.count` does, per replica and per second (the golden
ratio's and the plastic number's fractional parts: their multiples fall evenly in [0, 1))."""


@dataclass(frozen=True)
class NodeShare:
    """Where a fluid replica's pod runs on spec.cluster: its node, the node's millicores, the pod's CPU
    weight there (from its request) and its cap (its limit, or the node)."""

    node: str
    node_millicores: int
    weight: float
    cap: int


class FluidCPU:
    """The CPU a fluid replica reports: its capacity, and the exact integral of its cores in use."""

    owner: Any = None  # never a NodeCPU's: on spec.cluster the fluid plant shares its node (`node`)

    def __init__(self, env: Environment, replica: FluidReplica) -> None:
        self._env = env
        self.replica = replica
        self.node: NodeShare | None = None  # its pod's node on spec.cluster, once bound

    @property
    def millicores(self) -> int:
        return self.replica.millicores

    def busy_core_ns(self) -> float:
        return self.replica.busy_core_ns(self._env.now())


class FluidProcessing:
    """One replica's requests as a fluid (`FluidReplica`), read as `RequestsProcessing` is read."""

    kind_stocked = "Request"
    concurrency: int | None = None
    capacity: int | None = None
    proxied = 0  # no activator proxies to a fluid replica

    def __init__(self, name: str, env: Environment, replica: FluidReplica, fail: Callable[[str, float], None]) -> None:
        self.name = name
        self._env = env
        self.replica = replica
        self.cpu = FluidCPU(env, replica)
        self._fail = fail  # the plant's count of failed requests: (reason, how many)
        self._phase = zlib.crc32(name.encode()) * DITHER[0] % 1.0  # where its dithering starts
        self._on_drained: Callable[[], object] | None = None
        self.memory: Any = None

    overflow = "replica_queue_full"  # never met: a fluid replica always has room

    def add(self, entity: Any) -> None:
        """A fluid replica takes rates, not request entities (the plant sets them)."""
        raise TypeError(f"{self.name} is a fluid replica: requests reach it as a rate, not one by one")

    def remove(self, entity: Any = None) -> None:
        return None  # it holds no entity to give back

    def proxied_in(self) -> None:
        raise TypeError(f"{self.name} is a fluid replica: Knative's activator proxies to discrete ones only")

    def proxied_out(self) -> None:  # a method of its own: a compiled class cannot alias one (`proxied_out = ...`)
        self.proxied_in()

    def count(self) -> int:
        """The requests held as a whole number, dithered: the real number plus a sequence of the replica and
        the instant (no random draw, so reading changes nothing), rounded down; its mean over readings is
        the real number, where rounding each replica's 1.6 to 2 would count a quarter too many."""
        now = self._env.now()
        return math.floor(self.replica.held() + (self._phase + now / SECOND * DITHER[1]) % 1.0)

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __contains__(self, entity: object) -> bool:
        return False

    def has_room(self) -> bool:
        return True

    def in_flight_area(self) -> int:
        return round(self.replica.held_area(self._env.now()))

    @property
    def arrived(self) -> int:
        return round(self.replica.arrived(self._env.now()))

    def proxied_area(self) -> int:
        return 0

    def drain(self, on_drained: Callable[[], object]) -> None:
        """Call `on_drained` once the level is below half a request (at once if it is; else at a plant step)."""
        if self.count() == 0:
            on_drained()
        else:
            self._on_drained = on_drained

    def drained(self) -> None:
        """At a plant step: a drain under way ends if the level has fallen below half a request."""
        if self._on_drained is not None and self.count() == 0:
            on_drained, self._on_drained = self._on_drained, None
            on_drained()

    def fail_all(self, reason: str) -> None:
        """The requests held fail now (a grace period ran out, the container was killed)."""
        self._on_drained = None
        self._fail(reason, self.replica.drop_held(self._env.now()))

    def hold_memory(self, memory: Any, per_request: Callable[[], int] | None) -> None:
        if per_request is not None:
            raise ValueError("a fluid replica holds no memory per request")
        self.memory = memory

    def warm_up(self, duration: int, slowdown: float, cpu_work: int) -> None:
        raise ValueError("a fluid replica does not warm up")

    def set_work(self, work: Any) -> None:
        raise ValueError("a fluid run's requests keep their work: change it with a discrete run")
