"""A study: objectives and constraints as written, constraints judged on the interval's far end, the
Pareto front against an independent skyline, the best trial cross-checked against its runs, the same
trials on one worker or two, and a stopped study resumed where it stopped."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import optuna
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import t as student_t

from skenario.results.store import RunStore
from skenario.scenario.loader import parse_scenario
from skenario.sweeps.plan import Template, replication_seeds
from skenario.sweeps.runner import workers
from skenario.sweeps.space import SweepError, parse_range, parse_set
from skenario.sweeps.stats import Interval
from skenario.sweeps.study import (
    INFEASIBLE,
    Constraint,
    Objective,
    Space,
    StudyOptions,
    generation_size,
    pareto_front,
    run_study,
    sampler_for,
    setting_of,
)
from tests.sweeps.test_runner import SCENARIO
from tests.sweeps.test_sweep import StoppedAfter


@pytest.fixture
def template(tmp_path: Path) -> Template:
    file = tmp_path / "small.yaml"
    file.write_text(SCENARIO)
    return Template.from_file(file)


def options(trials: int = 6, seeds: int = 2, batch: int = 2, bound: float = 400.0) -> StudyOptions:
    return StudyOptions(
        space=Space((parse_set("workload.replicas=1..4:int", "--space"),)),
        objectives=(Objective.parse("min:replica_hours"),),
        constraints=(Constraint.parse(f"p99<={bound}"),),
        seeds=replication_seeds(seeds, 10),
        trials=trials,
        batch=batch,
    )


def test_objectives_and_constraints_read_as_written() -> None:
    assert Objective.parse("min:p99") == Objective("p99_ms", "minimize")
    assert Objective.parse("max:slo") == Objective("slo_compliance", "maximize")
    assert Constraint.parse("slo_compliance >= 0.99") == Constraint("slo_compliance", ">=", 0.99)
    for bad, option in (("least:cost", "--objective"), ("min:speed", "--objective")):
        with pytest.raises(SweepError, match=option):
            Objective.parse(bad)
    for bad in ("p99<300", "p99<=fast", "p99<=nan", "latency<=3"):
        with pytest.raises(SweepError, match="--constraint"):
            Constraint.parse(bad)


def test_a_constraint_is_judged_on_the_intervals_far_end() -> None:
    at_least = Constraint("slo_compliance", ">=", 0.99)
    # The mean passes, the low end does not: infeasible by 0.99 - 0.985.
    assert at_least.violation(Interval(0.995, 0.985, 1.005, 3)) == pytest.approx(0.005)
    assert at_least.violation(Interval(0.999, 0.992, 1.006, 3)) == pytest.approx(-0.002)
    at_most = Constraint("p99_ms", "<=", 300.0)
    assert at_most.violation(Interval(290.0, 280.0, 305.0, 3)) == pytest.approx(5.0)
    # One seed: no interval, the value itself; no value at all: infeasible.
    assert at_most.violation(Interval(290.0, math.nan, math.nan, 1)) == -10.0
    assert at_most.violation(Interval(math.nan, math.nan, math.nan, 0)) == INFEASIBLE


def skyline(points: list[tuple[float, float]]) -> set[int]:
    """The 2-D minimisation front by a sweep line (sort by x, then y; keep each point below every one
    before it): an algorithm independent of pairwise dominance."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    kept, best_y = set(), math.inf
    for i in order:
        if points[i][1] < best_y:
            kept.add(i)
            best_y = points[i][1]
    # A duplicate of a kept point is not beaten by it either.
    return {i for i in range(len(points)) if any(points[i] == points[k] for k in kept)}


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=25))
def test_the_pareto_front_is_the_skyline_of_the_feasible_trials(points: list[tuple[int, int]]) -> None:
    frame = pd.DataFrame(
        {
            "trial": range(len(points)),
            "replica_hours": [float(x) for x, _ in points],
            "p99_ms": [float(y) for _, y in points],
            "feasible": [True] * len(points),
        }
    )
    goals = (Objective("replica_hours", "minimize"), Objective("p99_ms", "minimize"))
    front = pareto_front(frame, goals)
    assert set(front["trial"]) == skyline([(float(x), float(y)) for x, y in points])
    assert list(front["replica_hours"]) == sorted(front["replica_hours"])
    # Maximising the second is minimising its negative.
    flipped = pareto_front(frame.assign(p99_ms=-frame["p99_ms"]), (goals[0], Objective("p99_ms", "maximize")))
    assert set(flipped["trial"]) == set(front["trial"])


def test_infeasible_trials_are_never_on_the_front() -> None:
    frame = pd.DataFrame({"trial": [0, 1], "cost": [1.0, 2.0], "feasible": [False, True]})
    assert list(pareto_front(frame, (Objective("cost", "minimize"),))["trial"]) == [1]


def test_one_objective_is_searched_by_tpe_and_several_by_nsga_ii() -> None:
    one = options()
    assert isinstance(sampler_for(one, 0, 4), optuna.samplers.TPESampler)
    two = StudyOptions(one.space, (*one.objectives, Objective("p99_ms", "minimize")), trials=40)
    sampler = sampler_for(two, 0, 10)
    assert isinstance(sampler, optuna.samplers.NSGAIISampler)


