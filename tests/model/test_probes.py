"""Readiness probes: readiness in steps of periodSeconds from the container's start (the prober worker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.model.probes import ReadinessProbe, ready_at
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

S = SECOND


@pytest.mark.parametrize(
    ("warm_up", "probe", "ready"),
    [
        (4 * S, ReadinessProbe(), 10 * S),  # ticks at 0, 10, 20 s: the first after the warm-up
        (0, ReadinessProbe(), 0),  # ready at the first probe, as the container starts
        (10 * S, ReadinessProbe(), 10 * S),  # a tick exactly at the warm-up's end finds it ready
        (12 * S, ReadinessProbe(), 20 * S),
        (4 * S, ReadinessProbe(initial_delay=15 * S), 20 * S),  # ticks before 15 s are skipped
        (4 * S, ReadinessProbe(period=3 * S), 6 * S),
        (4 * S, ReadinessProbe(success_threshold=3), 30 * S),  # 10, 20, 30 s: three in a row
    ],
)
def test_ready_at_the_first_probe_after_the_warm_up_and_the_initial_delay(
    warm_up: int, probe: ReadinessProbe, ready: int
) -> None:
    assert ready_at(100 * S, warm_up, probe) == 100 * S + ready


SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: probes}
spec:
  duration: 1m
  workload:
    replicas: 1
    initialReady: false
    request: {cpuTime: 10ms}
PROBE  traffic: {type: constant, rate: 1/s}
"""


def first_ready(probe: str) -> int | None:
    simulation = Simulation(parse_scenario(SCENARIO.replace("PROBE", probe)))
    simulation.run()
    (replica,) = simulation.model.replicas.values()
    return replica.activated_at


def test_a_launching_pod_is_ready_at_a_probe() -> None:
    # Launch: container start 1 s (from 1 ns, the first movement), then a 4 s warm-up.
    assert first_ready("") == 1 + 5 * S  # no probe: ready when the readiness stage ends
    assert first_ready("    readinessProbe: {}\n") == 1 + 11 * S  # probes at 1, 11 s from the container's start
    assert first_ready("    readinessProbe: {initialDelaySeconds: 15, periodSeconds: 5}\n") == 1 + 16 * S


def test_a_deployments_readiness_probe_is_read(tmp_path: Path) -> None:
    (tmp_path / "web.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
        "      - name: web\n        readinessProbe: {httpGet: {path: /healthz, port: 8080}, periodSeconds: 3}\n"
    )
    text = SCENARIO.replace("    replicas: 1\n", "    replicas: 1\n    deployment: web.yaml\n").replace("PROBE", "")
    simulation = Simulation(parse_scenario(text), base_dir=tmp_path)
    simulation.run()
    (replica,) = simulation.model.replicas.values()
    assert replica.activated_at == 1 + (1 + 6) * S  # ticks at 1, 4, 7 s: the first after 1 + 4 s


def test_a_bad_probe_names_its_field() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(SCENARIO.replace("PROBE", "    readinessProbe: {periodSeconds: 0}\n"))
    assert info.value.field == "spec.workload.readinessProbe.periodSeconds"
