"""Batch replays in the run store, as a user meets them: schedule or run keeps one; show, export,
report and explain read it; sweep and tune vary it."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from skenario.cli import cli

ROOT = Path(__file__).resolve().parents[2]
YARN = ROOT / "examples" / "yarn"
DOCUMENT = YARN / "capacity-replay.yaml"
DEV_MAXIMUM = 'capacityScheduler.properties["yarn.scheduler.capacity.root.dev.maximum-capacity"]'


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.stdout, result.stderr


def ok(*args: str) -> str:
    code, out, err = invoke(*args)
    assert code == 0, (args, err)
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding the example replay as run 1 (`skenario run`) and as run 2 (`skenario schedule`)."""
    folder = tmp_path_factory.mktemp("store")
    ok("run", str(DOCUMENT), "--store", str(folder), "--name", "yarn", "-o", "json")
    ok(
        "schedule", str(YARN / "jobs.json"), "--format", "sls", "--nodes", str(YARN / "nodes.json"),
        "--capacity-scheduler", str(YARN / "capacity-scheduler.xml"), "--seed", "7", "--store", str(folder),
    )  # fmt: skip
    return folder


def test_schedule_and_run_keep_the_same_replay(store: Path) -> None:
    first = json.loads(ok("show", "1", "--store", str(store), "-o", "json"))
    second = json.loads(ok("show", "2", "--store", str(store), "-o", "json"))
    assert first["digest"] == second["digest"]
    jobs = sum(1 for _ in (YARN / "jobs.json").open())  # one job per line in the example's trace
    assert first["batch"]["summary"]["jobs"] == jobs
    assert first["batch"]["scheduler"] == "CapacityScheduler"


def test_show_prints_the_queues(store: Path) -> None:
    out = ok("show", "yarn", "--store", str(store))
    assert "root.prod" in out and "root.dev" in out and "wait for the AM to start" in out


def test_export_writes_one_row_per_job_and_each_queue_over_time(store: Path, tmp_path: Path) -> None:
    folder = tmp_path / "export"
    ok("export", "yarn", "--store", str(store), "--format", "csv", "--to", str(folder))
    jobs = list(csv.DictReader((folder / "jobs.csv").open()))
    assert len(jobs) == sum(1 for _ in (YARN / "jobs.json").open())
    for job in jobs:
        if job["started_s"]:
            assert float(job["wait_s"]) == pytest.approx(float(job["started_s"]) - float(job["submitted_s"]))
    series = list(csv.DictReader((folder / "series.csv").open()))
    # SLS's names for a queue's figures, and no column of a service run's.
    assert "queue.root.dev.allocated.memory" in series[0] and "replicas_desired" not in series[0]
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["batch"]["scheduler"] == "CapacityScheduler"


def test_report_draws_each_queue_and_the_waits(store: Path, tmp_path: Path) -> None:
    page = tmp_path / "yarn.html"
    ok("report", "yarn", "--store", str(store), "--to", str(page))
    text = page.read_text()
    for chart in ("chart-queue-0", "chart-queue-1", "chart-queue-2", "chart-queue-3", "chart-waits"):
        assert f'id="{chart}"' in text, chart
    assert "root.dev" in text


def test_explain_says_why_a_job_waits_at_a_moment(store: Path) -> None:
    document = json.loads(ok("explain", "yarn", "--store", str(store), "--at", "1h05m", "--job", "dev_9", "-o", "json"))
    (job,) = document["jobs"]
    assert job["started_s"] is None
    # dev's AM limit by hand: maximum-am-resource-percent 0.1 of dev's 30% of 64 GB is 1,966 MB,
    # rounded up to the 1,024 MB minimum allocation: 2,048 MB, which two 1,024 MB AMs fill.
    assert "AM limit of 2048 MB" in job["why"]
    at_end = json.loads(ok("explain", "yarn", "--store", str(store), "--job", "dev_9", "-o", "json"))
    assert at_end["jobs"][0]["why"] is None and at_end["jobs"][0]["state"] == "finished"


def test_explain_lists_only_jobs_submitted_and_not_finished(store: Path) -> None:
    document = json.loads(ok("explain", "yarn", "--store", str(store), "--at", "1h05m", "-o", "json"))
    names = [job["job"] for job in document["jobs"]]
    assert names and all(job["submitted_s"] <= 65 * 60 for job in document["jobs"])
    assert "dev_9" in names and "prod_1" not in names  # prod_1 finished within the first hour


def test_explain_refuses_a_job_the_replay_does_not_have(store: Path) -> None:
    code, _, err = invoke("explain", "yarn", "--store", str(store), "--job", "nope")
    assert code == 2 and "no job or workload 'nope'" in err


def test_explain_refuses_jobs_for_a_service_run(tmp_path: Path) -> None:
    ok("run", str(ROOT / "examples" / "quickstart.yaml"), "--store", str(tmp_path), "-o", "json")
    code, _, err = invoke("explain", "latest", "--store", str(tmp_path), "--job", "x")
    assert code == 2 and "not a batch replay" in err


def test_check_reads_the_replay_without_running_it() -> None:
    document = json.loads(ok("check", str(DOCUMENT), "-o", "json"))
    assert document["kind"] == "BatchReplay" and document["jobs"] == 72 and document["nodes"] == 4


