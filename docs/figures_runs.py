"""The documentation's figures about single runs: what a run prints, the cluster model's examples, results and sweeps.

Each function is one figure of a page (README.md or docs/**/*.md), registered by the name the page marks it with.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from figures import ROOT, Examples, block, figure, minutes, ms, seconds, table_of  # type: ignore[import-not-found]


@figure("quickstart")
def _quickstart(examples: Examples) -> str:
    printed = examples.cli("run", "examples/quickstart.yaml", "--no-progress", "--store", str(examples.store / "q"))
    return block(printed.replace(str(examples.store / "q"), ".skenario"))


COMPARE = ("hpa-80", "hpa-50", "hpa-50-fast")


def _compared(examples: Examples) -> dict[str, dict[str, Any]]:
    """The three runs of examples/compare, kept by name as the tutorial tells, and each as `show` reads it."""
    shown = {}
    for name in COMPARE:
        examples.cli("run", f"examples/compare/{name}.yaml", "--name", name, "--no-progress")
        shown[name] = json.loads(examples.cli("show", name, "-o", "json"))
    return shown


@figure("compare")
def _compare(examples: Examples) -> str:
    _compared(examples)
    return block(table_of(examples.cli("compare", *COMPARE)))


@figure("compare.story")
def _compare_story(examples: Examples) -> str:
    runs = _compared(examples)

    def said(name: str) -> str:
        run = runs[name]
        verdict = "met" if run["slo"]["met"] else "missed"
        return (
            f"{run['cost']['replica_hours']:.2f} pod-hours and {verdict} the objective "
            f"(p99 {run['slo']['latency_ms']:.1f} ms, {run['slo']['compliant_fraction']:.0%} of intervals within it)"
        )

    default, fast = runs["hpa-50"], runs["hpa-50-fast"]
    cheaper = "fewer" if fast["cost"]["replica_hours"] < default["cost"]["replica_hours"] else "more"
    change = abs(fast["cost"]["replica_hours"] / default["cost"]["replica_hours"] - 1)
    return (
        f"At 80% the HPA ran {said('hpa-80')}; at 50%, {said('hpa-50')}; with the fast behavior, "
        f"{said('hpa-50-fast')}. The fast behavior used {change:.0%} {cheaper} pod-hours than the default "
        f"behavior at the same target and started {fast['summary']['replicas_started']} replicas against "
        f"{default['summary']['replicas_started']}"
    )


# -- the cluster model: CPU limits and memory ---------------------------------------------------------

CFS = "examples/cfs-quota.yaml"
LIMITS = (
    ("smooth cap at 1 core", (("    cfsQuotaPeriod: 100ms\n", ""),)),
    ("CFS quota, 100 ms period", ()),
    ("no limit (the 4-core node)", (("    cfsQuotaPeriod: 100ms\n", ""), (", limits: {cpu: 1000m}", ""))),
)


@figure("cfs-quota")
def _cfs_quota(examples: Examples) -> str:
    rows = ["| the limit | latency p50 | p95 | p99 | mean |", "| --- | ---: | ---: | ---: | ---: |"]
    for label, replace in LIMITS:
        run = examples.summary(str(examples.text_of(CFS, replace)))
        latency = [ms(run[f"latency_{which}_ns"]) for which in ("p50", "p95", "p99", "mean")]
        rows.append(f"| {label} | " + " | ".join(latency) + " |")
    return "\n\n" + "\n".join(rows) + "\n\n"


MEMORY = "examples/memory-limits.yaml"


def _memory_runs(examples: Examples) -> list[tuple[str, dict[str, Any]]]:
    raised = examples.text_of(MEMORY, (("limits: {memory: 512Mi}", "limits: {memory: 1Gi}"),))
    return [("512Mi", examples.summary(MEMORY)), ("1Gi", examples.summary(str(raised)))]


@figure("memory-limits")
def _memory_limits(examples: Examples) -> str:
    rows = [
        "| memory limit | completed | failed | OOM kills / restarts | largest working set |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for limit, run in _memory_runs(examples):
        failed = f"{run['requests_failed']:,}"
        if run["failures"]:
            oom = run["failures"].get("oom", 0)
            failed += f" ({oom:,} `oom`, the rest with no pod ready)" if oom else ""
        memory = run["memory"]
        rows.append(
            f"| {limit} | {run['requests_completed']:,} | {failed} | {memory['oom_kills']} / "
            f"{memory['container_restarts']} | {memory['working_set_peak_bytes'] / 2**20:,.0f}Mi |"
        )
    return "\n\n" + "\n".join(rows) + "\n\n"


@figure("memory-limits.recovery")
def _memory_recovery(examples: Examples) -> str:
    """When the service was back after the burst (some pod ready) and when every pod was."""
    series = examples.series(MEMORY)
    after = [row for row in series if row["time_ns"] > 10 * 60 * 10**9]
    back = next(row["time_ns"] for row in after if row["replicas_active"] > 0)
    whole = next(row["time_ns"] for row in after if row["replicas_active"] == 4)
    return (
        f"The service is back {minutes(back - 10 * 60 * 10**9)} after the burst, the last pod (whose back-off "
        f"reached 300 s) only at {minutes(whole)}"
    )


@figure("metrics.ticks")
def _metrics_ticks(examples: Examples) -> str:
    """examples/hpa-step.yaml's failed requests with the Go Skenario's ticks and with metrics-server."""
    step = "examples/hpa-step.yaml"
    ticks = examples.text_of(step, (("  traffic:\n", "  metrics: {source: ticks}\n  traffic:\n"),))
    with_ticks, with_server = examples.summary(str(ticks)), examples.summary(step)
    ticked, served = with_ticks["requests_failed"], with_server["requests_failed"]
    return f"fails {ticked:,} requests against {served:,} with metrics-server"


# -- sweeps and tuning ------------------------------------------------------------------------------

TARGET = "autoscalers[0].manifest.spec.metrics[0].resource.target.averageUtilization"
WINDOW = "autoscalers[0].manifest.spec.behavior.scaleDown.stabilizationWindowSeconds"
SWEEP = ("sweep", "examples/sweep/hpa.yaml", "--seeds", "3", "--baseline", "3", "--no-progress")
SWEEP_SET = ("--set", f"{TARGET}=40,50,60,70,80,90")
TUNE = ("tune", "examples/sweep/hpa.yaml", "--trials", "16", "--seeds", "2", "--no-progress")
TUNE_SPACE = (
    "--space",
    f"{TARGET}=30..90:int",
    "--space",
    f"{WINDOW}=0..600:int",
    "--objective",
    "min:replica_hours",
    "--objective",
    "min:p99",
    "--constraint",
    "slo_compliance>=0.99",
)


def _swept(examples: Examples) -> tuple[str, dict[str, Any]]:
    """The tutorial's sweep (its table as printed) and the same table as JSON, read back from the store."""
    printed = examples.cli(*SWEEP, "--to", str(examples.work / "runs.parquet"), *SWEEP_SET)
    document = json.loads(examples.cli("sweeps", "show", "latest", "--baseline", "3", "--json"))
    return printed.replace(str(examples.work / "runs.parquet"), "runs.parquet"), document


