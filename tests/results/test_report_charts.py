"""The report's debugging charts: latency on a log axis and its distribution, the HPA's CPU target, the KPA's
excess burst capacity, each VPA's recommendation, queue depths and failures by cause, each checked against
what the run itself recorded (the recorder's rows, the decisions, the simulation's own latency histogram)
and against a real day-long run's page size."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from playwright.sync_api import Page

from skenario.core.stats import LatencyHistogram
from skenario.core.time import MILLISECOND, SECOND
from skenario.results import analysis
from skenario.results.report import MAX_POINTS, UNTIMED, _coarsen, charts, render_report, write_report
from skenario.results.rundata import RunData
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from tests.autoscalers.vpa.test_memory import VPA_SCENARIO
from tests.results.conftest import EXAMPLES, REPLICA_ROWS, ROW_NAMES, ROWS, TIMELINE, TIMES_S
from tests.results.test_report import _a_day, _figure_json

MIB = 2**20
LATENCY_COLUMNS = ("latency_p50_ms", "latency_p95_ms", "latency_p99_ms")


def _simulate(text: str) -> Simulation:
    simulation = Simulation(parse_scenario(text), base_dir=EXAMPLES, scenario_text=text)
    simulation.run()
    return simulation


def _traces(page: str, chart: str) -> dict[str, dict[str, Any]]:
    return {trace["name"]: trace for trace in _figure_json(page, chart)["data"]}


def _column(name: str) -> list[Any]:
    """One column of the hand-made run's rows, as conftest writes it."""
    return [row[ROW_NAMES.index(name)] for row in ROWS]


def _clock(seconds: float) -> str:
    """An instant on the report's date axis, as plotly is given it."""
    whole, ms = divmod(round(seconds * 1000), 1000)
    return f"1970-01-01T{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}.{ms:03d}"


# -- latency ------------------------------------------------------------------------------------


def test_latency_is_on_a_log_axis_with_gaps_where_nothing_completed(run: RunData, tmp_path: Path) -> None:
    objectives = {"latency_ms": 200, "percentile": 95, "error_rate": 0.05}
    write_report(run, tmp_path / "report.html", objectives=objectives)
    figure = _figure_json((tmp_path / "report.html").read_text(encoding="utf-8"), "chart-latency")
    assert figure["layout"]["yaxis"]["type"] == "log"
    traces = {trace["name"]: trace for trace in figure["data"]}
    completed = _column("requests_completed")
    for name in ("p50", "p95", "p99"):
        expected = [None if n == 0 else float(v) for n, v in zip(completed, _column(f"latency_{name}_ms"), strict=True)]
        assert traces[name]["y"] == expected  # the intervals at 30 s and 55 s completed nothing: gaps, not 0
    # The objective: a line at 200 ms (a shape takes the value on a log axis) labelled at log10(200) (an
    # annotation takes the log).
    level = [shape for shape in figure["layout"]["shapes"] if shape.get("yref") == "y"]
    assert [(shape["y0"], shape["y1"]) for shape in level] == [(200, 200)]
    label = next(note for note in figure["layout"]["annotations"] if note["text"] == "p95 objective")
    assert label["y"] == pytest.approx(math.log10(200))


def test_the_latency_objectives_label_sits_on_its_line(run: RunData, tmp_path: Path, browser_page: Page) -> None:
    write_report(run, tmp_path / "report.html", objectives={"latency_ms": 60, "percentile": 95, "error_rate": 0})
    browser_page.goto((tmp_path / "report.html").as_uri())
    chart = browser_page.locator("#chart-latency")
    chart.locator("svg.main-svg").first.wait_for(state="attached")
    flat = [
        box
        for path in chart.locator(".shapelayer path").all()
        if (box := path.bounding_box()) is not None and box["height"] < 2 and box["width"] > 100
    ]
    assert len(flat) == 1  # the objective (the events' lines are vertical)
    label = chart.locator(".annotation", has_text="p95 objective").bounding_box()
    assert label is not None
    assert abs(label["y"] + label["height"] - flat[0]["y"]) < 4  # drawn just above its line, in pixels
    # and at 60 ms on the log axis: the minor tick labelled 6 below the one of 100 (20 to 400 ms shown).
    ticks = [t.bounding_box() for t in chart.locator(".ytick text").all() if t.text_content() == "6"]
    assert len(ticks) == 1 and ticks[0] is not None
    assert abs(ticks[0]["y"] + ticks[0]["height"] / 2 - flat[0]["y"]) < 3


