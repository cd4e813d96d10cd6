"""What a sweep costs and gains: the same runs alone, in a sweep on 1 and 2 workers, and as a shell loop.

Issue #20 asks two things of `skenario sweep` on a 2-core machine:

- 2 local workers finish at least 16 runs at least 1.7× faster than 1 worker;
- a sweep's overhead per run is at most 5% of the same run alone.

The runs are those of `examples/sweep/hpa.yaml` (1 h simulated, ~120,000 requests, the HPA scaling
between 2 and 30 replicas): 4 settings of its CPU target × 4 seeds = 16 runs. Four ways of making
them, each timed from start to finish with perf_counter:

- `alone`: the 16 runs one after the other in this process: `parse_scenario` of the point's text,
  `Simulation(...)`, `run()`. Nothing else: the floor a sweep is measured against.
- `sweep_1`, `sweep_2`: `run_sweep` on 1 or 2 local worker processes (`runner.workers`), keeping
  every run in a run store in a fresh temporary folder, as `skenario sweep` does; the timing includes
  starting the workers, sending each job, computing its figures and writing it to the store.
- `shell_loop` (the peer: what a user does without `sweep`, issue #20's "today it takes a shell loop"):
  `skenario run FILE --seed S --no-store --json` 16 times in a row, each point's scenario written to a
  file first, each command a fresh interpreter as a shell loop starts it.

One untimed warm-up first loads what a process's first sweep loads (its modules, SciPy, the store's
tables). Rounds interleave the four, the order rotated each round; ratios are taken within a round and the
median and spread (min–max) over rounds reported:

- speed-up = sweep_1 ÷ sweep_2 (target ≥ 1.7);
- overhead per run = sweep_1 ÷ alone − 1 (target ≤ 5%);
- shell_loop ÷ sweep_2: how much sooner the sweep answers than the loop.

Every way must give the same 16 digests (checked each round), so all four did the same work.

Usage (from the repository root, with the virtualenv active)::

    python benchmarks/sweep.py                 # 3 rounds, rich table (about 5 minutes)
    python benchmarks/sweep.py --rounds 5 --json
    python benchmarks/sweep.py --quick         # a 2-minute scenario, 2 x 2 runs, 1 round (the tests' mode)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from time import perf_counter
from typing import Any

HERE = Path(__file__).resolve().parent
SCENARIO = HERE.parent / "examples" / "sweep" / "hpa.yaml"
TARGET = "autoscalers[0].manifest.spec.metrics[0].resource.target.averageUtilization"
SETTINGS = [{TARGET: value} for value in (50, 60, 70, 80)]
SEEDS = 4
QUICK_DURATION = "2m"
WAYS = ("alone", "sweep_1", "sweep_2", "shell_loop")
SPEEDUP_TARGET = 1.7
OVERHEAD_BUDGET = 0.05


def make_plan(quick: bool) -> Any:
    """The benchmark's points and seeds: 4 × 4 runs of the example, or 2 × 2 of a 2-minute cut of it."""
    from skenario.sweeps.plan import Template, plan, replication_seeds

    text = SCENARIO.read_text()
    if quick:
        text = text.replace("duration: 1h", f"duration: {QUICK_DURATION}")
    template = Template(text, str(SCENARIO), SCENARIO.parent, SCENARIO)
    settings = SETTINGS[:2] if quick else SETTINGS
    return plan(template, settings, replication_seeds(2 if quick else SEEDS, template.scenario.spec.seed))


def alone(made: Any) -> list[str]:
    """Each run in this process, nothing else; their digests."""
    from skenario.scenario.loader import parse_scenario
    from skenario.scenario.simulation import Simulation

    digests = []
    for job in made.jobs():
        simulation = Simulation(parse_scenario(job.text), seed=job.seed, base_dir=Path(job.base_dir))
        digests.append(simulation.run().digest)
    return digests


SIMULATION_S: dict[int, float] = {}
"""Per worker count, the last sweep's time inside its runs (parse, build, run: the runs alone, timed in the worker)."""


def swept(made: Any, count: int) -> list[str]:
    """The runs as `skenario sweep` makes them: `count` local workers, every run kept in a fresh store."""
    from skenario.results.store import RunStore
    from skenario.sweeps.runner import workers
    from skenario.sweeps.sweep import run_sweep

    with tempfile.TemporaryDirectory(prefix="skenario-sweep-bench-") as folder, workers(count) as pool:
        result = run_sweep(made, pool, store=RunStore(folder))
    SIMULATION_S[count] = sum(row["simulation_s"] for row in result.rows)
    return [row["digest"] for row in result.rows]


def shell_loop(made: Any) -> list[str]:
    """`skenario run` once per run, each a fresh interpreter, as a shell loop over the settings does."""
    digests = []
    with tempfile.TemporaryDirectory(prefix="skenario-loop-bench-") as folder:  # the points name no other file
        files = {}
        for point in made.points:
            files[point.number] = Path(folder) / f"point-{point.number}.yaml"
            files[point.number].write_text(point.text)
        for job in made.jobs():
            command = [sys.executable, "-m", "skenario", "run", str(files[job.point]), "--seed", str(job.seed)]
            done = subprocess.run([*command, "--no-store", "--json"], capture_output=True, text=True, check=True)
            digests.append(json.loads(done.stdout)["digest"])
    return digests


