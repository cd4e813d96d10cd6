"""The store's file: where it is, how it is opened and upgraded, and which runs and sweeps died Running.

Every job of the store (`runs`, `sweeps`, `writer`) reaches the file through `StoreBase.open`, so
each connection has the same settings and sees a store already upgraded (`schema.migrate`).

Another process's write lock is waited for in short steps (`Patient`), between which Python runs
signal handlers (SIGTERM is not held up for SQLite's whole timeout) and `StoreBase.waiting` hears
how long it has waited; past `patience` seconds the wait ends in one line (`StoreLocked`). Any
other failure of SQLite (a full disk, a read-only file) is one line too: a `StoreError`.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skenario.errors import SkenarioError
from skenario.results.store import reserve
from skenario.results.store.schema import ForeignStore, NewerStore, migrate, ours

DEFAULT_STORE = Path(".skenario")
DATABASE = "runs.sqlite"


PATIENCE = 60.0
"""Seconds a statement waits for another process's write lock before it gives up (`StoreLocked`)."""
STEP = 0.1
"""Seconds of each wait inside SQLite (its busy timeout): Python runs signal handlers in between."""


class StoreError(SkenarioError):
    """A run the store does not have, or a store it cannot open, read or write."""


class StoreFull(StoreError):
    """The disk (or the file's size limit) left no room for what SQLite had to write."""


class StoreLocked(StoreError):
    """Another process held the store's write lock for longer than the store's patience."""


def full(exc: BaseException) -> bool:
    """Whether SQLite (or the store) failed for want of room on the disk."""
    if isinstance(exc, StoreFull):
        return True
    return isinstance(exc, sqlite3.OperationalError) and (
        getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL" or "disk is full" in str(exc)
    )


def _locked(exc: sqlite3.OperationalError) -> bool:
    return getattr(exc, "sqlite_errorname", "").startswith("SQLITE_BUSY") or "locked" in str(exc)


