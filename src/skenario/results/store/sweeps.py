"""Sweeps and studies in the store: a row in `sweeps`, its points' settings, and one `sweep_runs` row per
run it made (the run's figures, and its id in `runs` unless the run could not even start)."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from skenario.results.store.base import StoreError, json_or_none, now
from skenario.results.store.references import resolve_sweep
from skenario.results.store.runs import Runs
from skenario.results.store.writer import FinishedRun, RunWriter

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


class StudyTaken(StoreError):
    """A study name another live process is tuning, or that was begun with other options."""


class Sweeps(Runs):
    """The store's sweeps and studies, and the runs they made (removed with them)."""

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
            return _insert_sweep(db, kind, name, scenario_name, scenario_file, scenario_text, options)

    def claim_study(
        self,
        name: str,
        *,
        scenario_name: str,
        scenario_file: str | None,
        scenario_text: str,
        options: dict[str, Any],
        same: Callable[[dict[str, Any]], bool],
    ) -> tuple[int, dict[str, Any]]:
        """The study `name`, Running by this process, and the options it began with: begun with `options` if
        the store has none of this name, else taken up again if `same(its options)`. One process at a time: in
        one write transaction, so two processes asking for one name at once cannot both have it; a study a live
        process runs is refused, naming the process."""
        with self._connect(create=True) as db:
            db.execute("BEGIN IMMEDIATE")
            with db:
                self._reap(db)
                row = db.execute(
                    "SELECT id, phase, host, pid, options FROM sweeps WHERE kind = 'study' AND name = ? "
                    "ORDER BY id DESC LIMIT 1",
                    (name,),
                ).fetchone()
                if row is None:
                    begun = _insert_sweep(db, "study", name, scenario_name, scenario_file, scenario_text, options)
                    return begun, options
                sweep_id, phase, host, pid, kept_text = row
                if phase == "Running":
                    raise StudyTaken(f"the study is running now (process {pid} on {host}); wait for it or stop it")
                kept = json_or_none(kept_text) or {}
                if not same(kept):
                    raise StudyTaken(
                        "the store has a study of this name asked differently (another scenario, space, objectives, "
                        "constraints, seeds, batch or prices); give another --study name, or ask the same"
                    )
                db.execute(
                    "UPDATE sweeps SET phase = 'Running', message = NULL, finished_at = NULL, host = ?, pid = ? "
                    "WHERE id = ?",
                    (socket.gethostname(), os.getpid(), sweep_id),
                )
                return int(sweep_id), kept

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
            run_id = None if run is None else RunWriter.whole(db, run, run.wall_s, scenario_file, sweep_id=sweep_id)
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
                (phase, message, now(), sweep_id),
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
        found = [dict(zip(SWEEP_FIELDS, row[:-1], strict=False)) | {"options": json_or_none(row[-1])} for row in rows]
        return found[-last:] if last is not None else found

    def resolve_sweep(self, sweep: str | int) -> int:
        """A sweep's id from what a user typed (`references.resolve_sweep`)."""
        with self._connect() as db:
            return resolve_sweep(db, sweep, str(self.path))

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
            "settings": {int(point): json_or_none(values) for point, values in settings},
            "runs_done": [
                {"point": p, "seed": s, "run": r, "figures": json_or_none(f), "error": e, "wall_s": w}
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


def _insert_sweep(
    db: sqlite3.Connection,
    kind: str,
    name: str | None,
    scenario_name: str,
    scenario_file: str | None,
    scenario_text: str,
    options: dict[str, Any],
) -> int:
    """A sweep's or a study's row, Running by this process; its id."""
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
            now(),
            socket.gethostname(),
            os.getpid(),
        ),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid
