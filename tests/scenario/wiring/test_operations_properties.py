"""Invariants of runs with random timelines of events (request and replica checks as in tests/model/test_properties.py).

Over random short scenarios with traffic patches, replica deletes, metrics outages and replica patches:

(a) requests are conserved: arrived = completed + failed + in flight, each one in flight in exactly one stock,
    none finished twice, every failure with a known reason;
(b) replicas are conserved: every one made is launching, active, terminating or terminated;
(c) every event is in the timeline once, at its time, in time order; each source's entries are in time
    order and none comes after the end;
(d) without an autoscaler, desired ends at the last replicas patch;
(e) the same scenario and seed give the same digest twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.entity import Entity
from skenario.core.movement import IgnoredMovement, Movement
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.replicas import Replica
from skenario.model.requests import Request
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

REASONS = {"timeout", "replica_killed", "killed", "buffer_full", "no_active_replica", "replica_queue_full"}


@dataclass(frozen=True)
class Case:
    seed: int
    duration_s: int
    replicas: int
    hpa: bool
    events: tuple[tuple[int, str, dict[str, Any]], ...]  # (at in ms, operation, body)

    def text(self) -> str:
        autoscalers = "  autoscalers: [{type: hpa, syncPeriod: 5s, spec: {maxReplicas: 4}}]\n" if self.hpa else ""
        events = "".join(
            f"    - {{id: e{i}, at: {at}ms, {operation}: {_flow(body)}}}\n"
            for i, (at, operation, body) in enumerate(self.events)
        )
        return (
            "apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {name: props}\nspec:\n"
            f"  duration: {self.duration_s}s\n  seed: {self.seed}\n"
            f"  workload:\n    replicas: {self.replicas}\n    resources: {{requests: {{cpu: 500m}}}}\n"
            "    request: {cpuTime: {distribution: exponential, mean: 60ms}, timeout: 3s}\n"
            "    queueCapacity: 20\n    terminationGracePeriod: 2s\n"
            "    launch: {containerStart: 500ms, readiness: 1s}\n"
            "  routing: {bufferCapacity: 10}\n"
            "  metrics: {interval: 2s, firstAfter: 1s, lag: 500ms}\n"
            "  traffic: {type: poisson, rate: 4/s}\n" + autoscalers + ("  events:\n" + events if events else "")
        )


def _flow(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_flow(item)}" for key, item in value.items()) + "}"
    return str(value)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    duration_s = draw(st.integers(20, 120))
    end_ms = duration_s * 1000
    # Some events share an instant: they apply in the file's order.
    at = st.one_of(st.integers(1, end_ms - 1), st.sampled_from([1, 5000, 10000, 15000]))
    events: list[tuple[int, str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["constant", "poisson"]))
        rate = draw(st.sampled_from([0, 0.5, 2, 5, 12]))
        events.append((draw(at), "patch", {"target": "traffic", "patch": {"type": kind, "rate": f"{rate}/s"}}))
    for _ in range(draw(st.integers(0, 3))):
        target = draw(st.sampled_from(["replica", "replica/0", "replica/1", "replica/3"]))
        events.append((draw(at), "delete", {"target": target}))
    times = sorted(draw(st.lists(at, max_size=4, unique=True)))
    for down, up in zip(times[::2], times[1::2], strict=False):
        events.append((down, "delete", {"target": "metrics"}))
        events.append((up, "create", {"target": "metrics"}))
    for _ in range(draw(st.integers(0, 3))):
        events.append((draw(at), "patch", {"target": "workload", "patch": {"replicas": draw(st.integers(0, 4))}}))
    order = draw(st.permutations(range(len(events))))
    return Case(
        seed=draw(st.integers(0, 2**16)),
        duration_s=duration_s,
        replicas=draw(st.integers(0, 3)),
        hpa=draw(st.booleans()),
        events=tuple(events[i] for i in order),
    )


class Tracker:
    """Follows every request and replica through the movements, independently of the model's counters."""

    def __init__(self, model: ClusterModel) -> None:
        self.model = model
        self.arrived: dict[Request, None] = {}
        self.completed: set[Request] = set()
        self.failed: set[Request] = set()
        self.replicas: dict[Replica, None] = {}
        self.problems: list[str] = []

    def on_movement(self, movement: Movement, entity: Entity) -> None:
        model = self.model
        if movement.kind == "arrive_at_routing":
            assert isinstance(entity, Request)
            self.arrived[entity] = None
        elif movement.kind in ("begin_launch", "start_initial_replica"):
            assert isinstance(entity, Replica)
            self.replicas[entity] = None
        elif movement.to_stock is model.requests_complete or movement.to_stock is model.requests_failed:
            assert isinstance(entity, Request)
            if entity in self.completed or entity in self.failed:
                self.problems.append(f"{entity} finished twice")
            (self.completed if movement.to_stock is model.requests_complete else self.failed).add(entity)

    def on_ignored(self, ignored: IgnoredMovement) -> None:
        pass


