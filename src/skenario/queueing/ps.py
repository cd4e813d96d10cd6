"""Sojourn times in a processor-sharing server: the latency a fluid run reports for each step.

A fluid run knows each replica's arrival rate and capacity but follows no request, so its latency
percentiles come from the queue a replica is: M/M/1-PS (one core, exponential CPU times of mean
1/mu, every request sharing it). Its sojourn time has, for a request of size x, mean x/(1-rho) and
the variance of Coffman, Muntz & Trotter (1970, "Waiting time distributions for processor-sharing
systems", JACM 17(1)); over exponential sizes that gives

    E[T] = 1 / (mu (1 - rho))          E[T^2] = 4 / ((2 - rho) (1 - rho)^2 mu^2)

Percentiles come from a gamma distribution with those two moments (`gamma_quantile`, by Wilson and
Hilferty's cube-root approximation, so no SciPy is needed). Against skenario's own discrete run of
the same queue the fit is within 5% at p95 and p99 for rho of 0.5 and 0.8 (tests/queueing/test_ps.py);
the median is less close (14% low at rho 0.8).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from statistics import NormalDist


@lru_cache(maxsize=1024)
def _normal_quantile(p: float) -> float:
    """The standard normal's p-quantile, kept: a fluid run asks the same few probabilities every step."""
    return NormalDist().inv_cdf(p)


def mm1_ps_moments(arrival_rate: float, mu: float) -> tuple[float, float]:
    """E[T] and E[T^2] of M/M/1-PS with `arrival_rate` and service rate `mu` (per second); needs rho < 1."""
    if not mu > 0:
        raise ValueError(f"mu must be > 0, got {mu}")
    if not arrival_rate >= 0:
        raise ValueError(f"arrival rate must be >= 0, got {arrival_rate}")
    rho = arrival_rate / mu
    if rho >= 1:
        raise ValueError(f"M/M/1-PS at rho = {rho:.4g} >= 1 has no steady state")
    mean = 1.0 / (mu * (1.0 - rho))
    second = 4.0 / ((2.0 - rho) * (1.0 - rho) ** 2 * mu**2)
    return mean, second


def gamma_quantile(mean: float, second_moment: float, p: float) -> float:
    """The p-quantile of the gamma distribution with this mean and second moment (Wilson-Hilferty:
    shape k, scale s, q = k s (1 - 1/(9k) + z_p / sqrt(9k))^3, clipped at 0)."""
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}")
    variance = second_moment - mean * mean
    if mean <= 0 or variance <= 0:
        return max(mean, 0.0)  # no spread: every sojourn is the mean
    shape = mean * mean / variance
    z = _normal_quantile(p)
    root = 1.0 - 1.0 / (9.0 * shape) + z / math.sqrt(9.0 * shape)
    return mean * max(root, 0.0) ** 3


def mm1_ps_quantile(arrival_rate: float, mu: float, p: float) -> float:
    """The p-quantile of M/M/1-PS's sojourn time (seconds), by the two-moment gamma fit."""
    mean, second = mm1_ps_moments(arrival_rate, mu)
    return gamma_quantile(mean, second, p)


def erlang_arrivals_sigma(arrival_rate: float, mu: float, phases: int) -> float:
    """GI/M/1's sigma for Erlang-`phases` interarrival times (a replica's share of a Poisson stream sent
    round robin among `phases` replicas): the root in (0, 1) of sigma = A*(mu (1 - sigma)), with A*(s) =
    (k lam / (k lam + s))^k the interarrival times' Laplace transform; rho itself for Poisson (k = 1).
    The number present is GI/M/1's under any discipline that ignores sizes, processor sharing too, so the
    mean sojourn is 1 / (mu (1 - sigma)) (Kleinrock, Queueing Systems I, section 6.4)."""
    rho = arrival_rate / mu
    if not 0 <= rho < 1:
        raise ValueError(f"GI/M/1 at rho = {rho:.4g} has no steady state")
    if phases <= 1 or rho == 0:
        return rho
    rate = phases * arrival_rate

    def excess(sigma: float) -> float:
        return sigma - (rate / (rate + mu * (1.0 - sigma))) ** phases

    low, high = 0.0, 1.0 - 1e-12
    for _ in range(100):
        middle = (low + high) / 2
        if excess(middle) < 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def replica_quantiles(
    arrival_rate: float, mu: float, cores: float, probabilities: Sequence[float], phases: int = 1
) -> list[float] | None:
    """Sojourn-time quantiles (seconds) of one replica with `cores` cores shared by processor sharing,
    each request using at most one core (skenario's CPU model), exponential CPU times of rate `mu`;
    None when the replica is saturated (rho >= 1). The two moments of `replica_moments`, by the gamma fit."""
    moments = replica_moments(arrival_rate, mu, cores, phases)
    if moments is None:
        return None
    mean, second = moments
    return [gamma_quantile(mean, second, p) for p in probabilities]


