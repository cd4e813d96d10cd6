"""What writing results costs: the reference scenario with and without the run store (issue #5).

Issue #5 asks that writing results cost at most 10% of a run's wall time on the reference scenario
of issue #3 (`benchmarks/reference.yaml`: 1 h simulated, about a million requests, 40 replicas,
recording every 10 s). The scenario is built as `benchmarks/reference.py` builds it (the duration
replaced by `model_copy`), for 1 h and for 4 h, and run the way `skenario run` runs it: through
`Simulation`, in `STEPS` = 100 stretches (`simulation.run(steps=100, progress=...)`).

What is measured, each run in a fresh interpreter (`--one KIND --hours H` prints one JSON line):

- `bare`: `Simulation(...)` then `run(steps=100, progress=noop)`: the run with no store.
- `store`: the same, plus `RunStore(folder).begin(simulation, file)` before the run, `writer.flush()`
  at each of the 100 steps (one batch, one SQLite transaction each) and `writer.finish(wall)` at
  the end, into a fresh temporary folder (on the file system of `--dir`, the system's temporary
  folder by default). `begin`, every `flush` and `finish` are also timed alone with perf_counter.

Wall time runs from just before `Simulation(...)` is built to just after the run (and `finish`)
returns; interpreter start-up, imports and the checks afterwards are excluded. After the timed part
the store run counts the rows it wrote (series, replica_series, timeline, replicas, ignored), loads
the run back and compares it with the recorder and the run's digest.

Rounds interleave the runs, the order rotated each round; ratios are taken within a round and the
median and spread (min–max) over rounds reported. Two measures of the cost, for 1 h and 4 h:

- end to end: overhead = (store wall ÷ bare wall of the same round) − 1;
- direct: share = (time inside flush + finish) ÷ store wall (begin is reported beside it).

Verdict: the 10% budget holds on the reference scenario if both medians at 1 h are ≤ 10%. The 4 h
rows show how the cost grows with the run: it stays within proportion if the share at 4 h is at
most the share at 1 h (the store time at most 4× the 1 h one; with 100 flushes either way, a
fixed cost per flush makes it grow less). The end-to-end overhead is the difference of two noisy walls (a few % between
runs on a busy machine); the share is measured inside one run and is the steadier of the two. Most
of the time in a flush is SQLite waiting for the disk (the commit's fsync, and the WAL checkpoint
when the flush's connection closes), so it depends on the disk and on what else writes to it;
`--dir /dev/shm` (a tmpfs) leaves the CPU part alone.

Usage (from the repository root, with the virtualenv active)::

    python benchmarks/store.py                    # 5 rounds of 1 h and 4 h, rich table (about 7 min)
    python benchmarks/store.py --rounds 3 --json  # one JSON object on stdout, nothing else
    python benchmarks/store.py --quick            # 3 min and 12 min simulated, 1 round (the tests' mode)
    python benchmarks/store.py --one store --hours 1   # one timed run in this process, one JSON line
    python benchmarks/store.py --baseline ../old/src   # also the 1 h store run with another version's package

With `--baseline SRC` each round also runs the 1 h `store` run with the skenario package in SRC (say
a checkout from before a change: `git worktree add ../old <commit>`), and the report adds the ratio
of this version's store wall (and time in flush + finish) to the baseline's, taken within rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from time import perf_counter
from typing import Any

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "reference.yaml"
STEPS = 100
"""As `skenario run` (src/skenario/cli/run.py): the run stops 100 times, and writes a batch each time."""
BUDGET = 0.10
KINDS = ("bare", "store")
BASELINE = "baseline"
"""The `store` run with another version's package (`--baseline SRC`), at the first length only."""
HOURS = (1.0, 4.0)
QUICK_HOURS = (0.05, 0.2)
TABLES = ("series", "replica_series", "timeline", "replicas", "ignored")


def _peak_rss_mb() -> float | None:
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def reference_scenario(hours: float) -> Any:
    """The reference scenario for `hours` of simulated time, built as benchmarks/reference.py builds it."""
    from skenario.core.time import HOUR
    from skenario.scenario.loader import load_scenario

    scenario = load_scenario(SCENARIO)
    return scenario.model_copy(update={"spec": scenario.spec.model_copy(update={"duration": round(hours * HOUR)})})


