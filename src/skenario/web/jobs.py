"""Runs started from the dashboard: each one a worker process (`web.worker`), followed and cancellable.

A job is one run of a scenario the editor sent. Its text goes to a file in the store's `web/`
folder, the worker runs it into the store, and a thread here reads the worker's JSON lines into
the job's events, which the page follows (server-sent events). Cancelling sends SIGTERM: the run
stops within a second, kept as Failed with what it recorded, as any `skenario run` would be.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

RUNNING = "running"
FINISHED = ("done", "failed", "cancelled")


class TooManyJobs(Exception):
    """As many runs as the server allows are running already."""


@dataclass
class Job:
    """One run from the editor: its worker, and what the worker said so far."""

    id: str
    name: str | None
    process: subprocess.Popen[str]
    events: list[dict[str, Any]] = field(default_factory=list)
    state: str = RUNNING
    run: int | None = None
    message: str | None = None
    end_ns: int | None = None
    cancelled: bool = False
    changed: threading.Condition = field(default_factory=threading.Condition)
    follower: threading.Thread | None = None  # reads the worker's lines, and settles the state at its end

    def as_dict(self) -> dict[str, Any]:
        simulated = next((e["simulated_ns"] for e in reversed(self.events) if e.get("event") == "progress"), 0)
        return {
            "job": self.id,
            "name": self.name,
            "state": self.state,
            "run": self.run,
            "message": self.message,
            "simulated_ns": simulated,
            "end_ns": self.end_ns,
            "progress": min(simulated / self.end_ns, 1.0) if self.end_ns else None,
        }


class Jobs:
    """The runs this server started, at most `limit` at once."""

    def __init__(self, store: Path, files: Path, *, limit: int = 2) -> None:
        self.store = store
        self.files = files
        self.limit = limit
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()

    def start(self, text: str, *, name: str | None = None, tags: list[str] | None = None) -> Job:
        """A worker running `text` into the store (its name and tags checked by the caller)."""
        with self._lock:
            if sum(job.state == RUNNING for job in self._jobs.values()) >= self.limit:
                raise TooManyJobs(f"{self.limit} run(s) from the dashboard are running already; wait for one")
            job_id = secrets.token_hex(8)
            folder = self.store / "web"
            folder.mkdir(parents=True, exist_ok=True)
            scenario = folder / f"{job_id}.yaml"
            scenario.write_text(text, encoding="utf-8")
            command = [sys.executable, "-m", "skenario.web.worker", "--store", str(self.store)]
            command += ["--scenario", str(scenario), "--files", str(self.files)]
            if name:
                command += ["--name", name]
            for tag in tags or []:
                command += ["--tag", tag]
            log = (folder / f"{job_id}.log").open("w+", encoding="utf-8")  # a file: a pipe left unread would fill
            process = subprocess.Popen(  # its own session: a Ctrl-C to the server is not the run's
                command,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,
                env=os.environ | {"PYTHONUNBUFFERED": "1"},
            )
            job = Job(job_id, name, process)
            self._jobs[job_id] = job
        job.follower = threading.Thread(
            target=self._follow, args=(job, scenario, log), daemon=True, name=f"job-{job_id}"
        )
        job.follower.start()
        return job

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def all(self) -> list[Job]:
        return list(self._jobs.values())

    def cancel(self, job_id: str) -> Job | None:
        """Ask the job's run to stop (SIGTERM); it ends as Failed with what it recorded."""
        job = self._jobs.get(job_id)
        if job is not None and job.state == RUNNING:
            job.cancelled = True
            with contextlib.suppress(ProcessLookupError):  # ended on its own meanwhile
                job.process.send_signal(signal.SIGTERM)
        return job

    def stop_all(self) -> None:
        """The server is stopping: every run still going is stopped, and waited for."""
        for job in self.all():
            self.cancel(job.id)
        for job in self.all():
            if job.follower is not None:
                job.follower.join()

    def _follow(self, job: Job, scenario: Path, log: IO[str]) -> None:
        """Read the worker's lines into the job until it ends, then settle its state."""
        assert job.process.stdout is not None
        for line in job.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with job.changed:
                job.events.append(event)
                if event.get("event") == "started":
                    job.end_ns = event.get("end_ns")
                elif event.get("event") in ("done", "failed"):
                    job.run = event.get("run")
                    job.message = event.get("message")
                job.changed.notify_all()
        code = job.process.wait()
        log.seek(0)
        errors = log.read()
        log.close()
        Path(log.name).unlink(missing_ok=True)
        with job.changed:
            if job.cancelled and code != 0:
                job.state = "cancelled"
            elif code == 0:
                job.state = "done"
            else:
                job.state = "failed"
                if job.message is None:  # a crash, not a mistake in the scenario: its last line says what
                    job.message = (errors.strip().splitlines() or [f"the run's process ended with status {code}"])[-1]
            job.changed.notify_all()
        scenario.unlink(missing_ok=True)

    def wait(self, job: Job, seen: int, timeout: float | None = None) -> list[dict[str, Any]]:
        """The job's events after the first `seen`, waiting for one (or the job's end) if none yet: up to
        `timeout` seconds if given."""
        with job.changed:
            if len(job.events) <= seen and job.state == RUNNING:
                job.changed.wait(timeout)
            return job.events[seen:]