def _nearest_rank_band(run: RunData, x: float) -> tuple[float, float]:
    """The bounds on the share within x ms, request by request from the definition of the nearest rank: the
    q-th percentile of n latencies is the r-th smallest, r = max(1, ceil(q n / 100))."""
    surely = possibly = total = 0
    for n, *values in zip(*(_column(c) for c in ("requests_completed", *LATENCY_COLUMNS)), strict=True):
        if not n:
            continue
        total += n
        ranks = [max(1, math.ceil(q * n / 100)) for q in (50, 95, 99)]
        reached = [r for r, v in zip(ranks, values, strict=True) if v <= x]
        above = [r - 1 for r, v in zip(ranks, values, strict=True) if v > x]
        surely += max(reached, default=0)
        possibly += min(above, default=n)
    return surely / total, possibly / total


def test_the_latency_cdf_bounds_follow_the_nearest_rank(run: RunData) -> None:
    cdf = analysis.latency_cdf(run)
    values = sorted({v for name in LATENCY_COLUMNS for v in _column(name) if v is not None})
    assert list(cdf.index) == values
    for x in [*values, 25.0, 35.0, 1000.0]:
        held = cdf[cdf.index <= x].iloc[-1]  # each row holds up to the next latency
        assert (held["at_least"], held["at_most"]) == pytest.approx(_nearest_rank_band(run, x))
    assert cdf["at_most"].iloc[-1] == 1.0 and cdf["at_least"].iloc[-1] < 1.0
    assert (np.diff(cdf["at_least"]) >= 0).all() and (np.diff(cdf["at_most"]) >= 0).all()


def _share_at_most(histogram: LatencyHistogram, edge: int) -> float:
    """The share of a histogram's values in buckets wholly at or below `edge` ns (upper_edge=True)."""
    return sum(n for i, n in histogram.buckets() if LatencyHistogram.bucket_bounds(i)[1] <= edge) / histogram.count


def _bucket(value_ns: int) -> tuple[int, int]:
    one = LatencyHistogram()
    one.record(value_ns)
    return LatencyHistogram.bucket_bounds(next(one.buckets())[0])


@pytest.fixture(scope="module")
def hpa_step() -> Simulation:
    """examples/hpa-step.yaml, 10 minutes, with a latency objective: its traffic step saturates the pods."""
    text = (EXAMPLES / "hpa-step.yaml").read_text().replace("duration: 40m", "duration: 10m")
    return _simulate(text + "  slo: {latency: 300ms, percentile: 95, errorRate: 1%}\n")


def test_the_runs_own_latency_histogram_lies_within_the_cdfs_band(hpa_step: Simulation, tmp_path: Path) -> None:
    # As a run stored before its latency histogram was kept (tests/results/test_latency_histogram.py: with it).
    run = dataclasses.replace(RunData.from_simulation(hpa_step), documents={})
    histogram = hpa_step.model.requests_complete.latency  # every completed request, which this run does not keep
    cdf = analysis.latency_cdf(run)
    assert len(cdf) > 10
    for x_ms, row in cdf.iterrows():
        x = float(x_ms) * MILLISECOND
        wholly_below = _share_at_most(histogram, math.floor(x))  # buckets ending at or below x: surely within x
        partly_below = sum(n for i, n in histogram.buckets() if LatencyHistogram.bucket_bounds(i)[0] <= x)
        assert row["at_least"] <= partly_below / histogram.count + 1e-12, x_ms
        assert row["at_most"] >= wholly_below - 1e-12, x_ms
    # The summary's percentiles of the whole run, within their buckets: at the top of the p95's bucket at
    # least 95% are within, so the band reaches 95% there; below the p50's bucket at most half are.
    summary = run.summary

    def band(x_ms: float) -> pd.Series:
        return cdf[cdf.index <= x_ms].iloc[-1]

    assert band(_bucket(summary["latency_p95_ns"])[1] / MILLISECOND)["at_most"] >= 0.95
    below_p50 = cdf[cdf.index < _bucket(summary["latency_p50_ns"])[0] / MILLISECOND]
    assert len(below_p50) and (below_p50["at_least"] <= 0.5).all()

    # The chart draws those bounds, with the stated objective (p95 within 300 ms) marked.
    write_report(run, tmp_path / "report.html")
    figure = _figure_json((tmp_path / "report.html").read_text(encoding="utf-8"), "chart-latency-cdf")
    assert figure["layout"]["xaxis"]["type"] == "log"
    assert "keeps no histogram" in figure["layout"]["title"]["text"]
    traces = {trace["name"]: trace for trace in figure["data"]}
    surely, possibly = traces["at least (surely within x)"], traces["at most (possibly within x)"]
    assert surely["y"] == [float(f"{v:.4g}") for v in cdf["at_least"]]
    assert possibly["y"] == [float(f"{v:.4g}") for v in cdf["at_most"]]
    assert surely["x"] == [float(f"{v:.4g}") for v in cdf.index]
    objective = traces["p95 objective: 95% within 300 ms"]
    assert objective["x"] == [300, 300]
    assert [s["y0"] for s in figure["layout"]["shapes"]] == [0.95]


