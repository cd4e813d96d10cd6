"""The run store's references (`resolve`), names and tags, filters, and its migration of older stores."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from skenario.results.store import RunStore, StoreError, check_label
from skenario.results.store.schema import TABLES
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

TINY = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: tiny}
spec:
  duration: 10s
  workload: {replicas: 1, request: {cpuTime: 10ms}}
  traffic: {type: constant, rate: 1/s}
"""

Begin = Callable[..., int]
_SCHEMA = "".join(f"{statement};\n" for statement in TABLES)
"""Every table as the first numbered store has it, as one script."""


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "store")


@pytest.fixture
def begin(store: RunStore) -> Begin:
    """Store a (not run) tiny simulation under a name and tags; its run number."""

    def make(name: str | None = None, *tags: str) -> int:
        simulation = Simulation(parse_scenario(TINY), scenario_text=TINY)
        return store.begin(simulation, "tiny.yaml", name=name, tags=tags).run_id

    return make


def test_numbers_latest_and_counting_back(store: RunStore, begin: Begin) -> None:
    ids = [begin() for _ in range(3)]
    assert ids == [1, 2, 3]
    assert [store.resolve(ref) for ref in ("1", 2, " 3 ", "latest", "-1", "-3")] == [1, 2, 3, 3, 3, 1]
    for ref in ("4", "-4", "-0", str(2**64)):
        with pytest.raises(StoreError, match="no such run"):
            store.resolve(ref)


def test_a_name_is_its_newest_run_and_a_tag_the_newest_run_carrying_it(store: RunStore, begin: Begin) -> None:
    begin("baseline", "nightly")  # 1
    begin("tuned", "nightly", "hpa")  # 2
    begin("baseline")  # 3: a name again
    begin(None, "hpa")  # 4: no name
    assert store.resolve("baseline") == 3
    assert store.resolve("tuned") == 2
    assert store.resolve("nightly") == 2
    assert store.resolve("hpa") == 4


def test_a_name_goes_before_a_tag_of_the_same_text(store: RunStore, begin: Begin) -> None:
    begin("shared")  # 1
    begin(None, "shared")  # 2: newer, but only tagged
    assert store.resolve("shared") == 1


def test_a_tag_must_match_whole(store: RunStore, begin: Begin) -> None:
    begin(None, "hpa-50", 'quote"d')
    assert store.resolve('quote"d') == 1
    # Neither part of a tag, nor a tag in another case, nor the scenario's name.
    for near in ("hpa", "HPA-50", "hpa-5", "tiny"):
        with pytest.raises(StoreError, match=f"named or tagged '{near}'"):
            store.resolve(near)


def test_repeated_tags_are_kept_once(store: RunStore, begin: Begin) -> None:
    begin(None, "a", "b", "a")
    assert store.runs()[0]["tags"] == ["a", "b"]


@pytest.mark.parametrize("text", ["7", "-2", "latest", "", "  ", " padded", "tab\there", "line\nbreak"])
def test_labels_that_could_not_be_referred_to_are_refused(text: str) -> None:
    with pytest.raises(StoreError) as caught:
        check_label(text, "--name")
    assert caught.value.field == "--name"


@pytest.mark.parametrize("text", ["baseline", "hpa-50", "v1.2", "+3", "7a", "latest-1", "日本", "a b"])
def test_labels_that_can_be_referred_to_are_taken(text: str) -> None:
    assert check_label(text, "--tag") == text


def test_filters_combine_and_last_takes_the_newest_of_what_they_let_in(store: RunStore, begin: Begin) -> None:
    for name, tags in [("a", ["x"]), ("b", ["x", "y"]), ("a", ["y"]), ("a", ["x"]), ("b", [])]:
        begin(name, *tags)
    with closing(store.open()) as db, db:
        db.execute("UPDATE runs SET phase = 'Completed' WHERE id IN (1, 2, 4)")

    def ids(**filters: object) -> list[int]:
        return [run["run"] for run in store.runs(**filters)]  # type: ignore[arg-type]

    assert ids() == [1, 2, 3, 4, 5]
    assert ids(name="a") == [1, 3, 4]
    assert ids(tag="x") == [1, 2, 4]
    assert ids(phase="Completed") == [1, 2, 4]
    assert ids(phase="Running") == [3, 5]
    assert ids(name="a", tag="x", phase="Completed") == [1, 4]
    assert ids(tag="x", last=2) == [2, 4]
    assert ids(last=10) == [1, 2, 3, 4, 5]
    assert ids(name="nobody") == []


def test_record_has_every_field_and_the_scenario_text(store: RunStore, begin: Begin) -> None:
    begin("named", "t")
    record = store.record("named")
    assert (record["run"], record["name"], record["tags"], record["scenario"]) == (1, "named", ["t"], "tiny")
    assert record["scenario_file"] == "tiny.yaml" and record["scenario_text"] == TINY
    assert record["summary"] is None  # not finished: no summary yet
    assert store.runs()[0] == {k: v for k, v in record.items() if k != "scenario_text"}


def test_a_store_from_before_names_and_tags_gains_them(tmp_path: Path) -> None:
    """A store written before `run --name` (no run_name, no tags columns) is read, and written to, as it is."""
    folder = tmp_path / "old"
    folder.mkdir()
    added = "    pid INTEGER NOT NULL,\n    run_name TEXT,\n    tags TEXT\n"
    old_schema = _SCHEMA.replace(added, "    pid INTEGER NOT NULL\n")
    assert old_schema != _SCHEMA
    with sqlite3.connect(folder / "runs.sqlite") as db:
        db.executescript(old_schema)
        db.execute(
            "INSERT INTO runs (name, scenario, seed, phase, started_at, version, host, pid) "
            "VALUES ('old', 'x', 1, 'Completed', '2024-01-01', '0.0', 'elsewhere', 1)"
        )
        assert "run_name" not in {row[1] for row in db.execute("PRAGMA table_info(runs)")}
    store = RunStore(folder)
    [old] = store.runs()
    assert (old["run"], old["name"], old["tags"], old["scenario"]) == (1, None, [], "old")
    simulation = Simulation(parse_scenario(TINY), scenario_text=TINY)
    store.begin(simulation, None, name="new", tags=["t"])
    assert store.resolve("new") == store.resolve("t") == store.resolve("latest") == 2
