"""A run with a cluster keeps its scheduling results in the store: `show` prints them, `export` writes them."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from skenario.cli import cli
from skenario.results.rundata import RunData
from skenario.results.store import RunStore
from skenario.scenario.loader import load_scenario
from skenario.scenario.simulation import Simulation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE = EXAMPLES / "hpa-cluster-autoscaler.yaml"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("store")
    result = CliRunner().invoke(cli, ["run", str(EXAMPLE), "--store", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def test_the_store_keeps_what_the_run_had_in_memory(store: Path) -> None:
    sim = Simulation(load_scenario(EXAMPLE), base_dir=EXAMPLES)
    sim.run()
    fresh = RunData.from_simulation(sim)
    stored = RunStore(store).load("latest")
    assert stored.documents == json.loads(json.dumps(fresh.documents))


def test_the_nodes_table_agrees_with_the_scheduling_summary(store: Path) -> None:
    run = RunStore(store).load("latest")
    nodes = run.table("nodes")
    scheduling = run.documents["scheduling"]
    assert (nodes["removed_s"].isna()).sum() == scheduling["nodes"]
    assert (nodes["added_s"] <= nodes["removed_s"].fillna(float("inf"))).all()
    # The most nodes at once, from the joins and leaves, is the autoscaler's peak.
    changes = sorted([(t, 1) for t in nodes["added_s"]] + [(t, -1) for t in nodes["removed_s"].dropna()])
    running = peak = 0
    for _, step in changes:
        running += step
        peak = max(peak, running)
    assert peak == scheduling["nodes at the peak"]
    pods, attempts = run.table("pods"), run.table("attempts")
    assert len(pods) == scheduling["pods"]
    assert attempts.groupby("pod").size().reindex(pods["pod"], fill_value=0).tolist() == pods["attempts"].tolist()
    assert int(attempts["selected"].isna().sum()) == scheduling["unschedulableAttempts"]


def test_show_prints_the_scheduling_table(store: Path) -> None:
    result = CliRunner().invoke(cli, ["show", "latest", "--store", str(store)])
    assert result.exit_code == 0
    for words in ("scheduling", "pods never bound", "scale-ups", "nodes at the peak"):
        assert words in result.output


def test_export_writes_pods_nodes_attempts_and_kep140(store: Path, tmp_path: Path) -> None:
    folder = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["export", "latest", "--store", str(store), "--format", "csv", "--to", str(folder)]
    )
    assert result.exit_code == 0, result.output
    run = RunStore(store).load("latest")
    for name in ("pods", "nodes", "attempts"):
        assert len(pd.read_csv(folder / f"{name}.csv")) == len(run.table(name))
    document = json.loads((folder / "kep140.json").read_text())
    assert [p["pod"] for p in document["pods"]] == run.table("pods")["pod"].tolist()
