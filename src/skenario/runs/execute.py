"""`execute`: a `Runnable` run under supervision into the run store, the one way every front end runs one.

    open_run(file) ─► execute(run, store) ─► supervise (signals, memory budget, watchdog)
                                           ─► run in STEPS stretches, each stretch's results written
                                           ─► the run kept: Completed, Paused, or Failed with what it had

A scenario's run is written as it goes (`RunStore.begin`, a batch per stretch), so a run stopped
half-way is kept as Failed with what it recorded; a KEP-140 run is written whole once run
(`RunStore.save`); a trace's replay is not kept. Nothing reaches the store before the input was
read and checked whole (`open_run`), so bad input leaves nothing half-written.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from skenario.results.store import RunStore, RunWriter
from skenario.runs.inputs import KepRun
from skenario.runs.protocol import Runnable
from skenario.runs.supervise import Stopped, StopRequests, supervise
from skenario.scenario.simulation import Simulation

STEPS = 100
"""A scenario's run stops this many times on its way: to draw progress and to write a batch of results."""


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
) -> Executed:
    """Run `run` to its end under supervision and keep it in `store` (None: keep nothing).

    A stop (a signal, the memory budget) raises `Stopped` once the run is kept as Failed; any
    other error is raised once the run is kept as Failed with what it had made.
    """
    if isinstance(run, Simulation):
        return _simulate(
            run, store, scenario_file=scenario_file, name=name, tags=tags, budget=budget, progress=progress
        )
    started = time.perf_counter()
    run.run(progress=progress)
    wall = time.perf_counter() - started
    run_id = None
    if store is not None and isinstance(run, KepRun):
        run_id = store.save(
            name=run.scenario.name,
            scenario_file=scenario_file if scenario_file is not None else run.scenario_file,
            scenario_text=run.text,
            seed=int(run.seed or 0),
            phase=str(run.phase),
            message=run.message,
            documents=run.documents(),
            digest=run.digest(),
            simulated_ns=run.simulated(),
            wall_s=wall,
            run_name=name,
            tags=tags,
        )
    return Executed(run_id, wall, None if store is None else store.path)


def _simulate(
    simulation: Simulation,
    store: RunStore | None,
    *,
    scenario_file: str | None,
    name: str | None,
    tags: Sequence[str],
    budget: int | None,
    progress: Callable[[int], object] | None,
) -> Executed:
    with supervise(simulation.env.pause_soon, budget=budget, now=simulation.env.now) as stops:
        # Everything the scenario names is read and checked by now: only a valid run reaches the store.
        writer = None if store is None else store.begin(simulation, scenario_file, name=name, tags=tags)
        started = time.perf_counter()
        try:
            try:
                _stretches(simulation, writer, stops, progress)
            except KeyboardInterrupt:  # the watchdog, or a second signal, interrupting a long movement
                raise stops.stop or Stopped.by_signal(signal.SIGINT) from None
        except Stopped as stopped:
            stops.ignore()
            simulation.fail(str(stopped))
            if writer is not None:
                writer.finish(time.perf_counter() - started)
            stopped.run_id = None if writer is None else writer.run_id
            raise
        except Exception:
            stops.ignore()
            if writer is not None:
                writer.finish(time.perf_counter() - started)  # the run, marked Failed, with what it had made
            raise
        wall = time.perf_counter() - started
        stops.ignore()
        if writer is not None:
            writer.finish(wall)
    return Executed(None if writer is None else writer.run_id, wall, None if store is None else store.path)


def _stretches(
    simulation: Simulation,
    writer: RunWriter | None,
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

    simulation.run(steps=STEPS, progress=step)
