"""`skenario replay` with what the cluster recorded named on the command line: where the clocks meet
(`--origin`), what is left out (`--warm-up`), how near events match (`--tolerance`), how gaps are
filled (`--gaps`) and how CPU is written (`--cpu-unit`), each against errors worked by hand; and every
mistake refused in one line before anything is run or kept."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from skenario.cli import cli
from skenario.results.report import charts
from skenario.results.store import RunStore

ORIGIN = 1_750_000_000  # the Unix second given as simulated 0
STEP = 15

# Three ready replicas from the start to the end (no autoscaler; pods start at once), recorded every 15 s;
# a constant 5 requests/s of 10 ms each use 0.05 of the 1.5 cores requested: 1/30 in every interval.
SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: three}
spec:
  duration: 10m
  workload:
    replicas: 3
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: 10ms}
    launch: {imagePull: 0s, containerStart: 0s, readiness: 0s}
  traffic: {type: constant, rate: 5}
  recording: {interval: 15s}
"""
# The same, scaled to 5 replicas at 290 s: the first row that shows them is 300 s.
STEPPED = SCENARIO + "  events:\n    - {id: more, at: 290s, patch: {target: workload, patch: {replicas: 5}}}\n"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def write_series(path: Path, name: str, values: list[float], first: int = ORIGIN - 60) -> Path:
    """One series every 15 s from `first` (Unix s), as `timestamp,__name__,value` rows."""
    rows = [f"{first + i * STEP},{name},{value}" for i, value in enumerate(values)]
    path.write_text("timestamp,__name__,value\n" + "\n".join(rows) + "\n")
    return path


def counts(changes: dict[int, float], default: float = 3, first: int = -60, last: int = 660) -> list[float]:
    """Samples every 15 s from `first` to `last` s of simulated time: `default`, but `changes` (by time)
    from their time until the next change."""
    values, value = [], default
    for t in range(first, last + 1, STEP):
        value = changes.get(t, value)
        values.append(value)
    return values


def scenario(tmp_path: Path, text: str = SCENARIO) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return path


def replay_json(*args: str) -> dict[str, Any]:
    code, out, err = invoke("replay", *args, "-o", "json")
    assert code == 0, err
    found: dict[str, Any] = json.loads(out)
    return found


def replayed(tmp_path: Path, text: str, values: list[float], *extra: str) -> dict[str, Any]:
    """The JSON `replay` prints for `text` against one observed replica series (`values`, every 15 s from
    -60 s), simulated 0 at ORIGIN and the first minute left out."""
    observed = write_series(tmp_path / "obs.csv", "replicas", values)
    return replay_json(
        str(scenario(tmp_path, text)), "--no-store", "--observed", str(observed), "--origin", str(ORIGIN),
        "--warm-up", "1m", *extra,
    )  # fmt: skip


def test_origin_and_warm_up_place_the_window_and_the_error_is_the_hand_computed_one(tmp_path: Path) -> None:
    """The cluster had 3 replicas but 5 from 300 s to 420 s (its series starts a minute before simulated 0).
    Window: [60 s (the warm-up), 600 s (the run's end)), 540 s. |Δ| = 2 for 120 s: MAE 240/540; replica-seconds
    1620 simulated against 1620 + 240 = 1860 observed; the up at 300 s and the down at 420 s are not
    simulated; the 36 syncs 60, 75, ..., 585 s make 35 decisions, of which the up (at 285 s) and the down (at
    405 s) disagree: 33/35, and 0 of the 2 where either moved."""
    error = replayed(tmp_path, SCENARIO, counts({300: 5, 420: 3}))["replicas"]
    assert (error["start_ns"], error["stop_ns"]) == (60 * 10**9, 600 * 10**9)
    assert error["mae"] == pytest.approx(240 / 540)
    assert error["max_abs"] == 2
    assert (error["replica_seconds_simulated"], error["replica_seconds_observed"]) == (1620, 1860)
    assert error["replica_seconds_error_pct"] == pytest.approx(100 * (1620 - 1860) / 1860)
    assert (error["events_observed"], error["events_simulated"], error["events_matched"]) == (2, 0, 0)
    assert error["decisions"] == 35
    assert error["decision_match"] == pytest.approx(33 / 35)
    assert error["decision_match_moving"] == 0
    assert error["confusion"] == [[0, 1, 0], [0, 33, 0], [0, 1, 0]]  # observed down, hold, up by row


