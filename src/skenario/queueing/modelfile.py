"""Queueing model files: YAML in, a `Network` and its solve options out, or one clear error.

The solver itself imports nothing from the simulator; this reader borrows the scenario loader's
YAML and error reporting so a bad model file is reported as a bad scenario is: file, line, field
as written (`classes.1.population`) and value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveFloat, model_validator

from skenario.errors import ScenarioError
from skenario.queueing.fesc import APPROXIMATION as FESC_APPROXIMATION
from skenario.queueing.fesc import flow_equivalent
from skenario.queueing.network import (
    Centre,
    CentreKind,
    Demand,
    Network,
    QueueingModelError,
    Scheduling,
    WorkloadClass,
)
from skenario.queueing.solution import Method, Solution
from skenario.queueing.solve import PDQ_TOLERANCE, Priorities, solve
from skenario.scenario.io import line_of, parse_document, read_text

MODEL_SHAPE = "a queueing model is a mapping with centres and classes"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class CentreSpec(_Spec):
    name: str = Field(min_length=1)
    kind: CentreKind = CentreKind.QUEUE
    scheduling: Scheduling = Scheduling.FCFS
    servers: int = Field(default=1, ge=1)
    rates: list[PositiveFloat] | None = Field(
        default=None,
        min_length=1,
        description="Service rate multipliers with 1, 2, ... jobs present (the last repeated).",
    )
    capacity: int | None = Field(default=None, ge=1, description="The most jobs it holds, in service included.")

    def to_centre(self) -> Centre:
        return Centre(self.name, self.kind, self.scheduling, self.servers, tuple(self.rates or ()), self.capacity)


class MemoryConstraintSpec(_Spec):
    """Centres that admit at most `maxJobs` jobs together (a flow-equivalent server, `queueing.fesc`)."""

    centres: list[str] = Field(min_length=1)
    max_jobs: int = Field(alias="maxJobs", ge=1)
    name: str = Field(default="memory", min_length=1)


class DemandSpec(_Spec):
    """`demand`, or `visits` and `service`; `scv` of a service time (1 = exponential)."""

    demand: NonNegativeFloat | None = None
    visits: NonNegativeFloat | None = None
    service: NonNegativeFloat | None = None
    scv: NonNegativeFloat = 1.0

    @model_validator(mode="after")
    def _one_form(self) -> DemandSpec:
        if self.demand is not None and (self.visits is not None or self.service is not None):
            raise ValueError("give either demand, or visits and service, not both")
        if self.demand is None and (self.visits is None or self.service is None):
            raise ValueError("give demand, or both visits and service")
        return self

    def to_demand(self) -> Demand:
        if self.demand is not None:
            return Demand(1.0, self.demand, self.scv)
        assert self.visits is not None and self.service is not None
        return Demand(self.visits, self.service, self.scv)


class ClassSpec(_Spec):
    name: str = Field(min_length=1)
    arrival_rate: PositiveFloat | None = Field(default=None, alias="arrivalRate")
    population: NonNegativeFloat | None = None
    think_time: NonNegativeFloat = Field(default=0.0, alias="thinkTime")
    priority: int = 0
    demands: dict[str, NonNegativeFloat | DemandSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _open_or_closed(self) -> ClassSpec:
        if (self.arrival_rate is None) == (self.population is None):
            raise ValueError("give exactly one of arrivalRate (an open class) and population (a closed class)")
        return self

    def to_class(self) -> WorkloadClass:
        demands = {
            name: d.to_demand() if isinstance(d, DemandSpec) else Demand(1.0, float(d))
            for name, d in self.demands.items()
        }
        return WorkloadClass(self.name, demands, self.arrival_rate, self.population, self.think_time, self.priority)


class ModelSpec(_Spec):
    kind: Literal["QueueingModel"] = "QueueingModel"
    name: str = "model"
    method: Method | None = None
    tolerance: PositiveFloat = PDQ_TOLERANCE
    priorities: Priorities | None = None
    centres: list[CentreSpec] = Field(min_length=1, validation_alias=AliasChoices("centres", "centers"))
    classes: list[ClassSpec] = Field(min_length=1)
    memory_constraint: MemoryConstraintSpec | None = Field(default=None, alias="memoryConstraint")


@dataclass(frozen=True)
class QueueingModel:
    """A model file read and checked: its network and how to solve it."""

    network: Network
    method: Method | None
    tolerance: float
    priorities: Priorities | None
    source: str
    root: yaml.Node | None
    written: Network | None = None  # the network as written, when a memory constraint's server replaced centres
    constraint: tuple[tuple[str, ...], int] | None = None  # the memory constraint: its centres and most jobs

    @property
    def flow_equivalent(self) -> bool:
        """Whether a memory constraint stands as a flow-equivalent server (an approximation)."""
        return self.constraint is not None

    def solve(self, method: Method | str | None = None, priorities: Priorities | str | None = None) -> Solution:
        """Solve as the file says (or with another method); errors name the file and line."""
        try:
            solution = solve(
                self.network,
                method or self.method,
                tolerance=self.tolerance,
                priorities=priorities or self.priorities,
            )
        except QueueingModelError as exc:
            raise _locate(exc, self.source, self.root) from None
        if self.flow_equivalent:
            solution = replace(solution, approximations=(*solution.approximations, FESC_APPROXIMATION))
        return solution


def _locate(exc: QueueingModelError, source: str, root: yaml.Node | None) -> QueueingModelError:
    """Name the file and the line of the field a solver's error names."""
    exc.file = source
    path = [int(p) if p.isdigit() else p for p in (exc.field or "").split(".") if p]
    exc.line = line_of(root, path)
    return exc


def load_model(path: str | Path) -> QueueingModel:
    return parse_model(read_text(path), str(path))


def parse_model(text: str, source: str = "<model>") -> QueueingModel:
    try:
        spec = parse_document(text, ModelSpec, source, MODEL_SHAPE)
    except ScenarioError as exc:
        raise QueueingModelError(exc.message, file=exc.file, field=exc.field, value=exc.value, line=exc.line) from None
    root = yaml.compose(text)
    try:
        written = Network.of((c.to_centre() for c in spec.centres), (c.to_class() for c in spec.classes), spec.name)
        network, constraint = written, spec.memory_constraint
        if constraint is not None:
            network = flow_equivalent(written, constraint.centres, constraint.max_jobs, constraint.name)
    except QueueingModelError as exc:
        raise _locate(exc, source, root) from None
    kept = (tuple(constraint.centres), constraint.max_jobs) if constraint is not None else None
    return QueueingModel(network, spec.method, spec.tolerance, spec.priorities, source, root, written, kept)