def _interval(figure: dict[str, Any], places: int, signed: bool = False, magnitude: bool = False) -> str:
    """`mean ± half-width`; `signed` shows a + on a rise, `magnitude` drops the mean's sign."""
    mean, low, high = figure["mean"], figure["low"], figure["high"]
    mean = abs(mean) if magnitude else mean
    sign = "+" if signed and mean > 0 else ""
    return f"{sign}{mean:.{places}f} ± {(high - low) / 2:.{places}f}"


@figure("sweep")
def _sweep(examples: Examples) -> str:
    return block(_swept(examples)[0])


def _point(document: dict[str, Any], target: int) -> dict[str, Any]:
    point: dict[str, Any] = next(p for p in document["points"] if p["settings"][TARGET] == target)
    return point


@figure("sweep.baseline-p99")
def _sweep_baseline(examples: Examples) -> str:
    return _interval(_point(_swept(examples)[1], 60)["figures"]["p99_ms"], 1)


@figure("sweep.story")
def _sweep_story(examples: Examples) -> str:
    document = _swept(examples)[1]
    seventy = _point(document, 70)["difference"]
    cost, p99 = seventy["replica_hours"], seventy["p99_ms"]

    def real(figure: dict[str, Any]) -> bool:
        return bool(figure["low"] > 0 or figure["high"] < 0)

    verdict = {
        (True, True): "both intervals leave out 0 (bold in a terminal), so both differences are real",
        (True, False): "the saving's interval leaves out 0, the p99's does not: only the saving is real",
        (False, True): "the p99's interval leaves out 0, the saving's does not: only the slowdown is real",
        (False, False): "both intervals hold 0: these seeds cannot tell 70% from 60%",
    }[(real(cost), real(p99))]
    saves = "saves" if cost["mean"] < 0 else "costs"
    apart = [
        f"{target}%"
        for target in (40, 50, 70, 80, 90)
        if real(_point(document, target)["difference"]["slo_compliance"])
    ]
    told = (
        "these seeds tell no target apart from 60% on the SLO's compliant share"
        if not apart
        else f"on the SLO's compliant share these seeds tell only {', '.join(apart)} apart from 60%"
    )
    return (
        f"The 70% target {saves} {_interval(cost, 3, magnitude=True)} replica-hours against 60% "
        f"for {_interval(p99, 1, signed=True)} ms of p99: {verdict}. And {told}"
    )


