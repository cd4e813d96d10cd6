"""One replica's requests as a fluid, read at any instant as the metrics pipeline reads a replica.

The fluid plant changes a replica's inputs only at its steps and at lifecycle events: the arrival
rate it routes there (`flow`) and the replica's CPU (`resize`). Between two changes the inputs are
constant, so `FluidPool.advance` from the last change gives the exact state at any later instant.
Readings (`count`, `in_flight_area`, `busy_core_ns`, ...) advance a copy that way and change
nothing: a reading taken at an odd instant (a housekeeping scrape, the KPA's 1 s scrape, the
recorder) cannot change the run, which keeps a seed's run the same whoever reads it.

The figures are those `model/metrics.py` takes from a discrete replica's `RequestsProcessing`: the
requests that arrived, the integral of cores in use (cAdvisor's CPU usage, in core-ns, with its noise:
`jitter`), and the requests held and their integral (queue-proxy's concurrency, in request-ns). The
plant says how many are held (`hold`: its queue's backlog and those in their IO); the fluid's own level
(`level`, `count`, `in_flight_area`) counts only the cores it keeps busy.
"""

from __future__ import annotations

from skenario.core.time import SECOND
from skenario.model.fluid.pool import Flows, FluidPool

NOTHING = Flows(completed=0.0, abandoned=0.0, busy_core_s=0.0, level_s=0.0)
"""What flows in no time."""


