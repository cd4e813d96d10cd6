"""The reference cluster scenario (issue #3): speed per request and flat memory, against the floor.

The scenario (`benchmarks/reference.yaml`): 1 h simulated, sinusoidal traffic between 50 and 500
requests/s (about a million requests), 40 replicas of 1000m, CPU time exponential with mean 50 ms,
IO time 20 ms, timeout 10 s, all of the model on: processor-sharing CPU, the metrics (metrics-server's
scrapes by default), timeouts, recording every 10 s. It runs through `Simulation`, the path the CLI
takes, from a parsed scenario to a Summary.

What is measured, each run in a fresh interpreter (`--one NAME` prints one JSON line):

- `floor`: the bare heapq M/M/8 loop of `benchmarks/mmc.py` (200,000 customers); its wall time per
  customer is the unit of speed.
- `reference_1h` and `reference_4h`: the scenario for 1 h and 4 h. Wall time per simulated request
  and peak RSS (the whole process, interpreter and libraries included).
- `reference_nodes_1h`: the same scenario with its 40 pods on 10 nodes of 4 cores (`spec.cluster`),
  so every request's CPU phase goes through its node's CFS-like sharing (model/cpu/node.py): the
  cost of shared nodes over pods alone on implicit ones.
- `ps_10` and `ps_1000`: one replica with 10 or 1000 requests always in flight (a closed loop: each
  completion sends in a new request), each taking the replica's whole request path (arrival
  movement, processor-sharing CPU, IO, completion movement), to show the cost per request grows
  as O(log n) in the requests sharing the CPU, not O(n).

With `--baseline SRC` each round also runs `reference_1h` with the skenario package in SRC (say
a checkout of the commit before a change, `git worktree add /tmp/old <commit>`, SRC=/tmp/old/src),
and the ratio of the two is reported: #17's target is at most 1.1×.

Targets: reference_1h ≤ 5× floor per request; reference_nodes_1h ≤ 1.2× reference_1h; peak memory
≤ 300 MB; 4 h peak ≤ 1.2× the 1 h peak; ps_1000 ≤ 2× ps_10 per request. Rounds interleave the
runs, ratios are per round, medians reported.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from time import perf_counter
from typing import Any

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "reference.yaml"
PS_COMPLETIONS = 200_000
FLOOR_CUSTOMERS = 200_000


def _peak_rss_mb() -> float | None:
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_floor() -> dict[str, Any]:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    mmc: Any = importlib.import_module("mmc")
    started = perf_counter()
    _, _, completed = mmc.run_floor(FLOOR_CUSTOMERS, mmc.SEED)
    wall = perf_counter() - started
    return {"wall_s": wall, "units": completed, "us_per_unit": wall / completed * 1e6}


NODES = {"nodes": [{"name": "node", "count": 10, "cpu": 4, "memory": "16Gi"}]}
"""The reference's nodes for `reference_nodes_1h`: 10 of 4 cores hold its 40 pods of 1000m, 4 on each."""


def run_reference(hours: float, nodes: bool = False) -> dict[str, Any]:
    """The reference scenario for `hours` of simulated time, through Simulation (on 10 nodes if `nodes`)."""
    from skenario.core.time import HOUR
    from skenario.scenario.format.cluster import Cluster
    from skenario.scenario.loader import load_scenario
    from skenario.scenario.simulation import Simulation

    scenario = load_scenario(SCENARIO)
    update: dict[str, Any] = {"duration": round(hours * HOUR)}
    if nodes:
        update["cluster"] = Cluster.model_validate(NODES)
    scenario = scenario.model_copy(update={"spec": scenario.spec.model_copy(update=update)})
    started = perf_counter()
    simulation = Simulation(scenario, base_dir=HERE)
    summary = simulation.run()
    wall = perf_counter() - started
    arrived = summary.requests_arrived
    return {
        "wall_s": wall,
        "units": arrived,
        "us_per_unit": wall / arrived * 1e6,
        "completed": summary.requests_completed,
        "failed": summary.requests_failed,
        "latency_p50_ms": (summary.latency_p50_ns or 0) / 1e6,
        "latency_p99_ms": (summary.latency_p99_ns or 0) / 1e6,
        # A --baseline checkout from before #28 reads CPU one way only (over what a pod could use alone).
        "cpu_request_utilisation": getattr(summary, "cpu_request_utilisation", None),
        "rows": len(simulation.recorder),
        "digest": summary.digest,
    }


