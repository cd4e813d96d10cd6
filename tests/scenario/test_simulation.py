"""KEP-140 phases of a run: Pending, Running, Paused, Completed, Failed; pausing, adding events and resuming."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.errors import PluginError
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import EventRefused, Phase, Simulation

SPEC = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: phases}
spec:
  duration: 60s
  seed: 11
  workload:
    replicas: 2
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: {distribution: exponential, mean: 50ms}}
  metrics: {interval: 2s, firstAfter: 1s, lag: 500ms}
  traffic: {type: poisson, rate: 12/s}
  autoscalers:
    - {type: hpa, syncPeriod: 5s, spec: {maxReplicas: 6}}
"""
EVENTS = """\
  events:
    - {id: rush, at: 10s, patch: {target: traffic, patch: {rate: 30/s}}}
    - {id: crash, at: 20s, delete: {target: replica}}
    - {id: down, at: 25s, delete: {target: metrics}}
    - {id: up, at: 35s, create: {target: metrics}}
    - {id: calm, at: 45s, patch: {target: traffic, patch: {type: constant, rate: 5/s}}}
"""
EVENT_TIMES = [10, 20, 25, 35, 45]


def simulation(text: str = SPEC + EVENTS, **kwargs: Any) -> Simulation:
    return Simulation(parse_scenario(text), **kwargs)


@cache
def straight_through() -> dict[str, Any]:
    return simulation().run().as_dict()


def test_a_new_simulation_is_pending() -> None:
    run = simulation()
    assert run.phase is Phase.PENDING
    assert run.env.now() == 0


def test_run_until_pauses_there() -> None:
    run = simulation()
    summary = run.run(until="17s")
    assert run.phase is Phase.PAUSED
    assert run.env.now() == 17 * SECOND == summary.simulated_ns
    assert run.message is not None and "17s" in run.message and "4 event(s) to come" in run.message
    run.run(until=30 * SECOND)  # ns as well
    assert (run.phase, run.env.now()) == (Phase.PAUSED, 30 * SECOND)
    with pytest.raises(ValueError, match="the run is at 30s"):
        run.run(until="29s")
    run.run()
    assert run.phase is Phase.COMPLETED and run.env.now() == 60 * SECOND
    assert run.message is not None and "spec.duration" in run.message


def test_run_until_after_the_end_stops_at_the_end() -> None:
    run = simulation()
    run.run(until="10m")
    assert run.phase is Phase.COMPLETED and run.env.now() == 60 * SECOND


def test_an_event_in_the_past_is_refused_with_the_reason() -> None:
    run = simulation()
    run.run(until="30s")
    with pytest.raises(EventRefused) as info:
        run.add_event({"id": "late", "at": "29s", "delete": {"target": "traffic"}})
    assert "in the past" in info.value.message and "30s" in info.value.message
    assert info.value.field is not None and "late" in info.value.field
    run.add_event({"id": "now", "at": "30s", "patch": {"target": "workload", "patch": {"replicas": 3}}})  # not past


def test_an_event_after_the_end_is_refused() -> None:
    run = simulation()
    with pytest.raises(EventRefused) as info:
        run.add_event({"id": "after", "at": "60s", "delete": {"target": "traffic"}})
    assert "end" in info.value.message


@pytest.mark.parametrize(
    ("event", "words"),
    [
        ({"id": "rush", "at": "50s", "done": {}}, "exists already"),
        ({"id": "x", "at": "50s"}, "not a valid event"),
        ({"id": "x", "at": "50s", "patch": {"target": "autoscaler/kpa", "patch": {}}}, "no autoscaler 'kpa'"),
        ({"id": "x", "at": "6s", "create": {"target": "metrics"}}, "is up"),
    ],
)
def test_an_invalid_event_is_refused_with_the_reason(event: dict[str, Any], words: str) -> None:
    run = simulation()
    run.run(until="5s")
    with pytest.raises(EventRefused) as info:
        run.add_event(event)
    assert words in str(info.value)
    assert run.phase is Phase.PAUSED
    assert run.run().digest == straight_through()["digest"]  # a refused event changes nothing


def test_an_event_is_checked_against_the_events_still_to_come() -> None:
    run = simulation()
    run.run(until="5s")
    # Metrics are down from 25s to 35s: a second delete at 30s is a mistake, one at 40s is not.
    with pytest.raises(EventRefused, match="down already"):
        run.add_event({"id": "x", "at": "30s", "delete": {"target": "metrics"}})
    run.add_event({"id": "y", "at": "40s", "delete": {"target": "metrics"}})