def _tuned(examples: Examples) -> tuple[str, Path]:
    folder = examples.work / "tune-hpa-sweep"
    printed = examples.cli(*TUNE, "--out", str(folder), *TUNE_SPACE)
    return printed.replace(str(folder), "tune-hpa-sweep"), folder


@figure("tune")
def _tune(examples: Examples) -> str:
    printed, folder = _tuned(examples)
    examples.files["docs/images/sweep-pareto.png"] = folder / "pareto.png"
    return block(printed)


@figure("tune.story")
def _tune_story(examples: Examples) -> str:
    import pandas as pd

    _, folder = _tuned(examples)
    front = pd.read_parquet(folder / "pareto.parquet")
    best = front.sort_values("replica_hours").iloc[0]
    sixty = _point(_swept(examples)[1], 60)["figures"]["slo_compliance"]
    every = (
        "every interval within the SLO on every seed"
        if best["slo_compliance_low"] >= 1
        else (f"{best['slo_compliance']:.1%} of intervals within the SLO")
    )
    grid = (
        f"The grid above could not say that of 60% ({_interval(sixty, 4)}: its interval reaches below 0.99)"
        if sixty["low"] < 0.99
        else f"The grid's 60% kept it too ({_interval(sixty, 4)})"
    )
    return (
        f"The search's cheapest setting on the front is a {int(best[TARGET])}% target with a "
        f"{int(best[WINDOW])} s scale-down window (trial {int(best['trial'])}): {best['replica_hours']:.2f} "
        f"replica-hours and a p99 of {best['p99_ms']:.0f} ms, {every}. {grid}"
    )


# -- scheduling ---------------------------------------------------------------------------------------

ON_NODES = "examples/hpa-cluster-autoscaler.yaml"


@figure("cluster-autoscaler")
def _cluster_autoscaler(examples: Examples) -> str:
    printed = examples.cli("run", ON_NODES, "--no-store", "--no-progress")
    return block(table_of(printed, "scheduling"))


@figure("cluster-autoscaler.timeouts")
def _cluster_autoscaler_timeouts(examples: Examples) -> str:
    kept = examples.summary(ON_NODES)["failures"].get("timeout", 0)
    cancelled = examples.text_of(ON_NODES, (("  cluster:\n", "  client: {cancel: true}\n  cluster:\n"),))
    dropped = examples.summary(str(cancelled))["failures"].get("timeout", 0)
    return (
        f"{kept:,} requests time out. Their servers keep working on what the clients gave up on, as real "
        f"servers do; with `client.cancel: true` (servers dropping abandoned work) it would be {dropped:,}"
    )


NEIGHBOUR = "examples/noisy-neighbour.yaml"


@figure("noisy-neighbour")
def _noisy_neighbour(examples: Examples) -> str:
    return block(table_of(examples.cli("run", NEIGHBOUR, "--no-store", "--no-progress"), "workloads"))


