"""Kubernetes' scale envelope: 150,000 pods on 5,000 nodes through `skenario schedule`, beside the code before issue 32.

The trace is generated from a seed (nothing large is kept in the repository), as issue 32 describes
the one a new user tried: pods asking for 250m to 2 CPUs (a whole number of 250m, uniform) and
512 MiB per 250m, running 10 minutes to 2 hours (uniform), arriving as a Poisson stream; nodes of
32 CPUs and 128 GiB. `generate` writes it as skenario's pod and node CSVs.

Runs, each a fresh `python -m skenario schedule PODS --nodes NODES --json --pods FILE --no-store` process whose
peak resident memory is its own (`os.wait4`'s `ru_maxrss`, the interpreter, numpy and pandas
included):

- ``envelope``: 150,000 pods at 50/s on 5,000 nodes (the cluster reaches 90% of its CPU requested);
- ``first-20k``: the first 20,000 pods of the same trace on the same nodes, the reference for memory
  that does not grow with history;
- ``nodes-500`` and ``nodes-50000``: the trace scaled to 500 nodes (15,000 pods at 5/s: the same
  load per node) and to 50,000 nodes (150,000 pods at 500/s), for the cost of a pod as the cluster
  grows;
- ``results``: the envelope with ``--results`` for the pods named ``pod-0000*`` (every plugin's
  verdict for the pods a user asks about), the rest of the attempts summarised in the file.

And a service scenario as issue 32 states it (``service-N``): 2 minutes of 500 requests/s (Poisson)
on 100 replicas of 500m, each request 20 ms of CPU, on a cluster of N idle-ish nodes of 4 CPUs, run
with ``python -m skenario run FILE --no-store --json --force`` (``--force``: 100,000 nodes is past
the preflight's limit) at N = 1,000, 10,000 and 100,000. Reported: the run's own wall time
(``wall_s``), the command's, peak RSS, and the ratios 10,000 and 100,000 nodes over 1,000.

With ``--previous REF`` each run is repeated with the code of REF (default: the commit before
issue 32), checked out with ``git worktree`` into a temporary directory and put first on
PYTHONPATH; ``--previous-pods N`` keeps those runs to the first N pods of each trace (the old code
kept every attempt's plugin results: the envelope took 14 GB), and the current code is run on the
same N pods for the ratio; ``--previous-runs`` names the runs repeated (by default ``nodes-500`` and
``envelope``: the old code builds a 50,000-node snapshot in quadratic time). The bindings of every
side-by-side pair are compared (`bindings_digest`: each pod's node, binding time, end and finish).

Reported per run: wall time of the whole command, the replay's own (`wallSeconds`: reading,
scheduling, summary), peak RSS, and µs of replay per pod; ratios: µs per pod at 5,000 and 50,000
nodes over 500; the envelope's peak RSS over the first 20,000 pods'; the previous code's wall time
and peak RSS over the current code's on the same pods. Absolute times drift 10-25% on a busy
machine; ratios within one run much less.

    python benchmarks/scale.py                   # every run, current code (about 5 minutes)
    python benchmarks/scale.py --previous        # and the code before issue 32, on 20,000 pods
    python benchmarks/scale.py --quick --json    # small sizes, one JSON object on stdout
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PREVIOUS_REF = "cd78f32"  # the last commit before issue 32 (its CHANGES entry: issue 31 done)
SEED = 0
MIB = 1024 * 1024


@dataclass(frozen=True)
class Size:
    name: str
    nodes: int
    pods: int
    rate: float  # pods per second
    first: int | None = None  # keep only the first pods of the trace
    results_for: str | None = None  # --results-for pattern


FULL = (
    Size("nodes-500", 500, 15_000, 5.0),
    Size("first-20k", 5_000, 150_000, 50.0, first=20_000),
    Size("envelope", 5_000, 150_000, 50.0),
    Size("nodes-50000", 50_000, 150_000, 500.0),
    Size("results", 5_000, 150_000, 50.0, results_for="pod-0000*"),
)
QUICK = (
    Size("nodes-500", 500, 1_000, 5.0),
    Size("first-20k", 1_000, 2_000, 10.0, first=500),
    Size("envelope", 1_000, 2_000, 10.0),
    Size("nodes-50000", 5_000, 2_000, 50.0),
    Size("results", 1_000, 2_000, 10.0, results_for="pod-0000*"),
)


def generate(
    directory: Path,
    pods: int,
    nodes: int,
    rate: float,
    seed: int = SEED,
    *,
    high_priority: float = 0.0,
    node_cpus: int = 32,
) -> Path:
    """Write `pods.csv` and `nodes.csv` of the issue's trace into `directory`; returns it.

    `high_priority` is the share of pods given priority 1 (the others 0), for preemption; nodes have
    `node_cpus` CPUs and 4 GiB of memory per CPU.
    """
    rng = np.random.default_rng(seed)
    created = np.cumsum(rng.exponential(1 / rate, pods))
    quarters = rng.integers(1, 9, pods)  # 250m .. 2 CPUs
    durations = rng.uniform(600, 7200, pods)
    priorities = (rng.random(pods) < high_priority).astype(int)
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / "pods.csv").open("w", encoding="utf-8") as out:
        out.write("name,created,cpu,memory,duration,priority\n")
        for i in range(pods):
            q = int(quarters[i])
            out.write(f"pod-{i:06d},{created[i]:.3f},{q * 250}m,{q * 512}Mi,{durations[i]:.3f},{priorities[i]}\n")
    with (directory / "nodes.csv").open("w", encoding="utf-8") as out:
        out.write("name,cpu,memory\n")
        for i in range(nodes):
            out.write(f"node-{i:05d},{node_cpus},{4 * node_cpus}Gi\n")
    return directory


def first_pods(source: Path, target: Path, count: int) -> Path:
    """`source`'s trace with only its first `count` pods (the rows are in arrival order)."""
    target.mkdir(parents=True, exist_ok=True)
    with (source / "pods.csv").open(encoding="utf-8") as inp, (target / "pods.csv").open("w", encoding="utf-8") as out:
        for k, line in enumerate(inp):
            if k > count:
                break
            out.write(line)
    (target / "nodes.csv").write_text((source / "nodes.csv").read_text(encoding="utf-8"), encoding="utf-8")
    return target


