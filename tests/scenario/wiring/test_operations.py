"""Scenario events at run time: each checked against a consequence derived independently of how it is applied."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from skenario.autoscalers.cluster import ClusterContext
from skenario.core.random import RandomStreams
from skenario.core.time import SECOND
from skenario.errors import ScenarioError
from skenario.results.rundata import RunData
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Phase, Simulation


def scenario(spec: str, *events: str) -> str:
    text = "apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {name: run}\nspec:\n" + spec
    if events:
        text += "  events:\n" + "".join(f"    - {event}\n" for event in events)
    return text


def simulate(spec: str, *events: str) -> Simulation:
    return Simulation(parse_scenario(scenario(spec, *events)))


def decisions(simulation: Simulation, source: str) -> list[dict[str, Any]]:
    return [e[5] for e in simulation.timeline.entries() if e[1] == source and e[2] == "Decision"]


def series(simulation: Simulation, column: str) -> dict[int, Any]:
    """The recorder's column by the end time (s) of each interval."""
    columns = simulation.recorder.columns
    return {t // SECOND: v for t, v in zip(columns["time_ns"], columns[column], strict=True)}


TRAFFIC = """\
  duration: 60s
  workload: {replicas: 2, request: {cpuTime: 10ms}}
  traffic: {type: constant, rate: 10/s}
"""


def test_a_traffic_patch_changes_the_arrival_rate_from_its_time() -> None:
    simulation = simulate(TRAFFIC, "{id: rush, at: 20s, patch: {target: traffic, patch: {rate: 40/s}}}")
    simulation.run()
    arrived = series(simulation, "requests_arrived")
    assert sorted(arrived) == [10, 20, 30, 40, 50, 60]
    # Constant traffic at r/s gives r*L arrivals in an interval of L seconds (one less in the first: none at 0).
    for end, count in arrived.items():
        rate = 10 if end <= 20 else 40
        assert abs(count - rate * 10) <= 1, (end, count)
    assert simulation.model.requests_arrived == 10 * 20 - 1 + 40 * 40


def test_a_traffic_patch_to_another_type_keeps_the_window_as_written() -> None:
    spec = TRAFFIC.replace("rate: 10/s}", "rate: 10/s, stop: 40s}")
    simulation = simulate(spec, "{id: rush, at: 20s, patch: {target: traffic, patch: {type: constant, rate: 20/s}}}")
    simulation.run()
    arrived = series(simulation, "requests_arrived")
    assert arrived[30] == 200 and arrived[40] == 200
    assert arrived[50] == 0 and arrived[60] == 0  # stop: 40s still holds after the patch


def test_a_traffic_delete_stops_arrivals_and_a_create_starts_them_again() -> None:
    simulation = simulate(
        TRAFFIC,
        "{id: quiet, at: 25s, delete: {target: traffic}}",
        "{id: back, at: 40s, create: {target: traffic, object: {type: constant, rate: 5/s}}}",
    )
    simulation.run()
    arrived = series(simulation, "requests_arrived")
    assert arrived[30] == 50  # 20.0s .. 24.9s
    assert arrived[40] == 0
    assert arrived[50] == 50 and arrived[60] == 50


KILL = """\
  duration: 60s
  workload:
    replicas: 1
    resources: {requests: {cpu: 1}}
    request: {cpuTime: 2s, timeout: null}
  traffic: {type: constant, rate: 2/s}
"""


def test_deleting_a_replica_fails_the_requests_it_held_and_launches_a_replacement() -> None:
    at = "10.25s"  # between arrivals (every 0.5s), so what it holds at the pause is what it holds when killed
    simulation = simulate(KILL, f"{{id: crash, at: {at}, delete: {{target: replica}}}}")
    before = simulation.run(until=at)
    model = simulation.model
    [replica] = list(model.replicas_active)
    held = replica.processing.count()
    assert held > 0
    desired = model.desired
    after = simulation.run(until=simulation.env.now() + 1)
    assert after.failures == {"replica_killed": held}
    assert after.requests_failed == before.requests_failed + held
    assert after.replicas_started == before.replicas_started + 1
    assert model.desired == desired
    assert replica.terminated_at == simulation.env.now() - 1
    entry = simulation.timeline.entries()[-1]
    assert entry[1:4] == ("crash", "Delete", "replica") and replica.name in entry[4]
    final = simulation.run()
    assert final.replicas_active == desired  # the replacement became active


def test_deleting_a_named_replica_and_a_missing_one() -> None:
    simulation = simulate(
        KILL.replace("replicas: 1", "replicas: 2"),
        "{id: first, at: 5.25s, delete: {target: replica/1}}",
        "{id: again, at: 6.25s, delete: {target: replica/1}}",
    )
    simulation.run()
    ids = {r.id for r in simulation.model.replicas.values()}
    assert 1 not in ids and {0, 2} <= ids
    messages = {e[1]: e[4] for e in simulation.timeline.entries()}
    assert "replica-1" in messages["first"]
    assert "nothing deleted" in messages["again"]
    assert simulation.summary().replicas_started == 3


HPA = """\
  duration: 150s
  workload:
    replicas: 2
    resources: {requests: {cpu: 1}}
    request: {cpuTime: 100ms}
  metrics: {source: ticks, interval: 2s, firstAfter: 1s, lag: 500ms}
  traffic: {type: constant, rate: 10/s}
  autoscalers:
    - type: hpa
      syncPeriod: 5s
      spec:
        maxReplicas: 10
        metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
"""
RUSH = "{id: rush, at: 31s, patch: {target: traffic, patch: {rate: 40/s}}}"


def scale_changes(simulation: Simulation, start_s: float, stop_s: float) -> list[dict[str, Any]]:
    return [
        d
        for d in decisions(simulation, "hpa")
        if start_s * SECOND < d["at"] < stop_s * SECOND and d["desired"] != d["current"]
    ]


def test_with_the_metrics_pipeline_down_the_hpa_cannot_scale_and_the_sink_is_empty() -> None:
    without = simulate(HPA, RUSH)
    without.run()
    assert scale_changes(without, 31, 80), "the rush makes the HPA scale up when it can see it"
    down = "{id: down, at: 30.5s, delete: {target: metrics}}"
    up = "{id: up, at: 80.5s, create: {target: metrics}}"
    simulation = simulate(HPA, RUSH, down, up)
    simulation.run(until="60s")
    assert simulation.model.metrics_sink.latest == {}
    assert ClusterContext(simulation.model).samples() == {}  # what any autoscaler would read
    assert simulation.model.desired == 2
    simulation.run()
    assert scale_changes(simulation, 30.5, 80.5) == []
    during = [d for d in decisions(simulation, "hpa") if 31 * SECOND < d["at"] < 80 * SECOND]
    assert during and all(d["error"] for d in during)  # each sync says why it could not compute
    assert set(series(simulation, "replicas_desired")[t] for t in (40, 50, 60, 70, 80)) == {2}
    # Back up: samples flow again and the HPA scales up.
    assert simulation.model.metrics_sink.latest
    assert scale_changes(simulation, 80.5, 150)
    assert simulation.model.desired > 2


def test_samples_reach_the_sink_again_once_the_metrics_come_back() -> None:
    simulation = simulate(
        HPA, "{id: down, at: 20.5s, delete: {target: metrics}}", "{id: up, at: 40.5s, create: {target: metrics}}"
    )
    arrivals: list[int] = []
    simulation.model.metrics_sink.subscribe(lambda sample: arrivals.append(simulation.env.now()))
    simulation.run()
    assert not [t for t in arrivals if 20.5 * SECOND <= t <= 40.5 * SECOND]
    after = [t for t in arrivals if t > 40.5 * SECOND]
    # Two replicas each tick every 2s: samples arrive from the first ticks after 40.5s + the lag.
    assert after and after[0] <= 43 * SECOND
    assert len(after) >= 2 * int((150 - 43) / 2)


def test_a_metrics_patch_changes_the_interval_and_lag_from_the_next_tick() -> None:
    spec = (
        TRAFFIC.replace("replicas: 2", "replicas: 1")
        + "  metrics: {source: ticks, interval: 2s, firstAfter: 1s, lag: 500ms}\n"
    )
    simulation = simulate(spec, "{id: slower, at: 20.5s, patch: {target: metrics, patch: {interval: 5s, lag: 1s}}}")
    delivered: list[tuple[int, int]] = []
    simulation.model.metrics_sink.subscribe(lambda sample: delivered.append((sample.at, simulation.env.now())))
    simulation.run()
    ticks = [tick // SECOND for tick, _ in delivered]  # the replica is active at 1 ns: ticks at 1 ns past a second
    # Every 2s from 1s; the tick due at 21s was set before the patch, and from it on every 5s.
    assert ticks == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 26, 31, 36, 41, 46, 51, 56]
    lags = [arrived - tick for tick, arrived in delivered]
    assert lags == [SECOND // 2] * 10 + [SECOND] * 8


def test_a_deleted_autoscaler_decides_nothing_more() -> None:
    simulation = simulate(HPA, "{id: hpa-gone, at: 22s, delete: {target: autoscaler/hpa}}", RUSH)
    simulation.run()
    times = [d["at"] for d in decisions(simulation, "hpa")]
    first = RandomStreams(simulation.seed).phase("autoscaler.hpa.sync.phase", 5 * SECOND)  # its own phase
    assert times == list(range(first, 22 * SECOND, 5 * SECOND))
    assert "hpa" not in simulation.autoscalers
    # The rush comes after the delete: nothing scales for it.
    assert set(series(simulation, "replicas_desired")[t] for t in range(30, 151, 10)) == {2}


def test_an_autoscaler_patch_restarts_it_with_the_new_settings() -> None:
    simulation = simulate(HPA, "{id: slower, at: 32s, patch: {target: autoscaler/hpa, patch: {syncPeriod: 20s}}}")
    simulation.run()
    times = [d["at"] for d in decisions(simulation, "hpa")]
    first = RandomStreams(simulation.seed).phase("autoscaler.hpa.sync.phase", 5 * SECOND)
    # Every 5 s from its phase; restarted at 32 s, it is new: its first sync one (new) period later.
    assert times == [*range(first, 32 * SECOND, 5 * SECOND), *range(52 * SECOND, 150 * SECOND, 20 * SECOND)]
    entry = next(e for e in simulation.timeline.entries() if e[1] == "slower")
    assert entry[2:4] == ("Patch", "autoscaler/hpa") and "restarted" in entry[4]


def test_an_autoscaler_created_by_an_event_starts_then() -> None:
    created = "{id: second, at: 33s, create: {target: autoscaler/kpa, object: {type: kpa}}}"
    simulation = simulate(HPA, created)
    simulation.run()
    assert set(simulation.autoscalers) == {"hpa", "kpa"}
    times = [d["at"] for d in decisions(simulation, "kpa")]
    assert times and min(times) > 33 * SECOND


WORKLOAD = """\
  duration: 60s
  workload:
    replicas: 2
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: 10ms}
  traffic: {type: constant, rate: 5/s}
"""


def test_a_replicas_patch_sets_desired_at_its_time() -> None:
    simulation = simulate(WORKLOAD, "{id: more, at: 15s, patch: {target: workload, patch: {replicas: 5}}}")
    simulation.run(until="15s")
    assert simulation.model.desired == 2
    simulation.run(until=15 * SECOND + 1)
    assert simulation.model.desired == 5
    summary = simulation.run()
    assert summary.replicas_desired == 5 and summary.replicas_active == 5 and summary.replicas_started == 5


def test_a_resources_patch_applies_to_replicas_made_afterwards() -> None:
    simulation = simulate(
        WORKLOAD,
        "{id: bigger, at: 20s, patch: {target: workload, patch: {resources: {requests: {cpu: 2}}}}}",
        "{id: more, at: 30s, patch: {target: workload, patch: {replicas: 4}}}",
        "{id: both, at: 40s, patch: {target: workload, patch: {replicas: 5, resources: {requests: {cpu: 250m}}}}}",
    )
    simulation.run()
    replicas = RunData.from_simulation(simulation).replicas
    expected = {0: 500, 1: 500, 2: 2000, 3: 2000, 4: 250}
    assert dict(zip(replicas["replica"], replicas["cpu_request"], strict=True)) == expected
    made = dict(zip(replicas["replica"], replicas["created_ns"], strict=True))
    assert made == {0: 0, 1: 0, 2: 30 * SECOND, 3: 30 * SECOND, 4: 40 * SECOND}
    assert {(r.id, r.cpu_request) for r in simulation.model.replicas_active} == set(expected.items())


def test_a_request_patch_changes_the_work_of_requests_from_then_on() -> None:
    simulation = simulate(
        # Replicas of one core each (their limit): utilisation is busy over that core.
        WORKLOAD.replace("{requests: {cpu: 500m}}", "{requests: {cpu: 1}, limits: {cpu: 1}}"),
        "{id: heavier, at: 30s, patch: {target: workload, patch: {request: {cpuTime: 100ms}}}}",
    )
    simulation.run()
    busy = series(simulation, "cpu_request_utilisation")
    # 5/s x 10ms over 2 cores is 2.5% busy; 5/s x 100ms is 25%.
    assert busy[20] == pytest.approx(0.025, rel=0.05)
    assert busy[50] == pytest.approx(0.25, rel=0.05)


def test_a_launch_patch_is_refused_at_load() -> None:
    event = "{id: slow, at: 10s, patch: {target: workload, patch: {launch: {readiness: 30s}}}}"
    text = scenario(WORKLOAD, event)
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "w.yaml")
    assert info.value.field == "spec.events.0.patch.patch"
    assert "cannot change launch during a run" in info.value.message
    assert info.value.line == text.splitlines().index(f"    - {event}") + 1


def test_a_done_event_ends_the_run_at_its_time() -> None:
    simulation = simulate(WORKLOAD, "{id: enough, at: 25s, done: {}}")
    summary = simulation.run()
    assert simulation.phase is Phase.COMPLETED
    assert simulation.env.now() == 25 * SECOND == summary.simulated_ns
    assert "enough" in (simulation.message or "") and "25s" in (simulation.message or "")
    assert simulation.timeline.entries()[-1][:3] == (25 * SECOND, "enough", "Done")
    assert summary.requests_arrived == 5 * 25 - 1  # constant 5/s, none at 0 and the one at 25s not yet


def test_every_event_is_in_the_timeline_at_its_time_with_its_operation() -> None:
    events = {
        "rush": (7, "Patch", "traffic", "{patch: {target: traffic, patch: {rate: 8/s}}}"),
        "crash": (9, "Delete", "replica", "{delete: {target: replica}}"),
        "down": (11, "Delete", "metrics", "{delete: {target: metrics}}"),
        "up": (13, "Create", "metrics", "{create: {target: metrics}}"),
        "more": (17, "Patch", "workload", "{patch: {target: workload, patch: {replicas: 3}}}"),
        "extra": (19, "Create", "autoscaler/extra", "{create: {target: autoscaler/extra, object: {type: kpa}}}"),
        "quiet": (23, "Delete", "traffic", "{delete: {target: traffic}}"),
        "end": (29, "Done", "scenario", "{done: {}}"),
    }
    written = [f"{{id: {i}, at: {at}s, {op[1:-1]}}}" for i, (at, _, _, op) in events.items()]
    simulation = simulate(WORKLOAD, *reversed(written))  # the file's order does not matter, the times do
    simulation.run()
    entries = [e for e in simulation.timeline.entries() if e[2] != "Decision"]
    assert [e[1] for e in entries] == list(events)
    for time_ns, source, operation, target, message, _ in entries:
        at, expected_operation, expected_target, _ = events[source]
        assert (time_ns, operation, target) == (at * SECOND, expected_operation, expected_target)
        assert message


class Keeper:
    """An autoscaler that keeps its decisions in a `decisions` list, as the built-in ones do: one a second.

    Slots and nothing made in `__init__`, so that a new Keeper can be given exactly the memory of a freed one.
    """

    __slots__ = ("clock", "decisions")

    def start(self, context: Any) -> None:
        self.decisions: list[dict[str, Any]] = []
        self.clock = context.clock
        self.clock.call_later(SECOND, self.tick)

    def tick(self) -> None:
        self.decisions.append({"at": self.clock.now(), "reason": "tick"})
        self.clock.call_later(SECOND, self.tick)


def test_an_autoscaler_started_after_another_stopped_has_all_its_decisions_in_the_timeline() -> None:
    # What an autoscaler patch or a delete and create do: stop one autoscaler, start a new object.
    simulation = simulate(WORKLOAD)
    simulation.main.start_autoscaler("old", Keeper())
    simulation.run(until="10.5s")
    old_id = id(simulation.autoscalers["old"])
    simulation.main.stop_autoscaler("old")
    simulation.run(until="11.5s")  # its pending tick comes to nothing; nothing refers to it now
    gc.collect()
    # A new object may be given the stopped one's memory, and so its id.
    candidates = [Keeper()]
    while id(candidates[-1]) != old_id and len(candidates) < 100_000:
        candidates.append(Keeper())
    new = candidates[-1]
    simulation.main.start_autoscaler("new", new)
    simulation.run(until="15.5s")
    assert [d["at"] for d in new.decisions] == [12_500_000_000, 13_500_000_000, 14_500_000_000]
    assert [d["at"] for d in decisions(simulation, "new")] == [d["at"] for d in new.decisions]
    assert len(decisions(simulation, "old")) == 10


@pytest.mark.parametrize("replicas", [0, 2])
def test_a_replicas_patch_in_the_instant_of_a_replica_delete_still_ends_at_desired(replicas: int) -> None:
    # Events at one time apply in the file's order: the replica dies (a replacement is due), then desired changes.
    simulation = simulate(
        WORKLOAD.replace("replicas: 2", "replicas: 1"),
        "{id: crash, at: 10s, delete: {target: replica}}",
        f"{{id: scale, at: 10s, patch: {{target: workload, patch: {{replicas: {replicas}}}}}}}",
    )
    summary = simulation.run()
    assert summary.replicas_desired == replicas
    assert summary.replicas_active == replicas  # 50s later, the ReplicaSet has long reconciled
