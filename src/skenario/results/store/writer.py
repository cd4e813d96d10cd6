"""The one way a run gets into the store: `RunWriter`, reading a `RunOutput`.

A run under way (`RunStore.begin`) is written in batches: its row first, phase Running, then one
transaction per `flush` with what it made since the last, then `finish` with the rest, its
lifecycles, documents, phase and summary. A run made elsewhere (a sweep's worker, a KEP-140
Scenario on FakeTime: `RunStore.keep`, `RunStore.save_sweep_run`) goes through the same three
steps inside one transaction (`RunWriter.whole`), so it is never seen Running.

The writer knows nothing of what made the run: anything with the members of `RunOutput` will do.
`Simulation` has them; `FinishedRun` is one as plain data, as a worker sends it back.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any, Protocol

from skenario.recording.recorder import LIFECYCLE_COLUMNS, REPLICA_COLUMNS
from skenario.results.store import reserve
from skenario.results.store.base import StoreBase, StoreError, full, now
from skenario.version import __version__


class RunOutput(Protocol):
    """What a run produces that the store keeps. The `start` of the growing records is how many of them
    were written already: a run under way is read again at each flush for what it made since."""

    @property
    def scenario_name(self) -> str:
        """The scenario's `metadata.name`."""
        ...

    @property
    def scenario_text(self) -> str:
        """The scenario file as written."""
        ...

    @property
    def seed(self) -> int: ...

    @property
    def phase(self) -> str:
        """Pending, Running, Paused, Completed or Failed."""
        ...

    @property
    def message(self) -> str | None:
        """Why the run is in its phase."""
        ...

    @property
    def simulated_ns(self) -> int:
        """How far the run has gone in simulated time."""
        ...

    def summary_record(self) -> tuple[str | None, dict[str, Any]]:
        """The run's digest and its summary as JSON data."""
        ...

    def series_rows(self, start: int) -> Sequence[dict[str, Any]]:
        """The recorder's rows from row `start` on (`time_ns`, then its columns by name)."""
        ...

    def replica_rows(self, start: int) -> Sequence[tuple[Any, ...]]:
        """Each replica's samples from sample `start` on, as REPLICA_COLUMNS tuples."""
        ...

    def timeline_since(self, start: int) -> Sequence[tuple[Any, ...]]:
        """The timeline's entries from entry `start` on: (time_ns, source, operation, target, message, detail)."""
        ...

    def lifecycle_rows(self) -> Sequence[tuple[Any, ...]]:
        """Every replica's lifecycle, as LIFECYCLE_COLUMNS tuples."""
        ...

    def stored(self, series: int, replica_rows: int, timeline: int) -> None:
        """The store holds the first rows, samples and entries up to these counts: the run may let them go."""
        ...

    def ignored_movements(self) -> Sequence[tuple[int, str, str, str, str]]:
        """The movements the run ignored: (time_ns, kind, from stock, to stock, reason)."""
        ...

    def documents(self) -> dict[str, Any]:
        """Results beyond the series (the latency histogram, scheduling tables, KEP-140's results), as JSON
        data by name; read at the run's end."""
        ...


@dataclass(frozen=True)
class FinishedRun:
    """A run made elsewhere (on a sweep's worker, on FakeTime), kept whole at once, as plain data: a
    RunOutput. `series` holds the recorder's rows, `lifecycles` its LIFECYCLE_COLUMNS records,
    `timeline` its entries (time_ns, source, operation, target, message, detail)."""

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
    named_documents: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, run: RunOutput, wall_s: float | None) -> FinishedRun:
        """A finished run's record: its summary, series, replicas' lifecycles and timeline (its other
        documents, the scheduling tables, stay with the runs written as they go: a sweep compares figures)."""
        digest, summary = run.summary_record()
        return cls(
            name=run.scenario_name,
            scenario_text=run.scenario_text,
            seed=run.seed,
            phase=str(run.phase),
            message=run.message,
            digest=digest,
            simulated_ns=run.simulated_ns,
            wall_s=wall_s,
            summary=summary,
            series=list(run.series_rows(0)),
            lifecycles=list(run.lifecycle_rows()),
            timeline=list(run.timeline_since(0)),
        )

    @property
    def scenario_name(self) -> str:
        return self.name

    def summary_record(self) -> tuple[str | None, dict[str, Any]]:
        return self.digest, self.summary

    def series_rows(self, start: int) -> list[dict[str, Any]]:
        return self.series[start:]

    def replica_rows(self, start: int) -> list[tuple[Any, ...]]:
        return []  # a worker sends back no per-replica samples: a sweep compares figures

    def timeline_since(self, start: int) -> list[tuple[Any, ...]]:
        return self.timeline[start:]

    def lifecycle_rows(self) -> list[tuple[Any, ...]]:
        return self.lifecycles

    def stored(self, series: int, replica_rows: int, timeline: int) -> None:
        return None  # kept whole, at once

    def ignored_movements(self) -> list[tuple[int, str, str, str, str]]:
        return []

    def documents(self) -> dict[str, Any]:
        return self.named_documents


