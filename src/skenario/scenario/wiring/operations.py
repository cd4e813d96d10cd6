"""Scenario events at run time: each checked and built before the run starts, applied at its time.

`plan` walks the events in time order over the scenario's objects as written (`Objects`), so an
event that patches an autoscaler a previous event created is checked against that one. Every
mistake (an unknown target, an operation the target does not take, a patch that makes an
invalid object, a trace file that is not there, a node that is not there at that time) is one
ScenarioError naming the event's field, before anything runs. What is left for run time cannot
fail: a `Step` holds its built objects and applies them to a `Runtime`, returning a line for the
results timeline.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import TypeAdapter, ValidationError

from skenario.autoscalers.base import Autoscaler
from skenario.core.random import RandomStreams
from skenario.core.time import format_duration
from skenario.errors import ScenarioError
from skenario.model.cluster import ClusterModel, class_work
from skenario.model.replicas import ReplicaState
from skenario.scenario.format.autoscalers import AutoscalerSpec
from skenario.scenario.format.cluster import NodeShape, NodesSpec
from skenario.scenario.format.events import Event, merge_patch, split_target
from skenario.scenario.format.scenario import Metrics, ScenarioSpec, Workload
from skenario.scenario.format.traffic import TrafficSpec
from skenario.scenario.io import describe_problem
from skenario.scenario.wiring.autoscalers import build_autoscaler
from skenario.scenario.wiring.placement import ClusterPlacement
from skenario.scenario.wiring.traffic import build_arrivals, build_rate
from skenario.scenario.wiring.workload import knative_concurrency, with_container_concurrency, with_deployment
from skenario.workloads.rates import Intensity

_TRAFFIC: TypeAdapter[Any] = TypeAdapter(TrafficSpec)
_AUTOSCALER: TypeAdapter[Any] = TypeAdapter(AutoscalerSpec)
_NODE_IDENTITY = ("name", "count")  # what a nodes entry has that a node event's node does not

# What a workload patch may change while the run goes on; the rest is fixed when it starts.
_PATCHABLE_WORKLOAD = {
    "replicas",
    "resources",
    "request",
    "concurrency",
    "queue_capacity",
    "termination_grace_period",
    "pre_stop_sleep",
}


@dataclass
class Objects:
    """The scenario's objects as written, as the events leave them."""

    workload: dict[str, Any]
    traffic: Any
    metrics: dict[str, Any]
    autoscalers: dict[str, dict[str, Any]]
    metrics_up: bool = True
    # Each node by name, as written without name and count (None: the scenario has no spec.cluster).
    # Nodes of one `nodes` entry share its mapping: a patch makes a new one, never changes it.
    nodes: dict[str, dict[str, Any]] | None = None

    @classmethod
    def of(cls, document: dict[str, Any], names: list[str]) -> Objects:
        spec = document.get("spec", {})
        entries = spec.get("autoscalers") or []
        cluster = spec.get("cluster")
        nodes = None
        if isinstance(cluster, dict):
            nodes = {}
            for entry in cluster.get("nodes") or []:
                shape = {key: value for key, value in entry.items() if key not in _NODE_IDENTITY}
                names_of = NodesSpec.model_construct(name=entry["name"], count=entry.get("count", 1)).names()
                nodes.update(dict.fromkeys(names_of, shape))
        return cls(
            workload=dict(spec.get("workload") or {}),
            traffic=spec.get("traffic"),
            metrics=dict(spec.get("metrics") or {}),
            autoscalers={name: dict(entry) for name, entry in zip(names, entries, strict=True)},
            nodes=nodes,
        )

    def copy(self) -> Objects:
        return copy.deepcopy(self)


class Runtime(Protocol):
    """What a step acts on: the running simulation."""

    model: ClusterModel
    placement: ClusterPlacement | None

    def start_autoscaler(self, name: str, autoscaler: Autoscaler) -> None: ...

    def stop_autoscaler(self, name: str) -> None: ...

    def pick(self, event_id: str, count: int) -> int:
        """An index in range(count), drawn from the event's own random stream."""
        ...

    def note(self, event: Event, message: str) -> None:
        """A line for the results timeline, now, from what the event set going (a drain's later steps)."""
        ...


