"""Analytic queueing networks in the spirit of PDQ: open, closed and mixed, several classes, priorities.

The solver imports nothing from the simulator; `skenario.queueing.modelfile` reads model files.
"""

from skenario.queueing.erlang import erlang_b, erlang_c, mmc_response, mmc_wait
from skenario.queueing.network import (
    Centre,
    CentreKind,
    Demand,
    Network,
    QueueingModelError,
    Scheduling,
    WorkloadClass,
)
from skenario.queueing.solution import CentreMetrics, ClassMetrics, Method, Solution
from skenario.queueing.solve import Priorities, solve

__all__ = [
    "Centre",
    "CentreKind",
    "CentreMetrics",
    "ClassMetrics",
    "Demand",
    "Method",
    "Network",
    "Priorities",
    "QueueingModelError",
    "Scheduling",
    "Solution",
    "WorkloadClass",
    "erlang_b",
    "erlang_c",
    "mmc_response",
    "mmc_wait",
    "solve",
]
