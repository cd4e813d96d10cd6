"""`skenario run` and `check` on KEP-140's own Scenario, a kube-scheduler-simulator export or recording.

`read_kep` tells these three inputs from skenario's own scenario format, the same way for both
commands. The run is wholly built and run before anything is written, so a mistake anywhere on the
timeline (an object that does not validate, a patch on an object that is not there at that step)
is one error naming the file, the event's field and the value, and leaves nothing behind. A dry
run (`check`, `run --dry-run`) is that same run in memory, with nothing written: whether an object
is there at a step can hang on the scheduler (a pod preempted, a ReplicaSet's replacement, a Job's
pods done), so only running the timeline finds every such mistake as the real run would.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from skenario.cli.common import err, out
from skenario.cli.scheduling import scheduling_table
from skenario.errors import ScenarioError
from skenario.results.files import atomic_path
from skenario.results.store import RunStore
from skenario.scenario.faketime import STORED_PLUGIN_RESULTS, FakeTimeRun, kep_scenario
from skenario.scenario.format.kep import KepScenario
from skenario.scenario.io import located
from skenario.scenario.ksim import is_export, ksim_annotations, read_export
from skenario.scenario.ksimrecord import Replay, is_recording, parse_recording
from skenario.scheduling.analysis import pod_table


def digest_of(status: dict[str, Any]) -> str:
    """The run's fingerprint: its ScenarioResult, less the simulator's version."""
    result = dict(status["scenarioResult"])
    result.pop("simulatorVersion", None)
    text = json.dumps(result, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class KepInput:
    """A file read as KEP-140: its Scenario, and where it came from (a recording's replay, an export)."""

    scenario: KepScenario
    replay: Replay | None = None  # a kube-scheduler-simulator recording, replayed (docs/ksim.md)
    exported: bool = False  # a kube-scheduler-simulator export

    @property
    def ksim(self) -> bool:
        """From kube-scheduler-simulator: its results carry the annotations its web UI shows."""
        return self.exported or self.replay is not None


def read_kep(file: Path, text: str) -> KepInput | None:
    """The file as KEP-140 input (a recording, an export, a KEP-140 Scenario), or None for skenario's format."""
    if is_recording(text):
        replay = parse_recording(text, str(file)).replay(file.stem)
        return KepInput(KepScenario.model_validate(replay.scenario), replay=replay)
    if is_export(text, str(file)):
        return KepInput(KepScenario.model_validate(read_export(file).as_scenario(file.stem)), exported=True)
    scenario = kep_scenario(text, str(file))
    return None if scenario is None else KepInput(scenario)


def simulate(kep: KepInput, *, file: Path, text: str, seed: int | None) -> FakeTimeRun:
    """The scenario run to its Done event (or paused after its last), in memory: nothing is written.

    A replayed recording skips operations on objects already gone (`skip_gone`) and has a failed
    operation named at the record it came from; otherwise at the event's field and line.
    """
    replay = kep.replay
    if replay is not None:
        err.print(replay.describe(), highlight=False, markup=False, soft_wrap=True)
    try:
        run = FakeTimeRun(kep.scenario, source=str(file), base_dir=file.parent, seed=seed, skip_gone=replay is not None)
        run.run()
    except ScenarioError as exc:
        raise located(exc if replay is None else replay.locate(exc), str(file), text) from None
    return run


def check_kep(kep: KepInput, *, file: Path, text: str, seed: int | None) -> None:
    """`check` and `run --dry-run`: the timeline run in memory, every event's target looked up as it
    runs; a mistake is the real run's error, and nothing is stored or written."""
    run = simulate(kep, file=file, text=text, seed=seed)
    out.print(f"{file}: a valid KEP-140 Scenario with {len(kep.scenario.spec.events)} event(s)", highlight=False)
    summary = run.summary()
    out.print(
        f"  ran in memory to {run.phase.value} at FakeTime {run.time}: {summary.pods:,} pod(s), "
        f"{summary.bound:,} bound, {summary.pending:,} pending at the end; nothing stored",
        highlight=False,
    )


def steps_table(run: FakeTimeRun) -> Table:
    table = Table(title="FakeTime steps")
    for column in ("time", "operations", "scheduled", "unschedulable", "preempted"):
        table.add_column(column, justify="right")
    for row in run.steps():
        table.add_row(*(f"{row[c]:,}" for c in ("time", "operations", "scheduled", "unschedulable", "preempted")))
    return table


def run_kep(
    kep: KepInput,
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
) -> None:
    """Run a KEP-140 Scenario to its Done event (or pause after its last), print, write and store what it did.
    A replayed recording's operations on objects already gone are skipped and counted."""
    scenario = kep.scenario
    started = time.perf_counter()
    run = simulate(kep, file=file, text=text, seed=seed)
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
    documents = run.documents()
    if kep.ksim:  # what kube-scheduler-simulator's web UI shows on each pod, to compare with
        annotations = {pod.name: ksim_annotations(pod.result()) for pod in run.pods()}
        status["ksimAnnotations"] = annotations
        if run.plugin_verdicts() <= STORED_PLUGIN_RESULTS:  # per-node plugin results, as the store's cap
            documents["kep140"]["ksimAnnotations"] = annotations
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
            documents=documents,
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
