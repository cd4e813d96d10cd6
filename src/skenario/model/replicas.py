"""Replicas: ReplicaSource -> ReplicasActive.

The walking skeleton has a fixed set of replicas that become active just after the start.
Issue #3 adds launching stages, termination and a desired-replica count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skenario.core.entity import Entity
from skenario.core.stocks import FifoStock, Source

if TYPE_CHECKING:
    from skenario.model.requests import RequestsProcessing


class Replica(Entity):
    """A replica; the requests it is processing live in its own stock."""

    __slots__ = ("processing",)
    kind = "Replica"

    def __init__(self, id: int, processing: RequestsProcessing) -> None:
        self.id = id
        self.processing = processing


class ReplicaSource(Source[Replica]):
    """Gives the replica a movement names; the model builds the replicas beforehand."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("ReplicaSource", "Replica")


class ReplicasActive(FifoStock[Replica]):
    """Replicas that take traffic, in round-robin order (see `FifoStock.rotate`)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("ReplicasActive", "Replica")
