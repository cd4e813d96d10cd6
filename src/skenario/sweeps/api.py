"""The Python API of many runs, `skenario.sweep` and `skenario.tune`, and the steps the CLI's commands share.

```python
import skenario

table = skenario.sweep(
    "examples/sweep/hpa.yaml",
    settings={"autoscalers[0].manifest.spec.metrics[0].resource.target.averageUtilization": [50, 60, 70]},
    seeds=5,
)
print(table[["point", "p99_ms", "p99_ms_low", "p99_ms_high", "replica_hours"]])
```

A setting is a list of values (a grid) or a range written as the command line writes it,
`"50..90:int"`, which `design="lhs"` or `"sobol"` samples `samples` times.

```python
study, pareto = skenario.tune(
    "examples/sweep/hpa.yaml",
    space={"autoscalers[0].manifest.spec.metrics[0].resource.target.averageUtilization": "40..90:int"},
    objectives=["min:replica_hours"],
    constraints=["slo_compliance>=0.99"],
    trials=30,
)
```
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
import pandas as pd

from skenario.results.files import atomic_path
from skenario.results.store import RunStore
from skenario.scenario.format.scenario import Scenario
from skenario.sweeps.calibrate import Calibration
from skenario.sweeps.calibrate import calibrate as run_calibration
from skenario.sweeps.design import points as design_points
from skenario.sweeps.design import refuse_repeats
from skenario.sweeps.plan import Plan, Template, plan, replication_seeds
from skenario.sweeps.report import write_pareto_png, write_study_html
from skenario.sweeps.runner import BATCH_METRICS, METRICS, Prices, Workers
from skenario.sweeps.runner import workers as open_workers
from skenario.sweeps.space import Range, Setting, SweepError, parse_path, parse_range, parse_set, value_for
from skenario.sweeps.stats import CONFIDENCE
from skenario.sweeps.study import Constraint, Objective, Progress, Space, StudyOptions, StudyResult, run_study
from skenario.sweeps.sweep import StoredSweep, SweepResult, SweepRows, run_sweep

__all__ = ["Prices", "open_workers", "sweep", "tune"]

OUTPUT_FILES = ("pareto.parquet", "trials.parquet", "pareto.png", "report.html", "best.yaml")
"""What `tune` writes into its output folder."""

Settings = Sequence[str] | Mapping[str, Any]
"""Settings as the command line writes them (`PATH=V1,V2` or `PATH=LO..HI`), or as `{path: values}`
with a list of values or a range string."""


@dataclass(frozen=True)
class PreparedSweep:
    """A sweep's plan, checked whole, and what was asked for it (kept with the sweep in the store)."""

    plan: Plan
    options: dict[str, Any]
    baseline: int | None


def prepare_sweep(
    scenario: str | Path,
    *,
    sets: Settings = (),
    seeds: int = 3,
    seed: int | None = None,
    design: str = "grid",
    samples: int | None = None,
    baseline: int | None = None,
) -> PreparedSweep:
    """Read the scenario, make the design's points and check each point's scenario: any mistake is a
    SweepError (or the scenario's own error) before anything runs."""
    template = Template.from_file(Path(scenario))
    written = _written(sets)
    parsed = [parse_set(text) for text in written]
    first = template.scenario.spec.seed if seed is None else seed
    chosen = design_points(
        [p for p in parsed if isinstance(p, Setting)],
        [p for p in parsed if isinstance(p, Range)],
        design,
        samples,
        seed=first,
    )
    options = {p.path: f"--set {text!r}" for p, text in zip(parsed, written, strict=True)}
    prepared = plan(template, chosen, replication_seeds(seeds, first), options)
    if baseline is not None and not 1 <= baseline <= len(prepared.points):
        raise SweepError(f"--baseline {baseline}: the sweep's points are 1 to {len(prepared.points)}", value=baseline)
    asked = {"set": written, "design": design, "samples": samples, "baseline": baseline}
    return PreparedSweep(prepared, asked, baseline)


def run_prepared(
    prepared: PreparedSweep,
    pool: Workers,
    *,
    store: RunStore | None = None,
    name: str | None = None,
    prices: Prices | None = None,
    progress: Any = None,
) -> SweepResult:
    """Run a prepared sweep on `pool` (`sweep.run_sweep`)."""
    options = prepared.options | {"prices": _prices(prices)}
    return run_sweep(prepared.plan, pool, store=store, name=name, options=options, prices=prices, progress=progress)