class Patient(sqlite3.Connection):
    """A connection whose statements wait for another process's write lock in `STEP`s, up to `patience`
    seconds, calling `waiting(seconds waited)` after each step (and running signal handlers)."""

    patience = PATIENCE
    waiting: Callable[[float], object] | None = None

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return self._patiently(super().execute, sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        rows = parameters if isinstance(parameters, list | tuple) else list(parameters)  # an iterator, replayable
        return self._patiently(super().executemany, sql, rows)

    def _patiently(self, call: Callable[[str, Any], sqlite3.Cursor], sql: str, parameters: Any) -> sqlite3.Cursor:
        started = time.monotonic()
        while True:
            try:
                return call(sql, parameters)
            except sqlite3.OperationalError as exc:
                if not _locked(exc):
                    raise
                waited = time.monotonic() - started
                if waited >= self.patience:
                    raise StoreLocked(
                        f"another process has held the run store's write lock for {waited:.0f} s; try again later"
                    ) from None
                if self.waiting is not None:
                    self.waiting(waited)


def now() -> str:
    """The time a row is stamped with: UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def json_or_none(stored: Any) -> Any:
    """A JSON column as data; None for what is not JSON (another tool wrote the row)."""
    try:
        return json.loads(stored) if isinstance(stored, str | bytes) else None
    except ValueError:
        return None


def _lenient_text(raw: bytes) -> str:
    """Text as SQLite holds it, read even where it is not UTF-8 (another tool wrote the row)."""
    return raw.decode("utf-8", "replace")


def _unwritable(exc: StoreError) -> bool:
    """Whether opening the store failed because the file or its folder cannot be written."""
    text = str(exc).lower()
    return any(reason in text for reason in ("readonly", "read-only", "unable to open", "permission", "disk i/o error"))


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


class StoreBase:
    """The runs kept in one folder: its file, opened and upgraded."""

    def __init__(
        self,
        folder: Path | str | None = None,
        *,
        patience: float = PATIENCE,
        waiting: Callable[[float], object] | None = None,
    ) -> None:
        folder = Path(folder if folder is not None else os.environ.get("SKENARIO_STORE", DEFAULT_STORE))
        self.folder = folder
        self.path = folder / DATABASE
        self.patience = patience
        self.waiting = waiting  # hears how long a statement has waited for another process's lock

    def exists(self) -> bool:
        return self.path.is_file()

    def open(self, create: bool = True) -> sqlite3.Connection:
        """A connection to the store, upgraded to the newest schema; without `create`, only to a store that
        exists (reading never makes one), and read-only where the file or its folder cannot be written
        (a read-only mount, another user's store): then `connection.read_only` is True."""
        if not create and not self.exists():
            raise StoreError("no run store here: no run has been kept in it", file=str(self.path))
        try:
            return self._open_for_writing()
        except StoreError as exc:
            if create or not _unwritable(exc):
                raise
        return self._open_for_reading()

    def _open_for_reading(self) -> sqlite3.Connection:
        """The store as it is, not written to: SQLite's read-only mode, or, where even its shared-memory
        file cannot be made (a read-only mount), the file taken as immutable."""
        last: sqlite3.Error | None = None
        for mode in ("mode=ro", "immutable=1"):
            try:
                connection = sqlite3.connect(
                    f"{self.path.resolve().as_uri()}?{mode}", uri=True, timeout=STEP, factory=Patient
                )
                connection.text_factory = _lenient_text
                ours(connection)
                connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            except sqlite3.Error as exc:
                last = exc
                continue
            except ForeignStore as exc:
                connection.close()
                raise StoreError(f"cannot open the run store: {exc}", file=str(self.path)) from None
            connection.patience, connection.waiting = self.patience, self.waiting
            connection.read_only = True  # type: ignore[attr-defined]
            return connection
        raise StoreError(f"cannot read the run store: {last}", file=str(self.path))

    def _open_for_writing(self) -> sqlite3.Connection:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=STEP, factory=Patient)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the run store: {exc}", file=str(self.path)) from None
        connection.patience, connection.waiting = self.patience, self.waiting
        connection.read_only = False  # type: ignore[attr-defined]
        try:
            connection.text_factory = _lenient_text
            ours(connection)  # before anything is written: another application's file stays as it was
            connection.execute("PRAGMA journal_mode=WAL")
            # In WAL mode a transaction is still all or nothing when the process dies; NORMAL only
            # skips the fsync per commit, which a power cut could cost the last batches of.
            connection.execute("PRAGMA synchronous=NORMAL")
            migrate(connection)
            reserve.keep(self.path)  # room to delete runs in, should the disk fill
        except StoreLocked as exc:
            connection.close()
            exc.file = str(self.path)
            raise
        except (OSError, sqlite3.Error, NewerStore, ForeignStore) as exc:
            connection.close()
            raise StoreError(f"cannot open the run store: {exc}", file=str(self.path)) from None
        return connection

    @contextmanager
    def _connect(self, create: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection for one job; what SQLite raises in it (a full disk, a read-only file) is one line."""
        with closing(self.open(create)) as connection, self.failures():
            yield connection

    @contextmanager
    def failures(self) -> Iterator[None]:
        """What the file or the disk did (full, read-only, locked, corrupt) as one `StoreError` naming the store."""
        try:
            yield
        except StoreLocked as exc:
            exc.file = str(self.path)
            raise
        except sqlite3.DatabaseError as exc:
            if not isinstance(exc, sqlite3.OperationalError) and type(exc) is not sqlite3.DatabaseError:
                raise  # a constraint or misuse: skenario's mistake, not the file's
            kind = StoreFull if full(exc) else StoreError
            raise kind(f"the run store failed: {exc}", file=str(self.path)) from None

    def _reap(self, db: sqlite3.Connection) -> None:
        """Mark Failed the runs (Interrupted the sweeps) of this host whose process ended while they said Running
        (not in a store only read: they are read as they stand)."""
        if getattr(db, "read_only", False):
            return
        if db.in_transaction:  # the caller's own (a study's claim): marked in it, committed with it
            self._mark_dead(db)
            return
        try:
            with db:  # its own transaction, committed here: on a full disk it is the commit that fails
                self._mark_dead(db)
        except sqlite3.OperationalError as exc:
            if not full(exc):
                raise
            # A full disk: they are read as they stand, and marked once there is room again.

    def _mark_dead(self, db: sqlite3.Connection) -> None:
        sweeps = db.execute("SELECT id, pid FROM sweeps WHERE phase = 'Running' AND host = ?", (socket.gethostname(),))
        for sweep_id, pid in sweeps.fetchall():
            if not _alive(pid):
                db.execute(
                    "UPDATE sweeps SET phase = 'Interrupted', message = ?, finished_at = ? WHERE id = ?",
                    ("its process ended before the sweep did (killed?)", now(), sweep_id),
                )
        rows = db.execute("SELECT id, pid FROM runs WHERE phase = 'Running' AND host = ?", (socket.gethostname(),))
        for run_id, pid in rows.fetchall():
            if not _alive(pid):
                db.execute(
                    "UPDATE runs SET phase = 'Failed', message = ?, finished_at = ? WHERE id = ?",
                    ("its process ended before the run did (killed?)", now(), run_id),
                )
