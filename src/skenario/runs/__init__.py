"""The run service layer, between `scenario` and `results` below and every front end above (the CLI,
the sweeps, the Python API): open any input as a `Runnable`, run it under supervision into the store.

    from skenario.runs import execute, open_run
    run = open_run(Path("examples/quickstart.yaml"))
    execute(run, RunStore())

A new kind of run is one `Runnable` and one line in `open_run`'s table: no front end changes.
"""

from __future__ import annotations

from skenario.runs.batch import BatchRun, TraceOptions
from skenario.runs.execute import STEPS, Executed, execute, keep_unbuilt
from skenario.runs.inputs import KepRun, PluginFailed, Refused, Window, examine, open_run, read_kep, validated
from skenario.runs.protocol import CORE, Runnable, Summarised, describe
from skenario.runs.supervise import Interruption, MemoryGuard, Stopped, StopRequests, memory_budget, supervise

__all__ = [
    "CORE",
    "STEPS",
    "BatchRun",
    "Executed",
    "Interruption",
    "KepRun",
    "MemoryGuard",
    "PluginFailed",
    "Refused",
    "Runnable",
    "StopRequests",
    "Stopped",
    "Summarised",
    "TraceOptions",
    "Window",
    "describe",
    "examine",
    "execute",
    "keep_unbuilt",
    "memory_budget",
    "open_run",
    "read_kep",
    "supervise",
    "validated",
]
