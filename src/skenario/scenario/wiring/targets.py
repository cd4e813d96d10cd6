"""Which workload an event acts on, in a scenario of several (`spec.workloads`).

An event names another workload right after its target's kind: `workload/<name>`,
`traffic/<name>`, `replica/<name>` or `replica/<name>/<id>`, and `autoscaler/<name>/<autoscaler>`.
Without a workload's name the target is `spec.workload`'s, as in a scenario of one workload
(`workload/<scenario name>` and `traffic/<scenario name>` say so explicitly). `metrics` acts on
every workload, the metrics pipeline being the cluster's; nodes and `done` are the scenario's.
Each workload's planner then reads the target as it would in a scenario of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from skenario.errors import ScenarioError
from skenario.scenario.format.events import Event, split_target

MAIN = ""
"""The key of `spec.workload` among a run's workloads (the others go by their names)."""


def route(event: Event, where: str, names: Sequence[str], scenario: str) -> list[tuple[str, Event]]:
    """The workloads the event acts on (`MAIN` or a name of `names`), each with the event as its planner reads it."""
    if event.done is not None:
        return [(MAIN, event)]
    body = event.body
    target = getattr(body, "target")  # noqa: B009 - every operation but done has one
    kind, name = split_target(target)
    if kind == "metrics":
        return [(MAIN, event), *((other, event) for other in names)]
    if kind not in ("workload", "traffic", "replica", "autoscaler") or name is None:
        return [(MAIN, event)]
    head, slash, rest = name.partition("/")
    if head in names and (kind != "autoscaler" or slash):
        return [(head, retarget(event, f"{kind}/{rest}" if rest else kind))]
    field = f"{where}.{event.operation}.target"
    if kind in ("workload", "traffic"):
        if name == scenario:
            return [(MAIN, retarget(event, kind))]
        raise ScenarioError(f"no workload '{name}' (there are: {_known(scenario, names)})", field=field, value=target)
    if kind == "autoscaler" and slash:
        raise ScenarioError(
            f"no workload '{head}' (there are: {', '.join(names) or 'none besides spec.workload'}); "
            "autoscaler/<name> is spec.workload's autoscaler, autoscaler/<workload>/<name> another workload's",
            field=field,
            value=target,
        )
    return [(MAIN, event)]


def retarget(event: Event, target: str) -> Event:
    """The event with another target (the same id, time and operation)."""
    operation = event.operation
    body = getattr(event, operation).model_copy(update={"target": target})
    return event.model_copy(update={operation: body})


def _known(scenario: str, names: Sequence[str]) -> str:
    return ", ".join([f"{scenario} (spec.workload)", *names])
