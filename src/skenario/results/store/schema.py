"""The store's tables, and the ordered migrations that bring any store file up to them.

A store file says which of `MIGRATIONS` it has had in SQLite's `PRAGMA user_version`: 0 for a new
file and for every store made before the migrations were numbered, N once the first N have run.
Opening a store runs the ones it lacks, in order, each once, in one transaction with the version
that records it: two processes opening an old store at once upgrade it once, and a migration that
fails leaves the file as it was.

    version 0 --1: the tables as of skenario 0.x (9bb56aa), and the columns added to them before
                   numbering (a store of any earlier release gains them)--> version 1
              --2: the file marked as skenario's (`PRAGMA application_id`)--> version 2

A file that is not a run store (another application's database, even one with a `runs` table) is
refused before anything is written to it (`ours`): a file marked by another application, a table
skenario does not make, or one of its tables without the columns skenario gave it.

A new migration is one function appended to `MIGRATIONS`; a migration once released never changes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

TABLES = (
    """CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    scenario_file TEXT,
    scenario TEXT NOT NULL,
    seed INTEGER NOT NULL,
    phase TEXT NOT NULL,
    message TEXT,
    digest TEXT,
    summary TEXT,
    simulated_ns INTEGER NOT NULL DEFAULT 0,
    wall_s REAL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    version TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    run_name TEXT,
    tags TEXT
)""",
    """CREATE TABLE IF NOT EXISTS series (
    run_id INTEGER NOT NULL REFERENCES runs(id), time_ns INTEGER NOT NULL, row TEXT NOT NULL,
    PRIMARY KEY (run_id, time_ns)
) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS replica_series (
    run_id INTEGER NOT NULL REFERENCES runs(id), time_ns INTEGER NOT NULL, replica INTEGER NOT NULL,
    state TEXT NOT NULL, cpu_utilisation REAL, requests_held INTEGER NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS replica_series_run ON replica_series (run_id)",
    """CREATE TABLE IF NOT EXISTS replicas (
    run_id INTEGER NOT NULL REFERENCES runs(id), replica INTEGER NOT NULL, created_ns INTEGER NOT NULL,
    bound_ns INTEGER, activated_ns INTEGER, terminated_ns INTEGER, cpu_request INTEGER NOT NULL, cpu_limit INTEGER,
    busy_core_ns REAL NOT NULL, memory_request INTEGER, restarts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, replica)
) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS timeline (
    run_id INTEGER NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL, time_ns INTEGER NOT NULL,
    source TEXT NOT NULL, operation TEXT NOT NULL, target TEXT NOT NULL, message TEXT NOT NULL, detail TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS documents (
    run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS ignored (
    run_id INTEGER NOT NULL REFERENCES runs(id), time_ns INTEGER NOT NULL, kind TEXT NOT NULL,
    from_stock TEXT NOT NULL, to_stock TEXT NOT NULL, reason TEXT NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS ignored_run ON ignored (run_id)",
    """CREATE TABLE IF NOT EXISTS sweeps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    name TEXT,
    scenario_name TEXT NOT NULL,
    scenario_file TEXT,
    scenario TEXT NOT NULL,
    options TEXT NOT NULL,
    phase TEXT NOT NULL,
    message TEXT,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS sweep_points (
    sweep_id INTEGER NOT NULL REFERENCES sweeps(id), point INTEGER NOT NULL, settings TEXT NOT NULL,
    PRIMARY KEY (sweep_id, point)
) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS sweep_runs (
    sweep_id INTEGER NOT NULL REFERENCES sweeps(id), point INTEGER NOT NULL, seed INTEGER NOT NULL,
    run_id INTEGER, figures TEXT NOT NULL, error TEXT, wall_s REAL,
    PRIMARY KEY (sweep_id, point, seed)
) WITHOUT ROWID""",
)
"""Migration 1's tables, as the first numbered store has them (a table already there is left as it is)."""

ADDED_COLUMNS = {
    "runs": {"run_name": "TEXT", "tags": "TEXT", "sweep_id": "INTEGER"},
    "replicas": {"memory_request": "INTEGER", "restarts": "INTEGER NOT NULL DEFAULT 0", "bound_ns": "INTEGER"},
}
"""Columns added to tables before migrations were numbered: a store made before them gains them in migration 1."""

Migration = Callable[[sqlite3.Connection], None]


def _tables_of_0_x(connection: sqlite3.Connection) -> None:
    """Migration 1: every table, and the columns an older store lacks (`ADDED_COLUMNS`)."""
    for statement in TABLES:
        connection.execute(statement)
    for table, columns in ADDED_COLUMNS.items():
        present = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        for name, kind in columns.items():
            if name not in present:
                connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")


APPLICATION_ID = int.from_bytes(b"sknr", "big")
"""What SQLite's header says of a store file: skenario made it (`PRAGMA application_id`; 0 in files before it)."""


def _marked(connection: sqlite3.Connection) -> None:
    """Migration 2: the file says it is skenario's, so another application's database is told apart at once."""
    connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")


MIGRATIONS: tuple[Migration, ...] = (_tables_of_0_x, _marked)
"""Migration N is `MIGRATIONS[N - 1]`; a store at `user_version` N has had the first N."""


class NewerStore(Exception):
    """A store whose `user_version` is past every migration here: a newer skenario made it."""


class ForeignStore(Exception):
    """A database skenario did not make: refused before anything is written to it."""


def _columns_of_0_x() -> dict[str, set[str]]:
    """Each table's columns as the oldest store has them: migration 1's tables less `ADDED_COLUMNS`."""
    with sqlite3.connect(":memory:") as memory:
        for statement in TABLES:
            memory.execute(statement)
        names = [name for (name,) in memory.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        columns = {name: {row[1] for row in memory.execute(f"PRAGMA table_info({name})")} for name in names}
    memory.close()
    return {name: have - set(ADDED_COLUMNS.get(name, {})) for name, have in columns.items()}


COLUMNS = _columns_of_0_x()
"""The columns every store of skenario has had, by table."""

OPTUNA_TABLES = frozenset(
    {
        "alembic_version",
        "studies",
        "study_directions",
        "study_system_attributes",
        "study_user_attributes",
        "trial_heartbeats",
        "trial_intermediate_values",
        "trial_params",
        "trial_system_attributes",
        "trial_user_attributes",
        "trial_values",
        "trials",
        "version_info",
    }
)
"""Optuna's tables (its RDB storage's models), which `skenario tune` keeps studies in, in the store's file."""


def ours(connection: sqlite3.Connection) -> None:
    """Raise ForeignStore unless the file is a run store skenario made (or an empty one); only reads it."""
    application = int(connection.execute("PRAGMA application_id").fetchone()[0])
    if application not in (0, APPLICATION_ID):
        raise ForeignStore(f"not a skenario run store: another application made it (application_id {application})")
    if application == APPLICATION_ID:
        return
    tables = [
        name
        for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not name.startswith("sqlite_")
    ]
    if foreign := sorted(set(tables) - set(COLUMNS) - OPTUNA_TABLES):
        raise ForeignStore(f"not a skenario run store: it has tables skenario does not make ({', '.join(foreign)})")
    for table in set(tables) & set(COLUMNS):
        have = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        if missing := sorted(COLUMNS[table] - have):
            raise ForeignStore(f"not a skenario run store: its table {table} lacks {', '.join(missing)}")


def version(connection: sqlite3.Connection) -> int:
    """The number of migrations this store file has had."""
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def migrate(connection: sqlite3.Connection, migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Run the migrations the store lacks, in order, in one transaction; the numbers of those run.

    The version is read again under the write lock, so a store another process upgraded meanwhile
    is not upgraded twice. A store already up to date takes no lock at all.
    """
    if version(connection) == len(migrations):
        return []
    connection.execute("BEGIN IMMEDIATE")
    try:
        have = version(connection)
        if have > len(migrations):
            raise NewerStore(f"the store has had {have} migrations; this skenario knows {len(migrations)}")
        done = []
        for number in range(have + 1, len(migrations) + 1):
            migrations[number - 1](connection)
            done.append(number)
        connection.execute(f"PRAGMA user_version = {len(migrations)}")
    except BaseException:
        connection.rollback()
        raise
    connection.commit()
    return done
