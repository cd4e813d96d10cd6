"""A sweep run to its end: every point with every seed on the workers, each run kept as it finishes.

```text
plan (points x seeds) --jobs--> workers --outcomes--> store: the run, and its figures in sweep_runs
                                                  \\--> rows --> runs_frame / points_frame
```

The store holds the sweep (`sweeps`), its points' settings (`sweep_points`) and one `sweep_runs`
row per run with the figures the table is made of, so `skenario sweeps N` shows the same table
later without running anything. Each run is written in one transaction as it comes back, so Ctrl-C
or a killed parent leaves whole runs and a sweep marked Interrupted, never half a run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from skenario.results.store import RunStore
from skenario.sweeps.plan import Plan, Template
from skenario.sweeps.runner import Interrupted, Outcome, Prices, Workers, run_jobs
from skenario.sweeps.table import points_frame, runs_frame


@dataclass(frozen=True)
class SweepRows:
    """A sweep's points (number -> `{path: value}`) and its rows, one per finished run in point and seed order."""

    settings: dict[int, dict[str, Any]]
    rows: list[dict[str, Any]]

    def runs(self) -> pd.DataFrame:
        """One row per run (`table.runs_frame`)."""
        return runs_frame(self.settings, self.rows)

    def points(self, baseline: int | None = None) -> pd.DataFrame:
        """One row per point, means and intervals (`table.points_frame`), with differences from `baseline`."""
        return points_frame(self.settings, self.rows, baseline)


@dataclass(frozen=True)
class SweepResult(SweepRows):
    """A sweep just run: its rows, its plan, and its number in the store (None when not kept)."""

    plan: Plan
    sweep_id: int | None
    interrupted: bool


@dataclass(frozen=True)
class StoredSweep(SweepRows):
    """A sweep or study read back from the store: its rows and its record (`RunStore.sweep_record`)."""

    record: dict[str, Any]

    @classmethod
    def read(cls, store: RunStore, sweep: str | int) -> StoredSweep:
        record = store.sweep_record(sweep)
        rows = [
            {"point": r["point"], "seed": r["seed"], "run": r["run"], **(r["figures"] or {})}
            for r in record["runs_done"]
        ]
        return cls(settings=record["settings"], rows=rows, record=record)


def run_sweep(
    plan: Plan,
    pool: Workers,
    *,
    store: RunStore | None = None,
    name: str | None = None,
    options: dict[str, Any] | None = None,
    prices: Prices | None = None,
    objectives: dict[str, Any] | None = None,
    progress: Callable[[dict[str, Any]], object] | None = None,
) -> SweepResult:
    """Run the plan on `pool`, keeping the sweep and each run in `store` (if given) as it finishes;
    `progress` hears each run's row. Ctrl-C ends it early: the result holds what finished."""
    template = plan.template
    jobs = plan.jobs(prices, objectives)
    settings = {point.number: point.settings for point in plan.points}
    sweep_id = None
    if store is not None:
        sweep_id = store.begin_sweep(
            kind="sweep",
            name=name,
            scenario_name=template.name,
            scenario_file=None if template.file is None else str(template.file),
            scenario_text=template.text,
            options=(options or {}) | {"seeds": list(plan.seeds)},
        )
        store.add_points(sweep_id, settings)

    def done(index: int, outcome: Outcome) -> None:
        if store is not None and sweep_id is not None:
            keep(store, sweep_id, template, outcome)
        if progress is not None:
            progress(outcome.row)

    try:
        rows = run_jobs(jobs, pool, done)
    except Interrupted as stop:
        if store is not None and sweep_id is not None:
            store.finish_sweep(sweep_id, "Interrupted", f"stopped after {len(stop.rows)} of {len(jobs)} runs")
        return SweepResult(settings, stop.rows, plan, sweep_id, interrupted=True)
    except BaseException as exc:
        if store is not None and sweep_id is not None:
            store.finish_sweep(sweep_id, "Failed", f"{type(exc).__name__}: {exc}")
        raise
    if store is not None and sweep_id is not None:
        store.finish_sweep(sweep_id, "Completed")
    return SweepResult(settings, rows, plan, sweep_id, interrupted=False)


def keep(store: RunStore, sweep_id: int, template: Template, outcome: Outcome) -> None:
    """Keep a finished job's run and figures with its sweep, in one transaction, and note the run's
    number in its row (`run`)."""
    row = outcome.row
    row["run"] = store.save_sweep_run(
        sweep_id,
        point=row["point"],
        seed=row["seed"],
        figures={key: value for key, value in row.items() if key not in ("point", "seed", "run")},
        error=row["error"],
        wall_s=row["wall_s"],
        run=outcome.run,
        scenario_file=None if template.file is None else str(template.file),
    )
