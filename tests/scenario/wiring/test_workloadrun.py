"""Several workloads in one scenario (`spec.workloads`): each with its own pods, traffic and autoscalers,
their pods meeting on the shared nodes' room and cores."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.random import RandomStreams
from skenario.core.time import MILLISECOND, SECOND
from skenario.errors import ScenarioError
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation
from skenario.scenario.wiring.prepare import rebase

# One core, two pods of 500m: each request of 100 ms of CPU arrives with one of the other workload,
# so they share the core half and half while both run.
SHARED_CORE = {
    "apiVersion": "skenario.dev/v1alpha1",
    "kind": "Scenario",
    "metadata": {"name": "web"},
    "spec": {
        "duration": "10s",
        "seed": 1,
        "workload": {
            "replicas": 1,
            "resources": {"requests": {"cpu": "500m"}},
            "request": {"cpuTime": "100ms"},
        },
        "traffic": {"type": "constant", "rate": "1/s"},
        "cluster": {"nodes": [{"name": "node", "cpu": 1, "memory": "4Gi"}]},
        "workloads": [
            {
                "name": "batch",
                "workload": {
                    "replicas": 1,
                    "resources": {"requests": {"cpu": "500m"}},
                    "request": {"cpuTime": "100ms"},
                },
                "traffic": {"type": "constant", "rate": "1/s"},
            }
        ],
    },
}


def scenario(base: dict[str, Any], **spec: Any) -> dict[str, Any]:
    document = yaml.safe_load(yaml.safe_dump(base))
    document["spec"].update(spec)
    return document


def simulate(document: dict[str, Any]) -> Simulation:
    simulation = Simulation(parse_scenario(yaml.safe_dump(document)))
    simulation.run()
    return simulation


def error_for(document: dict[str, Any]) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        Simulation(parse_scenario(yaml.safe_dump(document), source="s.yaml"))
    return info.value


def test_two_workloads_on_one_core_share_it_by_request() -> None:
    # Hand-computed: both requests need 100 ms of CPU and run at once on one core shared by equal
    # requests, so each gets half a core and finishes after 200 ms; alone, after 100 ms.
    both = simulate(SHARED_CORE)
    alone = simulate(scenario(SHARED_CORE, workloads=[]))
    summary = both.summary()
    batch = summary.workloads["batch"]
    assert summary.latency_p50_ns == batch["latency_p50_ns"] == pytest.approx(200 * MILLISECOND, rel=0.02)
    assert alone.summary().latency_p50_ns == pytest.approx(100 * MILLISECOND, rel=0.02)
    assert summary.requests_completed == batch["requests_completed"] == alone.summary().requests_completed


def test_pods_are_named_and_placed_by_workload() -> None:
    simulation = simulate(SHARED_CORE)
    assert simulation.placement is not None
    names = sorted(pod.name for pod in simulation.placement.controller.pods.values())
    assert names == ["batch-0", "web-0"]
    assert {pod.node for pod in simulation.placement.controller.pods.values()} == {"node"}


def test_a_workload_with_nothing_to_do_leaves_the_others_results_as_they_were() -> None:
    idle = {
        "name": "idle",
        "workload": {"replicas": 0, "request": {"cpuTime": "10ms"}},
        "traffic": {"type": "constant", "rate": "1/s", "start": "1h"},
    }
    document = scenario(SHARED_CORE, workloads=[])
    with_idle = simulate(scenario(document, workloads=[idle])).summary()
    without = simulate(document).summary()
    figures = ("requests_arrived", "requests_completed", "latency_p50_ns", "latency_p99_ns", "latency_mean_ns")
    assert [getattr(with_idle, f) for f in figures] == [getattr(without, f) for f in figures]
    assert with_idle.workloads["idle"]["requests_arrived"] == 0


def test_the_digest_covers_every_workload() -> None:
    first, again = simulate(SHARED_CORE).summary(), simulate(SHARED_CORE).summary()
    assert first.digest == again.digest
    slower = scenario(SHARED_CORE)
    slower["spec"]["workloads"][0]["workload"]["request"]["cpuTime"] = "150ms"
    assert simulate(slower).summary().digest != first.digest


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32), web=st.integers(1, 30), batch=st.integers(1, 30))
def test_every_request_of_every_workload_is_in_exactly_one_stock(seed: int, web: int, batch: int) -> None:
    document = scenario(SHARED_CORE, seed=seed, traffic={"type": "poisson", "rate": f"{web}/s"})
    document["spec"]["workloads"][0]["traffic"] = {"type": "poisson", "rate": f"{batch}/s"}
    summary = simulate(document).summary()
    for figures in (dataclasses.asdict(summary), *summary.workloads.values()):
        done = figures["requests_completed"] + figures["requests_failed"] + figures["requests_in_flight"]
        assert figures["requests_arrived"] == done


def test_each_workload_has_its_own_random_streams() -> None:
    # The same spec under two names: the draws differ, since each workload's streams are its own.
    twin = {
        "name": "twin",
        "workload": SHARED_CORE["spec"]["workload"],
        "traffic": {"type": "poisson", "rate": "20/s"},
    }
    document = scenario(SHARED_CORE, traffic={"type": "poisson", "rate": "20/s"}, workloads=[twin])
    document["spec"]["cluster"]["nodes"][0]["cpu"] = 4
    summary = simulate(document).summary()
    assert summary.requests_arrived != summary.workloads["twin"]["requests_arrived"]


def test_events_act_on_the_workload_their_target_names() -> None:
    document = scenario(
        SHARED_CORE,
        events=[
            {"id": "more-batch", "at": "5s", "patch": {"target": "traffic/batch", "patch": {"rate": "3/s"}}},
            {"id": "batch-up", "at": "5s", "patch": {"target": "workload/batch", "patch": {"replicas": 2}}},
        ],
    )
    document["spec"]["cluster"]["nodes"][0]["cpu"] = 4
    simulation = simulate(document)
    summary = simulation.summary()
    # Constant 1/s is 9 arrivals (1 s .. 9 s; the one at 10 s meets the halt); batch's 3/s from 5 s adds more.
    assert summary.requests_arrived == 9
    assert summary.workloads["batch"]["requests_arrived"] > 9
    assert summary.replicas_desired == 1
    assert summary.workloads["batch"]["replicas_desired"] == 2
    targets = [entry[3] for entry in simulation.timeline.entries() if entry[1] in ("more-batch", "batch-up")]
    assert targets == ["traffic/batch", "workload/batch"]


def test_an_autoscaler_of_another_workload_is_named_after_it() -> None:
    document = scenario(SHARED_CORE)
    document["spec"]["workloads"][0]["autoscalers"] = [
        {"type": "hpa", "spec": {"minReplicas": 1, "maxReplicas": 2, "metrics": []}}
    ]
    document["spec"]["events"] = [{"id": "stop-it", "at": "5s", "delete": {"target": "autoscaler/batch/hpa"}}]
    simulation = simulate(document)
    assert simulation.autoscalers == {}
    assert simulation.workloads["batch"].autoscalers == {}
    lines = [entry[4] for entry in simulation.timeline.entries() if entry[1] == "stop-it"]
    assert lines == ["autoscaler hpa stopped"]


def test_metrics_events_act_on_every_workload() -> None:
    document = scenario(SHARED_CORE, events=[{"id": "down", "at": "2s", "delete": {"target": "metrics"}}])
    simulation = simulate(document)
    assert all(run.model.metrics_pipeline.down for run in simulation.workloads.values())


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("workload/nope", "no workload 'nope' (there are: web (spec.workload), batch)"),
        ("traffic/nope", "no workload 'nope'"),
        ("autoscaler/nope/hpa", "no workload 'nope'"),
    ],
)
def test_an_event_naming_no_workload_is_refused_at_its_target(target: str, message: str) -> None:
    patch = {"target": target, "patch": {"rate": "2/s"}}
    document = scenario(SHARED_CORE, events=[{"id": "e", "at": "1s", "patch": patch}])
    with pytest.raises(ScenarioError) as info:
        parse_scenario(yaml.safe_dump(document), source="s.yaml")
    assert message in info.value.message
    assert info.value.field == "spec.events.0.patch.target"


def test_a_mistake_in_another_workload_names_its_own_field() -> None:
    document = scenario(SHARED_CORE)
    document["spec"]["workloads"][0]["autoscalers"] = [{"type": "hpa", "manifest": "missing-hpa.yaml"}]
    error = error_for(document)
    assert (error.field or "").startswith("spec.workloads.0")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cluster": None}, "spec.workloads share spec.cluster's nodes"),
        ({"workloads": [SHARED_CORE["spec"]["workloads"][0]] * 2}, "two entries of spec.workloads are named 'batch'"),
    ],
)
def test_the_format_refuses_workloads_it_cannot_run(change: dict[str, Any], message: str) -> None:
    document = scenario(SHARED_CORE, **change)
    if document["spec"]["cluster"] is None:
        del document["spec"]["cluster"]
    with pytest.raises(ScenarioError) as info:
        parse_scenario(yaml.safe_dump(document), source="s.yaml")
    assert message in info.value.message


def test_a_workload_may_not_take_the_scenarios_name() -> None:
    document = scenario(SHARED_CORE)
    document["spec"]["workloads"][0]["name"] = "web"
    with pytest.raises(ScenarioError) as info:
        parse_scenario(yaml.safe_dump(document), source="s.yaml")
    assert "is the scenario's name" in info.value.message


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("spec.traffic.rate", "spec.workloads.1.traffic.rate"),
        ("spec.autoscalers.0.manifest", "spec.workloads.1.autoscalers.0.manifest"),
        ("spec.cluster.nodes.0", "spec.cluster.nodes.0"),  # shared: as written
        (None, "spec.workloads.1"),
    ],
)
def test_rebase_moves_a_workloads_own_fields_under_its_entry(field: str | None, expected: str) -> None:
    assert rebase(field, "spec.workloads.1") == expected


def test_the_constant_traffic_above_arrives_once_a_second() -> None:
    # The premise of the hand-computed cases: constant 1/s gives arrivals at 1 s .. 9 s before the halt at 10 s.
    summary = simulate(scenario(SHARED_CORE, workloads=[])).summary()
    assert summary.requests_arrived == 9
    assert summary.simulated_ns == 10 * SECOND


def test_a_drain_asks_each_workloads_own_disruption_budget() -> None:
    # Every pod starts on node a (the only node); b joins, then a is drained. web's budget allows no
    # disruption (minAvailable 2 of 2), batch has none: its pods go, web's are refused.
    document = scenario(
        SHARED_CORE,
        disruptionBudget={"minAvailable": 2},
        cluster={"nodes": [{"name": "a", "cpu": 4, "memory": "8Gi"}]},
        events=[
            {"id": "b", "at": "1s", "create": {"target": "node/b", "object": {"cpu": 4, "memory": "8Gi"}}},
            {"id": "drain", "at": "2s", "delete": {"target": "node/a"}},
        ],
    )
    document["spec"]["workload"]["replicas"] = 2
    document["spec"]["workloads"][0]["workload"]["replicas"] = 2
    simulation = simulate(document)
    [line] = [entry[4] for entry in simulation.timeline.entries() if entry[1] == "drain" and entry[0] == 2 * SECOND]
    assert line.startswith("node a cordoned; batch-0, batch-1 evicted; eviction of web-0, web-1 refused")


def test_the_series_holds_every_workloads_rows_under_its_name() -> None:
    simulation = simulate(SHARED_CORE)
    series = simulation.series()
    assert list(series.columns[:2]) == ["workload", "time_ns"]
    rows = series.groupby("workload")["requests_arrived"].sum().to_dict()
    summary = simulation.summary()
    assert rows == {"web": summary.requests_arrived, "batch": summary.workloads["batch"]["requests_arrived"]}


LOOPS = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: loops}
spec:
  duration: 3m
  seed: 12
  workload: {replicas: 2, resources: {requests: {cpu: 500m}}, request: {cpuTime: 50ms}}
  traffic: {type: poisson, rate: 30/s}
  autoscalers:
    - {type: hpa, syncPeriod: 15s, spec: {minReplicas: 2, maxReplicas: 6}}
"""