def run_processor_sharing(in_flight: int, completions: int = PS_COMPLETIONS) -> dict[str, Any]:
    """`in_flight` requests always on one replica of 1000m; each completion sends in a fresh one.

    The requests take the replica's whole path: a movement into its processing stock, the
    processor-sharing CPU (exponential work of mean 50 ms), 20 ms of IO, a movement to the
    complete sink, which records the latency, and a movement bringing the next request in.
    """
    from skenario.core.environment import Environment
    from skenario.core.random import Constant, Exponential, RandomStreams, sampler
    from skenario.core.stocks import Source
    from skenario.core.time import MILLISECOND
    from skenario.model.processing import ClassWork, RequestsProcessing
    from skenario.model.requests import Request, RequestsComplete, RequestsFailed

    streams = RandomStreams(7)
    work = ClassWork(
        sampler(Exponential(50 * MILLISECOND), streams.generator("cpu-time")),
        sampler(Constant(20 * MILLISECOND), streams.generator("io-time")),
    )
    # Long enough never to halt first: n requests of 50 ms on one core take n × 50 ms each.
    env = Environment(halt_at=(completions + in_flight) * 100 * MILLISECOND)
    traffic: Source[Request] = Source("TrafficSource", "Request")
    admitted = 0

    class ClosedLoop(RequestsComplete):
        """The complete sink, which sends in a new request for each one that completes."""

        def add(self, entity: Request) -> None:
            nonlocal admitted
            super().add(entity)
            if admitted < completions:  # then the last ones drain and the run ends
                admitted += 1
                env.schedule("arrive", env.now(), traffic, replica, Request(admitted, env.now()))

    complete = ClosedLoop(env)
    replica = RequestsProcessing(
        "replica-0", env, millicores=1000, work=(work,), complete=complete, failed=RequestsFailed()
    )

    def start() -> None:
        nonlocal admitted
        for _ in range(in_flight):
            admitted += 1
            env.schedule("arrive", env.now(), traffic, replica, Request(admitted, env.now()))

    env.call_at(1, start)
    started = perf_counter()
    env.run()
    wall = perf_counter() - started
    done = complete.count()
    return {"wall_s": wall, "units": done, "us_per_unit": wall / done * 1e6, "in_flight": replica.count()}


RUNNERS: dict[str, Callable[[], dict[str, Any]]] = {
    "floor": run_floor,
    "reference_1h": lambda: run_reference(1),
    "reference_4h": lambda: run_reference(4),
    "reference_nodes_1h": lambda: run_reference(1, nodes=True),
    "ps_10": lambda: run_processor_sharing(10),
    "ps_1000": lambda: run_processor_sharing(1000),
}


def time_one(name: str) -> dict[str, Any]:
    record = {"run": name, **RUNNERS[name]()}
    record["peak_rss_mb"] = _peak_rss_mb()
    return record


BASELINE = "baseline_1h"
"""`reference_1h` with another version of skenario (`--baseline SRC`): the same scenario before a change."""


def run_in_subprocess(name: str, baseline: Path | None = None) -> dict[str, Any]:
    env = None
    if name == BASELINE:
        assert baseline is not None
        name = "reference_1h"
        env = {**os.environ, "PYTHONPATH": str(baseline)}
    command = [sys.executable, str(Path(__file__).resolve()), "--one", name]
    finished = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if finished.returncode != 0:
        raise RuntimeError(f"{name} failed (exit {finished.returncode}):\n{finished.stderr}")
    record: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return record


