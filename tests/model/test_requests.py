"""Requests: the activator-like buffer, and the timeouts of buffered requests."""

from __future__ import annotations

from skenario.core.random import Constant
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.config import LaunchStage
from skenario.model.requests import RequestsBuffered
from tests.model import build_requests

MS = MILLISECOND


def assert_at(actual: int, expected: int) -> None:
    """A processor-sharing finish: never early, at most 1 ns late (its wake-up is a rounded-up float)."""
    assert expected <= actual <= expected + 1, (actual, expected)


# -- the buffer --------------------------------------------------------------------------------


def test_requests_wait_in_the_buffer_until_a_replica_becomes_active() -> None:
    # No replica until one launched at 500 ms finishes its 1 s start stage at 1.5 s. The three
    # requests of 100, 200 and 300 ms wait in the buffer, then go out through routing at 1.5 s,
    # oldest first, and share the CPU: three 10 ms jobs on one core end together at 1.53 s,
    # followed by 20 ms of IO.
    env, model, trace = build_requests(
        arrivals=[100 * MS, 200 * MS, 300 * MS],
        launch=(LaunchStage("start", Constant(1 * SECOND)),),
        io_time=Constant(20 * MS),
    )
    env.call_at(500 * MS, lambda: model.scale_to(1))
    env.run(until=1 * SECOND)
    assert isinstance(model.requests_buffered, RequestsBuffered)
    buffered = list(model.requests_buffered)
    assert [r.arrived_at for r in buffered] == [100 * MS, 200 * MS, 300 * MS]
    assert model.requests_buffered.count() == 3
    assert model.requests_in_flight == 3
    env.run()
    released = trace.kind("route_buffered")
    assert [(at, e) for at, e, _, _ in released] == [(1500 * MS, r) for r in buffered]
    assert all(f is model.requests_buffered and t is model.requests_routing for _, _, f, t in released)
    sent = trace.kind("send_to_replica")
    assert [(at, e) for at, e, _, _ in sent] == [(1500 * MS, r) for r in buffered]
    completed = {e: at for at, e, _, _ in trace.kind("complete_request")}
    for request in buffered:
        assert_at(completed[request], 1550 * MS)
    assert model.requests_complete.count() == 3
    assert model.requests_buffered.count() == 0
    assert model.requests_failed.count() == 0


def test_a_full_buffer_fails_requests_at_once() -> None:
    # Room for 2: of 5 arrivals (100..500 ms) with no replica, 2 wait and 3 fail as they arrive.
    env, model, trace = build_requests(arrivals=[k * 100 * MS for k in range(1, 6)], buffer_capacity=2, duration=SECOND)
    env.run()
    assert model.requests_failed.reasons == {"buffer_full": 3}
    failed = [(at, e.arrived_at) for at, e, _, t in trace.kind("request_failed")]
    assert failed == [(300 * MS, 300 * MS), (400 * MS, 400 * MS), (500 * MS, 500 * MS)]
    assert [r.arrived_at for r in model.requests_buffered] == [100 * MS, 200 * MS]


def test_buffered_requests_time_out() -> None:
    env, model, trace = build_requests(arrivals=[100 * MS, 250 * MS], timeout=1 * SECOND, duration=5 * SECOND)
    env.run()
    failures = [(at, e.arrived_at, e.failure) for at, e, _, t in trace.kind("request_timeout")]
    assert failures == [(1100 * MS, 100 * MS, "timeout"), (1250 * MS, 250 * MS, "timeout")]
    assert model.requests_failed.reasons == {"timeout": 2}
    assert model.requests_buffered.count() == 0
    assert model.requests_in_flight == 0


def test_a_request_leaving_the_buffer_at_its_deadline_still_times_out() -> None:
    # The replica launched at 500 ms becomes active at 3 s, exactly when the request of 1 s
    # reaches its 2 s timeout. Whichever comes first in that instant, the request must not
    # complete 2.1 s after it arrived: a timeout of 2 s means it fails.
    env, model, _ = build_requests(
        arrivals=[1 * SECOND],
        cpu_time=Constant(100 * MS),
        io_time=Constant(0),
        timeout=2 * SECOND,
        launch=(LaunchStage("start", Constant(2500 * MS)),),
    )
    env.call_at(500 * MS, lambda: model.scale_to(1))
    env.run()
    assert model.requests_complete.count() == 0, model.requests_complete.latency.max
    assert model.requests_failed.reasons == {"timeout": 1}