def _loop_times(text: str) -> tuple[list[int], list[int], int]:
    """metrics-server's scrape instants (when samples reach the sink), the HPA's syncs, and what arrived."""
    simulation = Simulation(parse_scenario(text))
    scrapes: set[int] = set()
    simulation.model.metrics_sink.subscribe(lambda sample: scrapes.add(simulation.env.now()))
    summary = simulation.run()
    syncs = [entry[0] for entry in simulation.timeline.entries() if entry[1] == "hpa" and entry[2] == "Decision"]
    return sorted(scrapes), syncs, summary.requests_arrived


def test_each_loops_phase_is_its_own_so_adding_or_changing_a_loop_moves_no_other() -> None:
    scrapes, syncs, arrived = _loop_times(LOOPS)
    # A VPA brings two loops of its own (recommender, updater): the HPA's syncs, metrics-server's
    # scrapes and the traffic stay as they were.
    with_vpa = LOOPS + "    - {type: vpa, spec: {updatePolicy: {updateMode: 'Off'}}}\n"
    assert _loop_times(with_vpa) == (scrapes, syncs, arrived)
    # Another sync period moves the HPA's syncs (same stream, another period) and nothing else.
    other_scrapes, other_syncs, other_arrived = _loop_times(LOOPS.replace("syncPeriod: 15s", "syncPeriod: 20s"))
    assert (other_scrapes, other_arrived) == (scrapes, arrived) and other_syncs != syncs
    phase = RandomStreams(12).phase("metrics-server.phase", 15 * SECOND)
    assert all((t - phase) % (15 * SECOND) == 0 for t in scrapes)