@figure("noisy-neighbour.alone")
def _noisy_neighbour_alone(examples: Examples) -> str:
    text = (ROOT / NEIGHBOUR).read_text()
    without = text[: text.index("  workloads:\n")]
    alone = examples.text_of(NEIGHBOUR, ((text, without),))
    together = examples.summary(NEIGHBOUR)
    batch = together["workloads"]["batch"]
    waiting = batch["replicas_desired"] - batch["replicas_active"]
    return (
        f"Alone on the same nodes the web tier's p99 is {ms(examples.summary(str(alone))['latency_p99_ns'])} "
        f"(remove `workloads` and `events`, run again), against {ms(together['latency_p99_ns'])} beside the "
        f"batch service: the neighbour's requests take the cores the web pods' requests do not reserve. "
        f"{waiting} batch pod(s) its HPA asked for are not active at the end (the scheduling table shows "
        f"the pods left pending)"
    )


# -- queueing theory ----------------------------------------------------------------------------------


def _seed001(examples: Examples) -> str:
    key = ("python", "examples/queueing/seed001.py")
    if key not in examples.printed:
        done = subprocess.run([sys.executable, key[1]], cwd=ROOT, capture_output=True, text=True, check=True)
        examples.printed[key] = done.stdout
    return examples.printed[key]


@figure("seed001")
def _seed001_block(examples: Examples) -> str:
    return block(_seed001(examples))


@figure("seed001.development")
def _seed001_development(examples: Examples) -> str:
    lines = _seed001(examples).splitlines()
    first = lines.index(" Production first")
    mva = lines[first + 2].split()[-1]
    simulated = lines[first + 3].split()[-3]
    return f"the simulator says {simulated}, exact MVA with the shadow CPU {mva}"


# -- clients -------------------------------------------------------------------------------------------

STORM = "examples/retry-storm.yaml"
RETRIES = "    retries:\n      attempts: 3\n      backoff: {base: 25ms, max: 250ms}\n"


@figure("retry-storm")
def _retry_storm(examples: Examples) -> str:
    retried = examples.summary(STORM)
    text = (ROOT / STORM).read_text()
    alone = examples.summary(str(examples.text_of(STORM, (("  client:\n" + RETRIES, ""),))))
    budget = examples.summary(str(examples.text_of(STORM, ((RETRIES, RETRIES + "      budget: 20%\n"),))))
    assert RETRIES in text, "retry-storm.yaml's retries are not as this figure reads them"
    sent = retried["clients"]["attempts"]
    exhausted = retried["failures"].get("retries_exhausted", 0)
    exhaustion = "all exhausted now" if exhausted == retried["requests_failed"] else f"{exhausted:,} exhausted"
    return (
        f"With 3 attempts per request the clients send {sent / retried['requests_arrived']:.2f} times as many "
        f"attempts as requests ({sent:,} for {retried['requests_arrived']:,}) for "
        f"{retried['requests_failed']:,} failures against {alone['requests_failed']:,} without retries "
        f"({exhaustion}): the pods serve what they can, and the retries only add load; with `budget: 20%` "
        f"they send {budget['clients']['attempts'] / budget['requests_arrived']:.2f} times as many"
    )


# -- Knative ------------------------------------------------------------------------------------------

KPA_CC = "examples/kpa-container-concurrency.yaml"


@figure("kpa-cc.explain")
def _kpa_explain(examples: Examples) -> str:
    store = str(examples.work / "explain-store")  # its own store: the run is run 1, as in an empty one
    examples.cli("run", KPA_CC, "--no-progress", "--store", store)
    return block(examples.cli("explain", "latest", "--at", "00:00:40", "--store", store))


@figure("kpa-cc")
def _kpa_cc(examples: Examples) -> str:
    run = examples.summary(KPA_CC)
    series = examples.series(KPA_CC)
    held = max(row["requests_buffered"] for row in series)
    peak = max(row["replicas_desired"] for row in series)
    # Settled: what it asks for over the last minute of the traffic (which stops at 5m).
    settled = sorted(row["replicas_desired"] for row in series if 4 * 60e9 < row["time_ns"] <= 5 * 60e9)
    return (
        f"The cold start's backlog (up to {held:,} requests held at the activator) reaches pods one slot at a "
        f"time: p99 is {seconds(run['latency_p99_ns'])}, the cold start, and the revision settles at "
        f"{settled[len(settled) // 2]} pods (the median it asks for in the traffic's last minute). It still "
        f"overshoots during the cold start ({peak:,} pods at the peak)"
    )
