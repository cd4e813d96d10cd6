"""A day of a service's traffic with its HPA, against real time and beside the code before issue 32.

Issue 32 asks for a day of traffic with an HPA at 1,000x real time or more (under 90 seconds). The
scenario is `benchmarks/day.yaml`: a daily sinusoid between 100 and 500 requests/s (about 26 million
requests in 24 h) on 50 replicas of 500m to start, each request 50 ms of CPU (exponential) and 20 ms
of IO, scaled by an HPA at 60% CPU between 10 and 100 replicas; every part of the model on, as
`skenario run` has it.

Each run is a fresh `python -m skenario run FILE --no-store -o json` process. Reported: the run's
own wall time (the summary's `wall_s`: building and running, not the interpreter's start-up), the
simulated time over it (x real time), µs per request, and the summary's digest. With `--previous
REF` the same scenario runs with the code of REF (default: the commit before issue 32, checked out
with `git worktree`) right after, and the ratio of the two wall times is reported with whether the
digests agree. With `--compiled` it also runs on a compiled copy of the current source (the
build `SKENARIO_COMPILE=1 pip install .` installs: benchmarks/compiled.py, about two minutes to
compile). `--hours H` runs the first H hours of the day instead (the traffic wave is the same, so a
shorter run is the head of the day's).

The host sets what 1,000x real time takes, so each measurement also prices the floor on the same
host right before: the bare heapq M/M/8 loop of `mmc.py` (1,000,000 customers, a fresh process),
in µs per customer. Reported beside each run: its µs per request over the floor's (a figure that
moves little with the host), and the most µs per request a day may take for 1,000x real time on
this host, as a multiple of the floor.

    python benchmarks/day.py                      # the whole day (minutes on a shared host)
    python benchmarks/day.py --hours 2 --previous # two hours, beside the code before issue 32
    python benchmarks/day.py --compiled --previous # the day compiled, as plain Python and before issue 32
    python benchmarks/day.py --hours 0.05 --json  # seconds, one JSON object on stdout
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "day.yaml"
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
scale: Any = importlib.import_module("scale")  # its fresh-process runner and git checkout
compiled: Any = importlib.import_module("compiled")


def scenario_for(hours: float, into: Path) -> Path:
    """day.yaml cut to its first `hours` hours, written into `into`."""
    document = yaml.safe_load(SCENARIO.read_text(encoding="utf-8"))
    document["spec"]["duration"] = f"{round(hours * 3600)}s"
    path = into / "day.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def run_day(scenario: Path, python_path: str | None) -> dict[str, Any]:
    """One run of `scenario` in a fresh process (with `python_path` first on PYTHONPATH, if given)."""
    command = [sys.executable, "-m", "skenario", "run", str(scenario), "--no-store", "-o", "json", "--no-progress"]
    output, wall, rss = scale._child(command, python_path)
    summary = json.loads(output)
    simulated_s = summary["simulated_ns"] / 1e9
    requests = summary["requests_arrived"]
    return {
        "run_s": summary["wall_s"],
        "wall_s": wall,
        "peak_rss_mib": rss,
        "requests": requests,
        "x_real_time": simulated_s / summary["wall_s"],
        "us_per_request": summary["wall_s"] / max(requests, 1) * 1e6,
        "replicas_started": summary["replicas_started"],
        "digest": summary["digest"],
    }


FLOOR_CUSTOMERS = 1_000_000
TARGET_X_REAL_TIME = 1_000


def run_floor(customers: int | None = None) -> float:
    """µs per customer of the bare heapq floor (`mmc.run_floor`), timed inside a fresh process."""
    customers = FLOOR_CUSTOMERS if customers is None else customers
    code = (
        f"import sys, time; sys.path.insert(0, {str(HERE)!r}); import mmc; "
        f"t = time.perf_counter(); mmc.run_floor({customers}, mmc.SEED); print(time.perf_counter() - t)"
    )
    output, _, _ = scale._child([sys.executable, "-c", code], None)
    return float(output) / customers * 1e6


def measure(hours: float, previous_ref: str | None, compile_too: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="skenario-day-") as tmp:
        work = Path(tmp)
        scenario = scenario_for(hours, work)
        floor_us = run_floor()
        result: dict[str, Any] = {"hours": hours, "floor_us_per_customer": floor_us}
        result["current"] = run_day(scenario, str(compiled.ROOT / "src"))
        if compile_too:
            built = run_day(scenario, str(compiled.compile_copy(work / "compiled")))
            result["compiled"] = built
            result["x_compiled"] = result["current"]["run_s"] / built["run_s"]
            result["compiled_same_digest"] = built["digest"] == result["current"]["digest"]
        if previous_ref is not None:
            previous = scale.checkout(previous_ref, work / "previous")
            if previous is None:
                print(f"the code of {previous_ref} could not be checked out: current code only", file=sys.stderr)
            else:
                try:
                    before = run_day(scenario, str(previous))
                finally:
                    scale.remove_checkout(work / "previous")
                result["previous"] = {"ref": previous_ref, **before}
                result["x_previous"] = before["run_s"] / result["current"]["run_s"]
                result["same_digest"] = before["digest"] == result["current"]["digest"]
    for name in ("current", "compiled", "previous"):
        if name in result:
            result[name]["x_floor"] = result[name]["us_per_request"] / floor_us
    # 1,000x real time: the day's requests in a thousandth of the simulated time.
    run = result["current"]
    budget_us = hours * 3600 / TARGET_X_REAL_TIME / max(run["requests"], 1) * 1e6
    result["target_us_per_request"] = budget_us
    result["target_x_floor"] = budget_us / floor_us
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hours", type=float, default=24.0, help="Simulate the first HOURS of the day.")
    parser.add_argument(
        "--previous", nargs="?", const=scale.PREVIOUS_REF, default=None, metavar="REF", help="Also run the code of REF."
    )
    parser.add_argument("--compiled", action="store_true", help="Also run a compiled copy of the current source.")
    parser.add_argument("--json", action="store_true", help="One JSON object on stdout.")
    args = parser.parse_args()
    if not args.hours > 0:
        parser.error(f"--hours must be > 0, got {args.hours}")
    result = measure(args.hours, args.previous, args.compiled)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"floor (bare heapq M/M/8, mmc.py): {result['floor_us_per_customer']:.2f} µs a customer on this host")
    for name in ("current", "compiled", "previous"):
        run = result.get(name)
        if run is None:
            continue
        print(
            f"{name}: {result['hours']:g} h, {run['requests']:,} requests in {run['run_s']:.1f} s: "
            f"{run['x_real_time']:,.0f}x real time, {run['us_per_request']:.2f} µs a request "
            f"({run['x_floor']:.2f}x the floor), peak RSS {run['peak_rss_mib']:,.0f} MiB, digest {run['digest']}"
        )
    print(
        f"{TARGET_X_REAL_TIME:,}x real time on this host: at most {result['target_us_per_request']:.2f} µs a request, "
        f"{result['target_x_floor']:.2f}x the floor"
    )
    if "x_compiled" in result:
        same = "the same digest" if result["compiled_same_digest"] else "a DIFFERENT digest"
        print(f"compiled: {result['x_compiled']:.2f}x as fast as plain Python, with {same}")
    if "x_previous" in result:
        same = "the same digest" if result["same_digest"] else "a DIFFERENT digest"
        print(f"the code of {args.previous} took {result['x_previous']:.2f}x as long, with {same}")


if __name__ == "__main__":
    main()