def test_an_added_done_event_ends_the_run_there() -> None:
    run = simulation()
    run.run(until="12s")
    run.add_event({"id": "enough", "at": "33s", "done": {}})
    summary = run.run()
    assert run.phase is Phase.COMPLETED
    assert run.env.now() == 33 * SECOND == summary.simulated_ns
    assert run.message is not None and "enough" in run.message
    assert [e[1] for e in run.timeline.entries() if e[2] != "Decision"] == ["rush", "crash", "down", "enough"]
    with pytest.raises(EventRefused):
        run.add_event({"id": "more", "at": "40s", "done": {}})


@settings(max_examples=12, deadline=None)
@given(
    pauses=st.lists(
        st.one_of(
            st.integers(1, 60 * SECOND - 1),
            st.sampled_from(EVENT_TIMES).flatmap(
                lambda s: st.sampled_from([s * SECOND - 1, s * SECOND, s * SECOND + 1])
            ),
        ),
        min_size=1,
        max_size=4,
        unique=True,
    )
)
def test_pausing_and_resuming_gives_the_same_run_as_straight_through(pauses: list[int]) -> None:
    run = simulation()
    for pause in sorted(pauses):
        run.run(until=pause)
        assert run.phase is Phase.PAUSED and run.env.now() == pause
    assert run.run().as_dict() == straight_through()


@pytest.mark.parametrize("pause", ["20s", "39.5s"])
def test_adding_an_event_while_paused_gives_the_same_run_as_writing_it_in_the_file(pause: str) -> None:
    text = SPEC.replace("poisson, rate: 12/s", "constant, rate: 1/s") + (
        "  events:\n    - {id: quiet, at: 40s, delete: {target: traffic}}\n"
    )
    written = simulation(text + "    - {id: down, at: 50s, delete: {target: metrics}}\n").run()
    assert written.requests_arrived == 39  # constant 1/s, stopped at 40s: 1s .. 39s
    run = simulation(text)
    run.run(until=pause)
    run.add_event({"id": "down", "at": "50s", "delete": {"target": "metrics"}})
    # The event at 50s has nothing to do with the traffic stopping at 40s, which must stay as it was.
    assert run.run().as_dict() == written.as_dict()


def test_with_no_end_the_run_pauses_just_after_the_last_event() -> None:
    text = SPEC.replace("  duration: 60s\n", "") + EVENTS
    run = simulation(text)
    run.run()
    assert run.phase is Phase.PAUSED
    assert run.env.now() == 45 * SECOND + 1
    assert run.message is not None and "every event is done" in run.message
    assert [e[1] for e in run.timeline.entries() if e[2] != "Decision"] == ["rush", "crash", "down", "up", "calm"]
    run.add_event({"id": "end", "at": "90s", "done": {}})
    run.run()
    assert (run.phase, run.env.now()) == (Phase.COMPLETED, 90 * SECOND)


def test_an_exception_in_a_plugin_fails_the_run_and_is_reported_as_the_plugins(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text(
        "class Boom:\n"
        "    def start(self, context):\n"
        "        self.context = context\n"
        "        context.clock.call_later(7_000_000_000, self.tick)\n"
        "    def tick(self):\n"
        "        raise RuntimeError('the plugin broke')\n"
    )
    text = SPEC.replace("{type: hpa, syncPeriod: 5s, spec: {maxReplicas: 6}}", "{type: plugin, plugin: boom.py:Boom}")
    run = simulation(text + EVENTS, base_dir=tmp_path)
    with pytest.raises(PluginError, match=r"raised RuntimeError in Boom\.tick at 7s: the plugin broke") as raised:
        run.run()
    assert isinstance(raised.value.__cause__, RuntimeError)  # the plugin's own exception, kept as the cause
    assert run.phase is Phase.FAILED
    assert run.message is not None and "RuntimeError" in run.message and "the plugin broke" in run.message
    assert run.env.now() == 7 * SECOND
    with pytest.raises(RuntimeError, match="failed"):
        run.run()
    with pytest.raises(EventRefused, match="failed"):
        run.add_event({"id": "late", "at": "50s", "done": {}})


def test_run_after_completed_raises() -> None:
    run = simulation()
    run.run()
    assert run.phase is Phase.COMPLETED
    with pytest.raises(RuntimeError, match="completed"):
        run.run()
    with pytest.raises(RuntimeError, match="completed"):
        run.run(until="70s")
