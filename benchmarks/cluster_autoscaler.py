"""What the cluster autoscaler's template check costs: one scale-up pass, with the scheduler's filters
on a forked snapshot (`SnapshotSimulation`, what runs now) against resources and static predicates
only (`ResourceSimulation`, what ran before #18).

The cluster: `--nodes` nodes over three zones, each holding pods of a zone-spread workload; the
pass: `--pending` pending pods of that workload and six node groups (two per zone, one of them
tainted so the pods cannot use it). Both simulations answer the same question; the snapshot one
also sees the topology spread. Rounds interleave the two; medians are reported, with the ratio.
The pass runs once per scan interval (10 s) while pods wait, so its time per pass is also given
as a share of that interval's simulated time.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any

from skenario.scheduling.clusterautoscaler.config import CaSettings, NodeGroup
from skenario.scheduling.clusterautoscaler.scaleup import ScaleUpStatus, scale_up_status
from skenario.scheduling.clusterautoscaler.simulator import (
    PredicateChecker,
    ResourceSimulation,
    Simulation,
    SnapshotSimulation,
)
from skenario.scheduling.framework import default_profile
from skenario.scheduling.objects import LabelSelector, NodeSpec, PodSpec, TopologySpreadConstraint
from skenario.scheduling.snapshot import ClusterSnapshot
from skenario.scheduling.taints import Taint, TaintEffect

ZONE = "topology.kubernetes.io/zone"
ZONES = ("a", "b", "c")
GIB = 1024**3
SPREAD = (TopologySpreadConstraint(max_skew=5, topology_key=ZONE, label_selector=LabelSelector({"app": "web"})),)


def _pod(name: str) -> PodSpec:
    return PodSpec(name, cpu=500, memory=GIB, labels={"app": "web"}, spread=SPREAD, controlled=True)


def cluster(nodes: int) -> ClusterSnapshot:
    """Nodes of 4 cores over three zones, each with 6 pods of 500m (3 of its 4 cores requested)."""
    snap = ClusterSnapshot(
        [NodeSpec(f"n{i}", cpu=4000, memory=16 * GIB, labels={ZONE: ZONES[i % 3]}) for i in range(nodes)]
    )
    for row in range(nodes):
        for k in range(6):
            snap.assume(_pod(f"p{row}-{k}"), row)
    return snap


def groups() -> list[NodeGroup]:
    out = []
    for zone in ZONES:
        out.append(
            NodeGroup(f"{zone}-small", NodeSpec(f"{zone}-small", cpu=4000, memory=16 * GIB, labels={ZONE: zone}), 0, 50)
        )
        out.append(
            NodeGroup(
                f"{zone}-large", NodeSpec(f"{zone}-large", cpu=16000, memory=64 * GIB, labels={ZONE: zone}), 0, 50
            )
        )
    tainted = NodeSpec(
        "gpu", cpu=8000, memory=32 * GIB, labels={ZONE: "a"}, taints=(Taint("gpu", TaintEffect.NO_SCHEDULE),)
    )
    out[-1] = NodeGroup("gpu", tainted, 0, 50)
    return out


def one_pass(simulation: Simulation, pending: Sequence[PodSpec], node_groups: list[NodeGroup]) -> ScaleUpStatus:
    return scale_up_status(pending, node_groups, {g.name: 0 for g in node_groups}, CaSettings(), simulation)


def measure(nodes: int, pending_count: int, rounds: int) -> dict[str, Any]:
    snap = cluster(nodes)
    node_groups = groups()
    pending = [_pod(f"pending-{i}") for i in range(pending_count)]
    checker = PredicateChecker(default_profile(spread=True).filters)
    makers: dict[str, Callable[[], Simulation]] = {
        "resources only (before #18)": ResourceSimulation,
        "scheduler filters on a fork (now)": lambda: SnapshotSimulation(snap, checker),
    }
    times: dict[str, list[float]] = {name: [] for name in makers}
    outcome: dict[str, Any] = {}
    for _ in range(rounds):
        for name, make in makers.items():
            started = perf_counter()
            status = one_pass(make(), pending, node_groups)
            times[name].append(perf_counter() - started)
            plan = status.plan
            outcome[name] = None if plan is None else {"group": plan.group, "nodes": plan.nodes, "pods": len(plan.pods)}
    medians = {name: statistics.median(t) for name, t in times.items()}
    before, now = medians.values()
    return {
        "nodes": nodes,
        "pods_running": nodes * 6,
        "pending": pending_count,
        "ms_per_pass": {name: m * 1e3 for name, m in medians.items()},
        "ratio": now / before,
        "share_of_scan_interval": now / 10.0,
        "plans": outcome,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pending", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object and nothing else")
    args = parser.parse_args(argv)
    result = measure(args.nodes, args.pending, args.rounds)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{result['nodes']:,} nodes, {result['pods_running']:,} pods running, {result['pending']} pending, 6 groups")
    for name, ms in result["ms_per_pass"].items():
        print(f"  {name:<36} {ms:8.1f} ms per pass   plan {result['plans'][name]}")
    print(f"  ratio {result['ratio']:.1f}x; one pass is {result['share_of_scan_interval']:.2%} of a 10 s scan interval")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
