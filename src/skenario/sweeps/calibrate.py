"""Calibration: fit what no manifest says by making the simulated replicas follow the observed ones.

```text
  ask K trials ──> settings ──> K × training runs × seeds jobs ──> workers ──> each run's replica MAE
      ^                                                                        │ mean over runs and seeds
      └──────────────────────────────── tell ──────────────────────────────────┘
  best settings ──> every training and held-out run × seeds ──> the errors, in-sample and held out
```

Each scenario carries what its real cluster recorded (`spec.observed`); a worker compares its run
with it (`results.replay.trajectory_figures`), so a run's row holds its replica-trajectory error
beside the sweep's figures. The loss Optuna's TPE minimises is the replica MAE averaged over the
training runs and seeds. The runs the fit never saw (`validation`) are run once, with the best
settings, and their errors are the held-out figures; the training runs' errors with the same
settings are in-sample, and say nothing of how the settings generalise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna

from skenario.results.replay import TRAJECTORY_FIGURES
from skenario.scenario.format.scenario import Scenario
from skenario.scenario.wiring.plugins import current_policy
from skenario.sweeps.plan import Point, Template
from skenario.sweeps.runner import Job, Workers, run_jobs
from skenario.sweeps.space import Range, SweepError
from skenario.sweeps.stats import Interval, interval
from skenario.sweeps.study import Space, setting_of

LOSS = "replica_mae"
"""What the fit minimises: the time-weighted mean absolute error of the replica count."""


@dataclass(frozen=True)
class RunErrors:
    """One scenario's trajectory errors with the best settings, over the seeds: in-sample or held out."""

    name: str
    held_out: bool
    figures: dict[str, Interval]  # each TRAJECTORY_FIGURES entry's mean and interval over the seeds
    errors: tuple[str, ...]  # why runs failed, if any did


@dataclass(frozen=True)
class Calibration:
    """The best settings, every trial's loss, each run's errors with the best, and the calibrated scenarios."""

    best: dict[str, Any]
    best_loss: float
    trials: list[dict[str, Any]]  # trial number, settings, loss (None when a run failed), error
    runs: list[RunErrors]
    calibrated: dict[str, str]  # scenario source -> its text with the best settings


def calibrate(
    training: Sequence[Template],
    validation: Sequence[Template],
    fits: Sequence[Range],
    *,
    trials: int,
    seeds: Sequence[int],
    pool: Workers,
    batch: int = 4,
    sampler_seed: int = 0,
    progress: Callable[[int, int], object] | None = None,
) -> Calibration:
    """Search `fits` for the settings whose training runs follow their observed replicas best, then run
    every training and held-out scenario with them. Every template must have `spec.observed`."""
    if not training:
        raise SweepError("name at least one scenario to fit on")
    if not fits:
        raise SweepError("give at least one --fit PATH=LO..HI: the values to calibrate")
    if trials < 1:
        raise SweepError(f"--trials {trials}: give at least 1", value=trials)
    for template in (*training, *validation):
        if not isinstance(template.scenario, Scenario) or template.scenario.spec.observed is None:
            raise SweepError(
                f"{template.source}: spec.observed is missing; calibration compares with what the cluster recorded"
            )
    space = Space(tuple(fits))
    sampler = optuna.samplers.TPESampler(seed=sampler_seed, n_startup_trials=min(10, max(1, trials // 3)))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    found: list[dict[str, Any]] = []
    while len(found) < trials:
        asked = [study.ask() for _ in range(min(batch, trials - len(found)))]
        settings = [space.suggest(trial) for trial in asked]
        points = [[t.point(len(found) + i + 1, s) for t in training] for i, s in enumerate(settings)]
        jobs = [_job(p, seed, t) for row in points for p, t in zip(row, training, strict=True) for seed in seeds]
        rows = run_jobs(jobs, pool)
        per_trial = len(training) * len(seeds)
        for index, trial in enumerate(asked):
            mine = rows[index * per_trial : (index + 1) * per_trial]
            loss, error = _loss(mine)
            if loss is None:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
            else:
                study.tell(trial, loss)
            found.append({"trial": len(found) + 1, **settings[index], "loss": loss, "error": error})
        if progress is not None:
            progress(len(found), trials)
    kept = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    if not kept:
        reasons = sorted({str(row["error"]) for row in found if row["error"]})
        raise SweepError(f"every trial failed: {'; '.join(reasons) or 'no run finished'}")
    best_trial = min(kept, key=lambda t: (t.value, t.number))
    best = {d.path: setting_of(d, best_trial.params[d.path]) for d in fits}
    runs = _evaluate(training, validation, best, seeds, pool)
    calibrated = {t.source: t.point(0, best).text for t in (*training, *validation)}
    return Calibration(best, float(best_trial.value or 0.0), found, runs, calibrated)


def _job(point: Point, seed: int, template: Template) -> Job:
    return Job(point.number, seed, point.text, str(template.base_dir.resolve()), plugins=current_policy())


def _loss(rows: Sequence[Mapping[str, Any]]) -> tuple[float | None, str | None]:
    """The mean replica MAE of a trial's runs; None (with why) when any run failed or had nothing to compare."""
    for row in rows:
        if row.get("error"):
            return None, str(row["error"])
        value = row.get(LOSS)
        if value is None or not math.isfinite(value):
            return None, "no observed replicas overlap the run"
    return float(np.mean([row[LOSS] for row in rows])), None


def _evaluate(
    training: Sequence[Template],
    validation: Sequence[Template],
    best: Mapping[str, Any],
    seeds: Sequence[int],
    pool: Workers,
) -> list[RunErrors]:
    """Every scenario with the best settings, each seed: in-sample for training, held out for validation."""
    templates = [(t, False) for t in training] + [(t, True) for t in validation]
    jobs = [_job(t.point(i + 1, best), seed, t) for i, (t, _) in enumerate(templates) for seed in seeds]
    rows = run_jobs(jobs, pool)
    runs = []
    for i, (template, held_out) in enumerate(templates):
        mine = rows[i * len(seeds) : (i + 1) * len(seeds)]
        figures = {
            name: interval([row[name] for row in mine if row.get(name) is not None]) for name in TRAJECTORY_FIGURES
        }
        errors = tuple(str(row["error"]) for row in mine if row.get("error"))
        runs.append(RunErrors(template.name, held_out, figures, errors))
    return runs
