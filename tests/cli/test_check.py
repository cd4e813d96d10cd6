"""Pre-flight: `skenario check` estimates a run from the scenario alone; `run` refuses one past the limits.
KEP-140 input (a KEP-140 Scenario, a kube-scheduler-simulator export or recording) is checked as
`run --dry-run` checks it: its timeline run in memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from skenario.cli import cli
from skenario.scenario.loader import parse_scenario
from skenario.scenario.preflight import LIMITS, estimate
from skenario.scenario.wiring.prepare import prepare

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


# -- what a new user tried: autoscalers' manifests read by check as run reads them ---------------------------------

WITH_MANIFEST = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: web}
spec:
  duration: 10m
  workload: {replicas: 3, resources: {requests: {cpu: 250m}}, request: {cpuTime: 50ms}}
  traffic: {type: step, rate: 20/s, stepTo: 200/s, stepAt: 2m}
  autoscalers:
    - {type: hpa, manifest: hpa.yaml}
"""
HPA_V1 = """\
apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: MAX
  targetCPUUtilizationPercentage: 60
"""


def both(tmp_path: Path, hpa: str) -> tuple[Any, Any]:
    """check and run (no store) of WITH_MANIFEST beside `hpa` as hpa.yaml."""
    (tmp_path / "hpa.yaml").write_text(hpa)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(WITH_MANIFEST)
    checked = CliRunner().invoke(cli, ["check", str(scenario)])
    ran = CliRunner().invoke(cli, ["run", str(scenario), "--no-store", "--no-progress"])
    return checked, ran


def test_check_reads_an_older_hpa_manifest_and_its_max_replicas(tmp_path: Path) -> None:
    """An autoscaling/v1 HPA with maxReplicas 500,000: check estimates that many, and run refuses it as check
    said it would (the estimate said 'at most 3' before it read the manifest)."""
    checked, ran = both(tmp_path, HPA_V1.replace("MAX", "500000"))
    assert checked.exit_code == 0 and "replicas at most 500,000" in checked.output
    assert "over the limit: 500,000 replicas" in checked.output
    assert ran.exit_code == 2 and "refused" in ran.stderr and "500,000 replicas" in ran.stderr
    checked, ran = both(tmp_path, HPA_V1.replace("MAX", "10"))
    assert checked.exit_code == 0 and "replicas at most 10" in checked.output
    assert ran.exit_code == 0, ran.output


@pytest.mark.parametrize(
    ("hpa", "field", "words"),
    [
        (HPA_V1.replace("autoscaling/v1", "autoscaling/v3"), "apiVersion", "autoscaling/v2beta1, autoscaling/v1"),
        (HPA_V1.replace("MAX", "10").replace("60", "60%"), "spec.targetCPUUtilizationPercentage", "integer"),
        ("apiVersion: autoscaling/v2beta1\nkind: HorizontalPodAutoscaler\nspec:\n  maxReplicas: 3\n  metrics:\n"
         "  - {type: Resource, resource: {name: cpu, targetAverageUtilisation: 60}}\n",
         "spec.metrics.0.resource.targetAverageUtilisation", "not a known field"),
    ],
)  # fmt: skip
def test_a_bad_hpa_manifest_is_the_same_error_in_check_and_run(
    tmp_path: Path, hpa: str, field: str, words: str
) -> None:
    checked, ran = both(tmp_path, hpa)
    assert checked.exit_code == ran.exit_code == 2
    assert checked.stderr == ran.stderr
    (line,) = checked.stderr.splitlines()
    assert f"{tmp_path / 'hpa.yaml'}:" in line and f"field '{field}'" in line and words in line, line
    assert "skenario.dev/v1alpha1" not in line  # the fix it once suggested, which fixed nothing


def test_a_missing_manifest_is_named_at_the_scenarios_field(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(WITH_MANIFEST.replace("hpa.yaml", "nowhere.yaml"))
    checked = CliRunner().invoke(cli, ["check", str(scenario)])
    assert checked.exit_code == 2
    (line,) = checked.stderr.splitlines()
    assert line.startswith(f"error: {scenario}:9, field 'spec.autoscalers.0.manifest'") and "nowhere.yaml" in line


def test_the_compare_examples_are_bounded_by_their_hpas_max_replicas() -> None:
    """examples/compare: the workload's replicas come from its Deployment (3) and the HPA in the same file
    says maxReplicas 40 (the estimate said 'at most 0' when it read neither)."""
    result = CliRunner().invoke(cli, ["check", str(ROOT / "examples" / "compare" / "hpa-50.yaml")])
    assert result.exit_code == 0 and "replicas at most 40\n" in result.output


def test_a_kpa_without_max_scale_is_said_to_have_no_bound() -> None:
    """examples/kpa-container-concurrency.yaml: 50 requests/s of 200 ms are 10 in flight; at 0.7 a pod
    (containerConcurrency 1 at 70%) the KPA settles on ceil(10 / 0.7) = 15 pods (the example's own comment)."""
    result = CliRunner().invoke(cli, ["check", str(ROOT / "examples" / "kpa-container-concurrency.yaml")])
    assert result.exit_code == 0
    assert "replicas at most no bound (spec.autoscalers.0: a KPA without max-scale): about 15 at" in result.output


def test_a_scenario_that_never_ends_is_refused_by_check_as_by_run(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(huge().replace("  duration: 1h\n", ""))
    checked = CliRunner().invoke(cli, ["check", str(scenario)])
    ran = CliRunner().invoke(cli, ["run", str(scenario), "--no-store"])
    assert checked.exit_code == ran.exit_code == 2 and checked.stderr == ran.stderr
    assert "never ends" in checked.stderr and "field 'spec.duration'" in checked.stderr


@pytest.mark.parametrize(
    ("source", "plugin", "words"),
    [
        ("class Scaler:\n    def start(self, context)\n", "scaler.py:Scaler", "not valid Python"),
        ("class Scaler:\n    def start(self, context):\n        pass\n", "scaler.py:Scalar", "has no 'Scalar'"),
        ("class Scaler:\n    def begin(self, context):\n        pass\n", "scaler.py:Scaler", "needs a method start"),
        ("def Scaler(context):\n    pass\n", "scaler.py:Scaler", "is not a class"),
        ("", "no_such_package.scalers:Scaler", "no module named 'no_such_package.scalers'"),
    ],
)
def test_check_finds_a_plugins_mistakes_without_running_it_and_run_says_the_same(
    tmp_path: Path, source: str, plugin: str, words: str
) -> None:
    """The file read and parsed, the class looked for in its syntax tree: nothing of it runs in check (a line
    at its top would leave a mark), and the run's error line is the same."""
    mark = tmp_path / "ran"
    (tmp_path / "scaler.py").write_text(f"open({str(mark)!r}, 'w').close()\n" + source)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(huge() + f"  autoscalers: [{{type: plugin, plugin: '{plugin}'}}]\n")
    module = plugin.partition(":")[0]
    allowed = [] if module.endswith(".py") else ["--allow-plugin-module", module]  # a module is named by the user
    checked = CliRunner().invoke(cli, ["check", str(scenario), *allowed])
    assert checked.exit_code == 2 and words in checked.stderr, checked.output
    assert "field 'spec.autoscalers.0.plugin'" in checked.stderr
    assert not mark.exists()
    ran = CliRunner().invoke(cli, ["run", str(scenario), "--no-store", *allowed])
    assert ran.exit_code == 2 and ran.stderr == checked.stderr