def test_decisions_are_compared_once_a_sync_period(tmp_path: Path) -> None:
    """As above with a 30-s sync: the syncs 60, 90, ..., 570 s make 17 decisions; the cluster's up (from 270 s
    to 300 s) and down (390 s to 420 s) are missed, the 15 holds agree."""
    error = replayed(tmp_path, SCENARIO, counts({300: 5, 420: 3}), "--sync", "30s")["replicas"]
    assert (error["decisions"], error["decision_match"]) == (17, pytest.approx(15 / 17))
    assert error["confusion"] == [[0, 1, 0], [0, 15, 0], [0, 1, 0]]
    assert error["mae"] == pytest.approx(240 / 540)  # the rest does not depend on the sync


@pytest.mark.parametrize(("origin", "mae", "timing"), [(ORIGIN, 0.0, 0.0), (ORIGIN - 90, 180 / 540, 90.0)])
def test_the_origin_lines_the_clocks_up(tmp_path: Path, origin: int, mae: float, timing: float) -> None:
    """The cluster went from 3 to 5 at ORIGIN + 300 s; the simulation at 300 s. With simulated 0 at ORIGIN they
    agree; with it 90 s earlier, the cluster's up is at 390 s of simulated time: |Δ| = 2 for 90 s of [60 s,
    600 s), and the two ups match 90 s apart."""
    observed = write_series(tmp_path / "obs.csv", "replicas", counts({300: 5}))
    found = replay_json(
        str(scenario(tmp_path, STEPPED)), "--no-store", "--observed", str(observed), "--origin", str(origin),
        "--warm-up", "1m",
    )  # fmt: skip
    error = found["replicas"]
    assert error["mae"] == pytest.approx(mae)
    assert (error["events_matched"], error["timing_error_s"]) == (1, timing)


@pytest.mark.parametrize(
    ("tolerance", "matched", "timing"),
    [([], 1, 90.0), (["--tolerance", "2m"], 1, 90.0), (["--tolerance", "1m"], 0, None)],
)
def test_an_event_90_s_late_matches_within_the_tolerance_only(
    tmp_path: Path, tolerance: list[str], matched: int, timing: float | None
) -> None:
    """Simulated: 3 replicas, 5 from 300 s. Observed: 3, 5 from 390 s. One up each, 90 s apart: matched within
    the default 120 s and within 2m, not within 1m. |Δ| = 2 for 90 s of [60 s, 600 s): MAE 180/540."""
    error = replayed(tmp_path, STEPPED, counts({390: 5}), *tolerance)["replicas"]
    assert (error["events_observed"], error["events_simulated"], error["events_matched"]) == (1, 1, matched)
    assert error["timing_error_s"] == timing
    assert error["mae"] == pytest.approx(180 / 540)


@pytest.mark.parametrize(("count", "mae"), [([], 60 / 540), (["--count", "pods"], 0.0), (["--count", "desired"], 0.0)])
def test_the_observed_count_is_held_against_the_simulated_count_it_counts(
    tmp_path: Path, count: list[str], mae: float
) -> None:
    """Scaled to 5 at 290 s, the two new pods take 30 s to start: 5 are asked for and exist from the row at
    300 s, but are ready only from the row at 330 s. The cluster counted 5 from 300 s: against the ready pods
    (the default) |Δ| = 2 for 30 s of [60 s, 600 s); against every pod, or what was asked for, none."""
    slow = STEPPED.replace("containerStart: 0s", "containerStart: 30s")
    found = replayed(tmp_path, slow, counts({300: 5}), *count)
    assert found["replicas"]["mae"] == pytest.approx(mae)
    assert found["count"] == (count[1] if count else "active")


