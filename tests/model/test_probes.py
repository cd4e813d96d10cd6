"""Readiness probes: readiness in steps of periodSeconds from the container's start (the prober worker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skenario.core.time import MINUTE, SECOND
from skenario.errors import ScenarioError
from skenario.model.probes import ReadinessProbe, StartupProbe, ready_at, startup_outcome
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


# -- startup probes --------------------------------------------------------------------------------

STARTUP = StartupProbe()  # Kubernetes' defaults: every 10 s, 3 failures


@pytest.mark.parametrize(
    ("probe", "warm_up", "outcome"),
    [
        (STARTUP, 4 * S, (True, 10 * S)),  # fails at 0 s, passes at 10 s
        (STARTUP, 20 * S, (True, 20 * S)),  # fails at 0 and 10 s, passes at 20 s
        (STARTUP, 25 * S, (False, 20 * S)),  # fails at 0, 10 and 20 s: killed at the third
        (StartupProbe(initial_delay=15 * S), 40 * S, (True, 40 * S)),  # counts from 20 s: fails at 20, 30
        (StartupProbe(initial_delay=15 * S), 50 * S, (False, 40 * S)),  # fails at 20, 30 and 40 s
        (StartupProbe(failure_threshold=1), 0, (True, 0)),  # an application ready at once passes the first
    ],
)
def test_a_startup_probe_passes_at_the_first_tick_after_the_warm_up_unless_it_failed_too_often(
    probe: StartupProbe, warm_up: int, outcome: tuple[bool, int]
) -> None:
    assert startup_outcome(0, warm_up, probe) == outcome


CRASH_LOOP = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: startup}
spec:
  duration: 5m
  workload:
    replicas: 1
    initialReady: false
    request: {cpuTime: 10ms}
    launch: {scheduling: 0s, imagePull: 0s, containerStart: 1s, readiness: WARM_UP}
    startupProbe: {httpGet: {path: /started, port: 8080}}
  traffic: {type: constant, rate: 1/s}
"""


def test_a_warm_up_the_startup_probe_allows_is_ready_at_its_first_success() -> None:
    """The container starts at 1 s and answers at 16 s: the probe fails at 1 and 11 s and passes at 21 s."""
    simulation = Simulation(parse_scenario(CRASH_LOOP.replace("WARM_UP", "15s")))
    simulation.run()
    (replica,) = simulation.model.replicas.values()
    assert replica.activated_at == 1 + 21 * S
    assert simulation.model.startup_probe_kills == 0


def test_a_warm_up_longer_than_the_startup_probe_allows_crash_loops() -> None:
    """Warm-up 25 s, probes every 10 s from the container's start, 3 failures: killed 20 s after
    each start; the kubelet restarts it after 0, 10, 20, 40, 80 s (`doBackOff`) and it takes 1 s
    to start: starts at 1, 22, 53, 94, 155, 256 s, kills at 21, 42, 73, 114, 175, 276 s. It is
    never ready in the 5 minutes."""
    simulation = Simulation(parse_scenario(CRASH_LOOP.replace("WARM_UP", "25s")))
    simulation.run()
    (replica,) = simulation.model.replicas.values()
    assert replica.activated_at is None
    assert simulation.model.startup_probe_kills == 6 == replica.restarts


def test_a_deployments_startup_probe_is_read(tmp_path: Path) -> None:
    (tmp_path / "web.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
        "      - name: web\n        startupProbe: {httpGet: {path: /started, port: 8080}, failureThreshold: 1}\n"
    )
    text = CRASH_LOOP.replace("WARM_UP", "15s").replace(
        "    replicas: 1\n", "    replicas: 1\n    deployment: web.yaml\n"
    )
    text = text.replace("    startupProbe: {httpGet: {path: /started, port: 8080}}\n", "")
    simulation = Simulation(parse_scenario(text), base_dir=tmp_path)
    simulation.run(until="30s")
    # One failure is too many: each start fails its first probe at once, so kills come at 1 s, 2 s
    # (restarted at once) and 13 s (after 10 s of back-off and 1 s to start); the next start is at 33 s.
    assert simulation.model.startup_probe_kills == 3


# -- image pulls on nodes --------------------------------------------------------------------------

PULLS = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: pulls}
spec:
  duration: 2m
  cluster: {nodes: [{name: node, count: 1, cpu: 4, memory: 16Gi}]}
  workload:
    replicas: 1
    initialReady: false
    POLICY
    resources: {requests: {cpu: 1000m}}
    request: {cpuTime: 10ms}
    launch: {scheduling: 0s, imagePull: 30s, containerStart: 1s, readiness: 0s}
  traffic: {type: constant, rate: 1/s}
  events:
    - {id: up, at: 1m, patch: {target: workload, patch: {replicas: 3}}}
"""


@pytest.mark.parametrize(("policy", "later_ready_after"), [("IfNotPresent", 1 * S), ("Always", 31 * S)])
def test_a_node_that_pulled_the_image_starts_later_pods_without_pulling(policy: str, later_ready_after: int) -> None:
    """The first pod pulls for 30 s; the two made at 1 m land on the same node, which holds the
    image by then: with IfNotPresent they start 1 s later, with Always they pull again."""
    simulation = Simulation(parse_scenario(PULLS.replace("POLICY", f"imagePullPolicy: {policy}")))
    simulation.run()
    first, *later = sorted(simulation.model.replicas.values(), key=lambda r: r.id)
    assert first.activated_at is not None and first.activated_at - 31 * S in (0, 1)  # 1 ns: a launch at 0
    assert [r.activated_at for r in later] == [MINUTE + later_ready_after] * 2
