"""RealtimeClock: the Clock interface on the wall clock, scaled by `speed`.

Most tests inject a fake wall clock and a fake sleep that advances it, so they check the
arithmetic (simulated ns = wall ns elapsed x speed; wall seconds slept = simulated ns / speed /
1e9) without sleeping. One short test uses the real clock to show that the same policy code
gives the same result on an Environment and on a RealtimeClock.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skenario.core import SECOND, Clock, Environment, RealtimeClock
from skenario.core.clock import Timer
from skenario.core.stocks import FifoStock


class FakeWall:
    """A wall clock that only moves when someone sleeps (or the test advances it)."""

    def __init__(self, start: int = 123_456_789) -> None:
        self.t = start
        self.sleeps: list[float] = []

    def wall_ns(self) -> int:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += round(seconds * 1e9)

    def advance(self, ns: int) -> None:
        self.t += ns


def make(speed: float) -> tuple[RealtimeClock, FakeWall]:
    wall = FakeWall()
    return RealtimeClock(speed, wall_ns=wall.wall_ns, sleep=wall.sleep), wall


@pytest.mark.parametrize("speed", [0, -1.0])
def test_speed_must_be_positive(speed: float) -> None:
    with pytest.raises(ValueError):
        RealtimeClock(speed)


@pytest.mark.parametrize(
    ("speed", "wall_elapsed", "expected_now"),
    [(1.0, 3 * SECOND, 3 * SECOND), (2.0, 3 * SECOND, 6 * SECOND), (0.5, 3 * SECOND, 1_500_000_000), (100.0, 7, 700)],
)
def test_now_is_wall_time_since_creation_times_speed(speed: float, wall_elapsed: int, expected_now: int) -> None:
    clock, wall = make(speed)
    assert clock.now() == 0  # counted from when the clock was made, not from the wall epoch
    wall.advance(wall_elapsed)
    assert clock.now() == expected_now
    assert type(clock.now()) is int


def test_run_fires_due_calls_in_order_and_sleeps_the_scaled_gaps() -> None:
    clock, wall = make(2.0)
    fired: list[tuple[str, int]] = []
    for name, at in [("c", 30 * SECOND), ("a", 10 * SECOND), ("b", 20 * SECOND), ("a2", 10 * SECOND)]:
        clock.call_at(at, lambda name=name: fired.append((name, clock.now())))  # type: ignore[misc]
    clock.run(until=40 * SECOND)
    assert fired == [("a", 10 * SECOND), ("a2", 10 * SECOND), ("b", 20 * SECOND), ("c", 30 * SECOND)]
    # speed 2: every 10 simulated seconds is 5 wall seconds; no sleep between the two calls at
    # 10 s; the last sleep runs from 30 s to `until` (40 s).
    assert wall.sleeps == pytest.approx([5.0, 5.0, 5.0, 5.0])
    assert clock.now() == 40 * SECOND


@pytest.mark.parametrize("speed", [0.5, 1.0, 4.0])
def test_total_wall_time_slept_is_simulated_span_over_speed(speed: float) -> None:
    clock, wall = make(speed)
    clock.call_at(3 * SECOND, lambda: None)
    clock.call_at(8 * SECOND, lambda: None)
    clock.run(until=12 * SECOND)
    assert sum(wall.sleeps) == pytest.approx(12 / speed)
    assert clock.now() == 12 * SECOND


def test_calls_at_or_after_until_wait_for_the_next_run() -> None:
    clock, _ = make(1.0)
    fired: list[str] = []
    clock.call_at(5 * SECOND, lambda: fired.append("before"))
    clock.call_at(10 * SECOND, lambda: fired.append("at"))
    clock.call_at(15 * SECOND, lambda: fired.append("after"))
    clock.run(until=10 * SECOND)
    assert fired == ["before"]
    clock.run(until=20 * SECOND)
    assert fired == ["before", "at", "after"]


def test_call_later_is_relative_to_the_clock_now() -> None:
    clock, wall = make(1.0)
    wall.advance(SECOND)
    fired: list[int] = []
    clock.call_later(2 * SECOND, lambda: fired.append(clock.now()))
    clock.run(until=10 * SECOND)
    assert fired == [3 * SECOND]


def test_a_call_made_in_a_call_fires_in_the_same_run() -> None:
    clock, _ = make(1.0)
    fired: list[tuple[str, int]] = []

    def first() -> None:
        fired.append(("first", clock.now()))
        clock.call_later(SECOND, lambda: fired.append(("second", clock.now())))

    clock.call_at(SECOND, first)
    clock.run(until=5 * SECOND)
    assert fired == [("first", SECOND), ("second", 2 * SECOND)]


def test_a_call_in_the_past_fires_without_sleeping() -> None:
    clock, wall = make(1.0)
    wall.advance(10 * SECOND)
    fired: list[int] = []
    clock.call_at(SECOND, lambda: fired.append(clock.now()))
    clock.run(until=10 * SECOND)
    assert fired == [10 * SECOND]
    assert wall.sleeps == []


def test_cancel_stops_a_realtime_call() -> None:
    clock, _ = make(1.0)
    fired: list[str] = []
    timer = clock.call_at(SECOND, lambda: fired.append("cancelled"))
    clock.call_at(2 * SECOND, lambda: fired.append("kept"))
    timer.cancel()
    clock.run(until=3 * SECOND)
    assert fired == ["kept"]


def test_run_with_nothing_due_sleeps_until_until() -> None:
    clock, wall = make(4.0)
    clock.run(until=8 * SECOND)
    assert wall.sleeps == pytest.approx([2.0])
    assert clock.now() == 8 * SECOND


# -- the same policy on both clocks ---------------------------------------------------------


def start_ticker(clock: Clock, period: int, ticks: list[int]) -> None:
    """A policy written only against Clock: tick every `period` of clock time, forever.

    It schedules each tick at an absolute time (`first + k * period`) so that lateness of one
    wall-clock wake-up does not shift the later ticks.
    """
    next_at = clock.now() + period

    def tick() -> None:
        nonlocal next_at
        ticks.append(clock.now())
        next_at += period
        clock.call_at(next_at, tick)

    clock.call_at(next_at, tick)


def test_the_same_policy_gives_the_same_ticks_in_simulation_and_in_real_time() -> None:
    period = 10 * SECOND
    until = 105 * SECOND  # ticks at 10 s, 20 s, ..., 100 s: 105 // 10 == 10 of them
    expected = 105 // 10

    env = Environment(halt_at=3_600 * SECOND)
    sim_ticks: list[int] = []
    start_ticker(env, period, sim_ticks)
    env.run(until=until)

    # speed 1000: 105 simulated seconds take 0.105 wall seconds, really slept.
    live = RealtimeClock(speed=1000.0)
    live_ticks: list[int] = []
    start_ticker(live, period, live_ticks)
    live.run(until=until)

    assert len(sim_ticks) == expected
    assert len(live_ticks) == len(sim_ticks)


@pytest.mark.parametrize("kind", ["environment", "realtime"])
def test_settled_callbacks_wait_for_every_call_due_now_as_on_the_environment(kind: str) -> None:
    """At 1 s, `a` asks for two settled callbacks (order 1, then order 0) and a call `b` for now; `c` was
    already due at 1 s. Both clocks run the calls due now first (`a`, `c`, then `b`), then the settled
    callbacks by order; one that schedules a call for now (`s0` schedules `d`) lets it run before the
    next; a call due later (`later`, 2 s) waits for its own time."""
    clock: Environment | RealtimeClock = Environment(halt_at=10 * SECOND) if kind == "environment" else make(1.0)[0]
    fired: list[tuple[str, int]] = []

    def note(name: str) -> Callable[[], None]:
        return lambda: fired.append((name, clock.now()))

    def a() -> None:
        note("a")()
        clock.call_when_settled(note("s1"), order=1)
        clock.call_when_settled(s0, order=0)
        clock.call_at(clock.now(), note("b"))

    def s0() -> None:
        note("s0")()
        clock.call_at(clock.now(), note("d"))

    clock.call_at(SECOND, a)
    clock.call_at(SECOND, note("c"))
    clock.call_at(2 * SECOND, note("later"))
    clock.run(until=5 * SECOND)
    assert [name for name, _ in fired] == ["a", "c", "b", "s0", "d", "s1", "later"]
    assert [at for _, at in fired] == [SECOND] * 6 + [2 * SECOND]


def test_a_movement_takes_from_one_stock_and_gives_to_the_other_at_its_time() -> None:
    clock, _ = make(1.0)
    source: FifoStock[Timer] = FifoStock("Here", "Timer")
    sink: FifoStock[Timer] = FifoStock("There", "Timer")
    token = Timer(0, lambda: None)
    source.add(token)
    seen: list[tuple[int, int]] = []
    clock.schedule("move", 3 * SECOND, source, sink, token)
    clock.schedule("move-again", 4 * SECOND, source, sink)  # the source is empty by then: nothing moves
    for at in (2 * SECOND, 3 * SECOND + 1, 5 * SECOND):
        clock.call_at(at, lambda: seen.append((source.count(), sink.count())))
    clock.run(until=6 * SECOND)
    assert seen == [(1, 0), (0, 1), (0, 1)]
    assert list(sink) == [token]
