"""The Python API: `skenario.sweep` and `skenario.tune` load the sweep extra only when called, and take
the command line's settings as Python values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import skenario
from skenario.sweeps import api
from tests.sweeps.test_runner import SCENARIO

EXTRA = ("optuna", "scipy", "distributed")


def test_importing_skenario_or_its_commands_loads_none_of_the_sweep_extra() -> None:
    # Nor pandas: `skenario run` starts without it (the layering's rule), and so does every command.
    for module in ("skenario", "skenario.cli"):
        program = f"import sys, {module}; print(sorted(m for m in {(*EXTRA, 'pandas')!r} if m in sys.modules))"
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
        assert done.stdout.strip() == "[]", module


def test_the_packages_names_are_the_apis_functions() -> None:
    assert skenario.sweep is api.sweep and skenario.tune is api.tune
    with pytest.raises(AttributeError, match="no attribute 'sweeps_of'"):
        skenario.sweeps_of  # noqa: B018


def test_settings_as_python_values_are_the_command_lines(tmp_path: Path) -> None:
    file = tmp_path / "small.yaml"
    file.write_text(SCENARIO)
    as_values = skenario.sweep(
        file, {"workload.replicas": [1, 2], "workload.request.timeout": "1s"}, seeds=2, runs=True
    )
    as_text = skenario.sweep(file, ["workload.replicas=1,2", "workload.request.timeout=1s"], seeds=2, runs=True)
    keep = ["point", "seed", "workload.replicas", "workload.request.timeout", "digest"]
    assert as_values[keep].equals(as_text[keep])
    assert list(as_values["workload.replicas"]) == [1, 1, 2, 2]
