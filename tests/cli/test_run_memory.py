"""`run --max-memory`: the budget's grammar, and a run past it stopped, kept as Failed with what it recorded."""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from skenario.cli import cli
from skenario.errors import SkenarioError
from skenario.runs.supervise import DEFAULT_MEMORY_SHARE, MemoryGuard, format_size, memory_budget, resident_memory
from tests.cli.test_run_lifecycle import (  # hours of traffic: the first look at memory finds it running
    INTERVAL_NS,
    LONG,
)

KI, MI, GI = 2**10, 2**20, 2**30
PHYSICAL = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("2GiB", 2 * GI),
        ("2Gi", 2 * GI),
        ("500MiB", 500 * MI),
        ("500mib", 500 * MI),
        ("1.5 GiB", 3 * GI // 2),
        ("64KiB", 64 * KI),
        ("2GB", 2 * 10**9),
        ("2G", 2 * 10**9),
        ("1048576", MI),
        ("1048576B", MI),
        ("1T", 10**12),
        ("1" + "0" * 400 + "PiB", 10**400 * 2**50),  # exact, however large
        ("25%", PHYSICAL // 4),
        ("0", None),
        ("0GiB", None),
        ("none", None),
        ("None", None),
    ],
)
def test_a_budget_is_bytes_in_either_units_or_a_share_of_memory(text: str, size: int | None) -> None:
    assert memory_budget(text) == size


def test_without_a_budget_the_default_is_a_share_of_physical_memory() -> None:
    assert memory_budget(None) == int(PHYSICAL * DEFAULT_MEMORY_SHARE)


@pytest.mark.parametrize(
    "text", ["", "two GiB", "-1GiB", "2XiB", "2 GiB GiB", "1e9", "GiB", "2iB", "50%%", "nan", "inf"]
)
def test_a_budget_that_is_no_size_is_refused(text: str) -> None:
    with pytest.raises(SkenarioError) as caught:
        memory_budget(text)
    assert caught.value.field == "--max-memory"


@pytest.mark.parametrize(
    ("size", "text"),
    [(2 * GI, "2 GiB"), (2.1 * GI, "2.1 GiB"), (MI, "1 MiB"), (118.44 * MI, "118.4 MiB"), (512, "512 B")],
)
def test_sizes_read_as_people_write_them(size: float, text: str) -> None:
    assert format_size(size) == text


def test_resident_memory_is_this_process_size() -> None:
    before = resident_memory()
    ballast = b"\x01" * (64 * MI)  # written: resident, not only reserved
    assert resident_memory() >= before + 60 * MI
    del ballast


def run(tmp_path: Path, *args: str) -> Result:
    scenario = tmp_path / "long.yaml"
    scenario.write_text(LONG)
    return CliRunner().invoke(cli, ["run", str(scenario), "--store", str(tmp_path / "store"), "--no-progress", *args])


def test_a_run_past_its_budget_is_stopped_and_kept_as_failed_with_what_it_recorded(tmp_path: Path) -> None:
    result = run(tmp_path, "--max-memory", "1MiB", "--name", "hungry")
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == MemoryGuard.EXIT_CODE == 1
    assert "Traceback" not in result.output and "digest" not in result.stdout  # no summary of an unfinished run
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("memory budget 1 MiB exceeded: ") and "resident at simulated" in line
    assert line.endswith("run 1 kept in the store as Failed")

    with closing(sqlite3.connect(tmp_path / "store" / "runs.sqlite")) as db:
        [(phase, message, simulated_ns, summary, run_name)] = db.execute(
            "SELECT phase, message, simulated_ns, summary, run_name FROM runs"
        ).fetchall()
        times = [t for (t,) in db.execute("SELECT time_ns FROM series WHERE run_id = 1 ORDER BY time_ns")]
        replicas = db.execute("SELECT count(*) FROM replicas WHERE run_id = 1").fetchone()
    assert (phase, run_name) == ("Failed", "hungry")
    assert message.startswith("memory budget 1 MiB exceeded") and message in line
    assert 0 < simulated_ns < 3 * 3600 * 10**9  # stopped part-way
    # Every row recorded before the stop is kept, whole and in order.
    assert len(times) >= 1
    assert times == [INTERVAL_NS * k for k in range(1, len(times) + 1)]
    # The last row is the last tick before the stop, or at it: a stretch that ends on a tick's instant stops
    # before that tick runs (stretches are sized by wall time, so on a busy machine one can).
    assert simulated_ns - INTERVAL_NS <= times[-1] <= simulated_ns
    assert json.loads(summary)["simulated_ns"] == simulated_ns
    assert replicas == (6,)


def test_a_run_within_its_budget_or_without_one_completes(tmp_path: Path) -> None:
    short = ["--seed", "5"]
    for budget in ("64GiB", "none", "0"):
        scenario = tmp_path / "short.yaml"
        scenario.write_text(LONG.replace("duration: 3h", "duration: 2m"))
        result = CliRunner().invoke(
            cli, ["run", str(scenario), "--no-store", "--no-progress", "--json", "--max-memory", budget, *short]
        )
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["phase"] == "Completed"


def test_a_bad_budget_is_one_line_and_nothing_is_stored(tmp_path: Path) -> None:
    result = run(tmp_path, "--max-memory", "lots")
    assert result.exit_code == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error:") and "--max-memory" in line and "lots" in line
    assert not (tmp_path / "store").exists()
