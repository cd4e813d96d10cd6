"""The fluid pool against its ODE integrated independently, against queueing formulas, and for conservation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.model.fluid.pool import FluidPool

levels = st.floats(min_value=0, max_value=500)
rates = st.floats(min_value=0, max_value=2_000)
cores = st.floats(min_value=0.5, max_value=64)
mus = st.floats(min_value=0.5, max_value=100)
thetas = st.sampled_from([0.0, 0.1, 1.0, 5.0])
spans = st.floats(min_value=0, max_value=30)


def rk4(
    x: float, lam: float, mu: float, k: float, theta: float, seconds: float, steps: int = 20_000
) -> tuple[float, float]:
    """x' = lam - mu min(x, k) - theta (x - k)+ by classical Runge-Kutta, step by small step; the end
    level and the integral of the level (by the trapezoid rule on the same steps)."""

    def slope(v: float) -> float:
        return lam - mu * min(v, k) - theta * max(v - k, 0.0)

    h = seconds / steps
    area = 0.0
    for _ in range(steps):
        a = slope(x)
        b = slope(x + h * a / 2)
        c = slope(x + h * b / 2)
        d = slope(x + h * c)
        after = x + h * (a + 2 * b + 2 * c + d) / 6
        area += h * (x + after) / 2
        x = after
    return x, area


@settings(max_examples=60, deadline=None)
@given(x=levels, lam=rates, mu=mus, k=cores, theta=thetas, seconds=st.floats(min_value=0.01, max_value=5))
def test_the_closed_form_is_the_ode(x: float, lam: float, mu: float, k: float, theta: float, seconds: float) -> None:
    level, flows = FluidPool(mu, theta).advance(x, lam, k, seconds)
    end, area = rk4(x, lam, mu, k, theta, seconds)
    assert level == pytest.approx(end, rel=1e-6, abs=1e-6)
    assert flows.level_s == pytest.approx(area, rel=1e-5, abs=1e-5)


@settings(max_examples=200, deadline=None)
@given(x=levels, lam=rates, mu=mus, k=cores, theta=thetas, seconds=spans)
def test_what_arrives_is_in_the_pool_completed_or_abandoned(
    x: float, lam: float, mu: float, k: float, theta: float, seconds: float
) -> None:
    level, flows = FluidPool(mu, theta).advance(x, lam, k, seconds)
    assert level >= 0 and flows.completed >= 0 and flows.abandoned >= -1e-9
    assert x + lam * seconds == pytest.approx(level + flows.completed + flows.abandoned, rel=1e-9, abs=1e-6)
    assert flows.busy_core_s <= k * seconds * (1 + 1e-12)  # never more than the cores


@settings(max_examples=100, deadline=None)
@given(x=levels, lam=rates, mu=mus, k=cores, theta=thetas, first=spans, second=spans)
def test_one_step_is_two_steps(
    x: float, lam: float, mu: float, k: float, theta: float, first: float, second: float
) -> None:
    """Exact for constant inputs: how the step is cut does not change where it ends."""
    pool = FluidPool(mu, theta)
    whole, flows = pool.advance(x, lam, k, first + second)
    middle, a = pool.advance(x, lam, k, first)
    end, b = pool.advance(middle, lam, k, second)
    assert end == pytest.approx(whole, rel=1e-6, abs=1e-6)
    assert a.completed + b.completed == pytest.approx(flows.completed, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize(("lam", "mu", "k"), [(50.0, 10.0, 10.0), (95.0, 10.0, 10.0), (3.0, 2.0, 4.0)])
def test_under_capacity_the_level_is_the_offered_load_and_the_cores_busy_are_the_utilisation_law(
    lam: float, mu: float, k: float
) -> None:
    """Below capacity the fluid settles at lam/mu requests in service (the mean number in an M/M/inf, and
    the mean busy servers of an M/M/c), and uses lam * E[S] cores on average (the utilisation law)."""
    level, _ = FluidPool(mu).advance(0.0, lam, k, 1_000.0)
    assert level == pytest.approx(lam / mu)
    last, second = FluidPool(mu).advance(level, lam, k, 100.0)
    assert last == pytest.approx(lam / mu) and second.busy_core_s / 100.0 == pytest.approx(lam / mu)
    assert second.completed / 100.0 == pytest.approx(lam)


def test_over_capacity_the_level_grows_at_the_excess_and_throughput_is_the_capacity() -> None:
    lam, mu, k = 150.0, 10.0, 10.0  # capacity mu k = 100/s
    start, _ = FluidPool(mu).advance(0.0, lam, k, 60.0)
    end, flows = FluidPool(mu).advance(start, lam, k, 10.0)
    assert end - start == pytest.approx((lam - mu * k) * 10.0)
    assert flows.completed == pytest.approx(mu * k * 10.0) and flows.busy_core_s == pytest.approx(k * 10.0)


def test_with_abandonment_the_overload_settles_where_whitt_puts_it() -> None:
    """Erlang-A's fluid equilibrium in overload (Whitt 2006): x* = k + (lam - mu k) / theta, the excess
    abandoning at lam - mu k per second."""
    lam, mu, k, theta = 150.0, 10.0, 10.0, 0.5
    pool = FluidPool(mu, theta)
    level, _ = pool.advance(0.0, lam, k, 200.0)
    assert level == pytest.approx(k + (lam - mu * k) / theta)
    _, flows = pool.advance(level, lam, k, 10.0)
    assert flows.abandoned / 10.0 == pytest.approx(lam - mu * k)


def test_a_drained_pool_crosses_back_below_its_cores_and_relaxes() -> None:
    """From 100 waiting with 10 cores at mu 10 and 50/s arriving: down at 50/s to the cores at 1.8 s, then
    x = 5 + 5 e^(-10 (t - 1.8)) towards lam/mu = 5."""
    level, _ = FluidPool(10.0).advance(100.0, 50.0, 10.0, 1.8)
    assert level == pytest.approx(10.0)
    later, _ = FluidPool(10.0).advance(100.0, 50.0, 10.0, 1.9)
    assert later == pytest.approx(5 + 5 * 2.718281828459045**-1.0)


@pytest.mark.parametrize("bad", [{"mu": 0.0}, {"mu": -1.0}, {"mu": 1.0, "theta": -0.1}])
def test_bad_parameters_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        FluidPool(**bad)
