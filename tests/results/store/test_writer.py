"""The one write path: any RunOutput goes in, in batches or whole, and the same rows come out either way."""

from __future__ import annotations

import ast
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from skenario.core.time import SECOND
from skenario.results.store import FinishedRun, RunOutput, RunStore, RunWriter

S = SECOND
SERIES: list[dict[str, Any]] = [
    {"time_ns": 10 * S, "replicas_desired": 2, "requests_arrived": 100, "latency_p99_ms": 80.0, "failed_timeout": 1},
    {"time_ns": 20 * S, "replicas_desired": 3, "requests_arrived": 150, "latency_p99_ms": None},
    {"time_ns": 30 * S, "replicas_desired": 3, "requests_arrived": 120, "latency_p99_ms": 95.5, "failed_timeout": 4},
]
SAMPLES = [
    (10 * S, 0, "active", 0.5, 2),
    (20 * S, 0, "active", 0.75, 3),
    (20 * S, 1, "launching", None, 0),
    (30 * S, 0, "active", 0.5, 1),
    (30 * S, 1, "active", 0.25, 1),
]
TIMELINE = [
    (15 * S, "web", "Decision", "workload", "scale to 3", {"desired": 3}),
    (25 * S, "crash", "Delete", "replica/0", "replica 0 terminating", {}),
]
LIFECYCLES = [
    (0, 0, 0, 0, None, 500, 1000, 12.5 * S, None, 0),
    (1, 20 * S, 20 * S, 28 * S, None, 500, None, 1.5 * S, 256 * 2**20, 1),
]
IGNORED = [(5 * S, "arrive", "traffic", "router", "from_stock_empty")]


@dataclass
class Handmade:
    """A RunOutput that is no Simulation: what it has made so far is the first `made` of each record."""

    made: int = 0
    phase: str = "Pending"
    message: str | None = "not started"
    scenario_name: str = "handmade"
    scenario_text: str = "kind: Handmade\n"
    seed: int = 9
    summary: dict[str, Any] = field(default_factory=lambda: {"requests_arrived": 370})
    heard: list[tuple[int, int, int]] = field(default_factory=list)  # what `stored` was told

    @property
    def simulated_ns(self) -> int:
        return SERIES[self.made - 1]["time_ns"] if self.made else 0

    def summary_record(self) -> tuple[str | None, dict[str, Any]]:
        return "feedc0ffee", self.summary

    def series_rows(self, start: int) -> list[dict[str, Any]]:
        return SERIES[start : self.made]

    def replica_rows(self, start: int) -> list[tuple[Any, ...]]:
        made = [sample for sample in SAMPLES if sample[0] <= self.simulated_ns]
        return made[start:]

    def timeline_since(self, start: int) -> list[tuple[Any, ...]]:
        return [entry for entry in TIMELINE if entry[0] <= self.simulated_ns][start:]

    def lifecycle_rows(self) -> list[tuple[Any, ...]]:
        return LIFECYCLES

    def stored(self, series: int, replica_rows: int, timeline: int) -> None:
        self.heard.append((series, replica_rows, timeline))

    def ignored_movements(self) -> list[tuple[int, str, str, str, str]]:
        return IGNORED

    def documents(self) -> dict[str, Any]:
        return {"scheduling": {"pods": 2}}


def rows(store: RunStore, run_id: int) -> dict[str, list[tuple[Any, ...]]]:
    """Every row a run has in every table, its `runs` row without the columns of when and by whom."""
    with closing(sqlite3.connect(store.path)) as db:
        found = {
            table: sorted(db.execute(f"SELECT * FROM {table} WHERE run_id = ?", (run_id,)).fetchall(), key=repr)
            for table in ("series", "replica_series", "replicas", "timeline", "documents", "ignored")
        }
        found["runs"] = db.execute(
            "SELECT name, scenario_file, scenario, seed, phase, message, digest, summary, simulated_ns, wall_s, "
            "run_name, tags, sweep_id FROM runs WHERE id = ?",
            (run_id,),
        ).fetchall()
    return found


