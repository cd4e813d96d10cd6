"""The base of every scenario-file model, in a module of its own so any part of the schema can use it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Spec(BaseModel):
    """A part of a scenario file: camelCase keys as in Kubernetes manifests, unknown keys are errors, immutable."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)


class Loose(Spec):
    """A part of a Kubernetes manifest skenario does not use (metadata, targetRef, status): any fields."""

    model_config = ConfigDict(extra="allow", frozen=True)
