"""`skenario run` on KEP-140's own Scenario (or a kube-scheduler-simulator export): FakeTime, step by step.

The run is wholly built and run before anything is written, so a mistake anywhere on the timeline
(an object that does not validate, a patch on an object that is not there at that step) is one
error naming the file, the event's field and the value, and leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from skenario.cli.common import err, out
from skenario.cli.scheduling import scheduling_table
from skenario.errors import ScenarioError
from skenario.results.files import atomic_path
from skenario.results.store import RunStore
from skenario.scenario.faketime import FakeTimeRun
from skenario.scenario.format.kep import KepScenario
from skenario.scenario.io import located
from skenario.scenario.ksim import ksim_annotations
from skenario.scheduling.analysis import pod_table


def digest_of(status: dict[str, Any]) -> str:
    """The run's fingerprint: its ScenarioResult, less the simulator's version."""
    result = dict(status["scenarioResult"])
    result.pop("simulatorVersion", None)
    text = json.dumps(result, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def steps_table(run: FakeTimeRun) -> Table:
    table = Table(title="FakeTime steps")
    for column in ("time", "operations", "scheduled", "unschedulable", "preempted"):
        table.add_column(column, justify="right")
    for row in run.steps():
        table.add_row(*(f"{row[c]:,}" for c in ("time", "operations", "scheduled", "unschedulable", "preempted")))
    return table


def run_kep(
    scenario: KepScenario,
    *,
    file: Path,
    text: str,
    seed: int | None,
    as_json: bool,
    store: Path | None,
    no_store: bool,
    name: str | None,
    tags: tuple[str, ...],
    pods_file: Path | None,
    results_file: Path | None,
    ksim: bool = False,
    skip_gone: bool = False,
) -> None:
    """Run a KEP-140 Scenario to its Done event (or pause after its last), print, write and store what it did.
    With `skip_gone` (a replayed recording) an operation on an object already gone is skipped and counted."""
    started = time.perf_counter()
    try:
        run = FakeTimeRun(scenario, source=str(file), base_dir=file.parent, seed=seed, skip_gone=skip_gone)
        run.run()
    except ScenarioError as exc:
        raise located(exc, str(file), text) from None
    if run.skipped:
        err.print(
            f"{len(run.skipped)} recorded operation(s) skipped: their object was already gone here "
            f"(preempted or evicted): {', '.join(run.skipped[:5])}{' ...' if len(run.skipped) > 5 else ''}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    wall = time.perf_counter() - started
    status = run.status()
    digest = digest_of(status)
    if ksim:  # what kube-scheduler-simulator's web UI shows on each pod, to compare with
        status["ksimAnnotations"] = {pod.name: ksim_annotations(pod.result()) for pod in run.pods()}
    if results_file is not None:
        with atomic_path(results_file) as partial:
            partial.write_text(json.dumps(status, indent=1) + "\n")
    if pods_file is not None:
        with atomic_path(pods_file) as partial:
            pod_table(run.pods()).to_csv(partial, index=False)
    run_id = None
    writer = RunStore(store)
    if not no_store:
        run_id = writer.save(
            name=scenario.name,
            scenario_file=str(file),
            scenario_text=text,
            seed=int(run.seed or 0),
            phase=run.phase.value,
            message=run.message,
            documents=run.documents(),
            digest=digest,
            simulated_ns=run.env.now(),
            wall_s=wall,
            run_name=name,
            tags=tags,
        )
    summary = run.summary()
    if as_json:
        document = {
            "scenario": scenario.name,
            "phase": run.phase.value,
            "message": run.message,
            "time": run.time,
            "digest": digest,
            "wall_s": wall,
            "scheduling": summary.as_dict(),
            "steps": run.steps(),
            "run": run_id,
        }
        click.echo(json.dumps(document, indent=2))
        return
    out.print(steps_table(run))
    out.print(scheduling_table(summary))
    out.print(f"digest: [bold]{digest}[/]", highlight=False)
    out.print(f"phase: {run.phase.value}: {run.message}", highlight=False)
    if run_id is not None:
        out.print(f"stored as run [bold]{run_id}[/] in {writer.path}", highlight=False)
    if results_file is None:
        err.print("write the KEP's ScenarioStatus (every PodResult and plugin result) with --results FILE.json")
