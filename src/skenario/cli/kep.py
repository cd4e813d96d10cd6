"""What `skenario run` and `check` print for KEP-140 input (a KEP-140 Scenario, a kube-scheduler-simulator
export or recording), opened and run by `skenario.runs` (`open_run`, `examine`, `execute`).

The run is wholly built and run before anything is written, so a mistake anywhere on the timeline
is one error naming the file, the event's field and the value, and leaves nothing behind.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from skenario.cli.common import err, out, print_document, print_json
from skenario.cli.scheduling import scheduling_table, write_pod_csv
from skenario.results.files import atomic_path
from skenario.runs import Executed, KepRun


def kep_checked(file: Path, run: KepRun, output: str = "table") -> None:
    """`check` and `run --dry-run`: the timeline run in memory, every event's target looked up as it
    runs; a mistake is the real run's error, and nothing is stored or written."""
    announce(run)
    run.run()
    if output in ("json", "yaml"):
        summary = run.summary()
        document = {"file": str(file), "valid": True, "kind": "kep140", "events": len(run.scenario.spec.events)}
        document |= {"phase": run.phase.value, "time": run.time, "scheduling": summary.as_dict()}
        print_document(document, output)
        return
    out.print(f"{file}: a valid KEP-140 Scenario with {len(run.scenario.spec.events)} event(s)", highlight=False)
    summary = run.summary()
    out.print(
        f"  ran in memory to {run.phase.value} at FakeTime {run.time}: {summary.pods:,} pod(s), "
        f"{summary.bound:,} bound, {summary.pending:,} pending at the end; nothing stored",
        highlight=False,
    )


def announce(run: KepRun) -> None:
    """A replayed recording says what it replays, before it runs."""
    if run.replay is not None:
        err.print(run.replay.describe(), highlight=False, markup=False, soft_wrap=True)


def steps_table(run: KepRun) -> Table:
    table = Table(title="FakeTime steps")
    for column in ("time", "operations", "scheduled", "unschedulable", "preempted"):
        table.add_column(column, justify="right")
    for row in run.steps():
        table.add_row(*(f"{row[c]:,}" for c in ("time", "operations", "scheduled", "unschedulable", "preempted")))
    return table


def render_kep(run: KepRun, done: Executed, *, output: str, pods_file: Path | None, results_file: Path | None) -> None:
    """Print and write what a KEP-140 run did. A replayed recording's operations on objects already gone
    were skipped: they are counted."""
    if run.skipped:
        err.print(
            f"{len(run.skipped)} recorded operation(s) skipped: their object was already gone here "
            f"(preempted or evicted): {', '.join(run.skipped[:5])}{' ...' if len(run.skipped) > 5 else ''}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    if results_file is not None:
        with atomic_path(results_file) as partial:
            partial.write_text(json.dumps(run.annotated_status(), indent=1) + "\n")
    if pods_file is not None:
        write_pod_csv(run.pods(), pods_file)
    summary = run.summary()
    digest = run.digest()
    if output in ("json", "yaml"):
        document = {
            "scenario": run.scenario.name,
            "phase": run.phase.value,
            "message": run.message,
            "time": run.time,
            "digest": digest,
            "wall_s": done.wall_s,
            "scheduling": summary.as_dict(),
            "steps": run.steps(),
            "run": done.run_id,
        }
        print_json(document, output)
        return
    out.print(steps_table(run))
    out.print(scheduling_table(summary))
    out.print(f"digest: [bold]{digest}[/]", highlight=False, markup=True)
    out.print(f"phase: {run.phase.value}: {run.message}", highlight=False)
    if done.run_id is not None:
        out.print(f"stored as run [bold]{done.run_id}[/] in {escape(str(done.store))}", highlight=False, markup=True)
    if results_file is None:
        err.print("write the KEP's ScenarioStatus (every PodResult and plugin result) with --results FILE.json")
