"""Runs for analysis, plot and report tests: a small hand-made one, and a real one with scenario events.

The hand-made RunData has every number written out.

Six intervals: five of 10 s and a last of 5 s (the run halts at 55 s). Replicas change only at
interval ends, so the counts sampled at each end hold for the whole of the next interval:

    r0  created 0,  bound 0,  active 0,  alive at the end               (500m)  55 s billed
    r1  created 0,  bound 0,  active 0,  terminating 30, gone at 40     (500m)  40 s billed
    r2  created 20, bound 20, active 30, alive at the end               (1000m) 35 s billed
    r3  created 30, Pending (no node took it), gone at 50               (1000m)  0 s billed

The autoscalers allow at most 4 replicas, asked for at 30 s only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from skenario.core.time import MILLISECOND, SECOND
from skenario.recording.recorder import COLUMNS, LIFECYCLE_COLUMNS
from skenario.recording.summary import Summary
from skenario.results.rundata import TIMELINE_COLUMNS, RunData
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

S = SECOND
MI = 2**20
GI = 2**30
TIMES_S = [10, 20, 30, 40, 50, 55]

ROW_NAMES = (
    "replicas_desired",
    "replicas_pending",
    "replicas_launching",
    "replicas_active",
    "replicas_terminating",
    "replicas_terminated",
    "requests_buffered",
    "requests_processing",
    "requests_arrived",
    "requests_completed",
    "failed_timeout",
    "failed_overload",
    "cpu_request_utilisation",
    "node_cpu_utilisation",
    "cpu_request_millicores",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "latency_mean_ms",
)
# time: desired, pending, launching, active, terminating, terminated, buffered, processing, arrived, completed,
#       failed timeout, failed overload, cpu of request, cpu of nodes, cpu request, p50, p95, p99, mean
ROWS: list[tuple[Any, ...]] = [
    (2, 0, 0, 2, 0, 0, 0, 3, 100, 100, 0, 0, 0.5, 0.125, 500, 20.0, 40.0, 50.0, 25.0),
    (3, 0, 1, 2, 0, 0, 1, 4, 200, 190, 5, 5, 0.4, 0.1, 1000, 30.0, 70.0, 80.0, 35.0),
    (4, 1, 0, 2, 1, 0, 0, 2, 20, 0, 20, 0, 0.1, 0.025, 1000, None, None, None, None),
    (3, 1, 0, 2, 0, 1, 2, 6, 300, 280, 10, 10, 0.4, 0.1, 1000, 100.0, 300.0, 400.0, 150.0),
    (2, 0, 0, 2, 0, 2, 0, 1, 200, 210, 0, 0, 0.3, 0.075, 1000, 30.0, 60.0, 90.0, 40.0),
    (2, 0, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0.15, 0.0375, 1000, None, None, None, None),
]
REPLICAS_MAX = 4  # the autoscalers' bound, a gauge of every row

# Live replicas (launching + active + terminating) at the start of the run, before the first sample.
INITIAL_LIVE = 2

# replica, created, bound, activated, terminated, cpu request, cpu limit, busy core-ns, memory request, restarts
# (r0 uses 0.6 cores on average, above its 500m request: OpenCost charges it what it used)
LIFECYCLES = [
    (0, 0, 0, 0, None, 500, 1000, 33 * S, 512 * MI, 0),
    (1, 0, 0, 0, 40 * S, 500, 1000, 8 * S, 512 * MI, 2),
    (2, 20 * S, 20 * S, 30 * S, None, 1000, 1000, 10 * S, 2 * GI, 0),
    (3, 30 * S, None, None, 50 * S, 1000, 1000, 0, None, 0),
]

# time: [(replica, state, utilisation, held)]
REPLICA_ROWS: dict[int, list[tuple[int, str, float | None, int]]] = {
    10: [(0, "active", 0.6, 2), (1, "active", 0.4, 1)],
    20: [(0, "active", 0.5, 2), (1, "active", 0.3, 2), (2, "launching", None, 0)],
    30: [(0, "active", 0.2, 1), (1, "terminating", 0.1, 1), (2, "active", None, 0), (3, "launching", None, 0)],
    40: [(0, "active", 0.3, 2), (1, "terminated", 0.0, 0), (2, "active", 0.5, 4), (3, "launching", None, 0)],
    50: [(0, "active", 0.2, 1), (2, "active", 0.4, 0), (3, "terminated", None, 0)],
    55: [(0, "active", 0.1, 0), (2, "active", 0.2, 0)],
}


def hpa(at_s: int, current: int, desired: int, utilization: int) -> dict[str, Any]:
    return {
        "at": at_s * S,
        "current": current,
        "proposed": desired,
        "desired": desired,
        "reason": "ScaleUp" if desired > current else "Stable",
        "metrics": {
            "cpu": {
                "replicas": desired,
                "usage": 400,
                "utilization": utilization,
                "usage_ratio": utilization / 100,
                "target_type": "Utilization",
                "target": 100,
            }
        },
        "error": None,
    }


TIMELINE = [
    (15 * S, "web", "Decision", "workload", "scale to 3", hpa(15, 2, 3, 120)),
    (20 * S, "vpa-bump", "Patch", "workload", "cpu request 500m -> 1000m", {"patch": {"cpu": "1000m"}}),
    (
        20 * S,
        "vpa",
        "Decision",
        "workload",
        "recommend 1000m",
        {"at": 20 * S, "target": 1000, "lower_bound": 600, "upper_bound": 1500, "template_request": 1000, "evicted": 0},
    ),
    (30 * S, "web", "Decision", "workload", "scale to 4", hpa(30, 3, 4, 150)),
    (30 * S, "crash", "Delete", "replica/1", "replica 1 terminating", {}),
    (45 * S, "web", "Decision", "workload", "keep 3", hpa(45, 3, 3, 90)),
]


def summary() -> dict[str, Any]:
    return Summary(
        scenario="hand-made",
        seed=3,
        simulated_ns=55 * S,
        requests_arrived=820,
        requests_completed=780,
        requests_failed=50,
        requests_in_flight=0,
        failures={"overload": 15, "timeout": 35},
        latency_p50_ns=30 * MILLISECOND,
        latency_p95_ns=200 * MILLISECOND,
        latency_p99_ns=350 * MILLISECOND,
        latency_mean_ns=60.5 * MILLISECOND,
        cpu_request_utilisation=0.33,
        node_cpu_utilisation=0.0825,
        replicas_desired=2,
        replicas_active=2,
        replicas_pending=0,
        replicas_started=3,
        replicas_terminated=2,
        movements_completed=5000,
        movements_ignored=0,
        ignored={},
        digest="0123456789abcdef",
    ).as_dict()


def build_run(*, name: str = "hand-made", timeline: list[tuple[Any, ...]] | None = None) -> RunData:
    records = []
    for t, row in zip(TIMES_S, ROWS, strict=True):
        values = dict(zip(ROW_NAMES, row, strict=True))
        values["requests_failed"] = values["failed_timeout"] + values["failed_overload"]
        # Columns these rows do not exercise (no metrics in transit, no memory modelled).
        values |= {"metrics_in_transit": 0, "replicas_restarting": 0, "memory_working_set_bytes": None}
        records.append({"time_ns": t * S, **values, "replicas_max": REPLICAS_MAX})
    series = pd.DataFrame(records, columns=[*COLUMNS, "replicas_max", "failed_overload", "failed_timeout"])
    series.index = pd.Index(series["time_ns"] / S, name="time_s")
    replica_series = pd.DataFrame(
        [
            {"time_ns": t * S, "replica": r, "state": state, "cpu_utilisation": u, "requests_held": held}
            for t, rows in REPLICA_ROWS.items()
            for r, state, u, held in rows
        ]
    )
    replica_series["time_s"] = replica_series["time_ns"] / S
    return RunData(
        id=None,
        name=name,
        seed=3,
        phase="Completed",
        message=None,
        digest="0123456789abcdef",
        simulated_ns=55 * S,
        summary=summary(),
        series=series,
        replica_series=replica_series,
        replicas=pd.DataFrame(
            LIFECYCLES,
            columns=list(LIFECYCLE_COLUMNS),
        ),
        timeline=pd.DataFrame(TIMELINE if timeline is None else timeline, columns=list(TIMELINE_COLUMNS)),
        scenario="apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {name: hand-made}\n",
    )


@pytest.fixture
def run() -> RunData:
    return build_run()


@pytest.fixture
def make_run() -> Callable[..., RunData]:
    """The builder, for tests that vary the hand-made run (another name, another timeline)."""
    return build_run


@pytest.fixture
def empty_run() -> RunData:
    """A run as the store holds it before it started: nothing recorded, no summary."""
    return dataclasses.replace(
        build_run(),
        phase="Pending",
        message="not started",
        series=build_run().series.iloc[:0],
        replica_series=build_run().replica_series.iloc[:0],
        replicas=build_run().replicas.iloc[:0],
        timeline=pd.DataFrame(columns=list(TIMELINE_COLUMNS)),
        simulated_ns=0,
        summary={},
    )


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# hpa-step, shortened, with a replica killed, the metrics pipeline down for a minute and an early end.
EVENTS = """  events:
    - {id: crash, at: 2m, delete: {target: replica}}
    - {id: metrics-down, at: 3m, delete: {target: metrics}}
    - {id: metrics-up, at: 4m, create: {target: metrics}}
    - {id: end, at: 9m, done: {}}
"""


@pytest.fixture(scope="session")
def real_run() -> RunData:
    """examples/hpa-step.yaml cut to 10 minutes, with EVENTS: a real simulation's results (about 0.2 s)."""
    text = (EXAMPLES / "hpa-step.yaml").read_text().replace("duration: 40m", "duration: 10m") + EVENTS
    simulation = Simulation(parse_scenario(text), base_dir=EXAMPLES, scenario_text=text)
    simulation.run()
    return RunData.from_simulation(simulation)