@pytest.mark.parametrize(
    ("gaps", "mae"),
    [
        ("hold", 2 * 30 / 540),  # 5 held over the NaN: |Δ| = 2 from 300 s to 330 s
        ("interpolate", (2 * 15 + 1 * 15) / 540),  # 4 between the 5 and the 3: |Δ| 2 then 1
        ("zero", (2 * 15 + 3 * 15) / 540),  # 0: |Δ| 2 then 3
    ],
)
def test_a_gap_is_filled_as_gaps_says(tmp_path: Path, gaps: str, mae: float) -> None:
    """Observed 3 but 5 at 300 s and NaN at 315 s."""
    found = replayed(tmp_path, SCENARIO, counts({300: 5, 315: math.nan, 330: 3}), "--gaps", gaps)
    assert found["replicas"]["mae"] == pytest.approx(mae)


@pytest.mark.parametrize(
    ("unit", "written"), [([], 0.1), (["--cpu-unit", "fraction"], 0.1), (["--cpu-unit", "percent"], 10)]
)
def test_cpu_is_compared_as_a_fraction_of_the_request_whichever_way_it_is_written(
    tmp_path: Path, unit: list[str], written: float
) -> None:
    """The cluster used 10% of its request throughout; the simulation 1/30 (0.05 of 1.5 cores): every sample
    is 0.1 - 1/30 off, so MAE and RMSE are both that."""
    replicas = write_series(tmp_path / "replicas.csv", "replicas", counts({}))
    cpu = write_series(tmp_path / "cpu.csv", "cpu", [written] * len(counts({})))
    found = replay_json(
        str(scenario(tmp_path)), "--no-store", "--observed", str(replicas), "--observed", str(cpu),
        "--cpu", "cpu", "--origin", str(ORIGIN), "--warm-up", "1m", *unit,
    )  # fmt: skip
    assert found["cpu"] == {"mae": pytest.approx(0.1 - 1 / 30), "rmse": pytest.approx(0.1 - 1 / 30)}
    assert found["replicas"]["mae"] == 0


# The three pods consume a stream whose traffic stops at 30 s: 150 messages of 10 ms are consumed as they come,
# so no message waits at any row from 60 s on (a lag of 0).
STREAM = SCENARIO.replace("cpuTime: 10ms}", "cpuTime: 10ms, timeout: null}\n    stream: {}").replace(
    "rate: 5}", "rate: 5, stop: 30s}"
)


@pytest.mark.parametrize(("scale", "mae"), [([], 5000.0), (["--lag-scale", "0.0002"], 1.0)])
def test_lag_is_compared_in_the_scenarios_messages(tmp_path: Path, scale: list[str], mae: float) -> None:
    """The cluster's lag was 5000 records throughout; one message stands for 5000 records (0.0002 message a
    record), so it was one message: against a lag of 0, MAE and RMSE are 1 (5000 unscaled)."""
    replicas = write_series(tmp_path / "replicas.csv", "replicas", counts({}))
    lag = write_series(tmp_path / "lag.csv", "lag", [5000.0] * len(counts({})))
    found = replay_json(
        str(scenario(tmp_path, STREAM)), "--no-store", "--observed", str(replicas), "--observed", str(lag),
        "--lag", "lag", "--origin", str(ORIGIN), "--warm-up", "1m", *scale,
    )  # fmt: skip
    assert found["lag"] == {"mae": pytest.approx(mae), "rmse": pytest.approx(mae)}


def test_the_replay_is_kept_with_the_run_and_show_prints_it(tmp_path: Path) -> None:
    observed = write_series(tmp_path / "obs.csv", "replicas", counts({300: 5, 420: 3}))
    store = tmp_path / "store"
    code, out, err = invoke(
        "replay", str(scenario(tmp_path)), "--store", str(store), "--observed", str(observed),
        "--origin", str(ORIGIN), "--warm-up", "1m",
    )  # fmt: skip
    assert code == 0, err
    assert "0.44" in out and "-12.9%" in out  # MAE 240/540; replica-seconds (1620 - 1860) / 1860
    code, out, err = invoke("show", "latest", "--store", str(store), "-o", "json")
    assert code == 0, err
    assert json.loads(out)["replay"]["replicas"]["mae"] == pytest.approx(240 / 540)


