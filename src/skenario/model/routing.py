"""Routing policies: which active replica gets the next request.

Each policy is a zero-argument callable over the live ReplicasActive stock, returning None when
no replica is active. Random draws come from the model's `routing` stream.
"""

from __future__ import annotations

from collections.abc import Callable

from skenario.model.config import RoutingPolicy, RoutingSpec
from skenario.model.replicas import Replica, ReplicasActive

Chooser = Callable[[], "Replica | None"]


def round_robin(active: ReplicasActive) -> Chooser:
    """Each active replica in turn (Kubernetes Services and the Go Skenario)."""
    return active.rotate


def random_choice(active: ReplicasActive, uniform: Callable[[], float]) -> Chooser:
    """A uniformly random active replica (kube-proxy's iptables mode)."""

    def choose() -> Replica | None:
        n = len(active)
        return active.at(int(uniform() * n)) if n else None

    return choose


def least_requests(active: ReplicasActive, uniform: Callable[[], float], choices: int = 2) -> Chooser:
    """The replica holding the fewest requests among `choices` drawn at random.

    Envoy's LEAST_REQUEST balancer with its default of two choices ("power of two choices");
    when `choices` covers every replica it is an exact scan. Ties go to the first drawn.
    """

    def choose() -> Replica | None:
        n = len(active)
        if not n:
            return None
        if n <= choices:
            return min(active, key=lambda r: r.processing.count())
        best = active.at(int(uniform() * n))
        fewest = best.processing.count()
        for _ in range(choices - 1):
            other = active.at(int(uniform() * n))
            held = other.processing.count()
            if held < fewest:
                best, fewest = other, held
        return best

    return choose


def make_chooser(spec: RoutingSpec, active: ReplicasActive, uniform: Callable[[], float]) -> Chooser:
    if spec.policy is RoutingPolicy.RANDOM:
        return random_choice(active, uniform)
    if spec.policy is RoutingPolicy.LEAST_REQUESTS:
        return least_requests(active, uniform, spec.choices)
    return round_robin(active)
