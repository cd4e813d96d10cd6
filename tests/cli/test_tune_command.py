"""`skenario tune` as a user meets it: the front printed, the files it writes (the Pareto plot drawn in a
browser), a study extended by running it again, and one line for every bad option."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from playwright.sync_api import Page

from skenario.cli import cli
from skenario.scenario.loader import parse_scenario
from tests.sweeps.test_runner import SCENARIO

ROOT = Path(__file__).resolve().parents[2]
SPACE = ["--space", "workload.replicas=1..3:int"]
GOALS = ["--objective", "min:replica_hours", "--objective", "min:p99", "--constraint", "p99<=400"]


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    file = tmp_path / "small.yaml"
    file.write_text(SCENARIO)
    return file


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_tune_prints_the_front_and_writes_its_files(scenario: Path, tmp_path: Path) -> None:
    store, folder = str(tmp_path / "store"), tmp_path / "out"
    common = [str(scenario), *SPACE, *GOALS, "--seeds", "2", "--store", store, "--out", str(folder), "--no-progress"]
    code, out, err = invoke("tune", *common, "--trials", "4", "--study", "small")
    assert code == 0, err
    assert "study small: Pareto front of 4 trial(s)" in out
    trials = pd.read_parquet(folder / "trials.parquet")
    front = pd.read_parquet(folder / "pareto.parquet")
    assert len(trials) == 4 and set(front["trial"]) <= set(trials["trial"])
    assert front["feasible"].all() and (front["p99_ms_high"] <= 400).all()
    best = parse_scenario((folder / "best.yaml").read_text())  # runnable as it is
    assert best.spec.workload.replicas == front.iloc[0]["workload.replicas"]
    assert (folder / "pareto.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Run again with more trials: the four stay, two more are run.
    code, out, err = invoke("tune", *common, "--trials", "6", "--study", "small", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["study"] == "small" and document["trials"] == 6
    assert pd.read_parquet(folder / "trials.parquet").head(4).equals(trials)
    code, out, _ = invoke("sweeps", "--json", "--store", store)
    assert [(s["kind"], s["name"], s["points"], s["runs"]) for s in json.loads(out)] == [("study", "small", 6, 12)]


def test_the_reports_pareto_plot_renders_in_a_browser(scenario: Path, tmp_path: Path, browser_page: Page) -> None:
    folder = tmp_path / "out"
    code, _, err = invoke("tune", str(scenario), *SPACE, *GOALS, "--trials", "3", "--seeds", "2", "--out", str(folder))
    assert code == 0, err
    browser_page.goto((folder / "report.html").as_uri())
    browser_page.locator("#chart-pareto svg.main-svg").first.wait_for(state="attached")  # plotly drew the front
    text = browser_page.locator("body").inner_text()
    assert "Pareto front" in text and "best.yaml" in text


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ([*GOALS], ["--space: give at least one"]),
        ([*SPACE], ["--objective: give at least one"]),
        ([*SPACE, "--objective", "min:cost"], ["cost needs a price", "--price-per-replica-hour"]),
        ([*SPACE, "--objective", "fast:p99"], ["--objective 'fast:p99'", "min:FIGURE"]),
        ([*SPACE, *GOALS, "--constraint", "p99<300"], ["--constraint 'p99<300'", "FIGURE<=BOUND"]),
        (["--space", "workload.replicas=3..1:int", *GOALS], ["--space 'workload.replicas=3..1:int'", "low end 3"]),
        (
            ["--space", "workload.replicaz=1..3:int", *GOALS],
            ["--space 'workload.replicaz=1..3:int'", "not a known field"],
        ),
        ([*SPACE, *GOALS, "--trials", "0"], ["--trials 0"]),
        ([*SPACE, "--space", "workload.replicas=1,2", *GOALS], ["workload.replicas", "given twice"]),
        ([*SPACE, *GOALS, "--study", "latest"], ["--study", "by position"]),
    ],
)
def test_a_bad_option_is_one_line_naming_it(
    scenario: Path, tmp_path: Path, options: list[str], words: list[str]
) -> None:
    store = tmp_path / "store"
    code, out, err = invoke("tune", str(scenario), *options, "--store", str(store), "--out", str(tmp_path / "o"))
    assert code == 2, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    assert not store.exists() and not (tmp_path / "o").exists()


def test_a_study_removed_can_begin_anew_under_its_name(scenario: Path, tmp_path: Path) -> None:
    store, out = str(tmp_path / "store"), str(tmp_path / "out")
    first = [*SPACE, "--objective", "min:replica_hours", "--trials", "2", "--seeds", "1"]
    assert invoke("tune", str(scenario), *first, "--study", "s1", "--store", store, "--out", out)[0] == 0
    code, out_text, _ = invoke("sweeps", "rm", "s1", "--store", store)
    assert code == 0 and "deleted sweep 1" in out_text
    # The same name asked differently: a new study, with none of the old one's trials.
    other = ["--space", "workload.replicas=4..5:int", "--objective", "max:p99", "--trials", "2", "--seeds", "1"]
    code, _, err = invoke("tune", str(scenario), *other, "--study", "s1", "--store", store, "--out", out)
    assert code == 0, err
    trials = pd.read_parquet(tmp_path / "out" / "trials.parquet")
    assert len(trials) == 2 and trials["workload.replicas"].between(4, 5).all()


def test_slo_compliance_needs_the_scenarios_objectives(tmp_path: Path) -> None:
    quickstart = ROOT / "examples" / "quickstart.yaml"  # states no spec.slo
    code, _, err = invoke(
        "tune", str(quickstart), "--space", "workload.replicas=2..8:int", "--objective", "max:slo",
        "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert code == 2 and "slo_compliance needs objectives" in err and "no spec.slo" in err
