"""The dry run of a scenario's timeline: every event checked against the objects as written, before the run.

An event that patches an autoscaler a previous event created is checked against that one, and a
mistake is reported with the line of the event in the user's file, at load time rather than
halfway through a run.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from skenario.core.random import RandomStreams
from skenario.errors import ScenarioError
from skenario.scenario.format.autoscalers import autoscaler_names
from skenario.scenario.format.scenario import Scenario, Workload
from skenario.scenario.io import line_of
from skenario.scenario.wiring.operations import Objects, Planner
from skenario.scenario.wiring.prepare import colocated_objects, plan_events
from skenario.scenario.wiring.targets import MAIN
from skenario.scenario.wiring.traffic import OPEN_HORIZON


def check_pods_fit(scenario: Scenario, root: yaml.Node | None, source: str) -> None:
    """With spec.cluster, a pod must fit some node (a static one or a node group's): else it would wait forever."""
    spec = scenario.spec
    cluster = spec.cluster
    if cluster is None:
        return
    shapes = [*cluster.nodes, *(group.node for group in cluster.node_groups)]
    workloads: list[tuple[list[int | str], Workload]] = [(["spec", "workload"], spec.workload)]
    workloads += [(["spec", "workloads", i, "workload"], entry.workload) for i, entry in enumerate(spec.workloads)]
    for where, workload in workloads:
        resources = workload.resources  # requests as the API server defaults them (to the limits)
        for resource, asked in (("cpu", resources.cpu_request or None), ("memory", resources.memory_request)):
            largest = max(getattr(shape, resource) for shape in shapes)
            if asked is not None and asked > largest:
                unit = "m" if resource == "cpu" else " bytes"
                path = [*where, "resources", "requests", resource]
                raise ScenarioError(
                    f"a pod requesting {asked}{unit} fits no node: the largest allocates {largest}{unit}",
                    file=source,
                    field=".".join(map(str, path)),
                    value=asked,
                    line=line_of(root, path),
                )


def check_events(scenario: Scenario, root: yaml.Node | None, source: str) -> None:
    """Walk the timeline over the objects as written, so a bad event is reported with its line now: each
    event on the workloads it acts on (`wiring.targets`)."""
    spec = scenario.spec
    horizon = spec.end or OPEN_HORIZON
    document = scenario.document
    try:
        planner = Planner(spec, Path("."), RandomStreams(0), horizon, build=False)
        planners = {MAIN: (planner, Objects.of(document, autoscaler_names(spec.autoscalers)))}
        for index, entry in enumerate(spec.workloads):
            objects = colocated_objects(document, index, entry.autoscalers)
            planner = Planner(entry.as_spec(spec), Path("."), RandomStreams(0), horizon, build=False)
            planners[entry.name] = (planner, objects)
        events = [(f"spec.events.{i}", event) for i, event in enumerate(spec.events)]
        plan_events(events, planners, scenario.metadata.name)
    except ScenarioError as exc:
        if exc.file is None:
            exc.file = source
            path = [int(p) if p.isdigit() else p for p in (exc.field or "").split(".") if p]
            exc.line = line_of(root, path)
        raise
