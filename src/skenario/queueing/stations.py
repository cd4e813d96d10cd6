"""Load-dependent and finite-capacity stations: a centre whose service rate depends on how many jobs it holds,
and one that turns arrivals away when full.

A centre with `rates` (α(1), α(2), ..., the last repeated) completes jobs at α(j)/S while it holds j, S being
one visit's service time: α(j) = min(j, c) is a c-server centre, a memory-constrained subsystem's throughputs
make a flow-equivalent server (PDQ's FESC). A centre with `capacity` K holds at most K jobs, those in
service included; an arrival that finds it full is lost (M/M/1/K, M/M/c/K).

For an open class such a station is a birth-death chain: p(j) = p(0) Π_{i<=j} λ S / α(i), up to K or, without
a capacity, over all j (the tail past the last rate is geometric and summed exactly; it needs λ S < α(last)).
Then the blocking probability is p(K) (PASTA), the throughput λ (1 - p(K)), the mean number Σ j p(j), and the
response time that number over the throughput (Little's law with the admitted rate).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TAIL = 1e-15
"""Past the last rate an infinite station's terms shrink geometrically; its tail is summed in closed form."""


@dataclass(frozen=True)
class StationResult:
    """An open station at arrival rate `arrival`: its state probabilities p(0..), the blocking probability,
    the throughput, the mean number present and the response time per visit."""

    probabilities: np.ndarray
    blocking: float
    throughput: float
    number: float
    response: float

    @property
    def idle(self) -> float:
        return float(self.probabilities[0])


def multipliers(rates: Sequence[float], servers: int, count: int) -> np.ndarray:
    """α(1..count): the rates given (the last repeated), or min(j, servers)."""
    j = np.arange(1, count + 1, dtype=float)
    if not rates:
        return np.asarray(np.minimum(j, servers), dtype=float)
    given = np.asarray(rates, dtype=float)
    if count <= len(given):
        return np.asarray(given[:count], dtype=float)
    return np.concatenate([given, np.full(count - len(given), given[-1])])


def open_station(
    arrival: float, service: float, rates: Sequence[float] = (), servers: int = 1, capacity: int | None = None
) -> StationResult:
    """The birth-death station at Poisson arrival rate `arrival`, `service` time per visit, rates α(j) (or
    `servers` servers) and at most `capacity` jobs. ValueError when an infinite one is not stable."""
    if arrival < 0 or service < 0:
        raise ValueError(f"arrival rate and service time must be >= 0, got {arrival} and {service}")
    load = arrival * service
    if capacity is not None:
        if capacity < 1:
            raise ValueError(f"a capacity holds at least one job, got {capacity}")
        alphas = multipliers(rates, servers, capacity)
        logs = np.concatenate([[0.0], np.cumsum(np.log(load) - np.log(alphas))]) if load > 0 else _empty(capacity)
        p = np.exp(logs - logs.max())
        p /= p.sum()
        blocking = float(p[-1])
        throughput = arrival * (1.0 - blocking)
        number = float((np.arange(capacity + 1) * p).sum())
        return StationResult(p, blocking, throughput, number, number / throughput if throughput > 0 else service)
    head = max(len(rates), servers if not rates else 0, 1)
    alphas = multipliers(rates, servers, head)
    last = float(alphas[-1])
    if load >= last:
        raise ValueError(
            f"the station is saturated: its load {load:g} (arrival rate x service time) is not below the rate "
            f"{last:g} it reaches with many jobs present"
        )
    if load == 0:
        return StationResult(np.exp(_empty(head)), 0.0, 0.0, 0.0, service)
    logs = np.concatenate([[0.0], np.cumsum(np.log(load) - np.log(alphas))])
    terms = np.exp(logs)
    ratio = load / last  # each term past the head is the one before times this
    tail = terms[-1] * ratio / (1.0 - ratio)  # Σ_{j>head} terms[head] ratio^(j-head)
    head_j = np.arange(head + 1)
    tail_number = terms[-1] * (head * ratio / (1.0 - ratio) + ratio / (1.0 - ratio) ** 2)  # Σ j terms[j], j>head
    total = float(terms.sum() + tail)
    number = float((head_j * terms).sum() + tail_number) / total
    p = terms / total
    return StationResult(p, 0.0, arrival, number, number / arrival)


def _empty(count: int) -> np.ndarray:
    """log p(j) of a station nobody arrives at: all the mass at 0."""
    out = np.full(count + 1, -math.inf)
    out[0] = 0.0
    return out
