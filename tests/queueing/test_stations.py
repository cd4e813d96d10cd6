"""Finite-capacity and load-dependent stations against their closed forms, and in model files."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.queueing import solve
from skenario.queueing.modelfile import parse_model
from skenario.queueing.network import Centre, Demand, Network, QueueingModelError, WorkloadClass
from skenario.queueing.stations import open_station


@pytest.mark.parametrize(
    ("arrival", "servers", "capacity", "p0", "blocking", "throughput", "number", "response"),
    [
        # M/M/1/5, M/M/2/5 and M/M/1/4 with mu = 1, from p_n = p_0 a^n / n! (n <= c), p_0 a^n / (c! c^(n-c)).
        (0.9, 1, 5, 0.213420, 0.126023, 0.786580, 2.194782, 2.790286),
        (1.5, 2, 5, 0.179335, 0.085114, 1.372329, 2.005954, 1.461715),
        (1.0, 1, 4, 0.2, 0.2, 0.8, 2.0, 2.5),
    ],
)
def test_mmck_against_its_closed_form(
    arrival: float,
    servers: int,
    capacity: int,
    p0: float,
    blocking: float,
    throughput: float,
    number: float,
    response: float,
) -> None:
    station = open_station(arrival, 1.0, servers=servers, capacity=capacity)
    assert (station.idle, station.blocking, station.throughput, station.number, station.response) == pytest.approx(
        (p0, blocking, throughput, number, response), abs=5e-7
    )


def test_mm1k_number_formula() -> None:
    # L = a/(1-a) - (K+1) a^(K+1) / (1 - a^(K+1)), a = 0.7, K = 8.
    a, k = 0.7, 8
    assert open_station(a, 1.0, capacity=k).number == pytest.approx(
        a / (1 - a) - (k + 1) * a ** (k + 1) / (1 - a ** (k + 1))
    )


def erlang_b(c: int, a: float) -> float:
    return (a**c / math.factorial(c)) / sum(a**i / math.factorial(i) for i in range(c + 1))


@given(st.integers(1, 8), st.floats(0.1, 10.0))
def test_no_room_to_wait_is_erlang_b(servers: int, load: float) -> None:
    # M/M/c/c: the blocking probability is Erlang B.
    assert open_station(load, 1.0, servers=servers, capacity=servers).blocking == pytest.approx(erlang_b(servers, load))


@given(st.integers(1, 6), st.floats(0.05, 0.95))
def test_without_a_capacity_it_is_erlang_c(servers: int, rho: float) -> None:
    # M/M/c: L = a + C(c, a) rho / (1 - rho), Erlang C from Erlang B.
    a = rho * servers
    b = erlang_b(servers, a)
    c = servers * b / (servers - a * (1 - b))
    assert open_station(a, 1.0, servers=servers).number == pytest.approx(a + c * rho / (1 - rho))


def test_rates_are_a_birth_death_chain() -> None:
    # rates (1, 1.5, 1.8): p_j ∝ prod (lambda S / alpha(i)); the tail past 1.8 is geometric in lambda S / 1.8.
    station = open_station(1.2, 1.0, rates=(1.0, 1.5, 1.8))
    terms = [1.0, 1.2, 1.2**2 / 1.5] + [1.2**3 / (1.5 * 1.8) * (1.2 / 1.8) ** i for i in range(400)]
    total = sum(terms)
    assert station.idle == pytest.approx(1 / total)
    assert station.number == pytest.approx(sum(j * t for j, t in enumerate(terms)) / total)


def test_a_saturated_station_is_refused() -> None:
    with pytest.raises(ValueError, match="saturated"):
        open_station(2.0, 1.0, rates=(1.0, 1.5))


def machine_repairman(population: int, think: float, service: float, rates: list[float]) -> tuple[float, np.ndarray]:
    """The closed form: pi_n ∝ prod_{i<=n} ((N - i + 1) / Z) / (alpha(i) / S); X = sum pi_n alpha(n) / S."""
    alpha = [rates[min(i, len(rates)) - 1] for i in range(1, population + 1)]
    weights = [1.0]
    for i in range(1, population + 1):
        weights.append(weights[-1] * ((population - i + 1) / think) / (alpha[i - 1] / service))
    p = np.array(weights) / sum(weights)
    x = sum(p[n] * alpha[n - 1] / service for n in range(1, population + 1))
    return x, p


@pytest.mark.parametrize("rates", [[1.0, 2.0], [1.0, 1.6, 1.9], [0.5, 3.0]])
def test_a_closed_load_dependent_centre_is_the_machine_repairman(rates: list[float]) -> None:
    centre = Centre("repair", rates=tuple(rates))
    cls = WorkloadClass("machines", {"repair": Demand(1.0, 1.5)}, population=4, think_time=1.0)
    solution = solve(Network((centre,), (cls,)))
    x, p = machine_repairman(4, 1.0, 1.5, rates)
    assert solution.throughput("machines") == pytest.approx(x, rel=1e-12)
    assert solution.queue_length("repair") == pytest.approx(float((np.arange(5) * p).sum()), rel=1e-12)


def test_two_servers_are_the_rates_one_and_two() -> None:
    # The reference's case: Z = 1, S = 1.5, c = 2, N = 4 gives X = 1.237989, Q = 2.762011, R = 2.231047.
    cls = WorkloadClass("machines", {"repair": Demand(1.0, 1.5)}, population=4, think_time=1.0)
    for centre in (Centre("repair", servers=2), Centre("repair", rates=(1.0, 2.0))):
        solution = solve(Network((centre,), (cls,)))
        assert solution.throughput("machines") == pytest.approx(1.237989, abs=1e-6)
        assert solution.queue_length("repair") == pytest.approx(2.762011, abs=1e-6)
        assert solution.response("machines") == pytest.approx(2.231047, abs=1e-6)


MODEL = """\
name: web
centres:
  - {name: front, capacity: 5}
