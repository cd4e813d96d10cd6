"""Multi-server queues: Erlang B and C, and the M/M/c mean values built on them.

Erlang C is computed from Erlang B's recursion (B_1 = a/(1+a), B_m = a B_{m-1} / (m + a B_{m-1}),
C = B / (1 - rho + rho B)), as PDQ's `ErlangR()` in `lib/PDQ_MServer.c` does: no factorials,
so it stays accurate for thousands of servers.
"""

from __future__ import annotations


def erlang_b(servers: int, offered: float) -> float:
    """Blocking probability of M/M/c/c with `offered` = lambda * S erlangs."""
    if servers < 1:
        raise ValueError(f"servers must be >= 1, got {servers}")
    if offered < 0:
        raise ValueError(f"offered load must be >= 0, got {offered}")
    b = 1.0
    for m in range(1, servers + 1):
        b = offered * b / (m + offered * b)
    return b


def erlang_c(servers: int, offered: float) -> float:
    """Probability that an arrival waits in M/M/c (Erlang C); needs offered < servers."""
    rho = offered / servers
    if rho >= 1:
        raise ValueError(f"M/M/{servers} with {offered} erlangs is saturated (rho = {rho:.4g} >= 1)")
    b = erlang_b(servers, offered)
    return b / (1.0 - rho + rho * b)


def mmc_wait(servers: int, arrival_rate: float, service: float) -> float:
    """Mean wait in queue of M/M/c: W = C(c, a) S / (c (1 - rho))."""
    offered = arrival_rate * service
    rho = offered / servers
    return erlang_c(servers, offered) * service / (servers * (1.0 - rho))


def mmc_response(servers: int, arrival_rate: float, service: float) -> float:
    """Mean response time of M/M/c: R = S + W."""
    return service + mmc_wait(servers, arrival_rate, service)


def mmc_number(servers: int, arrival_rate: float, service: float) -> float:
    """Mean number in an M/M/c system, by Little's law."""
    if arrival_rate == 0:
        return 0.0
    return arrival_rate * mmc_response(servers, arrival_rate, service)
