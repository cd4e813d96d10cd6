"""The standard models `skenario validate` checks: each a network, the analytic answers, and run lengths.

Every model lists the analytic solutions to compare, each labelled with its method; a solution
that is exact for the model must agree with the simulation, an approximate one is shown with its
error. Times are in seconds of model time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from skenario.queueing import Centre, CentreKind, Demand, Network, Scheduling, Solution, WorkloadClass, solve
from skenario.queueing.fesc import solve_flow_equivalent
from skenario.validation.network import MemoryConstraint


@dataclass(frozen=True)
class Analytic:
    label: str  # the method in words, e.g. "Erlang C"
    solution: Solution


@dataclass(frozen=True)
class StandardModel:
    name: str
    description: str
    network: Network
    analytic: Callable[[Network], list[Analytic]]
    duration: float  # per replication, model seconds
    warmup: float
    memory: MemoryConstraint | None = None  # simulated as it is; `analytic` solves its flow-equivalent server


def _one(demand: float, scv: float = 1.0) -> Demand:
    return Demand(1.0, demand, scv)


def _open(network: Network) -> list[Analytic]:
    return [Analytic("canonical", solve(network))]


def _priority_open(network: Network) -> list[Analytic]:
    return [
        Analytic("Cobham / preemptive-resume", solve(network)),
        Analytic("shadow server", solve(network, priorities="shadow")),
    ]


def _closed(network: Network) -> list[Analytic]:
    return [Analytic("exact MVA", solve(network, "exact")), Analytic("Bard-Schweitzer", solve(network, "approx"))]


def _os_scheduler(scheduling: Scheduling) -> Network:
    """Seed 001's O/S scheduler (PDQ shadowcpu) with PS disks, so the network is product form."""
    return Network.of(
        [
            Centre("CPU", scheduling=scheduling),
            Centre("DK1", scheduling=Scheduling.PS),
            Centre("DK2", scheduling=Scheduling.PS),
        ],
        [
            WorkloadClass(
                "Production",
                {"CPU": _one(0.30), "DK1": _one(0.08), "DK2": _one(0.10)},
                population=20,
                think_time=20,
                priority=1,
            ),
            WorkloadClass(
                "Development", {"CPU": _one(1.00), "DK1": _one(0.05), "DK2": _one(0.06)}, population=15, think_time=15
            ),
        ],
        name="os-scheduler",
    )


def _two_classes(scheduling: Scheduling) -> Network:
    return Network.of(
        [Centre("CPU", scheduling=scheduling)],
        [
            WorkloadClass("high", {"CPU": _one(1.0)}, arrival_rate=0.3, priority=1),
            WorkloadClass("low", {"CPU": _one(1.0)}, arrival_rate=0.4),
        ],
    )


FESC_CENTRES = ("CPU", "DK1", "DK2")


def _fesc() -> Network:
    """fesc.c's system: 15 users thinking 60 s, demands 3, 4 and 2 s at the CPU and two disks."""
    return Network.of(
        [Centre(name) for name in FESC_CENTRES],
        [WorkloadClass("work", {"CPU": _one(3.0), "DK1": _one(4.0), "DK2": _one(2.0)}, population=15, think_time=60.0)],
    )


def standard_models() -> list[StandardModel]:
    return [
        StandardModel(
            "M/M/1",
            "one FCFS server, rho = 0.7",
            Network.of([Centre("server")], [WorkloadClass("jobs", {"server": _one(1.0)}, arrival_rate=0.7)]),
            _open,
            duration=20_000,
            warmup=500,
        ),
        StandardModel(
            "M/M/3",
            "three FCFS servers, rho = 0.8 (Erlang C)",
            Network.of(
                [Centre("servers", servers=3)], [WorkloadClass("jobs", {"servers": _one(1.0)}, arrival_rate=2.4)]
            ),
            _open,
            duration=10_000,
            warmup=500,
        ),
        StandardModel(
            "M/D/1",
            "one FCFS server, constant service, rho = 0.7 (Pollaczek-Khinchine)",
            Network.of([Centre("server")], [WorkloadClass("jobs", {"server": _one(1.0, scv=0.0)}, arrival_rate=0.7)]),
            _open,
            duration=20_000,
            warmup=500,
        ),
        StandardModel(
            "M/M/2/5",
            "two FCFS servers, room for five: a full centre turns jobs away",
            Network.of(
                [Centre("servers", servers=2, capacity=5)],
                [WorkloadClass("jobs", {"servers": _one(1.0)}, arrival_rate=1.5)],
            ),
            lambda n: [Analytic("M/M/c/K", solve(n))],
            duration=20_000,
            warmup=500,
        ),
        StandardModel(
            "memory-constrained",
            "PDQ's fesc: 15 terminals share CPU and two disks, at most 3 jobs in memory at once",
            _fesc(),
            lambda n: [Analytic("flow-equivalent server + exact MVA", solve_flow_equivalent(n, FESC_CENTRES, 3))],
            duration=60_000,
            warmup=2_000,
            memory=MemoryConstraint(FESC_CENTRES, 3),
        ),
        StandardModel(
            "tandem",
            "open tandem: one server, two servers, then a delay",
            Network.of(
                [Centre("front"), Centre("back", servers=2), Centre("network", kind=CentreKind.DELAY)],
                [
                    WorkloadClass(
                        "jobs", {"front": _one(0.6), "back": _one(1.2), "network": _one(0.5)}, arrival_rate=0.8
                    )
                ],
            ),
            _open,
            duration=20_000,
            warmup=500,
        ),
        StandardModel(
            "mixed",
            "an open and a closed class sharing two PS centres and a delay",
            Network.of(
                [
                    Centre("CPU", scheduling=Scheduling.PS),
                    Centre("disk", scheduling=Scheduling.PS),
                    Centre("network", kind=CentreKind.DELAY),
                ],
                [
                    WorkloadClass("web", {"CPU": _one(0.2), "disk": _one(0.1), "network": _one(0.3)}, arrival_rate=1.5),
                    WorkloadClass("batch", {"CPU": _one(0.4), "disk": _one(0.5)}, population=5, think_time=2),
                ],
            ),
            lambda n: [Analytic("mixed MVA", solve(n))],
            duration=20_000,
            warmup=500,
        ),
        StandardModel(
            "closed",
            "seed 001's O/S scheduler without priority: 2 closed classes, PS centres",
            _os_scheduler(Scheduling.PS),
            _closed,
            duration=20_000,
            warmup=500,
        ),
        StandardModel(
            "priority, open, preemptive",
            "2 open classes at one server, preemptive-resume",
            _two_classes(Scheduling.PRIORITY_PREEMPTIVE),
            _priority_open,
            duration=20_000,
            warmup=500,
        ),
        StandardModel(
            "priority, open, non-preemptive",
            "2 open classes at one server, head-of-line (Cobham)",
            _two_classes(Scheduling.PRIORITY_NON_PREEMPTIVE),
            _priority_open,
            duration=20_000,
            warmup=500,
        ),
        StandardModel(
            "priority, closed",
            "seed 001's O/S scheduler, Production first at the CPU (preemptive-resume)",
            _os_scheduler(Scheduling.PRIORITY_PREEMPTIVE),
            lambda n: [
                Analytic("shadow server + exact MVA", solve(n, "exact")),
                Analytic("shadow server + Bard-Schweitzer (PDQ)", solve(n, "approx")),
            ],
            duration=20_000,
            warmup=500,
        ),
    ]
