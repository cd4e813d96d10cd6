"""How soon a day-long run's page is usable in the dashboard, in a real browser (issue #36: within 2 s).

The run: `examples/hpa-step.yaml` (an HPA through a traffic step) for `--hours` simulated hours (24 by
default), kept in a temporary store. Each of `--rounds` rounds starts `skenario serve` over it, as a user
does, and Debian's Chromium, driven by Playwright, opens the run's page twice, each time in a fresh
browser context (nothing cached): the first load finds the server new (it reads and charts the run
then, and keeps both, `web.api.LoadedRuns`), the second finds the run kept. Measured on each load,
from the navigation's start, by the page's own clock (`performance.now()`):

    interactive   the page's view drawn: the run's figures, verdict, decisions, and the charts in view
                  (the others draw as they scroll into view): `window.skenarioReady`
    all charts    every chart drawn, the page scrolled through as a reader does

Beside it, the peer a user had before: the static report (`skenario report`) of the same run, one
self-contained file, opened from disk until all its charts are drawn (it draws every chart at once).
Reported: each figure's median over the rounds, the dashboard's over the report's, and whether the
median time to interactive, first and second load, is within `LIMIT_MS`. Nothing here is a test:
tests/benchmarks checks the script's output for shape at a small size.

Usage (from the repository root, with the virtualenv active; needs the `web` extra and Chromium)::

    python benchmarks/dashboard.py                   # a 24 h run, 5 rounds, a table
    python benchmarks/dashboard.py --hours 1 --rounds 1 --json
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright

from skenario.results.report import write_report
from skenario.results.store import RunStore
from skenario.runs import execute, open_run

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "examples" / "hpa-step.yaml"
LIMIT_MS = 2000.0
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def day_run(store: Path, hours: float) -> int:
    """The scenario run for `hours` into `store`: its run number."""
    text = SCENARIO.read_text().replace("duration: 40m", f"duration: {hours * 60:g}m")
    run = open_run(text, base_dir=SCENARIO.parent)
    done = execute(run, RunStore(store))
    assert done.run_id is not None
    return done.run_id


@contextmanager
def serving(store: Path) -> Iterator[str]:
    """`skenario serve` over `store` in a process of its own, as a user starts it: its address once it answers."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "skenario", "serve", "--store", str(store), "--port", str(port)]
    server = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    address = f"http://127.0.0.1:{port}"
    try:
        while not _answers(address):
            if server.poll() is not None:
                raise RuntimeError("the dashboard did not start")
            time.sleep(0.02)
        yield address
    finally:
        server.send_signal(signal.SIGINT)
        server.wait()


def _answers(address: str) -> bool:
    try:
        with urllib.request.urlopen(address + "/favicon.ico"):
            return True
    except OSError:
        return False


def scroll_through(page: Page) -> None:
    """Every chart scrolled to, and drawn."""
    charts = page.locator(".chart")
    for index in range(charts.count()):
        charts.nth(index).scroll_into_view_if_needed()
        page.locator(f".chart >> nth={index}").and_(page.locator("[data-drawn=true]")).wait_for()


def dashboard_load(browser: Browser, address: str) -> dict[str, float]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(0)
    page.goto(address)
    page.wait_for_function("window.skenarioReady !== undefined")
    interactive = float(page.evaluate("window.skenarioReady"))
    scroll_through(page)
    every = float(page.evaluate("performance.now()"))
    charts = page.locator(".chart").count()
    context.close()
    return {"interactive_ms": interactive, "all_charts_ms": every, "charts": charts}


def report_load(browser: Browser, report: Path, charts: int) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(0)
    page.goto(report.as_uri())
    page.wait_for_function(f"document.querySelectorAll('.chart svg.main-svg').length >= {charts}")
    drawn = float(page.evaluate("performance.now()"))
    context.close()
    return drawn


def measure(hours: float, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "store"
        run = day_run(store, hours)
        data = RunStore(store).load(run)
        report = Path(folder) / "report.html"
        write_report(data, report)
        loads, firsts, reports = [], [], []
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
            )
            for _ in range(rounds):
                with serving(store) as address:  # a server of its own each round: its first page is cold
                    firsts.append(dashboard_load(browser, f"{address}/runs/{run}")["interactive_ms"])
                    loads.append(dashboard_load(browser, f"{address}/runs/{run}"))
                reports.append(report_load(browser, report, _report_charts(report)))
            browser.close()
        first = statistics.median(firsts)  # the server reading and charting the run: its first page
        interactive = statistics.median(load["interactive_ms"] for load in loads)
        every = statistics.median(load["all_charts_ms"] for load in loads)
        static = statistics.median(reports)
        return {
            "hours": hours,
            "rounds": rounds,
            "requests": data.summary["requests_arrived"],
            "charts": int(loads[0]["charts"]),
            "report_bytes": report.stat().st_size,
            "first_interactive_ms": first,
            "interactive_ms": interactive,
            "all_charts_ms": every,
            "report_all_charts_ms": static,
            "interactive_x_report": interactive / static,
            "all_charts_x_report": every / static,
            "limit_ms": LIMIT_MS,
            "within_limit": max(first, interactive) <= LIMIT_MS,
        }


def _report_charts(report: Path) -> int:
    return report.read_text(encoding="utf-8").count('<div class="chart">')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=24.0, help="Simulated hours of the run.")
    parser.add_argument("--rounds", type=int, default=5, help="Page loads, each in a fresh context.")
    parser.add_argument("--json", action="store_true", help="One JSON object on stdout, nothing else.")
    args = parser.parse_args(argv)
    result = measure(args.hours, args.rounds)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.hours:g} h of {SCENARIO.name}: {result['requests']:,} requests, {result['charts']} charts")
    print(f"  dashboard, interactive          {result['interactive_ms']:8.0f} ms (median of {args.rounds})")
    print(f"  the first time (a new server)   {result['first_interactive_ms']:8.0f} ms")
    print(f"  dashboard, every chart drawn    {result['all_charts_ms']:8.0f} ms")
    print(
        f"  static report, every chart      {result['report_all_charts_ms']:8.0f} ms ({result['report_bytes']:,} bytes)"
    )
    print(f"  interactive / static report     {result['interactive_x_report']:8.2f}x")
    verdict = "within" if result["within_limit"] else "OVER"
    print(f"  {verdict} the {LIMIT_MS:.0f} ms asked for a page to be interactive")
    return 0


if __name__ == "__main__":
    sys.exit(main())