def check_requests(model: ClusterModel, tracker: Tracker) -> None:
    arrived = tracker.arrived
    assert model.requests_arrived == len(arrived)
    assert model.requests_complete.count() == len(tracker.completed)
    assert model.requests_failed.count() == len(tracker.failed)
    assert set(model.requests_failed.reasons) <= REASONS
    in_flight = set(arrived) - tracker.completed - tracker.failed
    assert model.requests_in_flight == len(in_flight)
    assert model.requests_routing.count() == 0
    where: dict[Request, list[str]] = {}
    stocks: list[tuple[str, Any]] = [("buffer", model.requests_buffered)]
    stocks += [(replica.name, replica.processing) for replica in tracker.replicas]
    for name, stock in stocks:
        for request in stock:
            where.setdefault(request, []).append(name)
    for request, names in where.items():
        assert len(names) == 1, (request, names)
    assert set(where) == in_flight


def check_replicas(model: ClusterModel, tracker: Tracker) -> None:
    made = model.replica_source.emitted
    assert made == len(tracker.replicas)
    live = model.replicas_launching.count() + model.replicas_active.count() + model.replicas_terminating.count()
    assert made == live + model.replicas_terminated.count()
    assert len(model.replicas) == live


@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_invariants_hold_over_random_timelines(case: Case) -> None:
    text = case.text()
    simulation = Simulation(parse_scenario(text))
    tracker = Tracker(simulation.model)
    simulation.env.observe(tracker)
    summary = simulation.run()
    model = simulation.model
    assert simulation.env.now() == case.duration_s * SECOND
    # (a)
    assert summary.requests_arrived == summary.requests_completed + summary.requests_failed + summary.requests_in_flight
    check_requests(model, tracker)
    assert tracker.problems == []
    columns = simulation.recorder.columns
    assert sum(columns["requests_arrived"]) == summary.requests_arrived
    assert sum(columns["requests_failed"]) == summary.requests_failed
    # (b)
    check_replicas(model, tracker)
    assert summary.replicas_started == summary.replicas_terminated + len(model.replicas)
    # (c)
    entries = simulation.timeline.entries()
    applied = [(e[0], e[1], e[2]) for e in entries if e[2] != "Decision"]
    expected = sorted(
        ((at * MILLISECOND, f"e{i}", op.title()) for i, (at, op, _) in enumerate(case.events)),
        key=lambda entry: (entry[0], int(entry[1][1:])),
    )
    assert applied == expected
    assert all(e[0] <= case.duration_s * SECOND for e in entries)
    for source in {e[1] for e in entries}:  # each source's entries come in time order
        times = [e[0] for e in entries if e[1] == source]
        assert times == sorted(times), source
    # (d)
    if not case.hpa:
        patches = [(at, i, body) for i, (at, op, body) in enumerate(case.events) if body["target"] == "workload"]
        last = max(patches)[2]["patch"]["replicas"] if patches else case.replicas
        assert model.desired == last
        assert model.replicas_launching.count() + model.replicas_active.count() == last
    # (e)
    assert Simulation(parse_scenario(text)).run().digest == summary.digest
