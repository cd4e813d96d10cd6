"""The scenario file format: a Kubernetes-style document validated with pydantic.

```yaml
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: quickstart}
spec:
  duration: 10m
  seed: 42
  workload: {replicas: 4, serviceTime: {distribution: exponential, mean: 200ms}}
  traffic: {type: poisson, rate: 15/s}
```

Fields are camelCase as in Kubernetes manifests; unknown fields are errors, so a typo never passes
silently. Later issues add the cluster, autoscalers and the `events` timeline under `spec`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from skenario.core.random import Constant, Distribution, Exponential, LogNormal, Normal, Uniform
from skenario.scenario.units import Duration, Rate

API_VERSION = "skenario.dev/v1alpha1"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True, frozen=True)


class ConstantDistribution(_Spec):
    distribution: Literal["constant"]
    value: Duration = Field(ge=0)

    def build(self) -> Distribution:
        return Constant(self.value)


class ExponentialDistribution(_Spec):
    distribution: Literal["exponential"]
    mean: Duration = Field(gt=0)

    def build(self) -> Distribution:
        return Exponential(self.mean)


class UniformDistribution(_Spec):
    distribution: Literal["uniform"]
    min: Duration = Field(ge=0)
    max: Duration = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> UniformDistribution:
        if self.min > self.max:
            raise ValueError("min must not exceed max")
        return self

    def build(self) -> Distribution:
        return Uniform(self.min, self.max)


class NormalDistribution(_Spec):
    """Cut at zero: a negative draw becomes 0."""

    distribution: Literal["normal"]
    mean: Duration = Field(ge=0)
    stddev: Duration = Field(ge=0)

    def build(self) -> Distribution:
        return Normal(self.mean, self.stddev)


class LogNormalDistribution(_Spec):
    """Given by the mean and standard deviation of the durations themselves."""

    distribution: Literal["lognormal"]
    mean: Duration = Field(gt=0)
    stddev: Duration = Field(ge=0)

    def build(self) -> Distribution:
        return LogNormal(self.mean, self.stddev)


DistributionSpec = Annotated[
    ConstantDistribution | ExponentialDistribution | UniformDistribution | NormalDistribution | LogNormalDistribution,
    Field(discriminator="distribution"),
]


def _shorthand_constant(value: Any) -> Any:
    """`serviceTime: 200ms` means a constant 200 ms."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return {"distribution": "constant", "value": value}
    return value


class Workload(_Spec):
    """The replicas and how each serves requests (issue #3 replaces this with a CPU model)."""

    replicas: int = Field(ge=0, description="Replicas that serve traffic from the start.")
    service_time: Annotated[DistributionSpec, BeforeValidator(_shorthand_constant)] = Field(
        description="Time to serve one request: a duration, or a distribution such as "
        "{distribution: exponential, mean: 200ms}."
    )
    concurrency: int = Field(1, ge=1, description="Requests one replica serves at once; the rest wait in FIFO order.")
    queue_capacity: int | None = Field(
        None, ge=0, description="Requests that may wait on one replica; more fail. Unbounded when absent."
    )

    def service_distribution(self) -> Distribution:
        return self.service_time.build()


class ConstantTraffic(_Spec):
    """Evenly spaced arrivals."""

    type: Literal["constant"]
    rate: Rate = Field(ge=0, description="Requests per second.")


class PoissonTraffic(_Spec):
    """Arrivals with exponential gaps (a Poisson process)."""

    type: Literal["poisson"]
    rate: Rate = Field(ge=0, description="Mean requests per second.")


TrafficSpec = Annotated[ConstantTraffic | PoissonTraffic, Field(discriminator="type")]


class ScenarioSpec(_Spec):
    duration: Duration = Field(gt=0, description="Simulated time to run, such as '10m'.")
    seed: int = Field(0, ge=0, description="Every random draw comes from this seed.")
    workload: Workload
    traffic: TrafficSpec


class Metadata(_Spec):
    name: str = Field(min_length=1)
    description: str | None = None


class Scenario(_Spec):
    """A whole scenario document."""

    api_version: Literal["skenario.dev/v1alpha1"]
    kind: Literal["Scenario"]
    metadata: Metadata
    spec: ScenarioSpec