def test_a_sweep_varies_a_property_and_compares_waits(tmp_path: Path) -> None:
    out = ok(
        "sweep", str(DOCUMENT), "--set", f"{DEV_MAXIMUM}=40,60", "--seeds", "1", "--store", str(tmp_path), "-o", "json",
    )  # fmt: skip
    document = json.loads(out)
    points = {p["settings"][DEV_MAXIMUM]: p for p in document["points"]}
    assert set(points) == {40, 60}
    runs = json.loads(ok("runs", "--store", str(tmp_path), "-o", "json"))
    assert len(runs) == 2
    for run in runs:  # each point's figure is its stored jobs' mean wait
        folder = tmp_path / f"export-{run['run']}"
        ok("export", str(run["run"]), "--store", str(tmp_path), "--format", "csv", "--to", str(folder))
        properties = yaml.safe_load((folder / "scenario.yaml").read_text())["spec"]["capacityScheduler"]["properties"]
        setting = int(properties["yarn.scheduler.capacity.root.dev.maximum-capacity"])
        waits = [float(j["wait_s"]) for j in csv.DictReader((folder / "jobs.csv").open()) if j["wait_s"]]
        assert points[setting]["figures"]["wait_mean_s"]["mean"] == pytest.approx(sum(waits) / len(waits))
        assert points[setting]["figures"]["p99_ms"]["mean"] is None
    # What docs/how-to/traces.md says of this sweep: holding dev to 40% preempts fewer containers and
    # makes the mean wait longer than 60% does.
    figures = {setting: point["figures"] for setting, point in points.items()}
    assert figures[40]["preempted"]["mean"] < figures[60]["preempted"]["mean"]
    assert figures[40]["wait_mean_s"]["mean"] > figures[60]["wait_mean_s"]["mean"]


def test_tune_refuses_a_service_figure_for_a_replay(tmp_path: Path) -> None:
    code, _, err = invoke(
        "tune", str(DOCUMENT), "--space", f"{DEV_MAXIMUM}=40..80:int", "--objective", "min:p99_ms",
        "--trials", "2", "--store", str(tmp_path),
    )  # fmt: skip
    assert code == 2 and "batch replay" in err


def test_schedule_refuses_kube_scheduler_options_for_a_yarn_replay(tmp_path: Path) -> None:
    code, _, err = invoke(
        "schedule", str(YARN / "jobs.json"), "--format", "sls", "--nodes", str(YARN / "nodes.json"),
        "--capacity-scheduler", str(YARN / "capacity-scheduler.xml"), "--pods", str(tmp_path / "pods.csv"),
        "--store", str(tmp_path),
    )  # fmt: skip
    assert code == 2 and "--pods" in err
    assert not (tmp_path / "pods.csv").exists() and not (tmp_path / "runs.sqlite").exists()


def test_schedule_no_store_keeps_nothing(tmp_path: Path) -> None:
    ok(
        "schedule", str(YARN / "jobs.json"), "--format", "sls", "--nodes", str(YARN / "nodes.json"),
        "--capacity-scheduler", str(YARN / "capacity-scheduler.xml"), "--store", str(tmp_path), "--no-store",
    )  # fmt: skip
    assert not (tmp_path / "runs.sqlite").exists()


def test_compare_holds_replays_side_by_side(store: Path) -> None:
    rows = {
        row[0]: row[1:] for row in csv.reader(ok("compare", "1", "2", "--store", str(store), "-o", "csv").splitlines())
    }
    assert rows["scheduler"] == ["CapacityScheduler", "CapacityScheduler"]
    assert rows["jobs submitted / finished (YARN), or pods / bound"] == ["72 / 72", "72 / 72"]
    assert rows["digest"][0] == rows["digest"][1]


def test_compare_refuses_a_replay_beside_a_scenario(tmp_path: Path) -> None:
    ok("run", str(DOCUMENT), "--store", str(tmp_path), "-o", "json")
    ok("run", str(ROOT / "examples" / "quickstart.yaml"), "--store", str(tmp_path), "-o", "json")
    code, _, err = invoke("compare", "1", "2", "--store", str(tmp_path))
    assert code == 2 and "compare runs of one kind" in err


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"trace": "/", "format": "sls", "capacityScheduler": {"file": "capacity-scheduler.xml"}}, "Is a directory"),
        ({"trace": "jobs.json", "format": "sls", "nodes": "nowhere.json"}, "No such file"),
        ({"trace": "jobs.json", "format": "sls", "sampleInterval": "0s"}, "spec.sampleInterval"),
        ({"trace": "jobs.json", "format": "sls", "until": "-5s"}, "spec.until"),
        ({"trace": "jobs.json", "format": "sls", "fairScheduler": {"file": "capacity-scheduler.xml"}}, "<allocations>"),
        (
            {
                "trace": "jobs.json",
                "format": "sls",
                "nodes": "nodes.json",
                "capacityScheduler": {
                    "file": "capacity-scheduler.xml",
                    "properties": {"yarn.scheduler.capacity.root.dev.capacity": "abc"},
                },
            },
            "not a number",
        ),
    ],
)
def test_a_bad_replay_document_is_one_line_and_keeps_nothing(
    tmp_path: Path, spec: dict[str, object], words: str
) -> None:
    document = {"apiVersion": "skenario.dev/v1alpha1", "kind": "BatchReplay", "metadata": {"name": "bad"}, "spec": spec}
    for name in ("jobs.json", "nodes.json", "capacity-scheduler.xml"):  # the files the spec names, beside it
        shutil.copy(YARN / name, tmp_path / name)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    code, _, err = invoke("run", str(path), "--store", str(tmp_path / "store"))
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "store" / "runs.sqlite").exists()
