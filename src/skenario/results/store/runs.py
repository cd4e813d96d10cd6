"""Runs read back from the store: listed, filtered, found by reference, loaded whole, removed."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from skenario.core.time import SECOND
from skenario.recording.recorder import COLUMNS, LIFECYCLE_COLUMNS, REPLICA_COLUMNS
from skenario.results.rundata import RunData, replica_frame, timeline_frame
from skenario.results.store import reserve
from skenario.results.store.base import StoreBase, StoreError, StoreFull
from skenario.results.store.references import check_label, resolve_run, tags_of

if TYPE_CHECKING:
    import pandas as pd

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

INTEGRITY_LINES = 100
"""At most this many of SQLite's own findings (`PRAGMA integrity_check`): past them the file is lost anyway."""

_JSON_COLUMNS: tuple[tuple[str, str, type], ...] = (
    ("runs", "SELECT id, 'summary', summary FROM runs WHERE summary IS NOT NULL ORDER BY id", dict),
    (
        "series",
        "SELECT run_id, 'series row ' || (ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY time_ns) - 1), row "
        "FROM series ORDER BY run_id, time_ns",
        dict,
    ),
    ("timeline", "SELECT run_id, 'timeline entry ' || seq, detail FROM timeline ORDER BY run_id, seq", dict),
    ("documents", "SELECT run_id, 'document ' || quote(name), body FROM documents ORDER BY run_id, name", object),
)
"""Each table with JSON text in it: its rows as (run, what the row is, the text), and the JSON shape written."""

_RUN_TABLES = ("series", "replica_series", "replicas", "timeline", "ignored", "documents")
"""The tables holding a run's records by `run_id`, besides `runs` itself."""