def _noop(now: int) -> None:
    pass


def run_once(kind: str, hours: float, folder: str | Path | None = None) -> dict[str, Any]:
    """One timed run, `bare` or `store`, then (untimed) what it wrote and whether it loads back whole."""
    from skenario.results.store import RunStore
    from skenario.scenario.simulation import Simulation

    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    scenario = reference_scenario(hours)
    text = SCENARIO.read_text()  # what the CLI keeps with the run: the file as written
    with tempfile.TemporaryDirectory(prefix="skenario-store-bench-", dir=folder) as tmp:
        store = RunStore(tmp)
        flushes: list[float] = []
        begin_s = finish_s = 0.0
        started = perf_counter()
        simulation = Simulation(scenario, base_dir=HERE, scenario_text=text)
        if kind == "bare":
            simulation.run(steps=STEPS, progress=_noop)
        else:
            mark = perf_counter()
            writer = store.begin(simulation, str(SCENARIO))
            begin_s = perf_counter() - mark
            run_started = perf_counter()

            def step(now: int) -> None:
                mark = perf_counter()
                writer.flush()
                flushes.append(perf_counter() - mark)

            simulation.run(steps=STEPS, progress=step)
            mark = perf_counter()
            writer.finish(mark - run_started)
            finish_s = perf_counter() - mark
        wall = perf_counter() - started
        peak = _peak_rss_mb()

        summary = simulation.summary()
        recorder = simulation.recorder
        record: dict[str, Any] = {
            "kind": kind,
            "hours": hours,
            "wall_s": wall,
            "requests": summary.requests_arrived,
            "digest": summary.digest,
            "phase": simulation.phase.value,
            "recorder_rows": {
                "series": len(recorder),
                "replica_series": len(recorder.replica_columns["time_ns"]),
                "timeline": len(simulation.timeline),
                "replicas": len(recorder.lifecycles()),
                "ignored": len(simulation.env.ignored),
            },
            "peak_rss_mb": peak,
        }
        if kind == "store":
            record |= {
                "begin_s": begin_s,
                "flush_s": sum(flushes),
                "finish_s": finish_s,
                "flushes": len(flushes),
                "flush_max_s": max(flushes, default=0.0),
                **_what_was_written(store, writer.run_id),
            }
    return record


def _what_was_written(store: Any, run_id: int) -> dict[str, Any]:
    """Rows per table, bytes on disk, and the run as the store gives it back."""
    with closing(sqlite3.connect(store.path)) as db:
        rows = {
            table: db.execute(f"SELECT COUNT(*) FROM {table} WHERE run_id = ?", (run_id,)).fetchone()[0]
            for table in TABLES
        }
    files = [store.path, *store.path.parent.glob(store.path.name + "-*")]  # with the WAL, if still there
    loaded = store.load(run_id)
    return {
        "stored_rows": rows,
        "store_bytes": sum(path.stat().st_size for path in files if path.exists()),
        "loaded": {
            "series": len(loaded.series),
            "replica_series": len(loaded.replica_series),
            "timeline": len(loaded.timeline),
            "digest": loaded.digest,
            "phase": loaded.phase,
            "simulated_ns": loaded.simulated_ns,
        },
    }


# -- the protocol ------------------------------------------------------------------------------------


def run_name(kind: str, hours: float) -> str:
    return f"{kind}_{hours:g}h"


def run_in_subprocess(
    kind: str, hours: float, folder: str | None = None, baseline: Path | None = None
) -> dict[str, Any]:
    env = None
    if kind == BASELINE:
        assert baseline is not None
        kind, env = "store", {**os.environ, "PYTHONPATH": str(baseline)}
    command = [sys.executable, str(Path(__file__).resolve()), "--one", kind, "--hours", repr(hours)]
    if folder is not None:
        command += ["--dir", folder]
    finished = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if finished.returncode != 0:
        raise RuntimeError(f"{run_name(kind, hours)} failed (exit {finished.returncode}):\n{finished.stderr}")
    record: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return record


def rotated(names: Sequence[Any], index: int) -> list[Any]:
    shift = index % len(names)
    return [*names[shift:], *names[:shift]]


