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
from skenario.scenario.build.operations import Objects, Planner
from skenario.scenario.build.traffic import OPEN_HORIZON
from skenario.scenario.format.autoscalers import autoscaler_names
from skenario.scenario.format.scenario import Scenario
from skenario.scenario.io import line_of


def check_pods_fit(scenario: Scenario, root: yaml.Node | None, source: str) -> None:
    """With spec.cluster, a pod must fit some node (a static one or a node group's): else it would wait forever."""
    spec = scenario.spec
    cluster = spec.cluster
    if cluster is None:
        return
    shapes = [*cluster.nodes, *(group.node for group in cluster.node_groups)]
    requests = spec.workload.resources.requests
    for resource, asked in (("cpu", requests.cpu), ("memory", requests.memory)):
        largest = max(getattr(shape, resource) for shape in shapes)
        if asked is not None and asked > largest:
            unit = "m" if resource == "cpu" else " bytes"
            path: list[int | str] = ["spec", "workload", "resources", "requests", resource]
            raise ScenarioError(
                f"a pod requesting {asked}{unit} fits no node: the largest allocates {largest}{unit}",
                file=source,
                field=".".join(map(str, path)),
                value=asked,
                line=line_of(root, path),
            )


def check_events(scenario: Scenario, root: yaml.Node | None, source: str) -> None:
    """Walk the timeline over the objects as written, so a bad event is reported with its line now."""
    spec = scenario.spec
    planner = Planner(spec, Path("."), RandomStreams(0), spec.end or OPEN_HORIZON, build=False)
    try:
        objects = Objects.of(scenario.document, autoscaler_names(spec.autoscalers))
        planner.plan([(f"spec.events.{i}", event) for i, event in enumerate(spec.events)], objects)
    except ScenarioError as exc:
        if exc.file is None:
            exc.file = source
            path = [int(p) if p.isdigit() else p for p in (exc.field or "").split(".") if p]
            exc.line = line_of(root, path)
        raise
