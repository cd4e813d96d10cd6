"""Fluid mode end to end: the same scenario with requests as flows, held against its discrete run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from skenario.autoscalers.kpa.controller import KnativePodAutoscaler
from skenario.cli import cli
from skenario.core.time import MILLISECOND, SECOND
from skenario.errors import ScenarioError
from skenario.recording.summary import Summary
from skenario.results.analysis import cost
from skenario.results.rundata import RunData
from skenario.runs import open_run
from skenario.runs.inputs import mode_text
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from skenario.scenario.wiring.fluid import cpu_time_warnings, fluid_warnings

ROOT = Path(__file__).resolve().parents[2]

STEADY = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {{name: steady}}
spec:
  mode: {mode}
  duration: 2h
  seed: 5
  routing: {{policy: {policy}}}
  workload:
    replicas: 4
    resources: {{requests: {{cpu: 1000m}}, limits: {{cpu: 1000m}}}}
    request: {{cpuTime: {{distribution: exponential, mean: 50ms}}, timeout: null}}
  traffic: {{type: poisson, rate: 64/s}}
"""


def ran(text: str, base_dir: Path = ROOT) -> tuple[Simulation, Summary]:
    run = open_run(Path("scenario.yaml"), text=text, base_dir=base_dir)
    assert isinstance(run, Simulation)
    summary = run.run()
    return run, summary


@pytest.fixture(scope="module")
def steady() -> dict[str, Summary]:
    """Four replicas of one core each at 80% (64/s, 50 ms of CPU): both modes, round robin and at random."""
    return {
        f"{mode}/{policy}": ran(STEADY.format(mode=mode, policy=policy))[1]
        for mode in ("discrete", "fluid")
        for policy in ("roundRobin", "random")
    }


@pytest.mark.parametrize("policy", ["roundRobin", "random"])
def test_a_steady_fluid_run_agrees_with_the_discrete_one(steady: dict[str, Summary], policy: str) -> None:
    """Issue 34's bounds at high load: throughput and CPU within 1%, mean latency within 5%, p95 within 10%."""
    fluid, discrete = steady[f"fluid/{policy}"], steady[f"discrete/{policy}"]
    assert fluid.mode == "fluid" and discrete.mode == "discrete"
    assert fluid.requests_completed == pytest.approx(discrete.requests_completed, rel=0.01)
    assert fluid.cpu_request_utilisation == pytest.approx(discrete.cpu_request_utilisation, rel=0.01)
    assert fluid.latency_mean_ns == pytest.approx(discrete.latency_mean_ns, rel=0.05)
    assert fluid.latency_p95_ns == pytest.approx(discrete.latency_p95_ns, rel=0.10)


def test_a_fluid_run_accounts_for_every_request(steady: dict[str, Summary]) -> None:
    """What arrived (the traffic's integral, 64/s for two hours) completed, failed or is held, to within
    a request per replica (each replica's level is counted as a whole number)."""
    summary = steady["fluid/roundRobin"]
    assert summary.requests_arrived == pytest.approx(64 * 7200, abs=1)
    held = summary.requests_completed + summary.requests_failed + summary.requests_in_flight
    assert abs(summary.requests_arrived - held) <= 4


def test_a_fluid_replica_holds_what_its_queue_would() -> None:
    """Requests held, as queue-proxy and the metrics read them: M/M/1's rho / (1 - rho) per replica at rho 0.8,
    4 each, 16 in all; the discrete run's mean over its rows within 5%, and the fluid run's within 5% of that."""
    held = {}
    for mode in ("discrete", "fluid"):
        text = STEADY.format(mode=mode, policy="random").replace("duration: 2h", "duration: 30m")
        simulation, _ = ran(text)
        held[mode] = float(simulation.series()["requests_processing"].mean())
    assert held["discrete"] == pytest.approx(16, rel=0.05)
    assert held["fluid"] == pytest.approx(held["discrete"], rel=0.05)