def sweep(
    scenario: str | Path,
    settings: Settings = (),
    *,
    seeds: int = 3,
    seed: int | None = None,
    design: str = "grid",
    samples: int | None = None,
    baseline: int | None = None,
    workers: int | None = None,
    dask: str | None = None,
    prices: Prices | None = None,
    store: str | Path | None = None,
    name: str | None = None,
    runs: bool = False,
) -> pd.DataFrame:
    """Run `scenario` at every point of `settings` with the same `seeds`; one row per point (`table.points_frame`:
    each figure's mean, `_low` and `_high`, and with `baseline` the paired `_diff`s), or with `runs=True` one
    row per run. Local processes by default, the Dask cluster at `dask` if given; kept in the run store at
    `store` if given, as `skenario sweep` keeps it."""
    prepared = prepare_sweep(
        scenario, sets=settings, seeds=seeds, seed=seed, design=design, samples=samples, baseline=baseline
    )
    with open_workers(workers, dask) as pool:
        result = run_prepared(
            prepared, pool, store=None if store is None else RunStore(store), name=name, prices=prices
        )
    return result.runs() if runs else result.points(baseline)


@dataclass(frozen=True)
class PreparedStudy:
    """A study's scenario, its checked options, its name in the store and the seed its sampler starts from."""

    template: Template
    options: StudyOptions
    name: str
    seed: int


def prepare_study(
    scenario: str | Path,
    *,
    space: Settings,
    objectives: Sequence[str],
    constraints: Sequence[str] = (),
    trials: int = 20,
    seeds: int = 3,
    seed: int | None = None,
    batch: int = 4,
    prices: Prices | None = None,
    study: str | None = None,
) -> PreparedStudy:
    """Read the scenario and check the study's options: every dimension's ends are tried on the scenario,
    and each figure an objective or constraint needs must be one the runs can give."""
    template = Template.from_file(Path(scenario))
    written = _written(space)
    if not written:
        raise SweepError("--space: give at least one PATH=LO..HI[:int|:log] (or PATH=V1,V2,... to choose among)")
    dimensions = tuple(parse_set(text, "--space") for text in written)
    refuse_repeats(dimensions)
    if not objectives:
        raise SweepError("--objective: give at least one, such as min:replica_hours")
    goals = tuple(Objective.parse(text) for text in objectives)
    if len({goal.metric for goal in goals}) < len(goals):
        raise SweepError(f"--objective: a figure is given twice ({', '.join(objectives)})", value=", ".join(objectives))
    bounds = tuple(Constraint.parse(text) for text in constraints)
    prices = prices or Prices()
    for metric in {g.metric for g in goals} | {c.metric for c in bounds}:
        _check_figure(metric, template, prices)
    if trials < 1:
        raise SweepError(f"--trials {trials}: a study runs at least 1 trial", value=trials)
    if batch < 1:
        raise SweepError(f"--batch {batch}: at least 1 trial at a time", value=batch)
    first = template.scenario.spec.seed if seed is None else seed
    options = StudyOptions(
        space=Space(dimensions),
        objectives=goals,
        constraints=bounds,
        seeds=replication_seeds(seeds, first),
        trials=trials,
        batch=batch,
        prices=prices,
    )
    sources = {d.path: f"--space {text!r}" for d, text in zip(dimensions, written, strict=True)}
    for end in ("low", "high"):  # a path or a value the scenario refuses shows now, not as failed trials
        template.point(0, {d.path: _end(d, end) for d in dimensions}, sources)
    return PreparedStudy(template, options, study or f"{template.name}-{options.fingerprint(template)}", first)


def run_prepared_study(
    prepared: PreparedStudy, pool: Workers, *, store: RunStore | None = None, progress: Progress | None = None
) -> StudyResult:
    """Run a prepared study on `pool` (`study.run_study`)."""
    return run_study(
        prepared.template,
        prepared.options,
        pool,
        name=prepared.name,
        seed=prepared.seed,
        store=store,
        progress=progress,
    )