_SERIES = "INSERT INTO series (run_id, time_ns, row) VALUES (?, ?, ?)"
_REPLICA_SERIES = f"INSERT INTO replica_series (run_id, {', '.join(REPLICA_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)"
_TIMELINE = (
    "INSERT INTO timeline (run_id, seq, time_ns, source, operation, target, message, detail) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_REPLICAS = (
    f"INSERT OR REPLACE INTO replicas (run_id, {', '.join(LIFECYCLE_COLUMNS)}) "
    f"VALUES ({', '.join('?' * (1 + len(LIFECYCLE_COLUMNS)))})"
)
_IGNORED = "INSERT INTO ignored (run_id, time_ns, kind, from_stock, to_stock, reason) VALUES (?, ?, ?, ?, ?, ?)"
_DOCUMENTS = "INSERT OR REPLACE INTO documents (run_id, name, body) VALUES (?, ?, ?)"


class RunWriter:
    """Writes one run's results in batches: `flush` after each stretch of the run, `finish` at its end.

    It keeps one connection for the whole run: opening one per batch made SQLite checkpoint and
    recreate its write-ahead log every time, most of what writing cost. With `release`, the run hears
    what each committed batch holds (`RunOutput.stored`), so it may let that history go.
    """

    def __init__(
        self,
        store: StoreBase,
        run_id: int,
        run: RunOutput,
        db: sqlite3.Connection | None = None,
        *,
        release: bool = False,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self._run = run
        self._db = store.open() if db is None else db
        self._release = release
        self._series = 0
        self._replica_rows = 0
        self._timeline = 0

    @classmethod
    def start(
        cls,
        store: StoreBase,
        run: RunOutput,
        scenario_file: str | None,
        *,
        name: str | None = None,
        tags: Sequence[str] = (),
        release: bool = False,
    ) -> RunWriter:
        """A new run's row, phase Running, committed; the writer its results go through."""
        db = store.open()
        try:
            with store.failures(), db:
                store._reap(db)
                run_id = _insert_row(db, run, scenario_file, name, tags, None, now())
        except BaseException:
            db.close()
            raise
        return cls(store, run_id, run, db, release=release)

    @staticmethod
    def whole(
        db: sqlite3.Connection,
        run: RunOutput,
        wall_s: float | None,
        scenario_file: str | None,
        *,
        name: str | None = None,
        tags: Sequence[str] = (),
        sweep_id: int | None = None,
    ) -> int:
        """A finished run written whole inside the caller's transaction, as `start`, `flush` and `finish`
        would write it, started and finished at the same second; its id."""
        stamp = now()
        run_id = _insert_row(db, run, scenario_file, name, tags, sweep_id, stamp)
        _write_batch(db, run_id, run, 0, 0, 0)
        _write_end(db, run_id, run, wall_s, stamp)
        return run_id

    def flush(self) -> None:
        """Write what the run made since the last flush, in one transaction."""
        with self.store.failures(), self._db as db:
            written = _write_batch(db, self.run_id, self._run, self._series, self._replica_rows, self._timeline)
        self._series, self._replica_rows, self._timeline = written  # only once committed
        if self._release:
            self._run.stored(*written)

    def finish(self, wall_s: float | None = None, *, patience: float | None = None) -> None:
        """The last batch, the replicas' lifecycles, the ignored movements and the run's phase and summary;
        `patience`: seconds to wait for another process's lock, if not the store's."""
        if patience is not None:
            self._db.patience = patience  # type: ignore[attr-defined]
        with closing(self._db), self.store.failures(), self._db as db:
            _write_batch(db, self.run_id, self._run, self._series, self._replica_rows, self._timeline)
            _write_end(db, self.run_id, self._run, wall_s, now())

    def fail(self, message: str, patience: float = 1.0) -> bool:
        """After the store failed mid-run: mark the run Failed with `message` if the store takes it within
        `patience` seconds (else the next process to open the store finds its process gone and does);
        whether it did. The connection is closed either way."""
        self._db.patience = patience  # type: ignore[attr-defined]
        with closing(self._db):
            for attempt in range(2):
                try:
                    with self._db as db:
                        db.execute(
                            "UPDATE runs SET phase = 'Failed', message = ?, finished_at = ? WHERE id = ?",
                            (message, now(), self.run_id),
                        )
                    return True
                except (sqlite3.Error, StoreError) as exc:
                    # A full disk: the store's reserve gives the room to say so, once.
                    if attempt or not full(exc) or not reserve.release(self.store.path):
                        return False
        return False


def _insert_row(
    db: sqlite3.Connection,
    run: RunOutput,
    scenario_file: str | None,
    name: str | None,
    tags: Sequence[str],
    sweep_id: int | None,
    started_at: str,
) -> int:
    """The run's row in `runs`, phase Running, by this process; its id."""
    cursor = db.execute(
        "INSERT INTO runs (name, scenario_file, scenario, seed, phase, started_at, version, host, pid, "
        "run_name, tags, sweep_id) VALUES (?, ?, ?, ?, 'Running', ?, ?, ?, ?, ?, ?, ?)",
        (
            run.scenario_name,
            scenario_file,
            run.scenario_text,
            run.seed,
            started_at,
            __version__,
            socket.gethostname(),
            os.getpid(),
            name,
            json.dumps(list(dict.fromkeys(tags))),
            sweep_id,
        ),
    )
    run_id = cursor.lastrowid
    assert run_id is not None
    return run_id


def _write_batch(
    db: sqlite3.Connection, run_id: int, run: RunOutput, series: int, replica_rows: int, timeline: int
) -> tuple[int, int, int]:
    """Insert the rows made since the counts already written; the counts to remember once it commits."""
    rows = run.series_rows(series)
    db.executemany(_SERIES, [(run_id, row["time_ns"], json.dumps(row)) for row in rows])
    samples = run.replica_rows(replica_rows)
    db.executemany(_REPLICA_SERIES, [(run_id, *sample) for sample in samples])
    entries = run.timeline_since(timeline)
    db.executemany(
        _TIMELINE,
        [
            (run_id, timeline + i, at, source, operation, target, message, json.dumps(detail))
            for i, (at, source, operation, target, message, detail) in enumerate(entries)
        ],
    )
    return series + len(rows), replica_rows + len(samples), timeline + len(entries)


def _write_end(db: sqlite3.Connection, run_id: int, run: RunOutput, wall_s: float | None, finished_at: str) -> None:
    """What only a run's end has: its lifecycles, ignored movements, documents, phase and summary."""
    digest, summary = run.summary_record()
    db.executemany(_REPLICAS, [(run_id, *record) for record in run.lifecycle_rows()])
    db.executemany(_IGNORED, [(run_id, *movement) for movement in run.ignored_movements()])
    db.executemany(_DOCUMENTS, [(run_id, key, json.dumps(body)) for key, body in run.documents().items()])
    db.execute(
        "UPDATE runs SET phase = ?, message = ?, digest = ?, summary = ?, simulated_ns = ?, wall_s = ?, "
        "finished_at = ? WHERE id = ?",
        (str(run.phase), run.message, digest, json.dumps(summary), run.simulated_ns, wall_s, finished_at, run_id),
    )
