"""Batch traces for the scheduler: pods that arrive, ask for resources and run for a while, and their nodes.

Four formats, one reader each, all checked in full when built (SLS and SYNTH traces read `lazy` make
their pods only as a replay takes them, `pod_stream`):

* `sls`: a YARN Scheduler Load Simulator JSON trace and node file (`SlsTrace`);
* `synth`: SLS's synthetic load generator's JSON, its jobs generated from its seed (`SynthTrace`);
* `openb`: the Alibaba GPU-cluster pod and node lists (`OpenbTrace`);
* `csv`: skenario's own plain CSV of pods and nodes (`CsvPods`).

`read_pod_trace` picks one by name. Every reader gives `TracePod`s sorted by (arrival, name) with
unique names, and `NodeSpec`s in file order; every problem is a `TraceError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skenario.scheduling.traces.base import LoadedTrace, TracePod, TraceReader
from skenario.scheduling.traces.csvpods import CsvPods
from skenario.scheduling.traces.openb import OpenbTrace
from skenario.scheduling.traces.sls import SlsTrace
from skenario.scheduling.traces.synth import SynthTrace
from skenario.workloads.tracefiles import TraceError, TracePath

TRACE_KINDS: dict[str, Callable[..., TraceReader]] = {
    "sls": SlsTrace,
    "synth": SynthTrace,
    "openb": OpenbTrace,
    "csv": CsvPods,
}
TRACE_OPTIONS: dict[str, tuple[str, ...]] = {
    "sls": ("default_memory_mb", "default_vcores", "node_memory_mb", "node_vcores"),
    "synth": ("node_memory_mb", "node_vcores"),
    "openb": (),
    "csv": (),
}

__all__ = [
    "TRACE_KINDS",
    "CsvPods",
    "LoadedTrace",
    "OpenbTrace",
    "SlsTrace",
    "SynthTrace",
    "TraceError",
    "TracePod",
    "TraceReader",
    "read_pod_trace",
]


def read_pod_trace(
    kind: str, path: TracePath, nodes_path: TracePath | None = None, *, lazy: bool = False, **options: Any
) -> TraceReader:
    """Read a batch trace of kind `sls`, `synth`, `openb` or `csv`; `options` go to the reader (`TRACE_OPTIONS`).
    `lazy`: the reader may make its pods only as a replay takes them (`pod_stream`; SLS's and SYNTH's do)."""
    reader = TRACE_KINDS.get(kind)
    if reader is None:
        raise TraceError(
            f"unknown pod trace kind '{kind}' (kinds: {', '.join(TRACE_KINDS)})",
            file=str(path),
            field="kind",
            value=kind,
        )
    unknown = [option for option in options if option not in TRACE_OPTIONS[kind]]
    if unknown:
        accepted = ", ".join(TRACE_OPTIONS[kind]) or "none"
        raise TraceError(
            f"the {kind} trace takes no option '{unknown[0]}' (options: {accepted})",
            file=str(path),
            field=unknown[0],
            value=options[unknown[0]],
        )
    if lazy and kind in ("sls", "synth"):
        options = {**options, "lazy": True}
    return reader(path, nodes_path, **options)
