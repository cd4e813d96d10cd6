"""The run store as every command opens it: another process's lock, while waited for, is said on stderr."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from skenario.cli.common import err
from skenario.results.store import PATIENCE, RunStore


class LockNotice:
    """Hears how long a statement has waited for another process's write lock (`StoreBase.waiting`) and
    says so on `console`: once the wait passes `FIRST` seconds, then every `EVERY` seconds, so a
    command that seems stuck says what it waits for and how to stop it."""

    FIRST = 1.0
    EVERY = 10.0

    def __init__(self, path: Path, console: Console, patience: float = PATIENCE) -> None:
        self.path = path
        self.console = console
        self.patience = patience
        self._said_at: float | None = None  # the wait at the last notice, in this statement's wait
        self._last = 0.0

    def __call__(self, waited: float) -> None:
        if waited < self._last:  # another statement's wait
            self._said_at = None
        self._last = waited
        due = self.FIRST if self._said_at is None else self._said_at + self.EVERY
        if waited < due:
            return
        self._said_at = waited
        self.console.print(
            f"waiting for another process's lock on {self.path} ({waited:.0f} s of at most "
            f"{self.patience:.0f} s; Ctrl-C stops)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def run_store(folder: Path | None) -> RunStore:
    """The store in `folder` (None: the default), its lock waits said on stderr."""
    store = RunStore(folder)
    store.waiting = LockNotice(store.path, err, store.patience)
    return store
