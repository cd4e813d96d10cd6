"""The room kept beside the store for deleting runs on a full disk.

A disk that is full is modelled by a connection that refuses every write while the reserve's
blocks are held and takes them once they are given back, as a real full disk does once a file
is deleted (measured on a 8 MiB tmpfs too: see docs/how-to/results.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skenario.cli import cli
from skenario.results.store import FinishedRun, RunStore, StoreFull, base, reserve
from tests.results.store.test_writer import Handmade

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def finished(name: str) -> FinishedRun:
    return FinishedRun(
        name=name, scenario_text="{}", seed=1, phase="Completed", message=None, digest="d", simulated_ns=1, wall_s=0.1
    )


class Disk:
    """The disk: when `full`, every write fails until blocks are `freed` (the reserve given back)."""

    full = False
    freed = False


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[Disk]]:
    class OnDisk(base.Patient):
        def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
            _refuse(sql)
            return super().execute(sql, parameters)

        def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
            _refuse(sql)
            return super().executemany(sql, parameters)

    def _refuse(sql: str) -> None:
        if Disk.full and not Disk.freed and sql.lstrip().split()[0].upper() in WRITES:
            raise sqlite3.OperationalError("database or disk is full")

    release = reserve.release

    def freeing(database: Path) -> bool:
        Disk.freed = release(database) or Disk.freed
        return Disk.freed

    usage = reserve.shutil.disk_usage

    def disk_usage(path: Path) -> Any:
        return type("Usage", (), {"free": 0})() if Disk.full and not Disk.freed else usage(path)

    monkeypatch.setattr(reserve.shutil, "disk_usage", disk_usage)
    monkeypatch.setattr(base, "Patient", OnDisk)
    monkeypatch.setattr(reserve, "release", freeing)
    Disk.full = Disk.freed = False
    yield Disk
    Disk.full = Disk.freed = False


def held(store: RunStore) -> bool:
    return (store.folder / reserve.RESERVE).exists()


def test_the_reserve_is_real_blocks_as_large_as_the_store_within_its_bounds(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.keep(finished("one"), None, wall_s=0.1)
    path = tmp_path / reserve.RESERVE
    assert path.stat().st_size == reserve.SMALLEST  # a small store: the smallest reserve
    assert path.stat().st_blocks * 512 >= reserve.SMALLEST  # allocated, not a sparse file
    assert reserve.wanted(store.path) == reserve.SMALLEST
    (tmp_path / "big").mkdir()
    big = tmp_path / "big" / "runs.sqlite"
    with open(big, "wb") as file:
        file.truncate(100 * 2**20)
    assert reserve.wanted(big) == reserve.LARGEST


def test_no_reserve_is_made_on_a_disk_without_room_for_it_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    free = 2 * reserve.SMALLEST - 1
    monkeypatch.setattr(reserve.shutil, "disk_usage", lambda path: type("Usage", (), {"free": free})())
    RunStore(tmp_path).keep(finished("one"), None, wall_s=0.1)
    assert not (tmp_path / reserve.RESERVE).exists()


def test_gc_on_a_full_disk_gives_the_reserve_back_deletes_and_makes_it_again(tmp_path: Path, disk: type[Disk]) -> None:
    store = RunStore(tmp_path)
    for name in ("a", "b", "c"):
        store.keep(finished(name), None, wall_s=0.1)
    disk.full = True
    result = CliRunner().invoke(cli, ["runs", "gc", "--keep", "1", "--store", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("deleted 2 runs; the store takes ")
    assert [row["scenario"] for row in store.runs()] == ["c"]
    assert held(store)  # compacted, then the reserve made again


def test_gc_on_a_full_disk_with_no_reserve_is_one_line_and_deletes_nothing(tmp_path: Path, disk: type[Disk]) -> None:
    store = RunStore(tmp_path)
    for name in ("a", "b"):
        store.keep(finished(name), None, wall_s=0.1)
    (tmp_path / reserve.RESERVE).unlink()  # spent already, or never made on a disk with too little room
    disk.full = True
    result = CliRunner().invoke(cli, ["runs", "gc", "--keep", "0", "--store", str(tmp_path)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "disk is full" in result.output and str(store.path) in result.output
    assert len(store.runs()) == 2


def test_a_run_the_full_disk_stopped_is_marked_failed_in_the_room_the_reserve_gives(
    tmp_path: Path, disk: type[Disk]
) -> None:
    store = RunStore(tmp_path)
    writer = store.begin(Handmade(), "handmade.yaml")  # type: ignore[arg-type]
    disk.full = True
    with pytest.raises(StoreFull), store.failures(), closing(store.open()) as db:
        db.execute("UPDATE runs SET name = 'renamed'")  # what the run would write next
    assert writer.fail("the run store failed: database or disk is full")
    assert not held(store)  # spent on saying so
    with closing(store.open()) as db:
        ((phase, message),) = db.execute("SELECT phase, message FROM runs").fetchall()
    assert (phase, message) == ("Failed", "the run store failed: database or disk is full")
