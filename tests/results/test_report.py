"""The HTML report: self-contained, charts first on an hh:mm axis with events marked, the summary's figures,
user text escaped, a day of results under 10 MB, and its charts really drawn in Chromium (Playwright)."""

from __future__ import annotations

import dataclasses
import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Page

from skenario.core.time import SECOND, format_clock
from skenario.recording.recorder import COLUMNS, LIFECYCLE_COLUMNS
from skenario.recording.summary import Summary
from skenario.results import analysis
from skenario.results.readout import summary_rows
from skenario.results.report import CHART_IDS, MAX_POINTS, UNTIMED, charts, thin, write_report
from skenario.results.rundata import TIMELINE_COLUMNS, RunData
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from tests.results.conftest import summary

HOSTILE = '<img src=x onerror="alert(1)">&</script>'
S = SECOND


@pytest.fixture
def hostile_run(make_run: Callable[..., RunData]) -> RunData:
    """The hand-made run with markup in its name and in an event's id."""
    timeline = [(25_000_000_000, HOSTILE, "Patch", "traffic", HOSTILE, {}), *make_run().timeline.itertuples(False)]
    timeline.sort(key=lambda entry: entry[0])
    return make_run(name=HOSTILE, timeline=timeline)


def _figure_json(page: str, div_id: str) -> dict[str, Any]:
    """The data and layout plotly is given for one chart, read back from the page."""
    start = page.index(f'id="{div_id}"')
    call = page.index("Plotly.newPlot(", start)
    arguments = page[page.index(",", call) + 1 :]
    decoder = json.JSONDecoder()
    data, end = decoder.raw_decode(arguments.lstrip())
    rest = arguments.lstrip()[end:].lstrip().removeprefix(",").lstrip()
    layout, _ = decoder.raw_decode(rest)
    return {"data": data, "layout": layout}


def test_the_page_is_self_contained_with_charts_before_tables(run: RunData, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    write_report(run, path)
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.IGNORECASE)  # plotly.js is inline, no CDN
    assert not re.search(r"<link\b", page, re.IGNORECASE)
    ids = [div_id for div_id, _ in charts(run)]
    assert set(CHART_IDS) <= set(ids)
    for chart in ids:
        assert page.count(f'id="{chart}"') == 1
    # Charts first: every chart comes before the first table, and the run's facts are in the tables.
    assert max(page.index(f'id="{chart}"') for chart in ids) < page.index("<table")
    assert "0123456789abcdef" in page and "Completed" in page
    assert list(tmp_path.iterdir()) == [path]


