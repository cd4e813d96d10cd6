"""RequestTimeouts: every unfinished request expires exactly one timeout after it arrived, from one timer."""

from __future__ import annotations

from functools import partial

import pytest

from skenario.core.environment import Environment
from skenario.core.time import SECOND
from skenario.model.requests import DONE, Request
from skenario.model.timeouts import RequestTimeouts


def watched(env: Environment, timeouts: RequestTimeouts, arrivals: list[int]) -> list[Request]:
    """Requests arriving at these times, each watched as it arrives (as TrafficSource does)."""
    requests = [Request(i, at) for i, at in enumerate(arrivals)]
    for request in requests:
        env.call_at(request.arrived_at, partial(timeouts.watch, request))
    return requests


def test_each_unfinished_request_expires_one_timeout_after_its_arrival() -> None:
    # Timeout 10 s; arrivals at 1, 4, 6 and 20 s; the one of 4 s finishes at 5 s. By hand: the
    # others expire at 11, 16 and 30 s. The one of 20 s comes after the line emptied at 16 s, when
    # the timer was left unarmed: watching it arms the timer for 30 s, never late.
    env = Environment(halt_at=40 * SECOND)
    expired: list[tuple[int, int]] = []
    timeouts = RequestTimeouts(env, 10 * SECOND, lambda r: expired.append((env.now(), r.arrived_at)))
    requests = watched(env, timeouts, [1 * SECOND, 4 * SECOND, 6 * SECOND, 20 * SECOND])
    env.call_at(5 * SECOND, lambda: setattr(requests[1], "stage", DONE))
    env.run()
    assert expired == [(11 * SECOND, 1 * SECOND), (16 * SECOND, 6 * SECOND), (30 * SECOND, 20 * SECOND)]


def test_finished_requests_leave_the_line_only_when_they_reach_its_head() -> None:
    # A arrives at 1 s, B at 2 s and finishes at 3 s. B stays in line behind A until A expires at
    # 11 s; then B, finished, leaves too.
    env = Environment(halt_at=20 * SECOND)
    timeouts = RequestTimeouts(env, 10 * SECOND, lambda r: None)
    _, b = watched(env, timeouts, [1 * SECOND, 2 * SECOND])
    env.call_at(3 * SECOND, lambda: setattr(b, "stage", DONE))
    env.run(until=5 * SECOND)
    assert len(timeouts) == 2
    env.run(until=12 * SECOND)
    assert len(timeouts) == 0


def test_one_timer_whatever_the_number_of_requests() -> None:
    # The schedule holds the start and the halt; the first request watched arms the one timer, and
    # a thousand more add nothing.
    env = Environment(halt_at=20 * SECOND)
    timeouts = RequestTimeouts(env, 10 * SECOND, lambda r: None)
    assert env.pending == 2
    for i in range(1000):
        timeouts.watch(Request(i, 0))
    assert env.pending == 3
    assert len(timeouts) == 1000


def test_an_empty_line_arms_no_timer() -> None:
    # A 1 ns timeout over 100 s with two requests, at 10 s and 90 s: the timer fires once for each
    # (at 10 s + 1 ns and 90 s + 1 ns), not 10^11 times across the idle stretches.
    env = Environment(halt_at=100 * SECOND)
    expired: list[int] = []
    timeouts = RequestTimeouts(env, 1, lambda r: expired.append(env.now()))
    watched(env, timeouts, [10 * SECOND, 90 * SECOND])
    env.run()
    assert expired == [10 * SECOND + 1, 90 * SECOND + 1]
    assert env.movements_completed <= 2 + 2 + 2  # start and halt, two arrivals, two firings


@pytest.mark.parametrize("timeout", [0, -1])
def test_a_timeout_must_be_positive(timeout: int) -> None:
    with pytest.raises(ValueError, match="timeout must be > 0"):
        RequestTimeouts(Environment(halt_at=SECOND), timeout, lambda r: None)
