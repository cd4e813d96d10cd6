"""A Scenario wired into an Environment, a ClusterModel, its autoscalers and its events, ready to run.

The run goes through KEP-140's phases: Pending until it starts, Running, Paused when it stops
before its end (at `run(until=...)`, or after its last event when nothing ends it), Completed at
its end (the first `done` event, or `spec.duration`), Failed if something raised on the way. A
paused run takes new events (`add_event`) and resumes with another `run`.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import yaml

from skenario.autoscalers.base import Autoscaler
from skenario.core.environment import Environment
from skenario.core.garbage import young_garbage_tolerated
from skenario.core.time import format_duration, parse_duration
from skenario.errors import ScenarioError, SkenarioError
from skenario.model.cluster import ClusterModel
from skenario.recording.recorder import Recorder
from skenario.recording.summary import LATENCY_HISTOGRAM, Summary
from skenario.recording.timeline import Entry, Operation, Timeline, as_detail
from skenario.scenario.format.events import Event
from skenario.scenario.format.scenario import Scenario
from skenario.scenario.format.scheduler import SchedulerSpec
from skenario.scenario.wiring.placement import ClusterPlacement
from skenario.scenario.wiring.prepare import Planned, Prepared, plan_events, prepare
from skenario.scenario.wiring.targets import MAIN
from skenario.scenario.wiring.workloadrun import WorkloadRun

if TYPE_CHECKING:
    import pandas as pd

# A run makes an object or two per request that dies young and is never in a reference cycle, so
# The source of the cluster autoscaler's decisions in the timeline.
CLUSTER_AUTOSCALER = "cluster-autoscaler"


class Phase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    PAUSED = "Paused"
    COMPLETED = "Completed"
    FAILED = "Failed"


class EventRefused(SkenarioError):
    """An event a running simulation cannot take (in the past, after the end, invalid)."""


class Simulation:
    """One run of one scenario. Deterministic: the same scenario and seed give the same Summary.

    `base_dir` is where relative paths in the scenario (traces, manifests, plugins) are found:
    the scenario file's directory when it was loaded from a file. `scenario_text` is the file as
    written, kept with the results. Everything the scenario names is read and built here, so a
    mistake is a ScenarioError before the run starts. It meets `skenario.runs.Runnable`.
    """

    kind = "scenario"
    keeping: ClassVar[Literal["streamed"]] = "streamed"  # written as it goes: see skenario.runs.protocol

    def __init__(
        self,
        scenario: Scenario,
        *,
        seed: int | None = None,
        base_dir: Path | None = None,
        scenario_text: str | None = None,
        prepared: Prepared | None = None,
    ) -> None:
        if prepared is None:
            prepared = prepare(scenario, seed=seed, base_dir=base_dir)
        assert prepared.scenario is scenario and (seed is None or prepared.seed == seed), "prepared for another run"
        self.scenario = scenario
        self.scenario_text = scenario_text if scenario_text is not None else yaml.safe_dump(scenario.document)
        self.base_dir = base_dir = prepared.base_dir
        self.spec = spec = prepared.spec
        self.seed = prepared.seed
        self.streams = prepared.streams
        self.end = prepared.end
        self.env = Environment(halt_at=prepared.horizon)
        self.placement: ClusterPlacement | None = None
        if spec.cluster is not None:
            scheduler = spec.scheduler or SchedulerSpec.model_validate({})
            self.placement = ClusterPlacement(
                self.env, spec.cluster, scheduler, self.streams, base_dir, profile=prepared.profile
            )
        self.timeline = Timeline()
        self.phase = Phase.PENDING
        self.message: str | None = "not started"
        self.workloads: dict[str, WorkloadRun] = {}
        for key, workload in prepared.workloads.items():
            self.workloads[key] = WorkloadRun(
                self.env,
                workload,
                prefix=f"{key}/" if key != MAIN else "",
                target=f"workload/{key}" if key != MAIN else "workload",
                placement=self.placement,
                timeline=self.timeline,
                pick=self.pick,
                note=self.note,
            )
        self._events = list(prepared.events)
        self._pending: dict[str, Planned] = {}  # by event id
        self._cluster_decisions = 0  # the cluster autoscaler's decisions already in the timeline
        self._schedule(prepared.planned)

    @property
    def main(self) -> WorkloadRun:
        """spec.workload's run."""
        return self.workloads[MAIN]

    @property
    def model(self) -> ClusterModel:
        """spec.workload's model."""
        return self.main.model

    @property
    def recorder(self) -> Recorder:
        """spec.workload's recorder."""
        return self.main.recorder

    @property
    def autoscalers(self) -> dict[str, Autoscaler]:
        """spec.workload's autoscalers, by name."""
        return self.main.autoscalers

    # -- running ---------------------------------------------------------------------------------

    def run(
        self, until: int | str | None = None, *, steps: int = 1, progress: Callable[[int], object] | None = None
    ) -> Summary:
        """Run to the end, or until `until` (ns or a duration such as '5m'), then pause.

        With `steps` > 1 the run stops that many times on the way to call `progress(now)`. A
        scenario with no end runs to just after its last event and pauses there.
        """
        if self.phase in (Phase.COMPLETED, Phase.FAILED):
            raise RuntimeError(f"the run is {self.phase.value.lower()}: {self.message}")
        stop = self._stop_at(until)
        start = self.env.now()
        self.phase, self.message = Phase.RUNNING, None
        try:
            with young_garbage_tolerated():
                for k in range(1, steps):
                    self.env.run(until=start + (stop - start) * k // steps)
                    self._take_decisions()
                    if progress is not None:
                        progress(self.env.now())
                # At the halt the kernel's own halt movement ends the run; before it, a pause does.
                self.env.run(until=None if stop == self.env.halt_at else stop)
            self._take_decisions()
        except BaseException as exc:
            self.fail(f"{type(exc).__name__}: {exc}")
            raise
        self._settle(stop)
        if progress is not None:
            progress(self.env.now())
        return self.summary()

    def _stop_at(self, until: int | str | None) -> int:
        end = self.end
        if until is not None:
            at = parse_duration(until) if isinstance(until, str) else until
            if at < self.env.now():
                raise ValueError(
                    f"cannot run until {format_duration(at)}: the run is at {format_duration(self.env.now())}"
                )
            return at if end is None else min(at, end)
        if end is not None:
            return end
        last = max((step.event.at for step in self._pending.values()), default=self.env.now())
        return max(last + 1, self.env.now())  # just past the last event's instant

    def _settle(self, stop: int) -> None:
        now = self.env.now()
        if self.end is not None and now >= self.end:
            self.phase = Phase.COMPLETED
            done = [
                step.event for step in self._pending.values() if step.event.done is not None and step.event.at == now
            ]
            if done:
                event = done[0]
                self.timeline.add(now, event.id, Operation.DONE, "scenario", "the run ends", {})
                self.message = f"done event '{event.id}' at {format_duration(now)}"
            else:
                self.message = f"reached spec.duration ({format_duration(now)})"
            self._pending = {}
            for run in self.workloads.values():
                run.recorder.record()
            return
        self.phase = Phase.PAUSED
        waiting = len(self._pending)
        if waiting:
            self.message = f"paused at {format_duration(now)}; {waiting} event(s) to come"
        else:
            self.message = f"paused at {format_duration(now)}: every event is done and none ends the run"

    def fail(self, message: str) -> None:
        """Mark the run Failed (something raised, or the process is being stopped)."""
        self.phase = Phase.FAILED
        self.message = message

    def pause_soon(self) -> None:
        """Pause after the movement under way (safe from a signal handler); a later `run` resumes."""
        self.env.pause_soon()

    def record(self) -> Simulation:
        """What the store keeps: the run itself, read again at each stretch (a `results.store.RunOutput`)."""
        return self

    def simulated(self) -> int:
        """The simulated time reached, in ns."""
        return self.env.now()

    def summary(self) -> Summary:
        """spec.workload's summary, with the other workloads' (whose digests its digest covers)."""
        others = {name: run.summary(self.seed) for name, run in self.workloads.items() if name != MAIN}
        return self.main.summary(self.seed, others)

    def series(self) -> pd.DataFrame:
        """The time series as one table: spec.workload's rows; with several workloads, every workload's,
        the scenario's first, a `workload` column in front."""
        import pandas as pd

        if len(self.workloads) == 1:
            return self.recorder.frame()
        frames = [
            run.recorder.frame().assign(workload=self.scenario.metadata.name if name == MAIN else name)
            for name, run in self.workloads.items()
        ]
        series = pd.concat(frames)
        return series[["workload", *(column for column in series.columns if column != "workload")]]

    def documents(self) -> dict[str, Any]:
        """Results beyond the series, as plain JSON data by name: `latency_histogram`, spec.workload's
        histogram of every completed request's latency (the one its digest hashes; a fluid run's holds
        each step's completions at their mean latency); with a cluster, its scheduling summary, the pods,
        nodes and attempts tables and KEP-140's per-pod results; with several workloads, the others'
        series rows by workload name."""
        documents = self.placement.results() if self.placement is not None else {}
        documents[LATENCY_HISTOGRAM] = self.model.requests_complete.latency.as_document()
        others = {name: run.recorder.rows() for name, run in self.workloads.items() if name != MAIN}
        if others:
            documents["workload-series"] = others
        return documents

    # -- what the run store keeps (results.store.RunOutput) --------------------------------------

    @property
    def scenario_name(self) -> str:
        return self.scenario.metadata.name

    @property
    def simulated_ns(self) -> int:
        return self.env.now()

    def summary_record(self) -> tuple[str | None, dict[str, Any]]:
        summary = self.summary()
        return summary.digest, summary.as_dict()

    def series_rows(self, start: int = 0) -> list[dict[str, Any]]:
        return self.recorder.rows(start)

    def replica_rows(self, start: int = 0) -> list[tuple[Any, ...]]:
        return self.recorder.replica_rows(start)

    def stored(self, series: int, replica_rows: int, timeline: int) -> None:
        """A run store holds the first rows and entries up to these counts: the per-replica rows, the timeline
        and the autoscalers' own lists of the decisions it took let them go, so a long run's memory does not
        grow with its history (the series, a row an interval, stays whole: `series()` reads it)."""
        self.recorder.forget_replica_rows(replica_rows)
        if timeline >= len(self.timeline):  # every decision taken so far is stored
            for run in self.workloads.values():
                run.forget_decisions()
        self.timeline.forget(timeline)

    def timeline_since(self, start: int = 0) -> list[Entry]:
        return self.timeline.since(start)

    def lifecycle_rows(self) -> list[tuple[Any, ...]]:
        return self.recorder.lifecycles()

    def ignored_movements(self) -> list[tuple[int, str, str, str, str]]:
        return [(m.occurs_at, m.kind, m.from_stock.name, m.to_stock.name, str(why)) for m, why in self.env.ignored]

    # -- events ----------------------------------------------------------------------------------

    def add_event(self, event: Event | dict[str, Any]) -> None:
        """Add an event to a run that has not ended; one in the past, or invalid, is refused with the reason."""
        if isinstance(event, dict):
            try:
                event = Event.model_validate(event)
            except Exception as exc:
                raise EventRefused(f"not a valid event: {exc}") from None
        now = self.env.now()
        where = f"event '{event.id}'"
        if self.phase in (Phase.COMPLETED, Phase.FAILED):
            raise EventRefused(f"the run is {self.phase.value.lower()}; it takes no more events", field=where)
        if event.at < now:
            raise EventRefused(
                f"{format_duration(event.at)} is in the past: the run is at {format_duration(now)}", field=where
            )
        if any(known.id == event.id for _, known in self._events):
            raise EventRefused("an event with this id exists already", field=where)
        if event.done is None and self.end is not None and event.at >= self.end:
            raise EventRefused(f"it comes at or after the run's end ({format_duration(self.end)})", field=where)
        pending = [(step.where, step.event) for step in self._pending.values()]
        try:
            planned = self._plan([*pending, (where, event)])
        except ScenarioError as exc:
            raise EventRefused(exc.message, field=exc.field, value=exc.value) from None
        self._events.append((where, event))
        if event.done is not None and (self.end is None or event.at < self.end):
            self.end = event.at
        # The events already scheduled keep their places; only what they will build is renewed.
        self._schedule([step for step in planned if step.event.id not in self._pending])
        self._pending.update((step.event.id, step) for step in planned)

    def _plan(self, events: list[tuple[str, Event]]) -> list[Planned]:
        """The events checked and built, each on the workloads it acts on, in the order they will happen."""
        planners = {name: (run.planner, run.objects) for name, run in self.workloads.items()}
        return plan_events(events, planners, self.scenario.metadata.name)

    def _schedule(self, planned: list[Planned]) -> None:
        for pending in planned:
            self._pending[pending.event.id] = pending
            if pending.event.done is None:  # the run's end carries out a done event
                self.env.call_first_at(pending.event.at, lambda id=pending.event.id: self._apply(id))  # type: ignore[misc]

    def _apply(self, event_id: str) -> None:
        pending = self._pending.pop(event_id)
        said = []
        for key, step in pending.steps:
            run = self.workloads[key]
            said.append(step.apply(run))
            run.objects = step.objects_after
        self.note(pending.event, "; ".join(dict.fromkeys(line for line in said if line)))

    # -- the timeline ----------------------------------------------------------------------------

    def pick(self, event_id: str, count: int) -> int:
        return int(self.streams.generator(f"event@{event_id}").integers(count))

    def note(self, event: Event, message: str) -> None:
        body: Any = event.body
        self.timeline.add(self.env.now(), event.id, Operation(event.operation.title()), body.target, message, {})

    def _take_decisions(self) -> None:
        """Move the decisions built-in autoscalers keep into the timeline (a cheap read, not per decision)."""
        for run in self.workloads.values():
            run.take_decisions()
        autoscaler = self.placement.cluster_autoscaler if self.placement is not None else None
        if autoscaler is None:
            return
        for record in autoscaler.decisions[self._cluster_decisions :]:
            detail = as_detail(record)
            message = str(detail.get("reason") or "")
            at = int(detail.get("at", self.env.now()))
            self.timeline.add(at, CLUSTER_AUTOSCALER, Operation.DECISION, "cluster", message, detail)
        self._cluster_decisions = len(autoscaler.decisions)
