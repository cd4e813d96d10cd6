"""What a solver returns: per class and per centre mean values, and how they were obtained.

Solvers work on arrays (centre x class residence times, class throughputs); `Solution.of` turns
them into named results with PDQ's definitions: utilisation is X_c D_kc per server (PDQ's
`GetUtilization`), queue length is X_c R_kc by Little's law (`GetQueueLength`), and a closed
class's response time excludes its think time (`GetResponse`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from skenario.queueing.network import Network


class Method(StrEnum):
    CANONICAL = "canonical"  # open networks: PDQ CANON
    EXACT = "exact"  # exact MVA (Reiser-Lavenberg), or its stable load-dependent form
    APPROX = "approx"  # Bard-Schweitzer approximate MVA with PDQ's stopping rule


@dataclass(frozen=True)
class ClassMetrics:
    throughput: float
    response: float  # time spent at the centres per cycle, think time excluded
    number: float  # jobs at the centres (X * response)


@dataclass(frozen=True)
class CentreMetrics:
    residence: float  # per cycle, over all visits
    utilization: float  # per server (for a centre with rates, of its last rate)
    queue_length: float  # waiting and in service
    blocking: float = 0.0  # the probability an arrival finds it full (a centre with a capacity)


@dataclass(frozen=True)
class Solution:
    network: Network
    method: Method
    classes: dict[str, ClassMetrics]
    centres: dict[str, dict[str, CentreMetrics]]  # centre -> class -> metrics
    iterations: int | None = None
    approximations: tuple[str, ...] = ()  # what made this answer approximate, in words

    @property
    def exact(self) -> bool:
        return not self.approximations

    def response(self, cls: str) -> float:
        return self.classes[cls].response

    def throughput(self, cls: str) -> float:
        return self.classes[cls].throughput

    def utilization(self, centre: str) -> float:
        """Total utilisation of a centre per server, over all classes."""
        return sum(m.utilization for m in self.centres[centre].values())

    def queue_length(self, centre: str) -> float:
        return sum(m.queue_length for m in self.centres[centre].values())

    def residence(self, centre: str, cls: str) -> float:
        return self.centres[centre][cls].residence

    @classmethod
    def of(
        cls,
        network: Network,
        method: Method,
        throughput: Sequence[float] | np.ndarray,
        residence: np.ndarray,
        *,
        iterations: int | None = None,
        approximations: Sequence[str] = (),
        blocking: Sequence[float] | np.ndarray | None = None,
    ) -> Solution:
        """Named results from X[c] and R[k, c] over `network`'s own centres and demands; `blocking[k]`, the
        probability an arrival finds centre k full."""
        x = np.asarray(throughput, dtype=float)
        classes = {
            c.name: ClassMetrics(float(x[j]), float(residence[:, j].sum()), float(x[j] * residence[:, j].sum()))
            for j, c in enumerate(network.classes)
        }
        centres: dict[str, dict[str, CentreMetrics]] = {}
        for k, centre in enumerate(network.centres):
            per_server = 1 if centre.is_delay else (centre.rates[-1] if centre.rates else centre.servers)
            lost = float(blocking[k]) if blocking is not None else 0.0
            centres[centre.name] = {
                c.name: CentreMetrics(
                    residence=float(residence[k, j]),
                    utilization=float(x[j] * c.demand(centre.name) / per_server),
                    queue_length=float(x[j] * residence[k, j]),
                    blocking=lost if c.demand(centre.name) > 0 else 0.0,
                )
                for j, c in enumerate(network.classes)
            }
        return cls(network, method, classes, centres, iterations, tuple(dict.fromkeys(approximations)))


def demand_matrix(network: Network) -> np.ndarray:
    """D[k, c]: the demand of class c at centre k."""
    return np.array([[c.demand(k.name) for c in network.classes] for k in network.centres], dtype=float).reshape(
        len(network.centres), len(network.classes)
    )
