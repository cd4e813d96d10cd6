"""A sweep end to end: its table against the runs it kept, common random numbers, the same rows on one
worker or two, and Ctrl-C keeping what finished."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from skenario.core.time import MILLISECOND
from skenario.results.store import RunStore
from skenario.sweeps.plan import Plan, Template, plan, replication_seeds
from skenario.sweeps.runner import Job, Outcome, run_job, workers
from skenario.sweeps.sweep import StoredSweep, run_sweep
from tests.sweeps.test_runner import SCENARIO


@pytest.fixture
def small_plan(tmp_path: Path) -> Plan:
    file = tmp_path / "small.yaml"
    file.write_text(SCENARIO)
    template = Template.from_file(file)
    return plan(template, [{"workload.replicas": 1}, {"workload.replicas": 3}], replication_seeds(3, 10))


def _without_wall_and_ids(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{k: v for k, v in row.items() if k not in ("wall_s", "simulation_s", "run")} for row in rows]


def test_the_table_is_the_mean_of_the_runs_it_kept(small_plan: Plan, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    with workers(2) as pool:
        result = run_sweep(small_plan, pool, store=store)
    assert not result.interrupted and result.sweep_id is not None
    table = result.points().set_index("point")
    for point in (1, 2):
        runs = [row["run"] for row in result.rows if row["point"] == point]
        # Each run read back from the store, its p99 from its own summary.
        p99s = [store.load(run).summary["latency_p99_ns"] / MILLISECOND for run in runs]
        assert table.loc[point, "p99_ms"] == pytest.approx(np.mean(p99s), rel=1e-12)
        assert table.loc[point, "runs"] == 3
    # The store lists the sweep with its runs, and shows the same table without running anything.
    [listed] = store.sweeps()
    assert (listed["kind"], listed["points"], listed["runs"], listed["phase"]) == ("sweep", 2, 6, "Completed")
    assert [run["run"] for run in store.runs(sweep=result.sweep_id)] == sorted(row["run"] for row in result.rows)
    stored = StoredSweep.read(store, result.sweep_id)
    assert stored.points(baseline=1).equals(result.points(baseline=1))


def test_every_point_draws_the_same_traffic_for_the_same_seed(small_plan: Plan, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    with workers(1) as pool:
        result = run_sweep(small_plan, pool, store=store)
    arrived = {(row["point"], row["seed"]): store.load(row["run"]).summary["requests_arrived"] for row in result.rows}
    for seed in (10, 11, 12):
        assert arrived[(1, seed)] == arrived[(2, seed)]  # 1 replica or 3: the same arrivals
    assert len({arrived[(1, seed)] for seed in (10, 11, 12)}) == 3  # and each seed its own


def test_one_worker_and_two_give_the_same_rows(small_plan: Plan) -> None:
    with workers(1) as pool:
        alone = run_sweep(small_plan, pool)
    with workers(2) as pool:
        paired = run_sweep(small_plan, pool)
    assert _without_wall_and_ids(alone.rows) == _without_wall_and_ids(paired.rows)
    assert alone.sweep_id is None  # no store, nothing kept


class StoppedAfter:
    """Workers that run jobs here and raise KeyboardInterrupt, as Ctrl-C would, once `left` jobs have run
    (counting across calls, as a study calls once per batch)."""

    count = 1

    def __init__(self, left: int) -> None:
        self.left = left

    def results(self, jobs: Sequence[Job]) -> Iterator[tuple[int, Outcome]]:
        for index, job in enumerate(jobs):
            if self.left == 0:
                raise KeyboardInterrupt
            self.left -= 1
            yield index, run_job(job)

    def close(self) -> None:
        pass


def test_ctrl_c_keeps_the_runs_that_finished_and_marks_the_sweep_interrupted(small_plan: Plan, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    result = run_sweep(small_plan, StoppedAfter(4), store=store)  # type: ignore[arg-type]
    assert result.interrupted and len(result.rows) == 4
    [listed] = store.sweeps()
    assert (listed["phase"], listed["runs"]) == ("Interrupted", 4)
    assert listed["message"] == "stopped after 4 of 6 runs"
    assert len(store.runs(sweep=result.sweep_id)) == 4  # whole runs, each with its summary
    table = result.points().set_index("point")
    assert list(table["runs"]) == [3, 1]