def bindings_digest(pods_csv: Path) -> str:
    """A digest of the decisions in a `--pods` file: each pod's node, binding time, end and finish time."""
    with pods_csv.open(newline="", encoding="utf-8") as handle:
        rows = sorted((r["pod"], r["node"], r["bound_s"], r["end"], r["finished_s"]) for r in csv.DictReader(handle))
    return hashlib.sha256("\n".join(",".join(row) for row in rows).encode()).hexdigest()[:16]


SERVICE_NODES = (1_000, 10_000, 100_000)
QUICK_SERVICE_NODES = (100, 1_000, 3_000)
SERVICE = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {{name: service-{nodes}}}
spec:
  duration: 2m
  seed: 1
  workload:
    replicas: 100
    resources: {{requests: {{cpu: 500m, memory: 256Mi}}}}
    request: {{cpuTime: 20ms}}
  traffic: {{type: poisson, rate: 500/s}}
  cluster:
    nodes:
      - {{name: worker, count: {nodes}, cpu: 4, memory: 16Gi}}
"""


def _child(command: list[str], python_path: str | None) -> tuple[bytes, float, float]:
    """Run a command in a fresh process: its stdout, wall time and peak RSS in MiB."""
    env = dict(os.environ)
    if python_path is not None:
        env["PYTHONPATH"] = python_path
    started = time.perf_counter()
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        # Reaped here with wait4, not by Popen, for the child's own resource usage (its peak RSS).
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        stdout.seek(0)
        stderr.seek(0)
        output, errors = stdout.read(), stderr.read()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{errors.decode()}")
    return output, wall, usage.ru_maxrss / 1024  # KiB on Linux


def run_service(nodes: int, work: Path, python_path: str | None) -> dict[str, Any]:
    """The service scenario on `nodes` nodes, in a fresh process."""
    scenario = work / f"service-{nodes}.yaml"
    scenario.write_text(SERVICE.format(nodes=nodes), encoding="utf-8")
    command = [sys.executable, "-m", "skenario", "run", str(scenario), "--no-store", "--json", "--force"]
    output, wall, rss = _child(command, python_path)
    summary = json.loads(output)
    return {"run_s": summary["wall_s"], "wall_s": wall, "peak_rss_mib": rss, "digest": summary["digest"]}


def knows_no_store(source: Path) -> bool:
    """Whether the `skenario schedule` of the source at `source` can keep no replay (`--no-store`)."""
    schedule = source / "skenario" / "cli" / "schedule.py"
    return schedule.exists() and '"--no-store"' in schedule.read_text(encoding="utf-8")


def run_schedule(trace: Path, out: Path, python_path: str | None, results_for: str | None) -> dict[str, Any]:
    """One `skenario schedule` in a fresh process: its JSON summary, wall time and peak RSS."""
    command = [
        sys.executable,
        "-m",
        "skenario",
        "schedule",
        str(trace / "pods.csv"),
        "--nodes",
        str(trace / "nodes.csv"),
    ]
    command += ["--json", "--pods", str(out / "pods.csv")]
    if python_path is None or knows_no_store(Path(python_path)):  # the code before issue 32 keeps no replay
        command.append("--no-store")  # neither does this one, nor a later one, to compare
    if results_for is not None:
        command += ["--results", str(out / "results.json"), "--results-for", results_for]
    output, wall, rss = _child(command, python_path)
    summary = json.loads(output)
    return {
        "wall_s": wall,
        "replay_s": summary["wallSeconds"],
        "peak_rss_mib": rss,
        "pods": summary["pods"],
        "bound": summary["bound"],
        "unschedulable_attempts": summary["unschedulableAttempts"],
        "us_per_pod": summary["wallSeconds"] / max(summary["pods"], 1) * 1e6,
        "digest": bindings_digest(out / "pods.csv"),
        "results_mib": (out / "results.json").stat().st_size / MIB if results_for is not None else None,
    }


# -- the code before the issue -------------------------------------------------------------------


def checkout(ref: str, into: Path) -> Path | None:
    """The `src` directory of `ref` checked out into `into` with git worktree, or None if it cannot be."""
    try:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), ref],
            check=True,
            capture_output=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return into / "src"


def remove_checkout(into: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(into)], capture_output=True)


# -- the runs ------------------------------------------------------------------------------------


def measure(
    sizes: Sequence[Size], work: Path, previous: Path | None, previous_pods: int, previous_runs: Sequence[str]
) -> dict[str, Any]:
    traces: dict[tuple[int, int, float], Path] = {}
    runs: dict[str, Any] = {}
    for size in sizes:
        key = (size.pods, size.nodes, size.rate)
        if key not in traces:
            traces[key] = generate(work / f"trace-{size.pods}-{size.nodes}", size.pods, size.nodes, size.rate)
        trace = traces[key]
        if size.first is not None:
            trace = first_pods(trace, work / f"{size.name}-trace", size.first)
        out = work / f"{size.name}-current"
        out.mkdir()
        runs[size.name] = {"size": size.__dict__, "current": run_schedule(trace, out, None, size.results_for)}
        if previous is not None and size.name in previous_runs:
            pods = min(previous_pods, size.first or size.pods)
            head = first_pods(trace, work / f"{size.name}-head", pods)
            same, old = work / f"{size.name}-same", work / f"{size.name}-previous"
            same.mkdir()
            old.mkdir()
            now = run_schedule(head, same, None, None)
            before = run_schedule(head, old, str(previous), None)
            runs[size.name]["side_by_side"] = {
                "pods": pods,
                "current": now,
                "previous": before,
                "x_wall": before["replay_s"] / now["replay_s"],
                "x_peak_rss": before["peak_rss_mib"] / now["peak_rss_mib"],
                "same_bindings": before["digest"] == now["digest"],
            }
        print(f"{size.name}: {runs[size.name]['current']['replay_s']:.1f} s", file=sys.stderr)
    return runs


def measure_service(counts: Sequence[int], work: Path, previous: Path | None, previous_nodes: int) -> dict[str, Any]:
    service: dict[str, Any] = {}
    for nodes in counts:
        entry: dict[str, Any] = {"nodes": nodes, "current": run_service(nodes, work, None)}
        if previous is not None and nodes <= previous_nodes:
            before = run_service(nodes, work, str(previous))
            entry["previous"] = before
            entry["x_run"] = before["run_s"] / entry["current"]["run_s"]
            entry["same_digest"] = before["digest"] == entry["current"]["digest"]
        service[f"service-{nodes}"] = entry
        print(f"service-{nodes}: {entry['current']['run_s']:.2f} s", file=sys.stderr)
    return service


def ratios(runs: dict[str, Any], service: dict[str, Any]) -> dict[str, float]:
    cost = {name: run["current"]["us_per_pod"] for name, run in runs.items()}
    rss = {name: run["current"]["peak_rss_mib"] for name, run in runs.items()}
    run_s = [entry["current"]["run_s"] for entry in service.values()]
    return {
        "per_pod_5000_over_500": cost["envelope"] / cost["nodes-500"],
        "per_pod_50000_over_500": cost["nodes-50000"] / cost["nodes-500"],
        "peak_rss_envelope_over_first_20k": rss["envelope"] / rss["first-20k"],
        "service_10x_nodes": run_s[1] / run_s[0],
        "service_100x_nodes": run_s[2] / run_s[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Small sizes (seconds, for the tests).")
    parser.add_argument("--json", action="store_true", help="One JSON object on stdout.")
    parser.add_argument(
        "--previous", nargs="?", const=PREVIOUS_REF, default=None, metavar="REF", help="Also run the code of REF."
    )
    parser.add_argument("--previous-pods", type=int, default=20_000, help="Pods of each side-by-side run.")
    parser.add_argument(
        "--previous-runs",
        nargs="+",
        default=["nodes-500", "envelope"],
        help="Which runs to repeat with the previous code (its 50,000-node snapshot takes minutes to build).",
    )
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    with tempfile.TemporaryDirectory(prefix="skenario-scale-") as tmp:
        work = Path(tmp)
        previous = None
        if args.previous is not None:
            previous = checkout(args.previous, work / "previous")
            if previous is None:
                print(f"the code of {args.previous} could not be checked out: current code only", file=sys.stderr)
        try:
            runs = measure(sizes, work, previous, args.previous_pods, args.previous_runs)
            counts = QUICK_SERVICE_NODES if args.quick else SERVICE_NODES
            service = measure_service(counts, work, previous, counts[1])
        finally:
            if previous is not None:
                remove_checkout(work / "previous")
    result = {
        "quick": args.quick,
        "previous": args.previous,
        "runs": runs,
        "service": service,
        "ratios": ratios(runs, service),
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return
    _print(result)


def _print(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="skenario schedule at scale (current code)")
    for column in ("run", "nodes", "pods", "replay s", "wall s", "peak RSS MiB", "µs / pod", "results MiB"):
        table.add_column(column, justify="right")
    for name, run in result["runs"].items():
        now, size = run["current"], run["size"]
        results = "" if now["results_mib"] is None else f"{now['results_mib']:,.0f}"
        table.add_row(
            name, f"{size['nodes']:,}", f"{now['pods']:,}", f"{now['replay_s']:.1f}", f"{now['wall_s']:.1f}",
            f"{now['peak_rss_mib']:,.0f}", f"{now['us_per_pod']:.0f}", results,
        )  # fmt: skip
    console = Console()
    console.print(table)
    for what, value in result["ratios"].items():
        console.print(f"{what}: {value:.2f}x")
    side = Table(title=f"side by side with {result['previous']}")
    for column in ("run", "pods", "replay s now", "before", "x wall", "RSS MiB now", "before", "x RSS", "same"):
        side.add_column(column, justify="right")
    for name, run in result["runs"].items():
        pair = run.get("side_by_side")
        if pair is None:
            continue
        now, before = pair["current"], pair["previous"]
        side.add_row(
            name, f"{pair['pods']:,}", f"{now['replay_s']:.1f}", f"{before['replay_s']:.1f}", f"{pair['x_wall']:.2f}",
            f"{now['peak_rss_mib']:,.0f}", f"{before['peak_rss_mib']:,.0f}", f"{pair['x_peak_rss']:.2f}",
            "yes" if pair["same_bindings"] else "NO",
        )  # fmt: skip
    if result["previous"] is not None:
        console.print(side)
    service = Table(title="the 2-minute, 100-replica service scenario on idle nodes")
    for column in ("nodes", "run s", "wall s", "peak RSS MiB", "run s before", "x run", "same digest"):
        service.add_column(column, justify="right")
    for entry in result["service"].values():
        now, before = entry["current"], entry.get("previous")
        service.add_row(
            f"{entry['nodes']:,}", f"{now['run_s']:.2f}", f"{now['wall_s']:.2f}", f"{now['peak_rss_mib']:,.0f}",
            "" if before is None else f"{before['run_s']:.2f}", "" if before is None else f"{entry['x_run']:.2f}",
            "" if before is None else ("yes" if entry["same_digest"] else "NO"),
        )  # fmt: skip
    console.print(service)


if __name__ == "__main__":
    main()