def test_a_long_cdf_is_thinned_into_wider_bounds() -> None:
    day = _a_day(decisions=0)
    rng = np.random.default_rng(3)
    triples = np.sort(rng.lognormal(4, 1, size=(len(day.series), 3)), axis=1)
    for column, values in zip(LATENCY_COLUMNS, triples.T, strict=True):
        day.series[column] = values
    cdf = analysis.latency_cdf(day)
    assert len(cdf) > 10 * MAX_POINTS
    shown = _coarsen(cdf)
    assert len(shown) <= MAX_POINTS and shown.index[-1] == cdf.index[-1]
    # At every latency the run has, the drawn step (the last one at or before it) is at least as wide.
    at = np.searchsorted(shown.index.to_numpy(), cdf.index.to_numpy(), side="right") - 1
    assert (shown["at_least"].to_numpy()[at] <= cdf["at_least"].to_numpy()).all()
    assert (shown["at_most"].to_numpy()[at] >= cdf["at_most"].to_numpy()).all()
    assert shown["at_least"].iloc[-1] == cdf["at_least"].iloc[-1]


def test_a_run_with_nothing_completed_has_an_empty_cdf(empty_run: RunData) -> None:
    assert analysis.latency_cdf(empty_run).empty
    figure = dict(charts(empty_run))["chart-latency-cdf"]
    assert "no request completed" in figure.layout.title.text
    assert all(len(trace.x) == 0 for trace in figure.data)


# -- requests, CPU, autoscalers -----------------------------------------------------------------


def test_each_failure_cause_is_shown_and_they_add_up_to_the_failures(run: RunData, tmp_path: Path) -> None:
    write_report(run, tmp_path / "report.html")
    traces = _traces((tmp_path / "report.html").read_text(encoding="utf-8"), "chart-requests")
    causes = [traces["failed: timeout"], traces["failed: overload"]]
    assert all(trace.get("visible", True) is True for trace in causes)
    intervals = np.diff([0, *TIMES_S])
    assert causes[0]["y"] == pytest.approx(np.array(_column("failed_timeout")) / intervals, rel=1e-3)
    assert np.add(causes[0]["y"], causes[1]["y"]) == pytest.approx(traces["failed"]["y"], rel=1e-3)


def test_the_cpu_chart_draws_each_hpas_utilisation_target(run: RunData, real_run: RunData, tmp_path: Path) -> None:
    write_report(run, tmp_path / "hand.html")
    target = _traces((tmp_path / "hand.html").read_text(encoding="utf-8"), "chart-cpu")["HPA web: target"]
    # The hand-made HPA held 100% of request at its three syncs: drawn from the first, to the last, as a share.
    syncs = [(t / SECOND, d["metrics"]["cpu"]["target"]) for t, source, *_, d in TIMELINE if source == "web"]
    assert target["x"] == [_clock(syncs[0][0]), _clock(syncs[-1][0])]
    assert target["y"] == [syncs[0][1] / 100, syncs[-1][1] / 100]
    assert target["line"]["dash"] == "dash" and target["line"]["shape"] == "hv"

    write_report(real_run, tmp_path / "real.html")
    traces = _traces((tmp_path / "real.html").read_text(encoding="utf-8"), "chart-cpu")
    manifest = yaml.safe_load((EXAMPLES / "manifests" / "web-hpa.yaml").read_text())
    percent = manifest["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"]
    assert set(traces["HPA hpa: target"]["y"]) == {percent / 100}


