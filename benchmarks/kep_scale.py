"""KEP-140 at scale: 1,000 nodes and 10,000 pods created over 100 FakeTime steps, run end to end.

The scenario is the issue's: at step 0 the nodes (in 4 zones), then 100 pods a step (a mix of
Deployments' pods and bare pods of four sizes, a tenth with zone anti-affinity to their own
app), every plugin of the default profile on, every attempt's plugin results kept. Reported: wall
time to build and run it, pods per second, and the share that were bound. No peer runs KEP-140
scenarios (kube-scheduler-simulator's Scenario controller is a scaffold), so the figure stands
alone; `--nodes` and `--pods` scale it.

    python benchmarks/kep_scale.py [--nodes 1000] [--pods 10000] [--steps 100]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from skenario.scenario.faketime import FakeTimeRun
from skenario.scenario.format.kep import KEP_API_VERSION, KepScenario

SIZES = ("250m", "500m", "1", "2")


def build(nodes: int, pods: int, steps: int) -> KepScenario:
    events: list[dict[str, Any]] = []
    for i in range(nodes):
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"node-{i:05d}", "labels": {"topology.kubernetes.io/zone": f"zone-{i % 4}"}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}},
        }
        events.append({"id": f"node-{i}", "time": 0, "operation": "Create", "createOperation": {"object": node}})
    per_step = pods // steps
    for k in range(pods):
        step = 1 + k // per_step
        app = f"app-{k % 50}"
        spec: dict[str, Any] = {
            "containers": [
                {"name": "c", "image": f"{app}:1", "resources": {"requests": {"cpu": SIZES[k % 4], "memory": "1Gi"}}}
            ]
        }
        if k % 10 == 0:
            term = {"topologyKey": "topology.kubernetes.io/zone", "labelSelector": {"matchLabels": {"app": app}}}
            spec["affinity"] = {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": term}]
                }
            }
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"pod-{k:05d}", "labels": {"app": app}},
            "spec": spec,
        }
        events.append({"id": f"pod-{k}", "time": step, "operation": "Create", "createOperation": {"object": pod}})
    events.append({"id": "done", "time": steps + 1, "operation": "Done", "doneOperation": {"done": True}})
    return KepScenario.model_validate(
        {"apiVersion": KEP_API_VERSION, "kind": "Scenario", "metadata": {"name": "scale"}, "spec": {"events": events}}
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--full-results", action="store_true", help="Also build every per-node plugin result.")
    args = parser.parse_args()
    started = time.perf_counter()
    scenario = build(args.nodes, args.pods, args.steps)
    read = time.perf_counter()
    run = FakeTimeRun(scenario)
    run.run()
    ran = time.perf_counter()
    run.status(plugin_results=args.full_results)
    results = time.perf_counter()
    summary = run.summary()
    print(f"{args.nodes:,} nodes, {args.pods:,} pods over {args.steps} FakeTime steps: phase {run.phase.value}")
    print(f"  scenario validated   {read - started:7.2f} s")
    print(f"  run                  {ran - read:7.2f} s  ({args.pods / (ran - read):,.0f} pods/s)")
    kind = "with" if args.full_results else "without"
    verdicts = run.plugin_verdicts()
    print(f"  ScenarioResult built {results - ran:7.2f} s  ({kind} per-node plugin results, {verdicts:,} of them)")
    print(f"  total                {results - started:7.2f} s")
    peak = summary.allocation_peak.get("cpu", 0)
    print(f"  bound {summary.bound:,} of {summary.pods:,}; cpu allocation peak {peak:.1%}")


if __name__ == "__main__":
    main()