def test_a_duration_is_searched_in_whole_units_of_its_ends() -> None:
    space = Space((parse_range("autoscalers[0].syncPeriod=5s..1m"),))
    trial = optuna.trial.FixedTrial({"autoscalers[0].syncPeriod": 30})
    assert space.suggest(trial) == {"autoscalers[0].syncPeriod": "30s"}
    assert setting_of(space.dimensions[0], 45) == "45s"


def test_the_best_trial_is_the_cheapest_whose_p99_interval_stays_under_the_bound(
    template: Template, tmp_path: Path
) -> None:
    store = RunStore(tmp_path / "store")
    asked = options(trials=6, seeds=3, bound=400.0)
    with workers(2) as pool:
        result = run_study(template, asked, pool, name="small", seed=0, store=store)
    assert len(result.trials) == 6 and not result.interrupted
    # Each trial again from the runs the store kept, by the formulas: mean, and mean + t * s / sqrt(n).
    record = store.sweep_record(result.sweep_id)
    t_2 = student_t.ppf(0.975, 2)
    judged = {}
    for trial, settings in record["settings"].items():
        runs = [r["figures"] for r in record["runs_done"] if r["point"] == trial]
        hours = np.mean([r["replica_hours"] for r in runs])
        p99 = np.array([r["p99_ms"] for r in runs])
        high = p99.mean() + t_2 * p99.std(ddof=1) / math.sqrt(3)
        replicas = settings["workload.replicas"]
        assert hours == pytest.approx(replicas * 2 / 60)  # r replicas for 2 minutes, nothing scales them
        judged[trial] = (hours, high <= 400.0)
    feasible = {trial: hours for trial, (hours, ok) in judged.items() if ok}
    cheapest = min(feasible.values())
    assert set(result.pareto["trial"]) == {trial for trial, hours in feasible.items() if hours == cheapest}
    # best.yaml is the scenario with the best trial's setting, ready to run.
    assert result.best is not None
    best = parse_scenario(result.best.text)
    assert best.spec.workload.replicas == round(cheapest * 30)


def test_one_worker_and_two_give_the_same_trials(template: Template) -> None:
    frames = []
    for count in (1, 2):
        with workers(count) as pool:
            frames.append(run_study(template, options(trials=4), pool, name="same", seed=3).trials)
    assert frames[0].equals(frames[1])


def test_a_stopped_study_resumes_where_it_stopped(template: Template, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    asked = options(trials=6, seeds=2, batch=2)
    # Ctrl-C after 5 runs: the first batch (2 trials x 2 seeds) is told, the second is cut short.
    stopped = run_study(template, asked, StoppedAfter(5), name="resumed", seed=1, store=store)  # type: ignore[arg-type]
    assert stopped.interrupted and len(stopped.trials) == 2
    [kept] = store.sweeps()
    assert kept["phase"] == "Interrupted" and kept["message"] == "stopped after 2 of 6 trials"
    study = optuna.load_study(study_name="resumed", storage=f"sqlite:///{store.path}")
    cut = [t.params for t in study.trials if t.state == optuna.trial.TrialState.RUNNING]
    assert len(cut) == 2
    # The same command again: the two told trials stay, the two cut short run first, and it ends at 6.
    with workers(2) as pool:
        resumed = run_study(template, asked, pool, name="resumed", seed=1, store=store)
    assert not resumed.interrupted and len(resumed.trials) == 6
    assert resumed.trials.head(2).equals(stopped.trials)
    study = optuna.load_study(study_name="resumed", storage=f"sqlite:///{store.path}")
    told = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert [t.params for t in told[2:4]] == cut
    assert store.sweeps()[0]["phase"] == "Completed" and len(store.sweeps()) == 1
    # The store keeps the six trials' runs, two seeds each, and nothing of the two cut short.
    record = store.sweep_record(kept["sweep"])
    assert sorted(record["settings"]) == sorted(t.number for t in told)
    assert len(record["runs_done"]) == 12 == len(store.runs(sweep=kept["sweep"]))


def test_a_study_running_in_another_process_is_not_taken_up(template: Template, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    with workers(1) as pool:
        done = run_study(template, options(trials=1, seeds=1), pool, name="busy", seed=0, store=store)
        assert done.sweep_id is not None
        store.reopen_sweep(done.sweep_id)  # as a live process (this one) resuming it would leave it
        with pytest.raises(SweepError, match="running now"):
            run_study(template, options(trials=2, seeds=1), pool, name="busy", seed=0, store=store)


def test_extending_a_study_keeps_its_generations(template: Template, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    two = StudyOptions(options().space, (*options().objectives, Objective("p99_ms", "minimize")), trials=2)
    with workers(1) as pool:
        first = run_study(template, two, pool, name="grows", seed=0, store=store)
        longer = StudyOptions(two.space, two.objectives, trials=40)  # would be 10 a generation, begun so
        assert first.sweep_id is not None
        assert store.sweep_record(first.sweep_id)["options"]["population"] == 4
        assert isinstance(first.study.sampler, optuna.samplers.NSGAIISampler)
    assert generation_size(2) == 4 and generation_size(longer.trials) == 10 and generation_size(1000) == 50


def test_a_study_of_the_same_name_asked_differently_is_refused(template: Template, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    with workers(1) as pool:
        run_study(template, options(trials=1, seeds=1), pool, name="mine", seed=0, store=store)
        with pytest.raises(SweepError, match="--study mine"):
            run_study(template, options(trials=1, seeds=2), pool, name="mine", seed=0, store=store)