def write_study(result: StudyResult, prepared: PreparedStudy, folder: Path) -> dict[str, Path]:
    """The study's files in `folder` (made if missing), each written whole: OUTPUT_FILES."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {name: folder / name for name in OUTPUT_FILES}
    options = prepared.options
    with atomic_path(files["pareto.parquet"]) as partial:
        result.pareto.to_parquet(partial, index=False)
    with atomic_path(files["trials.parquet"]) as partial:
        result.trials.to_parquet(partial, index=False)
    write_pareto_png(result.trials, result.pareto, options.objectives, files["pareto.png"])
    paths = [d.path for d in options.space.dimensions]
    best_text = None if result.best is None else result.best.text
    write_study_html(
        files["report.html"],
        title=f"study {prepared.name}",
        trials=result.trials,
        front=result.pareto,
        objectives=options.objectives,
        constraints=[str(c) for c in options.constraints],
        paths=paths,
        best_text=best_text,
    )
    if best_text is None:
        files["best.yaml"].unlink(missing_ok=True)  # an earlier study's best is not this one's
        del files["best.yaml"]
    else:
        with atomic_path(files["best.yaml"]) as partial:
            partial.write_text(best_text, encoding="utf-8")
    return files


def tune(
    scenario: str | Path,
    space: Settings,
    *,
    objectives: Sequence[str],
    constraints: Sequence[str] = (),
    trials: int = 20,
    seeds: int = 3,
    seed: int | None = None,
    batch: int = 4,
    workers: int | None = None,
    dask: str | None = None,
    prices: Prices | None = None,
    store: str | Path | None = None,
    study: str | None = None,
    out: str | Path | None = None,
) -> tuple[optuna.Study, pd.DataFrame]:
    """Search `space` for the settings that best meet `objectives` (`min:FIGURE`, `max:FIGURE`) within
    `constraints` (`FIGURE<=BOUND`, judged on each trial's 95% interval over `seeds`); the Optuna study and
    its Pareto front (one row per trial: settings, each figure's mean, `_low`, `_high`). Kept in the run
    store at `store` if given, where the same call resumes it; files in `out` if given (`write_study`)."""
    prepared = prepare_study(
        scenario,
        space=space,
        objectives=objectives,
        constraints=constraints,
        trials=trials,
        seeds=seeds,
        seed=seed,
        batch=batch,
        prices=prices,
        study=study,
    )
    with open_workers(workers, dask) as pool:
        result = run_prepared_study(prepared, pool, store=None if store is None else RunStore(store))
    if out is not None:
        write_study(result, prepared, Path(out))
    return result.study, result.pareto


def calibrate(
    scenarios: Sequence[str | Path],
    fits: Sequence[str],
    *,
    validate: Sequence[str | Path] = (),
    trials: int = 30,
    seeds: int = 1,
    seed: int = 0,
    batch: int = 4,
    pool: Workers | None = None,
    workers: int | None = None,
    dask: str | None = None,
    write: bool = True,
    progress: Progress | None = None,
) -> tuple[Calibration, dict[str, Path]]:
    """Fit `fits` (`PATH=LO..HI`) so that `scenarios` follow the replicas their clusters recorded
    (`spec.observed`); the calibration (best values, trials, each run's error in-sample and held out on
    `validate`) and, with `write`, each scenario written beside itself as NAME.calibrated.yaml (by name)."""
    ranges = [parse_range(text, "--fit") for text in fits]
    if batch < 1:
        raise SweepError("give at least 1", field="--batch", value=batch)
    training = [Template.from_file(Path(path)) for path in scenarios]
    validation = [Template.from_file(Path(path)) for path in validate]
    replications = replication_seeds(seeds, seed)
    with contextlib.ExitStack() as stack:
        if pool is None:
            pool = stack.enter_context(open_workers(workers, dask))
        result = run_calibration(
            training, validation, ranges, trials=trials, seeds=replications, pool=pool, batch=batch, progress=progress
        )
    written: dict[str, Path] = {}
    if write:
        for template in (*training, *validation):
            assert template.file is not None
            target = template.file.with_name(f"{template.file.stem}.calibrated.yaml")
            header = calibrated_header(template, training, validation, result.best)
            with atomic_path(target) as partial:
                partial.write_text(header + result.calibrated[template.source])
            written[template.name] = target
    return result, written


def calibrated_header(
    template: Template, training: Sequence[Template], validation: Sequence[Template], best: Mapping[str, Any]
) -> str:
    """What a calibrated file is and where its values came from, as YAML comments."""
    name = template.file.name if template.file is not None else template.source
    fitted = ", ".join(t.file.name if t.file is not None else t.source for t in training)
    held = ", ".join(t.file.name if t.file is not None else t.source for t in validation) or "none"
    values = ", ".join(f"{path}={value}" for path, value in best.items())
    return f"# {name}, calibrated by skenario calibrate: {values}\n# fitted on: {fitted}; held out: {held}\n"


@dataclass(frozen=True)
class CalibratedFile:
    """What `calibrated_header` wrote at the top of a calibrated scenario: the file it was, the fitted values,
    and the files the fit saw and the ones it held out."""

    file: str
    values: dict[str, str]
    fitted_on: list[str]
    held_out: list[str]


_CALIBRATED = re.compile(
    r"\A# (?P<file>.+?), calibrated by skenario calibrate: (?P<values>.*)\n"
    r"# fitted on: (?P<fitted>.*?); held out: (?P<held>.*)\n"
)


def read_calibrated_header(text: str) -> CalibratedFile | None:
    """The header `calibrated_header` wrote at the top of `text`; None if it has none."""
    found = _CALIBRATED.match(text)
    if found is None:
        return None
    values = dict(pair.split("=", 1) for pair in found["values"].split(", ") if "=" in pair)
    held = [] if found["held"] == "none" else found["held"].split(", ")
    return CalibratedFile(found["file"], values, found["fitted"].split(", "), held)


def _check_figure(metric: str, template: Template, prices: Prices) -> None:
    """A figure the runs will not give is a mistake in the options: cost needs a price, SLO compliance a spec.slo."""
    if metric == "cost" and prices == Prices():
        raise SweepError(
            "cost needs a price: give --price-per-replica-hour, --price-per-cpu-hour, --price-per-gib-hour "
            "or --price-per-node-hour"
        )
    scenario = template.scenario
    if not isinstance(scenario, Scenario):
        if metric not in BATCH_METRICS:
            raise SweepError(
                f"{metric} is a service run's figure: {template.source} is a batch replay, whose runs give "
                + ", ".join(BATCH_METRICS)
            )
        return
    if metric in BATCH_METRICS:
        raise SweepError(f"{metric} is a batch replay's figure: {template.source} is a scenario")
    if metric in ("slo_met", "slo_compliance") and scenario.spec.slo is None:
        raise SweepError(
            f"{metric} needs objectives: {template.source} has no spec.slo (latency, percentile, errorRate)"
        )
    if metric in ("node_hours", "cluster_full", "pods_pending") and scenario.spec.cluster is None:
        raise SweepError(f"{metric} needs nodes: {template.source} has no spec.cluster")


def _end(dimension: Range | Setting, end: str) -> Any:
    """A dimension's low or high end as the scenario reads it (a choice's first or last value)."""
    if isinstance(dimension, Setting):
        return dimension.values[0 if end == "low" else -1]
    return value_for(dimension, 0.0 if end == "low" else 1.0 - 1e-12)


def remove_study(store: RunStore, name: str) -> None:
    """Forget a study's trials in Optuna's tables of the store (its runs are `RunStore.remove_sweep`'s)."""
    with contextlib.suppress(KeyError):  # none there: nothing to forget
        optuna.delete_study(study_name=name, storage=f"sqlite:///{store.path}")


def stored_sweep(store: RunStore, sweep: str | int) -> StoredSweep:
    """A sweep or study read back from the store."""
    return StoredSweep.read(store, sweep)


def table_document(table: pd.DataFrame, result: SweepRows, baseline: int | None) -> dict[str, Any]:
    """The points table as JSON data: per point its settings, run counts, and each figure's mean and interval
    (and difference from the baseline); NaN as null."""
    points = []
    for record in table.to_dict("records"):
        number = int(record["point"])
        entry: dict[str, Any] = {
            "point": number,
            "settings": result.settings[number],
            "runs": int(record["runs"]),
            "failed": int(record["failed"]),
            "figures": {m: _interval(record, m) for m in METRICS},
        }
        if baseline is not None:
            entry["difference"] = {m: _interval(record, f"{m}_diff") for m in METRICS}
        points.append(entry)
    return {
        "confidence": CONFIDENCE,
        "baseline": baseline,
        "sweep": getattr(result, "sweep_id", None),
        "points": points,
    }


def _interval(record: Mapping[str, Any], name: str) -> dict[str, float | None]:
    return {key: record[f"{name}{suffix}"] for key, suffix in (("mean", ""), ("low", "_low"), ("high", "_high"))}


def _written(sets: Settings) -> list[str]:
    """Settings as the command line writes them: `PATH=V1,V2,...` or `PATH=LO..HI`."""
    if not isinstance(sets, Mapping):
        return [str(text) for text in sets]
    written = []
    for path, values in sets.items():
        parse_path(path)
        if isinstance(values, str):
            written.append(f"{path}={values}")
        elif isinstance(values, Sequence):
            written.append(f"{path}={','.join(_scalar_text(v) for v in values)}")
        else:
            written.append(f"{path}={_scalar_text(values)}")
    return written


def _scalar_text(value: Any) -> str:
    """A value as YAML writes a scalar, so that reading it back gives the same value (`true`, `0.5`, `30s`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _prices(prices: Prices | None) -> dict[str, float | None]:
    prices = prices or Prices()
    return dataclasses.asdict(prices)
