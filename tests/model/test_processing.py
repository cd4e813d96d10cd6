"""RequestsProcessing: a timed-out request gives back its CPU share and its concurrency slot."""

from __future__ import annotations

import pytest

from skenario.core.random import Constant
from skenario.core.time import MILLISECOND, SECOND
from tests.model import Cycle, build_requests

MS = MILLISECOND


def test_a_request_past_its_timeout_fails_and_frees_its_cpu_share() -> None:
    # One replica of one core, no concurrency limit, timeout 1 s. A arrives at 100 ms needing 5 s
    # of CPU; B arrives at 500 ms needing 400 ms, then 50 ms of IO. By hand:
    #   0.1-0.5 s: A alone. 0.5-1.1 s: both at half speed, B gets 300 ms.
    #   1.1 s: A's timeout (100 ms + 1 s): A fails, B runs alone for its last 100 ms: CPU done at
    #   1.2 s, IO done at 1.25 s. (Had A kept its share, B's CPU would end at 1.3 s.)
    env, model, trace = build_requests(
        arrivals=[100 * MS, 500 * MS],
        cpu_time=Cycle((5 * SECOND, 400 * MS)),
        io_time=Constant(50 * MS),
        timeout=1 * SECOND,
        replicas=1,
        duration=5 * SECOND,
    )
    env.run()
    (timed_out,) = trace.kind("request_timeout")
    at, a, _, _ = timed_out
    assert (at, a.arrived_at) == (1100 * MS, 100 * MS)
    assert model.requests_failed.reasons == {"timeout": 1}
    (completed,) = trace.kind("complete_request")
    at, b, _, _ = completed
    assert (at, b.arrived_at) == (1250 * MS, 500 * MS)
    assert model.requests_complete.latency.max == 750 * MS
    # The core was busy from 0.1 s to 1.2 s without a break.
    assert model.replicas[0].processing.cpu.busy_core_ns() == pytest.approx(1100 * MS)
    assert model.requests_in_flight == 0


def test_the_slot_of_a_timed_out_request_goes_to_the_next_in_line() -> None:
    # Concurrency 1, timeout 1 s, 3 s of CPU each. A (100 ms) holds the slot and B (200 ms) waits.
    # A times out at 1.1 s, which hands the slot to B; B times out at 1.2 s on the CPU; C (1.5 s)
    # finds the slot free and times out at 2.5 s.
    env, model, trace = build_requests(
        arrivals=[100 * MS, 200 * MS, 1500 * MS],
        cpu_time=Constant(3 * SECOND),
        io_time=Constant(0),
        timeout=1 * SECOND,
        replicas=1,
        concurrency=1,
        duration=5 * SECOND,
    )
    env.run(until=1050 * MS)
    (replica,) = model.replicas.values()
    assert [r.arrived_at for r in replica.processing] == [100 * MS, 200 * MS]
    assert replica.processing.cpu.in_service == 1
    env.run(until=1150 * MS)
    (replica,) = model.replicas.values()
    assert [r.arrived_at for r in replica.processing] == [200 * MS]
    assert replica.processing.cpu.in_service == 1
    env.run()
    timeouts = [(at, e.arrived_at) for at, e, _, _ in trace.kind("request_timeout")]
    assert timeouts == [(1100 * MS, 100 * MS), (1200 * MS, 200 * MS), (2500 * MS, 1500 * MS)]
    assert replica.processing.cpu.in_service == 0