def measure(
    names: Sequence[str], rounds: int, progress: Callable[[str], None] | None, baseline: Path | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Interleaved rounds, the order rotated each round. The 4 h run is long: it runs in round 1 only."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for index in range(rounds):
        shift = index % len(names)
        for name in [*names[shift:], *names[:shift]]:
            if name == "reference_4h" and index > 0:
                continue
            record = run_in_subprocess(name, baseline)
            runs[name].append(record)
            if progress is not None:
                progress(f"round {index + 1}/{rounds}: {name:<13} {record['wall_s']:7.2f} s")
    return runs


def summarise(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    floors = runs["floor"]
    per_round = [r["us_per_unit"] / f["us_per_unit"] for r, f in zip(runs["reference_1h"], floors, strict=False)]
    ps_ratio = [
        big["us_per_unit"] / small["us_per_unit"] for big, small in zip(runs["ps_1000"], runs["ps_10"], strict=True)
    ]
    one_hour, four_hours = runs["reference_1h"], runs["reference_4h"]
    on_nodes = runs["reference_nodes_1h"]
    nodes_ratio = [n["us_per_unit"] / r["us_per_unit"] for n, r in zip(on_nodes, one_hour, strict=True)]
    peak_1h = statistics.median(r["peak_rss_mb"] for r in one_hour)
    peak_4h = four_hours[0]["peak_rss_mb"]
    result = {
        "rounds": len(floors),
        "floor_us_per_customer": statistics.median(r["us_per_unit"] for r in floors),
        "reference_1h": {
            "requests": one_hour[0]["units"],
            "us_per_request": statistics.median(r["us_per_unit"] for r in one_hour),
            "x_floor": statistics.median(per_round),
            "peak_rss_mb": peak_1h,
            "wall_s": statistics.median(r["wall_s"] for r in one_hour),
            "latency_p50_ms": one_hour[0]["latency_p50_ms"],
            "latency_p99_ms": one_hour[0]["latency_p99_ms"],
            "cpu_request_utilisation": one_hour[0]["cpu_request_utilisation"],
            "failed": one_hour[0]["failed"],
            "digest": one_hour[0]["digest"],
        },
        "reference_nodes_1h": {
            "us_per_request": statistics.median(r["us_per_unit"] for r in on_nodes),
            "x_reference_1h": statistics.median(nodes_ratio),
            "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in on_nodes),
            "wall_s": statistics.median(r["wall_s"] for r in on_nodes),
            "digest": on_nodes[0]["digest"],
        },
        "reference_4h": {
            "requests": four_hours[0]["units"],
            "us_per_request": four_hours[0]["us_per_unit"],
            "peak_rss_mb": peak_4h,
            "x_peak_1h": peak_4h / peak_1h,
            "wall_s": four_hours[0]["wall_s"],
        },
        "processor_sharing": {
            "us_per_completion_10": statistics.median(r["us_per_unit"] for r in runs["ps_10"]),
            "us_per_completion_1000": statistics.median(r["us_per_unit"] for r in runs["ps_1000"]),
            "x_1000_over_10": statistics.median(ps_ratio),
        },
    }
    if BASELINE in runs:
        base = runs[BASELINE]
        ratios = [r["us_per_unit"] / b["us_per_unit"] for r, b in zip(one_hour, base, strict=True)]
        result["baseline_1h"] = {
            "us_per_request": statistics.median(r["us_per_unit"] for r in base),
            "x_baseline": statistics.median(ratios),
            "digest": base[0]["digest"],
        }
    result["targets"] = {
        "speed_x_floor_le_5": result["reference_1h"]["x_floor"] <= 5,
        "nodes_le_1_2x_reference": result["reference_nodes_1h"]["x_reference_1h"] <= 1.2,
        "peak_rss_le_300mb": peak_1h <= 300 and peak_4h <= 300,
        "peak_4h_le_1_2x_1h": result["reference_4h"]["x_peak_1h"] <= 1.2,
        "ps_1000_le_2x_10": result["processor_sharing"]["x_1000_over_10"] <= 2,
    }
    if "baseline_1h" in result:
        result["targets"]["reference_le_1_1x_baseline"] = result["baseline_1h"]["x_baseline"] <= 1.1
    return result


def print_table(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=120)
    table = Table(title=f"reference scenario, median of {summary['rounds']} interleaved rounds")
    for column in ("run", "requests", "µs / request", "× floor", "peak RSS", "wall"):
        table.add_column(column, justify="left" if column == "run" else "right")
    one, four, ps = summary["reference_1h"], summary["reference_4h"], summary["processor_sharing"]
    floor = summary["floor_us_per_customer"]
    table.add_row("floor (M/M/8 heapq, per customer)", f"{FLOOR_CUSTOMERS:,}", f"{floor:.2f}", "1.00", "", "")
    table.add_row(
        "reference 1 h",
        f"{one['requests']:,}",
        f"{one['us_per_request']:.2f}",
        f"{one['x_floor']:.2f}",
        f"{one['peak_rss_mb']:.0f} MB",
        f"{one['wall_s']:.1f} s",
    )
    nodes = summary["reference_nodes_1h"]
    table.add_row(
        "reference 1 h on 10 nodes",
        f"{one['requests']:,}",
        f"{nodes['us_per_request']:.2f}",
        f"{nodes['us_per_request'] / floor:.2f} ({nodes['x_reference_1h']:.2f}× 1 h)",
        f"{nodes['peak_rss_mb']:.0f} MB",
        f"{nodes['wall_s']:.1f} s",
    )
    table.add_row(
        "reference 4 h",
        f"{four['requests']:,}",
        f"{four['us_per_request']:.2f}",
        f"{four['us_per_request'] / floor:.2f}",
        f"{four['peak_rss_mb']:.0f} MB ({four['x_peak_1h']:.2f}× 1 h)",
        f"{four['wall_s']:.1f} s",
    )
    if "baseline_1h" in summary:
        base = summary["baseline_1h"]
        table.add_row(
            "reference 1 h, the baseline",
            f"{one['requests']:,}",
            f"{base['us_per_request']:.2f}",
            f"{base['us_per_request'] / floor:.2f} (1 h: {base['x_baseline']:.2f}× it)",
            "",
            "",
        )
    table.add_row("PS CPU, 10 in flight", f"{PS_COMPLETIONS:,}", f"{ps['us_per_completion_10']:.2f}", "", "", "")
    table.add_row(
        "PS CPU, 1000 in flight",
        f"{PS_COMPLETIONS:,}",
        f"{ps['us_per_completion_1000']:.2f}",
        f"{ps['x_1000_over_10']:.2f}× the 10",
        "",
        "",
    )
    console.print(table)
    console.print(
        f"1 h: p50 {one['latency_p50_ms']:.1f} ms, p99 {one['latency_p99_ms']:.1f} ms, "
        f"CPU of request {one['cpu_request_utilisation']:.1%}, failed {one['failed']:,}, digest {one['digest']}"
    )
    for target, ok in summary["targets"].items():
        console.print(f"{'met    ' if ok else 'MISSED '} {target}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")
    parser.add_argument("--one", choices=list(RUNNERS), help="time one run in this process, print one JSON line")
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="SRC",
        help="also time reference_1h with the skenario package in SRC (another checkout's src/) in each round",
    )
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(time_one(args.one)))
        return 0
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    names = [*RUNNERS, BASELINE] if args.baseline is not None else list(RUNNERS)
    runs = measure(names, args.rounds, None if args.json else progress, args.baseline)
    summary = summarise(runs)
    if args.json:
        print(json.dumps(summary))
    else:
        print_table(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