@dataclass
class Step:
    """One event, built: `apply` makes its change and says what it did."""

    event: Event
    where: str  # the event's field, for errors
    apply: Callable[[Runtime], str]
    objects_after: Objects = field(repr=False)
    started: Autoscaler | None = field(default=None, repr=False)  # the autoscaler it starts (the estimate's)


@dataclass
class Planner:
    """Checks and builds events against a scenario; `build=False` checks the structure only (no files)."""

    spec: ScenarioSpec
    base_dir: Path
    streams: RandomStreams
    horizon: int
    build: bool = True
    _started: Autoscaler | None = field(default=None, init=False, repr=False)  # by the step being planned

    def plan(self, events: list[tuple[str, Event]], objects: Objects) -> list[Step]:
        """Steps for the events (each with its field name), in the order they will happen."""
        steps = []
        end = self.spec.end
        seen: set[str] = set()
        for where, event in events:
            if event.id in seen:
                raise ScenarioError(f"two events have the id '{event.id}'", field=f"{where}.id", value=event.id)
            seen.add(event.id)
            if event.done is not None and event.at == 0:
                raise ScenarioError("a done event at 0s would end the run before it starts", field=f"{where}.at")
        ordered = sorted(enumerate(events), key=lambda item: (item[1][1].at, item[0]))
        for _, (where, event) in ordered:
            if event.done is None and end is not None and event.at >= end:
                raise ScenarioError(
                    f"event '{event.id}' at {format_duration(event.at)} comes at or after the run's end "
                    f"({format_duration(end)}), so it would never happen",
                    field=f"{where}.at",
                )
            objects = objects.copy()
            self._started = None
            apply = self._step(event, where, objects)
            steps.append(Step(event, where, apply, objects, self._started))
        return steps

    def _step(self, event: Event, where: str, objects: Objects) -> Callable[[Runtime], str]:
        operation = event.operation
        if operation == "done":
            return lambda runtime: "the run ends"
        body: Any = event.body
        at = f"{where}.{operation}"
        kind, name = split_target(body.target)
        handler = {
            "workload": self._workload,
            "traffic": self._traffic,
            "metrics": self._metrics,
            "autoscaler": self._autoscaler,
            "replica": self._replica,
            "node": self._node,
        }.get(kind)
        if handler is None:
            raise ScenarioError(
                "unknown target; targets are workload, traffic, metrics, autoscaler/<name>, replica[/<id>] "
                "and node/<name>",
                field=f"{at}.target",
                value=body.target,
            )
        return handler(event, operation, name, body, at, objects)

    # -- targets ---------------------------------------------------------------------------------

    def _workload(
        self, event: Event, operation: str, name: str | None, body: Any, at: str, objects: Objects
    ) -> Callable[[Runtime], str]:
        _only(operation, ("patch",), "the workload", at)
        before = self._resolve(_validated(Workload, objects.workload, f"{at}.target"))
        objects.workload = merge_patch(objects.workload, body.patch)
        after = self._resolve(_validated(Workload, objects.workload, f"{at}.patch"))
        changed = sorted(name for name in Workload.model_fields if getattr(before, name) != getattr(after, name))
        fixed = [name for name in changed if name not in _PATCHABLE_WORKLOAD]
        if after.request.timeout != before.request.timeout:
            fixed.append("request.timeout")
        if fixed:
            raise ScenarioError(
                f"cannot change {', '.join(_camel(f) for f in fixed)} during a run; a patch may change "
                f"{', '.join(sorted(_camel(f) for f in _PATCHABLE_WORKLOAD))} (except request.timeout)",
                field=f"{at}.patch",
            )
        if not self.build:
            return lambda runtime: ""
        budget = self.spec.disruption_budget.build() if self.spec.disruption_budget is not None else None
        metrics = _validated(Metrics, objects.metrics, f"{at}.target")
        cluster = after.cluster_spec(self.spec.routing, metrics, budget, self.spec.knative, self.spec.client.build())
        streams = self.streams
        work = None
        if before.request != after.request:
            work = class_work(cluster.requests, streams, f"@{event.id}")

        def apply(runtime: Runtime) -> str:
            model = runtime.model
            model.set_spec(cluster)
            if "resources" in changed:
                model.set_cpu(cluster.replica.cpu_request, cluster.replica.cpu_limit)
            if work is not None:
                model.set_request_work(work)
            if "replicas" in changed:
                model.scale_to(cluster.initial_replicas)
            return "changed " + (", ".join(_camel(f) for f in changed) if changed else "nothing")

        return apply

    def _traffic(
        self, event: Event, operation: str, name: str | None, body: Any, at: str, objects: Objects
    ) -> Callable[[Runtime], str]:
        present = objects.traffic is not None
        if operation == "create" and present:
            raise ScenarioError("the traffic exists already; patch it, or delete it first", field=f"{at}.target")
        if operation in ("patch", "delete") and not present:
            raise ScenarioError("there is no traffic now; create it first", field=f"{at}.target")
        if operation == "delete":
            objects.traffic = None
            if self.spec.mode == "fluid":
                return lambda runtime: _replace_rate(runtime, Intensity(), "traffic stopped")
            return lambda runtime: _replace_traffic(runtime, iter(()), "traffic stopped")
        if operation == "create":
            if body.object is None:
                raise ScenarioError("creating traffic needs an 'object': a traffic spec", field=f"{at}.object")
            objects.traffic, where = body.object, f"{at}.object"
        else:
            objects.traffic, where = merge_patch(objects.traffic, body.patch), f"{at}.patch"
        traffic = _validated(_TRAFFIC, objects.traffic, where)
        if not self.build:
            return lambda runtime: ""
        message = "traffic created" if operation == "create" else "traffic patched"
        if self.spec.mode == "fluid":  # the traffic as a rate, from the event on
            try:
                rate = build_rate(traffic, duration=self.horizon, base_dir=self.base_dir)
            except ScenarioError as exc:
                exc.field = where if exc.field is None else f"{where} ({exc.field})"
                raise
            return lambda runtime: _replace_rate(runtime, rate, message)
        try:
            arrivals = build_arrivals(
                traffic,
                duration=self.horizon,
                streams=self.streams,
                base_dir=self.base_dir,
                stream=f"traffic@{event.id}",
            )
        except ScenarioError as exc:
            exc.field = where if exc.field is None else f"{where} ({exc.field})"
            raise
        return lambda runtime: _replace_traffic(
            runtime, arrivals, "traffic created" if operation == "create" else "traffic patched"
        )

    def _metrics(
        self, event: Event, operation: str, name: str | None, body: Any, at: str, objects: Objects
    ) -> Callable[[Runtime], str]:
        if operation == "delete":
            if not objects.metrics_up:
                raise ScenarioError("the metrics pipeline is down already", field=f"{at}.target")
            objects.metrics_up = False
            return lambda runtime: _metrics_down(runtime)
        if operation == "create":
            if objects.metrics_up:
                raise ScenarioError("the metrics pipeline is up; delete it first to take it down", field=f"{at}.target")
            objects.metrics_up = True
            return lambda runtime: _metrics_up(runtime)
        objects.metrics = merge_patch(objects.metrics, body.patch)
        metrics = _validated(Metrics, objects.metrics, f"{at}.patch")
        spec = metrics.build()
        if spec.source is not self.spec.metrics.source:
            raise ScenarioError("the metrics source is fixed for the run", field=f"{at}.patch.source")

        def apply(runtime: Runtime) -> str:
            server = runtime.model.metrics_server
            if server is not None:
                server.resolution, server.housekeeping = spec.resolution, spec.housekeeping
                return (
                    f"metrics-server every {format_duration(spec.resolution)}, "
                    f"housekeeping every {format_duration(spec.housekeeping)}"
                )
            runtime.model.metrics_ticker.spec = spec
            runtime.model.metrics_pipeline.lag = spec.lag
            return (
                f"metrics every {format_duration(spec.interval)}, first after {format_duration(spec.first_after)}, "
                f"lag {format_duration(spec.lag)}"
            )

        return apply

    def _autoscaler(
        self, event: Event, operation: str, name: str | None, body: Any, at: str, objects: Objects
    ) -> Callable[[Runtime], str]:
        if name is None:
            raise ScenarioError("name the autoscaler: autoscaler/<name>", field=f"{at}.target", value=body.target)
        exists = name in objects.autoscalers
        if operation == "create" and exists:
            raise ScenarioError(f"autoscaler '{name}' exists already", field=f"{at}.target")
        if operation in ("patch", "delete") and not exists:
            known = ", ".join(sorted(objects.autoscalers)) or "none"
            raise ScenarioError(f"no autoscaler '{name}' at this time (there are: {known})", field=f"{at}.target")
        if operation == "delete":
            del objects.autoscalers[name]
            return lambda runtime: _stop(runtime, name)
        if operation == "create":
            if not isinstance(body.object, dict):
                raise ScenarioError("creating an autoscaler needs an 'object' mapping", field=f"{at}.object")
            entry, where = dict(body.object), f"{at}.object"
        else:
            entry, where = merge_patch(objects.autoscalers[name], body.patch), f"{at}.patch"
        if entry.get("name", name) != name:
            raise ScenarioError(f"the autoscaler's name must stay '{name}'", field=f"{where}.name")
        objects.autoscalers[name] = entry
        spec = _validated(_AUTOSCALER, entry, where)
        if not self.build:
            return lambda runtime: ""
        autoscaler = build_autoscaler(spec, self.base_dir, where, self.spec.workload.simulated)
        self._started = autoscaler

        def apply(runtime: Runtime) -> str:
            if operation == "patch":
                runtime.stop_autoscaler(name)
            runtime.start_autoscaler(name, autoscaler)
            return f"autoscaler {name} {'restarted with the patch' if operation == 'patch' else 'started'}"

        return apply

    def _replica(
        self, event: Event, operation: str, name: str | None, body: Any, at: str, objects: Objects
    ) -> Callable[[Runtime], str]:
        _only(operation, ("delete",), "a replica (replicas come from the workload: patch its replicas)", at)

        def apply(runtime: Runtime) -> str:
            model = runtime.model
            if name is None:
                ready = sorted(model.replicas_active, key=lambda r: r.id)
                if not ready:
                    return "no ready replica to delete"
                replica = ready[runtime.pick(event.id, len(ready))]
            else:
                named = next((r for r in model.replicas.values() if name in (str(r.id), r.name)), None)
                if named is None or named.state is ReplicaState.TERMINATED:
                    return f"no replica {name} now; nothing deleted"
                replica = named
            model.kill(replica)
            return f"{replica.name} killed"

        return apply

    def _node(
        self, event: Event, operation: str, name: str | None, body: Any, at: str, objects: Objects
    ) -> Callable[[Runtime], str]:
        nodes = objects.nodes
        if nodes is None:
            raise ScenarioError("node events need spec.cluster", field=f"{at}.target", value=body.target)
        if name is None:
            raise ScenarioError("name the node: node/<name>", field=f"{at}.target", value=body.target)
        group = self._group_of(name)
        exists = name in nodes
        if operation == "create" and exists:
            raise ScenarioError(
                f"node '{name}' exists at this time; delete it first or give another name",
                field=f"{at}.target",
                value=body.target,
            )
        if operation == "create" and group is not None:
            raise ScenarioError(
                f"'{name}' is a name node group '{group}' gives its nodes; give another name",
                field=f"{at}.target",
                value=body.target,
            )
        if operation != "create" and not exists:
            if group is not None:
                message = f"no node '{name}': nodes that node group '{group}' adds are not targets of events"
            else:
                message = f"no node '{name}' at this time (there are: {_some(sorted(nodes))})"
            raise ScenarioError(message, field=f"{at}.target", value=body.target)
        if operation == "delete":
            del nodes[name]
            return lambda runtime: _cluster(runtime).drain_node(name, lambda said: runtime.note(event, said))
        if operation == "create":
            if not isinstance(body.object, dict):
                raise ScenarioError(
                    "creating a node needs an 'object': a node as in spec.cluster.nodes, without name and count",
                    field=f"{at}.object",
                )
            written, where = dict(body.object), f"{at}.object"
        else:
            written, where = merge_patch(nodes[name], body.patch), f"{at}.patch"
        for key in _NODE_IDENTITY:
            if key in written:
                raise ScenarioError(
                    f"a node event takes no {key}: the target names the node, and each event is one node",
                    field=f"{where}.{key}",
                    value=written[key],
                )
        before = nodes.get(name)
        nodes[name] = written
        shape = _validated(NodeShape, written, where)
        node = shape.build(name)
        if operation == "create":
            return lambda runtime: _cluster(runtime).add_node(node, lambda said: runtime.note(event, said))
        old = _validated(NodeShape, before, f"{at}.target")
        changed = [_camel(f) for f in NodeShape.model_fields if getattr(old, f) != getattr(shape, f)]

        def apply(runtime: Runtime) -> str:
            evicted = _cluster(runtime).patch_node(node)
            said = f"node {name}: changed " + (", ".join(changed) if changed else "nothing")
            return f"{said}; {evicted}" if evicted else said

        return apply

    def _group_of(self, name: str) -> str | None:
        """The node group whose nodes are named like this (`<group>-<index>`), if any."""
        cluster = self.spec.cluster
        groups = cluster.node_groups if cluster is not None else []
        return next((g.name for g in groups if re.fullmatch(rf"{re.escape(g.name)}-\d+", name)), None)

    def _resolve(self, workload: Workload) -> Workload:
        if not self.build:
            return workload
        workload = with_deployment(workload, self.base_dir)
        if self.spec.knative:
            workload = with_container_concurrency(workload, knative_concurrency(self.spec, self.base_dir))
        return workload


