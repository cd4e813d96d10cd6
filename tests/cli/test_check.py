"""Pre-flight: `skenario check` estimates a run from the scenario alone; `run` refuses one past the limits."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from skenario.cli import cli
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
    cost = estimate(parse_scenario(huge()).spec)
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
