"""`benchmarks/dashboard.py` opens a run's page in Chromium and times it: its output is checked for shape at a
small size, never against a clock (the figures are the benchmark's, in docs/background/performance.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.benchmarks import BENCHMARKS
from tests.conftest import CHROMIUM


def test_one_round_of_an_hour_long_run() -> None:
    if CHROMIUM is None:
        pytest.skip("no Chromium: the dashboard is not timed in a browser (`apt-get install chromium` on Debian)")
    command = [sys.executable, str(BENCHMARKS / "dashboard.py"), "--hours", "1", "--rounds", "1", "--json"]
    result = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    assert result["hours"] == 1 and result["rounds"] == 1 and result["requests"] > 0
    assert result["charts"] >= 8  # the report's charts every run has, and the decisions
    assert result["first_interactive_ms"] > 0 and 0 < result["interactive_ms"] <= result["all_charts_ms"]
    assert result["interactive_x_report"] == pytest.approx(result["interactive_ms"] / result["report_all_charts_ms"])
    slowest = max(result["first_interactive_ms"], result["interactive_ms"])
    assert result["within_limit"] == (slowest <= result["limit_ms"] == 2000)
