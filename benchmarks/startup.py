"""What starting the command line costs: CPU time of `skenario --help`, `--version` and `run --help` (issue #29).

Issue #29 asks that `skenario --help` and `skenario --version` take under 0.3 s of CPU, where they took
over 2 s when every command module (and with them numpy, pandas, pydantic and the simulator) was
imported at start. The commands now load lazily (`skenario.cli.Commands`): listing them imports none.

What is measured: each command run as `python -m skenario ARGS` in a fresh interpreter, with this
checkout's `src` first on PYTHONPATH, its CPU time (user + system, from `resource.getrusage(
RUSAGE_CHILDREN)` around the child: interpreter start-up included, as a user pays it). With
`--baseline SRC` (the `src` folder of another checkout, or the checkout itself, as in
`benchmarks/reference.py`), the same commands run with that skenario first on PYTHONPATH. Rounds
interleave the runs; the median CPU of each is reported, and our median ÷ the baseline's.

Verdict: `--help` and `--version` each under `LIMIT_S` of CPU (median). `run --help` has to import
its command (the simulator's modules), so it is shown for comparison, not held to the limit.

Usage (from the repository root, with the virtualenv active)::

    python benchmarks/startup.py                              # 9 rounds, a table
    python benchmarks/startup.py --baseline /tmp/old/src      # and the ratio to another checkout
    python benchmarks/startup.py --rounds 3 --json            # one JSON object on stdout, nothing else
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"
COMMANDS: dict[str, tuple[str, ...]] = {
    "--help": ("--help",),
    "--version": ("--version",),
    "run --help": ("run", "--help"),
}
LIMITED = ("--help", "--version")
LIMIT_S = 0.3


def package_root(source: Path) -> Path:
    """The folder holding the `skenario` package: `source` itself, or its `src` (a checkout's root)."""
    if (source / "skenario").is_dir():
        return source
    if (source / "src" / "skenario").is_dir():
        return source / "src"
    raise SystemExit(f"no skenario package in {source} or {source / 'src'}")


def cpu_of(args: Sequence[str], root: Path) -> float:
    """User + system CPU seconds of `python -m skenario ARGS` with `root` first on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "80"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    finished = subprocess.run(
        [sys.executable, "-m", "skenario", *args], capture_output=True, text=True, check=False, env=env
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if finished.returncode != 0:
        raise SystemExit(f"skenario {' '.join(args)} failed ({finished.returncode}):\n{finished.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(rounds: int, baseline: Path | None) -> dict[str, dict[str, list[float]]]:
    """CPU seconds of every command, ours and (with a baseline) the baseline's, interleaved by round."""
    trees = {"ours": SRC} | ({} if baseline is None else {"baseline": baseline})
    times: dict[str, dict[str, list[float]]] = {tree: {name: [] for name in COMMANDS} for tree in trees}
    for _ in range(rounds):
        for name, args in COMMANDS.items():
            for tree, root in trees.items():
                times[tree][name].append(cpu_of(args, root))
    return times


def summarise(times: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    result: dict[str, Any] = {"limit_s": LIMIT_S, "commands": {}}
    for name in COMMANDS:
        row: dict[str, Any] = {"cpu_s": statistics.median(times["ours"][name])}
        if "baseline" in times:
            row["baseline_cpu_s"] = statistics.median(times["baseline"][name])
            row["x_baseline"] = row["cpu_s"] / row["baseline_cpu_s"]
        result["commands"][name] = row
    result["under_limit"] = all(result["commands"][name]["cpu_s"] < LIMIT_S for name in LIMITED)
    return result


def print_table(summary: dict[str, Any], rounds: int) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"CPU time to start (median of {rounds} runs, user + system)")
    table.add_column("command")
    table.add_column("CPU s", justify="right")
    table.add_column("baseline CPU s", justify="right")
    table.add_column("× baseline", justify="right")
    for name, row in summary["commands"].items():
        base = row.get("baseline_cpu_s")
        ratio = row.get("x_baseline")
        table.add_row(
            f"skenario {name}",
            f"{row['cpu_s']:.3f}",
            "-" if base is None else f"{base:.3f}",
            "-" if ratio is None else f"{ratio:.3f}",
        )
    console = Console()
    console.print(table)
    verdict = "holds" if summary["under_limit"] else "FAILS"
    console.print(f"--help and --version under {LIMIT_S} s of CPU: {verdict}", highlight=False)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=9, help="runs of each command (default 9)")
    parser.add_argument("--baseline", type=Path, default=None, metavar="SRC", help="another checkout to compare")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    baseline = None if args.baseline is None else package_root(args.baseline)
    summary = summarise(measure(args.rounds, baseline))
    if args.json:
        print(json.dumps(summary))
    else:
        print_table(summary, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
