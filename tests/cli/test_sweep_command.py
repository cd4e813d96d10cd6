"""`skenario sweep` and `skenario sweeps` as a user meets them: the table, its JSON and Parquet, the
store's record of the sweep, one line for every bad option, Ctrl-C, and the missing extra."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from scipy.stats import t as student_t

from skenario.cli import cli
from tests.processes import wait_until
from tests.sweeps.test_runner import SCENARIO

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    file = tmp_path / "small.yaml"
    file.write_text(SCENARIO)
    return file


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_a_sweep_prints_its_table_and_writes_every_run(scenario: Path, tmp_path: Path) -> None:
    store, parquet = tmp_path / "store", tmp_path / "runs.parquet"
    code, out, err = invoke(
        "sweep", str(scenario), "--set", "workload.replicas=1,2", "--seeds", "3", "--baseline", "1",
        "--workers", "2", "--store", str(store), "--to", str(parquet), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert "sweep 1 · small: 2 point(s) × 3 seed(s)" in out and "difference from point 1" in out
    assert "stored as sweep 1 (6 runs)" in out
    runs = pd.read_parquet(parquet)
    assert list(zip(runs["point"], runs["seed"], runs["workload.replicas"], strict=True)) == [
        (1, 3, 1), (1, 4, 1), (1, 5, 1), (2, 3, 2), (2, 4, 2), (2, 5, 2)
    ]  # fmt: skip
    # The JSON table, from the store, against the Parquet rows aggregated here.
    code, out, err = invoke("sweeps", "show", "1", "--json", "--baseline", "1", "--store", str(store))
    assert code == 0, err
    document = json.loads(out)
    for point in document["points"]:
        mine = runs[runs["point"] == point["point"]]["p99_ms"]
        half = student_t.ppf(0.975, len(mine) - 1) * mine.std(ddof=1) / len(mine) ** 0.5  # the t formula
        expected = {"mean": mine.mean(), "low": mine.mean() - half, "high": mine.mean() + half}
        assert point["figures"]["p99_ms"] == pytest.approx(expected)
        replicas = runs[runs["point"] == point["point"]]["workload.replicas"]
        assert point["settings"] == {"workload.replicas": int(replicas.iloc[0])}
    paired = document["points"][1]["difference"]["replica_hours"]
    # One replica more for 2 minutes, whatever the seed: exactly 1/30 replica-hour, no spread.
    assert paired == pytest.approx({"mean": 1 / 30, "low": 1 / 30, "high": 1 / 30})


def test_sweeps_lists_and_removes_sweeps(scenario: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    for name in ("first", "second"):
        code, _, err = invoke("sweep", str(scenario), "--seeds", "1", "--name", name, "--store", store, "--no-progress")
        assert code == 0, err
    code, out, _ = invoke("sweeps", "--json", "--store", store)
    listed = json.loads(out)
    assert [(s["sweep"], s["name"], s["runs"], s["phase"]) for s in listed] == [
        (1, "first", 1, "Completed"),
        (2, "second", 1, "Completed"),
    ]
    code, out, _ = invoke("runs", "--sweep", "second", "-o", "json", "--store", store)
    assert [run["sweep"] for run in json.loads(out)] == [2]
    code, out, _ = invoke("sweeps", "rm", "first", "--store", store)
    assert code == 0 and "deleted sweep 1 and its 1 run(s)" in out
    code, out, _ = invoke("runs", "-o", "json", "--store", store)
    assert [run["sweep"] for run in json.loads(out)] == [2]


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--set", "workload.replicas=two,3"], ["--set 'workload.replicas=two,3'", "'two'", "spec.workload.replicas"]),
        (["--set", "workload.replicaz=2,3"], ["--set 'workload.replicaz=2,3'", "not a known field"]),
        (["--set", "traffic[0].rate=1/s"], ["traffic is a mapping, not a list"]),
        (["--set", "workload.replicas=5..2:int", "--design", "lhs", "--samples", "2"], ["low end 5", "high end 2"]),
        (["--set", "workload.replicas=1..4:cubic", "--design", "lhs", "--samples", "2"], ["unknown scale ':cubic'"]),
        (["--set", "workload.replicas=1..4:int"], ["a range needs --design lhs or sobol"]),
        (["--set", "workload.replicas=1,2", "--seeds", "0"], ["--seeds 0"]),
        (["--set", "workload.replicas=1,2", "--baseline", "3"], ["--baseline 3", "1 to 2"]),
        (["--set", "=1,2"], ["--set '=1,2'", "PATH=V1,V2"]),
        (["--dask", "scheduler"], ["--dask scheduler", "tcp://HOST:8786"]),
        (["--dask", "tcp://127.0.0.1:8786", "--workers", "2"], ["--workers is for local processes"]),
        (["--set", "workload.replicas=.inf"], ["--set 'workload.replicas=.inf'", "not a finite number"]),
        (["--set", "seed=1,2"], ["--set 'seed=1,2'", "give the first with --seed"]),
        (["--set", "traffic[3].rate=1/s"], ["--set 'traffic[3].rate=1/s'", "traffic is a mapping"]),
        (["--name", "7"], ["--name", "'7'", "by position"]),
    ],
)
def test_a_bad_option_is_one_line_naming_it_and_nothing_is_kept(
    scenario: Path, tmp_path: Path, options: list[str], words: list[str]
) -> None:
    store = tmp_path / "store"
    code, out, err = invoke("sweep", str(scenario), *options, "--store", str(store), "--no-progress")
    assert code == 2, (out, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    assert not store.exists()  # refused before anything ran or was kept


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_sweep_keeping_the_runs_that_finished(tmp_path: Path, stop: signal.Signals) -> None:
    store = tmp_path / "store"
    command = [sys.executable, "-m", "skenario", "sweep", str(ROOT / "examples" / "quickstart.yaml")]
    command += ["--set", "workload.replicas=4,6", "--seeds", "30", "--workers", "2", "--store", str(store)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: _count(store, "SELECT COUNT(*) FROM sweep_runs") >= 2, process, "two runs kept")
        process.send_signal(stop)
        _out, err = process.communicate()
    finally:
        process.kill()
    assert process.returncode == 128 + stop, err  # 130 for Ctrl-C, 143 for SIGTERM, as a shell reports them
    assert "Traceback" not in err and "interrupted" in err
    kept = _count(store, "SELECT COUNT(*) FROM sweep_runs")
    assert 2 <= kept < 60
    assert _count(store, "SELECT COUNT(*) FROM runs WHERE sweep_id = 1 AND phase = 'Completed'") == kept
    with sqlite3.connect(store / "runs.sqlite") as db:
        assert db.execute("SELECT phase FROM sweeps").fetchall() == [("Interrupted",)]


def _count(store: Path, query: str) -> int:
    try:
        with sqlite3.connect(store / "runs.sqlite") as db:
            return int(db.execute(query).fetchone()[0])
    except sqlite3.OperationalError:  # no store yet, or its tables not made yet
        return 0


def test_without_the_sweep_extra_it_says_which_extra_to_install(scenario: Path) -> None:
    # Optuna made unimportable, as in an install without `skenario[sweep]`.
    program = (
        "import sys; sys.modules['optuna'] = None; from skenario.cli import main; "
        f"sys.argv = ['skenario', 'sweep', {str(scenario)!r}]; main()"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == "error: skenario sweep needs the sweep extra (Optuna not installed): pip install 'skenario[sweep]'"
    )