def test_the_report_draws_each_observed_series_over_its_simulated_one(tmp_path: Path) -> None:
    """Replicas, CPU and latency (0.25 s, drawn in the chart's ms) as the cluster recorded them, at their
    times on the simulated clock: 15 s apart from -60 s."""
    replicas = write_series(tmp_path / "replicas.csv", "replicas", counts({300: 5, 420: 3}))
    cpu = write_series(tmp_path / "cpu.csv", "cpu", [0.1] * len(counts({})))
    latency = write_series(tmp_path / "latency.csv", "latency", [0.25] * len(counts({})))
    store = tmp_path / "store"
    code, _, err = invoke(
        "replay", str(scenario(tmp_path)), "--store", str(store), "--origin", str(ORIGIN),
        "--observed", str(replicas), "--observed", str(cpu), "--observed", str(latency),
        "--cpu", "cpu", "--latency", "latency",
    )  # fmt: skip
    assert code == 0, err
    drawn = dict(charts(RunStore(store).load(1)))
    times = [
        str(np.datetime64("1970-01-01T00:00:00", "ms") + np.timedelta64(t * 1000, "ms")) for t in range(-60, 661, 15)
    ]

    def observed(chart: str, name: str) -> tuple[list[str], list[float]]:
        [trace] = [trace for trace in drawn[chart].data if trace.name == name]
        return [str(t) for t in trace.x], list(trace.y)

    assert observed("chart-replicas", "observed (the real cluster)") == (times, counts({300: 5, 420: 3}))
    assert observed("chart-cpu", "observed, of request") == (times, [0.1] * len(times))
    assert observed("chart-latency", "observed (the real cluster)") == (times, [250.0] * len(times))


def runs_kept(store: Path) -> int:
    if not (store / "runs.sqlite").exists():
        return 0
    with sqlite3.connect(store / "runs.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--tolerance", "soon"], ["--tolerance", "soon"]),
        (["--tolerance", "0s"], ["--tolerance", "more than 0"]),
        (["--sync", "0s"], ["--sync", "more than 0"]),
        (["--warm-up", "-1m"], ["--warm-up", "-1m"]),
        (["--origin", "nan"], ["--origin", "nan"]),
        (["--cpu-unit", "percent"], ["--cpu-unit", "--cpu"]),
        (["--cpu", "load"], ["--cpu", "load", "replicas"]),  # names the series the files hold
        (["--lag-scale", "0.5"], ["--lag-scale", "--lag"]),
        (["--lag", "replicas"], ["--lag", "no stream"]),  # the workload records no lag
        (["--observed", "{missing}"], ["--observed", "missing.csv"]),
        (["--observed", "{nan}"], ["nan.csv", "--replicas", "NaN", "--gaps hold, interpolate or zero"]),
        (["--observed", "{same}"], ["--replicas", "obs.csv", "same.csv"]),  # two files hold 'replicas'
        (["--origin", str(ORIGIN + 3600)], ["spec.observed", "do not overlap"]),  # all observed before 0
    ],
)
def test_a_mistake_is_one_line_and_nothing_is_run_or_kept(tmp_path: Path, args: list[str], said: list[str]) -> None:
    observed = write_series(tmp_path / "obs.csv", "replicas", counts({}))
    write_series(tmp_path / "same.csv", "replicas", counts({}))
    write_series(tmp_path / "nan.csv", "replicas", counts({300: math.nan, 315: 3}))
    paths = {name: str(tmp_path / f"{name}.csv") for name in ("missing", "nan", "same")}
    args = [arg.format(**paths) for arg in args]
    if args[0] != "--observed" or args[1] == paths["same"]:
        args = ["--observed", str(observed), *args]
    store = tmp_path / "store"
    code, out, err = invoke("replay", str(scenario(tmp_path)), "--store", str(store), *args)
    assert code == 2, out + err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    for text in said:
        assert text in err
    assert runs_kept(store) == 0