def _replace_traffic(runtime: Runtime, arrivals: Any, message: str) -> str:
    runtime.model.traffic_source.replace(arrivals)
    return message


def _replace_rate(runtime: Runtime, rate: Intensity, message: str) -> str:
    """A fluid run's traffic event: its plant's rate from now on."""
    plant = runtime.model.plant
    assert plant is not None, "a fluid run has a plant"
    plant.replace_rate(rate)
    return message


def _metrics_down(runtime: Runtime) -> str:
    runtime.model.metrics_down()
    return "metrics pipeline down: samples are lost"


def _metrics_up(runtime: Runtime) -> str:
    runtime.model.metrics_up()
    return "metrics pipeline up"


def _stop(runtime: Runtime, name: str) -> str:
    runtime.stop_autoscaler(name)
    return f"autoscaler {name} stopped"


def _cluster(runtime: Runtime) -> ClusterPlacement:
    placement = runtime.placement
    assert placement is not None, "node events are refused at load time without spec.cluster"
    return placement


def _some(names: list[str], most: int = 10) -> str:
    """Names for a message: all of a few, the first `most` of many."""
    if not names:
        return "none"
    shown = ", ".join(names[:most])
    return shown if len(names) <= most else f"{shown} and {len(names) - most} more"


def _only(operation: str, allowed: tuple[str, ...], what: str, at: str) -> None:
    if operation not in allowed:
        raise ScenarioError(f"{what} takes only {' or '.join(allowed)}, not {operation}", field=at)


def _validated(model: Any, data: Any, field: str) -> Any:
    """`data` validated as `model` (a pydantic model or TypeAdapter); a problem names its field under `field`."""
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(data)
        return model.model_validate(data)
    except ValidationError as exc:
        path, message, value = describe_problem(exc, data)
        raise ScenarioError(message, field=".".join([field, *map(str, path)]), value=value) from None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
