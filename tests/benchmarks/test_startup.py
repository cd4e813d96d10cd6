"""`benchmarks/startup.py` runs each command, ours and a baseline's, and reports the CPU it took: the
figures are checked for shape, never against a clock (`tests/cli/test_lazy.py` holds the property)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchmarks import BENCHMARKS

SRC = BENCHMARKS.parent / "src"


def test_one_round_against_this_checkout_as_its_own_baseline() -> None:
    command = [sys.executable, str(BENCHMARKS / "startup.py"), "--rounds", "1", "--json", "--baseline", str(SRC.parent)]
    summary = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    assert list(summary["commands"]) == ["--help", "--version", "run --help"]
    for row in summary["commands"].values():
        assert row["cpu_s"] > 0 and row["baseline_cpu_s"] > 0
        assert row["x_baseline"] == pytest.approx(row["cpu_s"] / row["baseline_cpu_s"])
    assert isinstance(summary["under_limit"], bool) and summary["limit_s"] == 0.3


def test_a_baseline_without_skenario_is_refused(tmp_path: Path) -> None:
    command = [sys.executable, str(BENCHMARKS / "startup.py"), "--rounds", "1", "--baseline", str(tmp_path)]
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    assert finished.returncode != 0 and "no skenario package" in finished.stderr
