"""The run store: every run's scenario, seed, phase, summary, time series and timeline, in one SQLite file.

SQLite needs no server and survives a killed writer: each batch is one transaction, so the file
always holds whole batches. A run's row is written first with phase Running and the writer's
process id; a run whose process is gone while it still says Running is marked Failed the next
time the store is opened, so a killed run never looks finished or still under way.

The store lives in `.skenario/runs.sqlite` by default (`SKENARIO_STORE` or `--store` name
another folder).

A run is referred to (`RunStore.resolve`) by its number, which SQLite gives it in this store
file (1, 2, 3, ... never reused); by `latest` or -1, -2, ... counting back from the newest; by its
name (`run --name`), the newest run of that name when several share it; or by one of its tags
(`run --tag`), the newest run carrying it. A name is tried before a tag; neither can read as a
number or `latest` (`check_label` refuses those).
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skenario.core.time import SECOND
from skenario.errors import SkenarioError
from skenario.recording.recorder import COLUMNS, LIFECYCLE_COLUMNS, REPLICA_COLUMNS
from skenario.results.rundata import RunData, replica_frame, timeline_frame
from skenario.scenario.simulation import Simulation
from skenario.version import __version__

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
    pid INTEGER NOT NULL,
    run_name TEXT,
    tags TEXT
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
    bound_ns INTEGER, activated_ns INTEGER, terminated_ns INTEGER, cpu_request INTEGER NOT NULL, cpu_limit INTEGER,
    busy_core_ns REAL NOT NULL, memory_request INTEGER, restarts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, replica)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS timeline (
    run_id INTEGER NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL, time_ns INTEGER NOT NULL,
    source TEXT NOT NULL, operation TEXT NOT NULL, target TEXT NOT NULL, message TEXT NOT NULL, detail TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS documents (
    run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ignored (
    run_id INTEGER NOT NULL REFERENCES runs(id), time_ns INTEGER NOT NULL, kind TEXT NOT NULL,
    from_stock TEXT NOT NULL, to_stock TEXT NOT NULL, reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ignored_run ON ignored (run_id);
CREATE TABLE IF NOT EXISTS sweeps (
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
);
CREATE TABLE IF NOT EXISTS sweep_points (
    sweep_id INTEGER NOT NULL REFERENCES sweeps(id), point INTEGER NOT NULL, settings TEXT NOT NULL,
    PRIMARY KEY (sweep_id, point)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sweep_runs (
    sweep_id INTEGER NOT NULL REFERENCES sweeps(id), point INTEGER NOT NULL, seed INTEGER NOT NULL,
    run_id INTEGER, figures TEXT NOT NULL, error TEXT, wall_s REAL,
    PRIMARY KEY (sweep_id, point, seed)
) WITHOUT ROWID;
"""

RUN_FIELDS = {
    "run": "id",
    "name": "run_name",
    "tags": "tags",
    "scenario": "name",
    "scenario_file": "scenario_file",
    "seed": "seed",
    "phase": "phase",
    "message": "message",
    "digest": "digest",
    "simulated_ns": "simulated_ns",
    "wall_s": "wall_s",
    "started_at": "started_at",
    "finished_at": "finished_at",
    "version": "version",
    "host": "host",
    "pid": "pid",
    "summary": "summary",
    "sweep": "sweep_id",
}
"""A stored run as `runs` and `record` give it: each field and the column of `runs` it comes from.
`name` is the run's own (`run --name`), `scenario` its scenario's `metadata.name`, `sweep` the sweep
or study it was run by (None for a run of its own)."""

SWEEP_FIELDS = (
    "sweep",
    "kind",
    "name",
    "scenario",
    "scenario_file",
    "phase",
    "message",
    "started_at",
    "finished_at",
    "points",
    "runs",
    "failed",
    "options",
)
"""A stored sweep or study as `sweeps` gives it: `kind` is sweep or study, `points` and `runs` what it has
run so far, `failed` how many of those runs failed, `options` what it was asked (JSON data)."""

