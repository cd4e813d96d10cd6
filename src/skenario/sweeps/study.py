"""A search for the best setting: Optuna proposes settings, the workers run each with every seed.

```text
       ask K trials ──> settings ──> K × seeds jobs ──> workers ──> each trial's figures over its seeds
          ^                                                          │ mean per objective, interval per constraint
          └──────────────────────── tell ────────────────────────────┘
```

The study lives in the run store's database (Optuna's tables beside skenario's), so a study
stopped by Ctrl-C or a killed process resumes when the same command runs again: the trials told
stay, and those it was running are proposed again first. Optuna's sampler runs in this process
and the runs go to the workers, local or on a Dask cluster; with a fixed batch of trials asked at
once (`batch`), the trials and their results are the same whatever the worker count.

One objective is searched by TPE, several by NSGA-II (Optuna's defaults for each). An objective
is a figure's mean over the seeds. A constraint is judged on its 95% interval's far end, so a
setting passes `slo_compliance>=0.99` only when the whole interval lies at or above 0.99: a
setting that passes on three lucky seeds does not. Optuna's convention for it: a value ≤ 0 is
feasible, and the sampler steers away from infeasible settings (`Trial.set_constraint`).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import optuna
import pandas as pd
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.trial import FrozenTrial, TrialState

from skenario.core.time import MICROSECOND, MILLISECOND, SECOND, format_duration
from skenario.results.store import RunStore
from skenario.results.store.sweeps import StudyTaken
from skenario.scenario.wiring.plugins import current_policy
from skenario.sweeps.plan import Point, Template
from skenario.sweeps.runner import METRICS, Interrupted, Job, Outcome, Prices, Workers, run_jobs
from skenario.sweeps.space import Range, Setting, SweepError
from skenario.sweeps.stats import Interval, interval
from skenario.sweeps.sweep import keep

ALIASES = {
    "p99": "p99_ms",
    "errors": "error_rate",
    "replicas": "replica_hours",
    "cpu": "cpu_core_hours",
    "nodes": "node_hours",
    "slo": "slo_compliance",
    "met": "slo_met",
}
"""Short names a user may write for a figure (METRICS are the long ones)."""

_CONSTRAINT = re.compile(r"^\s*(?P<metric>[A-Za-z_0-9]+)\s*(?P<op><=|>=)\s*(?P<bound>\S+)\s*$")
_DURATION_STEPS = (SECOND, MILLISECOND, MICROSECOND, 1)
INFEASIBLE = 1e9
"""A constraint's value when no run of the trial produced the figure: far past any bound, and finite for Optuna."""


def metric_name(text: str, option: str) -> str:
    """A figure's name as METRICS spells it, from its name or alias."""
    name = ALIASES.get(text.strip(), text.strip())
    if name not in METRICS:
        known = ", ".join([*METRICS, *(f"{a} ({m})" for a, m in ALIASES.items())])
        raise SweepError(f"{option} {text!r}: no such figure; write one of {known}", value=text)
    return name


@dataclass(frozen=True)
class Objective:
    """A figure to make as small (`minimize`) or as large (`maximize`) as it goes: `min:cost`, `max:slo`."""

    metric: str
    direction: Literal["minimize", "maximize"]

    @classmethod
    def parse(cls, text: str) -> Objective:
        sense, colon, name = text.partition(":")
        if not colon or sense.strip() not in ("min", "max"):
            raise SweepError(f"--objective {text!r}: write min:FIGURE or max:FIGURE, such as min:cost", value=text)
        return cls(metric_name(name, "--objective"), "minimize" if sense.strip() == "min" else "maximize")

    def __str__(self) -> str:
        return f"{'min' if self.direction == 'minimize' else 'max'}:{self.metric}"


@dataclass(frozen=True)
class Constraint:
    """A bound a setting must keep across the seeds' interval: `slo_compliance>=0.99`, `p99<=300`."""

    metric: str
    op: Literal["<=", ">="]
    bound: float

    @classmethod
    def parse(cls, text: str) -> Constraint:
        match = _CONSTRAINT.match(text)
        if match is None:
            shape = "write FIGURE<=BOUND or FIGURE>=BOUND, such as slo>=0.99"
            raise SweepError(f"--constraint {text!r}: {shape}", value=text)
        try:
            bound = float(match["bound"])
        except ValueError:
            bound = math.nan
        if not math.isfinite(bound):
            raise SweepError(f"--constraint {text!r}: the bound {match['bound']!r} is not a number", value=text)
        op: Literal["<=", ">="] = "<=" if match["op"] == "<=" else ">="
        return cls(metric_name(match["metric"], "--constraint"), op, bound)

    def violation(self, found: Interval) -> float:
        """How far the interval's far end passes the bound (≤ 0: kept); the mean when there is no interval."""
        if found.n == 0:
            return INFEASIBLE
        upper = found.high if self.op == "<=" else found.low
        far = found.mean if found.n == 1 else upper
        return far - self.bound if self.op == "<=" else self.bound - far

    def __str__(self) -> str:
        return f"{self.metric}{self.op}{self.bound:g}"


@dataclass(frozen=True)
class Space:
    """What a study searches: ranges (sampled) and settings (a choice among listed values)."""

    dimensions: tuple[Range | Setting, ...]

    def suggest(self, trial: optuna.Trial) -> dict[str, Any]:
        """The trial's settings, `{path: value}`, each value as the scenario reads it."""
        return {dimension.path: _suggested(trial, dimension) for dimension in self.dimensions}

    def distributions(self) -> dict[str, Any]:
        """Optuna's distribution per path: what `enqueue_trial` and the storage check a trial's params against."""
        return {d.path: _distribution(d) for d in self.dimensions}


def _distribution(dimension: Range | Setting) -> Any:
    if isinstance(dimension, Setting):
        return CategoricalDistribution(dimension.values)
    log = dimension.scale == "log"
    if dimension.duration:
        step = _step(dimension)
        return IntDistribution(int(dimension.low) // step, int(dimension.high) // step, log=log)
    if dimension.scale == "int":
        return IntDistribution(int(dimension.low), int(dimension.high))
    return FloatDistribution(dimension.low, dimension.high, log=log)


def _suggested(trial: optuna.Trial, dimension: Range | Setting) -> Any:
    """A value drawn for one dimension; a duration is drawn in whole units of its ends' precision."""
    path = dimension.path
    if isinstance(dimension, Setting):
        return trial.suggest_categorical(path, list(dimension.values))
    log = dimension.scale == "log"
    if dimension.duration:
        step = _step(dimension)
        units = trial.suggest_int(path, int(dimension.low) // step, int(dimension.high) // step, log=log)
        return format_duration(units * step)
    if dimension.scale == "int":
        return trial.suggest_int(path, int(dimension.low), int(dimension.high))
    return trial.suggest_float(path, dimension.low, dimension.high, log=log)


def _step(dimension: Range) -> int:
    """A duration range's unit: the coarsest that both ends are whole numbers of (the second at most)."""
    return next(s for s in _DURATION_STEPS if int(dimension.low) % s == 0 and int(dimension.high) % s == 0)


def setting_of(dimension: Range | Setting, param: Any) -> Any:
    """A trial's stored param as the setting's value (a duration's units back as a duration)."""
    if isinstance(dimension, Range) and dimension.duration:
        return format_duration(int(param) * _step(dimension))
    return param


@dataclass
class StudyOptions:
    """What a study is asked: the space, objectives and constraints, and how each trial is run."""

    space: Space
    objectives: tuple[Objective, ...]
    constraints: tuple[Constraint, ...] = ()
    seeds: tuple[int, ...] = (0,)
    trials: int = 20
    batch: int = 4
    prices: Prices = field(default_factory=Prices)

    def fingerprint(self, template: Template) -> str:
        """A short hash of everything that makes two studies comparable: the default study name's tail."""
        asked = {
            "scenario": template.text,
            "space": [repr(d) for d in self.space.dimensions],
            "objectives": [str(o) for o in self.objectives],
            "constraints": [str(c) for c in self.constraints],
            "seeds": list(self.seeds),
            "batch": self.batch,
            "prices": repr(self.prices),
        }
        return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:8]


def trial_figures(rows: Sequence[Mapping[str, Any]]) -> dict[str, Interval]:
    """Each figure's interval over a trial's runs."""
    return {metric: interval([row.get(metric) for row in rows]) for metric in METRICS}


def sampler_for(options: StudyOptions, seed: int, population: int) -> optuna.samplers.BaseSampler:
    """TPE for one objective, NSGA-II (with `population` a generation) for several, both seeded; each reads
    a told trial's constraints (`Trial.set_constraint`)."""
    if len(options.objectives) == 1:
        return optuna.samplers.TPESampler(seed=seed, constant_liar=True)
    return optuna.samplers.NSGAIISampler(population_size=population, seed=seed)


Progress = Callable[[int, int], object]
"""Told (trials finished, trials in all) after each batch."""


@dataclass
class StudyResult:
    """A study's trials as a DataFrame, the Pareto front among the feasible ones, and the best point's scenario."""

    study: optuna.Study
    trials: pd.DataFrame
    pareto: pd.DataFrame
    best: Point | None
    sweep_id: int | None
    interrupted: bool


def run_study(
    template: Template,
    options: StudyOptions,
    pool: Workers,
    *,
    name: str,
    seed: int,
    store: RunStore | None = None,
    progress: Progress | None = None,
) -> StudyResult:
    """Run the study `name` to `options.trials` finished trials (resuming it if the store has it) on `pool`."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage: str | optuna.storages.BaseStorage = optuna.storages.InMemoryStorage()
    sweep_id = None
    population = generation_size(options.trials)
    if store is not None:
        store.open().close()  # the store's own tables first; Optuna's join them in the same file
        storage = f"sqlite:///{store.path}"
        sweep_id, population = _kept_study(store, storage, template, options, name)
    directions = [o.direction for o in options.objectives]
    study = optuna.create_study(study_name=name, storage=storage, directions=directions, load_if_exists=True)
    # Seeded past the trials it has, so a resumed study does not draw its first trials again.
    study.sampler = sampler_for(options, seed + len(study.get_trials(deepcopy=False)), population)
    _propose_again_what_was_running(study, store, sweep_id)
    interrupted = False
    try:
        while (left := options.trials - len(_finished(study))) > 0:
            _run_batch(study, template, options, pool, min(options.batch, left), store, sweep_id)
            if progress is not None:
                progress(len(_finished(study)), options.trials)
    except (Interrupted, KeyboardInterrupt):  # between runs too: asked trials stay running, proposed again
        interrupted = True
    except BaseException as exc:
        if store is not None and sweep_id is not None:
            store.finish_sweep(sweep_id, "Failed", f"{type(exc).__name__}: {exc}")
        raise
    if store is not None and sweep_id is not None:
        done = len(_finished(study))
        message = f"stopped after {done} of {options.trials} trials" if interrupted else None
        store.finish_sweep(sweep_id, "Interrupted" if interrupted else "Completed", message)
    frame = trials_frame(study, options)
    front = pareto_front(frame, options.objectives)
    best = _best_point(template, options, front)
    return StudyResult(study, frame, front, best, sweep_id, interrupted)


def _kept_study(store: RunStore, storage: str, template: Template, options: StudyOptions, name: str) -> tuple[int, int]:
    """The study's row in the store, begun or taken up again, and its NSGA-II generation size (fixed when
    it began: extending `trials` must not change a study's generations)."""
    asked = _asked(template, options, name)
    if store.study(name) is None and name in {s.study_name for s in optuna.get_all_study_summaries(storage)}:
        raise SweepError(
            f"--study {name}: the store's Optuna tables hold a study of this name that skenario did not "
            "begin; give another --study name",
            value=name,
        )
    try:
        sweep_id, kept = store.claim_study(  # one process at a time, however many ask at once
            name,
            scenario_name=template.name,
            scenario_file=None if template.file is None else str(template.file),
            scenario_text=template.text,
            options=asked | {"population": generation_size(options.trials)},
            same=lambda kept: {key: value for key, value in kept.items() if key != "population"} == asked,
        )
    except StudyTaken as taken:
        raise SweepError(f"--study {name}: {taken.message}", value=name) from None
    return sweep_id, int(kept.get("population") or generation_size(options.trials))


def generation_size(trials: int) -> int:
    """NSGA-II's population for a study of `trials`: a quarter of them (4 to 50), so a short study still breeds
    a few generations where Optuna's default of 50 would leave it all random."""
    return max(4, min(50, trials // 4))


def _asked(template: Template, options: StudyOptions, name: str) -> dict[str, Any]:
    """What the study was asked, as kept with it in the store: a resumed study must be asked the same."""
    return {
        "study": name,
        "space": [repr(d) for d in options.space.dimensions],
        "objectives": [str(o) for o in options.objectives],
        "constraints": [str(c) for c in options.constraints],
        "seeds": list(options.seeds),
        "batch": options.batch,
        "prices": repr(options.prices),
        "fingerprint": options.fingerprint(template),
    }


def _finished(study: optuna.Study) -> list[FrozenTrial]:
    """The trials that count towards `trials`: told complete, or failed by their own settings or runs
    (not those a stop cut short: they are proposed again)."""
    return [
        t
        for t in study.get_trials(deepcopy=False)
        if t.state == TrialState.COMPLETE or (t.state == TrialState.FAIL and "error" in t.user_attrs)
    ]


def _propose_again_what_was_running(study: optuna.Study, store: RunStore | None, sweep_id: int | None) -> None:
    """Trials left running by a stopped or killed study: failed, their settings queued to run first (under
    new numbers), and what the store kept of them forgotten, so the study's runs are its trials' runs."""
    cut = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    for trial in cut:
        study.enqueue_trial(trial.params, skip_if_exists=False)
        study.tell(trial.number, state=TrialState.FAIL)
    if cut and store is not None and sweep_id is not None:
        store.remove_points(sweep_id, [trial.number for trial in cut])


def _run_batch(
    study: optuna.Study,
    template: Template,
    options: StudyOptions,
    pool: Workers,
    size: int,
    store: RunStore | None,
    sweep_id: int | None,
) -> None:
    """Ask `size` trials, run each with every seed on the pool, and tell each its objectives."""
    asked: list[tuple[optuna.Trial, Point]] = []
    jobs: list[Job] = []
    base_dir = str(template.base_dir.resolve())
    policy = current_policy()  # the plugins the user allowed, carried to the workers
    for _ in range(size):
        trial = study.ask(options.space.distributions())
        settings = options.space.suggest(trial)
        try:
            point = template.point(trial.number, settings)
        except SweepError as exc:  # a value the scenario refuses: the trial fails, the study goes on
            trial.set_user_attr("error", str(exc))
            study.tell(trial, state=TrialState.FAIL)
            continue
        if store is not None and sweep_id is not None:
            store.add_points(sweep_id, {trial.number: settings})
        asked.append((trial, point))
        jobs += [Job(trial.number, s, point.text, base_dir, options.prices, None, policy) for s in options.seeds]

    def kept(index: int, outcome: Outcome) -> None:
        if store is not None and sweep_id is not None:
            keep(store, sweep_id, template, outcome)

    rows = run_jobs(jobs, pool, kept)  # Interrupted leaves the asked trials running, to be proposed again
    for trial, _point in asked:
        mine = [row for row in rows if row["point"] == trial.number]
        _tell(study, trial, options, mine)


def _tell(study: optuna.Study, trial: optuna.Trial, options: StudyOptions, rows: list[dict[str, Any]]) -> None:
    """The trial's figures (mean, low, high per figure) as user attributes, its constraints, and its objectives."""
    found = trial_figures(rows)
    for metric, values in found.items():
        trial.set_user_attr(metric, [_finite(values.mean), _finite(values.low), _finite(values.high), values.n])
    violations = [c.violation(found[c.metric]) for c in options.constraints]
    trial.set_user_attr("constraints", violations)
    for constraint, violation in zip(options.constraints, violations, strict=True):
        trial.set_constraint(str(constraint), violation)
    failed = [row["error"] for row in rows if row.get("error")]
    trial.set_user_attr("failed_runs", len(failed))
    means = [found[o.metric].mean for o in options.objectives]
    if failed or any(math.isnan(mean) for mean in means):
        reason = failed[0] if failed else f"no run gave {', '.join(o.metric for o in options.objectives)}"
        trial.set_user_attr("error", reason)
        study.tell(trial, state=TrialState.FAIL)
        return
    study.tell(trial, means)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def trials_frame(study: optuna.Study, options: StudyOptions) -> pd.DataFrame:
    """One row per finished trial: `trial`, `state`, each setting, each figure's mean, `_low` and `_high`,
    `feasible` (every constraint kept), `runs_failed` and `error`."""
    dimensions = {d.path: d for d in options.space.dimensions}
    records = []
    for trial in _finished(study):
        record: dict[str, Any] = {"trial": trial.number, "state": trial.state.name}
        record |= {path: setting_of(dimensions[path], trial.params.get(path)) for path in dimensions}
        for metric in METRICS:
            mean, low, high, _n = trial.user_attrs.get(metric, [None, None, None, 0])
            record |= {metric: mean, f"{metric}_low": low, f"{metric}_high": high}
        violations = trial.user_attrs.get("constraints", [])
        record["feasible"] = trial.state == TrialState.COMPLETE and all(v <= 0 for v in violations)
        record["runs_failed"] = trial.user_attrs.get("failed_runs", 0)
        record["error"] = trial.user_attrs.get("error")
        records.append(record)
    frame = pd.DataFrame(records)
    if frame.empty:
        return frame
    for metric in METRICS:
        for column in (metric, f"{metric}_low", f"{metric}_high"):
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    return frame


def pareto_front(frame: pd.DataFrame, objectives: Sequence[Objective]) -> pd.DataFrame:
    """The feasible trials no other feasible trial beats: another is at least as good on every objective
    and better on one. With one objective, the best trial(s). Sorted by the first objective."""
    if frame.empty:
        return frame
    feasible = frame[frame["feasible"]]
    if feasible.empty:
        return feasible
    signs = np.array([1.0 if o.direction == "minimize" else -1.0 for o in objectives])
    costs = feasible[[o.metric for o in objectives]].to_numpy(dtype=float) * signs
    keep = [not any(np.all(other <= mine) and np.any(other < mine) for other in costs) for mine in costs]
    ascending = [o.direction == "minimize" for o in objectives]
    front = feasible[keep].sort_values([o.metric for o in objectives], ascending=ascending)
    return front.reset_index(drop=True)


def _best_point(template: Template, options: StudyOptions, front: pd.DataFrame) -> Point | None:
    """The front's first trial (best by the first objective, then the next): its scenario, ready to run."""
    if front.empty:
        return None
    best = front.iloc[0]
    settings = {d.path: _plain(best[d.path]) for d in options.space.dimensions}
    return template.point(int(best["trial"]), settings)


def _plain(value: Any) -> Any:
    """A numpy scalar from a DataFrame as the Python value the scenario reads."""
    return value.item() if hasattr(value, "item") else value