def test_the_tables_say_what_the_summary_says_with_human_labels(run: RunData, tmp_path: Path) -> None:
    write_report(run, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    for label, value in summary_rows(Summary.from_dict(run.summary)):
        assert f"<tr><th>{html.escape(label)}</th><td>{html.escape(value)}</td></tr>" in page
    # No internal keys or bare nanoseconds: `latency_p50_ns 30000000` reads `latency p50 30.0 ms`.
    text = re.sub(r"<script\b.*?</script>", "", page, flags=re.DOTALL)  # plotly.js and the charts' data
    assert "latency_p50_ns" not in text and "simulated_ns" not in text and "30000000" not in text
    assert "<tr><th>latency p50</th><td>30.0 ms</td></tr>" in page
    # The hand-made run's cost: 130 pod-seconds bound (r3 stayed Pending and is not billed).
    assert f"<tr><th>pod-hours (billed from binding)</th><td>{130 / 3600:.2f}</td></tr>" in page
    assert "<tr><th>pods never bound (not billed)</th><td>1</td></tr>" in page
    assert "<tr><th>time at maxReplicas</th><td>18%</td></tr>" in page  # 10 s of 55 s at its bound of 4


def test_the_time_axis_reads_hh_mm_and_every_chart_marks_every_event(run: RunData, tmp_path: Path) -> None:
    write_report(run, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    events = analysis.events(run)
    for chart, _ in charts(run):
        if chart in UNTIMED:  # the latency CDF: x is latency
            continue
        figure = _figure_json(page, chart)
        axis = figure["layout"]["xaxis"]
        assert axis["type"] == "date" and axis["tickformat"] == "%H:%M"
        assert axis["range"] == ["1970-01-01T00:00:00.000", "1970-01-01T00:00:55.000"]
        marked = {note["text"] for note in figure["layout"]["annotations"] if note.get("textangle") == -90}
        assert set(events["id"]) <= marked, chart
        lines = [shape["x0"] for shape in figure["layout"]["shapes"] if shape["type"] == "line"]
        # The VPA patch at 20 s and the crash at 30 s, as instants on the axis.
        assert {"1970-01-01T00:00:20.000", "1970-01-01T00:00:30.000"} <= set(lines)
    replicas = _figure_json(page, "chart-replicas")
    names = [trace["name"] for trace in replicas["data"]]
    assert names[:3] == ["desired", "max (autoscalers)", "Pending (no node)"]
    pending = next(trace for trace in replicas["data"] if trace["name"] == "Pending (no node)")
    assert pending["y"] == [0, 0, 1, 1, 0, 0]
    assert pending["x"][0] == "1970-01-01T00:00:10.000"


def test_each_hpa_metric_is_drawn_against_its_target(run: RunData, tmp_path: Path) -> None:
    write_report(run, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    figure = _figure_json(page, "chart-hpa-0")
    traces = {trace["name"]: trace for trace in figure["data"]}
    # The hand-made HPA read 120%, 150% and 90% of request against its target of 100%.
    assert traces["cpu"]["y"] == [120, 150, 90]
    assert traces["cpu: target"]["y"] == [100, 100, 100]


def test_user_text_is_escaped(hostile_run: RunData, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    write_report(hostile_run, path)
    page = path.read_text(encoding="utf-8")
    assert "<img" not in page
    assert page.count("</script>") == page.count("<script")  # nobody closed a script early
    assert "<title>skenario: &lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&lt;/script&gt;</title>" in page


def test_the_charts_render_in_a_browser(hostile_run: RunData, tmp_path: Path, browser_page: Page) -> None:
    path = tmp_path / "report.html"
    write_report(hostile_run, path, objectives={"latency_ms": 100, "percentile": 95, "error_rate": 0.01})
    errors: list[str] = []
    browser_page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    browser_page.on("pageerror", lambda error: errors.append(str(error)))
    browser_page.goto(path.as_uri())
    for chart, _ in charts(hostile_run):
        drawn = browser_page.locator(f"#{chart} svg.main-svg")
        drawn.first.wait_for(state="attached")
        if chart in UNTIMED:
            continue
        # Every chart marks every event, the hostile id shown as text, not run as markup.
        texts = browser_page.locator(f"#{chart} .annotation-text").all_text_contents()
        assert {"vpa-bump", "crash", HOSTILE} <= set(texts), chart
        ticks = browser_page.locator(f"#{chart} .xtick text").all_text_contents()
        assert ticks and all(re.fullmatch(r"\d\d:\d\d", tick) for tick in ticks), (chart, ticks)
    assert browser_page.locator("img").count() == 0
    assert errors == []
    picture = browser_page.screenshot(full_page=True)
    assert len(picture) > 50_000  # text, tables and coloured traces, not a blank page


def test_a_real_runs_report_shows_its_decisions_and_events(real_run: RunData, tmp_path: Path) -> None:
    path = tmp_path / "real.html"
    write_report(real_run, path)
    page = path.read_text(encoding="utf-8")
    shown = [chart for chart, _ in charts(real_run)]
    assert "chart-hpa-0" in shown and "chart-cluster" not in shown  # an HPA, no spec.cluster
    timed = [chart for chart in shown if chart not in UNTIMED]
    for event_id in ("crash", "metrics-down", "metrics-up", "end"):
        assert page.count(f'"text":"{event_id}"') == len(timed)  # an annotation on every chart of time
    assert html.escape(str(real_run.message)) in page  # done event 'end' at 9m
    # Each decision is a marker whose hover begins with the autoscaler and the time it decided.
    decisions = analysis.decisions(real_run)
    assert page.count('"hpa at ') == len(decisions) > 0
    first = round(float(decisions.index.min()) * SECOND)  # the HPA's first sync, at its phase
    assert f'"hpa at {format_clock(first)}' in page


def test_a_run_on_nodes_charts_its_cluster(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "examples" / "hpa-cluster-autoscaler.yaml").read_text()
    text = text.replace("duration: 40m", "duration: 8m")
    simulation = Simulation(parse_scenario(text), base_dir=Path(__file__).resolve().parents[2] / "examples")
    simulation.run()
    run = RunData.from_simulation(simulation)
    write_report(run, tmp_path / "nodes.html")
    page = (tmp_path / "nodes.html").read_text(encoding="utf-8")
    figure = _figure_json(page, "chart-cluster")
    nodes = next(trace for trace in figure["data"] if trace["name"] == "nodes")
    assert nodes["y"] == [float(v) for v in run.series["nodes"]]  # 48 rows: no thinning


def test_a_run_with_nothing_recorded_still_has_a_page(empty_run: RunData, tmp_path: Path) -> None:
    write_report(empty_run, tmp_path / "empty.html")
    page = (tmp_path / "empty.html").read_text(encoding="utf-8")
    assert all(f'id="{chart}"' in page for chart in CHART_IDS)
    assert "not started" in page and "No scenario events." in page


def test_the_run_is_judged_by_its_scenarios_objectives_or_the_ones_given(real_run: RunData, tmp_path: Path) -> None:
    stated = dataclasses.replace(
        real_run, scenario=real_run.scenario + "  slo: {latency: 1s, percentile: 95, errorRate: 2%}\n"
    )
    write_report(stated, tmp_path / "stated.html")
    page = (tmp_path / "stated.html").read_text(encoding="utf-8")
    expected = analysis.slo_summary(real_run, latency_ms=1000, percentile=95, error_rate=0.02)
    verdict = "met" if expected["met"] else "missed"
    assert f'<p class="verdict {verdict}">objectives {verdict}</p>' in page
    assert f'<table class="objectives {verdict}"><tr><th>verdict</th><td>{verdict}</td></tr>' in page
    assert "<tr><th>objective: latency p95</th><td>at most 1000 ms</td></tr>" in page
    assert '"text":"p95 objective"' in page

    write_report(stated, tmp_path / "given.html", objectives={"latency_ms": 1, "percentile": 50, "error_rate": 0})
    page = (tmp_path / "given.html").read_text(encoding="utf-8")
    assert (
        '<table class="objectives missed">' in page and "<th>objective: latency p50</th><td>at most 1 ms</td>" in page
    )

    write_report(real_run, tmp_path / "none.html")
    assert "No objectives" in (tmp_path / "none.html").read_text(encoding="utf-8")


# -- a day of results ----------------------------------------------------------------------------


def _a_day(rows: int = 8640, replicas: int = 200, decisions: int = 43_200) -> RunData:
    """A day recorded every 10 s, with an HPA deciding every 2 s (as often as a KPA ticks) and many replicas."""
    rng = np.random.default_rng(7)
    times = (np.arange(1, rows + 1) * 10 * S).tolist()
    series = pd.DataFrame({name: rng.random(rows) * 100 for name in COLUMNS})
    series["time_ns"] = times
    series["replicas_max"] = 300
    series.index = pd.Index(series["time_ns"] / S, name="time_s")
    timeline = [
        (
            (k + 1) * 2 * S,
            "hpa",
            "Decision",
            "workload",
            "",
            {
                "desired": int(50 + 40 * np.sin(k / 2000)),
                "metrics": {"cpu": {"utilization": 60 + k % 40, "target": 70}},
            },
        )
        for k in range(decisions)
    ]
    lifecycles = pd.DataFrame(
        [(r, 0, 0, 0, None, 500, None, 10 * S, None, 0) for r in range(replicas)],
        columns=list(LIFECYCLE_COLUMNS),
    )
    replica_series = pd.DataFrame(
        {
            "time_ns": np.repeat(times, 5),
            "replica": np.tile(np.arange(5), rows),
            "state": "active",
            "cpu_utilisation": 0.5,
            "requests_held": 1,
        }
    )
    replica_series["time_s"] = replica_series["time_ns"] / S
    return RunData(
        id=1,
        name="a-day",
        seed=1,
        phase="Completed",
        message=None,
        digest="f" * 16,
        simulated_ns=rows * 10 * S,
        summary=summary(),
        series=series,
        replica_series=replica_series,
        replicas=lifecycles,
        timeline=pd.DataFrame(timeline, columns=list(TIMELINE_COLUMNS)),
        scenario="apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {name: a-day}\n",
    )


def test_a_day_of_results_stays_under_10_mb(tmp_path: Path) -> None:
    day = _a_day()
    write_report(day, tmp_path / "day.html")
    size = (tmp_path / "day.html").stat().st_size
    assert size < 10 * 2**20, f"{size / 2**20:.1f} MiB"
    page = (tmp_path / "day.html").read_text(encoding="utf-8")
    for chart, _ in charts(day):
        figure = _figure_json(page, chart)
        assert all(len(trace.get("x") or []) <= MAX_POINTS for trace in figure["data"]), chart
        if chart not in UNTIMED:
            assert figure["layout"]["xaxis"]["tickformat"] == "%H:%M"  # exactly a day: no day count yet


def test_thinning_keeps_the_peaks_and_the_mean() -> None:
    frame = pd.DataFrame(
        {"rate": np.ones(3000), "p99": np.ones(3000)}, index=pd.Index(np.arange(1, 3001.0), name="time_s")
    )
    frame.loc[1234.0, "p99"] = 99.0  # one spike
    frame.loc[1234.0, "rate"] = 3.0
    thinned = thin(frame, peaks=("p99",))
    assert len(thinned) == MAX_POINTS  # buckets of 2
    assert thinned["p99"].max() == 99.0  # the spike kept
    assert thinned["rate"].max() == 2.0  # averaged with its neighbour in the bucket (1233, 1234)
    assert thinned.index[-1] == 3000.0 and thinned.index[0] == 2.0  # each bucket at its last row's time
    assert thinned["rate"].mean() == pytest.approx(frame["rate"].mean())


def test_a_kpas_chart_shades_its_panic_and_draws_the_ready_pods_target(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    text = (examples / "kpa-container-concurrency.yaml").read_text().replace("duration: 6m", "duration: 3m")
    simulation = Simulation(parse_scenario(text), base_dir=examples)
    simulation.run()
    run = RunData.from_simulation(simulation)
    write_report(run, tmp_path / "kpa.html")
    figure = _figure_json((tmp_path / "kpa.html").read_text(encoding="utf-8"), "chart-kpa-0")
    decisions = analysis.decisions(run, "kpa")
    # Each stretch of decisions in panic is one shaded band, from its first decision to the first after it.
    panic = decisions["panic"].astype(bool).to_numpy()
    starts = int(panic[0]) + int(((~panic[:-1]) & panic[1:]).sum())
    bands = [shape for shape in figure["layout"]["shapes"] if shape["type"] == "rect"]
    assert starts > 0 and len(bands) == starts
    traces = {trace["name"]: trace for trace in figure["data"]}
    assert {"stable window", "panic window"} <= set(traces)
    # The ready pods' target: the 0.7 per pod (containerConcurrency 1 at 70%) times the ready pods.
    target = next(name for name in traces if name.startswith("ready pods × target"))
    assert target == "ready pods × target (0.7)"
    ready = decisions["ready"].astype(float).to_numpy()
    assert traces[target]["y"] == [float(f"{v:.4g}") for v in ready * 0.7]