_POSITION = re.compile(r"latest|-?[0-9]+")
"""What a reference means by position, never by name or tag: a number, `latest`, or -N counting back."""
_LARGEST_ID = 2**63 - 1  # SQLite's INTEGER; a larger number is no run


class StoreError(SkenarioError):
    """A run the store does not have, or a store it cannot open."""


@dataclass(frozen=True)
class FinishedRun:
    """A run made elsewhere (on a sweep's worker, on FakeTime), kept whole at once: what `RunWriter` writes
    of a Simulation in this process, as plain data. `series` holds the recorder's rows, `lifecycles` its
    LIFECYCLE_COLUMNS records, `timeline` its entries (time_ns, source, operation, target, message, detail)."""

    name: str
    scenario_text: str
    seed: int
    phase: str
    message: str | None
    digest: str | None
    simulated_ns: int
    wall_s: float | None
    summary: dict[str, Any] = field(default_factory=dict)
    series: list[dict[str, Any]] = field(default_factory=list)
    lifecycles: list[tuple[Any, ...]] = field(default_factory=list)
    timeline: list[tuple[Any, ...]] = field(default_factory=list)
    documents: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, simulation: Simulation, wall_s: float | None) -> FinishedRun:
        """A finished Simulation's record: its summary, series, replicas' lifecycles and timeline (its other
        documents, the scheduling tables, stay with `RunWriter`'s runs: a sweep compares figures)."""
        summary = simulation.summary()
        return cls(
            name=simulation.scenario.metadata.name,
            scenario_text=simulation.scenario_text,
            seed=simulation.seed,
            phase=simulation.phase.value,
            message=simulation.message,
            digest=summary.digest,
            simulated_ns=simulation.env.now(),
            wall_s=wall_s,
            summary=summary.as_dict(),
            series=simulation.recorder.rows(0),
            lifecycles=simulation.recorder.lifecycles(),
            timeline=simulation.timeline.entries(),
        )


