"""`explain` and the decision records, on real runs: what they say must agree with the decisions themselves.

The HPA run is examples/hpa-step.yaml (a step of traffic at 5m, the HPA of
examples/manifests/web-hpa.yaml: CPU at 60% of request, 2 to 20 replicas); the KPA runs the
scale-from-zero example and the steady load of tests/autoscalers/kpa/test_controller.py (10 in
flight against a target of 1.4: 8 pods); the cluster-autoscaler run the zone-spread case of
tests/scenario/wiring/test_placement.py.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from skenario.core.time import MINUTE, SECOND, format_clock, parse_clock, parse_duration
from skenario.errors import SkenarioError
from skenario.results.analysis import decisions
from skenario.results.explain import CONDITIONS, Explanation, decision_records, explain
from skenario.results.rundata import RunData
from skenario.scenario.loader import load_scenario, parse_scenario
from skenario.scenario.simulation import Simulation
from tests.autoscalers.kpa.test_controller import STEADY, STEADY_PODS
from tests.scenario.wiring.test_placement import ZONE_SPREAD

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@cache
def _run(example: str) -> RunData:
    sim = Simulation(load_scenario(EXAMPLES / example), base_dir=EXAMPLES)
    sim.run()
    return RunData.from_simulation(sim)


@cache
def _steady() -> RunData:
    sim = Simulation(parse_scenario(STEADY))
    sim.run()
    return RunData.from_simulation(sim)


def _hpa_rows(run: RunData) -> list[dict]:  # type: ignore[type-arg]
    return [r for r in decision_records(run) if r["autoscaler"] == "hpa"]


def _values(explanation: Explanation, section: int = 0) -> dict[str, str]:
    """A what / value section as a mapping."""
    return {row[0]: row[1] for row in explanation.sections[section].rows}


@pytest.mark.parametrize("at_min", [6, 12, 25, 40])
def test_hpa_conditions_hold_since_the_time_explain_names(at_min: int) -> None:
    run = _run("hpa-step.yaml")
    at = at_min * MINUTE
    (explanation,) = explain(run, at)
    assert explanation.kind == "hpa"
    conditions = explanation.sections[0]
    rows = [r for r in _hpa_rows(run) if r["time_s"] * 1e9 <= at]
    for kind, status, reason, since in conditions.rows:
        assert kind in CONDITIONS
        value = f"{status} {reason}"
        # `since` is a clock time and the same instant relative to the explained one: 00:05:15 (-45s),
        # each to the second shown (the HPA syncs at its own phase, not on whole seconds).
        clock, relative = re.fullmatch(r"(\d\d:\d\d:\d\d) \((.+)\)", since).groups()  # type: ignore[union-attr]
        first = next(t for t in (round(r["time_s"] * 1e9) for r in rows) if format_clock(t) == clock)
        assert abs(first - at - parse_duration(relative.removeprefix("+"))) < SECOND
        # From `since` to the last decision the condition keeps its value; just before, it had another.
        after = [r for r in rows if round(r["time_s"] * 1e9) >= first]
        assert after and all(r["conditions"][kind] == value for r in after)
        before = [r for r in rows if round(r["time_s"] * 1e9) < first]
        assert not before or before[-1]["conditions"][kind] != value


def test_hpa_explains_a_decision_with_the_target_and_the_bounds_of_its_manifest() -> None:
    """web-hpa.yaml: CPU at 60% of request, minReplicas 2, maxReplicas 20."""
    (explanation,) = explain(_run("hpa-step.yaml"), 12 * MINUTE)
    values = _values(explanation, 1)
    assert values["bounds"] == "minReplicas 2, maxReplicas 20"
    (metric,) = (value for what, value in values.items() if what.startswith("metric cpu"))
    assert "against a target of 60% of request" in metric


def test_hpa_changes_list_every_change_of_the_replica_count_and_its_rule() -> None:
    run = _run("hpa-step.yaml")
    (explanation,) = explain(run)
    changes = explanation.sections[2]
    changed = [r for r in _hpa_rows(run) if r["desired"] != r["current"]][-10:]
    assert [row[1] for row in changes.rows] == [f"{r['current']} -> {r['desired']}" for r in changed]
    assert all(row[2] for row in changes.rows)
    # A change to what the metrics proposed says so; one the HPA held short of the proposal names the
    # limit or the stabilisation window that held it (the step down at 20m is held by both).
    holders = ("ScaleUpLimit", "ScaleDownLimit", "TooManyReplicas", "TooFewReplicas", "ScaleDownStabilized")
    held = [r["proposed"] != r["desired"] for r in changed]
    assert [row[2].startswith(holders) for row in changes.rows] == held
    assert any(held) and not all(held)


def test_kpa_panic_entries_and_exits_alternate() -> None:
    run = _run("kpa-scale-from-zero.yaml")
    (explanation,) = explain(run)
    assert explanation.kind == "kpa"
    panic = explanation.sections[1]
    changes = [row[1] for row in panic.rows]
    assert changes and all(a != b for a, b in itertools.pairwise(changes))
    # The decider leaves panic only once a whole stable window (60 s by default) has passed since
    # it last had reason to panic: every stay in panic lasts at least that long.
    times = [parse_clock(row[0]) for row in panic.rows]
    stays = [left - entered for entered, left in zip(times[0::2], times[1::2], strict=False)]
    assert stays and all(stay >= MINUTE for stay in stays)


def test_kpa_explains_a_steady_load_by_its_inputs() -> None:
    """10 in flight (50/s of 200 ms) against a target of 1.4 per pod (70% of the annotation's 2) on 8
    ready pods: the stable window asks for ceil(10 / 1.4) = 8, and the excess burst capacity
    floor(8 x 2 - 211 - the panic average) is negative, so the activator stays in the path."""
    (explanation,) = explain(_steady())
    assert explanation.kind == "kpa"
    values = _values(explanation)
    assert values["ready pods"] == "8"
    assert values["target per pod"] == "1.4 (70% of the 2 a pod takes)"
    assert values["target for the ready pods"] == "1.4 x 8 = 11.2"
    stable = re.fullmatch(
        r"(\d+\.\d+): ceil\((\d+\.\d+) / 1\.4\) = (\d+) pod\(s\)", values["stable window (1m) average"]
    )
    assert stable is not None
    assert abs(float(stable[1]) - 10) < 0.5 and int(stable[3]) == STEADY_PODS
    panic = re.fullmatch(
        r"(\d+\.\d+): ceil\(\1 / 1\.4\) = (\d+) pod\(s\), (\d\.\d\d)x the 8 ready pod\(s\) \(panic from 2x\)",
        values["panic window (6s) average"],
    )
    assert panic is not None
    assert int(panic[2]) == math.ceil(float(panic[1]) / 1.4) and float(panic[3]) == round(int(panic[2]) / 8, 2) < 2
    assert values["mode"] == "stable"
    assert values["proposal (`Scale`'s DesiredPodCount)"] == values["replicas set"] == "8"
    assert values["the decider's rule"].startswith("stable-window: ")
    assert values["the reconciler's rule"] == "applied as proposed"
    ebc = re.fullmatch(r"floor\(8 x 2 - 211 - (\d+\.\d+)\) = (-\d+) .*", values["excess burst capacity"])
    assert ebc is not None and int(ebc[2]) == math.floor(8 * 2 - 211 - float(ebc[1]))
    assert values["activator"].startswith("in the request path (SKS Proxy)")


def test_kpa_says_what_a_proposal_of_minus_one_means() -> None:
    """At the end of the scale-from-zero run no request has come for minutes: the windows are empty,
    `Scale` has no data and the proposal is -1, which changes nothing for an Inactive PA."""
    (explanation,) = explain(_run("kpa-scale-from-zero.yaml"))
    values = _values(explanation)
    assert values["proposal (`Scale`'s DesiredPodCount)"].startswith("-1, no decision: the decider had no data")
    assert values["the reconciler's rule"].startswith("no-metrics: ")
    assert values["PodAutoscaler"] == "Inactive"
    assert values["excess burst capacity"].startswith("- ")


@pytest.mark.parametrize("example", ["hpa-step.yaml", "kpa-scale-from-zero.yaml"])
def test_every_time_in_an_explanation_is_a_clock_time(example: str) -> None:
    for at in (6 * MINUTE, None):
        for explanation in explain(_run(example), at):
            for section in explanation.sections:
                assert not re.search(r"\d+m\d+(\.\d+)?s\b", section.title)  # no Go durations as instants
                if "time" in section.columns:
                    column = section.columns.index("time")
                    assert all(re.fullmatch(r"\d\d:\d\d:\d\d", row[column]) for row in section.rows)


def test_the_cluster_autoscaler_explains_the_pods_it_left() -> None:
    sim = Simulation(parse_scenario(ZONE_SPREAD, "z.yaml"))
    sim.run()
    run = RunData.from_simulation(sim)
    (explanation,) = explain(run, autoscaler="cluster-autoscaler")
    assert explanation.kind == "cluster-autoscaler"
    assert ("NotTriggerScaleUp", "4") in explanation.sections[0].rows
    assert all("missing required label" in row[4] for row in explanation.sections[1].rows)


def test_the_flat_and_nested_decisions_are_the_same_decisions() -> None:
    run = _run("hpa-step.yaml")
    nested = decision_records(run)
    flat = decisions(run)
    assert len(nested) == len(flat) == int((run.timeline["operation"] == "Decision").sum())
    assert [r["desired"] for r in nested] == flat["desired"].astype(int).tolist()


def test_an_autoscaler_the_run_does_not_have_is_named_in_the_error() -> None:
    with pytest.raises(SkenarioError, match=r"'vpa'.*it has: hpa"):
        explain(_run("hpa-step.yaml"), autoscaler="vpa")


def test_a_kpa_run_stored_before_the_inputs_were_recorded_still_explains(make_run: Callable[..., RunData]) -> None:
    """Older runs kept only the proposal, the count and the modes: those are shown, nothing is made up."""
    old = {"ready": 2, "proposed": 3, "desired": 3, "applied": True, "panic": False, "state": "Active"}
    timeline = [(t * SECOND, "kpa", "Decision", "workload", "", {"at": t * SECOND, **old}) for t in (2, 4)]
    (explanation,) = explain(make_run(timeline=timeline))
    values = _values(explanation)
    assert (values["ready pods"], values["proposal (`Scale`'s DesiredPodCount)"], values["replicas set"]) == (
        "2",
        "3",
        "3",
    )
    assert values["mode"] == "stable" and values["PodAutoscaler"] == "Active"
    assert not any("average" in what for what in values)
