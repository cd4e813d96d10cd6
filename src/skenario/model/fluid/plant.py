"""Fluid mode's plant: traffic as a rate, split among the active replicas step by step.

At every step (and whenever a replica becomes active or stops being so) the plant takes the
traffic's mean rate over the next step and shares it equally among the active replicas, as round
robin and random routing do on average; while none is active the requests wait in the plant's own
buffer and go to the first replicas that are. At each step it settles what the replicas did since
the last: the requests completed go to the run's `RequestsComplete` at the latencies of the
latency model (`LatencyModel`: quantiles of the replica's queue at its backlog), those past the requests' timeout
to `RequestsFailed` as timeouts (a client gives up; its server, not told, finishes the request, as
a discrete run's does). The replica's backlog moves as its queue's mean number would
(`queueing.ps.backlog_step`): at rest where the stationary queue holds it, and growing, and draining,
at the traffic's pace past capacity; its latencies are the stationary queue's, and past it each
request's own size times the excess (`queueing.ps.backlog_quantiles`). Counts are whole
requests, carried over between steps, so the run's tables have the discrete run's shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

import numpy as np

from skenario.core.environment import Environment
from skenario.core.time import SECOND
from skenario.model.cpu.node import fair_shares
from skenario.model.fluid.buffer import FluidBuffer
from skenario.model.fluid.pool import FluidPool
from skenario.model.fluid.processing import FluidProcessing, NodeShare
from skenario.model.fluid.replica import FluidReplica
from skenario.model.replicas import Replica, ReplicasActive, ReplicaState
from skenario.model.requests import RequestsComplete, RequestsFailed

EDGES = (
    *(k * 0.05 for k in range(10)),  # 0 to 0.45
    0.475,
    0.525,  # a band centred on the median
    *(0.55 + k * 0.05 for k in range(8)),  # 0.55 to 0.9
    0.92,
    0.935,
    0.945,
    0.955,  # ... on p95
    0.965,
    0.975,
    0.9825,
    0.9875,
    0.9925,  # ... on p99
    0.996,
    0.9985,
    0.9995,
    1.0,
)
"""Probability bands a step's latency distribution is cut into: finer towards the tail, and centred on
the percentiles the tables print (p50, p95, p99), so that each lands inside a band, not on an edge."""


def _bands() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Each band's midpoint and its width (its share of a step's completions)."""
    return tuple((a + b) / 2 for a, b in pairwise(EDGES)), tuple(b - a for a, b in pairwise(EDGES))


HANDOVER_PARTS = 8
"""Parts each chunk of requests the buffer held is cut into when handed over (their waits spread evenly)."""


def with_spread(quantiles: Sequence[float], spread: Sequence[float]) -> list[float]:
    """The quantiles at QUANTILES of a sojourn (its `quantiles` there) plus an independent time whose deviations
    from its mean at QUANTILES are `spread`: the sum's distribution as the mixture of every band of the one
    shifted by every band of the other (each pair weighing the product of their SHARES), read at the bands'
    midpoints again. No spread (all 0) gives `quantiles`."""
    values = (np.asarray(quantiles)[:, None] + np.asarray(spread)[None, :]).ravel()
    weights = np.outer(SHARES, SHARES).ravel()
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order]) - weights[order] / 2  # each point at the middle of its weight
    return [float(v) for v in np.interp(QUANTILES, cumulative, values[order])]


def _fluid(replica: Replica) -> FluidReplica:
    processing = replica.processing
    assert isinstance(processing, FluidProcessing)
    return processing.replica


QUANTILES, SHARES = _bands()
"""The probabilities at which a step's latency distribution is recorded, and each one's share."""
LatencyModel = Callable[[float, float, float, float, Sequence[float], int], "list[float]"]
"""(backlog, arrival rate per replica, mu, cores, probabilities, phases) -> sojourn quantiles in seconds of a
replica holding that backlog on average (`queueing.ps.backlog_quantiles`); `phases`: a replica gets every
phases-th request (round robin among that many; 1: random)."""
BacklogStep = Callable[[float, float, float, float], float]
"""(backlog, arrival rate, capacity, seconds) -> the backlog after them (`queueing.ps.backlog_step`)."""


class Intensity(Protocol):
    """The traffic as a rate (`workloads.rates.Intensity`)."""

    def mean(self, start: int, stop: int) -> float:
        """The mean rate over [start, stop) (ns), requests per second."""
        ...

    def step_means(self, start: int, step: int, steps: int) -> list[float]:
        """`mean` over each of `steps` consecutive spans of `step` ns from `start`."""
        ...


