"""`execute`: a `Runnable` run under supervision into the run store, the one way every front end runs one.

    open_run(file) ─► execute(run, store) ─► supervise (signals, memory budget, watchdog)
                                           ─► run in STEPS stretches (a scenario's; other kinds step their own way)
                                           ─► the run kept as its `keeping` says, through one writer

How a run is kept is the run's to say (`Runnable.keeping`, see `skenario.runs.protocol`): streamed
(a batch per stretch, a run stopped half-way kept as Failed with what it recorded), whole (once run,
in one transaction; a run that fails is not kept) or not at all. Nothing reaches the store before
the input was read and checked whole (`open_run`), so bad input leaves nothing half-written.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from skenario.results.store import RunOutput, RunStore, StoreError
from skenario.runs.inputs import PluginFailed
from skenario.runs.protocol import Runnable
from skenario.runs.supervise import Stopped, StopRequests, supervise

STEPS = 100
"""A scenario's run stops this many times on its way: to draw progress and to write a batch of results."""
STOPPING_PATIENCE = 0.5
"""Seconds a stopped run waits for another process's lock on the store: a stop is not held up for the store."""


@dataclass(frozen=True)
class Executed:
    """What `execute` did: the run's id in the store (None when not kept), its wall time, the store's folder."""

    run_id: int | None
    wall_s: float
    store: Path | None


def execute(
    run: Runnable,
    store: RunStore | None,
    *,
    scenario_file: str | None = None,
    name: str | None = None,
    tags: Sequence[str] = (),
    budget: int | None = None,
    progress: Callable[[int], object] | None = None,
    release: bool = False,
) -> Executed:
    """Run `run` to its end under supervision and keep it in `store` (None: keep nothing).

    A stop (a signal, the memory budget) raises `Stopped`, and any other error is raised, once a
    streamed run is kept as Failed with what it had made; a whole run is kept only once it is over.
    With `release`, a streamed run lets go of the history each batch stored (its per-replica rows,
    timeline and decisions: `RunOutput.stored`), so its memory does not grow with it; read that history
    from the store. Without a store, it lets each stretch's go: say so only when nothing reads it after.
    """
    kept = store if run.keeping != "none" else None
    with supervise(run.pause_soon, budget=budget, now=run.simulated) as stops:
        # Everything the input names is read and checked by now: only a valid run reaches the store.
        writer = None
        forgetting = None
        if run.keeping == "streamed" and (kept is not None or release):
            record = run.record()
            assert record is not None, f"a {run.kind} run kept as it goes has no record"
            if kept is not None:
                writer = kept.begin(record, scenario_file, name=name, tags=tags, release=release)
            else:
                forgetting = Forgetting(record)
        started = time.perf_counter()
        try:
            try:
                _stretches(run, writer or forgetting, stops, progress)
            except KeyboardInterrupt:  # the watchdog, or a second signal, interrupting a long movement
                raise stops.stop or Stopped.by_signal(signal.SIGINT) from None
        except StoreError as failed:  # the store, not the run, failed: the run ends here, marked Failed if it can be
            stops.ignore()
            run.fail(str(failed))
            if writer is not None:
                writer.fail(str(failed))
            raise
        except Stopped as stopped:
            stops.ignore()
            run.fail(str(stopped))
            if writer is not None:
                try:
                    writer.finish(time.perf_counter() - started, patience=STOPPING_PATIENCE)
                    stopped.run_id = writer.run_id
                except StoreError:  # locked or full: the next process to open the store marks it Failed
                    pass
            raise
        except Exception:
            stops.ignore()
            if writer is not None:
                writer.finish(time.perf_counter() - started)  # the run, marked Failed, with what it had made
            raise
        wall = time.perf_counter() - started
        stops.ignore()
        run_id = None
        if writer is not None:
            writer.finish(wall)
            run_id = writer.run_id
        elif kept is not None:
            record = run.record()
            assert record is not None, f"a {run.kind} run kept whole has no record"
            run_id = kept.keep(record, scenario_file, wall_s=wall, name=name, tags=tags)
    return Executed(run_id, wall, None if kept is None else kept.path)


class Batches(Protocol):
    """Where each stretch's results go: a `RunWriter`, or nowhere (`Forgetting`)."""

    def flush(self) -> None: ...


class Forgetting:
    """A streamed run's batches when no store keeps it and nothing reads them after: they go nowhere, and the
    run lets them go as it would once a writer had stored them (`RunOutput.stored`)."""

    def __init__(self, run: RunOutput) -> None:
        self._run = run
        self._made = (0, 0, 0)  # series rows, per-replica rows, timeline entries let go so far

    def flush(self) -> None:
        run, (series, replicas, timeline) = self._run, self._made
        self._made = (
            series + len(run.series_rows(series)),
            replicas + len(run.replica_rows(replicas)),
            timeline + len(run.timeline_since(timeline)),
        )
        run.stored(*self._made)


def _stretches(
    run: Runnable,
    writer: Batches | None,
    stops: StopRequests,
    progress: Callable[[int], object] | None,
) -> None:
    """Run in STEPS stretches, writing each stretch's results as one batch and heeding stop requests."""

    def step(now: int) -> None:
        if writer is not None:
            writer.flush()
        stops.check()
        if progress is not None:
            progress(now)

    run.run(steps=STEPS, progress=step)
    stops.check()  # a run that stepped its own way may have returned at the pause a stop asked for


def keep_unbuilt(
    failed: PluginFailed,
    store: RunStore | None,
    *,
    scenario_file: str | None = None,
    name: str | None = None,
    tags: Sequence[str] = (),
) -> int | None:
    """A run whose plugin failed before it started, kept in `store` as Failed (None: kept nowhere), its id
    said at the end of the failure's line."""
    if store is None:
        return None
    run_id = store.keep(failed.record, scenario_file, wall_s=None, name=name, tags=tags)
    failed.message += f" (run {run_id} kept in the store as Failed)"
    return run_id
