"""RequestsProcessing: a timed-out request gives back its CPU share and its slot when clients cancel, and
keeps them (the server never hears) by default."""

from __future__ import annotations

import pytest

from skenario.core.environment import Environment
from skenario.core.random import Constant
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cluster import ClusterModel
from skenario.model.config import ClientSpec
from tests.model import Cycle, RequestTrace, build_requests

MS = MILLISECOND


def long_and_short(client: ClientSpec) -> tuple[Environment, ClusterModel, RequestTrace]:
    """One core, timeout 1 s: A at 100 ms needing 5 s of CPU, B at 500 ms needing 400 ms then 50 ms of IO."""
    return build_requests(
        arrivals=[100 * MS, 500 * MS],
        cpu_time=Cycle((5 * SECOND, 400 * MS)),
        io_time=Constant(50 * MS),
        timeout=1 * SECOND,
        replicas=1,
        duration=5 * SECOND,
        client=client,
    )


def test_a_request_past_its_timeout_fails_and_frees_its_cpu_share_when_clients_cancel() -> None:
    # One replica of one core, no concurrency limit, timeout 1 s, clients cancel what they give
    # up. A arrives at 100 ms needing 5 s of CPU; B arrives at 500 ms needing 400 ms, then 50 ms
    # of IO. By hand:
    #   0.1-0.5 s: A alone. 0.5-1.1 s: both at half speed, B gets 300 ms.
    #   1.1 s: A's timeout (100 ms + 1 s): A fails, B runs alone for its last 100 ms: CPU done at
    #   1.2 s, IO done at 1.25 s.
    env, model, trace = long_and_short(ClientSpec(cancel=True))
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


def test_by_default_the_server_keeps_working_on_a_request_its_client_gave_up() -> None:
    # The same, but as real servers do, the replica never hears that A's client went away:
    #   1.1 s: A fails for its client, yet keeps half the core: B's CPU ends at 1.3 s, IO at 1.35 s.
    #   A has had 0.4 + 0.4 s of its 5 s by then, alone from 1.3 s: it would end at 5.5 s, after
    #   the run, so it is still on the replica at the end, abandoned, and no one waits for it.
    env, model, trace = long_and_short(ClientSpec())
    env.run()
    assert model.requests_failed.reasons == {"timeout": 1}
    [(at, b, _, _)] = trace.kind("complete_request")
    assert (at, b.arrived_at) == (1350 * MS, 500 * MS)
    assert model.requests_complete.latency.max == 850 * MS
    processing = model.replicas[0].processing
    assert [r.arrived_at for r in processing] == [100 * MS]
    assert processing.cpu.busy_core_ns() == pytest.approx(4900 * MS)  # busy from 0.1 s to the end
    assert model.requests_in_flight == 0  # the client of A gave up; B is done
    assert model.clients.abandoned_total == 1


def test_the_slot_of_a_timed_out_request_goes_to_the_next_in_line() -> None:
    # Concurrency 1, timeout 1 s, 3 s of CPU each, clients that cancel. A (100 ms) holds the slot
    # and B (200 ms) waits.
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
        client=ClientSpec(cancel=True),
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
