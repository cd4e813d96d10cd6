"""spec.observed read in: the clocks lined up on the load's first sample, values scaled, bad files named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skenario.core.time import SECOND
from skenario.errors import SkenarioError
from skenario.scenario.loader import parse_scenario
from skenario.scenario.wiring.observed import read_observed_run
from skenario.scenario.wiring.prepare import prepare

SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: observed}
spec:
  duration: 5m
  workload: {replicas: 2, request: {cpuTime: 10ms}}
  traffic: {type: observed, file: load.csv, start: 30s}
  observed:
    replicas: {file: pods.csv, series: replicas}
    cpu: {file: pods.csv, series: cpu, scale: 0.01}
"""


def csv(path: Path, rows: list[tuple[int, str, float]]) -> None:
    path.write_text("timestamp,__name__,value\n" + "".join(f"{t},{n},{v}\n" for t, n, v in rows))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    csv(tmp_path / "load.csv", [(1000 + 15 * i, "load", 10.0) for i in range(20)])
    pods = [(1045 + 15 * i, "replicas", 2.0) for i in range(10)] + [(1045 + 15 * i, "cpu", 50.0) for i in range(10)]
    csv(tmp_path / "pods.csv", pods)
    return tmp_path


def test_simulated_zero_is_the_loads_first_sample_less_its_start(folder: Path) -> None:
    """The load's first sample (Unix 1000 s) is replayed at 30 s, so 970 s is simulated 0: the replica
    series that starts at 1045 s starts at 75 s; CPU in percent times 0.01 is a fraction."""
    scenario = parse_scenario(SCENARIO)
    observed = read_observed_run(scenario.spec, folder)
    assert observed.origin_ns == 970 * SECOND
    assert observed.replicas.times_ns[0] == 75 * SECOND
    assert observed.cpu is not None
    assert np.allclose(observed.cpu.values, 0.5)


def test_origin_set_in_the_file_wins(folder: Path) -> None:
    scenario = parse_scenario(SCENARIO.replace("    cpu:", "    origin: 1045\n    cpu:"))
    assert read_observed_run(scenario.spec, folder).replicas.times_ns[0] == 0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (("pods.csv, series: replicas}", "missing.csv}"), "spec.observed.replicas.file"),
        (("series: cpu", "series: memory"), "spec.observed.cpu.series"),
    ],
)
def test_a_bad_observed_file_is_said_when_the_scenario_is_checked(
    folder: Path, change: tuple[str, str], field: str
) -> None:
    scenario = parse_scenario(SCENARIO.replace(*change))
    with pytest.raises(SkenarioError) as info:
        prepare(scenario, base_dir=folder)
    assert info.value.field == field