class FluidReplica:
    """A replica's requests in their CPU phase as a level; its totals kept at each change of inputs."""

    def __init__(self, pool: FluidPool, millicores: int, now: int) -> None:
        if millicores <= 0:
            raise ValueError(f"a replica needs CPU: millicores must be > 0, got {millicores}")
        self.pool = pool
        self.millicores = millicores
        self._since = now  # the last change of inputs (ns)
        self._level = 0.0
        self._rate = 0.0  # requests per second arriving since `_since`
        # Totals up to `_since`: arrived, completed and abandoned requests, core-seconds and request-seconds.
        self._arrived = 0.0
        self._completed = 0.0
        self._abandoned = 0.0
        self._busy_core_s = 0.0
        self._level_s = 0.0
        self._taken = 0.0
        self._kept: tuple[int, float, Flows] | None = None  # the last reading: its instant, level and flows
        # The requests held, as the plant estimates them (its queue's backlog and those in their IO), from
        # `_held_since` on; the integral of it up to then (request-s); those taken out (`take`).
        self._held = 0.0
        self._held_since = now
        self._held_area = 0.0
        self._held_taken = 0.0
        # The CPU's noise (`jitter`): core-s up to `_noise_since`, and the increment spread over its step.
        self._noise = 0.0
        self._noise_since = now
        self._noise_until = now
        self._noise_step = 0.0

    @property
    def rate(self) -> float:
        """Requests per second arriving now."""
        return self._rate

    def _since_change(self, now: int) -> tuple[float, Flows]:
        """The level now and what flowed since the last change; the last answer is kept for its instant,
        since the plant, the metrics and the recorder often read one replica at the same instant."""
        kept = self._kept
        if kept is not None and kept[0] == now:
            return kept[1], kept[2]
        if now < self._since:
            raise ValueError(f"read at {now} ns, before the last change at {self._since} ns")
        level, flows = self.pool.advance(self._level, self._rate, self.millicores / 1000, (now - self._since) / SECOND)
        self._kept = (now, level, flows)
        return level, flows

    def _commit(self, now: int) -> None:
        level, flows = self._since_change(now)
        self._arrived += self._rate * (now - self._since) / SECOND
        self._completed += flows.completed
        self._abandoned += flows.abandoned
        self._busy_core_s += flows.busy_core_s
        self._level_s += flows.level_s
        self._since, self._level = now, level
        self._kept = (now, level, NOTHING)

    def flow(self, now: int, rate: float) -> None:
        """From `now` on, `rate` requests per second arrive here."""
        if not rate >= 0:
            raise ValueError(f"an arrival rate must be >= 0 requests per second, got {rate}")
        self._commit(now)
        self._rate = rate
        self._kept = None

    def resize(self, now: int, millicores: int) -> None:
        """From `now` on, the replica has `millicores` of CPU (an in-place resize, a node's share)."""
        if millicores <= 0:
            raise ValueError(f"millicores must be > 0, got {millicores}")
        self._commit(now)
        self.millicores = millicores
        self._kept = None

    def take(self, now: int, requests: float | None = None) -> float:
        """Take `requests` out of the level now (None: all of them): requests failed when the replica is
        killed or its grace runs out; the amount taken (`taken` counts them: not completed, not abandoned)."""
        self._commit(now)
        amount = self._level if requests is None else min(max(requests, 0.0), self._level)
        self._level -= amount
        self._taken += amount
        self._kept = None
        return amount

    def hold(self, now: int, requests: float) -> None:
        """From `now` on, `requests` are held here: the plant's estimate of those present, in their CPU's
        queue and in their IO (what queue-proxy and the kubelet count, where the level counts the cores busy)."""
        if not requests >= 0:
            raise ValueError(f"requests held must be >= 0, got {requests}")
        self._held_area += self._held * (now - self._held_since) / SECOND
        self._held, self._held_since = requests, now

    def drop_held(self, now: int) -> float:
        """The requests held fail now (the replica is killed): every one is taken out; how many."""
        self.take(now)
        amount = self._held
        self.hold(now, 0.0)
        self._held_taken += amount
        return amount

    def give(self, now: int, requests: float) -> None:
        """Add `requests` to the level now (a buffer's flushed to this replica): they count as arrivals."""
        if not requests >= 0:
            raise ValueError(f"requests must be >= 0, got {requests}")
        self._commit(now)
        self._level += requests
        self._arrived += requests
        self._kept = None

    # -- readings: each advances a copy from the last change, and changes nothing ------------------

    def level(self, now: int) -> float:
        """Requests held now (a real number: the fluid's level)."""
        return self._since_change(now)[0]

    def count(self, now: int) -> int:
        """Requests held now, as a whole number (what a discrete replica's `count()` says)."""
        return round(self.level(now))

    def arrived(self, now: int) -> float:
        return self._arrived + self._rate * (now - self._since) / SECOND

    def completed(self, now: int) -> float:
        return self._completed + self._since_change(now)[1].completed

    def abandoned(self, now: int) -> float:
        return self._abandoned + self._since_change(now)[1].abandoned

    def taken(self) -> float:
        """Requests taken out of the level so far (`take`)."""
        return self._taken

    def held(self) -> float:
        """Requests held now (`hold`): a real number."""
        return self._held

    def held_taken(self) -> float:
        """Requests held that failed so far (`drop_held`)."""
        return self._held_taken

    def held_area(self, now: int) -> float:
        """The integral of the requests held up to now, in request-ns (`RequestsProcessing.in_flight_area`)."""
        return (self._held_area + self._held * (now - self._held_since) / SECOND) * SECOND

    def busy_core_ns(self, now: int) -> float:
        """The integral of cores in use up to now, in core-ns (`CPUDiscipline.busy_core_ns`): the fluid's, with
        its noise (`jitter`)."""
        return (self._busy_core_s + self._since_change(now)[1].busy_core_s + self._noise_at(now)) * SECOND

    def jitter(self, now: int, until: int, core_s: float) -> None:
        """From `now` to `until`, the CPU used also moves by `core_s` (core-seconds, either sign), evenly: the
        noise a stochastic queue's CPU use has about its mean, which the fluid's lacks."""
        if until <= now:
            raise ValueError(f"a jitter spans a step: from {now} ns to {until} ns")
        self._noise = self._noise_at(now)
        self._noise_since, self._noise_until, self._noise_step = now, until, core_s

    def _noise_at(self, now: int) -> float:
        if self._noise_step == 0.0 or now <= self._noise_since:
            return self._noise
        share = min((now - self._noise_since) / (self._noise_until - self._noise_since), 1.0)
        return self._noise + self._noise_step * share

    def in_flight_area(self, now: int) -> float:
        """The integral of requests held up to now, in request-ns (`RequestsProcessing.in_flight_area`)."""
        return (self._level_s + self._since_change(now)[1].level_s) * SECOND
