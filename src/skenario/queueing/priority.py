"""Priority queues at one centre: Cobham's formulas, preemptive-resume, and their M/M/c forms.

Each function takes one `Load` per class (per-visit arrival rate, mean service time, E[S^2] and
priority; a higher priority number is served first, equal numbers share a level in FCFS order)
and returns each class's mean time per visit (waiting plus service), in the input's order.

- `nonpreemptive_mg1`: exact for M/G/1 (Cobham 1954, Eq. 3): W_k = W0 / ((1 - s_{k-1})(1 - s_k)),
  W0 = sum lambda_i E[S_i^2] / 2, s_k the load of levels k and above.
- `preemptive_resume_mg1`: exact for M/G/1 (Kleinrock Vol. 2):
  T_k = S_k / (1 - s_{k-1}) + [sum_{i<=k} lambda_i E[S_i^2] / 2] / ((1 - s_{k-1})(1 - s_k)).
- `nonpreemptive_mmc` and `preemptive_resume_mmc`: exact for M/M/c when every class has the
  same exponential service time (Cobham 1954, Eq. 6; levels 1..k form an M/M/c FCFS queue under
  preemption). With unequal service times no closed form exists; they refuse.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from skenario.queueing.erlang import erlang_c, mmc_number


@dataclass(frozen=True)
class Load:
    arrival_rate: float
    service: float
    second_moment: float
    priority: int = 0

    @property
    def utilization(self) -> float:
        return self.arrival_rate * self.service


def _levels(loads: Sequence[Load]) -> list[list[int]]:
    """Indices of the loads grouped by priority, highest level first."""
    by_priority: dict[int, list[int]] = {}
    for i, load in enumerate(loads):
        by_priority.setdefault(load.priority, []).append(i)
    return [by_priority[p] for p in sorted(by_priority, reverse=True)]


def _saturation(total: float, servers: int = 1) -> None:
    if total >= servers:
        raise ValueError(f"the centre is saturated: utilisation {total / servers:.4g} >= 1")


def nonpreemptive_mg1(loads: Sequence[Load]) -> list[float]:
    _saturation(sum(x.utilization for x in loads))
    w0 = sum(x.arrival_rate * x.second_moment for x in loads) / 2
    out = [0.0] * len(loads)
    above = 0.0
    for level in _levels(loads):
        through = above + sum(loads[i].utilization for i in level)
        wait = w0 / ((1 - above) * (1 - through))
        for i in level:
            out[i] = wait + loads[i].service
        above = through
    return out


def preemptive_resume_mg1(loads: Sequence[Load]) -> list[float]:
    _saturation(sum(x.utilization for x in loads))
    out = [0.0] * len(loads)
    above = 0.0
    residual = 0.0
    for level in _levels(loads):
        through = above + sum(loads[i].utilization for i in level)
        residual += sum(loads[i].arrival_rate * loads[i].second_moment for i in level) / 2
        for i in level:
            out[i] = loads[i].service / (1 - above) + residual / ((1 - above) * (1 - through))
        above = through
    return out


def _common_service(loads: Sequence[Load], what: str) -> float:
    services = {x.service for x in loads if x.arrival_rate > 0}
    first = next(iter(services), 0.0)
    if any(not math.isclose(s, first, rel_tol=1e-9) for s in services):
        raise ValueError(
            f"{what} priority at a multi-server centre is solved only when every class has the same service time "
            f"(M/M/c); here they are {sorted(services)}"
        )
    return first


def nonpreemptive_mmc(servers: int, loads: Sequence[Load]) -> list[float]:
    service = _common_service(loads, "non-preemptive")
    total = sum(x.arrival_rate for x in loads)
    _saturation(total * service, servers)
    if total == 0:
        return [x.service for x in loads]
    scale = erlang_c(servers, total * service) * service / servers
    out = [0.0] * len(loads)
    above = 0.0
    for level in _levels(loads):
        through = above + sum(loads[i].arrival_rate for i in level) * service / servers
        for i in level:
            out[i] = scale / ((1 - above) * (1 - through)) + loads[i].service
        above = through
    return out


def preemptive_resume_mmc(servers: int, loads: Sequence[Load]) -> list[float]:
    service = _common_service(loads, "preemptive-resume")
    _saturation(sum(x.arrival_rate for x in loads) * service, servers)
    out = [x.service for x in loads]
    above_rate = 0.0
    for level in _levels(loads):
        rate = sum(loads[i].arrival_rate for i in level)
        if rate > 0:
            number = mmc_number(servers, above_rate + rate, service) - mmc_number(servers, above_rate, service)
            for i in level:
                out[i] = number / rate
        above_rate += rate
    return out
