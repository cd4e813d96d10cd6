"""KEP-140's own Scenario, read as the KEP writes it: Kubernetes objects on a FakeTime timeline.

```yaml
apiVersion: simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1
kind: Scenario
metadata: {name: taint-and-delete}
spec:
  events:
    - id: node-a
      time: 0
      operation: Create
      createOperation:
        object: {apiVersion: v1, kind: Node, metadata: {name: a}, status: {allocatable: {cpu: "4", memory: 16Gi}}}
    - id: taint-a
      time: 2
      operation: Patch
      patchOperation:
        typeMeta: {apiVersion: v1, kind: Node}
        objectMeta: {name: a}
        patch: '{"spec": {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}}'
    - {id: gone, time: 3, operation: Delete,
       deleteOperation: {typeMeta: {apiVersion: v1, kind: Pod}, objectMeta: {name: web-1, namespace: default}}}
    - {id: end, time: 4, operation: Done, doneOperation: {done: true}}
```

`time` is FakeTime: a step number, not a duration. At each step every operation of that step runs
first, then the scheduler places all it can, then time moves on. A patch is a JSON merge patch
(RFC 7386), written as the KEP's string (JSON or YAML) or as a mapping. Beyond the KEP,
`spec.schedulerConfiguration` takes a KubeSchedulerConfiguration (its profile, as the scenario's
`scheduler` section reads it) and `spec.seed` seeds the scheduler's tie-breaks.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from skenario.scenario.format.base import Loose, Spec

KEP_API_VERSION = "simulation.kube-scheduler-simulator.x-k8s.io/v1alpha1"
OPERATIONS = {
    "Create": "create_operation",
    "Patch": "patch_operation",
    "Delete": "delete_operation",
    "Done": "done_operation",
}
MAX_FAKE_TIME = 2**31 - 1  # FakeTime is an int32


class TypeMeta(Spec):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    api_version: str = Field("", alias="apiVersion")
    kind: str = Field(min_length=1)


class ObjectRef(Spec):
    """The `objectMeta` of a patch or delete: which object."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)

    name: str = Field(min_length=1)
    namespace: str = ""


class CreateOperation(Spec):
    object: dict[str, Any] = Field(description="The object to create, a whole manifest.")


class PatchOperation(Spec):
    type_meta: TypeMeta
    object_meta: ObjectRef
    patch: str | dict[str, Any] = Field(description="A JSON merge patch: a JSON or YAML string, or a mapping.")


class DeleteOperation(Spec):
    type_meta: TypeMeta
    object_meta: ObjectRef


class DoneOperation(Spec):
    done: bool = True


class ScenarioEvent(Spec):
    """One event: its `operation` and the one matching `<operation>Operation` field."""

    id: str = Field(min_length=1)
    time: int = Field(ge=0, le=MAX_FAKE_TIME, description="FakeTime: the step at which the event happens.")
    operation: Literal["Create", "Patch", "Delete", "Done"]
    create_operation: CreateOperation | None = None
    patch_operation: PatchOperation | None = None
    delete_operation: DeleteOperation | None = None
    done_operation: DoneOperation | None = None

    @model_validator(mode="after")
    def _one_operation(self) -> Self:
        given = [name for name in OPERATIONS.values() if getattr(self, name) is not None]
        wanted = OPERATIONS[self.operation]
        if self.operation == "Done" and not given:
            return self
        if given != [wanted]:
            camel = "".join(part.title() if i else part for i, part in enumerate(wanted.split("_")))
            found = ", ".join(given) or "none"
            raise ValueError(f"operation {self.operation} takes exactly one {camel} field; found {found}")
        return self

    @property
    def body(self) -> Any:
        return getattr(self, OPERATIONS[self.operation])


class ScenarioSpec(Spec):
    events: list[ScenarioEvent] = Field(default_factory=list)
    scheduler_configuration: dict[str, Any] | None = Field(
        None, description="A KubeSchedulerConfiguration (skenario's extension; the KEP leaves it to the simulator)."
    )
    seed: int = Field(0, ge=0, le=2**63 - 1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        seen: set[str] = set()
        for event in self.events:
            if event.id in seen:
                raise ValueError(f"two events have the id {event.id!r}")
            seen.add(event.id)
        return self


class KepScenario(Spec):
    """A whole `kind: Scenario` document as KEP-140 defines it."""

    api_version: str
    kind: Literal["Scenario"]
    metadata: Loose
    spec: ScenarioSpec
    status: Loose | None = None  # a Scenario read back from a cluster: its status is output, not input

    @property
    def name(self) -> str:
        return str((self.metadata.model_extra or {}).get("name") or "scenario")


def is_kep_scenario(document: Any) -> bool:
    """Whether a document is KEP-140's Scenario (its events have `time` and `operation`) rather than skenario's."""
    if not isinstance(document, dict) or document.get("kind") != "Scenario":
        return False
    if document.get("apiVersion") == KEP_API_VERSION:
        return True
    spec = document.get("spec")
    events = spec.get("events") if isinstance(spec, dict) else None
    return bool(events) and isinstance(events, list) and all(isinstance(e, dict) and "operation" in e for e in events)
