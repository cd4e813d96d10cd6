"""`explain` and the decision records, on real runs: what they say must agree with the decisions themselves.

The HPA run is examples/hpa-step.yaml (a step of traffic at 5m); the KPA run the scale-from-zero
example; the cluster-autoscaler run the zone-spread case of tests/scenario/build/test_placement.py.
"""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path

import pytest

from skenario.core.time import MINUTE, format_duration, parse_duration
from skenario.errors import SkenarioError
from skenario.results.analysis import decisions
from skenario.results.explain import CONDITIONS, decision_records, explain
from skenario.results.rundata import RunData
from skenario.scenario.loader import load_scenario, parse_scenario
from skenario.scenario.simulation import Simulation
from tests.scenario.build.test_placement import ZONE_SPREAD

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@cache
def _run(example: str) -> RunData:
    sim = Simulation(load_scenario(EXAMPLES / example), base_dir=EXAMPLES)
    sim.run()
    return RunData.from_simulation(sim)


def _hpa_rows(run: RunData) -> list[dict]:  # type: ignore[type-arg]
    return [r for r in decision_records(run) if r["autoscaler"] == "hpa"]


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
        first = next(t for t in (round(r["time_s"] * 1e9) for r in rows) if format_duration(t) == since)
        # From `since` to the last decision the condition keeps its value; just before, it had another.
        after = [r for r in rows if round(r["time_s"] * 1e9) >= first]
        assert all(r["conditions"][kind] == value for r in after)
        before = [r for r in rows if round(r["time_s"] * 1e9) < first]
        assert not before or before[-1]["conditions"][kind] != value


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
    times = [parse_duration(row[0]) for row in panic.rows]
    stays = [left - entered for entered, left in zip(times[0::2], times[1::2], strict=False)]
    assert stays and all(stay >= MINUTE for stay in stays)


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
