"""The HTML report: self-contained, user text escaped, and its charts really render in a headless Chromium."""

from __future__ import annotations

import contextlib
import dataclasses
import html
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import imread

from skenario.results import analysis
from skenario.results.report import CHART_IDS, write_report
from skenario.results.rundata import RunData

HOSTILE = '<img src=x onerror="alert(1)">&</script>'


@pytest.fixture
def hostile_run(make_run: Callable[..., RunData]) -> RunData:
    """The hand-made run with markup in its name and in an event's id."""
    timeline = [(25_000_000_000, HOSTILE, "Patch", "traffic", HOSTILE, {}), *make_run().timeline.itertuples(False)]
    timeline.sort(key=lambda entry: entry[0])
    return make_run(name=HOSTILE, timeline=timeline)


def _colours(rgb: np.ndarray) -> int:
    """How many distinct colours an (n, 3) array of 0..1 floats holds."""
    packed = (np.round(rgb * 255).astype(np.uint32) * np.array([1 << 16, 1 << 8, 1], dtype=np.uint32)).sum(axis=1)
    return int(np.count_nonzero(np.bincount(packed)))


def test_the_page_is_self_contained_and_has_every_chart(run: RunData, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    write_report(run, path)
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.IGNORECASE)  # plotly.js is inline, no CDN
    assert not re.search(r"<link\b", page, re.IGNORECASE)
    assert "Plotly.newPlot" in page
    for chart in CHART_IDS:
        assert page.count(f'id="{chart}"') == 1
    assert "0123456789abcdef" in page and "Succeeded" in page
    assert list(tmp_path.iterdir()) == [path]


def test_user_text_is_escaped(hostile_run: RunData, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    write_report(hostile_run, path)
    page = path.read_text(encoding="utf-8")
    assert "<img" not in page
    assert page.count("</script>") == page.count("<script")  # nobody closed a script early
    assert "<title>skenario: &lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&lt;/script&gt;</title>" in page


class _Charts(HTMLParser):
    """Which chart divs of a rendered DOM hold plotly's SVG, and the text shown in each."""

    def __init__(self) -> None:
        super().__init__()
        self.depth: dict[str, int] = {}
        self.rendered: set[str] = set()
        self.texts: dict[str, list[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        open_charts = [chart for chart, depth in self.depth.items() if depth > 0]
        if tag == "div":
            for chart in open_charts:
                self.depth[chart] += 1
            if attributes.get("id") in CHART_IDS:
                self.depth[str(attributes["id"])] = 1
        for chart in open_charts:
            if tag == "svg" and "main-svg" in (attributes.get("class") or "").split():
                self.rendered.add(chart)

    def handle_data(self, data: str) -> None:
        for chart, depth in self.depth.items():
            if depth > 0:
                self.texts.setdefault(chart, []).append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "div":
            for chart, depth in self.depth.items():
                if depth > 0:
                    self.depth[chart] = depth - 1


def _chromium(*arguments: str, profile: Path) -> str:
    """Run headless Chromium until it exits, then kill what is left of its process group (its helpers).

    The page's own timers run on Chromium's virtual clock (`--virtual-time-budget`, 10 s of it),
    which advances as fast as the machine can go: no wall-clock limit there either."""
    binary = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if binary is None:
        # Only where no Chromium is installed; CI installs it (.ci/run), so there this always runs.
        pytest.skip("no Chromium: the report's rendering is not checked (`apt-get install chromium` on Debian)")
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
        *arguments,
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = process.communicate()  # until it exits: no wall-clock limit (the suite's net ends a hang)
    finally:
        with contextlib.suppress(ProcessLookupError):  # its helpers too, whether it ended or the test did
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, f"Chromium failed ({process.returncode}): {stderr[-2000:]}"
    return stdout


def test_the_charts_render_in_a_browser(hostile_run: RunData, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    write_report(hostile_run, path)
    dom = _chromium("--dump-dom", path.as_uri(), profile=tmp_path / "profile-dom")
    charts = _Charts()
    charts.feed(re.sub(r"<script\b.*?</script>", "", dom, flags=re.DOTALL))  # 5 MB of plotly.js: slow to parse
    assert charts.rendered == set(CHART_IDS), f"plotly drew no SVG in {set(CHART_IDS) - charts.rendered}"
    for chart in CHART_IDS:
        # Every chart marks every event, the hostile id shown as text, not run as markup.
        assert {"vpa-bump", "crash", HOSTILE} <= set(charts.texts[chart]), chart
    assert "<img" not in dom

    screenshot = tmp_path / "report.png"
    _chromium(
        f"--screenshot={screenshot}",
        "--window-size=1400,3000",
        "--hide-scrollbars",
        path.as_uri(),
        profile=tmp_path / "profile-shot",
    )
    pixels = imread(screenshot)
    assert pixels.shape[:2] == (3000, 1400)
    rgb = pixels[..., :3].reshape(-1, 3)
    assert _colours(rgb) > 100  # text, tables and coloured traces, not a blank page
    assert (rgb.min(axis=1) < 0.9).mean() > 0.01


def test_a_real_runs_report_shows_its_decisions_and_events(real_run: RunData, tmp_path: Path) -> None:
    path = tmp_path / "real.html"
    write_report(real_run, path)
    page = path.read_text(encoding="utf-8")
    for chart in CHART_IDS:
        assert page.count(f'id="{chart}"') == 1
    for event_id in ("crash", "metrics-down", "metrics-up", "end"):
        assert page.count(f'"text":"{event_id}"') == len(CHART_IDS)  # an annotation on every chart
    assert html.escape(str(real_run.message)) in page  # done event 'end' at 9m
    # Each decision is a marker whose hover begins with the autoscaler and goes on to its inputs.
    assert page.count('"hpa at ') == len(analysis.decisions(real_run)) > 0
    assert "metrics.cpu resource utilization (percentage of request).usage_ratio: " in page


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
    assert f'<table class="objectives {verdict}"><tr><th>verdict</th><td>{verdict}</td></tr>' in page
    assert "<th>latency_target_ms</th><td>1000</td>" in page and "<th>percentile</th><td>95</td>" in page
    assert '"text":"p95 objective"' in page

    write_report(stated, tmp_path / "given.html", objectives={"latency_ms": 1, "percentile": 50, "error_rate": 0})
    page = (tmp_path / "given.html").read_text(encoding="utf-8")
    assert '<table class="objectives missed">' in page and "<th>latency_target_ms</th><td>1</td>" in page

    write_report(real_run, tmp_path / "none.html")
    assert "No objectives" in (tmp_path / "none.html").read_text(encoding="utf-8")
