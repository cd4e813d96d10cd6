"""The Clock interface on the Environment: call_at / call_later in simulated time.

Rules: a call fires at exactly the simulated time asked for; calls fire in time order and
same-time calls in the order they were made; a cancelled Timer does not fire; a call outside
(0, halt_at) or before now is ignored like any other movement, with its reason.
"""

from __future__ import annotations

from skenario.core import SECOND, Clock, Environment, IgnoredReason, MovementLog, Timer

HALT = 3_600 * 10**9  # one hour


def test_call_at_fires_at_that_time() -> None:
    env = Environment(HALT)
    fired: list[int] = []
    env.call_at(5 * 10**9, lambda: fired.append(env.now()))
    env.run()
    assert fired == [5 * 10**9]


def test_call_later_is_relative_to_now() -> None:
    env = Environment(HALT)
    fired: list[tuple[str, int]] = []

    def first() -> None:
        fired.append(("first", env.now()))
        env.call_later(2 * 10**9, lambda: fired.append(("second", env.now())))

    env.call_later(3 * 10**9, first)  # now is 0 here, so this is at 3 s
    env.run()
    assert fired == [("first", 3 * 10**9), ("second", 5 * 10**9)]


def test_call_later_zero_inside_a_call_fires_at_the_same_time_afterwards() -> None:
    env = Environment(HALT)
    fired: list[tuple[str, int]] = []

    def outer() -> None:
        fired.append(("outer", env.now()))
        env.call_later(0, lambda: fired.append(("inner", env.now())))

    env.call_at(10, outer)
    env.call_at(10, lambda: fired.append(("sibling", env.now())))
    env.run()
    assert fired == [("outer", 10), ("sibling", 10), ("inner", 10)]


def test_calls_fire_in_time_order_then_call_order() -> None:
    env = Environment(HALT)
    fired: list[str] = []
    requests = [("a", 30), ("b", 10), ("c", 30), ("d", 20), ("e", 10)]
    for name, at in requests:
        env.call_at(at, lambda name=name: fired.append(name))  # type: ignore[misc]
    env.run()
    expected = [name for _, (name, _) in sorted(enumerate(requests), key=lambda p: (p[1][1], p[0]))]
    assert fired == expected == ["b", "e", "d", "a", "c"]


def test_cancel_before_the_run() -> None:
    env = Environment(HALT)
    fired: list[str] = []
    keep = env.call_at(10, lambda: fired.append("keep"))
    drop = env.call_at(10, lambda: fired.append("drop"))
    assert isinstance(keep, Timer) and isinstance(drop, Timer)
    drop.cancel()
    env.run()
    assert fired == ["keep"]


def test_cancel_from_an_earlier_call() -> None:
    env = Environment(HALT)
    fired: list[str] = []
    later = env.call_at(20, lambda: fired.append("later"))
    env.call_at(10, later.cancel)
    env.call_at(30, lambda: fired.append("last"))
    env.run()
    assert fired == ["last"]


def test_cancel_a_same_time_call_from_an_earlier_one_at_that_time() -> None:
    env = Environment(HALT)
    fired: list[str] = []
    timers: list[Timer] = []
    env.call_at(10, lambda: timers[0].cancel())
    timers.append(env.call_at(10, lambda: fired.append("cancelled")))
    env.run()
    assert fired == []


def test_call_at_after_halt_is_ignored_with_a_reason() -> None:
    env = Environment(HALT)
    fired: list[int] = []
    at_halt = env.call_at(HALT, lambda: fired.append(1))
    after = env.call_later(HALT + 1, lambda: fired.append(2))
    env.run()
    assert fired == []
    assert [(i.reason, i.movement.occurs_at, i.movement.what) for i in env.ignored] == [
        (IgnoredReason.SCHEDULED_AFTER_HALT, HALT, at_halt),
        (IgnoredReason.SCHEDULED_AFTER_HALT, HALT + 1, after),
    ]


def test_call_at_in_the_past_is_made_as_soon_as_possible() -> None:
    """The Clock contract (shared with RealtimeClock): a past time means now.

    Before the run, "now" is 1 ns, because 0 belongs to the start movement.
    """
    env = Environment(HALT)
    fired: list[tuple[str, int]] = []

    def late() -> None:
        env.call_at(env.now() - 1, lambda: fired.append(("past", env.now())))

    env.call_at(0, lambda: fired.append(("zero", env.now())))
    env.call_at(100, late)
    env.run()
    assert fired == [("zero", 1), ("past", 100)]
    assert env.ignored == []


def test_calls_are_call_movements_in_the_log() -> None:
    env = Environment(HALT)
    log = MovementLog()
    env.observe(log)
    env.call_at(7, lambda: None)
    env.run()
    assert [(m.kind, m.occurs_at) for m in log.movements] == [
        ("start_to_running", 0),
        ("call", 7),
        ("running_to_halted", HALT),
    ]


def ticker(clock: Clock, period: int, ticks: list[int]) -> None:
    """A policy written only against Clock: tick every `period`, forever."""

    def tick() -> None:
        ticks.append(clock.now())
        clock.call_later(period, tick)

    clock.call_later(period, tick)


def test_a_clock_policy_ticks_on_the_environment_until_the_halt() -> None:
    env = Environment(95 * SECOND)
    ticks: list[int] = []
    ticker(env, 10 * SECOND, ticks)
    env.run()
    # ticks at 10 s, 20 s, ..., 90 s; the one asked for at 100 s is after the halt
    assert ticks == [k * 10 * SECOND for k in range(1, 10)]
    assert env.ignored_counts[IgnoredReason.SCHEDULED_AFTER_HALT] == 1
