"""Random streams and distributions.

Design: one seed per scenario, split into independent streams per component, so adding a
component does not change the others' draws; the same seed gives the same results bit for bit.

Tolerances for sample means come from the central limit theorem. For n independent draws of
a variable with mean mu and standard deviation sigma, the sample mean has standard error
sigma / sqrt(n) and is close to normal; |mean - mu| > 6 standard errors has probability about
2e-9, so a correct sampler essentially never fails a 6-SE bound (and the seeds are fixed, so
the outcome is reproducible). `sampler` also rounds every draw to the nearest integer, which
moves each value by at most 0.5 and so the mean by at most 0.5: that is added to the bound.
The means are large (10^3..10^6 ns) so rounding is otherwise negligible.

For sample variances: the sample variance s^2 of n draws has standard error
sigma^2 * sqrt((kurtosis - 1) / n), where kurtosis = E[(X - mu)^4] / sigma^4 (not the excess).
Rounding X to X + e with |e| <= 0.5 changes the variance by 2 Cov(X, e) + Var(e), at most
2 * sigma * 0.5 + 0.25 = sigma + 0.25, which is added to that bound. The ddof=0 bias of the
sample variance, sigma^2 / n, is far inside 6 standard errors and is left out.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skenario.core.random import (
    Constant,
    Distribution,
    Exponential,
    LogNormal,
    Normal,
    RandomStreams,
    Uniform,
    sampler,
)

N = 200_000
Z = 6.0


def draws(dist: object, seed: int = 2024, name: str = "component", n: int = N) -> np.ndarray:
    next_value = sampler(dist, RandomStreams(seed).generator(name))  # type: ignore[arg-type]
    return np.array([next_value() for _ in range(n)], dtype=np.float64)


def mean_bound(sigma: float, n: int = N) -> float:
    return Z * sigma / math.sqrt(n) + 0.5


# -- streams ---------------------------------------------------------------------------------


def test_same_seed_and_name_give_the_same_sequence() -> None:
    a = RandomStreams(7).generator("arrivals").random(1_000)
    b = RandomStreams(7).generator("arrivals").random(1_000)
    assert np.array_equal(a, b)


def test_asking_twice_for_a_stream_starts_it_over() -> None:
    streams = RandomStreams(7)
    assert np.array_equal(streams.generator("x").random(100), streams.generator("x").random(100))


@pytest.mark.parametrize(("seed_b", "name_b"), [(7, "service"), (8, "arrivals"), (0, "arrivals")])
def test_different_seed_or_name_gives_a_different_sequence(seed_b: int, name_b: str) -> None:
    a = RandomStreams(7).generator("arrivals").random(1_000)
    b = RandomStreams(seed_b).generator(name_b).random(1_000)
    # Two independent uniform sequences agree in no position except with probability 0.
    assert not np.any(a == b)


def test_a_stream_does_not_change_when_another_is_created_first() -> None:
    alone = RandomStreams(11).generator("autoscaler").random(500)

    streams = RandomStreams(11)
    other = streams.generator("new-component")
    other.random(10_000)  # the newcomer draws a lot before the old component starts
    streams.generator("another").standard_normal(3)
    after = streams.generator("autoscaler").random(500)
    assert np.array_equal(alone, after)


def test_a_phase_is_in_the_period_and_the_first_draw_of_its_own_stream() -> None:
    period = 15_000_000_000
    for seed in range(50):
        streams = RandomStreams(seed)
        phase = streams.phase("loop.phase", period)
        assert 0 < phase <= period
        assert phase == period - int(streams.generator("loop.phase").random() * period)


def test_phases_over_seeds_are_uniform_over_the_period() -> None:
    # n phases uniform on (0, period]: the mean is period/2 with standard error period/sqrt(12 n).
    period, n = 1000, 4000
    phases = np.array([RandomStreams(seed).phase("loop.phase", period) for seed in range(n)])
    assert abs(phases.mean() - period / 2) < Z * period / math.sqrt(12 * n) + 0.5
    assert phases.min() >= 1 and phases.max() <= period


def test_a_loops_phase_does_not_move_when_other_loops_draw() -> None:
    alone = RandomStreams(3).phase("autoscaler.hpa.sync.phase", 15)
    streams = RandomStreams(3)
    streams.phase("metrics-server.phase", 15)
    streams.generator("traffic").random(1000)
    assert streams.phase("autoscaler.hpa.sync.phase", 15) == alone
    # And drawing a phase moves no other stream: a stream's draws start over whoever drew before.
    assert np.array_equal(streams.generator("traffic").random(10), RandomStreams(3).generator("traffic").random(10))


def test_scoped_streams_keep_the_runs_root_for_what_a_cluster_shares() -> None:
    scoped = RandomStreams(9).scoped("batch/")
    assert scoped.phase("metrics-server.phase", 10**9) != RandomStreams(9).phase("metrics-server.phase", 10**9)
    assert scoped.root().phase("metrics-server.phase", 10**9) == RandomStreams(9).phase("metrics-server.phase", 10**9)
    assert RandomStreams(9).root().seed == 9


def test_negative_seed_is_refused() -> None:
    with pytest.raises(ValueError):
        RandomStreams(-1)


def test_streams_are_numpy_generators() -> None:
    assert isinstance(RandomStreams(0).generator("x"), np.random.Generator)


# -- sampler ---------------------------------------------------------------------------------


def test_sampler_yields_python_ints() -> None:
    next_value = sampler(Exponential(1_000.0), RandomStreams(1).generator("x"), batch=16)
    values = [next_value() for _ in range(100)]  # crosses several batch boundaries
    assert all(type(v) is int for v in values)
    assert all(v >= 0 for v in values)


def test_sampler_rounds_to_the_nearest_integer() -> None:
    next_value = sampler(Constant(3.7), RandomStreams(1).generator("x"), batch=4)
    assert [next_value() for _ in range(10)] == [4] * 10
    next_value = sampler(Constant(3.2), RandomStreams(1).generator("x"), batch=4)
    assert [next_value() for _ in range(10)] == [3] * 10


def test_sampler_is_reproducible_across_batches() -> None:
    def first(n: int) -> list[int]:
        next_value = sampler(Exponential(1e6), RandomStreams(99).generator("svc"), batch=7)
        return [next_value() for _ in range(n)]

    assert first(50) == first(50)


# -- distributions: declared means and sample means -----------------------------------------


def test_declared_means() -> None:
    assert Constant(5.0).mean() == 5.0
    assert Exponential(3.0).mean() == 3.0
    assert Uniform(2.0, 6.0).mean() == 4.0  # (low + high) / 2
    assert Normal(10.0, 1.0).mean() == 10.0
    assert LogNormal(10.0, 4.0).mean() == 10.0


def test_constant_is_constant() -> None:
    values = draws(Constant(1_234.0), n=10_000)
    assert np.all(values == 1_234)


def test_exponential_mean_and_spread() -> None:
    mu = 1e6
    values = draws(Exponential(mu))
    sigma = mu  # an exponential's standard deviation equals its mean
    assert abs(values.mean() - mu) <= mean_bound(sigma)
    # kurtosis of the exponential is 9, so SE(s^2) = sigma^2 * sqrt(8 / n)
    assert abs(values.var() - sigma**2) <= Z * sigma**2 * math.sqrt(8 / N) + sigma + 0.25
    assert values.min() >= 0


def test_uniform_mean_and_range() -> None:
    low, high = 1_000.0, 3_000.0
    values = draws(Uniform(low, high))
    sigma = (high - low) / math.sqrt(12)  # the standard deviation of U(low, high)
    assert abs(values.mean() - (low + high) / 2) <= mean_bound(sigma)
    assert values.min() >= low and values.max() <= high


def test_normal_mean() -> None:
    mu, sigma = 1e6, 1e5
    values = draws(Normal(mu, sigma))
    # The cut at zero is ten standard deviations away: P(X < 0) = Phi(-10) ~ 8e-24, so it moves
    # the mean by far less than the bound.
    assert abs(values.mean() - mu) <= mean_bound(sigma)
    assert values.min() >= 0


def test_normal_is_cut_at_zero() -> None:
    values = draws(Normal(0.0, 1_000.0), n=20_000)
    assert values.min() == 0  # about half the draws would be negative without the cut
    # E[max(X, 0)] for X ~ N(0, s) is s / sqrt(2 pi); SD of max(X, 0) is below s.
    assert abs(values.mean() - 1_000.0 / math.sqrt(2 * math.pi)) <= mean_bound(1_000.0, 20_000)


@pytest.mark.parametrize(("mu", "sigma"), [(1e6, 5e5), (1e6, 1e5), (5e4, 1e5)])
def test_lognormal_mean_and_stddev_are_those_of_the_values(mu: float, sigma: float) -> None:
    """LogNormal(mean, stddev) is parameterised by the values' own mean and standard deviation."""
    values = draws(LogNormal(mu, sigma))
    assert abs(values.mean() - mu) <= mean_bound(sigma)
    # For a lognormal with log-variance s2 = ln(1 + (sigma/mu)^2), the excess kurtosis is
    # e^(4 s2) + 2 e^(3 s2) + 3 e^(2 s2) - 6; the kurtosis is that plus 3.
    s2 = math.log1p((sigma / mu) ** 2)
    kurtosis = math.exp(4 * s2) + 2 * math.exp(3 * s2) + 3 * math.exp(2 * s2) - 3
    assert abs(values.var() - sigma**2) <= Z * sigma**2 * math.sqrt((kurtosis - 1) / N) + sigma + 0.25
    assert values.min() >= 0


