"""The store's migrations: run in order, each once, all or nothing, and never on a store from a newer skenario."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import pytest
from optuna.storages._rdb import models

from skenario.results.store import RunStore, StoreError
from skenario.results.store.schema import MIGRATIONS, OPTUNA_TABLES, Migration, migrate, version


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(tmp_path / "runs.sqlite")) as connection:
        yield connection


def logging_migrations(log: list[str], names: str) -> list[Migration]:
    """One migration per letter of `names`: each makes its table and notes that it ran."""

    def make(name: str) -> Callable[[sqlite3.Connection], None]:
        def step(connection: sqlite3.Connection) -> None:
            connection.execute(f"CREATE TABLE {name} (x INTEGER)")
            log.append(name)

        return step

    return [make(name) for name in names]


def tables(connection: sqlite3.Connection) -> set[str]:
    return {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_migrations_run_in_order_and_once(db: sqlite3.Connection) -> None:
    log: list[str] = []
    assert version(db) == 0
    assert migrate(db, logging_migrations(log, "ab")) == [1, 2]
    assert log == ["a", "b"] and version(db) == 2
    assert migrate(db, logging_migrations(log, "ab")) == []  # up to date: nothing runs again
    assert log == ["a", "b"]
    assert migrate(db, logging_migrations(log, "abc")) == [3]  # a newer skenario: only what is new
    assert log == ["a", "b", "c"] and version(db) == 3
    assert tables(db) == {"a", "b", "c"}


def test_a_failing_migration_leaves_the_store_as_it_was(db: sqlite3.Connection) -> None:
    log: list[str] = []
    migrate(db, logging_migrations(log, "a"))

    def broken(connection: sqlite3.Connection) -> None:
        connection.execute("CREATE TABLE half (x INTEGER)")
        raise RuntimeError("migration 3 failed")

    with pytest.raises(RuntimeError, match="migration 3"):
        migrate(db, [*logging_migrations(log, "ab"), broken])
    assert version(db) == 1 and tables(db) == {"a"}  # neither b nor half: one transaction
    assert not db.in_transaction


def test_a_store_from_a_newer_skenario_is_refused(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.open().close()
    with closing(sqlite3.connect(store.path)) as db:
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(StoreError, match="migrations"):
        store.open()


def test_a_new_store_starts_at_the_newest_version_with_every_table(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    with closing(store.open()) as db:
        assert version(db) == len(MIGRATIONS)
        assert {"runs", "series", "replica_series", "replicas", "timeline", "documents", "ignored"} <= tables(db)
        assert {"sweeps", "sweep_points", "sweep_runs"} <= tables(db)
        assert "sweep_id" in {row[1] for row in db.execute("PRAGMA table_info(runs)")}


def _foreign(path: Path, *statements: str) -> bytes:
    """Another application's database at the store's path; its bytes, to compare after."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as db, db:
        for statement in statements:
            db.execute(statement)
    return path.read_bytes()


FOREIGN = {
    "a runs table of its own": (
        ("CREATE TABLE runs (id INTEGER PRIMARY KEY, owner TEXT)",),
        "its table runs lacks",
    ),
    "tables skenario does not make": (
        ("CREATE TABLE accounts (id INTEGER)", "CREATE TABLE runs (id INTEGER)"),
        "tables skenario does not make (accounts)",
    ),
    "another application's mark": (
        ("PRAGMA application_id = 1234", "CREATE TABLE notes (x TEXT)"),
        "another application made it (application_id 1234)",
    ),
}


@pytest.mark.parametrize("case", FOREIGN)
def test_another_applications_database_is_refused_and_left_as_it_was(case: str, tmp_path: Path) -> None:
    statements, says = FOREIGN[case]
    store = RunStore(tmp_path / "store")
    before = _foreign(store.path, *statements)
    for attempt in (store.runs, lambda: store.open(create=True)):
        with pytest.raises(StoreError, match="not a skenario run store") as refused:
            attempt()
        assert says in str(refused.value) and str(store.path) in str(refused.value)
    assert store.path.read_bytes() == before  # not altered: no table added, not even the journal mode
    assert sorted(p.name for p in store.folder.iterdir()) == ["runs.sqlite"]  # no -wal or -shm left


def test_a_file_that_is_not_a_database_is_refused_in_one_line(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.path.write_bytes(b"not SQLite at all\n" * 100)
    with pytest.raises(StoreError, match="cannot open the run store") as refused:
        store.runs()
    assert "\n" not in str(refused.value)


def test_a_store_is_marked_as_skenarios_and_its_mark_is_what_lets_it_in(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.open().close()
    with closing(sqlite3.connect(store.path)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == int.from_bytes(b"sknr", "big")
    assert store.runs() == []


def test_a_store_holding_tunes_optuna_study_is_ours(tmp_path: Path) -> None:
    """`skenario tune` keeps Optuna's study tables in the store's file: an unmarked store (before migration 2)
    with them is still skenario's. The names are Optuna's own (its RDB storage's models)."""
    assert set(models.BaseModel.metadata.tables) <= OPTUNA_TABLES
    store = RunStore(tmp_path)
    store.open().close()
    with closing(sqlite3.connect(store.path)) as db, db:
        db.execute("PRAGMA application_id = 0")
        db.execute("PRAGMA user_version = 1")
        db.execute("CREATE TABLE studies (study_id INTEGER PRIMARY KEY, study_name TEXT)")
    assert store.runs() == []