def test_a_kpas_excess_burst_capacity_is_drawn_on_its_own_axis(tmp_path: Path) -> None:
    text = (EXAMPLES / "kpa-container-concurrency.yaml").read_text().replace("duration: 6m", "duration: 3m")
    run = RunData.from_simulation(_simulate(text))
    write_report(run, tmp_path / "kpa.html")
    figure = _figure_json((tmp_path / "kpa.html").read_text(encoding="utf-8"), "chart-kpa-0")
    ebc = next(trace for trace in figure["data"] if trace["name"].startswith("excess burst capacity"))
    assert ebc["yaxis"] == "y2" and figure["layout"]["yaxis2"]["overlaying"] == "y"
    # Scale's formula (autoscaler.go): floor(ready x what a pod takes - target-burst-capacity - panic average).
    decisions = analysis.decisions(run, "kpa")
    settings = run.timeline[run.timeline["source"] == "kpa"]["detail"].iloc[0]["settings"]
    assert settings["target_burst_capacity"] > 0
    panic = pd.to_numeric(decisions["observed_panic"], errors="coerce").to_numpy(dtype=float)
    ready = decisions["ready"].to_numpy(dtype=float)
    expected = np.floor(ready * settings["total"] - settings["target_burst_capacity"] - panic)
    assert len(decisions) <= MAX_POINTS  # not thinned: one point per decision
    assert ebc["y"] == [None if math.isnan(v) else v for v in expected]
    assert min(v for v in ebc["y"] if v is not None) < 0  # the activator was in the path for a while


def test_a_vpas_recommendation_is_drawn_between_its_bounds(run: RunData, tmp_path: Path) -> None:
    write_report(run, tmp_path / "hand.html")
    traces = _traces((tmp_path / "hand.html").read_text(encoding="utf-8"), "chart-vpa-0")
    detail = next(d for _, source, *_, d in TIMELINE if source == "vpa")
    assert traces["lowerBound"]["y"] == [detail["lower_bound"]]
    assert traces["target"]["y"] == [detail["target"]]
    assert traces["upperBound"]["y"] == [detail["upper_bound"]]
    assert traces["upperBound"]["fill"] == "tonexty"  # the band between the bounds
    assert traces["template request"]["y"] == [detail["template_request"]]
    assert "chart-vpa-0-memory" not in dict(charts(run))  # no memory recommended

    text = (EXAMPLES / "vpa-resize.yaml").read_text().replace("duration: 2h", "duration: 20m")
    simulation = _simulate(text)
    real = RunData.from_simulation(simulation)
    write_report(real, tmp_path / "vpa.html")
    traces = _traces((tmp_path / "vpa.html").read_text(encoding="utf-8"), "chart-vpa-0")
    low, target, high = (np.array(traces[n]["y"], dtype=float) for n in ("lowerBound", "target", "upperBound"))
    assert len(target) == len(analysis.decisions(real, "vpa")) > 10
    assert (low <= target).all() and (target <= high).all()
    request = traces["template request"]["y"]
    # What the pods asked for at the end: the VPA's last request, raised from the scenario's 100m.
    assert request[-1] == simulation.model.cpu_request == real.series["cpu_request_millicores"].iloc[-1] > 100


"""tests/autoscalers/vpa/test_memory.py's crash-looping pods, whose VPA lifts their memory past 400Mi."""