STEPS_AHEAD = 256
"""Steps whose mean rates the plant reads from the traffic at once (`Intensity.step_means`)."""


@dataclass(frozen=True)
class FluidInputs:
    """What a fluid run needs beyond the scenario's replicas: the traffic's intensity (its mean rate over a
    span, `Intensity.mean`), the step (ns), the latency model, the requests' mean CPU and IO times (s),
    the IO time's spread (`io_spread`: its quantiles at QUANTILES less its mean, in s; empty when it is
    constant) and their timeout (s)."""

    rate: Intensity
    step: int
    latency: LatencyModel
    backlog: BacklogStep
    cpu_mean_s: float
    io_mean_s: float = 0.0
    io_spread: tuple[float, ...] = ()
    timeout_s: float | None = None
    round_robin: bool = True  # routing sends each replica every k-th request; else at random (Poisson)

    def pool(self) -> FluidPool:
        return FluidPool(1.0 / self.cpu_mean_s)  # nobody leaves early: a server finishes what its clients gave up


class _Band:
    """A band of a latency distribution: completions (a real amount) not yet recorded, and their mean latency
    (kept as a mean, a convex combination of the latencies added, so that taking whole requests out never
    leaves a sum of rounding errors over a sliver of a request)."""

    def __init__(self) -> None:
        self.count = 0.0
        self.latency = 0.0  # the mean latency of what it holds (s)

    def add(self, count: float, latency: float) -> None:
        total = self.count + count
        if total > 0:
            self.latency += (latency - self.latency) * (count / total)
        self.count = total

    def mean(self) -> float:
        return self.latency if self.count > 0 else 0.0

    def take(self, n: int) -> None:
        self.count -= n


class _Carry:
    """Real amounts counted out as whole ones: what is left over waits for the next."""

    def __init__(self) -> None:
        self.left = 0.0

    def whole(self, amount: float) -> int:
        self.left += amount
        n = math.floor(self.left + 1e-9)
        self.left -= n
        return n


