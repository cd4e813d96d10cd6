"""Seed 001, reproduced: priorities by the shadow server, by exact formulas, and by simulation.

    python examples/queueing/seed001.py

Closed (the O/S scheduler): PDQ's published Prod 2.69 -> 0.62, Devs 8.19 -> 8.66 come from
Bard-Schweitzer with the shadow CPU; exact MVA and the simulator show how much of that is the
approximation. Open (a web server): the shadow server leaves Development at its FCFS response,
while Cobham's preemptive-resume formula and the simulation agree that it waits longer.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from skenario.queueing import Network, Scheduling, Solution, solve
from skenario.queueing.modelfile import load_model
from skenario.validation.intervals import confidence_interval
from skenario.validation.network import NetworkSimulation

HERE = Path(__file__).parent


def simulated(network: Network, replications: int = 10, duration: float = 20_000) -> dict[str, str]:
    """Each class's mean response time over independent replications, with its 95% interval."""
    runs = [
        NetworkSimulation(network, duration=duration, warmup=500, seed=1, stream=f"replication-{r}").run()
        for r in range(replications)
    ]
    out = {}
    for cls in network.classes:
        interval = confidence_interval([run.response[cls.name] for run in runs])
        out[cls.name] = f"{interval.mean:.2f} ± {interval.half_width:.2f}"
    return out


def with_cpu(network: Network, scheduling: Scheduling) -> Network:
    return network.with_centres(replace(c, scheduling=scheduling) if c.name == "CPU" else c for c in network.centres)


def row(label: str, figures: dict[str, str | float]) -> str:
    cells = [f"{v:.2f}" if isinstance(v, float) else v for v in figures.values()]
    return f"  {label:<40}" + "".join(f"{cell:>16}" for cell in cells)


def main(replications: int = 10, duration: float = 20_000) -> None:
    closed = load_model(HERE / "os-scheduler.yaml").network
    before = with_cpu(closed, Scheduling.PS)
    print("O/S scheduler (closed), response time in seconds:     Production     Development")
    for title, network in (("no priority", before), ("Production first", closed)):
        print(f" {title}")
        approx, exact = solve(network, "approx"), solve(network, "exact")
        print(row("PDQ (Bard-Schweitzer" + (", shadow CPU)" if network is closed else ")"), _r(approx)))
        print(row("exact MVA" + (" with the shadow CPU" if network is closed else ""), _r(exact)))
        print(row("simulation, 95% interval", simulated(network, replications, duration)))

    web = load_model(HERE / "web-server.yaml").network
    print("\nWeb server (open), response time in seconds:         Production     Development")
    print(row("FCFS, no priority", _r(solve(with_cpu(web, Scheduling.FCFS)))))
    print(row("shadow server", _r(solve(web, priorities="shadow"))))
    print(row("Cobham (preemptive-resume)", _r(solve(web))))
    print(row("simulation, 95% interval", simulated(web, replications, duration)))


def _r(solution: Solution) -> dict[str, str | float]:
    return {name: metrics.response for name, metrics in solution.classes.items()}


if __name__ == "__main__":
    main()
