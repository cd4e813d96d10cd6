"""Knative's activator in the request path: its throttler hands held requests to pods as slots open.

While a revision's ServerlessService is in Proxy mode every request goes to the activator (at
zero pods always; above zero while the excess burst capacity is negative, which the KPA decides).
Its throttler (knative/serving `pkg/activator/net/throttler.go`, `revisionThrottler.try`) keeps a
tracker per ready pod with `containerConcurrency` (CC) slots and sends a request only into a free
slot, picked by the load-balancing policy for that CC (`lb_policy.go`): the first pod with a free
slot for CC 1 to 3 (`firstAvailableLBPolicy`), round robin over pods with a free slot above 3
(`newRoundRobinPolicy`), and the less loaded of two random pods when CC is 0, whose breaker only
waits for some pod to exist (`randomChoice2Policy`, the infinite breaker). The trackers are in
the order of their `dest`, the string "IP:port" (`updateCapacity` sorts them before
`assignSlice`), so first-available loads the pods with the lowest addresses most, whatever their
age (model/addresses.py). As a proxied request finishes its slot frees and the oldest held
request goes next, so a backlog spreads over pods as they become ready instead of flooding the
first one.

Its concurrency reporter (`pkg/activator/handler/concurrency_reporter.go`) counts every request
it takes from arrival until the pod answers, held or proxied (`reported_area`, `taken`); a pod's
queue-proxy counts the requests the activator proxied to it apart (`ProxiedIn` in
pkg/queue/handler.go, here `RequestsProcessing.proxied_in`), so the autoscaler can take them off
the pod's figures and count them once, at the activator.

One `Activator` stands for all of the activator's replicas: each takes a slice of the pods
(`assignSlice`), so together they hold CC slots per ready pod. What is not modelled: the
activator's probe of a new pod before it sends it traffic (200 ms period) and its own latency.
"""

from __future__ import annotations

from bisect import insort
from collections import deque
from collections.abc import Callable
from typing import Any

from skenario.core.environment import Environment
from skenario.core.stocks import SinkStock
from skenario.model.addresses import QUEUE_PROXY_PORT
from skenario.model.replicas import Replica
from skenario.model.requests import BUFFERED, ROUTING, Request, RequestsBuffered

BREAKER_QUEUE_DEPTH = 10_000
"""`breakerQueueDepth` (pkg/activator/net/throttler.go): requests one revision's breaker holds."""
FIRST_AVAILABLE_MAX_CC = 3
"""Up to this containerConcurrency the throttler picks the first pod with a free slot (`newRevisionThrottler`)."""


