"""Everything a scenario names, read, checked and built before there is a clock: the one validation of a run.

`prepare` reads each file the scenario names as the run reads it: the Deployment and the
autoscalers' manifests (an HPA of any served version converted to autoscaling/v2), every record of
the trace files the replay will read, the series `spec.observed` names, the plugins of the scheduler
and the autoscalers, and the files the events bring in. It resolves each workload's spec (its Deployment read in, one
containerConcurrency for a Knative revision), builds its arrivals and autoscalers, builds the
scheduler's profile and plans the events on the workloads they act on. A `Simulation` is made
from what it returns; `skenario check` and `skenario run --dry-run` call it under
`plugins.unloaded()` and throw it away. So check and run read the same files the same way, and
disagree only on what a plugin's own code would say. Nothing here costs what the run's size
costs (no replica, node or request is made), so it is as cheap for a runaway as for a toy.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skenario.autoscalers.base import Autoscaler
from skenario.core.random import RandomStreams
from skenario.errors import ScenarioError
from skenario.model.fluid.plant import FluidInputs
from skenario.scenario.format.autoscalers import AutoscalerSpec, autoscaler_names
from skenario.scenario.format.events import Event
from skenario.scenario.format.scenario import Scenario, ScenarioSpec
from skenario.scenario.format.scheduler import SchedulerSpec
from skenario.scenario.wiring.autoscalers import build_autoscalers
from skenario.scenario.wiring.fluid import check_fluid, fluid_inputs
from skenario.scenario.wiring.observed import read_observed_run
from skenario.scenario.wiring.operations import Objects, Planner, Step
from skenario.scenario.wiring.scheduler import build_profile
from skenario.scenario.wiring.targets import MAIN, route
from skenario.scenario.wiring.traffic import OPEN_HORIZON, build_arrivals
from skenario.scenario.wiring.workload import resolve_spec
from skenario.scheduling.framework import Profile

# What each entry of spec.workloads has of its own (the rest of the spec it shares).
_OWN_FIELDS = ("workload", "traffic", "routing", "autoscalers", "disruptionBudget", "client")


@dataclass
class PreparedWorkload:
    """One workload of the scenario, read and built: what `WorkloadRun` wires onto the clock.

    `name` names its pods; `spec` is the spec as it runs (`resolve_spec`); its `arrivals` are lazy
    (trace files checked, nothing drawn yet); `autoscalers` by name, in the order written.
    """

    name: str
    spec: ScenarioSpec
    streams: RandomStreams
    arrivals: Iterator[int]
    autoscalers: list[tuple[str, Autoscaler]]
    planner: Planner
    objects: Objects
    fluid: FluidInputs | None = None  # a fluid run's: its traffic as a rate (then `arrivals` is empty)


@dataclass
class Planned:
    """An event as written, and its step on each workload it acts on (by the workload's key: `MAIN` or a name)."""

    event: Event
    where: str
    index: int  # among the events planned together: same-time events happen in this order
    steps: list[tuple[str, Step]] = field(default_factory=list)


@dataclass
class Prepared:
    """A scenario read, checked and built: everything a run needs but its clock. Used by one run only (its
    arrivals are iterators)."""

    scenario: Scenario
    spec: ScenarioSpec  # spec.workload's, as it runs
    base_dir: Path
    seed: int
    streams: RandomStreams
    end: int | None  # the duration, or the first done event; None: the scenario never ends
    horizon: int  # how far traffic is made: the end, or OPEN_HORIZON
    profile: Profile | None  # the scheduler's, with spec.cluster
    workloads: dict[str, PreparedWorkload]  # MAIN first, then spec.workloads by name
    events: list[tuple[str, Event]]  # each with its field
    planned: list[Planned]


def prepare(scenario: Scenario, *, seed: int | None = None, base_dir: Path | None = None) -> Prepared:
    """Read and build what `scenario` names (relative paths from `base_dir`, the scenario file's folder);
    a mistake is a ScenarioError (or a trace file's TraceError) naming the field."""
    base_dir = base_dir or Path.cwd()
    spec = resolve_spec(scenario.spec, base_dir)
    seed = spec.seed if seed is None else seed
    streams = RandomStreams(seed)
    horizon = spec.end if spec.end is not None else OPEN_HORIZON
    if spec.mode == "fluid":
        check_fluid(spec)
    profile = None
    if spec.cluster is not None:
        profile = build_profile(spec.scheduler or SchedulerSpec.model_validate({}), base_dir)
    document = scenario.document
    main = Objects.of(document, autoscaler_names(spec.autoscalers))
    workloads = {MAIN: _workload(spec, main, scenario.metadata.name, streams, base_dir, horizon)}
    for index, entry in enumerate(spec.workloads):
        try:
            own = resolve_spec(entry.as_spec(spec), base_dir)
            if own.mode == "fluid":
                check_fluid(own)
            objects = colocated_objects(document, index, own.autoscalers)
            workloads[entry.name] = _workload(
                own, objects, entry.name, streams.scoped(f"{entry.name}/"), base_dir, horizon
            )
        except ScenarioError as exc:
            exc.field = rebase(exc.field, f"spec.workloads.{index}")
            raise
    if spec.observed is not None:  # replay and calibrate compare with it: a bad file is said now
        read_observed_run(spec, base_dir)
    events = [(f"spec.events.{i}", event) for i, event in enumerate(spec.events)]
    planners = {key: (workload.planner, workload.objects) for key, workload in workloads.items()}
    planned = plan_events(events, planners, scenario.metadata.name)
    return Prepared(scenario, spec, base_dir, seed, streams, spec.end, horizon, profile, workloads, events, planned)


def _workload(
    spec: ScenarioSpec, objects: Objects, name: str, streams: RandomStreams, base_dir: Path, horizon: int
) -> PreparedWorkload:
    fluid = fluid_inputs(spec, horizon, base_dir) if spec.mode == "fluid" else None
    arrivals: Iterator[int] = iter(())  # a fluid run's traffic is its rate
    if fluid is None:
        arrivals = build_arrivals(
            spec.traffic, duration=horizon, streams=streams, base_dir=base_dir, offset=spec.offset
        )
    names = autoscaler_names(spec.autoscalers)
    built = build_autoscalers(spec.autoscalers, base_dir, spec.workload.simulated)
    planner = Planner(spec, base_dir, streams, horizon)
    autoscalers = list(zip(names, built, strict=True))
    return PreparedWorkload(name, spec, streams, arrivals, autoscalers, planner, objects, fluid)


def plan_events(
    events: list[tuple[str, Event]], planners: dict[str, tuple[Planner, Objects]], scenario: str
) -> list[Planned]:
    """The events (each with its field) checked and built, each on the workloads it acts on (`targets.route`),
    in the order they will happen; `planners` by workload key, with the objects as the events find them."""
    names = [name for name in planners if name != MAIN]
    routed: dict[str, list[tuple[str, Event]]] = {name: [] for name in planners}
    for where, event in events:
        for name, seen in route(event, where, names, scenario):
            routed[name].append((where, seen))
    written = {event.id: (index, where, event) for index, (where, event) in enumerate(events)}
    planned: dict[str, Planned] = {}
    for name, (planner, objects) in planners.items():
        for step in planner.plan(routed[name], objects):
            if step.event.id not in planned:
                index, where, event = written[step.event.id]
                planned[event.id] = Planned(event, where, index)
            planned[step.event.id].steps.append((name, step))
    return sorted(planned.values(), key=lambda pending: (pending.event.at, pending.index))


def rebase(field: str | None, where: str) -> str:
    """A field of a colocated workload's spec (`spec.traffic.rate`) as its file writes it
    (`spec.workloads.1.traffic.rate`); fields it shares with the scenario stay as they are."""
    if field is None:
        return where
    head, _, rest = field.partition(".")
    own = rest.split(".", 1)[0].split(" ", 1)[0]
    return f"{where}.{rest}" if head == "spec" and own in _OWN_FIELDS else field


def colocated_objects(document: dict[str, Any], index: int, autoscalers: tuple[AutoscalerSpec, ...]) -> Objects:
    """The objects of spec.workloads' entry `index` as written, with the scenario's metrics (which it shares)."""
    spec = document["spec"]
    written = {**spec["workloads"][index], "metrics": spec.get("metrics")}
    try:
        return Objects.of({"spec": written}, autoscaler_names(autoscalers))
    except ScenarioError as exc:
        exc.field = rebase(exc.field, f"spec.workloads.{index}")
        raise