def test_a_vpas_memory_recommendation_has_its_own_chart_in_mib(tmp_path: Path) -> None:
    simulation = _simulate(VPA_SCENARIO)  # a VPA in Recreate mode, memory modelled
    run = RunData.from_simulation(simulation)
    write_report(run, tmp_path / "vpa.html")
    page = (tmp_path / "vpa.html").read_text(encoding="utf-8")
    figure = _figure_json(page, "chart-vpa-0-memory")
    assert "MiB" in figure["layout"]["yaxis"]["title"]["text"]
    traces = {trace["name"]: trace for trace in figure["data"]}
    decisions = analysis.decisions(run, "vpa")
    recommended = pd.to_numeric(decisions["memory_target"], errors="coerce") / MIB
    assert traces["target"]["y"] == [None if math.isnan(v) else float(f"{v:.4g}") for v in recommended]
    assert model_mib(simulation) == pytest.approx(traces["template request"]["y"][-1], rel=1e-3)
    assert traces["template request"]["y"][-1] > 400  # past the working set
    assert _figure_json(page, "chart-vpa-0")["layout"]["yaxis"]["title"]["text"] == "cpu (millicores)"


def model_mib(simulation: Simulation) -> float:
    request = simulation.model.memory_request
    assert request is not None
    return request / MIB


# -- queues -------------------------------------------------------------------------------------


def test_the_queues_chart_reads_the_buffer_the_pods_and_the_deepest_pod(run: RunData, tmp_path: Path) -> None:
    write_report(run, tmp_path / "report.html")
    traces = _traces((tmp_path / "report.html").read_text(encoding="utf-8"), "chart-queues")
    names = {name.split(",")[0].split(" (")[0]: trace for name, trace in traces.items()}
    assert names["buffered"]["y"] == _column("requests_buffered")
    assert names["held by the pods"]["y"] == _column("requests_processing")
    # The most one replica held at each interval's end, from the per-replica rows.
    assert names["the most one pod held"]["y"] == [max(held for *_, held in REPLICA_ROWS[t]) for t in TIMES_S]
    assert "chart-queues" not in dict(charts(run_with_nothing_waiting(run)))


def run_with_nothing_waiting(run: RunData) -> RunData:
    series = run.series.copy()
    series["requests_buffered"] = 0
    series["requests_processing"] = 0
    replica_series = run.replica_series.assign(requests_held=0)
    return dataclasses.replace(run, series=series, replica_series=replica_series)


def test_a_streams_lag_is_among_the_queues_and_a_lag_metric_is_no_cpu_target() -> None:
    """examples/keda/kafka-consumers.yaml to 15 minutes, its burst cut to 4: its HPA scales on the lag."""
    text = (EXAMPLES / "keda" / "kafka-consumers.yaml").read_text().replace("duration: 1h", "duration: 15m")
    text = text.replace("at: 30m, patch", "at: 14m, patch")
    run = RunData.from_simulation(_simulate(text))
    made = dict(charts(run))
    names = {trace.name: trace for trace in made["chart-queues"].data}
    lag = pd.to_numeric(run.series["consumer_lag"]).to_numpy(dtype=float)
    assert lag.max() > 0 and len(lag) <= MAX_POINTS
    assert list(names["consumer lag (messages)"].y) == [float(f"{v:.4g}") for v in lag]
    assert not [trace for trace in made["chart-cpu"].data if trace.name.endswith("target")]


# -- a day --------------------------------------------------------------------------------------


def test_a_real_days_report_stays_under_10_mb(tmp_path: Path) -> None:
    """examples/hpa-step.yaml for 24 hours at a few requests a second: 8,640 rows, 5,760 HPA syncs."""
    text = (EXAMPLES / "hpa-step.yaml").read_text().replace("duration: 40m", "duration: 24h")
    text = re.sub(
        r"  traffic:\n(    - .*\n)+", "  traffic: {type: sinusoidal, mean: 2/s, amplitude: 1.5/s, period: 6h}\n", text
    )
    simulation = _simulate(text + "  slo: {latency: 300ms, percentile: 95, errorRate: 1%}\n")
    run = RunData.from_simulation(simulation)
    assert run.simulated_ns == 24 * 3600 * SECOND and len(run.series) > MAX_POINTS
    page = render_report(run)
    assert len(page.encode("utf-8")) < 10 * 2**20
    made = dict(charts(run))
    assert {"chart-hpa-0", "chart-queues", "chart-latency-cdf"} <= set(made)
    for chart in made:
        figure = _figure_json(page, chart)
        assert all(len(trace.get("x") or []) <= MAX_POINTS for trace in figure["data"]), chart
        if chart not in UNTIMED:
            assert figure["layout"]["xaxis"]["range"][1] == "1970-01-02T00:00:00.000"