def measure(
    hours: Sequence[float],
    rounds: int,
    folder: str | None,
    progress: Callable[[str], None] | None,
    baseline: Path | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Interleaved rounds of fresh-process runs, the order rotated each round."""
    plan = [(kind, h) for h in hours for kind in KINDS]
    if baseline is not None:
        plan.append((BASELINE, hours[0]))
    runs: dict[str, list[dict[str, Any]]] = {run_name(kind, h): [] for kind, h in plan}
    for index in range(rounds):
        for kind, h in rotated(plan, index):
            record = run_in_subprocess(kind, h, folder, baseline)
            runs[run_name(kind, h)].append(record)
            if progress is not None:
                progress(f"round {index + 1}/{rounds}: {run_name(kind, h):<10} {record['wall_s']:7.2f} s")
    return runs


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def store_time(record: dict[str, Any]) -> float:
    """Time inside flush and finish."""
    return float(record["flush_s"] + record["finish_s"])


def summarise(runs: dict[str, list[dict[str, Any]]], hours: Sequence[float]) -> dict[str, Any]:
    variants: dict[str, Any] = {}
    for h in hours:
        bare, store = runs[run_name("bare", h)], runs[run_name("store", h)]
        first = store[0]
        variants[f"{h:g}h"] = {
            "hours": h,
            "requests": first["requests"],
            "bare_wall_s": _spread([r["wall_s"] for r in bare]),
            "store_wall_s": _spread([r["wall_s"] for r in store]),
            "overhead": _spread([s["wall_s"] / b["wall_s"] - 1 for s, b in zip(store, bare, strict=True)]),
            "flush_finish_s": _spread([store_time(r) for r in store]),
            "share": _spread([store_time(r) / r["wall_s"] for r in store]),
            "begin_s": _spread([r["begin_s"] for r in store]),
            "flushes": first["flushes"],
            "flush_mean_ms": statistics.median(r["flush_s"] / r["flushes"] * 1e3 for r in store),
            "flush_max_ms": max(r["flush_max_s"] for r in store) * 1e3,
            "finish_ms": statistics.median(r["finish_s"] for r in store) * 1e3,
            "rows": first["stored_rows"],
            "store_mb": first["store_bytes"] / 1e6,
            "peak_rss_mb": {
                "bare": statistics.median(r["peak_rss_mb"] or 0 for r in bare),
                "store": statistics.median(r["peak_rss_mb"] or 0 for r in store),
            },
            "digest": first["digest"],
            "same_digest": len({r["digest"] for r in [*bare, *store]} | {first["loaded"]["digest"]}) == 1,
        }
    reference = variants[f"{hours[0]:g}h"]
    result: dict[str, Any] = {"rounds": len(runs[run_name("bare", hours[0])]), "variants": variants}
    result["verdict"] = {
        "overhead_le_10pct": reference["overhead"]["median"] <= BUDGET,
        "share_le_10pct": reference["share"]["median"] <= BUDGET,
    }
    result["verdict"]["met"] = all(result["verdict"].values())
    if (base := runs.get(run_name(BASELINE, hours[0]))) is not None:
        store = runs[run_name("store", hours[0])]
        result["baseline"] = {
            "store_wall_s": _spread([r["wall_s"] for r in base]),
            "x_store_wall": _spread([s["wall_s"] / b["wall_s"] for s, b in zip(store, base, strict=True)]),
            "x_flush_finish": _spread([store_time(s) / store_time(b) for s, b in zip(store, base, strict=True)]),
            "same_digest": {r["digest"] for r in base} == {reference["digest"]},
        }
    if len(hours) > 1:
        last = variants[f"{hours[-1]:g}h"]
        result["proportional"] = {
            "x_store_time": last["flush_finish_s"]["median"] / reference["flush_finish_s"]["median"],
            "x_hours": hours[-1] / hours[0],
            "share_ratio": last["share"]["median"] / reference["share"]["median"],
        }
    return result


def _pct(spread: dict[str, float]) -> str:
    return f"{spread['median']:+.1%} ({spread['min']:+.1%} … {spread['max']:+.1%})"


def _share(spread: dict[str, float]) -> str:
    return f"{spread['median']:.2%} ({spread['min']:.2%} … {spread['max']:.2%})"


def _secs(spread: dict[str, float], digits: int = 2) -> str:
    return f"{spread['median']:.{digits}f} ({spread['min']:.{digits}f} … {spread['max']:.{digits}f})"


def print_table(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=160)
    table = Table(title=f"run store cost on the reference scenario: median (min … max) of {summary['rounds']} rounds")
    table.add_column("run", justify="left")
    for name, variant in summary["variants"].items():
        table.add_column(f"{name} ({variant['requests']:,} requests)", justify="right")
    variants = list(summary["variants"].values())

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        table.add_row(label, *(cell(v) for v in variants))

    row("(a) wall, no store [s]", lambda v: _secs(v["bare_wall_s"]))
    row("(b) wall, with store [s]", lambda v: _secs(v["store_wall_s"]))
    row("overhead (b)/(a) − 1", lambda v: _pct(v["overhead"]))
    row("(c) in flush + finish [s]", lambda v: _secs(v["flush_finish_s"], 3))
    row("share (c)/(b)", lambda v: _share(v["share"]))
    row("begin [ms]", lambda v: f"{v['begin_s']['median'] * 1e3:.1f}")
    row("flushes; mean, max [ms]", lambda v: f"{v['flushes']}; {v['flush_mean_ms']:.2f}, {v['flush_max_ms']:.2f}")
    row("finish [ms]", lambda v: f"{v['finish_ms']:.1f}")
    for table_name in TABLES:
        table.add_row(f"rows: {table_name}", *(f"{v['rows'][table_name]:,}" for v in variants))
    row("store file [MB]", lambda v: f"{v['store_mb']:.2f}")
    row("peak RSS no store / store [MB]", lambda v: f"{v['peak_rss_mb']['bare']:.0f} / {v['peak_rss_mb']['store']:.0f}")
    row("digest (same in all runs & store)", lambda v: f"{v['digest']} ({'yes' if v['same_digest'] else 'NO'})")
    console.print(table)
    if "proportional" in summary:
        p = summary["proportional"]
        console.print(
            f"proportional: {p['x_hours']:g}× the simulated time → {p['x_store_time']:.2f}× the time in "
            f"flush + finish; share {p['share_ratio']:.2f}× the first's"
        )
    if "baseline" in summary:
        b = summary["baseline"]
        console.print(
            f"against --baseline at {next(iter(summary['variants']))}: store wall {_secs(b['store_wall_s'])} s there; "
            f"this version's ÷ the baseline's: wall {b['x_store_wall']['median']:.3f}×, flush + finish "
            f"{b['x_flush_finish']['median']:.3f}× (medians of ratios within rounds); "
            f"same digest: {'yes' if b['same_digest'] else 'NO'}"
        )
    first_name, first = next(iter(summary["variants"].items()))
    verdict = summary["verdict"]
    console.print(
        f"budget ≤ {BUDGET:.0%} at {first_name}: overhead {first['overhead']['median']:+.1%} "
        f"({'met' if verdict['overhead_le_10pct'] else 'MISSED'}), share {first['share']['median']:.2%} "
        f"({'met' if verdict['share_le_10pct'] else 'MISSED'}) → {'MET' if verdict['met'] else 'MISSED'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="3 min and 12 min simulated, 1 round (for the tests)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")
    parser.add_argument("--dir", default=None, help="where the temporary store folders go (default: the system's)")
    parser.add_argument("--one", choices=KINDS, help="time one run in this process, print one JSON line")
    parser.add_argument("--hours", type=float, default=1.0, help="simulated hours of the --one run (default 1)")
    parser.add_argument(
        "--baseline", type=Path, default=None, help="another version's src folder: its 1 h store run, for ratios"
    )
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps({"run": run_name(args.one, args.hours), **run_once(args.one, args.hours, args.dir)}))
        return 0
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    hours, rounds = (QUICK_HOURS, 1) if args.quick else (HOURS, args.rounds)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    runs = measure(hours, rounds, args.dir, None if args.json else progress, args.baseline)
    summary = summarise(runs, hours)
    if args.json:
        print(json.dumps(summary))
    else:
        print_table(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
