"""benchmarks/fluid.py: its variants are week.yaml cut or rescaled as it says, measured in a fresh process."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from skenario.cli import cli
from skenario.core.time import parse_duration

fluid: Any = importlib.import_module("fluid")  # benchmarks/ is on the path (conftest.py)


def test_the_week_is_a_week_of_ten_thousand_requests_a_second_with_an_hpa() -> None:
    spec = yaml.safe_load(fluid.SCENARIO.read_text(encoding="utf-8"))["spec"]
    assert (spec["mode"], spec["duration"], spec["traffic"]["mean"]) == ("fluid", "168h", "10000/s")
    assert spec["autoscalers"][0]["type"] == "hpa"


@pytest.mark.parametrize("rate", [1_000, 100_000])
def test_a_rate_variant_keeps_the_load_per_core(tmp_path: Path, rate: int) -> None:
    """The offered load, rate x CPU time, is the week's 10,000/s x 5 ms = 50 cores on 80 fixed replicas."""
    spec = yaml.safe_load(fluid.variant(tmp_path, "r", hours=24, rate=rate).read_text(encoding="utf-8"))["spec"]
    cpu_s = parse_duration(spec["workload"]["request"]["cpuTime"]["mean"]) / 1e9
    assert rate * cpu_s == pytest.approx(50.0)
    assert "autoscalers" not in spec and spec["workload"]["replicas"] == 80 and spec["duration"] == "86400s"


def test_a_run_reports_what_the_cli_reports(tmp_path: Path) -> None:
    scenario = fluid.variant(tmp_path, "head", hours=0.01)  # 36 s of the week, as flows
    measured = fluid.run(scenario)
    result = CliRunner().invoke(cli, ["run", str(scenario), "--no-store", "-o", "json", "--no-progress"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert measured["digest"] == summary["digest"] and summary["mode"] == "fluid"
    assert measured["simulated_h"] == pytest.approx(0.01)