def test_scoped_streams_are_the_named_streams_under_a_prefix() -> None:
    streams = RandomStreams(7)
    scoped = streams.scoped("batch/")
    assert scoped.generator("routing").random() == streams.generator("batch/routing").random()
    assert scoped.generator("routing").random() != streams.generator("routing").random()


@pytest.mark.parametrize(
    ("distribution", "p", "expected"),
    [
        (Constant(7.0), 0.9, 7.0),
        (Exponential(2.0), 0.5, 2.0 * math.log(2)),  # the median of an exponential: mean x ln 2
        (Exponential(2.0), 0.99, 2.0 * math.log(100)),
        (Uniform(1.0, 3.0), 0.25, 1.5),
        (Normal(10.0, 2.0), 0.975, 10.0 + 2.0 * 1.959963984540054),
        (Normal(1.0, 2.0), 0.1, 0.0),  # below zero: cut there, as its draws are
        (LogNormal(math.exp(0.5), math.sqrt((math.e - 1) * math.e)), 0.5, 1.0),  # mu 0, sigma 1: median e^0
    ],
)
def test_a_quantile_inverts_the_distributions_cdf(distribution: Distribution, p: float, expected: float) -> None:
    assert distribution.quantile(p) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("distribution", [Exponential(3.0), Uniform(0.5, 2.5), LogNormal(2.0, 1.5), Normal(5.0, 1.0)])
def test_a_quantile_is_what_the_draws_show(distribution: Distribution) -> None:
    """Each distribution's quantiles against N of its own draws. The share of draws below the true p-quantile is
    a binomial proportion with standard error sqrt(p (1 - p) / N), so the empirical p-quantile lies between the
    true quantiles at p -/+ Z of those (whatever the distribution)."""
    sample = distribution.batch(np.random.default_rng(7), N)
    for p in (0.1, 0.5, 0.9, 0.99):
        empirical = float(np.quantile(sample, p))
        spread = Z * math.sqrt(p * (1 - p) / N)
        assert distribution.quantile(p - spread) <= empirical <= distribution.quantile(p + spread)
