"""M/M/1-PS sojourn times: the gamma fit against tables, the moments against their integral, and both
against skenario's own discrete run of the same queue."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.queueing.erlang import erlang_c
from skenario.queueing.ps import (
    RHO_STOCHASTIC,
    backlog_quantiles,
    backlog_rate,
    backlog_step,
    capped_cores_queue,
    erlang_arrivals_sigma,
    gamma_quantile,
    mm1_ps_moments,
    mm1_ps_quantile,
    replica_quantiles,
)
from skenario.runs import open_run
from skenario.scenario.simulation import Simulation


@pytest.mark.parametrize("p", [0.5, 0.9, 0.95, 0.99])
def test_the_gamma_fit_of_an_exponential_is_its_quantile(p: float) -> None:
    """Shape 1 is the exponential: its p-quantile is -mean ln(1 - p)."""
    mean = 0.2
    assert gamma_quantile(mean, 2 * mean**2, p) == pytest.approx(-mean * math.log(1 - p), rel=0.015)


@pytest.mark.parametrize(
    ("nu", "p", "table"),
    [(10, 0.95, 18.307), (4, 0.99, 13.277), (20, 0.5, 19.337), (30, 0.95, 43.773)],
)
def test_the_gamma_fit_reads_the_chi_square_table(nu: int, p: float, table: float) -> None:
    """Chi-square with nu degrees of freedom is gamma(nu/2, 2): mean nu, variance 2 nu (printed tables)."""
    assert gamma_quantile(nu, 2 * nu + nu**2, p) == pytest.approx(table, rel=0.01)


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.8, 0.95])
def test_the_second_moment_is_the_integral_of_the_conditional_variance(rho: float) -> None:
    """E[T^2] = integral over exponential sizes x of Var[T | x] + (x / (1 - rho))^2, with Coffman, Muntz and
    Trotter's Var[T | x] = 2 rho x / (mu (1-rho)^3) - 2 rho (1 - e^(-(1-rho) mu x)) / (mu^2 (1-rho)^4)."""
    mu = 20.0
    x = np.linspace(0.0, 60.0 / mu, 600_001)
    variance = 2 * rho * x / (mu * (1 - rho) ** 3) - 2 * rho * -np.expm1(-(1 - rho) * mu * x) / (mu**2 * (1 - rho) ** 4)
    integrand = (variance + (x / (1 - rho)) ** 2) * mu * np.exp(-mu * x)
    second = float(np.sum((integrand[1:] + integrand[:-1]) / 2 * np.diff(x)))
    mean, closed = mm1_ps_moments(rho * mu, mu)
    assert closed == pytest.approx(second, rel=1e-6)
    assert mean == pytest.approx(1 / (mu * (1 - rho)))  # Kleinrock: E[S] / (1 - rho)


def test_an_idle_server_serves_each_request_in_its_own_time() -> None:
    mean, second = mm1_ps_moments(0.0, 20.0)
    assert (mean, second) == pytest.approx((1 / 20, 2 / 20**2))  # the exponential size itself


def test_a_saturated_server_has_no_steady_state() -> None:
    with pytest.raises(ValueError, match="no steady state"):
        mm1_ps_moments(20.0, 20.0)


SCENARIO = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {{name: ps}}
spec:
  duration: 2h
  seed: 5
  workload:
    replicas: 1
    resources: {{requests: {{cpu: {cores}000m}}, limits: {{cpu: {cores}000m}}}}
    request: {{cpuTime: {{distribution: exponential, mean: 50ms}}, timeout: null}}
  traffic: {{type: poisson, rate: {rate}/s}}
