"""The store as commands open it: a wait for another process's lock is said on stderr, with how to stop it."""

from __future__ import annotations

import io
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from rich.console import Console

from skenario.cli.store import LockNotice, run_store
from skenario.results.store import FinishedRun, RunStore, StoreLocked


def notices(waits: list[float]) -> list[str]:
    console = Console(file=io.StringIO(), width=200)
    notice = LockNotice(Path("store/runs.sqlite"), console, patience=60)
    for waited in waits:
        notice(waited)
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


def test_a_wait_is_said_once_past_a_second_then_every_ten_seconds() -> None:
    lines = notices([0.1 * k for k in range(1, 251)])  # one statement waiting 25 s in 0.1 s steps
    assert len(lines) == 3  # at 1 s, 11 s and 21 s
    assert [line.split("(")[1].split(" s")[0] for line in lines] == ["1", "11", "21"]
    assert "store/runs.sqlite" in lines[0] and "at most 60 s" in lines[0] and "Ctrl-C stops" in lines[0]


def test_a_short_wait_says_nothing_and_each_statements_wait_counts_anew() -> None:
    assert notices([0.1, 0.5, 0.9]) == []
    assert len(notices([0.5, 1.0, 0.1, 0.5, 1.0])) == 2  # two statements, each past a second


def test_commands_hear_a_lock_held_past_their_patience_and_say_so(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.keep(
        FinishedRun("a", "{}", seed=1, phase="Completed", message=None, digest="d", simulated_ns=1, wall_s=0.1),
        None,
        wall_s=0.1,
    )
    opened = run_store(tmp_path)
    assert isinstance(opened.waiting, LockNotice)  # every command's store says its waits
    opened.patience = opened.waiting.patience = 1.2
    console = opened.waiting.console = Console(file=io.StringIO(), width=200)
    with closing(sqlite3.connect(store.path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreLocked):
            opened.remove([1])
        other.execute("ROLLBACK")
    said = console.file.getvalue()  # type: ignore[attr-defined]
    assert said.startswith(f"waiting for another process's lock on {opened.path} (1 s of at most 1 s")
    assert len(store.runs()) == 1