classes:
  - {name: requests, arrivalRate: 0.9, demands: {front: 1.0}}
"""


def test_a_model_file_with_a_capacity() -> None:
    solution = parse_model(MODEL).solve()
    assert solution.throughput("requests") == pytest.approx(0.786580, abs=1e-6)  # M/M/1/5 above
    assert solution.centres["front"]["requests"].blocking == pytest.approx(0.126023, abs=1e-6)
    assert solution.residence("front", "requests") == pytest.approx(2.790286, abs=1e-6)
    assert solution.exact


def test_losses_before_other_centres_are_said_to_be_approximate() -> None:
    text = MODEL.replace("  - {name: front, capacity: 5}", "  - {name: front, capacity: 5}\n  - {name: db}")
    text = text.replace("demands: {front: 1.0}", "demands: {front: 1.0, db: 0.5}")
    solution = parse_model(text).solve()
    assert not solution.exact and any("turns away" in note for note in solution.approximations)


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        (("{name: front, capacity: 5}", "{name: front, servers: 2, rates: [1, 2]}"), "centres.0.rates", "not both"),
        (
            ("{name: front, capacity: 5}", "{name: front, kind: delay, capacity: 5}"),
            "centres.0.capacity",
            "delay centre",
        ),
        (("{name: front, capacity: 5}", "{name: front, rates: [1, 0]}"), "centres.0.rates", "greater than 0"),
        (("arrivalRate: 0.9", "arrivalRate: 3"), None, "accepted"),  # a capacity never saturates
        (("{name: front, capacity: 5}", "{name: front, rates: [1, 2]}"), "classes.0.arrivalRate", None),
    ],
)
def test_model_file_mistakes(change: tuple[str, str], field: str | None, says: str | None) -> None:
    text = MODEL.replace(*change)
    if change[1] == "{name: front, rates: [1, 2]}":
        text = text.replace("arrivalRate: 0.9", "arrivalRate: 2.5")  # 2.5 > the top rate 2: saturated
    if says == "accepted":
        assert parse_model(text).solve().throughput("requests") < 3
        return
    with pytest.raises(QueueingModelError) as caught:
        parse_model(text).solve()
    assert caught.value.field is not None and caught.value.field.startswith(field or "")
    if says is not None:
        assert says in str(caught.value)


def test_closed_classes_blocked_by_a_capacity_are_refused() -> None:
    text = """\
centres: [{name: cpu, capacity: 3}]
classes: [{name: users, population: 5, thinkTime: 1, demands: {cpu: 1}}]
"""
    with pytest.raises(QueueingModelError, match="blocked at a capacity of 3") as caught:
        parse_model(text).solve()
    assert caught.value.field == "centres.0.capacity" and caught.value.line == 1


def test_a_memory_constraint_names_its_mistakes() -> None:
    text = """\
centres: [{name: cpu}, {name: disk}]
classes: [{name: users, population: 5, thinkTime: 10, demands: {cpu: 1, disk: 2}}]
memoryConstraint: {centres: [cpu, tape], maxJobs: 2}
"""
    with pytest.raises(QueueingModelError, match="no centre is named 'tape'") as caught:
        parse_model(text)
    assert caught.value.field == "memoryConstraint.centres"
    solved = parse_model(text.replace("tape", "disk")).solve()
    assert set(solved.centres) == {"memory"}
    assert not solved.exact and "flow-equivalent" in solved.approximations[-1]  # not product form
