"""The ClusterModel wires the stocks of replicas and requests together (seeds 000/002)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from skenario.core.environment import Environment
from skenario.core.stocks import Stock
from skenario.model.replicas import Replica, ReplicasActive, ReplicaSource
from skenario.model.requests import (
    RequestsComplete,
    RequestsFailed,
    RequestsProcessing,
    RequestsRouting,
    TrafficSource,
)

# Movements other than the start need a time after 0; replicas come up in the first nanosecond.
ACTIVATE_AT = 1


@dataclass(frozen=True)
class WorkloadConfig:
    """What each replica is: how many, and how it serves requests."""

    replicas: int
    concurrency: int = 1
    queue_capacity: int | None = None


class ClusterModel:
    """Owns the stocks; the logic lives in them."""

    def __init__(
        self,
        env: Environment,
        workload: WorkloadConfig,
        arrivals: Iterator[int],
        service_time: Callable[[], int],
    ) -> None:
        self.env = env
        self.replica_source = ReplicaSource()
        self.replicas_active = ReplicasActive()
        self.requests_complete = RequestsComplete(env)
        self.requests_failed = RequestsFailed()
        self.requests_routing = RequestsRouting(env, self.replicas_active, self.requests_failed)
        self.traffic_source = TrafficSource(env, arrivals, self.requests_routing)
        self.replicas: list[Replica] = []
        for i in range(workload.replicas):
            processing = RequestsProcessing(
                f"RequestsProcessing[replica-{i}]",
                env,
                service_time,
                self.requests_complete,
                concurrency=workload.concurrency,
                capacity=workload.queue_capacity,
            )
            replica = Replica(i, processing)
            self.replicas.append(replica)
            env.schedule("activate_replica", ACTIVATE_AT, self.replica_source, self.replicas_active, replica)
        self.traffic_source.start()

    def stocks(self) -> list[Stock]:
        """Every stock of the model, for accounting and recording."""
        return [
            self.replica_source,
            self.replicas_active,
            self.traffic_source,
            self.requests_routing,
            *(r.processing for r in self.replicas),
            self.requests_complete,
            self.requests_failed,
        ]

    @property
    def requests_arrived(self) -> int:
        return self.traffic_source.emitted

    @property
    def requests_in_flight(self) -> int:
        return self.requests_routing.count() + sum(r.processing.count() for r in self.replicas)
