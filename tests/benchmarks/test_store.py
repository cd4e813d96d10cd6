"""Tests for benchmarks/store.py: the store run writes and loads back what the run made; no wall-clock assertions."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skenario.core.time import HOUR
from tests.benchmarks import BENCHMARKS

store: Any = importlib.import_module("store")

HOURS = 0.02  # 72 s: rows at 10, 20, ..., 70 s and at the halt


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("store-bench")
    result = {kind: store.run_once(kind, HOURS, folder) for kind in store.KINDS}
    assert list(folder.iterdir()) == []  # each run's store lived in a temporary folder, gone afterwards
    return result


def test_the_store_run_loads_back_what_the_recorder_has(runs: dict[str, dict[str, Any]]) -> None:
    record = runs["store"]
    assert record["phase"] == "Completed"
    assert record["recorder_rows"]["series"] == 8
    assert record["recorder_rows"]["replica_series"] == 8 * 40  # 40 replicas, all live all along
    assert record["stored_rows"] == record["recorder_rows"]  # every table, row for row
    loaded = record["loaded"]
    assert loaded["series"] == record["recorder_rows"]["series"]
    assert loaded["replica_series"] == record["recorder_rows"]["replica_series"]
    assert loaded["timeline"] == record["recorder_rows"]["timeline"]
    assert loaded["digest"] == record["digest"]
    assert loaded["phase"] == "Completed"
    assert loaded["simulated_ns"] == round(HOURS * HOUR)
    assert record["store_bytes"] > 0


def test_the_store_run_flushes_at_each_step_as_the_cli_does(runs: dict[str, dict[str, Any]]) -> None:
    from skenario.runs import STEPS

    assert store.STEPS == STEPS
    record = runs["store"]
    assert record["flushes"] == STEPS  # 99 on the way and one after the last stretch; finish writes the rest
    assert 0 < record["flush_max_s"] <= record["flush_s"]
    assert record["flush_s"] + record["finish_s"] + record["begin_s"] < record["wall_s"]
    assert "flushes" not in runs["bare"]


def test_writing_results_does_not_change_the_run(runs: dict[str, dict[str, Any]]) -> None:
    bare, stored = runs["bare"], runs["store"]
    assert bare["digest"] == stored["digest"]
    assert bare["requests"] == stored["requests"]
    assert bare["recorder_rows"] == stored["recorder_rows"]
    assert bare["phase"] == "Completed"


def test_the_scenario_is_the_reference_one_for_the_hours_asked() -> None:
    from skenario.scenario.loader import load_scenario

    reference = load_scenario(store.SCENARIO).spec
    four = store.reference_scenario(4).spec
    assert reference.duration == HOUR
    assert four.duration == 4 * HOUR
    assert four.model_copy(update={"duration": HOUR}) == reference  # only the duration differs


def test_ratios_are_taken_within_rounds() -> None:
    def record(kind: str, wall: float, in_store: float = 0.0) -> dict[str, Any]:
        rows = {table: 1 for table in store.TABLES}
        base: dict[str, Any] = {"kind": kind, "wall_s": wall, "requests": 10, "digest": "d", "peak_rss_mb": 50.0}
        if kind == "store":
            base |= {"begin_s": 0.01, "flush_s": in_store * 0.9, "finish_s": in_store * 0.1, "flushes": 100}
            base |= {"flush_max_s": 0.002, "stored_rows": rows, "store_bytes": 4096, "loaded": {"digest": "d"}}
        return base

    runs = {
        "bare_1h": [record("bare", 10.0), record("bare", 20.0), record("bare", 10.0)],
        "store_1h": [record("store", 10.5, 0.2), record("store", 21.0, 0.4), record("store", 12.0, 0.3)],
    }
    summary = store.summarise(runs, [1.0])
    variant = summary["variants"]["1h"]
    assert summary["rounds"] == 3
    # Per round: +5%, +5%, +20%: the median is +5%, not 21.0 / 10.0 − 1 from medians of the walls.
    assert variant["overhead"]["median"] == pytest.approx(0.05)
    assert variant["overhead"]["max"] == pytest.approx(0.20)
    assert variant["share"]["median"] == pytest.approx(0.4 / 21.0)
    assert variant["same_digest"]
    assert summary["verdict"] == {"overhead_le_10pct": True, "share_le_10pct": True, "met": True}
    assert "proportional" not in summary
    assert "baseline" not in summary
    # With a baseline version's store runs: this version's walls over the baseline's, round by round.
    runs["baseline_1h"] = [record("store", 21.0, 0.1), record("store", 21.0, 0.8), record("store", 12.0, 0.3)]
    against = store.summarise(runs, [1.0])["baseline"]
    assert against["x_store_wall"]["median"] == pytest.approx(1.0)  # 0.5, 1.0, 1.0
    assert against["x_flush_finish"]["median"] == pytest.approx(1.0)  # 2.0, 0.5, 1.0
    assert against["same_digest"]


def test_rounds_rotate_the_order() -> None:
    plan = ["a", "b", "c"]
    assert [store.rotated(plan, r) for r in range(4)] == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
        ["a", "b", "c"],
    ]


def test_one_run_in_a_fresh_process_prints_one_json_line(tmp_path: Path) -> None:
    command = [
        sys.executable,
        str(BENCHMARKS / "store.py"),
        "--one",
        "store",
        "--hours",
        "0.01",
        "--dir",
        str(tmp_path),
    ]
    finished = subprocess.run(command, capture_output=True, text=True, check=True)
    lines = finished.stdout.splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["run"] == "store_0.01h"
    assert record["loaded"]["digest"] == record["digest"]
    assert record["stored_rows"]["series"] == 4  # 36 s: 10, 20, 30 and the halt
    assert list(tmp_path.iterdir()) == []


def test_quick_mode_measures_both_lengths_in_one_round() -> None:
    command = [sys.executable, str(BENCHMARKS / "store.py"), "--quick", "--json"]
    finished = subprocess.run(command, capture_output=True, text=True, check=True)
    summary = json.loads(finished.stdout)
    assert summary["rounds"] == 1
    assert list(summary["variants"]) == ["0.05h", "0.2h"]
    for variant in summary["variants"].values():
        intervals = round(variant["hours"] * 360)  # a row every 10 s
        assert variant["rows"]["series"] == intervals
        assert variant["rows"]["replica_series"] == 40 * intervals
        assert variant["rows"]["replicas"] == 40
        assert variant["flushes"] == store.STEPS
        assert variant["same_digest"]  # the bare run, the store run and the stored run agree
        assert 0 < variant["share"]["median"] < 1
    assert summary["proportional"]["x_hours"] == pytest.approx(4)
    assert set(summary["verdict"]) == {"overhead_le_10pct", "share_le_10pct", "met"}
