"""Runs from the editor: each in a worker process, its progress followed, and cancelled as any run is."""

from __future__ import annotations

from pathlib import Path

from skenario.results.store import RunStore
from skenario.web.app import STATIC
from skenario.web.jobs import FINISHED, Job, Jobs, TooManyJobs

STARTER = (STATIC.parent / "starter.yaml").read_text()


def settle(jobs: Jobs, job: Job) -> list[dict[str, object]]:
    """Every event of the job, once it has ended."""
    while job.state not in FINISHED:
        jobs.wait(job, len(job.events))
    return job.events


def test_a_run_reports_its_progress_and_lands_in_the_store(tmp_path: Path) -> None:
    jobs = Jobs(tmp_path / "store", tmp_path)
    job = jobs.start(STARTER.replace("duration: 30m", "duration: 2m"), name="editor", tags=["web"])
    events = settle(jobs, job)
    assert job.state == "done", job.message
    started = events[0]
    assert started["event"] == "started" and started["end_ns"] == 120 * 10**9
    progress = [e["simulated_ns"] for e in events if e["event"] == "progress"]
    assert progress == sorted(progress) and progress[-1] == 120 * 10**9
    record = RunStore(tmp_path / "store").record(job.run)  # type: ignore[arg-type]
    assert (record["name"], record["tags"], record["phase"]) == ("editor", ["web"], "Completed")
    assert job.as_dict()["progress"] == 1.0


def test_a_cancelled_run_is_kept_as_failed_with_what_it_recorded(tmp_path: Path) -> None:
    jobs = Jobs(tmp_path / "store", tmp_path)
    job = jobs.start(STARTER.replace("duration: 30m", "duration: 400h"))
    while not any(e["event"] == "progress" for e in job.events):  # under way: its first stretch written
        jobs.wait(job, len(job.events))
    jobs.cancel(job.id)
    settle(jobs, job)
    assert job.state == "cancelled"
    record = RunStore(tmp_path / "store").record(job.run)  # type: ignore[arg-type]
    assert record["phase"] == "Failed" and "SIGTERM" in record["message"]
    assert 0 < record["simulated_ns"] < 400 * 3600 * 10**9


def test_no_more_than_the_limit_run_at_once(tmp_path: Path) -> None:
    jobs = Jobs(tmp_path / "store", tmp_path, limit=1)
    job = jobs.start(STARTER.replace("duration: 30m", "duration: 400h"))
    try:
        jobs.start(STARTER)
    except TooManyJobs as refused:
        assert "1 run(s)" in str(refused)
    else:
        raise AssertionError("a second run started past the limit")
    finally:
        jobs.stop_all()
    assert job.state in FINISHED
