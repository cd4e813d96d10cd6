"""Fluid mode's cost: a week at 10,000 requests/s with an HPA, beside the discrete run of the same scenario.

Issue 34 asks for 7 simulated days of a 10,000 requests/s sinusoid with an HPA in 5 s or less, with
flat memory, a cost that does not grow with the request rate, and ratios against the discrete run of
the same scenario over a shorter horizon. The scenario is `benchmarks/week.yaml` (a daily wave between
5,000 and 15,000 requests/s, 5 ms of CPU each, one-core pods scaled by an HPA at 60%; 15 s fluid steps,
rows every minute). Each run is a fresh `python -m skenario run FILE --store DIR -o json` process, kept
in a store of its own as a user's runs are (the store takes the run's history as it goes); reported: the
run's own wall time (`wall_s`), its peak RSS, the simulated time over the wall time, and the mean
replicas serving (replica-hours over hours).

- **week**: the scenario as written (7 days, fluid), and its first day (the same traffic: memory
  should not grow with the horizon, time should grow with it);
- **discrete**: the first `--minutes` of the scenario (default 2) in each mode: the ratio of their
  wall times per simulated second, and the discrete run's time for the week at that pace;
- **rate**: a day at 1,000, 10,000 and 100,000 requests/s on a fixed 80 replicas, the CPU time per
  request scaled so that the load per core stays the same: a fluid run's cost should not move.

    python benchmarks/fluid.py            # about two minutes
    python benchmarks/fluid.py --quick    # a day instead of the week, seconds; --json for one JSON object
    python benchmarks/fluid.py --previous REF   # and the week with the code of REF, side by side
    python benchmarks/fluid.py --compiled       # and the week on a compiled copy (benchmarks/compiled.py)
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
SCENARIO = HERE / "week.yaml"
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
scale: Any = importlib.import_module("scale")  # its fresh-process runner
compiled: Any = importlib.import_module("compiled")  # the compiled build, as a copy of the source
RATES = (1_000, 10_000, 100_000)
"""Requests/s of the rate runs (each mean of the wave)."""
MODES = ("discrete", "fluid")


def variant(into: Path, name: str, *, hours: float, mode: str = "fluid", rate: float | None = None) -> Path:
    """week.yaml run for `hours` in `mode`; with `rate`, that mean rate (the wave's amplitude half of it) on a
    fixed 80 replicas, each request's CPU time scaled by 10,000 / `rate` (the same load per core)."""
    document = yaml.safe_load(SCENARIO.read_text(encoding="utf-8"))
    spec = document["spec"]
    spec["duration"] = f"{round(hours * 3600)}s"
    spec["mode"] = mode
    if rate is not None:
        spec["traffic"].update(mean=f"{rate:g}/s", amplitude=f"{rate / 2:g}/s")
        spec["workload"]["request"]["cpuTime"]["mean"] = f"{5 * 10_000 / rate:g}ms"
        del spec["autoscalers"]
    path = into / f"{name}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def run(scenario: Path, python_path: str | None = None, name: str = "") -> dict[str, Any]:
    """One run of `scenario` in a fresh process, kept in a run store of its own beside it (as a user's runs are
    kept: the store takes the run's history as it goes); with `python_path`, that code's (`--previous`,
    `--compiled`)."""
    store = scenario.with_name(f"{scenario.stem}{name}.store")
    command = [sys.executable, "-m", "skenario", "run", str(scenario), "--store", str(store), "-o", "json"]
    command.append("--no-progress")
    output, wall, rss = scale._child(command, python_path)
    summary = json.loads(output)
    simulated_s = summary["simulated_ns"] / 1e9
    return {
        "simulated_h": simulated_s / 3600,
        "run_s": summary["wall_s"],
        "wall_s": wall,
        "peak_rss_mib": rss,
        "requests": summary["requests_arrived"],
        "x_real_time": simulated_s / summary["wall_s"],
        "replicas_started": summary["replicas_started"],
        "latency_p95_ms": (summary["latency_p95_ns"] or 0) / 1e6,
        "digest": summary["digest"],
    }


def measure(days: float, minutes: float, previous: str | None = None, compile_too: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        week_scenario = variant(work, "week", hours=24 * days)
        built: dict[str, Any] | None = None
        if compile_too:  # `SKENARIO_COMPILE=1 pip install .`'s modules, compiled into a copy of the source
            built = run(week_scenario, str(compiled.compile_copy(work / "compiled")), name="-compiled")
        before: dict[str, Any] | None = None
        if previous is not None:  # first, so that neither side runs on a host warmer than the other's
            code = scale.checkout(previous, work / "previous")
            if code is None:
                print(f"the code of {previous} could not be checked out: current code only", file=sys.stderr)
            else:
                before = run(week_scenario, str(code), name="-previous")
                scale.remove_checkout(work / "previous")
        week = run(week_scenario)
        day = run(variant(work, "day", hours=min(24.0, 24 * days)))
        head = {mode: run(variant(work, f"head-{mode}", hours=minutes / 60, mode=mode)) for mode in MODES}
        rates = {rate: run(variant(work, f"rate-{rate}", hours=24, rate=rate)) for rate in RATES}
    per_second = {mode: head[mode]["run_s"] / (minutes * 60) for mode in head}
    return {
        "week": week,
        "compiled": built,
        "previous": None if before is None else {"ref": previous, "week": before},
        "day": day,
        "memory_week_over_day": week["peak_rss_mib"] / day["peak_rss_mib"],
        "head": head,
        "discrete_over_fluid": per_second["discrete"] / per_second["fluid"],
        "discrete_week_estimate_h": per_second["discrete"] * 7 * 86400 / 3600,
        "discrete_week_over_fluid_week": per_second["discrete"] * 86400 * days / week["run_s"],
        "rates": rates,
        "rate_cost_spread": max(r["run_s"] for r in rates.values()) / min(r["run_s"] for r in rates.values()),
    }


def report(result: dict[str, Any]) -> str:
    week, day, head = result["week"], result["day"], result["head"]
    lines = [
        f"fluid, {week['simulated_h']:.0f} h: {week['run_s']:.1f} s ({week['x_real_time']:,.0f}x real time), "
        f"{week['requests']:,} requests, peak RSS {week['peak_rss_mib']:.0f} MiB",
        f"fluid, {day['simulated_h']:.0f} h: {day['run_s']:.1f} s, peak RSS {day['peak_rss_mib']:.0f} MiB "
        f"(the longer run's memory over this one's: {result['memory_week_over_day']:.2f}x)",
        f"first {head['fluid']['simulated_h'] * 60:.0f} min: discrete {head['discrete']['run_s']:.1f} s, fluid "
        f"{head['fluid']['run_s']:.2f} s: discrete / fluid {result['discrete_over_fluid']:.0f}x per simulated second; "
        f"the discrete week at that pace: {result['discrete_week_estimate_h']:.1f} h "
        f"({result['discrete_week_over_fluid_week']:,.0f}x the fluid run's {week['simulated_h']:.0f} h)",
    ]
    if result["compiled"] is not None:
        built = result["compiled"]
        same = "the same digest" if built["digest"] == week["digest"] else "ANOTHER digest"
        lines.append(
            f"compiled, {built['simulated_h']:.0f} h: {built['run_s']:.1f} s ({built['x_real_time']:,.0f}x real time), "
            f"peak RSS {built['peak_rss_mib']:.0f} MiB: {week['run_s'] / built['run_s']:.2f}x as fast as plain "
            f"Python, {same}"
        )
    if result["previous"] is not None:
        before = result["previous"]["week"]
        same = "the same digest" if before["digest"] == week["digest"] else "ANOTHER digest"
        lines.append(
            f"the code of {result['previous']['ref']}, {before['simulated_h']:.0f} h: {before['run_s']:.1f} s, "
            f"peak RSS {before['peak_rss_mib']:.0f} MiB: {before['run_s'] / week['run_s']:.2f}x the time of this "
            f"code's, {same}"
        )
    for rate, measured in result["rates"].items():
        lines.append(
            f"a day at {rate:,}/s on 80 replicas: {measured['run_s']:.1f} s, "
            f"peak RSS {measured['peak_rss_mib']:.0f} MiB"
        )
    lines.append(f"slowest over fastest of those: {result['rate_cost_spread']:.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a day instead of the week, and one minute of head")
    parser.add_argument("--minutes", type=float, default=2.0, help="the head run in both modes (default 2)")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--previous", metavar="REF", help="also run the week with the code of REF (a git ref)")
    parser.add_argument("--compiled", action="store_true", help="also run the week compiled (about two minutes more)")
    args = parser.parse_args(argv)
    days, minutes = (1.0, 1.0) if args.quick else (7.0, args.minutes)
    result = measure(days, minutes, args.previous, args.compiled)
    print(json.dumps(result, indent=2) if args.json else report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
