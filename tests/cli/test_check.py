"""Pre-flight: `skenario check` estimates a run from the scenario alone; `run` refuses one past the limits.
KEP-140 input (a KEP-140 Scenario, a kube-scheduler-simulator export or recording) is checked as
`run --dry-run` checks it: its timeline run in memory."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from skenario.cli import cli
from skenario.scenario.build.prepare import prepare
from skenario.scenario.loader import parse_scenario
from skenario.scenario.preflight import LIMITS, estimate

ROOT = Path(__file__).resolve().parents[2]
HUGE = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: huge}
spec:
  duration: DURATION
  workload: {replicas: REPLICAS, request: {cpuTime: 10ms}}
  traffic: {type: constant, rate: 100/s}
  recording: {interval: INTERVAL}
"""


def huge(duration: str = "1h", replicas: str = "2", interval: str = "10s") -> str:
    return HUGE.replace("DURATION", duration).replace("REPLICAS", replicas).replace("INTERVAL", interval)


def test_the_estimate_counts_requests_from_the_rates_and_rows_from_the_recording() -> None:
    """100/s for an hour is 360,000 requests; 360 intervals of 10 s, each a row plus one per replica."""
    cost = estimate(prepare(parse_scenario(huge())))
    assert cost.requests == 360_000
    assert cost.rows == 360 * (1 + 2)
    assert cost.over() == []


@pytest.mark.parametrize(
    ("scenario", "limit"),
    [
        (huge(replicas="10000000"), "replicas"),
        (huge(interval="1ns"), "rows recorded"),
        (huge(duration="10000000d"), "of wall time"),
    ],
)
def test_run_refuses_a_runaway_in_one_line_unless_forced(tmp_path: Path, scenario: str, limit: str) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text(scenario)
    result = CliRunner().invoke(cli, ["run", str(path), "--no-store", "--no-progress"])
    assert result.exit_code == 2
    assert "refused" in result.output and limit in result.output and "--force" in result.output
    assert "Traceback" not in result.output


def test_check_prints_the_estimate_and_the_limits_it_passes(tmp_path: Path) -> None:
    good = CliRunner().invoke(cli, ["check", str(ROOT / "examples" / "quickstart.yaml")])
    assert good.exit_code == 0 and "valid" in good.output and "over the limit" not in good.output
    path = tmp_path / "huge.yaml"
    path.write_text(huge(replicas="10000000"))
    bad = CliRunner().invoke(cli, ["check", str(path)])
    assert bad.exit_code == 0 and f"limit {LIMITS.replicas:,}" in bad.output


BOTH = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: both}
spec:
  duration: 10m
  workload: {replicas: 2, resources: {requests: {cpu: 500m}}, request: {cpuTime: 10ms}}
  traffic: {type: constant, rate: 10/s}
  autoscalers:
    - type: hpa
      spec:
        maxReplicas: 5
        metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
    - type: vpa
      spec: {updatePolicy: {updateMode: MODE}}