def test_a_run_written_in_batches_and_one_written_whole_store_the_same_rows(tmp_path: Path) -> None:
    batched, whole = RunStore(tmp_path / "batched"), RunStore(tmp_path / "whole")
    run = Handmade()
    writer = batched.begin(run, "handmade.yaml", name="h", tags=["t"])
    for made in range(1, len(SERIES) + 1):  # a stretch per row, each flushed
        run.made, run.phase, run.message = made, "Running", None
        writer.flush()
    run.phase, run.message = "Completed", "reached the end"
    writer.finish(1.5)
    with closing(whole.open()) as db, db:
        whole_id = RunWriter.whole(db, run, 1.5, "handmade.yaml", name="h", tags=["t"])
    assert rows(batched, writer.run_id) == rows(whole, whole_id)


def test_a_releasing_writer_tells_the_run_what_each_committed_batch_holds(tmp_path: Path) -> None:
    """Row by row: after the first batch the store holds 1 series row, 1 sample and no timeline entry; after the
    second 2, 3 and 1 (the entry at 15 s); after the third all of them. Without `release` the run hears nothing."""
    for release, heard in ((True, [(1, 1, 0), (2, 3, 1), (3, 5, 2)]), (False, [])):
        run = Handmade()
        writer = RunStore(tmp_path / str(release)).begin(run, "handmade.yaml", release=release)
        for made in range(1, len(SERIES) + 1):
            run.made, run.phase = made, "Running"
            writer.flush()
        writer.finish(1.0)
        assert run.heard == heard


def test_a_handmade_run_loads_back_as_written(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    run = Handmade(made=len(SERIES), phase="Completed", message="done")
    with closing(store.open()) as db, db:
        run_id = RunWriter.whole(db, run, None, None)
    data = store.load(run_id)
    assert (data.name, data.seed, data.phase, data.message, data.digest) == (
        "handmade",
        9,
        "Completed",
        "done",
        "feedc0ffee",
    )
    assert data.simulated_ns == 30 * S and data.summary == {"requests_arrived": 370}
    assert data.series["replicas_desired"].tolist() == [2, 3, 3]
    assert data.series["failed_timeout"].tolist() == [1, 0, 4]  # a count missing from a row is 0
    assert data.replica_series["state"].tolist() == ["active", "active", "launching", "active", "active"]
    assert data.replicas["memory_request"].isna().tolist() == [True, False]
    assert [tuple(entry) for entry in data.timeline.itertuples(index=False)] == TIMELINE
    assert data.documents == {"scheduling": {"pods": 2}}
    assert store.ignored(run_id).values.tolist() == [list(movement) for movement in IGNORED]


def test_a_finished_run_is_a_run_output_holding_what_it_was_given() -> None:
    run = Handmade(made=2, phase="Failed", message="stopped")
    finished = FinishedRun.of(run, 0.5)
    as_output: RunOutput = finished
    assert (as_output.scenario_name, as_output.phase, as_output.simulated_ns) == ("handmade", "Failed", 20 * S)
    assert finished.series_rows(1) == SERIES[1:2]
    assert finished.timeline_since(0) == TIMELINE[:1]
    assert finished.lifecycle_rows() == LIFECYCLES
    assert finished.replica_rows(0) == [] and finished.ignored_movements() == [] and finished.documents() == {}


def test_a_run_whose_row_cannot_be_written_leaves_none(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    with pytest.raises(sqlite3.IntegrityError):
        store.begin(Handmade(scenario_name=None), None)  # type: ignore[arg-type]
    assert store.runs() == []


def test_the_store_imports_nothing_of_what_makes_runs() -> None:
    package = Path(__file__).resolve().parents[3] / "src" / "skenario" / "results" / "store"
    imported = set()
    for module in package.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert not {name for name in imported if name.startswith(("skenario.scenario", "skenario.sweeps", "skenario.cli"))}