class FluidPlant:
    """The traffic, the buffer and the settling of completions for one workload's fluid replicas."""

    def __init__(
        self,
        env: Environment,
        inputs: FluidInputs,
        complete: RequestsComplete,
        failed: RequestsFailed,
        active: ReplicasActive,
        live: Callable[[], Iterable[Replica]],
        noise: np.random.Generator,
        buffer_capacity: int = 1000,
        neighbours: Callable[[], Iterable[Replica]] | None = None,
    ) -> None:
        self.env = env
        self._noise = noise  # the CPU's noise (`_jitter`): the scenario's stream "fluid.cpu-noise"
        self.inputs = inputs
        self.pool = inputs.pool()
        self.complete = complete
        self.failed = failed
        self.active = active
        self.live = live
        # Every workload's live replicas (spec.workloads on spec.cluster): a node's cores are shared among them all.
        self._neighbours = neighbours or live
        self.rate = 0.0  # requests/s over the current step
        self._intensity = inputs.rate  # the traffic now (a traffic event replaces it)
        self._means: list[float] = []  # the traffic's mean rate over the steps from `_means_from` on
        self._means_from = 0
        self._started = env.now()  # steps fall every inputs.step from here
        # Requests waiting for an active replica (the routing buffer, or the activator with a KPA).
        self.buffer = FluidBuffer(env, buffer_capacity, inputs.timeout_s, self.fail)
        self._waited = _Carry()  # requests handed over from the buffer, recorded whole
        # Of those, by replica: the ones recorded at their handover, not yet completed there (not recorded again).
        self._prerecorded: dict[int, float] = {}
        self._handed_over = 0.0  # requests the buffer handed over (arrivals at the buffer, and again at replicas)
        self._retired_arrived = 0.0  # arrivals counted on replicas gone
        # Per replica at its last settling: requests completed and arrived, its backlog (`backlog_step`), when.
        self._seen: dict[int, tuple[float, float, float, int]] = {}
        self._gave_up = _Carry()
        self._failures: dict[str, _Carry] = {}
        self._bands = [_Band() for _ in QUANTILES]
        self._serving = 0  # replicas sharing the traffic now
        self._completed = 0.0  # requests completed, as a real amount
        self._latency_key: tuple[float, float, float, int] | None = None
        self._latency: list[float] = []

    def replica(self, name: str, millicores: int) -> FluidProcessing:
        """A new replica's requests, with `millicores` of CPU."""
        return FluidProcessing(name, self.env, FluidReplica(self.pool, millicores, self.env.now()), self.fail)

    def start(self) -> None:
        env = self.env
        env.call_at(env.now(), self._step)
        if env.halt_at - 1 > env.now():  # the last step's completions, counted before the run's last readings
            env.call_at(env.halt_at - 1, self._last)

    # -- the flow --------------------------------------------------------------------------------

    def _step(self) -> None:
        env, step = self.env, self.inputs.step
        now = env.now()
        self.settle(now)
        self.rate = self._step_rate(now)
        self.route()
        self._jitter(now, now + step)
        for replica in self.live():
            processing = replica.processing
            if isinstance(processing, FluidProcessing):
                processing.drained()
        if now + step < env.halt_at:
            env.call_at(now + step, self._step)

    def _step_rate(self, now: int) -> float:
        """The traffic's mean rate over the step from `now`, read with the next STEPS_AHEAD steps' (up to the halt)."""
        step, means = self.inputs.step, self._means
        k, off = divmod(now - self._means_from, step)
        if off or not 0 <= k < len(means):
            left = -(-(self.env.halt_at - now) // step)
            self._means = means = self._intensity.step_means(now, step, max(min(STEPS_AHEAD, left), 1))
            self._means_from, k = now, 0
        return means[k]

    def _jitter(self, now: int, until: int) -> None:
        """Each replica's CPU use over the step to `until` moves by a normal draw about the fluid's. The time
        spent busy by a server whose cores are busy b on average (b = the load over mu, up to its cores) has
        an asymptotic variance of 2 b / mu core-s^2 per second: for M/M/1, from its idle and busy periods
        as an alternating renewal process, (E[I]^2 Var[B] + E[B]^2 Var[I]) / (E[I] + E[B])^3 = 2 rho / mu.
        So the HPA's tolerance and the VPA's percentiles see the spread a discrete run's samples have; a
        draw is held within the step's mean use either way (about three standard deviations at 80% CPU), so
        the CPU used never runs backwards and the noise's mean stays 0."""
        replicas = [r.processing.replica for r in self.live() if isinstance(r.processing, FluidProcessing)]
        if not replicas:
            return
        mu, seconds = self.pool.mu, (until - now) / SECOND
        draws = self._noise.standard_normal(len(replicas))
        busy = np.minimum(
            np.array([fluid.rate for fluid in replicas]) / mu, np.array([fluid.millicores for fluid in replicas]) / 1000
        )
        limit = busy * seconds
        moves = np.maximum(-limit, np.minimum(limit, draws * np.sqrt(2.0 * busy / mu * seconds)))
        for fluid, core_s in zip(replicas, moves.tolist(), strict=True):
            fluid.jitter(now, until, core_s)

    def replace_rate(self, rate: Intensity) -> None:
        """From now on the traffic is `rate` (a traffic event): what flowed so far is settled at the old rate,
        and the rest of the step runs at the new one."""
        now = self.env.now()
        self.settle(now)
        self._intensity, self._means = rate, []
        step = self.inputs.step
        next_step = self._started + ((now - self._started) // step + 1) * step
        self.rate = rate.mean(now, next_step) if next_step > now else 0.0
        self.route()

    def route(self) -> None:
        """Share the current rate among the active replicas from now (and hand them what the buffer holds)."""
        now = self.env.now()
        serving = [
            r for r in self.live() if r.state is ReplicaState.ACTIVE and isinstance(r.processing, FluidProcessing)
        ]
        self._serving = len(serving)
        share = self.rate / len(serving) if serving else 0.0
        self.buffer.flow(now, 0.0 if serving else self.rate)
        waiting = self._hand_over(now, serving) if serving else 0.0
        for replica in self.live():
            processing = replica.processing
            if not isinstance(processing, FluidProcessing):
                continue
            fluid = processing.replica
            if replica.state is ReplicaState.ACTIVE:  # one of those serving
                if waiting:
                    fluid.give(now, waiting / len(serving))
                fluid.flow(now, share)
            else:
                fluid.flow(now, 0.0)
            backlog = self._seen.get(replica.id, (0.0, 0.0, 0.0, now))[2]
            fluid.hold(now, backlog + fluid.rate * self.inputs.io_mean_s)  # those in their IO follow the rate
        self._share_nodes(now)

    def _share_nodes(self, now: int) -> None:
        """On spec.cluster, each node's cores among the fluid pods on it, as `NodeCPU` shares them: while their
        demands (the cores their load keeps busy, up to their caps) fit, each may use up to its cap; past that,
        those wanting more than their weighted max-min fair share (`fair_shares`) get that share."""
        nodes: dict[str, list[tuple[FluidReplica, NodeShare]]] = {}
        for replica in self._neighbours():
            processing = replica.processing
            if isinstance(processing, FluidProcessing) and processing.cpu.node is not None:
                nodes.setdefault(processing.cpu.node.node, []).append((processing.replica, processing.cpu.node))
        for pods in nodes.values():
            node = pods[0][1].node_millicores
            demands = [
                min(share.cap, max(fluid.rate / fluid.pool.mu, fluid.level(now)) * 1000) for fluid, share in pods
            ]
            caps = [share.cap for _, share in pods]
            if sum(demands) > node:
                shares = fair_shares(demands, [share.weight for _, share in pods], node)
                caps = [
                    max(round(got), 1) if got < wanted - 1e-6 else cap
                    for got, wanted, cap in zip(shares, demands, caps, strict=True)
                ]
            for (fluid, _), millicores in zip(pods, caps, strict=True):
                if millicores != fluid.millicores:
                    fluid.resize(now, millicores)

    def _hand_over(self, now: int, serving: Sequence[Replica]) -> float:
        """What the buffer held goes to the replicas serving now; how many. Their latencies are recorded now: the
        wait of each (they arrived evenly over each chunk's span), then their place in the backlog, which the
        serving replicas' cores drain oldest first (as the activator, sending new requests to the less loaded
        pods, leaves them those cores), then their IO. Past the timeout their clients gave up (the servers, not
        told, still do the work)."""
        chunks = self.buffer.release(now)
        total = sum(amount for _, _, amount in chunks)
        if total <= 0:
            return 0.0
        inputs = self.inputs
        capacity = sum(self.pool.mu * _fluid(r).millicores / 1000 for r in serving)
        timeout = inputs.timeout_s if inputs.timeout_s else math.inf
        ahead, late = 0.0, 0.0
        for first, last, amount in chunks:
            part = amount / HANDOVER_PARTS
            for k in range(HANDOVER_PARTS):
                arrived = first + (last - first) * (k + 0.5) / HANDOVER_PARTS
                latency = (now - arrived) / SECOND + (ahead + part / 2) / capacity + inputs.io_mean_s
                ahead += part
                if latency >= timeout:
                    late += part
                    continue
                n = self._waited.whole(part)
                if n > 0:
                    self.complete.add_many(round(latency * SECOND), n)
        if late:
            self.failed.add_many("timeout", self._gave_up.whole(late))
            self._completed -= late
        for replica in serving:  # each gets an equal part (`route`)
            self._prerecorded[replica.id] = self._prerecorded.get(replica.id, 0.0) + total / len(serving)
        self._handed_over += total
        return total

    # -- what happened ---------------------------------------------------------------------------

    def settle(self, now: int) -> None:
        """Count out what every live replica completed since the last settling; replicas alike (the same
        load and cores) are recorded together, at their queue's latencies."""
        alike: dict[tuple[float, float, int], float] = {}
        steps: dict[tuple[float, float, float, float], float] = {}  # backlog_step's answers, for replicas alike
        for replica in self.live():
            settled = self._settle_one(replica, now, steps)
            if settled is not None:
                key = settled[1:]
                alike[key] = alike.get(key, 0.0) + settled[0]
        for (backlog, rate, millicores), done in alike.items():
            self._record(done, backlog, rate, millicores)

    def _settle_one(
        self, replica: Replica, now: int, steps: dict[tuple[float, float, float, float], float], last: bool = False
    ) -> tuple[float, float, float, int] | None:
        """The replica's completions since the last settling, and the backlog and rate its latency is read at.

        Its backlog moves by `backlog_step` at the arrival rate it had meanwhile; what it holds is that
        backlog and the requests in their IO (the rate times the mean IO time, Little's law), and what
        completed is what arrived less what it holds and what failed: so the requests held are those a
        stochastic queue would hold, not only the cores the fluid keeps busy, and every request is in one
        place. Its latency is read at the backlog it held on average and the rate it had. At its `last` settling
        (it terminated, drained or killed) it holds nothing: what it still held completed. What it returns
        leaves out the requests the buffer handed it, recorded at the handover (`_hand_over`)."""
        processing = replica.processing
        if not isinstance(processing, FluidProcessing):
            return None
        fluid = processing.replica
        done_before, arrived_before, backlog, since = self._seen.get(replica.id, (0.0, 0.0, 0.0, now))
        arrived = fluid.arrived(now)
        capacity = self.pool.mu * fluid.millicores / 1000
        seconds = (now - since) / SECOND
        after, rate = backlog, fluid.rate
        if seconds > 0:
            rate = (arrived - arrived_before) / seconds
            key = (backlog, rate, capacity, seconds)
            after = steps.get(key, -1.0)
            if after < 0:
                after = steps[key] = self.inputs.backlog(backlog, rate, capacity, seconds)
        fluid.hold(now, 0.0 if last else after + fluid.rate * self.inputs.io_mean_s)
        done = max(arrived - fluid.held() - fluid.held_taken() - done_before, 0.0)
        self._seen[replica.id] = (done_before + done, arrived, after, now)
        self._completed += done
        owed = self._prerecorded.get(replica.id, 0.0)
        if owed > 0:  # requests the buffer handed over, recorded then: not again
            skipped = min(done, owed)
            self._prerecorded[replica.id] = owed - skipped
            done -= skipped
        if done <= 0:
            return None
        return done, (backlog + after) / 2, rate, fluid.millicores

    def _record(self, count: float, backlog: float, rate: float, millicores: int) -> None:
        """`count` completions (a real amount) at the latencies of a replica holding `backlog` requests at `rate`
        requests/s: each band's share is added to the band, which records its whole requests at their mean
        latency so far; the bands past the requests' timeout failed (their clients gave up; the server,
        not told, finished them)."""
        inputs = self.inputs
        cores = millicores / 1000
        phases = max(self._serving, 1) if inputs.round_robin else 1
        key = (backlog, rate, cores, phases)
        if key != self._latency_key:  # replicas alike in a step share their queue's quantiles
            quantiles = inputs.latency(backlog, rate, self.pool.mu, cores, QUANTILES, phases)
            if inputs.io_spread:
                quantiles = with_spread(quantiles, inputs.io_spread)
            self._latency_key, self._latency = key, quantiles
        quantiles = self._latency
        timeout = inputs.timeout_s if inputs.timeout_s else math.inf
        late = 0.0
        for band, seconds, share in zip(self._bands, quantiles, SHARES, strict=True):
            latency = seconds + inputs.io_mean_s
            if latency >= timeout:
                late += share * count
                continue
            band.add(share * count, latency)
            self._flush(band, math.floor)
        if late:
            self.failed.add_many("timeout", self._gave_up.whole(late))
            self._completed -= late

    def _flush(self, band: _Band, whole: Callable[[float], int]) -> None:
        n = whole(band.count + 1e-9)
        if n > 0:
            self.complete.add_many(round(band.mean() * SECOND), n)
            band.take(n)

    def _last(self) -> None:
        """Just before the halt: settle, and record what the bands still hold, so that the requests recorded
        are the whole ones completed (the bands' largest remainders get the last few)."""
        self.settle(self.env.now())
        owed = round(self._completed) - self.complete.count()
        for band in sorted(self._bands, key=lambda b: b.count, reverse=True)[: max(owed, 0)]:
            self._flush(band, lambda left: 1)

    def retire(self, replica: Replica) -> None:
        """A replica terminated: settle it a last time and keep its arrivals in the total."""
        now = self.env.now()
        settled = self._settle_one(replica, now, {}, last=True)
        if settled is not None:
            self._record(*settled)
        self._prerecorded.pop(replica.id, None)  # handed over to it, and failed there (its grace ran out)
        processing = replica.processing
        if isinstance(processing, FluidProcessing):
            self._retired_arrived += processing.replica.arrived(now)
        self._seen.pop(replica.id, None)

    def fail(self, reason: str, amount: float) -> None:
        """`amount` requests failed now for `reason` (a replica killed, its grace period over)."""
        self.failed.add_many(reason, self._failures.setdefault(reason, _Carry()).whole(amount))

    def arrived(self) -> int:
        """Requests arrived so far, whole: at the replicas, gone ones too, and at the buffer."""
        now = self.env.now()
        at_replicas = 0.0
        for replica in self.live():
            processing = replica.processing
            if isinstance(processing, FluidProcessing):
                at_replicas += processing.replica.arrived(now)
        return math.floor(self._retired_arrived + at_replicas + self.buffer.arrived() - self._handed_over + 1e-9)
