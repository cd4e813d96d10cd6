"""The clients' side of requests: retries after a jittered back-off, per-try timeouts, a retry budget.

Every failed attempt passes through `RequestsRetrying` before it counts as failed. If the client
retries that failure (`RetryPolicy.retry_on`), has attempts left and the budget allows, the attempt
waits out its back-off here and goes back to routing as the next attempt; otherwise it fails, as
`retries_exhausted` when every attempt failed in a way the client retries. This is Envoy's router
retry state (`RetryStateImpl::shouldRetry`, jittered back-off `JitteredExponentialBackOffStrategy`,
`retry_budget`) and, with a back-off multiplier, gRPC's retryPolicy.

A client that gives up on an attempt the server is working on (a per-try timeout, or the
request's own timeout) leaves it to the server, which keeps working on it unless the clients
`cancel` (real servers do not hear that the client went away): the attempt is *abandoned*; when it
finishes it counts as neither completed nor failed. A retry of an abandoned attempt is a new
attempt of the same request (same id, same arrival).

Giving up takes effect as a movement, like every other step of a request: one that comes in the
instant the attempt's response is due runs after that response's movement, already on the
schedule, and then there is nothing left to give up (as with clients that cancel, whose failure
movement finds the attempt gone). So a request whose response comes at the very instant its
timeout fires completes if the response was due before the client's timer ran, and times out if
the timer ran first.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator

from skenario.core.environment import Environment
from skenario.core.stocks import Source
from skenario.model.config import ClientSpec, RetryPolicy
from skenario.model.requests import CPU, DONE, IO, ROUTING, Request, RequestsBuffered, RequestsFailed, RequestsRouting

RETRYING = 6  # a stage: waiting out a back-off in RequestsRetrying


def backoff_ceiling(policy: RetryPolicy, retry: int) -> int:
    """The longest back-off before the `retry`-th retry (1-based): Envoy's (2^n − 1) × base, gRPC's base × m^(n−1)."""
    if policy.backoff_multiplier is None:
        ceiling = ((1 << retry) - 1) * policy.backoff_base
    else:
        ceiling = round(policy.backoff_base * policy.backoff_multiplier ** (retry - 1))
    return min(ceiling, policy.backoff_max)


class RequestsGivenUp(Source[Request]):
    """The next attempts of requests whose clients gave up on an attempt a server holds, each made as
    its movement runs, if `let_go` (the clients) still has an attempt to give up then."""

    __slots__ = ("let_go",)

    def __init__(self, let_go: Callable[[Request], bool]) -> None:
        super().__init__("RequestsGivenUp", "Request")
        self.let_go = let_go

    def remove(self, entity: Request | None = None) -> Request | None:
        if entity is None or not self.let_go(entity):
            return None
        return super().remove(entity)


class RequestsRetrying:
    """Failed attempts on their way to being retried or failed for good; the retries waiting out their back-off."""

    __slots__ = (
        "_buffer",
        "_env",
        "_failed",
        "_in_flight",
        "_per_try",
        "_prune_at",
        "_replaced",
        "_routing",
        "_timer_armed",
        "_uniform",
        "abandoned",
        "abandoned_total",
        "attempt_of",
        "gave_up",
        "items",
        "kind_stocked",
        "name",
        "policy",
        "retries",
        "spec",
        "successor",
    )

    def __init__(
        self,
        env: Environment,
        spec: ClientSpec,
        routing: Callable[[], RequestsRouting],
        failed: RequestsFailed,
        buffer: Callable[[], RequestsBuffered],
        uniform: Callable[[], float],
        in_flight: Callable[[], int],
        abandoned: set[Request],
    ) -> None:
        self.name = "RequestsRetrying"
        self.kind_stocked = "Request"
        self._env = env
        self.spec = spec
        self.policy = spec.retries or RetryPolicy(attempts=1, retry_on=frozenset())
        # Where a retry goes, and where an attempt waits for a replica: asked for when needed, as both
        # send their failures here and so are built after the clients (one call per retry or give-up).
        self._routing = routing
        self._failed = failed
        self._buffer = buffer
        self._uniform = uniform
        self._in_flight = in_flight  # attempts in flight now, for the budget
        self.abandoned = abandoned  # attempts left to their servers; shared with the sinks, which count them apart
        self.abandoned_total = 0
        self.items: dict[Request, None] = {}
        self.attempt_of: dict[Request, int] = {}  # attempts past the first, by entity
        self.successor: dict[Request, Request] = {}  # an abandoned attempt's next attempt
        self._replaced: dict[Request, Request] = {}  # next attempts not yet moved: the attempt each replaces
        # Where the next attempt of an abandoned one comes from.
        self.gave_up = RequestsGivenUp(self._let_go)
        self.retries = 0  # retries sent
        self._per_try: deque[tuple[int, Request]] = deque()  # (deadline, attempt), in send order
        self._timer_armed = False
        self._prune_at = 1024

    # -- the stock -------------------------------------------------------------------------------

    def count(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Request]:
        return iter(self.items)

    def __contains__(self, entity: object) -> bool:
        return entity in self.items

    def add(self, entity: Request) -> None:
        """A failed attempt: retry it after a back-off, or fail it."""
        self.items[entity] = None
        env = self._env
        if entity in self.abandoned:  # the client left it long ago: nothing to retry
            env.schedule("request_failed", env.now(), self, self._failed, entity)
            return
        attempt = self.attempt_of.get(entity, 1)
        cause = entity.failure
        policy = self.policy
        if cause in policy.retry_on and attempt < policy.attempts and self._budget_allows():
            self.attempt_of[entity] = attempt + 1
            self.retries += 1
            entity.stage = RETRYING
            entity.failure = None
            entity.processing = None
            delay = int(self._uniform() * backoff_ceiling(policy, attempt))
            env.schedule("retry_request", env.now() + delay, self, self._routing(), entity)
            if len(self.attempt_of) > self._prune_at:
                self._prune()
            return
        if cause in policy.retry_on and attempt > 1:
            entity.failure = "retries_exhausted"
        env.schedule("request_failed", env.now(), self, self._failed, entity)

    def _prune(self) -> None:
        """Forget the attempts of requests that are over, so memory stays flat."""
        self.attempt_of = {r: n for r, n in self.attempt_of.items() if r.stage != DONE}
        self.successor = {r: s for r, s in self.successor.items() if r.stage != DONE or s.stage != DONE}
        self._prune_at = 2 * len(self.attempt_of) + 1024

    def remove(self, entity: Request | None = None) -> Request | None:
        if entity is None or entity not in self.items:
            return None
        del self.items[entity]
        if entity.stage == RETRYING:  # sent again: a new try
            entity.stage = ROUTING
            self.watch(entity)
        return entity

    # -- the budget ------------------------------------------------------------------------------

    def _budget_allows(self) -> bool:
        """Envoy's retry budget: retries in flight below budget × attempts in flight, or the minimum."""
        budget = self.policy.budget
        if budget is None:
            return True
        retrying = sum(1 for request, n in self.attempt_of.items() if n > 1 and request.stage != DONE)
        return retrying < max(self.policy.min_retry_concurrency, budget * self._in_flight())

    # -- giving up ------------------------------------------------------------------------------

    def watch(self, request: Request) -> None:
        """An attempt was sent: with a per-try timeout, give it up if it is not answered in time."""
        per_try = self.policy.per_try_timeout
        if per_try is None:
            return
        self._per_try.append((self._env.now() + per_try, request))
        if not self._timer_armed:
            self._timer_armed = True
            self._env.call_at(self._per_try[0][0], self._per_try_fire)

    def _per_try_fire(self) -> None:
        env = self._env
        now = env.now()
        queue = self._per_try
        while queue and queue[0][0] <= now:
            _, request = queue.popleft()
            if request.stage not in (DONE, RETRYING) and request not in self.successor:
                self.give_up(request, "per_try_timeout")
        self._timer_armed = bool(queue)
        if queue:
            env.call_at(queue[0][0], self._per_try_fire)

    def give_up(self, request: Request, cause: str) -> None:
        """The client stops waiting for this attempt (`cause`). A server working on it keeps going unless
        clients cancel, and the request fails, or is retried as a new attempt; an attempt anywhere else
        is taken out and fails or is retried."""
        env = self._env
        retried = cause in self.policy.retry_on  # then it passes through here, else it fails at once
        kind = "request_timeout" if cause == "timeout" else cause
        if request.stage in (CPU, IO) and not self.spec.cancel:
            attempt = Request(request.id, request.arrived_at, request.cls)
            self.attempt_of[attempt] = self.attempt_of.get(request, 1)
            self.successor[request] = attempt
            self._replaced[attempt] = request
            attempt.failure = cause
            attempt.stage = ROUTING  # nowhere yet: it comes from the clients
            env.schedule(kind, env.now(), self.gave_up, self if retried else self._failed, attempt)
            return
        request.failure = cause
        if request.stage == RETRYING:  # its retry movement will find it gone
            request.stage = ROUTING
            stock: object = self
        elif request.processing is not None:
            stock = request.processing
        else:
            stock = self._buffer()
        env.schedule(kind, env.now(), stock, self if retried else self._failed, request)  # type: ignore[arg-type]

    def _let_go(self, attempt: Request) -> bool:
        """The movement of `attempt`, next after one given up on a server, runs: the old one is abandoned
        to its server now if it is still there. If it left in this instant first (its response was due
        before its client gave up, or it failed), there is no next attempt: it is over, failing, or
        waiting to be retried, and then that retry is given up."""
        request = self._replaced.pop(attempt)
        if request.stage in (CPU, IO) and request not in self.items:  # still on its server
            self.abandoned.add(request)
            self.abandoned_total += 1
            return True
        attempt.stage = DONE
        del self.successor[request]
        if request.stage == RETRYING:
            self.give_up(request, attempt.failure or "timeout")
        return False

    def current(self, request: Request) -> Request:
        """The request's live attempt: a given-up attempt's retry, or itself."""
        while request in self.successor:
            request = self.successor[request]
        return request