def test_the_same_seed_gives_the_same_fluid_run() -> None:
    text = STEADY.format(mode="fluid", policy="roundRobin").replace("duration: 2h", "duration: 10m")
    assert ran(text)[1].digest == ran(text)[1].digest


def test_the_hpa_scales_a_fluid_workload_through_a_step() -> None:
    """examples/hpa-step.yaml as a fluid run: the HPA reads the fluid replicas' CPU through the same metrics
    pipeline, scales out for the step (10 -> 60/s from 5m to 20m) and back in after it."""
    text = (ROOT / "examples" / "hpa-step.yaml").read_text().replace("spec:\n", "spec:\n  mode: fluid\n", 1)
    simulation, _ = ran(text, ROOT / "examples")
    series = simulation.series().set_index("time_ns")
    during = series.loc[15 * 60 * 10**9 : 20 * 60 * 10**9, "replicas_desired"]
    after = series.loc[38 * 60 * 10**9 :, "replicas_desired"]
    assert during.max() > 2 * series["replicas_desired"].iloc[0]
    assert after.iloc[-1] < during.max()


def test_a_fluid_run_replays_a_trace_as_its_discrete_run_does(tmp_path: Path) -> None:
    """A counts trace (per minute, 3,000 to 4,200 requests: 50 to 70/s, 62% to 88% of the CPU) on four one-core
    replicas: the fluid run's arrivals are the trace's total (its rate's integral), the discrete run's are too
    (its counts spread exactly); completions and CPU within 1%, mean latency within 5%."""
    counts = [3000, 3300, 3600, 3900, 4200, 3900, 3600, 3300, 3000, 3000]
    (tmp_path / "load.csv").write_text("minute,n\n" + "".join(f"{i},{n}\n" for i, n in enumerate(counts)))
    traffic = "{type: counts, file: load.csv, timeColumn: minute, countColumn: n, unit: m, interval: 1m}"
    base = STEADY.format(mode="{mode}", policy="roundRobin").replace("{type: poisson, rate: 64/s}", traffic)
    base = base.replace("duration: 2h", "duration: 10m")
    fluid = ran(base.replace("{mode}", "fluid"), tmp_path)[1]
    discrete = ran(base.replace("{mode}", "discrete"), tmp_path)[1]
    assert fluid.requests_arrived == pytest.approx(sum(counts), abs=1)
    assert discrete.requests_arrived == sum(counts)
    assert fluid.requests_completed == pytest.approx(discrete.requests_completed, rel=0.01)
    assert fluid.cpu_request_utilisation == pytest.approx(discrete.cpu_request_utilisation, rel=0.01)
    assert fluid.latency_mean_ns == pytest.approx(discrete.latency_mean_ns, rel=0.05)


def test_past_capacity_clients_give_up_and_the_server_finishes_their_requests(tmp_path: Path) -> None:
    """Minutes at 90 and 100/s on four one-core replicas (80/s of capacity), with a 2 s timeout: requests fail as
    timeouts, what completed did so within it, and every request arrived is completed, failed or held."""
    counts = [3600, 4200, 4800, 5400, 6000, 5400, 4800, 4200, 3600, 3600]
    (tmp_path / "load.csv").write_text("minute,n\n" + "".join(f"{i},{n}\n" for i, n in enumerate(counts)))
    traffic = "{type: counts, file: load.csv, timeColumn: minute, countColumn: n, unit: m, interval: 1m}"
    text = STEADY.format(mode="fluid", policy="roundRobin").replace("{type: poisson, rate: 64/s}", traffic)
    text = text.replace("duration: 2h", "duration: 10m").replace("timeout: null", "timeout: 2s")
    summary = ran(text, tmp_path)[1]
    assert summary.requests_failed > 0 and set(summary.failures) == {"timeout"}
    assert summary.latency_p99_ns < 2 * 10**9
    held = summary.requests_completed + summary.requests_failed + summary.requests_in_flight
    assert abs(summary.requests_arrived - held) <= 4


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ("  client: {retries: {attempts: 2}}\n", "spec.client.retries"),
        ("  client: {cancel: true}\n", "spec.client.cancel"),
        ("  events: [{id: slower, at: 1m, patch: {target: workload, patch: {replicas: 2}}}]\n", "spec.events.0"),
    ],
)
def test_a_fluid_run_refuses_what_it_does_not_model(patch: str, field: str) -> None:
    text = STEADY.format(mode="fluid", policy="roundRobin") + patch
    with pytest.raises(ScenarioError, match="a fluid run does not model") as caught:
        ran(text)
    assert caught.value.field == field and caught.value.line is not None