class Runs(StoreBase):
    """The store's runs, as a reader and a user managing them see them."""

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
        """A run id from what a user typed (`references.resolve_run`)."""
        with self._connect() as db:
            return resolve_run(db, run, str(self.path))

    def remove(self, runs: list[str | int]) -> list[int]:
        """Delete these runs (as `resolve` takes them) and all they recorded; their ids. A Running one is refused.

        On a full disk the store's reserve is given back, and the runs are deleted one at a time, the
        log copied into the file after each, so SQLite needs room for one run's deletion at a time."""
        ids = [self.resolve(run) for run in runs]
        with self._connect() as db, db:
            self._reap(db)
            for run_id in ids:
                (phase,) = db.execute("SELECT phase FROM runs WHERE id = ?", (run_id,)).fetchone()
                if phase == "Running":
                    raise StoreError("run is still running; stop it first", value=run_id, file=str(self.path))
        try:
            self._delete(ids)
        except StoreFull:
            if not reserve.release(self.path):
                raise
            for run_id in ids:
                self._delete([run_id], checkpoint=True)
        return ids

    def set_tags(self, run: str | int, tags: Sequence[str]) -> list[str]:
        """Replace a run's tags with `tags` (each one a label `check_label` accepts, duplicates dropped); the
        tags now kept."""
        kept = list(dict.fromkeys(check_label(tag, "tags") for tag in tags))
        run_id = self.resolve(run)
        with self._connect() as db, db:
            db.execute("UPDATE runs SET tags = ? WHERE id = ?", (json.dumps(kept), run_id))
        return kept

    def keep_document(self, run: str | int, name: str, body: Any) -> None:
        """Add a named JSON document to a finished run, or replace it: what was found of the run afterwards (a
        replay's comparison with its observed cluster)."""
        run_id = self.resolve(run)
        with self._connect() as db, db:
            db.execute(
                "INSERT OR REPLACE INTO documents (run_id, name, body) VALUES (?, ?, ?)",
                (run_id, name, json.dumps(body, allow_nan=False)),
            )

    def _delete(self, ids: list[int], *, checkpoint: bool = False) -> None:
        with self._connect() as db:
            if checkpoint:  # the log copied into the file, so the deletion's pages reuse it from its start
                db.execute("PRAGMA wal_checkpoint(RESTART)")
            with db:
                for run_id in ids:
                    for table in _RUN_TABLES:
                        db.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
                    db.execute("UPDATE sweep_runs SET run_id = NULL WHERE run_id = ?", (run_id,))  # its figures stay
                    db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def keep_newest(self, keep: int) -> list[int]:
        """Delete all but the newest `keep` finished runs; the ids deleted."""
        if not self.exists():
            return []
        with self._connect() as db:
            rows = db.execute("SELECT id FROM runs WHERE phase != 'Running' ORDER BY id DESC").fetchall()
        old = [int(run_id) for (run_id,) in rows[keep:]]
        return self.remove(list(old)) if old else []

    def compact(self) -> tuple[int, int]:
        """Give the disk back the space of what was deleted (SQLite's VACUUM, its log emptied); the bytes the
        store took before and after. Raises `StoreFull` when the disk has no room for VACUUM's copy: the
        space then stays in the file, where the next runs reuse it."""
        before = self.footprint()
        with self._connect() as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.execute("VACUUM")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        reserve.keep(self.path)
        return before, self.footprint()

    def footprint(self) -> int:
        """The bytes the store's file and its log take on disk (the reserve not counted)."""
        return sum(
            path.stat().st_size for path in (self.path, self.path.with_name(self.path.name + "-wal")) if path.exists()
        )

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
        damaged: list[str] = []
        series = [_decoded(text, dict, f"series row {i}", damaged) for i, (text,) in enumerate(series_rows)]
        details = [_decoded(row[5], dict, f"timeline entry {i}", damaged) or {} for i, row in enumerate(timeline)]
        decoded_documents = {key: _decoded(body, object, f"document {key!r}", damaged) for key, body in documents}
        return RunData(
            id=run_id,
            name=name,
            seed=seed,
            phase=phase,
            message=message,
            digest=digest,
            simulated_ns=simulated_ns,
            summary=(_decoded(summary, dict, "summary", damaged) or {}) if summary else {},
            series=_series_frame([row for row in series if row is not None]),
            replica_series=replica_frame(
                {name: [row[i] for row in replica_rows] for i, name in enumerate(REPLICA_COLUMNS)}
            ),
            replicas=pd.DataFrame(lifecycles, columns=list(LIFECYCLE_COLUMNS)),
            timeline=timeline_frame([(*row[:5], detail) for row, detail in zip(timeline, details, strict=True)]),
            scenario=scenario,
            documents={key: body for key, body in decoded_documents.items() if body is not None},
            damaged=damaged,
        )

    def check(self) -> list[str]:
        """What is wrong with the store, one line each, empty when nothing is: SQLite's own integrity check
        (pages, indexes), then every row whose JSON cannot be read back, by run."""
        if not self.exists():
            return []
        damaged: list[str] = []
        with self._connect() as db:
            for (found,) in db.execute(f"PRAGMA integrity_check({INTEGRITY_LINES})"):
                damaged += [f"SQLite: {line}" for line in str(found).splitlines() if line not in ("ok", "")]
            for table, query, shape in _JSON_COLUMNS:
                try:
                    for run_id, what, text in db.execute(query):
                        _decoded(text, shape, f"run {run_id}: {what}", damaged)
                except sqlite3.DatabaseError as exc:  # pages too damaged to read on
                    damaged.append(f"table {table}: cannot be read on ({exc})")
        return damaged

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


def _decoded(text: Any, shape: type, what: str, damaged: list[str]) -> Any:
    """A JSON column as data of `shape`; None, with a line in `damaged`, where it is not (another tool wrote
    the row, or the file was damaged)."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError) as exc:
        damaged.append(f"{what}: not JSON ({exc})")
        return None
    if not isinstance(value, shape):
        damaged.append(f"{what}: not a JSON {'object' if shape is dict else shape.__name__}")
        return None
    return value


def _record(row: tuple[Any, ...]) -> dict[str, Any]:
    """A `runs` row (RUN_FIELDS' columns, in order) as its fields, tags and summary decoded when they can be."""
    run = dict(zip(RUN_FIELDS, row, strict=True))
    run["tags"] = tags_of(run["tags"])
    if isinstance(run["summary"], str | bytes):
        with suppress(ValueError):  # else kept as the text it is
            run["summary"] = json.loads(run["summary"])
    return run


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
