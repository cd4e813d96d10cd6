"""What an autoscaler costs: the reference scenario for 1 h with and without the HPA (issue #4).

Both runs use `benchmarks/reference.yaml` through `Simulation`; the HPA run adds an HPA on CPU at
60% utilisation between 20 and 80 replicas, syncing every 15 s as kube-controller-manager does.
Each run is a fresh interpreter (`--one NAME` prints one JSON line); rounds interleave the two and
the ratio is taken per round, then the median reported. Target: HPA ≤ 1.2× no autoscaler.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from time import perf_counter
from typing import Any

HERE = Path(__file__).resolve().parent
CPU_TARGET = {"type": "Utilization", "averageUtilization": 60}
HPA = {
    "type": "hpa",
    "spec": {
        "minReplicas": 20,
        "maxReplicas": 80,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": CPU_TARGET}}],
    },
}


def run(with_hpa: bool, duration: str = "1h") -> dict[str, Any]:
    import yaml

    from skenario.scenario.loader import parse_scenario
    from skenario.scenario.simulation import Simulation

    data = yaml.safe_load((HERE / "reference.yaml").read_text())
    data["spec"]["duration"] = duration
    if with_hpa:
        data["spec"]["autoscalers"] = [HPA]
    scenario = parse_scenario(yaml.safe_dump(data), source="reference.yaml")
    started = perf_counter()
    simulation = Simulation(scenario, base_dir=HERE)
    summary = simulation.run()
    wall = perf_counter() - started
    syncs = sum(len(getattr(a, "decisions", [])) for a in simulation.autoscalers.values())
    return {
        "wall_s": wall,
        "requests": summary.requests_arrived,
        "us_per_request": wall / summary.requests_arrived * 1e6,
        "replicas_started": summary.replicas_started,
        "hpa_syncs": syncs,
        "latency_p99_ms": (summary.latency_p99_ns or 0) / 1e6,
    }


def run_in_subprocess(name: str) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--one", name]
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        raise RuntimeError(f"{name} failed (exit {finished.returncode}):\n{finished.stderr}")
    record: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return record


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")
    parser.add_argument("--one", choices=["none", "hpa"], help="time one run in this process, print one JSON line")
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps({"run": args.one, **run(args.one == "hpa")}))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {"none": [], "hpa": []}
    for index in range(args.rounds):
        for name in ("none", "hpa") if index % 2 == 0 else ("hpa", "none"):
            runs[name].append(run_in_subprocess(name))
            if not args.json:
                print(f"round {index + 1}/{args.rounds}: {name:<4} {runs[name][-1]['wall_s']:.2f} s", file=sys.stderr)
    ratios = [h["wall_s"] / n["wall_s"] for h, n in zip(runs["hpa"], runs["none"], strict=True)]
    summary = {
        "rounds": args.rounds,
        "none_wall_s": statistics.median(r["wall_s"] for r in runs["none"]),
        "hpa_wall_s": statistics.median(r["wall_s"] for r in runs["hpa"]),
        "x_hpa_over_none": statistics.median(ratios),
        "hpa_syncs": runs["hpa"][0]["hpa_syncs"],
        "replicas_started_with_hpa": runs["hpa"][0]["replicas_started"],
        "target_met": statistics.median(ratios) <= 1.2,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"no autoscaler {summary['none_wall_s']:.2f} s, HPA {summary['hpa_wall_s']:.2f} s: "
            f"{summary['x_hpa_over_none']:.3f}× ({summary['hpa_syncs']} syncs, "
            f"{summary['replicas_started_with_hpa']} replicas started); target ≤ 1.2×: "
            f"{'met' if summary['target_met'] else 'MISSED'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