class Activator(RequestsBuffered):
    """The activator's revision throttler: holds requests and sends each into a free slot of a ready pod.

    It is the model's RequestsBuffered stock, so the series and the KPA see what it holds.
    `in_path` says whether routing sends every request here (the SKS in Proxy mode) or only those
    arriving while no pod is ready. `on_request` hooks hear each request it takes (the
    concurrency reporter's immediate stat, which pokes a KPA at zero).
    """

    __slots__ = (
        "_env",
        "_next",
        "_pods",
        "_proxied",
        "_proxied_area",
        "_sent",
        "_uniform",
        "_waiting",
        "container_concurrency",
        "failed",
        "on_request",
        "slots",
        "taken",
    )

    def __init__(
        self,
        env: Environment,
        failed: SinkStock[Request],  # RequestsFailed, or the clients when they retry
        container_concurrency: int,
        uniform: Callable[[], float],
        capacity: int = BREAKER_QUEUE_DEPTH,
    ) -> None:
        super().__init__(env, capacity)
        if container_concurrency < 0:
            raise ValueError(f"containerConcurrency must be >= 0, got {container_concurrency}")
        self._env = env
        self.failed: Any = failed  # where failures go: RequestsFailed, or the clients when they retry
        self._uniform = uniform
        self.container_concurrency = container_concurrency
        self.in_path = True  # an SKS starts in Proxy mode (kpa.go `reconcile`)
        self.on_request: list[Callable[[Request], object]] = []
        self._waiting: deque[Request] = deque()  # held requests in arrival order (some may have left)
        self._pods: list[Replica] = []  # ready pods in the order of their dest
        self.slots: dict[Replica, int] = {}  # requests proxied to each ready pod and still there
        self._proxied: dict[Request, Replica] = {}
        self._proxied_area = 0  # as RequestsBuffered's area, for the requests at pods
        self._sent = 0  # proxied requests at their pods
        self.taken = 0  # requests it took
        self._next = 0  # round robin: where the next search starts

    def add(self, entity: Request) -> None:
        super().add(entity)
        self.taken += 1
        self._waiting.append(entity)
        for hook in self.on_request:
            hook(entity)
        self.dispatch()

    def remove(self, entity: Request | None = None) -> Request | None:
        """A request leaves: one it proxied reaches its pod now, whose queue-proxy counts it as proxied."""
        request = super().remove(entity)
        if request is not None:
            replica = self._proxied.get(request)
            if replica is not None:
                self._sent += 1
                self._proxied_area -= self._env._now
                replica.processing.proxied_in()
        return request

    def pod_ready(self, replica: Replica) -> None:
        """A pod became ready: it has CC free slots."""
        if replica not in self.slots:
            self.slots[replica] = 0
            insort(self._pods, replica, key=dest)
        self.dispatch()

    def pod_gone(self, replica: Replica) -> None:
        """A pod stopped being ready: no more requests go to it (those there finish or fail there)."""
        if self.slots.pop(replica, None) is not None:
            self._pods.remove(replica)

    def left(self, request: Request) -> None:
        """A request left its pod (completed or failed): if the activator sent it, its slot frees."""
        replica = self._proxied.pop(request, None)
        if replica is None:
            return
        self._sent -= 1
        self._proxied_area += self._env._now
        replica.processing.proxied_out()
        if replica in self.slots:
            self.slots[replica] -= 1
            self.dispatch()

    def reported_area(self) -> int:
        """Integral of the requests it handles over time, held or proxied until their pod answers, in
        request-ns up to now: what its concurrency reporter averages."""
        return self.held_area() + self._proxied_area + self._sent * self._env._now

    def dispatch(self) -> None:
        """Send held requests, oldest first, into free slots until one of the two runs out."""
        waiting = self._waiting
        env = self._env
        while waiting:
            request = waiting[0]
            if request.stage != BUFFERED or request.failure is not None:
                waiting.popleft()  # timed out, or on its way out already
                continue
            replica = self._acquire()
            if replica is None:
                return
            waiting.popleft()
            processing = replica.processing
            request.stage = ROUTING
            if not processing.has_room():  # direct traffic filled the pod's queue-proxy too
                request.failure = processing.overflow
                env.schedule("request_failed", env.now(), self, self.failed, request)
                continue
            self.slots[replica] += 1
            self._proxied[request] = replica
            request.processing = processing
            env.schedule("send_to_replica", env.now(), self, processing, request)

    def _acquire(self) -> Replica | None:
        """The pod the next request goes to, by the load-balancing policy for CC; None if no slot is free."""
        pods = self._pods
        if not pods:
            return None
        cc = self.container_concurrency
        slots = self.slots
        if cc == 0:  # randomChoice2Policy: the less loaded of two random pods
            n = len(pods)
            if n == 1:
                return pods[0]
            first = int(self._uniform() * n)
            second = int(self._uniform() * (n - 1))
            if second >= first:
                second += 1
            a, b = pods[first], pods[second]
            return b if slots[b] < slots[a] else a
        if cc <= FIRST_AVAILABLE_MAX_CC:  # firstAvailableLBPolicy
            for replica in pods:
                if slots[replica] < cc:
                    return replica
            return None
        n = len(pods)  # round robin over pods with a free slot
        for step in range(n):
            replica = pods[(self._next + step) % n]
            if slots[replica] < cc:
                self._next = (self._next + step + 1) % n
                return replica
        return None


def dest(replica: Replica) -> str:
    """The throttler's `dest` for a pod, "IP:port": what it orders its trackers by (as strings)."""
    return f"{replica.address}:{QUEUE_PROXY_PORT}"
