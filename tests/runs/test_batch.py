"""A batch replay document as a run: what it replays, what the store keeps, and a replay to a moment."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from skenario.core.time import MINUTE, SECOND
from skenario.errors import SkenarioError
from skenario.runs import BatchRun, open_run
from skenario.runs.batch import GRID, MAX_SAMPLES, replay_to, sample_interval
from skenario.scheduling.queues.capacity_config import CapacityConfig, read_capacity_config
from skenario.scheduling.queues.yarn_replay import YarnReplay
from skenario.scheduling.traces.sls import SlsTrace

ROOT = Path(__file__).resolve().parents[2]
YARN = ROOT / "examples" / "yarn"
KUEUE = ROOT / "examples" / "kueue"
DOCUMENT = YARN / "capacity-replay.yaml"


def replayed(path: Path = DOCUMENT, **kwargs: object) -> BatchRun:
    run = open_run(path, **kwargs)  # type: ignore[arg-type]
    assert isinstance(run, BatchRun)
    run.run()
    return run


@pytest.fixture(scope="module")
def whole() -> BatchRun:
    return replayed()


def test_the_document_replays_what_its_files_say(whole: BatchRun) -> None:
    # The same replay built by hand from the files the document names, with its seed (7).
    reader = SlsTrace(YARN / "jobs.json", YARN / "nodes.json")
    by_hand = YarnReplay(reader.jobs, reader.nodes(), read_capacity_config(YARN / "capacity-scheduler.xml"), seed=7)
    by_hand.run()
    assert whole.jobs() == by_hand.jobs_table()
    assert whole.scheduler == "CapacityScheduler"


def test_the_stored_document_names_its_files_absolutely_and_runs_from_anywhere(
    whole: BatchRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = whole.record()
    stored = yaml.safe_load(record.scenario_text)
    spec = stored["spec"]
    for path in (spec["trace"], spec["nodes"], spec["capacityScheduler"]["file"]):
        assert Path(path).is_absolute() and Path(path).is_file()
    monkeypatch.chdir(tmp_path)
    again = open_run(Path("stored.yaml"), text=record.scenario_text)
    assert isinstance(again, BatchRun)
    again.run()
    assert again.digest() == record.digest


def test_files_are_read_relative_to_the_document(tmp_path: Path, whole: BatchRun) -> None:
    for name in ("jobs.json", "nodes.json", "capacity-scheduler.xml", "capacity-replay.yaml"):
        shutil.copy(YARN / name, tmp_path / name)
    assert replayed(tmp_path / "capacity-replay.yaml").digest() == whole.digest()


@pytest.mark.parametrize("moment", ["20m", "1h05m", "2h30m"])
def test_a_replay_to_a_moment_agrees_with_the_whole_replay_up_to_it(whole: BatchRun, moment: str) -> None:
    """Causality: what had happened by T in the whole replay happened, at the same instants, in the
    replay stopped at T, and nothing after T did."""
    until = {"20m": 20 * MINUTE, "1h05m": 65 * MINUTE, "2h30m": 150 * MINUTE}[moment]
    short = replay_to(whole.record().scenario_text, "stored", seed=whole.seed, until=until)
    t = until / SECOND
    for full, cut in zip(whole.jobs(), short.jobs(), strict=True):
        assert full["job"] == cut["job"]
        for key in ("started_s", "finished_s"):
            if full[key] is not None and full[key] < t:
                assert cut[key] == full[key], (full["job"], key)
            else:
                assert cut[key] is None or cut[key] < t, (full["job"], key)


def test_a_replay_to_the_end_is_the_run_again(whole: BatchRun) -> None:
    assert replay_to(whole.record().scenario_text, "stored", seed=whole.seed, until=None).digest() == whole.digest()


def test_the_series_holds_the_cluster_on_its_grid(whole: BatchRun) -> None:
    rows = whole.series_rows()
    interval = sample_interval(whole.simulated())
    assert [row["time_ns"] for row in rows] == list(range(0, whole.simulated() + 1, interval))
    total = 4 * 16  # GB: four nodes of 16 GB (nodes.json)
    for row in rows:
        queues = row["queue.root.prod.allocated.memory"] + row["queue.root.dev.allocated.memory"]
        assert row["cluster.allocated.memory"] == pytest.approx(queues)
        assert row["cluster.allocated.memory"] + row["cluster.available.memory"] == pytest.approx(total)
        assert 0 <= queues <= total


@pytest.mark.parametrize("end", [1, 59 * SECOND, 2_000 * SECOND, 3 * 3600 * SECOND, 31 * 86400 * SECOND])
def test_the_grid_is_the_finest_that_keeps_to_the_rows_allowed(end: int) -> None:
    interval = sample_interval(end)
    assert end // interval < MAX_SAMPLES
    finer = [step for step in GRID if step < interval]
    assert all(end // step >= MAX_SAMPLES for step in finer)
    assert interval % SECOND == 0


def test_a_kueue_document_keeps_one_row_per_workload(tmp_path: Path) -> None:
    document = {
        "apiVersion": "skenario.dev/v1alpha1",
        "kind": "BatchReplay",
        "metadata": {"name": "kueue"},
        "spec": {
            "trace": str(KUEUE / "pods.csv"),
            "nodes": str(KUEUE / "nodes.csv"),
            "kueue": {"file": str(KUEUE / "manifests.yaml")},
        },
    }
    path = tmp_path / "kueue.yaml"
    path.write_text(yaml.safe_dump(document))
    run = replayed(path)
    record = run.record()
    batch = record.named_documents["batch"]
    assert batch["scheduler"] == "Kueue"
    assert len(record.named_documents["jobs"]) == batch["kueue"]["workloads"]
    assert len(record.named_documents["pods"]) == batch["summary"]["pods"]
    assert any(name.startswith("clusterQueue.team-a.") for name in record.series[0])
    workloads = record.named_documents["jobs"]
    assert sum(w["evictions"] for w in workloads) == batch["kueue"]["evictions"]
    for workload in workloads:
        if workload["admitted_s"] is not None:
            assert workload["wait_s"] == pytest.approx(workload["admitted_s"] - workload["created_s"])
        assert (workload["why"] is None) == (workload["finished_s"] is not None)


def bad(tmp_path: Path, spec: dict[str, object]) -> SkenarioError:
    document = {"apiVersion": "skenario.dev/v1alpha1", "kind": "BatchReplay", "metadata": {"name": "x"}, "spec": spec}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    with pytest.raises(SkenarioError) as caught:
        open_run(path)
    assert caught.value.file is not None
    return caught.value


def test_two_queue_schedulers_are_refused(tmp_path: Path) -> None:
    error = bad(
        tmp_path,
        {
            "trace": str(YARN / "jobs.json"),
            "format": "sls",
            "capacityScheduler": {"file": str(YARN / "capacity-scheduler.xml")},
            "kueue": {"file": str(KUEUE / "manifests.yaml")},
        },
    )
    assert "capacityScheduler and kueue" in str(error)


def test_a_yarn_scheduler_needs_an_sls_trace(tmp_path: Path) -> None:
    error = bad(tmp_path, {"trace": "pods.csv", "capacityScheduler": {"file": "capacity-scheduler.xml"}})
    assert "format: sls" in str(error)


def test_a_missing_configuration_names_its_file(tmp_path: Path) -> None:
    error = bad(
        tmp_path,
        {"trace": str(YARN / "jobs.json"), "format": "sls", "capacityScheduler": {"file": "nowhere.xml"}},
    )
    assert error.file is not None and error.file.endswith("nowhere.xml")


def test_an_unknown_field_names_the_document_and_the_field(tmp_path: Path) -> None:
    error = bad(tmp_path, {"trace": str(YARN / "jobs.json"), "format": "sls", "capacity": 3})
    assert error.file is not None and error.file.endswith("bad.yaml")
    assert error.field == "spec.capacity"


def test_properties_written_as_numbers_or_booleans_are_their_text(tmp_path: Path) -> None:
    document = yaml.safe_load(DOCUMENT.read_text())
    document["spec"]["capacityScheduler"]["properties"] = {
        "yarn.scheduler.capacity.root.dev.maximum-capacity": 40,
        "yarn.resourcemanager.scheduler.monitor.enable": False,
    }
    for name in ("jobs.json", "nodes.json", "capacity-scheduler.xml"):
        shutil.copy(YARN / name, tmp_path / name)
    path = tmp_path / "replay.yaml"
    path.write_text(yaml.safe_dump(document))
    run = open_run(path)
    assert isinstance(run, BatchRun) and isinstance(run.replay, YarnReplay)
    assert run.replay.preemption is None  # the monitor switched off over the file's true
    config = run.replay.config
    assert isinstance(config, CapacityConfig)
    dev = next(q for q in config.leaves() if q.path == "root.dev")
    assert dev.maximum_capacity == pytest.approx(40.0)


def test_each_queues_preemptions_over_time_end_at_its_count(whole: BatchRun) -> None:
    last: dict[str, int] = {}
    for row in whole.queue_rows():  # in time order: the last row of a queue is its final state
        last[row["queue"]] = row["preempted.containers"]
    counts = {queue: q["preemptedContainers"] for queue, q in whole.batch_summary()["summary"]["queues"].items()}
    assert last == counts and counts["root.dev"] > 0  # prod reclaims its guarantee from dev in the example
    series = whole.series_rows()
    dev = [row["queue.root.dev.preempted.containers"] for row in series]
    assert dev == sorted(dev)  # a count so far never falls
