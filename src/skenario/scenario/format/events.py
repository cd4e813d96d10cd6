"""The `spec.events` timeline (KEP-140): timed operations on the scenario's objects.

```yaml
events:
  - id: rush-hour                  # unique; names the event in errors and in the results timeline
    at: 10m
    patch:                         # a JSON merge patch (RFC 7386) on the object as written
      target: traffic
      patch: {rate: 40/s}
  - {id: crash, at: 12m, delete: {target: replica}}            # a random ready replica (or replica/3)
  - {id: metrics-down, at: 15m, delete: {target: metrics}}      # the pipeline loses every sample...
  - {id: metrics-up, at: 17m, create: {target: metrics}}        # ...until it is back
  - id: second-opinion
    at: 20m
    create: {target: autoscaler/extra, object: {type: kpa, annotations: {...}}}
  - {id: cordon, at: 25m, patch: {target: node/worker-0, patch: {unschedulable: true}}}
  - id: spot-warning                # NoExecute: pods that do not tolerate it are evicted at once
    at: 26m
    patch: {target: node/worker-1, patch: {taints: [{key: spot, effect: NoExecute}]}}
  - {id: maintenance, at: 30m, delete: {target: node/worker-2}}  # kubectl drain, then the node goes
  - {id: bigger, at: 31m, create: {target: node/large, object: {cpu: 16, memory: 64Gi}}}
  - {id: end, at: 1h, done: {}}
```

Each event has exactly one operation. Targets are `workload`, `traffic`, `metrics`,
`autoscaler/<name>`, `replica` or `replica/<id>`, and `node/<name>`; which operations each
accepts, and which nodes there are at each event's time, is checked when the scenario loads
(`dryrun.check_events`), not when the run reaches them. In a scenario of several workloads
(`spec.workloads`), `workload/<w>`, `traffic/<w>`, `replica/<w>[/<id>]` and `autoscaler/<w>/<name>`
act on workload `w` (`wiring.targets`).

Nodes (with `spec.cluster` only): a node is one of `spec.cluster.nodes` (each name a `count`
gives) or one an earlier event created, and not yet deleted; a node group's nodes are not targets.
`create` takes the node as `spec.cluster.nodes` writes one, without name and count. `patch` is a
merge patch on the node as written: labels merge key by key, `taints` is replaced whole; it
changes labels, taints, unschedulable (a cordon) and allocatable in place, and pods stay, except
those a NoExecute taint evicts (tolerationSeconds is not modelled). `delete` drains the node as
`kubectl drain` does (cordon, evictions that respect the disruption budget, retried every 5 s),
then removes it once its pods are gone.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from skenario.scenario.format.base import Spec
from skenario.scenario.format.units import Duration

OPERATIONS = ("create", "patch", "delete", "done")
TargetKind = Literal["workload", "traffic", "metrics", "autoscaler", "replica", "node"]
TARGET_KINDS: tuple[str, ...] = TargetKind.__args__  # type: ignore[attr-defined]


class CreateOperation(Spec):
    target: str = Field(description="autoscaler/<name>, traffic, metrics or node/<name>.")
    object: dict[str, Any] | None = Field(
        None,
        description="What to create: an autoscaler (as in spec.autoscalers), traffic (as spec.traffic) or a node "
        "(as in spec.cluster.nodes, without name and count).",
    )


class PatchOperation(Spec):
    target: str = Field(description="workload, traffic, metrics, autoscaler/<name> or node/<name>.")
    patch: dict[str, Any] = Field(description="A JSON merge patch (RFC 7386) on the object as written; null deletes.")


class DeleteOperation(Spec):
    target: str = Field(
        description="traffic, metrics (down until created again), autoscaler/<name>, replica[/<id>], "
        "node/<name> (drained as kubectl drain does, then removed)."
    )


class DoneOperation(Spec):
    """The end of the run: nothing happens after it."""


class Event(Spec):
    """One timed operation. Exactly one of create, patch, delete and done."""

    id: str = Field(min_length=1, description="Unique among the events.")
    at: Duration = Field(ge=0, description="When, from the start of the run.")
    create: CreateOperation | None = None
    patch: PatchOperation | None = None
    delete: DeleteOperation | None = None
    done: DoneOperation | None = None

    @model_validator(mode="after")
    def _exactly_one_operation(self) -> Self:
        given = [name for name in OPERATIONS if getattr(self, name) is not None]
        if len(given) != 1:
            found = ", ".join(given) if given else "none"
            raise ValueError(
                f"an event has exactly one operation of create, patch, delete or done (write `done: {{}}`); "
                f"found {found}"
            )
        return self

    @property
    def operation(self) -> str:
        return next(name for name in OPERATIONS if getattr(self, name) is not None)

    @property
    def body(self) -> CreateOperation | PatchOperation | DeleteOperation | DoneOperation:
        body = getattr(self, self.operation)
        assert body is not None
        return body  # type: ignore[no-any-return]


def split_target(target: str) -> tuple[str, str | None]:
    """`kind/name` as (kind, name); a bare kind has no name."""
    kind, _, name = target.partition("/")
    return kind, (name or None)


def merge_patch(document: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge key by key, null removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(document) if isinstance(document, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
