"""A month of YARN jobs under the Capacity Scheduler, beside the kube-scheduler replay of the same trace.

YARN-1187's promise is a month of trace in minutes. The trace is generated from a seed as an SLS
JSON trace (nothing large is kept in the repository): jobs arriving as a Poisson stream, each with 1
to 20 maps of 1, 2 or 4 GB running 1 to 10 minutes and 0 to 3 reduces of 2 GB running 1 to 5
minutes, from five users into three queues (25%, 25% and 50% of the cluster, each allowed to grow to
all of it); nodes of 128 GB and 32 vcores. Both runs are `python -m skenario schedule TRACE --format
sls --nodes NODES --json` in a fresh process: with `--capacity-scheduler` and with `--fair-scheduler`
(jobs, their AMs, heartbeats and queues; the same three queues, weighted as the capacities), and
without either (each container a pod placed by kube-scheduler's default profile). Reported: wall
time of each, the replay's own (`wallSeconds`), peak RSS, containers per second, and the ratios of
the YARN replays to the pod replay. A fourth run puts Kueue in front of kube-scheduler (`--kueue`:
ClusterQueues in one cohort with the same shares, each job one workload).

    python benchmarks/queues.py                 # a month: 43,200 jobs on 100 nodes (a few minutes)
    python benchmarks/queues.py --quick --json  # a day on 20 nodes, for the tests
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CAPACITY = ROOT / "examples" / "traces" / "sls" / "capacity-scheduler.xml"
# The same three queues for the Fair Scheduler: weights in the Capacity Scheduler's proportions, no caps.
FAIR = """<?xml version="1.0"?>
<allocations>
  <queue name="sls_queue_1"><weight>1</weight></queue>
  <queue name="sls_queue_2"><weight>1</weight></queue>
  <queue name="sls_queue_3"><weight>2</weight></queue>
</allocations>
"""
QUEUES = ("sls_queue_1", "sls_queue_2", "sls_queue_3")
DAY_S = 86_400
MONTH = {"days": 30, "nodes": 100, "gap_s": 60.0}
QUICK = {"days": 1, "nodes": 20, "gap_s": 240.0}
# The same three queues for Kueue: ClusterQueues in one cohort, quotas in the same proportions of the
# cluster's CPUs and memory (nodes of 32 vcores and 128 GB), each SLS job one workload.
KUEUE_QUEUE = """apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  namespaceSelector: {{}}
  cohort: all
  preemption: {{reclaimWithinCohort: Any}}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources:
      - {{name: cpu, nominalQuota: {cpu}}}
      - {{name: memory, nominalQuota: {memory}Gi}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: {name}, namespace: default}}
spec: {{clusterQueue: {name}}}
"""


def kueue_manifests(nodes: int) -> str:
    shares = dict(zip(QUEUES, (0.25, 0.25, 0.5), strict=True))
    flavor = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: default}\n"
    queues = [
        KUEUE_QUEUE.format(name=q, cpu=int(32 * nodes * f), memory=int(128 * nodes * f)) for q, f in shares.items()
    ]
    return "---\n".join([flavor, *queues])


def generate(directory: Path, days: int, nodes: int, gap_s: float, seed: int = 0) -> Path:
    """Write `trace.json` (an SLS trace) and `nodes.json` (an SLS node file) into `directory`."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    starts = np.cumsum(rng.exponential(gap_s, int(days * DAY_S / gap_s * 1.2)))
    starts = starts[starts < days * DAY_S]
    with (directory / "trace.json").open("w", encoding="utf-8") as out:
        for k, start in enumerate(starts):
            maps, reduces = int(rng.integers(1, 21)), int(rng.integers(0, 4))
            tasks = [
                {
                    "container.type": "map",
                    "container.priority": 20,
                    "container.memory-mb": int(rng.choice([1024, 2048, 4096])),
                    "container.duration.ms": int(rng.uniform(60, 600) * 1000),
                }
                for _ in range(maps)
            ]
            tasks += [
                {
                    "container.type": "reduce",
                    "container.priority": 10,
                    "container.memory-mb": 2048,
                    "container.duration.ms": int(rng.uniform(60, 300) * 1000),
                }
                for _ in range(reduces)
            ]
            job = {
                "job.id": f"job_{k}",
                "job.start.ms": int(start * 1000),
                "job.queue.name": QUEUES[int(rng.integers(0, len(QUEUES)))],
                "job.user": f"user{int(rng.integers(0, 5))}",
                "am.type": "mapreduce",
                "job.tasks": tasks,
            }
            out.write(json.dumps(job) + "\n")
    rack = {"rack": "rack0", "nodes": [{"node": f"node{i}", "memory-mb": 131072, "vcores": 32} for i in range(nodes)]}
    (directory / "nodes.json").write_text(json.dumps(rack), encoding="utf-8")
    return directory