def _cpu_seconds() -> float:
    """CPU time of this process and of the children it has waited for (the workers, the loop's commands)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def ways(made: Any) -> dict[str, Callable[[], list[str]]]:
    return {
        "alone": lambda: alone(made),
        "sweep_1": lambda: swept(made, 1),
        "sweep_2": lambda: swept(made, 2),
        "shell_loop": lambda: shell_loop(made),
    }


def rotated(names: Sequence[str], index: int) -> list[str]:
    shift = index % len(names)
    return [*names[shift:], *names[:shift]]


def warm_up() -> None:
    """Load, untimed, what the first sweep of a process would load (the sweep's modules, SciPy, pandas'
    frames and the store): a cost a sweep pays once, not per run."""
    from skenario.results.store import RunStore
    from skenario.sweeps.runner import run_job
    from skenario.sweeps.table import points_frame

    with tempfile.TemporaryDirectory(prefix="skenario-sweep-bench-") as folder:
        RunStore(folder).open().close()
    run_job(make_plan(quick=True).jobs()[0])
    points_frame({1: {}}, [])


def measure(rounds: int, quick: bool, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every way timed in each round; the walls, the ratios per round, and whether the digests agree."""
    warm_up()
    made = make_plan(quick)
    runs = len(made.points) * len(made.seeds)
    timed = ways(made)
    walls: list[dict[str, float]] = []
    agree = True
    for index in range(rounds):
        wall: dict[str, float] = {}
        digests: dict[str, list[str]] = {}
        for name in rotated(WAYS, index):
            if progress is not None:
                progress(f"round {index + 1}/{rounds}: {name}")
            started, cpu = perf_counter(), _cpu_seconds()
            digests[name] = timed[name]()
            wall[name] = perf_counter() - started
            wall[f"{name}_cpu"] = _cpu_seconds() - cpu
        wall["runs_inside_sweep_1"] = SIMULATION_S[1]
        agree = agree and all(found == digests["alone"] for found in digests.values())
        walls.append(wall)
    ratios = {
        "speedup_2_over_1": [w["sweep_1"] / w["sweep_2"] for w in walls],
        "overhead_per_run": [w["sweep_1"] / w["alone"] - 1 for w in walls],
        "overhead_per_run_direct": [w["sweep_1"] / w["runs_inside_sweep_1"] - 1 for w in walls],
        "overhead_per_run_cpu": [w["sweep_1_cpu"] / w["alone_cpu"] - 1 for w in walls],
        "shell_loop_over_sweep_2": [w["shell_loop"] / w["sweep_2"] for w in walls],
    }
    return {"runs": runs, "rounds": rounds, "quick": quick, "walls": walls, "ratios": ratios, "digests_agree": agree}


def summary(result: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Median and spread of each ratio over the rounds."""
    return {
        name: {"median": statistics.median(values), "min": min(values), "max": max(values)}
        for name, values in result["ratios"].items()
    }


def verdict(result: dict[str, Any]) -> dict[str, bool]:
    found = summary(result)
    return {
        "speedup": found["speedup_2_over_1"]["median"] >= SPEEDUP_TARGET,
        "overhead": found["overhead_per_run_direct"]["median"] <= OVERHEAD_BUDGET,
        "digests": result["digests_agree"],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a 2-minute scenario, 2 x 2 runs, 1 round")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout, nothing else")
    options = parser.parse_args(argv)
    rounds = 1 if options.quick else options.rounds
    if options.json:
        result = measure(rounds, options.quick)
        print(json.dumps(result | {"summary": summary(result), "verdict": verdict(result)}, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True)
    result = measure(rounds, options.quick, progress=lambda text: console.print(text, style="dim"))
    table = Table(title=f"{result['runs']} runs of examples/sweep/hpa.yaml, {rounds} round(s)")
    for heading in ("round", *WAYS, "runs inside sweep_1"):
        table.add_column(heading, justify="right")
    for index, wall in enumerate(result["walls"], start=1):
        table.add_row(str(index), *(f"{wall[name]:.2f} s" for name in (*WAYS, "runs_inside_sweep_1")))
    Console().print(table)
    found = summary(result)
    ratios = Table(title="ratios (median, min-max over rounds)")
    for heading in ("ratio", "median", "spread", "target"):
        ratios.add_column(heading)
    targets = {
        "speedup_2_over_1": f">= {SPEEDUP_TARGET}",
        "overhead_per_run": f"<= {OVERHEAD_BUDGET:.0%}",
        "overhead_per_run_direct": f"<= {OVERHEAD_BUDGET:.0%}",
        "overhead_per_run_cpu": f"<= {OVERHEAD_BUDGET:.0%}",
        "shell_loop_over_sweep_2": "",
    }
    for name, values in found.items():
        spread = f"{values['min']:.3f}-{values['max']:.3f}"
        ratios.add_row(name, f"{values['median']:.3f}", spread, targets[name])
    Console().print(ratios)
    Console().print(f"digests agree: {result['digests_agree']}; verdict: {verdict(result)}")


if __name__ == "__main__":
    main()
