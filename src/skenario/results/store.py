"""The run store: every run's scenario, seed, phase, summary, time series and timeline, in one SQLite file.

SQLite needs no server and survives a killed writer: each batch is one transaction, so the file
always holds whole batches. A run's row is written first with phase Running and the writer's
process id; a run whose process is gone while it still says Running is marked Failed the next
time the store is opened, so a killed run never looks finished or still under way.

The store lives in `.skenario/runs.sqlite` by default (`SKENARIO_STORE` or `--store` name
another folder).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skenario import __version__
from skenario.core.time import SECOND
from skenario.errors import SkenarioError
from skenario.recording.recorder import COLUMNS, LIFECYCLE_COLUMNS, REPLICA_COLUMNS
from skenario.results.rundata import RunData, replica_frame, timeline_frame
from skenario.scenario.simulation import Simulation

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_STORE = Path(".skenario")
DATABASE = "runs.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
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
    pid INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS series (
    run_id INTEGER NOT NULL REFERENCES runs(id), time_ns INTEGER NOT NULL, row TEXT NOT NULL,
    PRIMARY KEY (run_id, time_ns)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS replica_series (
    run_id INTEGER NOT NULL REFERENCES runs(id), time_ns INTEGER NOT NULL, replica INTEGER NOT NULL,
    state TEXT NOT NULL, cpu_utilisation REAL, requests_held INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS replica_series_run ON replica_series (run_id);
CREATE TABLE IF NOT EXISTS replicas (
    run_id INTEGER NOT NULL REFERENCES runs(id), replica INTEGER NOT NULL, created_ns INTEGER NOT NULL,
    activated_ns INTEGER, terminated_ns INTEGER, cpu_request INTEGER NOT NULL, cpu_limit INTEGER,
    busy_core_ns REAL NOT NULL, memory_request INTEGER, restarts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, replica)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS timeline (
    run_id INTEGER NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL, time_ns INTEGER NOT NULL,
    source TEXT NOT NULL, operation TEXT NOT NULL, target TEXT NOT NULL, message TEXT NOT NULL, detail TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ignored (
    run_id INTEGER NOT NULL REFERENCES runs(id), time_ns INTEGER NOT NULL, kind TEXT NOT NULL,
    from_stock TEXT NOT NULL, to_stock TEXT NOT NULL, reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ignored_run ON ignored (run_id);
"""

RUN_LIST_COLUMNS = ("id", "name", "seed", "phase", "digest", "simulated_ns", "wall_s", "started_at", "message")


class StoreError(SkenarioError):
    """A run the store does not have, or a store it cannot open."""


