"""Random streams and distributions, all drawn from the scenario's one seed.

Each component asks for a stream by name. The stream's seed is derived from the scenario seed and
a stable hash of that name (not from spawn order), so adding a component never changes the draws
of the others. Samples are drawn in numpy batches and handed out one at a time through a C-level
iterator, which is cheaper per draw than `random.expovariate`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from statistics import NormalDist
from typing import Protocol

import numpy as np

BATCH = 4096


def _name_key(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")


class RandomStreams:
    """Independent numpy Generators keyed by component name, from one seed."""

    def __init__(self, seed: int) -> None:
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        self.seed = seed

    def generator(self, name: str) -> np.random.Generator:
        sequence = np.random.SeedSequence(entropy=self.seed, spawn_key=(_name_key(name),))
        return np.random.Generator(np.random.PCG64(sequence))

    def phase(self, name: str, period: int) -> int:
        """When a loop that runs every `period` ns first runs after the start: uniform in (0, period].

        A controller or server started at some moment before the run is at a random point of its
        period when the run starts. The draw is the first of the stream `name`, so each loop has a
        stream of its own: one loop's phase never moves another's, nor any other draw. `period`
        itself is the aligned loop, first run one whole period in.
        """
        return period - int(self.generator(name).random() * period)

    def root(self) -> RandomStreams:
        """The run's streams before any scoping: what one cluster shares across its workloads."""
        return self

    def scoped(self, prefix: str) -> RandomStreams:
        """The streams of one part of the run (a workload of several): every name under `prefix`, so two
        parts that name their components alike still draw independently."""
        return _ScopedStreams(self.seed, prefix)


class _ScopedStreams(RandomStreams):
    def __init__(self, seed: int, prefix: str) -> None:
        super().__init__(seed)
        self.prefix = prefix

    def generator(self, name: str) -> np.random.Generator:
        return super().generator(self.prefix + name)

    def root(self) -> RandomStreams:
        return RandomStreams(self.seed)


class Distribution(Protocol):
    """A non-negative quantity (a duration in ns, or a count) drawn in batches."""

    def batch(self, rng: np.random.Generator, size: int) -> np.ndarray: ...

    def mean(self) -> float: ...

    def quantile(self, p: float) -> float:
        """The value below which a share `p` (in (0, 1)) of the draws fall: the inverse of the CDF."""
        ...


def sampler(dist: Distribution, rng: np.random.Generator, batch: int = BATCH) -> Callable[[], int]:
    """A zero-argument callable giving the next integer sample.

    Batches of `batch` values are rounded to integers, so the sequence depends only on the
    generator's state and the batch size, which keeps runs reproducible.
    """

    def batches() -> Iterator[list[int]]:
        while True:
            yield np.rint(dist.batch(rng, batch)).astype(np.int64).tolist()

    return chain.from_iterable(batches()).__next__


@dataclass(frozen=True)
class Constant:
    value: float

    def batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.full(size, self.value, dtype=np.float64)

    def mean(self) -> float:
        return self.value

    def quantile(self, p: float) -> float:
        return self.value


@dataclass(frozen=True)
class Exponential:
    mean_value: float

    def batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.exponential(self.mean_value, size)

    def mean(self) -> float:
        return self.mean_value

    def quantile(self, p: float) -> float:
        return -self.mean_value * math.log1p(-p)


@dataclass(frozen=True)
class Uniform:
    low: float
    high: float

    def batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.uniform(self.low, self.high, size)

    def mean(self) -> float:
        return (self.low + self.high) / 2

    def quantile(self, p: float) -> float:
        return self.low + p * (self.high - self.low)


@dataclass(frozen=True)
class Normal:
    """A normal distribution cut at zero: negative draws become 0 (a duration cannot be < 0)."""

    mean_value: float
    stddev: float

    def batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.maximum(rng.normal(self.mean_value, self.stddev, size), 0.0)

    def mean(self) -> float:
        return self.mean_value  # before the cut at zero; exact when stddev << mean

    def quantile(self, p: float) -> float:
        return max(self.mean_value + self.stddev * NormalDist().inv_cdf(p), 0.0)


@dataclass(frozen=True)
class LogNormal:
    """Parameterised by the mean and standard deviation of the values themselves."""

    mean_value: float
    stddev: float

    def _params(self) -> tuple[float, float]:
        variance_ratio = 1.0 + (self.stddev / self.mean_value) ** 2
        sigma = float(np.sqrt(np.log(variance_ratio)))
        mu = float(np.log(self.mean_value) - sigma * sigma / 2)
        return mu, sigma

    def batch(self, rng: np.random.Generator, size: int) -> np.ndarray:
        mu, sigma = self._params()
        return rng.lognormal(mu, sigma, size)

    def mean(self) -> float:
        return self.mean_value

    def quantile(self, p: float) -> float:
        mu, sigma = self._params()
        return math.exp(mu + sigma * NormalDist().inv_cdf(p))
