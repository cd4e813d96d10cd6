"""The fluid buffer (the routing buffer, or Knative's activator, as a fluid) against hand-computed inflows."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.environment import Environment
from skenario.core.time import SECOND
from skenario.model.fluid.buffer import FluidBuffer


class Failures:
    def __init__(self) -> None:
        self.by_reason: dict[str, float] = {}

    def __call__(self, reason: str, amount: float) -> None:
        self.by_reason[reason] = self.by_reason.get(reason, 0.0) + amount

    def total(self) -> float:
        return sum(self.by_reason.values())


def buffer(capacity: int = 10_000, timeout_s: float | None = None) -> tuple[Environment, FluidBuffer, Failures]:
    env = Environment(halt_at=10**15)
    failures = Failures()
    return env, FluidBuffer(env, capacity, timeout_s, failures), failures


def at(env: Environment, seconds: float) -> None:
    env.run(until=round(seconds * SECOND))


def test_an_inflow_fills_it_evenly_and_is_released_as_one_chunk() -> None:
    """20/s for 10 s: 200 held, an area of 20 * 10^2 / 2 = 1,000 request-s, one chunk spanning the 10 s."""
    env, held, failures = buffer()
    held.flow(0, 20.0)
    at(env, 10)
    assert held.count() == 200
    assert held.held_area() == pytest.approx(1_000 * SECOND)
    assert held.taken == 200
    chunks = held.release(env.now())
    assert chunks == [(0.0, pytest.approx(10 * SECOND), pytest.approx(200.0))]
    assert held.count() == 0 and failures.total() == 0


def test_past_its_capacity_arrivals_fail_as_buffer_full() -> None:
    """100/s for 10 s into room for 300: full after 3 s (a ramp of 450 request-s), then 7 s at 300 (2,100);
    the other 700 fail as buffer_full."""
    env, held, failures = buffer(capacity=300)
    held.flow(0, 100.0)
    at(env, 10)
    assert held.held_area() == pytest.approx(2_550 * SECOND)  # read before the buffer advances
    held.advance(env.now())
    assert held.count() == 300
    assert failures.by_reason == {"buffer_full": pytest.approx(700.0)}
    assert held.taken == 1_000  # the activator took them all: those it turned away too


def test_with_no_room_every_arrival_fails_as_no_active_replica() -> None:
    env, held, failures = buffer(capacity=0)
    held.flow(0, 10.0)
    at(env, 5)
    held.advance(env.now())
    assert held.count() == 0 and failures.by_reason == {"no_active_replica": pytest.approx(50.0)}


def test_requests_older_than_the_timeout_fail_as_timeouts() -> None:
    """10/s for 20 s with a 5 s timeout: the last 5 s's 50 are held, the 150 before them timed out, and what
    is released spans the last 5 s."""
    env, held, failures = buffer(timeout_s=5.0)
    held.flow(0, 10.0)
    at(env, 20)
    held.advance(env.now())
    assert held.count() == 50
    assert failures.by_reason == {"timeout": pytest.approx(150.0)}
    [(first, last, amount)] = held.release(env.now())
    assert (first, last, amount) == (pytest.approx(15 * SECOND), pytest.approx(20 * SECOND), pytest.approx(50.0))


def test_the_first_request_of_an_inflow_into_an_idle_buffer_is_announced_once() -> None:
    """At 4/s the first whole request arrives 250 ms after the inflow starts: the hooks hear it then, once;
    not again while the buffer holds requests, and again for the first inflow after it was emptied."""
    env, held, _ = buffer()
    heard: list[int] = []
    held.on_request.append(lambda request: heard.append(env.now()))
    held.flow(0, 4.0)
    at(env, 10)
    held.flow(env.now(), 8.0)  # more of the same stretch: no new announcement
    at(env, 20)
    assert heard == [250_000_000]
    held.flow(env.now(), 0.0)
    held.release(env.now())
    held.flow(env.now(), 2.0)
    at(env, 30)
    assert heard == [250_000_000, 20_500_000_000]


def test_the_first_request_is_announced_however_often_its_rate_is_set_again() -> None:
    """At 0.4/s the first whole request arrives at 2.5 s, though the plant sets the rate again every second."""
    env, held, _ = buffer()
    heard: list[int] = []
    held.on_request.append(lambda request: heard.append(env.now()))
    for second in range(5):
        at(env, second)
        held.flow(env.now(), 0.4)
    at(env, 10)
    assert heard == [2_500_000_000]


def test_an_inflow_that_stops_before_its_first_request_is_not_announced() -> None:
    env, held, _ = buffer()
    heard: list[int] = []
    held.on_request.append(lambda request: heard.append(env.now()))
    held.flow(0, 1.0)  # its first request would come at 1 s
    at(env, 0.5)
    held.flow(env.now(), 0.0)
    at(env, 5)
    assert heard == []


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(min_value=0.001, max_value=30.0),  # seconds until the next change
            st.floats(min_value=0.0, max_value=500.0),  # the rate from then
            st.booleans(),  # whether everything held is released then
        ),
        min_size=1,
        max_size=12,
    ),
    st.integers(min_value=0, max_value=2_000),
    st.one_of(st.none(), st.floats(min_value=0.5, max_value=20.0)),
)
def test_every_request_that_came_in_is_held_failed_or_released(
    steps: list[tuple[float, float, bool]], capacity: int, timeout_s: float | None
) -> None:
    """Conservation: arrivals (the rate's integral) = held + failed + released, whatever the capacity, the
    timeout and the order of changes; what is held never exceeds the capacity."""
    env, held, failures = buffer(capacity=capacity, timeout_s=timeout_s)
    released, expected, rate, clock = 0.0, 0.0, 0.0, 0.0
    for seconds, next_rate, release in steps:
        expected += rate * seconds
        clock += seconds
        at(env, clock)
        held.flow(env.now(), next_rate)
        rate = next_rate
        assert held.held() <= capacity + 1e-6
        if release:
            released += sum(amount for _, _, amount in held.release(env.now()))
    held.advance(env.now())
    assert held.arrived() == pytest.approx(expected, rel=1e-9, abs=1e-6)
    assert held.held() + failures.total() + released == pytest.approx(expected, rel=1e-9, abs=1e-6)
