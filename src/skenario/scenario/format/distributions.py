"""Random durations in scenario files: a plain duration means a constant, or a `distribution`.

```yaml
cpuTime: 50ms
ioTime: {distribution: exponential, mean: 20ms}
```
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from skenario.core.random import Constant, Distribution, Exponential, LogNormal, Normal, Uniform
from skenario.scenario.format.base import Spec as _Spec
from skenario.scenario.format.units import Duration


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
    """`cpuTime: 200ms` means a constant 200 ms."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return {"distribution": "constant", "value": value}
    return value


RandomDuration = Annotated[
    DistributionSpec,
    BeforeValidator(_shorthand_constant, json_schema_input_type=Duration | DistributionSpec),
]
"""A duration or a distribution of durations."""