_RUN_TABLES = ("series", "replica_series", "replicas", "timeline", "ignored")
"""The tables holding a run's records by `run_id`, besides `runs` itself."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class RunStore:
    """The runs kept in one folder."""

    def __init__(self, folder: Path | str | None = None) -> None:
        folder = Path(folder if folder is not None else os.environ.get("SKENARIO_STORE", DEFAULT_STORE))
        self.folder = folder
        self.path = folder / DATABASE

    def exists(self) -> bool:
        return self.path.is_file()

    def open(self, create: bool = True) -> sqlite3.Connection:
        """A connection to the store, its tables made if they are not there yet; without `create`, only
        to a store that exists (reading never makes one)."""
        if not create and not self.exists():
            raise StoreError("no run store here: no run has been kept in it", file=str(self.path))
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=30)
            connection.execute("PRAGMA journal_mode=WAL")
            # In WAL mode a transaction is still all or nothing when the process dies; NORMAL only
            # skips the fsync per commit, which a power cut could cost the last batches of.
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.executescript(_SCHEMA)
            _add_missing_columns(connection)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the run store: {exc}", file=str(self.path)) from None
        return connection

    @contextmanager
    def _connect(self, create: bool = False) -> Iterator[sqlite3.Connection]:
        with closing(self.open(create)) as connection:
            yield connection

    def begin(self, simulation: Simulation, scenario_file: str | None) -> RunWriter:
        """A new run, phase Running; its results follow through the writer."""
        with self._connect(create=True) as db, db:
            self._reap(db)
            cursor = db.execute(
                "INSERT INTO runs (name, scenario_file, scenario, seed, phase, started_at, version, host, pid) "
                "VALUES (?, ?, ?, ?, 'Running', ?, ?, ?, ?)",
                (
                    simulation.scenario.metadata.name,
                    scenario_file,
                    simulation.scenario_text,
                    simulation.seed,
                    _now(),
                    __version__,
                    socket.gethostname(),
                    os.getpid(),
                ),
            )
            run_id = cursor.lastrowid
        assert run_id is not None
        return RunWriter(self, run_id, simulation)

    def _reap(self, db: sqlite3.Connection) -> None:
        """Mark Failed the runs of this host whose process ended while they said Running."""
        rows = db.execute("SELECT id, pid FROM runs WHERE phase = 'Running' AND host = ?", (socket.gethostname(),))
        for run_id, pid in rows.fetchall():
            if not _alive(pid):
                db.execute(
                    "UPDATE runs SET phase = 'Failed', message = ?, finished_at = ? WHERE id = ?",
                    ("its process ended before the run did (killed?)", _now(), run_id),
                )

    def runs(self) -> pd.DataFrame:
        """Every run, newest last (none where no store is)."""
        import pandas as pd

        if not self.exists():
            return pd.DataFrame([], columns=list(RUN_LIST_COLUMNS))
        with self._connect() as db, db:
            self._reap(db)
            rows = db.execute(f"SELECT {', '.join(RUN_LIST_COLUMNS)} FROM runs ORDER BY id").fetchall()
        return pd.DataFrame(rows, columns=list(RUN_LIST_COLUMNS))

    def resolve(self, run: str | int) -> int:
        """A run id from what a user typed: a number, or `latest` (also -1, -2, ... counting back)."""
        text = str(run).strip()
        with self._connect() as db:
            if text == "latest" or (text.lstrip("-").isdigit() and int(text) < 0):
                back = 1 if text == "latest" else -int(text)
                row = db.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (back - 1,)).fetchone()
                if row is None:
                    raise StoreError("no such run: the store has fewer runs", value=text, file=str(self.path))
                return int(row[0])
            if not text.isdigit():
                raise StoreError("a run is its number (see `skenario runs`) or `latest`", value=text)
            row = db.execute("SELECT id FROM runs WHERE id = ?", (int(text),)).fetchone()
        if row is None:
            raise StoreError("no such run (see `skenario runs`)", value=text, file=str(self.path))
        return int(row[0])

    def remove(self, runs: list[str | int]) -> list[int]:
        """Delete these runs (numbers or `latest`) and everything they recorded; their ids. A Running one is refused."""
        ids = [self.resolve(run) for run in runs]
        with self._connect() as db, db:
            self._reap(db)
            for run_id in ids:
                (phase,) = db.execute("SELECT phase FROM runs WHERE id = ?", (run_id,)).fetchone()
                if phase == "Running":
                    raise StoreError("run is still running; stop it first", value=run_id, file=str(self.path))
            for run_id in ids:
                for table in _RUN_TABLES:
                    db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
                db.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        return ids

    def keep_newest(self, keep: int) -> list[int]:
        """Delete all but the newest `keep` finished runs; the ids deleted."""
        if not self.exists():
            return []
        with self._connect() as db:
            rows = db.execute("SELECT id FROM runs WHERE phase != 'Running' ORDER BY id DESC").fetchall()
        old = [int(run_id) for (run_id,) in rows[keep:]]
        return self.remove(list(old)) if old else []

    def load(self, run: str | int) -> RunData:
        """One run's results."""
        import pandas as pd

        run_id = self.resolve(run)
        with self._connect() as db, db:
            self._reap(db)
            head = db.execute(
                "SELECT name, seed, phase, message, digest, simulated_ns, summary, scenario FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
            series_rows = db.execute("SELECT row FROM series WHERE run_id = ? ORDER BY time_ns", (run_id,)).fetchall()
            replica_rows = db.execute(
                f"SELECT {', '.join(REPLICA_COLUMNS)} FROM replica_series WHERE run_id = ? ORDER BY time_ns, replica",
                (run_id,),
            ).fetchall()
            lifecycles = db.execute(
                f"SELECT {', '.join(LIFECYCLE_COLUMNS)} FROM replicas WHERE run_id = ? ORDER BY replica", (run_id,)
            ).fetchall()
            timeline = db.execute(
                "SELECT time_ns, source, operation, target, message, detail FROM timeline "
                "WHERE run_id = ? ORDER BY seq",
                (run_id,),
            ).fetchall()
        name, seed, phase, message, digest, simulated_ns, summary, scenario = head
        return RunData(
            id=run_id,
            name=name,
            seed=seed,
            phase=phase,
            message=message,
            digest=digest,
            simulated_ns=simulated_ns,
            summary=json.loads(summary) if summary else {},
            series=_series_frame([json.loads(row) for (row,) in series_rows]),
            replica_series=replica_frame(
                {name: [row[i] for row in replica_rows] for i, name in enumerate(REPLICA_COLUMNS)}
            ),
            replicas=pd.DataFrame(lifecycles, columns=list(LIFECYCLE_COLUMNS)),
            timeline=timeline_frame([(*row[:5], json.loads(row[5])) for row in timeline]),
            scenario=scenario,
        )

    def ignored(self, run: str | int) -> pd.DataFrame:
        """The movements a run ignored (up to the kernel's keep limit), with why."""
        import pandas as pd

        run_id = self.resolve(run)
        with self._connect() as db:
            rows = db.execute(
                "SELECT time_ns, kind, from_stock, to_stock, reason FROM ignored WHERE run_id = ? ORDER BY rowid",
                (run_id,),
            ).fetchall()
        return pd.DataFrame(rows, columns=["time_ns", "kind", "from_stock", "to_stock", "reason"])


_ADDED_COLUMNS = {"replicas": {"memory_request": "INTEGER", "restarts": "INTEGER NOT NULL DEFAULT 0"}}
"""Columns added to tables since the first store: a store made before them gains them when opened."""


def _add_missing_columns(connection: sqlite3.Connection) -> None:
    for table, columns in _ADDED_COLUMNS.items():
        present = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        for name, kind in columns.items():
            if name not in present:
                connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")


def _series_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The recorder's frame again: its columns in order, failure reasons after, missing counts as 0."""
    import pandas as pd

    reasons = sorted({key for row in rows for key in row if key.startswith("failed_")})
    frame = pd.DataFrame(rows, columns=[*COLUMNS, *reasons])
    if reasons:
        frame[reasons] = frame[reasons].fillna(0).astype("int64")
    frame.index = pd.Index(frame["time_ns"] / SECOND, name="time_s")
    return frame


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunWriter:
    """Writes one run's results in batches: `flush` after each stretch of the run, `finish` at its end.

    It keeps one connection for the whole run: opening one per batch made SQLite checkpoint and
    recreate its write-ahead log every time, most of what writing cost.
    """

    def __init__(self, store: RunStore, run_id: int, simulation: Simulation) -> None:
        self.store = store
        self.run_id = run_id
        self._simulation = simulation
        self._db = store.open()
        self._series = 0
        self._replica_rows = 0
        self._timeline = 0

    def flush(self) -> None:
        """Write what the run made since the last flush, in one transaction."""
        with self._db as db:
            written = self._write_batch(db)
        self._series, self._replica_rows, self._timeline = written  # only once committed

    def _write_batch(self, db: sqlite3.Connection) -> tuple[int, int, int]:
        """Insert the rows made since the last committed batch; the counts to remember once it commits."""
        simulation = self._simulation
        recorder = simulation.recorder
        run_id = self.run_id
        rows = recorder.rows(self._series)
        db.executemany(
            "INSERT INTO series (run_id, time_ns, row) VALUES (?, ?, ?)",
            [(run_id, row["time_ns"], json.dumps(row)) for row in rows],
        )
        columns = recorder.replica_columns
        end = len(columns["time_ns"])
        db.executemany(
            f"INSERT INTO replica_series (run_id, {', '.join(REPLICA_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",
            [(run_id, *(columns[name][i] for name in REPLICA_COLUMNS)) for i in range(self._replica_rows, end)],
        )
        entries = simulation.timeline.since(self._timeline)
        db.executemany(
            "INSERT INTO timeline (run_id, seq, time_ns, source, operation, target, message, detail) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (run_id, self._timeline + i, at, source, operation, target, message, json.dumps(detail))
                for i, (at, source, operation, target, message, detail) in enumerate(entries)
            ],
        )
        return self._series + len(rows), end, self._timeline + len(entries)

    def finish(self, wall_s: float | None = None) -> None:
        """The last batch, the replicas' lifecycles, the ignored movements and the run's phase and summary."""
        simulation = self._simulation
        summary = simulation.summary()
        with closing(self._db), self._db as db:
            self._write_batch(db)
            db.executemany(
                f"INSERT OR REPLACE INTO replicas (run_id, {', '.join(LIFECYCLE_COLUMNS)}) "
                f"VALUES ({', '.join('?' * (1 + len(LIFECYCLE_COLUMNS)))})",
                [(self.run_id, *record) for record in simulation.recorder.lifecycles()],
            )
            db.executemany(
                "INSERT INTO ignored (run_id, time_ns, kind, from_stock, to_stock, reason) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (self.run_id, m.occurs_at, m.kind, m.from_stock.name, m.to_stock.name, str(reason))
                    for m, reason in simulation.env.ignored
                ],
            )
            db.execute(
                "UPDATE runs SET phase = ?, message = ?, digest = ?, summary = ?, simulated_ns = ?, wall_s = ?, "
                "finished_at = ? WHERE id = ?",
                (
                    simulation.phase.value,
                    simulation.message,
                    summary.digest,
                    json.dumps(summary.as_dict()),
                    simulation.env.now(),
                    wall_s,
                    _now(),
                    self.run_id,
                ),
            )
