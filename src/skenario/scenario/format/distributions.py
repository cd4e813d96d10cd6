"""Random quantities in scenario files: a plain value means a constant, or a `distribution`.

```yaml
cpuTime: 50ms
ioTime: {distribution: exponential, mean: 20ms}
memory: {baseline: {distribution: normal, mean: 200Mi, stddev: 20Mi}, perRequest: 2Mi}
```

The five shapes are written once, generic over the quantity (a duration in ns, or bytes), and
each quantity gets its own named classes so error messages and the JSON Schema read naturally.
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BeforeValidator, Field, model_validator

from skenario.core.random import Constant, Distribution, Exponential, LogNormal, Normal, Uniform
from skenario.scenario.format.base import Spec as _Spec
from skenario.scenario.format.units import ByteQuantity, Duration

Q = TypeVar("Q", bound=int)


class _Constant(_Spec, Generic[Q]):
    distribution: Literal["constant"]
    value: Q = Field(ge=0)

    def build(self) -> Distribution:
        return Constant(self.value)


class _Exponential(_Spec, Generic[Q]):
    distribution: Literal["exponential"]
    mean: Q = Field(gt=0)

    def build(self) -> Distribution:
        return Exponential(self.mean)


class _Uniform(_Spec, Generic[Q]):
    distribution: Literal["uniform"]
    min: Q = Field(ge=0)
    max: Q = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> _Uniform[Q]:
        if self.min > self.max:
            raise ValueError("min must not exceed max")
        return self

    def build(self) -> Distribution:
        return Uniform(self.min, self.max)


class _Normal(_Spec, Generic[Q]):
    """Cut at zero: a negative draw becomes 0."""

    distribution: Literal["normal"]
    mean: Q = Field(ge=0)
    stddev: Q = Field(ge=0)

    def build(self) -> Distribution:
        return Normal(self.mean, self.stddev)


class _LogNormal(_Spec, Generic[Q]):
    """Given by the mean and standard deviation of the quantities themselves."""

    distribution: Literal["lognormal"]
    mean: Q = Field(gt=0)
    stddev: Q = Field(ge=0)

    def build(self) -> Distribution:
        return LogNormal(self.mean, self.stddev)


class ConstantDistribution(_Constant[Duration]):
    pass


class ExponentialDistribution(_Exponential[Duration]):
    pass


class UniformDistribution(_Uniform[Duration]):
    pass


class NormalDistribution(_Normal[Duration]):
    pass


class LogNormalDistribution(_LogNormal[Duration]):
    pass


class ConstantBytes(_Constant[ByteQuantity]):
    pass


class ExponentialBytes(_Exponential[ByteQuantity]):
    pass


class UniformBytes(_Uniform[ByteQuantity]):
    pass


class NormalBytes(_Normal[ByteQuantity]):
    pass


class LogNormalBytes(_LogNormal[ByteQuantity]):
    pass


_KINDS = ("constant", "exponential", "uniform", "normal", "lognormal")


def shorthand_constant(value: Any) -> Any:
    """`cpuTime: 200ms` means a constant 200 ms; `perRequest: 2Mi` a constant 2 MiB.

    A mapping without a known `distribution` is named here: the discriminator's own message says
    "unable to extract tag" and lists no kinds.
    """
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return {"distribution": "constant", "value": value}
    if isinstance(value, dict):
        kind = value.get("distribution")
        if kind is None:
            raise ValueError(f"a distribution needs 'distribution': one of {', '.join(_KINDS)}")
        if kind not in _KINDS:
            raise ValueError(f"{kind!r} is not a distribution; use one of {', '.join(_KINDS)}")
        return value
    if value is None:
        return value  # a field that may be null takes it; for one that may not, pydantic says what it takes
    raise ValueError(
        f"should be a quantity ('250ms', '2Mi') or a mapping with 'distribution', not a {type(value).__name__}"
    )


DistributionSpec = Annotated[
    ConstantDistribution | ExponentialDistribution | UniformDistribution | NormalDistribution | LogNormalDistribution,
    Field(discriminator="distribution"),
]

RandomDuration = Annotated[
    DistributionSpec,
    BeforeValidator(shorthand_constant, json_schema_input_type=Duration | DistributionSpec),
]
"""A duration or a distribution of durations."""

BytesDistributionSpec = Annotated[
    ConstantBytes | ExponentialBytes | UniformBytes | NormalBytes | LogNormalBytes,
    Field(discriminator="distribution"),
]

RandomBytes = Annotated[
    BytesDistributionSpec,
    BeforeValidator(shorthand_constant, json_schema_input_type=ByteQuantity | BytesDistributionSpec),
]
"""An amount of memory or a distribution of amounts: `2Mi`, `{distribution: normal, mean: 200Mi, stddev: 20Mi}`."""
