"""The documentation's figures about fluid mode: how far a fluid run is from the discrete run of the same scenario.

Each scenario of examples/fluid/ runs in both modes with the same seeds, in this process; the table gives the
fluid run's difference from the discrete one for each figure issue 34 holds it to: replica-hours (the pods'
billed hours, as `skenario show` counts them), mean, p95 and p99 latency, and the error rate.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from figures import ROOT, Examples, figure  # type: ignore[import-not-found]

from skenario.results.analysis import cost
from skenario.results.rundata import RunData
from skenario.runs import open_run
from skenario.scenario.simulation import Simulation

FOLDER = ROOT / "examples" / "fluid"
HELD = ("steady", "step", "sinusoid", "trace", "kpa", "cluster")  # issue 34's set, at 50 requests/s per replica or more
LIMITS = ("low-load", "from-one", "from-zero", "overload")  # where agreement ends
SEEDS = (1, 2, 3)


def _figures(name: str, seed: int, mode: str) -> dict[str, float]:
    simulation = open_run(FOLDER / f"{name}.yaml", seed=seed, mode=mode)
    assert isinstance(simulation, Simulation)
    summary = simulation.run()
    replica_hours = cost(RunData.from_simulation(simulation))["replica_hours"]
    finished = summary.requests_completed + summary.requests_failed
    return {
        "replica_hours": replica_hours,
        "mean": summary.latency_mean_ns or 0.0,
        "p95": float(summary.latency_p95_ns or 0),
        "p99": float(summary.latency_p99_ns or 0),
        "error_rate": summary.requests_failed / finished if finished else 0.0,
        "per_replica": summary.requests_arrived / (replica_hours * 3600),
    }


@cache
def _pairs(name: str, seeds: tuple[int, ...]) -> list[tuple[dict[str, float], dict[str, float]]]:
    """(discrete, fluid) figures for each seed (the runs are the same each time: kept once made)."""
    return [(_figures(name, seed, "discrete"), _figures(name, seed, "fluid")) for seed in seeds]


def _difference(pairs: list[tuple[dict[str, float], dict[str, float]]], figure: str) -> str:
    """The fluid run's relative difference from the discrete one: the range over the seeds."""
    values = sorted((fluid[figure] - discrete[figure]) / discrete[figure] for discrete, fluid in pairs)
    low, high = f"{values[0]:+.1%}", f"{values[-1]:+.1%}"
    return low if low == high else f"{low} to {high}"


def _errors(pairs: list[tuple[dict[str, float], dict[str, float]]]) -> str:
    worst = max(pairs, key=lambda pair: abs(pair[1]["error_rate"] - pair[0]["error_rate"]))
    return f"{worst[0]['error_rate']:.1%} / {worst[1]['error_rate']:.1%}"


def _table(names: tuple[str, ...], seeds: tuple[int, ...]) -> str:
    rows = [
        "| scenario | requests/s per replica | replica-hours | mean latency | p95 | p99 | errors, discrete / fluid |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        pairs = _pairs(name, seeds)
        per_replica = min(discrete["per_replica"] for discrete, _ in pairs)
        cells = [_difference(pairs, figure) for figure in ("replica_hours", "mean", "p95", "p99")]
        rows.append(f"| `{Path(name).name}.yaml` | {per_replica:.0f} | " + " | ".join(cells) + f" | {_errors(pairs)} |")
    return "\n" + "\n".join(rows) + "\n"


@figure("fluid.held")
def _held(examples: Examples) -> str:
    return _table(HELD, SEEDS)


@figure("fluid.limits")
def _limits(examples: Examples) -> str:
    return _table(LIMITS, SEEDS[:1])