_RUN_TABLES = ("series", "replica_series", "replicas", "timeline", "ignored", "documents")
"""The tables holding a run's records by `run_id`, besides `runs` itself."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def check_label(text: str, option: str) -> str:
    """A run's name or tag as given, or a StoreError saying why it could never be referred to by it."""
    if _POSITION.fullmatch(text):
        reason = "a number or `latest` refers to runs by position, so it cannot be a name or tag"
    elif not text.strip():
        reason = "a name or tag cannot be empty"
    elif text != text.strip() or any(unicodedata.category(c) == "Cc" for c in text):
        reason = "a name or tag cannot have white space around it or control characters in it"
    else:
        return text
    raise StoreError(reason, field=option, value=text)


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
            connection.text_factory = _lenient_text
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

    def begin(
        self, simulation: Simulation, scenario_file: str | None, *, name: str | None = None, tags: Sequence[str] = ()
    ) -> RunWriter:
        """A new run, phase Running, with its own name and tags if given; its results follow through the writer."""
        with self._connect(create=True) as db, db:
            self._reap(db)
            cursor = db.execute(
                "INSERT INTO runs (name, scenario_file, scenario, seed, phase, started_at, version, host, pid, "
                "run_name, tags) VALUES (?, ?, ?, ?, 'Running', ?, ?, ?, ?, ?, ?)",
                (
                    simulation.scenario.metadata.name,
                    scenario_file,
                    simulation.scenario_text,
                    simulation.seed,
                    _now(),
                    __version__,
                    socket.gethostname(),
                    os.getpid(),
                    name,
                    json.dumps(list(dict.fromkeys(tags))),
                ),
            )
            run_id = cursor.lastrowid
        assert run_id is not None
        return RunWriter(self, run_id, simulation)

    def save(
        self,
        *,
        name: str,
        scenario_file: str | None,
        scenario_text: str,
        seed: int,
        phase: str,
        message: str | None,
        documents: dict[str, Any],
        digest: str,
        simulated_ns: int,
        wall_s: float | None,
        run_name: str | None = None,
        tags: Sequence[str] = (),
    ) -> int:
        """A finished run that no Simulation made (a KEP-140 Scenario on FakeTime), written whole at once:
        its row and its documents, with no series."""
        run = FinishedRun(
            name=name,
            scenario_text=scenario_text,
            seed=seed,
            phase=phase,
            message=message,
            digest=digest,
            simulated_ns=simulated_ns,
            wall_s=wall_s,
            documents=documents,
        )
        with self._connect(create=True) as db, db:
            self._reap(db)
            return self._insert(db, run, scenario_file, run_name=run_name, tags=tags)

    def _insert(
        self,
        db: sqlite3.Connection,
        run: FinishedRun,
        scenario_file: str | None,
        *,
        run_name: str | None = None,
        tags: Sequence[str] = (),
        sweep_id: int | None = None,
    ) -> int:
        """Write a finished run whole inside the caller's transaction; its id."""
        now = _now()
        cursor = db.execute(
            "INSERT INTO runs (name, scenario_file, scenario, seed, phase, message, digest, summary, simulated_ns, "
            "wall_s, started_at, finished_at, version, host, pid, run_name, tags, sweep_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.name,
                scenario_file,
                run.scenario_text,
                run.seed,
                run.phase,
                run.message,
                run.digest,
                json.dumps(run.summary),
                run.simulated_ns,
                run.wall_s,
                now,
                now,
                __version__,
                socket.gethostname(),
                os.getpid(),
                run_name,
                json.dumps(list(dict.fromkeys(tags))),
                sweep_id,
            ),
        )
        run_id = cursor.lastrowid
        assert run_id is not None
        db.executemany(
            "INSERT INTO series (run_id, time_ns, row) VALUES (?, ?, ?)",
            [(run_id, row["time_ns"], json.dumps(row)) for row in run.series],
        )
        db.executemany(
            f"INSERT INTO replicas (run_id, {', '.join(LIFECYCLE_COLUMNS)}) "
            f"VALUES ({', '.join('?' * (1 + len(LIFECYCLE_COLUMNS)))})",
            [(run_id, *record) for record in run.lifecycles],
        )
        db.executemany(
            "INSERT INTO timeline (run_id, seq, time_ns, source, operation, target, message, detail) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(run_id, seq, *entry[:5], json.dumps(entry[5])) for seq, entry in enumerate(run.timeline)],
        )
        db.executemany(
            "INSERT INTO documents (run_id, name, body) VALUES (?, ?, ?)",
            [(run_id, key, json.dumps(body)) for key, body in run.documents.items()],
        )
        return run_id

    # Sweeps and studies: a row in `sweeps`, its points' settings, and one `sweep_runs` row per run it
    # made (the run's figures, and its id in `runs` unless the run could not even start).

    def begin_sweep(
        self,
        *,
        kind: str,
        name: str | None,
        scenario_name: str,
        scenario_file: str | None,
        scenario_text: str,
        options: dict[str, Any],
    ) -> int:
        """A new sweep or study (`kind`), phase Running; its id."""
        with self._connect(create=True) as db, db:
            self._reap(db)
            cursor = db.execute(
                "INSERT INTO sweeps (kind, name, scenario_name, scenario_file, scenario, options, phase, started_at, "
                "host, pid) VALUES (?, ?, ?, ?, ?, ?, 'Running', ?, ?, ?)",
                (
                    kind,
                    name,
                    scenario_name,
                    scenario_file,
                    scenario_text,
                    json.dumps(options),
                    _now(),
                    socket.gethostname(),
                    os.getpid(),
                ),
            )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def reopen_sweep(self, sweep_id: int) -> None:
        """A stopped study taken up again: Running, by this process."""
        with self._connect() as db, db:
            db.execute(
                "UPDATE sweeps SET phase = 'Running', message = NULL, finished_at = NULL, host = ?, pid = ? "
                "WHERE id = ?",
                (socket.gethostname(), os.getpid(), sweep_id),
            )

    def study(self, name: str) -> int | None:
        """The id of the study of this name, if the store has one."""
        if not self.exists():
            return None
        with self._connect() as db:
            row = db.execute(
                "SELECT id FROM sweeps WHERE kind = 'study' AND name = ? ORDER BY id DESC LIMIT 1", (name,)
            ).fetchone()
        return None if row is None else int(row[0])

    def add_points(self, sweep_id: int, points: dict[int, dict[str, Any]]) -> None:
        """Each point's settings, `{path: value}`, by its number."""
        with self._connect() as db, db:
            db.executemany(
                "INSERT OR REPLACE INTO sweep_points (sweep_id, point, settings) VALUES (?, ?, ?)",
                [(sweep_id, point, json.dumps(settings)) for point, settings in points.items()],
            )

    def save_sweep_run(
        self,
        sweep_id: int,
        *,
        point: int,
        seed: int,
        figures: dict[str, Any],
        error: str | None,
        wall_s: float | None,
        run: FinishedRun | None,
        scenario_file: str | None,
    ) -> int | None:
        """One run a sweep made, with its figures, in one transaction; the run's id (None: no run to keep)."""
        with self._connect() as db, db:
            run_id = None if run is None else self._insert(db, run, scenario_file, sweep_id=sweep_id)
            db.execute(
                "INSERT OR REPLACE INTO sweep_runs (sweep_id, point, seed, run_id, figures, error, wall_s) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (sweep_id, point, seed, run_id, json.dumps(figures), error, wall_s),
            )
        return run_id

    def remove_points(self, sweep_id: int, points: Sequence[int]) -> None:
        """Forget these points of a sweep: their settings, their figures and the runs they made (a study's
        trials cut short by a stop, proposed again under new numbers)."""
        with self._connect() as db:
            marks = ", ".join("?" * len(points))
            runs = db.execute(
                f"SELECT run_id FROM sweep_runs WHERE sweep_id = ? AND point IN ({marks}) AND run_id IS NOT NULL",
                (sweep_id, *points),
            ).fetchall()
        if runs:
            self.remove([int(run_id) for (run_id,) in runs])
        with self._connect() as db, db:
            for table in ("sweep_runs", "sweep_points"):
                db.execute(f"DELETE FROM {table} WHERE sweep_id = ? AND point IN ({marks})", (sweep_id, *points))

    def running(self, sweep_id: int) -> str | None:
        """Who runs this sweep now (`process N on HOST`), if a live process does; None if none does."""
        with self._connect() as db, db:
            self._reap(db)
            phase, host, pid = db.execute("SELECT phase, host, pid FROM sweeps WHERE id = ?", (sweep_id,)).fetchone()
        return f"process {pid} on {host}" if phase == "Running" else None

    def finish_sweep(self, sweep_id: int, phase: str, message: str | None = None) -> None:
        """The sweep's end: Completed, Interrupted (Ctrl-C: what finished is kept) or Failed."""
        with self._connect() as db, db:
            db.execute(
                "UPDATE sweeps SET phase = ?, message = ?, finished_at = ? WHERE id = ?",
                (phase, message, _now(), sweep_id),
            )

    def sweeps(self, *, kind: str | None = None, last: int | None = None) -> list[dict[str, Any]]:
        """The sweeps and studies (SWEEP_FIELDS), oldest first; only `kind`'s, only the newest `last`, if given."""
        if not self.exists():
            return []
        with self._connect() as db, db:
            self._reap(db)
            rows = db.execute(
                "SELECT s.id, s.kind, s.name, s.scenario_name, s.scenario_file, s.phase, s.message, s.started_at, "
                "s.finished_at, (SELECT COUNT(*) FROM sweep_points p WHERE p.sweep_id = s.id), "
                "(SELECT COUNT(*) FROM sweep_runs r WHERE r.sweep_id = s.id), "
                "(SELECT COUNT(*) FROM sweep_runs r WHERE r.sweep_id = s.id AND r.error IS NOT NULL), s.options "
                "FROM sweeps s WHERE ? IS NULL OR s.kind = ? ORDER BY s.id",
                (kind, kind),
            ).fetchall()
        found = [dict(zip(SWEEP_FIELDS, row[:-1], strict=False)) | {"options": _json(row[-1])} for row in rows]
        return found[-last:] if last is not None else found

    def resolve_sweep(self, sweep: str | int) -> int:
        """A sweep's id from what a user typed: its number, `latest` or -N counting back, or its name."""
        text = str(sweep).strip()
        with self._connect() as db:
            if _POSITION.fullmatch(text):
                found = _by_position(db, "sweeps", text)
            else:
                row = db.execute("SELECT id FROM sweeps WHERE name = ? ORDER BY id DESC LIMIT 1", (text,)).fetchone()
                found = None if row is None else int(row[0])
        if found is None:
            raise StoreError("no such sweep (see `skenario sweeps`)", value=text, file=str(self.path))
        return found

    def sweep_record(self, sweep: str | int) -> dict[str, Any]:
        """One sweep: its SWEEP_FIELDS, `scenario_text`, `settings` (point -> `{path: value}`) and `runs_done`
        (one dict per run: point, seed, run, figures, error, wall_s, in point and seed order)."""
        sweep_id = self.resolve_sweep(sweep)
        record = next(s for s in self.sweeps() if s["sweep"] == sweep_id)
        with self._connect() as db:
            (text,) = db.execute("SELECT scenario FROM sweeps WHERE id = ?", (sweep_id,)).fetchone()
            settings = db.execute(
                "SELECT point, settings FROM sweep_points WHERE sweep_id = ? ORDER BY point", (sweep_id,)
            ).fetchall()
            done = db.execute(
                "SELECT point, seed, run_id, figures, error, wall_s FROM sweep_runs WHERE sweep_id = ? "
                "ORDER BY point, seed",
                (sweep_id,),
            ).fetchall()
        return record | {
            "scenario_text": text,
            "settings": {int(point): _json(values) for point, values in settings},
            "runs_done": [
                {"point": p, "seed": s, "run": r, "figures": _json(f), "error": e, "wall_s": w}
                for p, s, r, f, e, w in done
            ],
        }

    def remove_sweep(self, sweep: str | int) -> tuple[int, list[int]]:
        """Delete a sweep (as `resolve_sweep` takes it), its points and its runs; its id and its runs' ids."""
        sweep_id = self.resolve_sweep(sweep)
        with self._connect() as db, db:
            self._reap(db)  # a sweep whose process was killed is no longer running
            (phase,) = db.execute("SELECT phase FROM sweeps WHERE id = ?", (sweep_id,)).fetchone()
            if phase == "Running":
                raise StoreError("sweep is still running; stop it first", value=sweep_id, file=str(self.path))
            run_ids = [int(r) for (r,) in db.execute("SELECT id FROM runs WHERE sweep_id = ?", (sweep_id,))]
        if run_ids:
            self.remove(list(run_ids))
        with self._connect() as db, db:
            for table in ("sweep_runs", "sweep_points"):
                db.execute(f"DELETE FROM {table} WHERE sweep_id = ?", (sweep_id,))
            db.execute("DELETE FROM sweeps WHERE id = ?", (sweep_id,))
        return sweep_id, run_ids

    def _reap(self, db: sqlite3.Connection) -> None:
        """Mark Failed the runs (Interrupted the sweeps) of this host whose process ended while they said Running."""
        sweeps = db.execute("SELECT id, pid FROM sweeps WHERE phase = 'Running' AND host = ?", (socket.gethostname(),))
        for sweep_id, pid in sweeps.fetchall():
            if not _alive(pid):
                db.execute(
                    "UPDATE sweeps SET phase = 'Interrupted', message = ?, finished_at = ? WHERE id = ?",
                    ("its process ended before the sweep did (killed?)", _now(), sweep_id),
                )
        rows = db.execute("SELECT id, pid FROM runs WHERE phase = 'Running' AND host = ?", (socket.gethostname(),))
        for run_id, pid in rows.fetchall():
            if not _alive(pid):
                db.execute(
                    "UPDATE runs SET phase = 'Failed', message = ?, finished_at = ? WHERE id = ?",
                    ("its process ended before the run did (killed?)", _now(), run_id),
                )

    def runs(
        self,
        *,
        name: str | None = None,
        tag: str | None = None,
        phase: str | None = None,
        sweep: int | None = None,
        last: int | None = None,
    ) -> list[dict[str, Any]]:
        """The runs with this name, tag, phase and sweep (each if given), oldest first; only the newest `last`
        of them if given; none where no store is. Each run has RUN_FIELDS, whatever its row holds."""
        if not self.exists():
            return []
        where: list[str] = ["1"]
        params: list[Any] = []
        for column, value in (("run_name", name), ("phase", phase), ("sweep_id", sweep)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        with self._connect() as db, db:
            self._reap(db)
            rows = db.execute(
                f"SELECT {', '.join(RUN_FIELDS.values())} FROM runs WHERE {' AND '.join(where)} ORDER BY id", params
            ).fetchall()
        found = [_record(row) for row in rows]
        if tag is not None:
            found = [run for run in found if tag in run["tags"]]
        return found[-last:] if last is not None else found

    def record(self, run: str | int) -> dict[str, Any]:
        """One run's row (RUN_FIELDS), with its scenario file's text as `scenario_text`."""
        run_id = self.resolve(run)
        with self._connect() as db, db:
            self._reap(db)
            row = db.execute(f"SELECT {', '.join(RUN_FIELDS.values())}, scenario FROM runs WHERE id = ?", (run_id,))
            *fields, scenario = row.fetchone()
        return _record(tuple(fields)) | {"scenario_text": scenario}

    def resolve(self, run: str | int) -> int:
        """A run id from what a user typed: its number; `latest` (or -1, -2, ... counting back); else its
        name (the newest run of that name), else one of its tags (the newest run carrying it)."""
        text = str(run).strip()
        with self._connect() as db:
            if _POSITION.fullmatch(text):
                found = _by_position(db, "runs", text)
                if found is not None:
                    return found
                if text.isdigit():
                    raise StoreError("no such run (see `skenario runs`)", value=text, file=str(self.path))
                back = 1 if text == "latest" else -int(text)
                reason = "the store has fewer runs" if back >= 1 else "-1 is the newest run, -2 the one before"
                raise StoreError(f"no such run: {reason}", value=text, file=str(self.path))
            row = db.execute("SELECT id FROM runs WHERE run_name = ? ORDER BY id DESC LIMIT 1", (text,)).fetchone()
            if row is not None:
                return int(row[0])
            # A cheap first sieve in SQL (the tag as JSON writes it), then the tags read for certain.
            candidates = db.execute(
                "SELECT id, tags FROM runs WHERE instr(tags, ?) > 0 ORDER BY id DESC", (json.dumps(text),)
            )
            for run_id, tags in candidates:
                if text in _tags(tags):
                    return int(run_id)
        raise StoreError(
            f"no such run: none is numbered, named or tagged {text!r} (see `skenario runs`)", file=str(self.path)
        )

    def remove(self, runs: list[str | int]) -> list[int]:
        """Delete these runs (as `resolve` takes them) and all they recorded; their ids. A Running one is refused."""
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
                db.execute("UPDATE sweep_runs SET run_id = NULL WHERE run_id = ?", (run_id,))  # its figures stay
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
            documents = db.execute("SELECT name, body FROM documents WHERE run_id = ?", (run_id,)).fetchall()
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
            documents={key: json.loads(body) for key, body in documents},
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


_ADDED_COLUMNS = {
    "runs": {"run_name": "TEXT", "tags": "TEXT", "sweep_id": "INTEGER"},
    "replicas": {"memory_request": "INTEGER", "restarts": "INTEGER NOT NULL DEFAULT 0", "bound_ns": "INTEGER"},
}
"""Columns added to tables since the first store: a store made before them gains them when opened."""


def _add_missing_columns(connection: sqlite3.Connection) -> None:
    for table, columns in _ADDED_COLUMNS.items():
        present = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        for name, kind in columns.items():
            if name not in present:
                connection.execute(f"ALTER TABLE {table} ADD COLUMN {name} {kind}")


def _lenient_text(raw: bytes) -> str:
    """Text as SQLite holds it, read even where it is not UTF-8 (another tool wrote the row)."""
    return raw.decode("utf-8", "replace")


def _record(row: tuple[Any, ...]) -> dict[str, Any]:
    """A `runs` row (RUN_FIELDS' columns, in order) as its fields, tags and summary decoded when they can be."""
    run = dict(zip(RUN_FIELDS, row, strict=True))
    run["tags"] = _tags(run["tags"])
    if isinstance(run["summary"], str | bytes):
        with suppress(ValueError):  # else kept as the text it is
            run["summary"] = json.loads(run["summary"])
    return run


def _by_position(db: sqlite3.Connection, table: str, text: str) -> int | None:
    """The id of `table`'s row that `text` names by position (`_POSITION`): its number, or `latest` and -N
    counting back from the newest; None if there is no such row."""
    if text.isdigit():
        number = int(text)
        query, value = f"SELECT id FROM {table} WHERE id = ?", number
    else:
        back = 1 if text == "latest" else -int(text)
        query, value = f"SELECT id FROM {table} ORDER BY id DESC LIMIT 1 OFFSET ?", back - 1
        number = back
    if not 1 <= number <= _LARGEST_ID:
        return None
    row = db.execute(query, (value,)).fetchone()
    return None if row is None else int(row[0])


def _json(stored: Any) -> Any:
    """A JSON column as data; None for what is not JSON (another tool wrote the row)."""
    try:
        return json.loads(stored) if isinstance(stored, str | bytes) else None
    except ValueError:
        return None


def _tags(stored: Any) -> list[str]:
    """The tags of a run as written by `begin` (a JSON list); none for anything else."""
    try:
        tags = json.loads(stored) if isinstance(stored, str | bytes) else None
    except ValueError:
        return []
    return [tag for tag in tags if isinstance(tag, str)] if isinstance(tags, list) else []


def _series_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The recorder's frame again: its columns in order, then its gauges (the cluster's, the autoscalers'
    bound), failure reasons last, missing counts as 0."""
    import pandas as pd

    reasons = sorted({key for row in rows for key in row if key.startswith("failed_")})
    known = {*COLUMNS, *reasons}
    gauges = list(dict.fromkeys(key for row in rows for key in row if key not in known))
    frame = pd.DataFrame(rows, columns=[*COLUMNS, *gauges, *reasons])
    if reasons:
        frame[reasons] = frame[reasons].fillna(0).astype("int64")
    frame.index = pd.Index(frame["time_ns"] / SECOND, name="time_s")
    return frame


def _alive(pid: Any) -> bool:
    """Whether process `pid` of this host is still there; a pid no process can have (0, -1, text) is not."""
    if not isinstance(pid, int) or not 0 < pid <= 2**31:
        return False
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
            db.executemany(
                "INSERT OR REPLACE INTO documents (run_id, name, body) VALUES (?, ?, ?)",
                [(self.run_id, key, json.dumps(body)) for key, body in simulation.documents().items()],
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
