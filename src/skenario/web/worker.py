"""One run from the dashboard's editor, in a process of its own: `python -m skenario.web.worker`.

The run goes through `runs.open_run` and `runs.execute` as `skenario run` does (supervised, streamed
into the store, kept as Failed with what it recorded when stopped), with plugins refused: a scenario
from the web never runs code. A process of its own because a run's supervision answers signals on
its main thread, and so that cancelling one is SIGTERM, as for any run. It tells the server how far
it got as JSON lines on stdout:

    {"event": "started", "end_ns": ...}       the run opened (its input read and checked whole)
    {"event": "progress", "simulated_ns": ...} at each of the run's STEPS stretches
    {"event": "done", "run": 12, "phase": "Completed", "message": "..."}
    {"event": "failed", "message": "...", "run": null | 12}
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from skenario.errors import SkenarioError
from skenario.results.store import RunStore
from skenario.runs import PluginFailed, Stopped, describe, execute, keep_unbuilt, open_run
from skenario.scenario.wiring.plugins import PluginPolicy, applied


def say(**event: Any) -> None:
    """One line to the server."""
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m skenario.web.worker")
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--scenario", type=Path, required=True, help="the scenario's text, in a file")
    parser.add_argument("--files", type=Path, required=True, help="where the files the scenario names are")
    parser.add_argument("--name", default=None)
    parser.add_argument("--tag", action="append", default=[])
    args = parser.parse_args(argv)
    store = RunStore(args.store)
    text = args.scenario.read_text(encoding="utf-8")
    with applied(PluginPolicy(refuse=True)):
        try:
            try:
                run = open_run(text, base_dir=args.files, plugins="refuse")
            except PluginFailed as failed:
                keep_unbuilt(failed, store, name=args.name, tags=args.tag)
                raise
            end = getattr(run, "end", None)
            say(event="started", end_ns=end, kind=run.kind)
            done = execute(
                run,
                store,
                scenario_file="(the dashboard's editor)",
                name=args.name,
                tags=args.tag,
                progress=lambda now: say(event="progress", simulated_ns=now),
            )
        except Stopped as stopped:
            say(event="failed", message=str(stopped), run=stopped.run_id)
            return stopped.exit_code
        except SkenarioError as exc:
            say(event="failed", message=str(exc), run=None)
            return 2
    core = describe(run)
    say(event="done", run=done.run_id, phase=core["phase"], message=core["message"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