def replica_moments(arrival_rate: float, mu: float, cores: float, phases: int = 1) -> tuple[float, float] | None:
    """E[T] and E[T^2] of one replica's sojourn time (`replica_quantiles`), None when saturated.

    Up to one core it is M/M/1-PS at `cores * mu`. With more, each request uses at most one core, so the
    number present is that of a queue completing mu min(n, cores) a second (`capped_cores_queue`: M/M/c
    when the cores are whole), which gives the mean; the spread interpolates between the service time's
    (many cores, nobody slowed: CV^2 = 1) and M/M/1-PS's, by the chance of being slowed: CV^2 = 1 +
    ((2 + rho) / (2 - rho) - 1) P(slowed) / rho, exact at one core. Against skenario's discrete run of
    Poisson arrivals this is within 7% at p95 and p99 up to rho 0.8 on 2 and 4 cores except p95 at 4
    cores and rho 0.8 (13% high).

    `phases`: the replica's arrivals are every `phases`-th of a Poisson stream (round robin among that
    many replicas; 1: random routing). Up to one core, GI/M/1's sigma replaces rho; with more, the
    chance of waiting is scaled by Allen and Cunneen's (1 / phases + 1) / 2.
    """
    if arrival_rate <= 0:
        service = 1.0 / (mu * min(cores, 1.0))
        return service, 2 * service * service
    if cores <= 1.0:
        rate = mu * cores
        if arrival_rate >= rate:
            return None
        # Round robin among `phases` replicas: GI/M/1's sigma in M/M/1-PS's moments in place of rho.
        sigma = erlang_arrivals_sigma(arrival_rate, rate, phases)
        mean = 1.0 / (rate * (1.0 - sigma))
        second = 4.0 / ((2.0 - sigma) * (1.0 - sigma) ** 2 * rate**2)
        return mean, second
    rho = arrival_rate / (mu * cores)
    if rho >= 1.0:
        return None
    sojourn, slow = capped_cores_queue(arrival_rate, mu, cores)
    # Allen-Cunneen: waiting scales with (ca^2 + cs^2) / 2; Erlang-`phases` arrivals have ca^2 = 1 / phases.
    scale = (1.0 / max(phases, 1) + 1.0) / 2.0
    mean = 1.0 / mu + (sojourn - 1.0 / mu) * scale
    spread = 1.0 + ((2.0 + rho) / (2.0 - rho) - 1.0) * slow * scale / rho
    return mean, mean * mean * (1.0 + spread)


def capped_cores_queue(arrival_rate: float, mu: float, cores: float) -> tuple[float, float]:
    """The mean sojourn (s) and the chance that requests run slower than a core each, for Poisson arrivals at a
    replica of `cores` (> 1) whose requests each use at most one core: a birth-death queue completing
    mu min(n, cores) a second with n present. Up to m = floor(cores) present it is M/M/m; past it the cores
    are shared, at the constant cores * mu, so the tail is geometric. Exact; M/M/c when `cores` is whole
    (the chance is then Erlang C)."""
    whole = math.floor(cores)
    offered = arrival_rate / mu
    tail = arrival_rate / (mu * cores)  # the tail's ratio, past m present
    terms = [1.0]
    for n in range(1, whole + 1):
        terms.append(terms[-1] * offered / n)
    last = terms[-1]  # a^m / m!
    total = math.fsum(terms) + last * tail / (1.0 - tail)
    present = math.fsum(n * term for n, term in enumerate(terms))
    present += last * (whole * tail / (1.0 - tail) + tail / (1.0 - tail) ** 2)
    slowed = last * tail / (1.0 - tail) + (last if whole == cores else 0.0)  # n > m, or n >= m when whole
    return present / total / arrival_rate, slowed / total


