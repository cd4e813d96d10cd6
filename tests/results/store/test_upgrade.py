"""A store made by skenario as of 9bb56aa (before migrations were numbered) opens, upgrades and reads back whole.

`data/store-9bb56aa.sqlite` was made by that commit's code (`data/make-store-9bb56aa.sh`): four runs
of `skenario run` (one named and tagged, with an event; one on a cluster, with scheduling documents; a
plain one; a KEP-140 Scenario) and a sweep of 2 points x 2 seeds. Each test opens a copy in a
temporary folder, and compares what the store gives with the old file's rows read directly with sqlite3.
"""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from skenario.recording.recorder import COLUMNS, LIFECYCLE_COLUMNS, REPLICA_COLUMNS
from skenario.results.store import RunStore
from skenario.results.store.schema import MIGRATIONS
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

OLD = Path(__file__).resolve().parents[1] / "data" / "store-9bb56aa.sqlite"


def old_rows(query: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows of the committed file as it is, read without writing to it (nor beside it)."""
    with closing(sqlite3.connect(f"file:{OLD}?immutable=1", uri=True)) as db:
        return db.execute(query, params).fetchall()


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    """A copy of the old store, not yet opened by today's code."""
    folder = tmp_path / "store"
    folder.mkdir()
    shutil.copyfile(OLD, folder / "runs.sqlite")
    return RunStore(folder)


def user_version(path: Path) -> int:
    with closing(sqlite3.connect(path)) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def same(stored: Any, loaded: Any) -> bool:
    """Equal, a missing value (None in JSON) read back as NaN or None."""
    if stored is None:
        return loaded is None or (isinstance(loaded, float) and math.isnan(loaded))
    return bool(stored == loaded)


def assert_same_rows(stored: list[tuple[Any, ...]], loaded: list[tuple[Any, ...]]) -> None:
    assert len(loaded) == len(stored)
    for row, loaded_row in zip(stored, loaded, strict=True):
        assert all(same(a, b) for a, b in zip(row, loaded_row, strict=True)), (row, loaded_row)


def test_the_old_file_is_small_unnumbered_and_holds_what_it_says() -> None:
    assert OLD.stat().st_size < 1_000_000
    assert old_rows("PRAGMA user_version") == [(0,)]
    assert old_rows("SELECT COUNT(*) FROM runs") == [(8,)]
    assert old_rows("SELECT COUNT(*) FROM runs WHERE sweep_id = 1") == [(4,)]
    assert old_rows("SELECT COUNT(*) FROM sweeps") == [(1,)]


def test_opening_an_old_store_upgrades_it_to_the_newest_version(store: RunStore) -> None:
    assert user_version(store.path) == 0
    store.runs()
    assert user_version(store.path) == len(MIGRATIONS)


def test_an_upgraded_store_has_the_columns_of_a_new_one(store: RunStore, tmp_path: Path) -> None:
    fresh = RunStore(tmp_path / "fresh")
    fresh.open().close()

    def columns(path: Path) -> dict[str, set[str]]:
        with closing(sqlite3.connect(path)) as db:
            tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {table: {row[1] for row in db.execute(f"PRAGMA table_info({table})")} for table in tables}

    store.open().close()
    assert columns(store.path) == columns(fresh.path)


def test_every_run_lists_as_its_row_says(store: RunStore) -> None:
    rows = old_rows("SELECT id, run_name, tags, name, seed, phase, message, digest, simulated_ns, sweep_id FROM runs")
    listed = {run["run"]: run for run in store.runs()}
    assert sorted(listed) == [row[0] for row in rows]
    for run_id, run_name, tags, name, seed, phase, message, digest, simulated_ns, sweep_id in rows:
        run = listed[run_id]
        assert (run["name"], run["tags"], run["scenario"], run["seed"]) == (run_name, json.loads(tags), name, seed)
        assert (run["phase"], run["message"], run["digest"]) == (phase, message, digest)
        assert (run["simulated_ns"], run["sweep"]) == (simulated_ns, sweep_id)


def test_references_find_the_old_runs_by_name_and_tag(store: RunStore) -> None:
    [(hpa,)] = old_rows("SELECT id FROM runs WHERE run_name = 'hpa'")
    [(drain,)] = old_rows("SELECT id FROM runs WHERE tags LIKE '%\"drain\"%'")
    assert store.resolve("hpa") == store.resolve("crash") == hpa
    assert store.resolve("drain") == drain
    assert store.resolve("latest") == max(run_id for (run_id,) in old_rows("SELECT id FROM runs"))


@pytest.mark.parametrize("run_id", [run_id for (run_id,) in old_rows("SELECT id FROM runs ORDER BY id")])
def test_every_run_loads_with_the_figures_of_its_rows(store: RunStore, run_id: int) -> None:
    data = store.load(run_id)
    [(name, seed, phase, message, digest, simulated_ns, summary, scenario)] = old_rows(
        "SELECT name, seed, phase, message, digest, simulated_ns, summary, scenario FROM runs WHERE id = ?", run_id
    )
    assert (data.name, data.seed, data.phase, data.message) == (name, seed, phase, message)
    assert (data.digest, data.simulated_ns, data.scenario) == (digest, simulated_ns, scenario)
    assert data.summary == json.loads(summary)

    series = [
        json.loads(row) for (row,) in old_rows("SELECT row FROM series WHERE run_id = ? ORDER BY time_ns", run_id)
    ]
    assert len(data.series) == len(series)
    assert set(data.series.columns) == set(COLUMNS).union(*series)
    for (_, loaded), row in zip(data.series.iterrows(), series, strict=True):
        for column in data.series.columns:
            expected = row.get(column, 0 if column.startswith("failed_") else None)
            assert same(expected, loaded[column]), (run_id, row["time_ns"], column)

    samples = old_rows(
        f"SELECT {', '.join(REPLICA_COLUMNS)} FROM replica_series WHERE run_id = ? ORDER BY time_ns, replica", run_id
    )
    assert_same_rows(samples, list(data.replica_series[list(REPLICA_COLUMNS)].itertuples(index=False)))

    lifecycles = old_rows(
        f"SELECT {', '.join(LIFECYCLE_COLUMNS)} FROM replicas WHERE run_id = ? ORDER BY replica", run_id
    )
    assert_same_rows(lifecycles, list(data.replicas[list(LIFECYCLE_COLUMNS)].itertuples(index=False)))

    timeline = old_rows(
        "SELECT time_ns, source, operation, target, message, detail FROM timeline WHERE run_id = ? ORDER BY seq", run_id
    )
    assert [(*entry[:5], json.loads(entry[5])) for entry in timeline] == [
        tuple(entry) for entry in data.timeline.itertuples(index=False)
    ]
    documents = old_rows("SELECT name, body FROM documents WHERE run_id = ?", run_id)
    assert data.documents == {key: json.loads(body) for key, body in documents}


def test_the_old_sweep_reads_back_with_its_points_and_figures(store: RunStore) -> None:
    record = store.sweep_record("tiny-sweep")
    [(sweep_id, kind, scenario, options)] = old_rows("SELECT id, kind, scenario, options FROM sweeps")
    assert (record["sweep"], record["kind"], record["scenario_text"]) == (sweep_id, kind, scenario)
    assert record["options"] == json.loads(options)
    points = old_rows("SELECT point, settings FROM sweep_points WHERE sweep_id = ? ORDER BY point", sweep_id)
    assert record["settings"] == {point: json.loads(settings) for point, settings in points}
    done = old_rows(
        "SELECT point, seed, run_id, figures, error, wall_s FROM sweep_runs WHERE sweep_id = ? ORDER BY point, seed",
        sweep_id,
    )
    assert [(r["point"], r["seed"], r["run"], r["figures"], r["error"], r["wall_s"]) for r in record["runs_done"]] == [
        (point, seed, run_id, json.loads(figures), error, wall_s)
        for point, seed, run_id, figures, error, wall_s in done
    ]
    assert [run["run"] for run in store.runs(sweep=sweep_id)] == sorted(r["run"] for r in record["runs_done"])


def test_an_upgraded_store_takes_new_runs_after_the_old_ones(store: RunStore) -> None:
    [(text, digest)] = old_rows("SELECT scenario, digest FROM runs WHERE name = 'tiny' AND sweep_id IS NULL")
    simulation = Simulation(parse_scenario(text), scenario_text=text)  # an old run's scenario, run again
    writer = store.begin(simulation, "tiny.yaml", name="after")
    simulation.run()
    writer.finish(0.1)
    [(newest,)] = old_rows("SELECT MAX(id) FROM runs")
    assert writer.run_id == newest + 1
    assert store.load("after").digest == simulation.summary().digest == digest  # as 9bb56aa ran it
    [(sweep_id,)] = old_rows("SELECT id FROM sweeps")
    assert store.remove_sweep("tiny-sweep")[0] == sweep_id  # and the old sweep goes with its runs
    alone = [run_id for (run_id,) in old_rows("SELECT id FROM runs WHERE sweep_id IS NULL ORDER BY id")]
    assert [run["run"] for run in store.runs()] == [*alone, writer.run_id]