def _child(command: list[str]) -> tuple[dict[str, Any], float, float]:
    """A command in a fresh process: its JSON output, wall time and peak RSS in MiB. Each replay is kept,
    as a user's is, in a run store of its own that goes when the command is done."""
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory() as store,
        tempfile.TemporaryFile() as stdout,
        tempfile.TemporaryFile() as stderr,
    ):
        env = dict(os.environ, SKENARIO_STORE=store)
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        stdout.seek(0)
        stderr.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{stderr.read().decode()}")
        return json.loads(stdout.read()), wall, usage.ru_maxrss / 1024


def measure(trace: Path, nodes: int) -> dict[str, Any]:
    base = [sys.executable, "-m", "skenario", "schedule", str(trace / "trace.json"), "--format", "sls"]
    base += ["--nodes", str(trace / "nodes.json"), "--json"]
    fair = trace / "fair-scheduler.xml"
    fair.write_text(FAIR, encoding="utf-8")
    kueue = trace / "kueue.yaml"
    kueue.write_text(kueue_manifests(nodes), encoding="utf-8")
    runs: dict[str, Any] = {}
    choices = (
        ("capacity", ["--capacity-scheduler", str(CAPACITY)]),
        ("fair", ["--fair-scheduler", str(fair)]),
        ("kueue", ["--kueue", str(kueue)]),
    )
    for name, extra in (*choices, ("kube-scheduler", [])):
        summary, wall, rss = _child(base + extra)
        containers = summary["pods"] if name in ("kueue", "kube-scheduler") else summary["containers"]
        runs[name] = {
            "wall_s": wall,
            "replay_s": summary["wallSeconds"],
            "peak_rss_mib": rss,
            "containers": containers,
            "containers_per_s": containers / summary["wallSeconds"],
            "summary": {k: v for k, v in summary.items() if k not in ("queues", "trace", "wallSeconds", "kueue")},
        }
    runs["capacity_over_kube_scheduler"] = runs["capacity"]["wall_s"] / runs["kube-scheduler"]["wall_s"]
    runs["fair_over_kube_scheduler"] = runs["fair"]["wall_s"] / runs["kube-scheduler"]["wall_s"]
    runs["kueue_over_kube_scheduler"] = runs["kueue"]["wall_s"] / runs["kube-scheduler"]["wall_s"]
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="A day on 20 nodes (seconds, for the tests).")
    parser.add_argument("--json", action="store_true", help="One JSON object on stdout.")
    args = parser.parse_args()
    size = QUICK if args.quick else MONTH
    with tempfile.TemporaryDirectory() as work:
        trace = generate(Path(work), int(size["days"]), int(size["nodes"]), float(size["gap_s"]))
        jobs = sum(1 for _ in (trace / "trace.json").open(encoding="utf-8"))
        result = {"days": size["days"], "nodes": size["nodes"], "jobs": jobs, **measure(trace, int(size["nodes"]))}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['days']} days, {jobs:,} jobs on {size['nodes']} nodes")
    for name in ("capacity", "fair", "kueue", "kube-scheduler"):
        run = result[name]
        print(
            f"  {name:15s} {run['wall_s']:7.1f} s (replay {run['replay_s']:.1f} s), {run['peak_rss_mib']:.0f} MiB, "
            f"{run['containers']:,} containers, {run['containers_per_s']:,.0f} per s"
        )
    print(f"  Capacity Scheduler / kube-scheduler replay: {result['capacity_over_kube_scheduler']:.2f}x")
    print(f"  Fair Scheduler / kube-scheduler replay: {result['fair_over_kube_scheduler']:.2f}x")
    print(f"  Kueue and kube-scheduler / kube-scheduler alone: {result['kueue_over_kube_scheduler']:.2f}x")


if __name__ == "__main__":
    main()