def test_a_fluid_run_says_when_it_is_below_its_regime() -> None:
    """Below 50 requests/s per serving replica (issue 34's regime) the figures are the model's: said once."""
    assert fluid_warnings(arrived=100 * 3600, replica_seconds=2 * 3600) == []  # 50/s per replica
    (warning,) = fluid_warnings(arrived=10 * 3600, replica_seconds=2 * 3600)
    assert "about 5.0 requests/s per serving replica" in warning
    assert fluid_warnings(arrived=0, replica_seconds=0)


def test_run_mode_fluid_overrides_the_scenario_and_warns_at_low_load(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["run", str(ROOT / "examples" / "hpa-step.yaml"), "--mode", "fluid", "--store", str(tmp_path), "-o", "json"],
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["mode"] == "fluid" and "requests/s per serving replica" in document["warnings"][0]


def test_mode_is_for_skenarios_own_scenarios(tmp_path: Path) -> None:
    kep = next((ROOT / "examples" / "kep140").glob("*.yaml"))
    result = CliRunner().invoke(cli, ["run", str(kep), "--mode", "fluid", "--store", str(tmp_path)])
    assert result.exit_code == 2 and "--mode sets a scenario's spec.mode" in result.stderr


def test_mode_both_runs_the_two_and_says_how_far_apart(tmp_path: Path) -> None:
    scenario = tmp_path / "steady.yaml"
    scenario.write_text(STEADY.format(mode="discrete", policy="roundRobin").replace("duration: 2h", "duration: 20m"))
    result = CliRunner().invoke(cli, ["run", str(scenario), "--mode", "both", "--store", str(tmp_path), "-o", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    discrete, fluid = document["discrete"], document["fluid"]
    assert (discrete["mode"], fluid["mode"]) == ("discrete", "fluid")
    completed = (fluid["requests_completed"] - discrete["requests_completed"]) / discrete["requests_completed"]
    assert document["differences"]["requests_completed"] == pytest.approx(completed)
    runs = json.loads(CliRunner().invoke(cli, ["runs", "--store", str(tmp_path), "-o", "json"]).stdout)
    assert sorted(tag for run in runs for tag in run["tags"]) == ["discrete", "fluid"]


def test_a_runs_mode_is_written_into_its_scenario_as_a_line() -> None:
    """`--mode` keeps the scenario as written, comments too, with one `mode:` line under `spec:`."""
    text = (ROOT / "examples" / "quickstart.yaml").read_text()
    fluid = mode_text(text, "fluid")
    assert fluid.count("mode: fluid") == 1 and text.splitlines()[0] in fluid  # the leading comment stays
    again = mode_text(fluid, "discrete")
    assert "mode: fluid" not in again and again.count("mode: discrete") == 1
    assert yaml.safe_load(again)["spec"]["mode"] == "discrete"
    flow = mode_text("apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nspec: {duration: 1m}\n", "fluid")
    assert yaml.safe_load(flow)["spec"] == {"duration": "1m", "mode": "fluid"}


def test_a_window_runs_a_stretch_from_the_replicas_the_fluid_run_had_then(tmp_path: Path) -> None:
    """examples/fluid/step.yaml from 15 to 20 minutes, discrete: it starts with the replicas the fluid run of the
    scenario wanted at 15 minutes, gets the step's 900/s for five minutes (within 5 sigma of 270,000), and keeps
    its scenario as it ran (offset and duration written in)."""
    example = str(ROOT / "examples" / "fluid" / "step.yaml")
    before = ran((ROOT / "examples" / "fluid" / "step.yaml").read_text().replace("duration: 30m", "duration: 15m"))
    args = ["run", example, "--mode", "discrete", "--window", "15m..20m", "--store", str(tmp_path), "-o", "json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert abs(document["requests_arrived"] - 270_000) < 5 * 270_000**0.5
    assert f"{before[1].replicas_desired} replicas to start" in result.stderr
    shown = CliRunner().invoke(cli, ["show", str(document["run"]), "--store", str(tmp_path), "-o", "json"])
    stored = yaml.safe_load(json.loads(shown.stdout)["scenario_text"])
    assert (stored["spec"]["offset"], stored["spec"]["duration"]) == ("15m", "5m")
    assert stored["spec"]["workload"]["replicas"] == before[1].replicas_desired


@pytest.mark.parametrize("window", ["15m", "20m..15m", "soon..later"])
def test_a_bad_window_is_one_clear_line(window: str) -> None:
    result = CliRunner().invoke(cli, ["run", str(ROOT / "examples" / "fluid" / "step.yaml"), "--window", window])
    assert result.exit_code == 2 and "--window" in result.stderr and "Traceback" not in result.output


def test_an_offset_needs_a_duration_and_moves_no_events() -> None:
    text = STEADY.format(mode="fluid", policy="roundRobin").replace("seed: 5", "seed: 5\n  offset: 1h")
    assert ran(text)[1].simulated_ns == 2 * 3600 * 10**9
    with pytest.raises(ScenarioError, match=r"spec\.events with spec\.offset"):
        ran(text + "  events: [{id: end, at: 5m, done: {}}]\n")


def test_traffic_events_change_a_fluid_runs_rate_when_they_happen() -> None:
    """examples/events.yaml as flows: 20/s for ten minutes, then 60/s until the done event at 30 minutes, 84,000
    requests (its other events, a crash, the metrics down and up, the HPA patched, run as in a discrete run)."""
    text = (ROOT / "examples" / "events.yaml").read_text().replace("spec:\n", "spec:\n  mode: fluid\n", 1)
    summary = ran(text, ROOT / "examples")[1]
    assert summary.requests_arrived == pytest.approx(20 * 600 + 60 * 1200, abs=1)


def test_a_plugin_scales_fluid_replicas_as_it_scales_discrete_ones() -> None:
    """examples/plugin.yaml's target-tracking plugin reads the fluid replicas through the same context: replica-
    hours within 5% of its discrete run's."""
    runs = {mode: open_run(ROOT / "examples" / "plugin.yaml", mode=mode) for mode in ("discrete", "fluid")}
    hours = {}
    for mode, simulation in runs.items():
        assert isinstance(simulation, Simulation)
        simulation.run()
        hours[mode] = cost(RunData.from_simulation(simulation))["replica_hours"]
    assert hours["fluid"] == pytest.approx(hours["discrete"], rel=0.05)


def test_an_in_place_resize_changes_a_fluid_replicas_cores(tmp_path: Path) -> None:
    """examples/vpa-resize.yaml with InPlaceOrRecreate: the VPA resizes the four pods in place, their fluid
    drains at the new limit (400m scaled as the request, controlledValues RequestsAndLimits), and the mean
    latency is within 10% of the discrete run's (at the old 400m it was over three times)."""
    (tmp_path / "manifests").mkdir()
    manifest = (ROOT / "examples" / "manifests" / "web-vpa.yaml").read_text()
    (tmp_path / "manifests" / "web-vpa.yaml").write_text(manifest.replace("Recreate", "InPlaceOrRecreate"))
    text = (ROOT / "examples" / "vpa-resize.yaml").read_text()
    means = {}
    for mode in ("discrete", "fluid"):
        simulation, summary = ran(text.replace("spec:\n", f"spec:\n  mode: {mode}\n", 1), tmp_path)
        means[mode] = summary.latency_mean_ns
        if mode == "fluid":
            for replica in simulation.model.replicas.values():
                assert replica.processing.cpu.millicores == replica.cpu_limit > 400
    assert means["fluid"] == pytest.approx(means["discrete"], rel=0.10)


NODE = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {{name: shared}}
spec:
  mode: fluid
  duration: 5m
  workload:
    replicas: 4
    resources: {{requests: {{cpu: 250m}}}}
    request: {{cpuTime: {{distribution: exponential, mean: 5ms}}, timeout: null}}
  traffic: {{type: poisson, rate: {rate}/s}}
  cluster: {{nodes: [{{name: n, cpu: 2, memory: 8Gi}}]}}
"""


@pytest.mark.parametrize(("rate", "millicores"), [(300, 2000), (500, 500)])
def test_fluid_pods_share_their_node_as_its_cpu_shares_it(rate: int, millicores: int) -> None:
    """Four pods with no limit on a 2-core node: at 300/s of 5 ms they want 1.5 cores, which fit, so each may
    use the whole node (its cap); at 500/s they want 2.5, so each gets its equal weight's half core. The node's
    CPU reads what they used: 1.5 of 2 cores, or all of it."""
    simulation, summary = ran(NODE.format(rate=rate))
    assert {replica.processing.cpu.millicores for replica in simulation.model.replicas.values()} == {millicores}
    assert summary.node_cpu_utilisation == pytest.approx(min(rate * 0.005 / 2, 1.0), rel=0.02)


def test_a_fluid_replicas_cpu_has_the_noise_of_a_busy_server() -> None:
    """Each replica's CPU over its 10 s rows, at 80% of a core with 50 ms of CPU a request: the busy time of a
    server busy b on average varies by 2 b / mu core-s^2 a second, so its utilisation over W = 10 s has a
    standard deviation of sqrt(2 x 0.8 / 20 x 10) / 10 = 8.9%. The fluid run's within 10% of that, and
    within 20% of the discrete run's (whose 10 s is not yet long against its queue's memory)."""
    spread = {}
    for mode in ("discrete", "fluid"):
        simulation, _ = ran(STEADY.format(mode=mode, policy="random").replace("duration: 2h", "duration: 1h"))
        rows = [row[3] for row in simulation.replica_rows() if row[3] is not None][40:]  # past the first minutes
        spread[mode] = float(np.std(rows))
    assert spread["fluid"] == pytest.approx(math.sqrt(2 * 0.8 / 20 * 10) / 10, rel=0.10)
    assert spread["fluid"] == pytest.approx(spread["discrete"], rel=0.20)


def test_a_kpa_takes_a_fluid_workload_from_zero_at_its_first_request() -> None:
    """examples/fluid/from-zero.yaml: at zero pods the burst of 50/s from 2m flows into the activator from the
    plant's step that starts it (each falls 1 ns past its second: a clock's first instant is 1), and its first
    whole request, 20 ms later, pokes the KPA, which asks for a pod then, not at its next tick; the pods serve
    the bursts and every request arrived is completed, failed or held."""
    simulation, summary = ran((ROOT / "examples" / "fluid" / "from-zero.yaml").read_text(), ROOT / "examples")
    [kpa] = [a for a in simulation.main.autoscalers.values() if isinstance(a, KnativePodAutoscaler)]
    first = next(d for d in kpa.decisions if d.desired > 0 or d.proposed > 0)
    assert first.at == 120 * SECOND + 1 + 20 * MILLISECOND
    assert summary.replicas_started > 0 and summary.requests_completed > 0.9 * summary.requests_arrived
    held = summary.requests_completed + summary.requests_failed + summary.requests_in_flight
    assert abs(summary.requests_arrived - held) <= 4


def test_requests_held_for_a_replica_wait_in_their_latency(tmp_path: Path) -> None:
    """Two one-core replicas (1 ms of CPU a request: 2,000/s between them) launching for 10 s while 20/s arrive:
    a request that arrived at t waits 10 - t, then the 20 t held before it drain in 20 t / 2,000 s. So those
    that arrived before t = 9 / 0.99 (182 of them) take a second or more; no other request does."""
    text = STEADY.format(mode="fluid", policy="roundRobin").replace("duration: 2h", "duration: 1m")
    launch = "launch: {scheduling: 0s, imagePull: 0s, containerStart: 0s, readiness: 10s}"
    text = text.replace("replicas: 4", f"replicas: 2\n    initialReady: false\n    {launch}")
    text = text.replace("{type: poisson, rate: 64/s}", "{type: constant, rate: 20/s}")
    text = text.replace("mean: 50ms", "mean: 1ms")
    simulation, summary = ran(text)
    latency = simulation.model.requests_complete.latency
    over_a_second = sum(n for index, n in latency.buckets() if latency.bucket_bounds(index)[0] >= SECOND)
    assert over_a_second == pytest.approx(182, abs=2)
    assert summary.requests_failed == 0


def test_a_kpa_on_flows_agrees_with_its_discrete_run_at_high_load() -> None:
    """examples/fluid/kpa.yaml for its first 10 minutes (a wave from 600 to 1,000/s on 10 to 16 pods): issue 34's
    bounds, replica-hours within 5%, mean latency and p95 within 10%."""
    text = (ROOT / "examples" / "fluid" / "kpa.yaml").read_text().replace("duration: 20m", "duration: 10m")
    figures = {}
    for mode in ("discrete", "fluid"):
        simulation, summary = ran(text.replace("mode: fluid", f"mode: {mode}"))
        figures[mode] = (cost(RunData.from_simulation(simulation))["replica_hours"], summary)
    (fluid_hours, fluid), (discrete_hours, discrete) = figures["fluid"], figures["discrete"]
    assert fluid_hours == pytest.approx(discrete_hours, rel=0.05)
    assert fluid.latency_mean_ns == pytest.approx(discrete.latency_mean_ns, rel=0.10)
    assert fluid.latency_p95_ns == pytest.approx(discrete.latency_p95_ns, rel=0.10)


def test_an_event_makes_a_kpa_for_a_fluid_workload() -> None:
    """A KPA made at 10m by an event, with a target of 20 in flight a pod (14 at 70%): 64/s of 100 ms IO and
    5 ms of CPU keep 64 x 0.1 plus at most one on the CPU (Little's law), under 8 in all; so it scales the
    four replicas in to the one pod ceil(8 / 14) asks for, and nothing moves before it is made."""
    kpa = "{type: kpa, config: {container-concurrency-target-default: '20'}}"
    events = f"  events: [{{id: knative, at: 10m, create: {{target: autoscaler/k, object: {kpa}}}}}]\n"
    text = STEADY.format(mode="fluid", policy="roundRobin").replace("duration: 2h", "duration: 20m") + events
    text = text.replace("mean: 50ms}, timeout: null", "mean: 5ms}, ioTime: 100ms, timeout: null")
    simulation, _ = ran(text)
    series = simulation.series().set_index("time_ns")
    assert set(series.loc[: 10 * 60 * SECOND, "replicas_desired"]) == {4}
    assert series["replicas_desired"].iloc[-1] == 1


TWO_WORKLOADS = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: web}
spec:
  mode: fluid
  duration: 2m
  seed: 3
  workload:
    replicas: 2
    resources: {requests: {cpu: 1000m}}
    request: {cpuTime: {distribution: exponential, mean: 10ms}, timeout: 5s}
  traffic: {type: constant, rate: 300/s}
  cluster:
    nodes:
      - {name: big, cpu: 4, memory: 16Gi}
  workloads:
    - name: batch
      workload:
        replicas: 2
        resources: {requests: {cpu: 1000m}}
        request: {cpuTime: {distribution: exponential, mean: 10ms}, timeout: 5s}
      traffic: {type: constant, rate: 300/s}
"""


def test_workloads_side_by_side_share_their_nodes_cores() -> None:
    """Four pods of two workloads on one node of 4 cores, each pod's load wanting 1.5 cores (150/s of 10 ms, no
    limit): 6 cores wanted of 4, so each pod gets its max-min fair share, one core, as the node's CPU shares
    them; each workload uses its request, and the node its cores, within the CPU noise."""
    _, summary = ran(TWO_WORKLOADS)
    assert summary.cpu_request_utilisation == pytest.approx(1.0, rel=0.02)
    assert summary.workloads["batch"]["cpu_request_utilisation"] == pytest.approx(1.0, rel=0.02)
    assert summary.node_cpu_utilisation == pytest.approx(1.0, rel=0.02)


def test_a_side_workloads_refusal_names_its_own_field() -> None:
    text = TWO_WORKLOADS.replace(
        "        replicas: 2\n        resources", "        replicas: 2\n        concurrency: 4\n        resources"
    )
    with pytest.raises(ScenarioError, match="a fluid run does not model") as caught:
        ran(text)
    assert caught.value.field == "spec.workloads.0.workload.concurrency"


def test_a_random_io_time_spreads_the_latency_as_in_the_discrete_run() -> None:
    """Four one-core replicas at 60% CPU (240/s of 10 ms) whose requests then wait an exponential 100 ms of IO:
    the IO dominates the spread, so p50 falls below the mean and p95 far above it. The fluid run's p50 and p95
    are within 10% of the discrete run's (adding the IO's mean alone put them 25% high and 50% low)."""
    text = STEADY.replace("duration: 2h", "duration: 10m").replace("rate: 64/s", "rate: 240/s")
    text = text.replace(
        "request: {{cpuTime: {{distribution: exponential, mean: 50ms}}, timeout: null}}",
        "request: {{cpuTime: {{distribution: exponential, mean: 10ms}}, "
        "ioTime: {{distribution: exponential, mean: 100ms}}, timeout: null}}",
    )
    fluid = ran(text.format(mode="fluid", policy="roundRobin"))[1]
    discrete = ran(text.format(mode="discrete", policy="roundRobin"))[1]
    assert fluid.latency_p50_ns == pytest.approx(discrete.latency_p50_ns, rel=0.10)
    assert fluid.latency_p95_ns == pytest.approx(discrete.latency_p95_ns, rel=0.10)
    assert fluid.latency_p50_ns < 0.8 * fluid.latency_mean_ns < fluid.latency_p95_ns / 2


def test_a_fluid_run_says_when_its_cpu_times_are_not_exponential() -> None:
    """The latency model's percentiles take CPU times as exponential: a constant one (the workload's) and a
    lognormal one (a side workload's) are each said, with their field; exponential ones are not."""
    exponential = parse_scenario(TWO_WORKLOADS).spec
    assert cpu_time_warnings(exponential) == []
    text = TWO_WORKLOADS.replace("cpuTime: {distribution: exponential, mean: 10ms}", "cpuTime: 10ms", 1)
    text = text.replace(
        "cpuTime: {distribution: exponential, mean: 10ms}",
        "cpuTime: {distribution: lognormal, mean: 10ms, stddev: 5ms}",
    )
    warnings = cpu_time_warnings(parse_scenario(text).spec)
    assert [warning.split(" is ")[0] for warning in warnings] == [
        "spec.workload.request.cpuTime",
        "spec.workloads.0.workload.request.cpuTime",
    ]
    assert "constant" in warnings[0] and "lognormal" in warnings[1]