"""
"""One replica limited to `cores` cores, 50 ms of exponential CPU per request (mu 20/s), Poisson arrivals."""


@pytest.mark.parametrize("rate", [10.0, 16.0])
def test_the_fit_holds_against_the_discrete_run_of_the_same_queue(rate: float) -> None:
    """One replica limited to one core, exponential CPU times of 50 ms (mu 20/s), Poisson arrivals at
    rho 0.5 and 0.8, two hours: the discrete run's mean is within 5% and its p95 and p99 within 10% of
    the formulas (what a fluid run reports, issue 34's bound)."""
    run = open_run(Path("ps.yaml"), text=SCENARIO.format(cores=1, rate=rate))
    assert isinstance(run, Simulation)
    run.run()
    figures = run.summary().as_dict()
    mean, _ = mm1_ps_moments(rate, 20.0)
    assert figures["latency_mean_ns"] / 1e9 == pytest.approx(mean, rel=0.05)
    for p in (95, 99):
        assert figures[f"latency_p{p}_ns"] / 1e9 == pytest.approx(mm1_ps_quantile(rate, 20.0, p / 100), rel=0.10)


@pytest.mark.parametrize(("cores", "rho"), [(2, 0.5), (2, 0.8), (4, 0.5), (4, 0.8)])
def test_several_cores_hold_against_the_discrete_run(cores: int, rho: float) -> None:
    """`replica_quantiles` on 2 and 4 cores against skenario's discrete run of the same replica: the mean
    (M/M/c's) within 5%, p95 and p99 within 15% (its docstring says where it is furthest: 13%)."""
    rate = cores * 20 * rho
    run = open_run(Path("ps.yaml"), text=SCENARIO.format(cores=cores, rate=rate))
    assert isinstance(run, Simulation)
    run.run()
    figures = run.summary().as_dict()
    quantiles = replica_quantiles(rate, 20.0, float(cores), [0.95, 0.99])
    assert quantiles is not None
    mean = 1 / 20 + erlang_c(cores, rate / 20) / (cores * 20 - rate)  # M/M/c, by Erlang C
    assert figures["latency_mean_ns"] / 1e9 == pytest.approx(mean, rel=0.05)
    for p, value in zip((95, 99), quantiles, strict=True):
        assert figures[f"latency_p{p}_ns"] / 1e9 == pytest.approx(value, rel=0.15)


@pytest.mark.parametrize(("rate", "phases"), [(16.0, 2), (16.0, 4), (10.0, 8), (19.0, 3)])
def test_round_robins_sigma_solves_gi_m_1s_equation(rate: float, phases: int) -> None:
    """sigma = A*(mu (1 - sigma)) for Erlang-k interarrivals, below rho (regular arrivals queue less)."""
    mu = 20.0
    sigma = erlang_arrivals_sigma(rate, mu, phases)
    k_lam = phases * rate
    assert sigma == pytest.approx((k_lam / (k_lam + mu * (1 - sigma))) ** phases, abs=1e-9)
    assert 0 < sigma < rate / mu
    assert erlang_arrivals_sigma(rate, mu, 1) == rate / mu  # Poisson: sigma is rho


@pytest.mark.parametrize("rho", [0.2, 0.5, 0.8, 0.95])
def test_the_backlog_rests_at_mm1s_mean_number(rho: float) -> None:
    """M/M/1's stationary mean number is rho / (1 - rho) (Kleinrock); the load read back from it is rho."""
    backlog = 0.0
    for _ in range(400):
        backlog = backlog_step(backlog, rho * 20.0, 20.0, 15.0)
    assert backlog == pytest.approx(rho / (1 - rho), rel=1e-9)
    assert backlog_rate(backlog, 20.0) == pytest.approx(rho * 20.0, rel=1e-9)


@given(st.floats(0, 1e4), st.floats(21, 1e3), st.floats(0.1, 600))
def test_past_capacity_the_backlog_grows_at_the_excess(start: float, rate: float, seconds: float) -> None:
    """The outflow capacity n / (1 + n) is below capacity by capacity / (1 + n): over T seconds the backlog grows
    by at least (lam - capacity) T and by at most that plus capacity T / (1 + n0)."""
    after = backlog_step(start, rate, 20.0, seconds)
    grown = (rate - 20.0) * seconds
    assert start + grown * (1 - 1e-9) <= after <= start + grown + 20.0 * seconds / (1 + start) + 1e-6


@given(st.floats(0, 100), st.floats(0, 100), st.floats(0, 100), st.floats(0.01, 60))
def test_more_arrivals_never_mean_a_shorter_backlog(start: float, low: float, extra: float, seconds: float) -> None:
    assert backlog_step(start, low, 20.0, seconds) <= backlog_step(start, low + extra, 20.0, seconds) + 1e-9
    assert backlog_rate(backlog_step(start, low, 20.0, seconds), 20.0) < 20.0


def test_a_bad_backlog_step_is_refused() -> None:
    with pytest.raises(ValueError, match="bad input"):
        backlog_step(1.0, 1.0, 0.0, 1.0)


@pytest.mark.parametrize(("rho", "phases"), [(0.3, 1), (0.8, 1), (0.8, 4)])
def test_at_rest_a_backlog_reads_the_stationary_queue(rho: float, phases: int) -> None:
    """At M/M/1's own mean number, rho / (1 - rho), the backlog's quantiles are the stationary queue's."""
    probabilities = [0.5, 0.95, 0.99]
    expected = replica_quantiles(rho * 20.0, 20.0, 1.0, probabilities, phases)
    assert backlog_quantiles(rho / (1 - rho), rho * 20.0, 20.0, 1.0, probabilities, phases) == pytest.approx(expected)


def test_a_backlog_past_capacity_adds_its_excess_as_sizes_times_it() -> None:
    """Arrivals at 25/s on 20/s of capacity, 100 held: the stationary part is at RHO_STOCHASTIC (19 held, mean
    1 / (20 x 0.05) = 1 s), and the other 81 add 81 / 20 s to the mean, with a spread of that square: the
    median is three quarters of the mean, where the stationary queue holding 100 (at load 100/101) puts
    its median at a third of the same mean."""
    assert RHO_STOCHASTIC == 0.95
    mean, second = mm1_ps_moments(0.95 * 20.0, 20.0)
    excess = (100 - 19) / 20.0
    expected = gamma_quantile(mean + excess, second - mean**2 + excess**2 + (mean + excess) ** 2, 0.5)
    (median,) = backlog_quantiles(100.0, 25.0, 20.0, 1.0, [0.5])
    assert median == pytest.approx(expected)
    (stationary,) = replica_quantiles(20.0 * 100 / 101, 20.0, 1.0, [0.5])  # the same mean: 101 / 20 s
    assert median > 0.7 * (mean + excess) and stationary < 0.4 * (mean + excess)


@pytest.mark.parametrize(("cores", "rate"), [(1.36, 5.0), (1.5, 15.0), (2.0, 30.0), (3.7, 60.0)])
def test_a_replica_of_capped_cores_is_its_birth_death_chain(cores: float, rate: float) -> None:
    """Each request uses at most one core: with n present, mu min(n, cores) complete a second. The chain's
    distribution, summed directly to 5,000 present, gives the mean number (Little: the mean sojourn) and the
    chance that more are present than there are cores; for 1.5 cores at 15/s by hand: 1.2 present, 80 ms."""
    mu = 20.0
    weights = [1.0]
    for n in range(1, 5000):
        weights.append(weights[-1] * rate / (mu * min(n, cores)))
    total = math.fsum(weights)
    present = math.fsum(n * w for n, w in enumerate(weights)) / total
    slowed = math.fsum(w for n, w in enumerate(weights) if n >= cores) / total
    sojourn, chance = capped_cores_queue(rate, mu, cores)
    assert sojourn == pytest.approx(present / rate, rel=1e-9)
    assert chance == pytest.approx(slowed, rel=1e-9)
    if (cores, rate) == (1.5, 15.0):
        assert (present, sojourn) == pytest.approx((1.2, 0.08))
