"""The store when SQLite cannot do what it is asked: another process's lock, a full disk. One line each, never a
row left Running by a process still there, and signals heard while waiting."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from click.testing import CliRunner

from skenario.cli import cli
from skenario.results.store import FinishedRun, RunStore, StoreError, StoreLocked
from skenario.results.store.sweeps import StudyTaken
from skenario.runs import execute, open_run
from tests.runs.inputs import EXAMPLES


def finished(name: str = "kept") -> FinishedRun:
    return FinishedRun(
        name=name, scenario_text="{}", seed=1, phase="Completed", message=None, digest="d", simulated_ns=1, wall_s=0.1
    )


@contextmanager
def write_lock(store: RunStore) -> Iterator[sqlite3.Connection]:
    """Another connection holding the store's write lock (as another process's long transaction would)."""
    with closing(sqlite3.connect(store.path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        try:
            yield other
        finally:
            if other.in_transaction:
                other.execute("ROLLBACK")


def test_a_lock_held_past_the_stores_patience_is_one_line_and_the_store_is_as_it_was(tmp_path: Path) -> None:
    waits: list[float] = []
    store = RunStore(tmp_path, patience=0.3, waiting=waits.append)
    store.keep(finished("before"), None, wall_s=0.1)
    with write_lock(store), pytest.raises(StoreLocked) as locked:
        store.keep(finished("during"), None, wall_s=0.1)
    assert str(store.path) in str(locked.value) and "\n" not in str(locked.value)
    assert waits and waits == sorted(waits)  # heard after each step, longer each time
    assert len(store.runs()) == 1  # the run kept before the lock, and only it


def test_a_lock_let_go_while_waiting_lets_the_write_through(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.open().close()
    with write_lock(store) as other:

        def let_go(waited: float) -> None:
            if other.in_transaction:
                other.execute("ROLLBACK")

        store.waiting = let_go
        run_id = store.keep(finished(), None, wall_s=0.1)
    assert [row["run"] for row in store.runs()] == [run_id]


class Alarm(Exception):
    pass


def _ring(signum: int, frame: FrameType | None) -> None:
    raise Alarm


def test_a_signal_is_heard_while_the_store_waits_for_a_lock(tmp_path: Path) -> None:
    """SQLite waits inside C, where Python runs no signal handler; the store waits in short steps, so a
    signal sent once it waits (from another thread, as a terminal's Ctrl-C comes) is heard within one of
    them, and ends the wait long before its patience (an hour here) is spent."""
    store = RunStore(tmp_path, patience=3600)
    store.open().close()
    waiting = threading.Event()
    store.waiting = lambda waited: waiting.set()

    def signal_once_waiting() -> None:
        waiting.wait()
        os.kill(os.getpid(), signal.SIGUSR1)

    previous = signal.signal(signal.SIGUSR1, _ring)
    sender = threading.Thread(target=signal_once_waiting, daemon=True)
    try:
        with write_lock(store), pytest.raises(Alarm):
            sender.start()
            store.keep(finished(), None, wall_s=0.1)
    finally:
        waiting.set()
        sender.join()
        signal.signal(signal.SIGUSR1, previous)


def test_a_full_disk_mid_run_is_one_line_and_leaves_the_run_failed_and_the_store_readable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RunStore(tmp_path)
    store.open().close()
    opened = RunStore.open

    def small_disk(self: RunStore, create: bool = True) -> sqlite3.Connection:
        connection = opened(self, create)
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages + 8}")  # room for the run's row, not for its series
        return connection

    monkeypatch.setattr(RunStore, "open", small_disk)
    run = open_run(EXAMPLES / "quickstart.yaml")
    with pytest.raises(StoreError, match="full") as full:
        execute(run, store)
    assert "\n" not in str(full.value) and str(store.path) in str(full.value)
    monkeypatch.undo()
    (row,) = store.runs()
    assert row["phase"] == "Failed" and str(run.phase) == "Failed"
    assert "full" in (store.load(row["run"]).message or "")
    # Its objectives are not called met: what it did before the disk filled cannot promise the rest.
    shown = CliRunner().invoke(cli, ["show", str(row["run"]), "--store", str(tmp_path), "--slo-latency", "10s"])
    assert shown.exit_code == 0, shown.output
    slo = next(line for line in shown.output.splitlines() if line.startswith("SLO"))
    assert ": unknown (the run is Failed: " in slo and "full" in slo and "met" not in slo.split(": unknown")[0]


def test_rows_that_cannot_be_read_back_are_named_one_line_each_and_the_rest_is_read(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    run = open_run(EXAMPLES / "events.yaml")
    run_id = execute(run, store).run_id or 0
    whole = store.load(run_id)
    assert len(whole.series) and len(whole.timeline)
    with closing(sqlite3.connect(store.path)) as db, db:
        first = "(SELECT MIN(time_ns) FROM series WHERE run_id = ?)"
        db.execute(f"UPDATE series SET row = '{{not json' WHERE run_id = ? AND time_ns = {first}", (run_id, run_id))
        db.execute("UPDATE timeline SET detail = '[1, 2]' WHERE run_id = ? AND seq = 0", (run_id,))
        db.execute("INSERT INTO documents (run_id, name, body) VALUES (?, 'extra', 'nope')", (run_id,))
        db.execute("UPDATE runs SET summary = '\"text\"' WHERE id = ?", (run_id,))
    damaged = store.load(run_id)
    assert [line.split(":")[0] for line in damaged.damaged] == [
        "series row 0",
        "timeline entry 0",
        "document 'extra'",
        "summary",
    ]
    assert len(damaged.series) == len(whole.series) - 1
    assert len(damaged.timeline) == len(whole.timeline) and damaged.timeline["detail"].iloc[0] == {}
    assert set(damaged.documents) == set(whole.documents) and damaged.summary == {}
    assert whole.damaged == []


def test_the_stores_check_names_every_damaged_row_and_nothing_in_a_whole_store(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    assert store.check() == []  # no store yet
    first = execute(open_run(EXAMPLES / "events.yaml"), store).run_id
    second = store.keep(finished(), None, wall_s=0.1)
    assert store.check() == []
    with closing(sqlite3.connect(store.path)) as db, db:
        last = "(SELECT MAX(time_ns) FROM series)"
        db.execute(f"UPDATE series SET row = 'x' WHERE run_id = ? AND time_ns = {last}", (first,))
        db.execute("UPDATE runs SET summary = '[' WHERE id = ?", (second,))
    rows = len(store.load(first or 0).series) + 1
    assert [line.split(" (")[0] for line in store.check()] == [
        f"run {second}: summary: not JSON",
        f"run {first}: series row {rows - 1}: not JSON",
    ]


def test_damaged_pages_are_reported_by_the_check_and_are_one_line_elsewhere(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    execute(open_run(EXAMPLES / "events.yaml"), store)
    pages = store.path.stat().st_size // 4096
    with store.path.open("r+b") as file:  # every third page from the fourth scribbled over
        for page in range(3, pages, 3):
            file.seek(page * 4096 + 100)
            file.write(b"\xff" * 200)
    problems = store.check()
    assert problems and all("\n" not in line for line in problems)
    assert any(line.startswith("SQLite: ") for line in problems)
    try:
        store.load(1)
    except StoreError as exc:
        assert "malformed" in str(exc) and "\n" not in str(exc)


def test_a_store_that_cannot_be_written_is_read_as_it_stands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where SQLite cannot open the file for writing (a read-only mount, another user's folder), the readers
    open it read-only: its runs are read, a Running run left as it is, and a write is one line."""
    store = RunStore(tmp_path)
    run_id = store.keep(finished(), None, wall_s=0.1)
    connect = sqlite3.connect

    def read_only_disk(target: object, *args: object, **kwargs: object) -> sqlite3.Connection:
        if not kwargs.get("uri"):
            raise sqlite3.OperationalError("unable to open database file")
        return connect(target, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", read_only_disk)
    assert [row["run"] for row in store.runs()] == [run_id]
    assert store.load(run_id).digest == "d"
    with pytest.raises(StoreError, match="unable to open") as refused:
        store.keep(finished(), None, wall_s=0.1)
    assert "\n" not in str(refused.value)


MOUNT = shutil.which("unshare"), shutil.which("mount")


def test_a_store_on_a_read_only_mount_is_read_by_the_commands(tmp_path: Path) -> None:
    """The real thing: the store's folder bind-mounted read-only in a mount namespace of its own."""
    folder, mounted = tmp_path / "store", tmp_path / "mounted"
    mounted.mkdir()
    RunStore(folder).keep(finished(), None, wall_s=0.1)
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount --bind {folder} {mounted} && mount -o remount,ro,bind {mounted}"],
        capture_output=True,
        text=True,
    )
    if None in MOUNT or probe.returncode != 0:
        pytest.skip(f"this machine cannot make a read-only mount here: {probe.stderr.strip()[:200]}")
    script = (
        f"mount --bind {folder} {mounted} && mount -o remount,ro,bind {mounted} && "
        f"{sys.executable} -m skenario runs --store {mounted} -o json && "
        f"{{ {sys.executable} -m skenario runs rm 1 --store {mounted}; echo rm=$?; }}"
    )
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    listed, _, rm = done.stdout.rpartition("]")
    assert [run["run"] for run in json.loads(listed + "]")] == [1]
    assert rm.strip() == "rm=2" and done.stderr.count("\n") == 1 and "readonly" in done.stderr


def _claim(folder: str, ready: Any, done: Any, results: Any) -> None:
    """One process asking for the study `racing`: what it got, then held (alive) until every one has asked."""
    store = RunStore(folder)
    ready.wait()
    try:
        sweep_id, _ = store.claim_study(
            "racing", scenario_name="s", scenario_file=None, scenario_text="{}", options={}, same=lambda kept: True
        )
        results.put(("claimed", sweep_id))
    except StudyTaken as taken:
        results.put(("refused", str(taken)))
    done.wait()


def test_a_study_name_asked_for_by_many_processes_at_once_goes_to_one(tmp_path: Path) -> None:
    RunStore(tmp_path).open().close()
    context = multiprocessing.get_context("fork")
    ready, done, results = context.Barrier(4), context.Barrier(5), context.Queue()
    processes = [context.Process(target=_claim, args=(str(tmp_path), ready, done, results)) for _ in range(4)]
    for process in processes:
        process.start()
    outcomes = sorted(results.get() for _ in processes)
    done.wait()
    for process in processes:
        process.join()
    assert [kind for kind, _ in outcomes] == ["claimed", "refused", "refused", "refused"]
    assert all("running now (process" in said for kind, said in outcomes if kind == "refused")
    assert len(RunStore(tmp_path).sweeps(kind="study")) == 1
