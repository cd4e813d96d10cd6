"""The store's file: where it is, how it is opened and upgraded, and which runs and sweeps died Running.

Every job of the store (`runs`, `sweeps`, `writer`) reaches the file through `StoreBase.open`, so
each connection has the same settings and sees a store already upgraded (`schema.migrate`).
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
from typing import Any

from skenario.errors import SkenarioError
from skenario.results.store.schema import ForeignStore, NewerStore, migrate, ours

DEFAULT_STORE = Path(".skenario")
DATABASE = "runs.sqlite"


class StoreError(SkenarioError):
    """A run the store does not have, or a store it cannot open."""


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

    def __init__(self, folder: Path | str | None = None) -> None:
        folder = Path(folder if folder is not None else os.environ.get("SKENARIO_STORE", DEFAULT_STORE))
        self.folder = folder
        self.path = folder / DATABASE

    def exists(self) -> bool:
        return self.path.is_file()

    def open(self, create: bool = True) -> sqlite3.Connection:
        """A connection to the store, upgraded to the newest schema; without `create`, only to a store that
        exists (reading never makes one)."""
        if not create and not self.exists():
            raise StoreError("no run store here: no run has been kept in it", file=str(self.path))
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=30)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the run store: {exc}", file=str(self.path)) from None
        try:
            connection.text_factory = _lenient_text
            ours(connection)  # before anything is written: another application's file stays as it was
            connection.execute("PRAGMA journal_mode=WAL")
            # In WAL mode a transaction is still all or nothing when the process dies; NORMAL only
            # skips the fsync per commit, which a power cut could cost the last batches of.
            connection.execute("PRAGMA synchronous=NORMAL")
            migrate(connection)
        except (OSError, sqlite3.Error, NewerStore, ForeignStore) as exc:
            connection.close()
            raise StoreError(f"cannot open the run store: {exc}", file=str(self.path)) from None
        return connection

    @contextmanager
    def _connect(self, create: bool = False) -> Iterator[sqlite3.Connection]:
        with closing(self.open(create)) as connection:
            yield connection

    def _reap(self, db: sqlite3.Connection) -> None:
        """Mark Failed the runs (Interrupted the sweeps) of this host whose process ended while they said Running."""
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
