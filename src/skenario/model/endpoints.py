"""Endpoints as the routers see them: the ready replicas, and for a while the ones just deleted.

When a pod is deleted, the endpoints controller drops it from its Service's EndpointSlices at
once, but kube-proxy, ingresses and meshes learn of it only after a propagation delay (about a
second, with a tail to tens of seconds). Until then they keep sending it requests. At the same
time the kubelet runs the pod's preStop hook and then stops the container, which stops
accepting connections: a request that reaches it after that fails as `refused`. A preStop
sleep at least as long as the propagation delay closes the window.

`StaleEndpoints` holds the deleted replicas routers still know, each until its own drawn delay
passes. While it holds any, a request goes to one of them with probability stale / (ready +
stale), as a router choosing uniformly among the endpoints it knows would (kube-proxy's iptables
mode); the ready ones keep their policy's order otherwise. With no stale endpoint the chooser
is the policy's own, untouched.
"""

from __future__ import annotations

from collections.abc import Callable

from skenario.core.environment import Environment
from skenario.model.replicas import Replica, ReplicasActive, ReplicaState

Chooser = Callable[[], "Replica | None"]


class StaleEndpoints:
    """Deleted replicas the routers still send requests to, and whether each still accepts them."""

    __slots__ = ("_env", "_pre_stop", "_propagation", "_stopping_since", "replicas")

    def __init__(self, env: Environment, propagation: Callable[[], int], pre_stop: int) -> None:
        self._env = env
        self._propagation = propagation
        self._pre_stop = pre_stop
        self.replicas: list[Replica] = []
        self._stopping_since: dict[Replica, int] = {}

    def deleted(self, replica: Replica) -> None:
        """The replica began terminating: routers drop it after a propagation delay drawn now."""
        delay = self._propagation()
        now = self._env.now()
        if delay > 0:
            self._stopping_since[replica] = now
            self.replicas.append(replica)
            if now + delay < self._env.halt_at:  # else routers know it until the end of the run
                self._env.call_later(delay, lambda: self._propagated(replica))

    def _propagated(self, replica: Replica) -> None:
        self.replicas.remove(replica)
        self._stopping_since.pop(replica, None)

    def accepts(self, replica: Replica) -> bool:
        """Whether the replica takes a new request now: ready, or stopping but still in its preStop sleep."""
        if replica.state is ReplicaState.ACTIVE:
            return True
        if replica.state is not ReplicaState.TERMINATING:
            return False
        since = self._stopping_since.get(replica)
        return since is not None and self._env.now() < since + self._pre_stop

    def chooser(self, ready: ReplicasActive, policy: Chooser, uniform: Callable[[], float]) -> Chooser:
        """`policy` over the ready replicas, with each stale endpoint taking its share of requests."""
        stale = self.replicas

        def choose() -> Replica | None:
            if not stale:
                return policy()
            known = len(ready) + len(stale)
            pick = int(uniform() * known)
            if pick < len(stale):
                return stale[pick]
            return policy()

        return choose
