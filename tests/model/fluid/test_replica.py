"""A fluid replica read as the metrics pipeline reads one: exact, conserved, and unchanged by reading."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.model.fluid.pool import FluidPool
from skenario.model.fluid.replica import FluidReplica

changes = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=20 * SECOND),  # time to the next change
        st.floats(min_value=0, max_value=400),  # the rate from then on
        st.sampled_from([500, 1000, 2000, 4000]),  # the replica's millicores from then on
    ),
    min_size=1,
    max_size=12,
)


def driven(replica: FluidReplica, steps: list[tuple[int, float, int]], reads_between: int = 0) -> int:
    """Apply the changes in order, reading `reads_between` times between each two; the last instant."""
    now = 0
    for gap, rate, millicores in steps:
        for k in range(1, reads_between + 1):
            at = now + gap * k // (reads_between + 1)
            replica.count(at), replica.busy_core_ns(at), replica.in_flight_area(at), replica.completed(at)
        now += gap
        replica.flow(now, rate)
        replica.resize(now, millicores)
    return now


@settings(max_examples=80, deadline=None)
@given(steps=changes, theta=st.sampled_from([0.0, 0.5]))
def test_reading_changes_nothing(steps: list[tuple[int, float, int]], theta: float) -> None:
    quiet, read = FluidReplica(FluidPool(20.0, theta), 1000, 0), FluidReplica(FluidPool(20.0, theta), 1000, 0)
    end = driven(quiet, steps) + SECOND
    assert driven(read, steps, reads_between=3) + SECOND == end
    for reading in ("level", "arrived", "completed", "abandoned", "busy_core_ns", "in_flight_area"):
        assert getattr(read, reading)(end) == getattr(quiet, reading)(end), reading


@settings(max_examples=80, deadline=None)
@given(steps=changes, theta=st.sampled_from([0.0, 0.5]))
def test_every_request_is_held_completed_abandoned_or_taken(steps: list[tuple[int, float, int]], theta: float) -> None:
    replica = FluidReplica(FluidPool(20.0, theta), 1000, 0)
    end = driven(replica, steps) + SECOND
    replica.take(end - SECOND // 2, replica.level(end - SECOND // 2) / 3)  # a third failed half a second before
    total = replica.level(end) + replica.completed(end) + replica.abandoned(end) + replica.taken()
    assert replica.arrived(end) == pytest.approx(total, rel=1e-9, abs=1e-6)


def test_what_the_metrics_pipeline_reads_in_a_steady_state() -> None:
    """30/s on 2 cores at 50 ms of CPU each (mu 20/s): the cores in use are lam E[S] = 1.5 (the utilisation
    law), 1,500 millicores over a window; under capacity each request holds for E[S], so the mean held
    (queue-proxy's concurrency, the window's area over its length) is lam E[S] = 1.5 by Little's law."""
    replica = FluidReplica(FluidPool(20.0), 2000, 0)
    replica.flow(0, 30.0)
    start, end = 100 * SECOND, 160 * SECOND
    millicores = (replica.busy_core_ns(end) - replica.busy_core_ns(start)) * 1000 / (end - start)
    concurrency = (replica.in_flight_area(end) - replica.in_flight_area(start)) / (end - start)
    assert millicores == pytest.approx(1500.0)
    assert concurrency == pytest.approx(1.5)
    assert replica.arrived(end) - replica.arrived(start) == pytest.approx(30.0 * 60)
    assert replica.count(end) == 2  # 1.5 held, as a whole number


def test_a_resize_below_the_load_makes_the_level_grow_at_the_excess() -> None:
    """At 30/s with mu 20/s a replica of 2 cores keeps up; cut to 1 core (20/s), 10/s more arrive than leave."""
    replica = FluidReplica(FluidPool(20.0), 2000, 0)
    replica.flow(0, 30.0)
    replica.resize(100 * SECOND, 1000)
    grown = replica.level(160 * SECOND) - replica.level(110 * SECOND)
    assert grown == pytest.approx(10.0 * 50)


def test_reading_before_the_last_change_is_refused() -> None:
    replica = FluidReplica(FluidPool(20.0), 1000, 0)
    replica.flow(10 * SECOND, 5.0)
    with pytest.raises(ValueError, match="before the last change"):
        replica.level(5 * SECOND)


def test_the_requests_held_integrate_and_fail_whole() -> None:
    """Held 2 for 10 s, then 5 for 4 s: 40 request-seconds; killed then, the 5 fail and nothing is held."""
    replica = FluidReplica(FluidPool(20.0), 1000, 0)
    replica.hold(0, 2.0)
    replica.hold(10 * SECOND, 5.0)
    assert replica.held_area(14 * SECOND) == pytest.approx(40 * SECOND)
    assert replica.drop_held(14 * SECOND) == 5.0
    assert (replica.held(), replica.held_taken()) == (0.0, 5.0)
    assert replica.held_area(20 * SECOND) == pytest.approx(40 * SECOND)
    with pytest.raises(ValueError, match=">= 0"):
        replica.hold(20 * SECOND, -1.0)


def test_a_jitter_spreads_its_core_seconds_evenly_over_its_step() -> None:
    """+2 core-s over [10 s, 20 s): a quarter in by 12.5 s, all of it from 20 s; the next one adds to it."""
    replica = FluidReplica(FluidPool(20.0), 1000, 0)  # no traffic: only the noise moves the CPU used
    replica.jitter(10 * SECOND, 20 * SECOND, 2.0)
    assert replica.busy_core_ns(12 * SECOND + SECOND // 2) == pytest.approx(0.5 * SECOND)
    assert replica.busy_core_ns(25 * SECOND) == pytest.approx(2.0 * SECOND)
    replica.jitter(25 * SECOND, 26 * SECOND, -1.0)
    assert replica.busy_core_ns(30 * SECOND) == pytest.approx(1.0 * SECOND)
    with pytest.raises(ValueError, match="spans a step"):
        replica.jitter(30 * SECOND, 30 * SECOND, 1.0)
