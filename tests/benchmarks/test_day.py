"""benchmarks/day.py: the head of the day it runs is the scenario's, measured in a fresh process."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from skenario.cli import cli

day: Any = importlib.import_module("day")  # benchmarks/ is on the path (conftest.py)


def test_a_shorter_run_is_the_scenario_cut_to_its_first_hours(tmp_path: Path) -> None:
    whole = yaml.safe_load(day.SCENARIO.read_text(encoding="utf-8"))
    cut = yaml.safe_load(day.scenario_for(0.25, tmp_path).read_text(encoding="utf-8"))
    assert whole["spec"]["duration"] == "24h"
    assert cut["spec"]["duration"] == "900s"
    del whole["spec"]["duration"], cut["spec"]["duration"]
    assert cut == whole


def test_a_run_reports_what_the_cli_reports_for_the_same_scenario(tmp_path: Path) -> None:
    scenario = day.scenario_for(0.005, tmp_path)  # 18 s of traffic at about 300 requests/s
    measured = day.run_day(scenario, None)
    result = CliRunner().invoke(cli, ["run", str(scenario), "--no-store", "-o", "json", "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert measured["digest"] == summary["digest"]
    assert measured["requests"] == summary["requests_arrived"] > 0
    assert measured["x_real_time"] == 18 / measured["run_s"]


def test_the_floor_and_the_hosts_budget_for_a_thousand_times_real_time(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(day, "FLOOR_CUSTOMERS", 20_000)
    result = day.measure(0.005, None)
    run = result["current"]
    assert result["floor_us_per_customer"] > 0
    assert run["x_floor"] * result["floor_us_per_customer"] == pytest.approx(run["us_per_request"])  # a ratio, rounded
    # 1,000x real time: all of the 18 s's requests in 18 ms.
    assert result["target_us_per_request"] * run["requests"] / 1e6 * 1000 == pytest.approx(18)
    assert result["target_x_floor"] * result["floor_us_per_customer"] == pytest.approx(result["target_us_per_request"])
