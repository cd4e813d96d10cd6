"""`Runnable`: what every kind of run offers the front ends, so a new kind needs no change above it.

A run is opened (`skenario.runs.open_run`), run (to its end, or `until`; stopping `steps` times on
the way to call `progress(now)`), and read: its phase and message, its summary, the documents and
tables it produced, its timeline. The three runners meet it structurally, without a base class:

    kind        runner                            summary()                              keeping
    scenario    scenario.simulation.Simulation    recording.summary.Summary              streamed
    kep140      runs.inputs.KepRun                scheduling.analysis.SchedulingSummary  whole
    trace       runs.batch.BatchRun               queues.yarn_replay.YarnSummary, or     whole
                                                  scheduling.analysis.SchedulingSummary
    trace       scheduling.replay.BatchReplay     scheduling.analysis.SchedulingSummary  none
                (open_run with `trace=` options)

Their summaries share one shape: `describe` gives the common core (kind, phase, message, simulated
time) with what each kind adds under `summary`, as its own `as_dict()` writes it. How a run is
kept (`keeping`) is the run's to say, so `execute` and the store need no change for a new kind:

- `streamed`: written as it goes, a batch per stretch; a run stopped or failing half-way is kept
  as Failed with what it recorded (a scenario: everything it names was checked before it ran);
- `whole`: written once run, in one transaction; a run that fails is not kept, its mistake is
  its input's, found only by running (a KEP-140 step naming an object the scheduler removed);
- `none`: not kept (a trace opened with `trace=` options writes its tables where the caller says;
  `skenario schedule` and a `kind: BatchReplay` document open a `BatchRun`, which is kept).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, runtime_checkable

from skenario.results.store import RunOutput

Keeping = Literal["streamed", "whole", "none"]
CORE = ("kind", "phase", "message", "simulated_ns", "summary")
"""The keys every run's `describe` has, whatever its kind."""


@runtime_checkable
class Summarised(Protocol):
    """A run's summary: its figures as plain data."""

    def as_dict(self) -> Mapping[str, Any]: ...


@runtime_checkable
class Runnable(Protocol):
    """One run of any kind, as a front end drives and reads it."""

    @property
    def kind(self) -> str:
        """Which kind of run: `scenario`, `kep140`, `trace` (the table above)."""
        ...

    @property
    def keeping(self) -> Keeping:
        """How the store keeps the run (the table above)."""
        ...

    @property
    def phase(self) -> str:
        """Pending, Running, Paused, Completed or Failed."""
        ...

    @property
    def message(self) -> str | None:
        """Why the run is in its phase (reached its duration, paused at an instant, the error)."""
        ...

    @property
    def timeline(self) -> Any:
        """What happened, in order: the events applied and what the controllers did."""
        ...

    def run(
        self, until: int | None = None, *, steps: int = 1, progress: Callable[[int], object] | None = None
    ) -> object:
        """Run to the end, or to `until` (ns), calling `progress(now)` on the way (`steps` times at most)."""
        ...

    def pause_soon(self) -> None:
        """Stop after the movement under way (safe from a signal handler); a later `run` resumes."""
        ...

    def fail(self, message: str) -> None:
        """Mark the run Failed: it was stopped from outside, or something raised."""
        ...

    def record(self) -> RunOutput | None:
        """What the store keeps of the run (None when its `keeping` is `none`): a streamed run's is read
        again at each stretch, a whole run's is taken once it has run."""
        ...

    def summary(self) -> Summarised: ...

    def documents(self) -> dict[str, Any]:
        """Results beyond the summary, as plain JSON data by name: what the run store keeps."""
        ...

    def simulated(self) -> int:
        """The simulated time reached, in ns."""
        ...


def describe(run: Runnable) -> dict[str, Any]:
    """The run's summary in the shape every kind shares: the core keys (`CORE`), with the kind's own
    figures under `summary`."""
    return {
        "kind": run.kind,
        "phase": str(run.phase),
        "message": run.message,
        "simulated_ns": run.simulated(),
        "summary": dict(run.summary().as_dict()),
    }