"""


def test_check_warns_of_an_hpa_and_a_vpa_on_the_same_resource(tmp_path: Path) -> None:
    path = tmp_path / "both.yaml"
    path.write_text(BOTH.replace("MODE", "Auto"))
    warned = CliRunner().invoke(cli, ["check", str(path)])
    assert warned.exit_code == 0 and "warning: spec.autoscalers.1: a VPA sets the pods' cpu" in warned.output
    path.write_text(BOTH.replace("MODE", "Off"))  # a VPA that only recommends is the advised set-up
    assert "warning" not in CliRunner().invoke(cli, ["check", str(path)]).output


def test_run_dry_run_estimates_and_warns_but_runs_and_loads_nothing(tmp_path: Path) -> None:
    # A plugin whose import would leave a mark: a dry run must not import it, nor make a store.
    mark = tmp_path / "imported"
    (tmp_path / "marker.py").write_text(
        f"from pathlib import Path\nPath({str(mark)!r}).write_text('x')\n\n"
        "class Scaler:\n    def start(self, context):\n        pass\n"
    )
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        (ROOT / "examples" / "cluster-autoscaler-zones.yaml").read_text()
        + "  autoscalers: [{type: plugin, plugin: marker.py:Scaler}]\n"
    )
    store = tmp_path / "store"
    result = CliRunner().invoke(cli, ["run", str(scenario), "--dry-run", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "valid. A run would take about" in result.output and "nodeGroups.2 (unlabelled)" in result.output
    assert not mark.exists() and not store.exists()


def test_an_astronomical_scenario_is_estimated_and_refused_not_overflowed(tmp_path: Path) -> None:
    # Replicas and rates far past a float's range: the estimate caps its counts and run refuses it.
    scenario = tmp_path / "s.yaml"
    scenario.write_text(huge(replicas="1" + "0" * 400).replace("rate: 100/s", "rate: " + "9" * 30))
    checked = CliRunner().invoke(cli, ["check", str(scenario)])
    assert checked.exit_code == 0 and "over the limit" in checked.output
    ran = CliRunner().invoke(cli, ["run", str(scenario), "--no-store"])
    assert ran.exit_code == 2 and "refused" in ran.output and "Traceback" not in ran.output


KEP_EXAMPLE = ROOT / "examples" / "kep140" / "taint-and-delete.yaml"
# A PriorityClass lets `high` preempt `low` off the only node at step 2; `label-low` then patches
# `low` at step 3, when it is gone. Only running the scheduler knows that: each object is created
# once and never deleted by an event.
PREEMPTED_THEN_PATCHED = """\
apiVersion: simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1
kind: Scenario
metadata: {name: preempted-then-patched}
spec:
  events:
    - {id: low-class, time: 0, operation: Create, createOperation: {object: {apiVersion: scheduling.k8s.io/v1,
       kind: PriorityClass, metadata: {name: low}, value: 10}}}
    - {id: high-class, time: 0, operation: Create, createOperation: {object: {apiVersion: scheduling.k8s.io/v1,
       kind: PriorityClass, metadata: {name: high}, value: 1000}}}
    - {id: node-a, time: 0, operation: Create, createOperation: {object: {apiVersion: v1, kind: Node,
       metadata: {name: a}, status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}}}}
    - {id: low, time: 1, operation: Create, createOperation: {object: {apiVersion: v1, kind: Pod,
       metadata: {name: low}, spec: {priorityClassName: low,
       containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}}}
    - {id: high, time: 2, operation: Create, createOperation: {object: {apiVersion: v1, kind: Pod,
       metadata: {name: high}, spec: {priorityClassName: high,
       containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}}}
    - id: label-low
      time: PATCH_AT
      operation: Patch
      patchOperation:
        typeMeta: {apiVersion: v1, kind: Pod}
        objectMeta: {name: low}
        patch: '{"metadata": {"labels": {"seen": "yes"}}}'
    - {id: end, time: 4, operation: Done, doneOperation: {done: true}}
"""


def test_check_reads_a_kep_scenario_as_run_does_and_runs_its_timeline_in_memory(tmp_path: Path) -> None:
    events = len(yaml.safe_load(KEP_EXAMPLE.read_text())["spec"]["events"])
    result = CliRunner().invoke(cli, ["check", str(KEP_EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert f"a valid KEP-140 Scenario with {events} event(s)" in result.output
    assert "Completed at FakeTime 4" in result.output  # its Done event is at time 4
    assert "skenario.dev/v1alpha1" not in result.output


@pytest.mark.parametrize(
    ("path", "last_step"),
    [
        # tests/cli/test_ksimrecord_command.py: the recording's story ends with Done at FakeTime 11
        (ROOT / "examples" / "ksim" / "recording.jsonl", 11),
        # an export: every object created at step 0, Done at 1
        (ROOT / "tests" / "scenario" / "data" / "ksim-export.json", 1),
    ],
)
def test_check_reads_kube_scheduler_simulator_recordings_and_exports(path: Path, last_step: int) -> None:
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "a valid KEP-140 Scenario" in result.output and f"Completed at FakeTime {last_step}" in result.output
    assert "not valid YAML" not in result.output


def test_check_names_the_event_whose_object_is_not_there(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text(KEP_EXAMPLE.read_text().replace("objectMeta: {name: a}", "objectMeta: {name: nowhere}"))
    result = CliRunner().invoke(cli, ["check", str(broken)])
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert "field 'spec.events.3.patchOperation'" in line and "'taint-a'" in line and "no Node nowhere" in line


def test_check_finds_an_event_on_a_pod_the_scheduler_preempted_as_the_run_would(tmp_path: Path) -> None:
    store = tmp_path / "store"
    scenario = tmp_path / "preempted.yaml"
    scenario.write_text(PREEMPTED_THEN_PATCHED.replace("PATCH_AT", "3"))
    checked = CliRunner().invoke(cli, ["check", str(scenario)])
    ran = CliRunner().invoke(cli, ["run", str(scenario), "--store", str(store)])
    assert checked.exit_code == ran.exit_code == 2
    assert checked.stderr == ran.stderr  # the same one line
    assert "field 'spec.events.5.patchOperation'" in checked.stderr and "no Pod default/low" in checked.stderr
    assert not store.exists()
    # A step earlier `low` is still there (bound at 1, preempted at 2): the same file checks clean.
    scenario.write_text(PREEMPTED_THEN_PATCHED.replace("PATCH_AT", "1"))
    assert CliRunner().invoke(cli, ["check", str(scenario)]).exit_code == 0