RHO_STOCHASTIC = 0.95
"""The most load at which a backlog counts as the stationary queue's (`backlog_quantiles`): past it, what
a replica holds beyond that queue's mean number is a backlog of arrivals past its capacity."""


def backlog_quantiles(
    backlog: float, arrival_rate: float, mu: float, cores: float, probabilities: Sequence[float], phases: int = 1
) -> list[float]:
    """Sojourn-time quantiles (seconds) of a replica holding `backlog` requests on average, at `arrival_rate`.

    At rest the backlog is the stationary queue's, and these are `replica_quantiles`. Beyond what the
    stationary queue at the offered load (at most `RHO_STOCHASTIC`) holds, the excess is requests that
    arrived faster than the replica serves: in a processor-sharing server each request then stays its
    own size times that excess, so the excess adds its mean (excess / capacity) to the stationary mean,
    and the square of it to the variance (exponential sizes), not the stationary queue's spread at a
    load near 1, which past capacity would put most requests near zero and a few far out."""
    capacity = mu * cores
    loaded = backlog / (1.0 + backlog)  # the load at which M/M/1 holds the backlog at rest
    rho = min(arrival_rate / capacity, loaded, RHO_STOCHASTIC)
    excess = max(backlog - rho / (1.0 - rho), 0.0) / capacity
    moments = replica_moments(rho * capacity, mu, cores, phases)
    assert moments is not None, "below capacity, a replica has a steady state"
    mean, second = moments
    variance = second - mean * mean + excess * excess
    mean += excess
    return [gamma_quantile(mean, variance + mean * mean, p) for p in probabilities]


BACKLOG_SUBSTEP = 1.0
"""The longest sub-step (s) `backlog_step` integrates over at once."""


def backlog_step(backlog: float, arrival_rate: float, capacity: float, seconds: float) -> float:
    """The mean number of requests present after `seconds` of `arrival_rate` at a server completing `capacity`
    per second at full use, from `backlog`: n' = lam - capacity n / (1 + n), the pointwise stationary fluid
    flow approximation of M/M/1 (Tipper and Sundareshan 1990, IEEE JSAC 8(9)), whose outflow is the
    utilisation at which M/M/1's stationary mean number is n. At rest it is M/M/1's rho / (1 - rho) (PS
    or FCFS alike, in number); past capacity it grows at lam - capacity. Implicit Euler in sub-steps of at
    most `BACKLOG_SUBSTEP`: stable at any step and exact at its rest point."""
    if not (backlog >= 0 and arrival_rate >= 0 and capacity > 0 and seconds >= 0):
        raise ValueError(f"bad input: backlog={backlog}, arrival_rate={arrival_rate}, capacity={capacity}")
    parts = max(math.ceil(seconds / BACKLOG_SUBSTEP), 1)
    h = seconds / parts
    n = backlog
    for _ in range(parts):
        # n1 = n + h (lam - capacity n1 / (1 + n1)): n1^2 + b n1 - c = 0, its positive root (stably written).
        c = n + h * arrival_rate
        b = 1.0 - c + h * capacity
        n = 2.0 * c / (b + math.sqrt(b * b + 4.0 * c)) if b > 0 else (-b + math.sqrt(b * b + 4.0 * c)) / 2.0
    return n


def backlog_rate(backlog: float, capacity: float) -> float:
    """The Poisson arrival rate at which M/M/1 of `capacity` holds `backlog` requests on average (rho / (1 - rho)
    = backlog): the load a replica's latency is read at, below capacity however long its queue."""
    return capacity * backlog / (1.0 + backlog)
