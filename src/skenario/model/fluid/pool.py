"""A pool of replicas as a fluid: requests as a level, arrivals and completions as flows.

The fluid limit of the processor-sharing pool `model/cpu/sharing.py` simulates request by request
(each request single-threaded, `min(1, cores / n)` of a core each, exponential CPU times of mean
1/mu): with `x` requests in their CPU phase and `cores` in the pool,

    x' = lam - mu * min(x, cores) - theta * (x - cores)+

(the many-server fluid model with abandonment, Whitt 2006; theta = 0 without timeouts). For a step
whose arrival rate, cores and abandonment rate are constant the equation is linear on each side of
`x = cores`, so `advance` solves it exactly: below the cores it relaxes towards `lam / mu`, above
them it moves at a constant rate (or relaxes towards its own balance with abandonment), and a
crossing of `cores` within the step is found in closed form. No step size limits its accuracy,
and nothing is lost: what arrives is in the pool at the end, completed or abandoned (`Flows`).

The busy core-seconds of the step are exact too, since completions leave at `mu * min(x, cores)`:
busy = completed / mu. That is what the metrics pipeline reads as CPU usage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple


class Flows(NamedTuple):
    """What a step moved: requests completed and abandoned, core-seconds of CPU used, and the integral
    of the level (request-seconds: what queue-proxy's concurrency and Little's law read). A tuple: every
    reading of a replica makes one."""

    completed: float
    abandoned: float
    busy_core_s: float
    level_s: float = 0.0


@dataclass(frozen=True)
class Segment:
    """One side of `x = cores` over `duration` seconds: x(t) = balance + (start - balance) e^(-rate t), or,
    with rate 0, start + drift t."""

    start: float
    duration: float
    rate: float  # the relaxation rate (1/s); 0 for a constant drift
    balance: float  # where x relaxes to (rate > 0)
    drift: float  # requests/s (rate == 0)

    def at(self, t: float) -> float:
        if self.rate == 0.0:
            return self.start + self.drift * t
        return self.balance + (self.start - self.balance) * math.exp(-self.rate * t)

    def integral(self, t: float) -> float:
        """The integral of x over [0, t]."""
        if self.rate == 0.0:
            return self.start * t + self.drift * t * t / 2
        return self.balance * t + (self.start - self.balance) * -math.expm1(-self.rate * t) / self.rate


def _below(x: float, lam: float, mu: float) -> Segment:
    """x <= cores: every request has a core: x' = lam - mu x."""
    return Segment(x, 0.0, mu, lam / mu, 0.0)


def _above(x: float, lam: float, mu: float, cores: float, theta: float) -> Segment:
    """x >= cores: the cores are all busy: x' = lam - mu cores - theta (x - cores)."""
    if theta == 0.0:
        return Segment(x, 0.0, 0.0, 0.0, lam - mu * cores)
    return Segment(x, 0.0, theta, cores + (lam - mu * cores) / theta, 0.0)


def _crossing(segment: Segment, level: float) -> float | None:
    """When `segment` reaches `level` (strictly after 0), or None if it never does."""
    gap = level - segment.start
    if gap == 0.0:
        return None
    if segment.rate == 0.0:
        if segment.drift == 0.0 or (gap > 0) != (segment.drift > 0):
            return None
        return gap / segment.drift
    towards = segment.balance - segment.start
    if (gap > 0) != (towards > 0) or abs(gap) >= abs(towards):
        return None  # relaxing away from the level, or towards a balance short of it
    return -math.log1p(-gap / towards) / segment.rate


ANSWERS_KEPT = 1024
"""How many of `FluidPool.advance`'s answers a pool keeps (the replicas of one instant need a few)."""


@dataclass(frozen=True)
class FluidPool:
    """The pool's parameters: `mu` completions per second of one busy core (1 / mean CPU time) and
    `theta`, the rate at which waiting requests give up (0: none do)."""

    mu: float
    theta: float = 0.0
    _answers: dict[tuple[float, float, float, float], tuple[float, Flows]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        if not self.mu > 0:
            raise ValueError(f"mu must be > 0 completions per second, got {self.mu}")
        if not self.theta >= 0:
            raise ValueError(f"theta must be >= 0, got {self.theta}")

    def advance(self, x: float, lam: float, cores: float, seconds: float) -> tuple[float, Flows]:
        """The level after `seconds` at arrival rate `lam` (requests/s) with `cores` cores, from level
        `x`; and what flowed. The solution is exact for constant `lam` and `cores`. Replicas alike (the
        same level, rate and cores, read at the same instant) ask the same question: the answer is kept."""
        key = (x, lam, cores, seconds)
        answer = self._answers.get(key)
        if answer is None:
            if len(self._answers) >= ANSWERS_KEPT:
                self._answers.clear()
            answer = self._answers[key] = self._advance(x, lam, cores, seconds)
        return answer

    def _advance(self, x: float, lam: float, cores: float, seconds: float) -> tuple[float, Flows]:
        if x < 0 or lam < 0 or cores < 0 or seconds < 0:
            raise ValueError(f"negative input: x={x}, lam={lam}, cores={cores}, seconds={seconds}")
        mu, theta = self.mu, self.theta
        balance = lam / mu
        if x < cores and balance <= cores:  # below the cores and relaxing towards a level below them: no crossing
            area = max(balance * seconds + (x - balance) * -math.expm1(-mu * seconds) / mu, 0.0)
            busy = min(area, cores * seconds)
            level = max(balance + (x - balance) * math.exp(-mu * seconds), 0.0)
            return level, Flows(completed=mu * busy, abandoned=0.0, busy_core_s=busy, level_s=area)
        left, busy, abandoned, held = seconds, 0.0, 0.0, 0.0
        for _ in range(3):  # at most two crossings: one side, then the other, where it stays
            if left <= 0.0:
                break
            waiting = x > cores or (x == cores and lam > mu * cores)
            segment = _above(x, lam, mu, cores, theta) if waiting else _below(x, lam, mu)
            cross = _crossing(segment, cores)
            span = left if cross is None or cross >= left else cross
            area = segment.integral(span)
            held += max(area, 0.0)
            if waiting:
                busy += cores * span
                abandoned += theta * max(area - cores * span, 0.0)  # float rounding aside, x >= cores here
            else:
                busy += min(max(area, 0.0), cores * span)
            x = cores if span == cross else max(segment.at(span), 0.0)
            left -= span
        completed = mu * busy
        return x, Flows(completed=completed, abandoned=abandoned, busy_core_s=busy, level_s=held)
