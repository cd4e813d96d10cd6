"""Run replications of a standard model and set each analytic value beside the simulated interval."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from skenario.queueing.solution import Solution
from skenario.validation.intervals import Interval, confidence_interval, simultaneous
from skenario.validation.models import StandardModel
from skenario.validation.network import NetworkSimulation, SimulatedMeans


@dataclass(frozen=True)
class Comparison:
    model: str
    quantity: str  # "R(Production)", "X(jobs)", "U(CPU)"
    method: str
    exact: bool
    analytic: float
    simulated: Interval  # the 95% interval of this value alone
    together: Interval | None = None  # widened so all exact values' intervals hold together at 95%

    @property
    def inside(self) -> bool:
        return self.simulated.contains(self.analytic)

    @property
    def inside_together(self) -> bool:
        return (self.together or self.simulated).contains(self.analytic)

    @property
    def error(self) -> float:
        """Relative error of the analytic value against the simulated mean."""
        return (self.analytic - self.simulated.mean) / self.simulated.mean if self.simulated.mean else math.inf


def replicate(model: StandardModel, *, replications: int, seed: int, scale: float = 1.0) -> list[SimulatedMeans]:
    """Independent replications, each on its own named random streams from `seed`."""
    return [
        NetworkSimulation(
            model.network,
            duration=model.warmup + (model.duration - model.warmup) * scale,
            warmup=model.warmup,
            seed=seed,
            stream=f"{model.name}/replication-{r}",
            memory=model.memory,
        ).run()
        for r in range(replications)
    ]


def compare(model: StandardModel, runs: list[SimulatedMeans]) -> list[Comparison]:
    """Each analytic response time, throughput (closed classes) and utilisation against its interval."""
    network = model.network
    answers = model.analytic(network)
    finite = any(k.capacity is not None for k in network.centres)
    solved = answers[0].solution.centres  # a flow-equivalent server stands for the centres it replaces
    quantities = [("R", c.name) for c in network.classes]
    quantities += [("X", c.name) for c in network.classes if not c.is_open or finite]
    quantities += [("U", k.name) for k in network.centres if not k.is_delay and k.name in solved]
    comparisons = []
    for kind, name in quantities:
        interval = confidence_interval([_simulated(kind, name, m) for m in runs])
        for answer in answers:
            value = _analytic(kind, name, answer.solution)
            comparisons.append(
                Comparison(model.name, f"{kind}({name})", answer.label, answer.solution.exact, value, interval)
            )
    return comparisons


def _simulated(kind: str, name: str, means: SimulatedMeans) -> float:
    table = {"R": means.response, "X": means.throughput, "U": means.utilization}[kind]
    return table[name]


def _analytic(kind: str, name: str, solution: Solution) -> float:
    if kind == "R":
        return solution.response(name)
    return solution.throughput(name) if kind == "X" else solution.utilization(name)


def widen_together(comparisons: list[Comparison]) -> list[Comparison]:
    """Give each exact comparison its simultaneous interval over all exact ones (Bonferroni).

    Twenty-odd exact values each at 95% leave good odds that one misses by chance; a value
    outside even the simultaneous interval is evidence against the simulator (or the theory).
    """
    family = sum(c.exact for c in comparisons)
    return [replace(c, together=simultaneous(c.simulated, family)) if c.exact else c for c in comparisons]
