"""The Environment: the schedule, integer time, start/halt, ignored movements and the run loop.

Rules under test (DESIGN.md "The kernel", seed 000 "How a scenario is executed"):
only the start movement occurs at 0 and only the halt movement at halt_at; any other movement
must fall in (0, halt_at) and not before now; the loop pops the next movement, sets the time,
calls from_stock.remove(what) and, if that gives an entity, to_stock.add(entity); same-time
movements run in the order they were scheduled.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skenario.core import (
    Entity,
    Environment,
    FifoStock,
    IgnoredMovement,
    IgnoredReason,
    KeyedStock,
    Movement,
    MovementBudget,
    MovementBudgetExceeded,
    MovementLog,
    Sink,
    Source,
)

HALT = 1_000

EMPTY = IgnoredReason.FROM_STOCK_EMPTY
PAST = IgnoredReason.SCHEDULED_IN_PAST
AFTER_HALT = IgnoredReason.SCHEDULED_AFTER_HALT


def new_source() -> Source[Entity]:
    made: list[Entity] = []

    def factory() -> Entity:
        made.append(Entity(len(made)))
        return made[-1]

    return Source("Source", "Entity", factory)


class Recorder:
    """A through stock (FIFO inside) that logs each call with the simulated time it came at."""

    kind_stocked = "Entity"

    def __init__(self, env: Environment, name: str, calls: list[tuple[str, str, int, Entity | None]]) -> None:
        self.env = env
        self.name = name
        self.calls = calls
        self.inner: FifoStock[Entity] = FifoStock(name, "Entity")

    def remove(self, entity: Entity | None = None) -> Entity | None:
        self.calls.append(("remove", self.name, self.env.now(), entity))
        return self.inner.remove(entity)

    def add(self, entity: Entity) -> None:
        self.calls.append(("add", self.name, self.env.now(), entity))
        self.inner.add(entity)

    def count(self) -> int:
        return self.inner.count()


class OnAdd:
    """A sink that runs a hook on every arrival (the way model logic lives in `add`)."""

    kind_stocked = "Entity"

    def __init__(self, name: str, hook: Callable[[Entity], None]) -> None:
        self.name = name
        self.hook = hook
        self.arrived: list[Entity] = []

    def add(self, entity: Entity) -> None:
        self.arrived.append(entity)
        self.hook(entity)

    def count(self) -> int:
        return len(self.arrived)


def user_movements(log: MovementLog) -> list[Movement]:
    return [m for m in log.movements if m.kind not in ("start_to_running", "running_to_halted")]


# -- construction, time, start and halt -----------------------------------------------------


@pytest.mark.parametrize("halt_at", [0, -1, 1.5, "10s", None])
def test_halt_at_must_be_a_positive_int(halt_at: object) -> None:
    with pytest.raises(ValueError):
        Environment(halt_at)  # type: ignore[arg-type]


def test_fresh_environment() -> None:
    env = Environment(HALT)
    assert env.now() == 0
    assert env.halt_at == HALT
    assert not env.is_halted
    assert env.pending == 2  # the start and the halt movements
    assert env.movements_completed == 0
    assert env.movements_ignored == 0


def test_start_at_zero_and_halt_at_halt_at() -> None:
    env = Environment(HALT)
    log = MovementLog()
    env.observe(log)
    env.run()
    assert [(m.kind, m.occurs_at) for m in log.movements] == [("start_to_running", 0), ("running_to_halted", HALT)]
    start, halt = log.movements
    assert (start.from_stock, start.to_stock) == (env.before_start, env.running)
    assert (halt.from_stock, halt.to_stock) == (env.running, env.halted)
    assert env.now() == HALT
    assert env.is_halted
    assert env.halted.count() == 1
    assert env.running.count() == 0


def test_the_scenario_is_running_between_start_and_halt() -> None:
    env = Environment(HALT)
    env.run(until=HALT // 2)
    assert env.scenario in env.running
    assert not env.is_halted


def test_time_is_integer_nanoseconds() -> None:
    env = Environment(HALT)
    seen: list[object] = []
    src = new_source()
    env.schedule("tick", 7, src, OnAdd("Hook", lambda e: seen.append(env.now())))
    env.run(until=500)
    assert type(env.now()) is int
    env.run()
    assert seen == [7]
    assert all(type(t) is int for t in seen)
    assert type(env.now()) is int


# -- what a movement does -------------------------------------------------------------------


def test_movement_removes_from_its_from_stock_then_adds_to_its_to_stock() -> None:
    env = Environment(HALT)
    calls: list[tuple[str, str, int, Entity | None]] = []
    a, b = Recorder(env, "A", calls), Recorder(env, "B", calls)
    entity = Entity(1)
    a.inner.add(entity)
    env.schedule("move", 10, a, b)
    env.run()
    assert calls == [("remove", "A", 10, None), ("add", "B", 10, entity)]
    assert a.count() == 0
    assert list(b.inner) == [entity]


@pytest.mark.parametrize("stock_type", [FifoStock, KeyedStock])
def test_what_moves_that_entity(stock_type: type) -> None:
    env = Environment(HALT)
    origin = stock_type("Origin", "Entity")
    dest: Sink[Entity] = Sink("Dest", "Entity", keep=True)
    a, b, c = Entity(1), Entity(2), Entity(3)
    for x in (a, b, c):
        origin.add(x)
    env.schedule("pick", 10, origin, dest, what=b)
    env.run()
    assert list(dest) == [b]
    assert b not in origin
    assert a in origin and c in origin


def test_what_with_a_factoryless_source_moves_an_outside_entity() -> None:
    env = Environment(HALT)
    replicas: Source[Entity] = Source("ReplicaSource", "Replica")
    launching: FifoStock[Entity] = FifoStock("Launching", "Replica")
    replica = Entity(5)
    env.schedule("begin_launch", 10, replicas, launching, what=replica)
    env.schedule("begin_launch", 20, replicas, launching)  # nothing named: nothing to give
    env.run()
    assert list(launching) == [replica]
    assert [(i.movement.occurs_at, i.reason) for i in env.ignored] == [(20, EMPTY)]


def test_observer_gets_the_moved_entity() -> None:
    env = Environment(HALT)
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    got: list[tuple[int, Entity]] = []

    class Watcher:
        def on_movement(self, movement: Movement, entity: Entity) -> None:
            got.append((movement.occurs_at, entity))

        def on_ignored(self, ignored: IgnoredMovement) -> None:
            pass

    env.observe(Watcher())
    env.schedule("arrive", 10, src, dest)
    env.schedule("arrive", 20, src, dest)
    env.run()
    assert got[0] == (0, env.scenario)
    assert got[-1] == (HALT, env.scenario)
    first, second = dest
    assert got[1:-1] == [(10, first), (20, second)]


# -- ignored: from_stock_empty --------------------------------------------------------------


def test_empty_from_stock_at_its_time_is_ignored() -> None:
    env = Environment(HALT)
    empty: FifoStock[Entity] = FifoStock("Empty", "Entity")
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    assert env.schedule("drain", 10, empty, dest, note="why not") is True
    env.run()
    assert dest.count() == 0
    assert len(env.ignored) == 1
    ignored = env.ignored[0]
    assert ignored.reason == EMPTY
    assert ignored.reason == "from_stock_empty"
    m = ignored.movement
    assert (m.kind, m.occurs_at, m.from_stock, m.to_stock, m.what, m.note) == (
        "drain",
        10,
        empty,
        dest,
        None,
        "why not",
    )


def test_emptiness_is_judged_at_the_movement_time_not_at_scheduling() -> None:
    env = Environment(HALT)
    src = new_source()
    middle: FifoStock[Entity] = FifoStock("Middle", "Entity")
    full: FifoStock[Entity] = FifoStock("Full", "Entity")
    dest: Sink[Entity] = Sink("Dest", "Entity", keep=True)
    full.add(Entity(100))
    env.schedule("later_filled", 20, middle, dest)  # empty now, filled at 10
    env.schedule("fill", 10, src, middle)
    env.schedule("drained_first", 15, full, middle)  # moves Entity(100) away at 15 ...
    env.schedule("too_late", 30, full, dest)  # ... so Full is empty at 30
    env.run()
    assert [i.movement.kind for i in env.ignored] == ["too_late"]
    assert [e.id for e in dest] == [0]  # `later_filled` took the entity made at 10 (FIFO head)


def test_named_entity_absent_is_ignored_and_leaves_the_stock_alone() -> None:
    env = Environment(HALT)
    origin: FifoStock[Entity] = FifoStock("Origin", "Entity")
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    present, absent = Entity(1), Entity(2)
    origin.add(present)
    env.schedule("pick", 10, origin, dest, what=absent)
    env.run()
    assert list(origin) == [present]
    assert dest.count() == 0
    assert [(i.reason, i.movement.what) for i in env.ignored] == [(EMPTY, absent)]


# -- ignored: scheduled_in_past / scheduled_after_halt --------------------------------------


@pytest.mark.parametrize(
    ("at", "reason"),
    [(0, PAST), (-1, PAST), (-(10**12), PAST), (HALT, AFTER_HALT), (HALT + 1, AFTER_HALT), (10 * HALT, AFTER_HALT)],
)
def test_times_outside_the_open_interval_are_ignored(at: int, reason: IgnoredReason) -> None:
    env = Environment(HALT)
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    log = MovementLog()
    env.observe(log)
    assert env.schedule("x", at, src, dest, note="n") is False
    assert env.pending == 2  # not scheduled
    assert [i.reason for i in env.ignored] == [reason]
    assert log.ignored == env.ignored  # observers hear about it when it is refused
    m = env.ignored[0].movement
    assert (m.kind, m.occurs_at, m.from_stock, m.to_stock, m.what, m.note) == ("x", at, src, dest, None, "n")
    env.run()
    assert dest.count() == 0
    assert src.emitted == 0


@pytest.mark.parametrize("at", [1, 2, HALT // 2, HALT - 1])
def test_times_inside_the_open_interval_are_accepted(at: int) -> None:
    env = Environment(HALT)
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    assert env.schedule("x", at, new_source(), dest) is True
    env.run()
    assert dest.count() == 1
    assert env.ignored == []


def test_before_now_is_in_the_past_and_now_is_not() -> None:
    env = Environment(HALT)
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    results: dict[int, bool] = {}

    def hook(_: Entity) -> None:
        now = env.now()
        for at in (now - 1, now, now + 1):
            results[at] = env.schedule("from_inside", at, src, dest)

    env.schedule("trigger", 100, src, OnAdd("Hook", hook))
    env.run()
    assert results == {99: False, 100: True, 101: True}
    assert [(i.movement.occurs_at, i.reason) for i in env.ignored] == [(99, PAST)]
    assert dest.count() == 2


def test_after_the_halt_everything_is_refused_with_the_right_reason() -> None:
    env = Environment(HALT)
    env.run()
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    assert not env.schedule("a", HALT - 1, src, dest)
    assert not env.schedule("b", HALT, src, dest)
    assert not env.schedule("c", HALT + 1, src, dest)
    assert [(i.movement.kind, i.reason) for i in env.ignored] == [("a", PAST), ("b", AFTER_HALT), ("c", AFTER_HALT)]


# -- ordering -------------------------------------------------------------------------------


def test_same_time_movements_run_in_insertion_order() -> None:
    env = Environment(HALT)
    log = MovementLog()
    env.observe(log)
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    times = [30, 10, 30, 20, 10, 30, 20, 10, 999, 1]
    for i, t in enumerate(times):
        env.schedule(f"m{i}", t, src, dest)
    env.run()
    expected = [f"m{i}" for i, _ in sorted(enumerate(times), key=lambda pair: (pair[1], pair[0]))]
    assert [m.kind for m in user_movements(log)] == expected


def test_scheduling_at_now_runs_after_what_is_already_scheduled_for_now() -> None:
    env = Environment(HALT)
    log = MovementLog()
    env.observe(log)
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")

    def then_z(_: Entity) -> None:
        env.schedule("Z", env.now(), src, dest)

    def then_x(_: Entity) -> None:
        env.schedule("X", env.now(), src, OnAdd("X", then_z))

    env.schedule("A", 50, src, OnAdd("A", then_x))
    env.schedule("B", 50, src, dest)
    env.schedule("D", 51, src, dest)
    env.schedule("C", 50, src, dest)
    env.run()
    assert [(m.kind, m.occurs_at) for m in user_movements(log)] == [
        ("A", 50),
        ("B", 50),
        ("C", 50),
        ("X", 50),
        ("Z", 50),
        ("D", 51),
    ]


# -- run(until) -----------------------------------------------------------------------------

TIMES = [1, 100, 200, 300, 300, 400, 999]


@pytest.mark.parametrize("until", [0, 1, 2, 100, 101, 300, 301, 999])
def test_run_until_runs_exactly_the_movements_before_until(until: int) -> None:
    env = Environment(HALT)
    log = MovementLog()
    env.observe(log)
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    for i, t in enumerate(TIMES):
        env.schedule(f"m{i}", t, src, dest)
    env.run(until=until)
    all_times = [0, *TIMES, HALT]  # start, the user movements, halt
    ran = [t for t in all_times if t < until]
    assert [m.occurs_at for m in log.movements] == ran
    assert env.now() == until
    assert env.pending == len(all_times) - len(ran)
    assert env.movements_completed == len(ran)
    assert not env.is_halted
    # and a second run() resumes where it stopped
    env.run()
    assert [m.occurs_at for m in log.movements] == all_times
    assert env.now() == HALT
    assert env.is_halted
    assert dest.count() == len(TIMES)


def test_run_until_halt_at_does_not_run_the_halt_movement() -> None:
    """The halt movement occurs at halt_at, which is not before halt_at, so run(until=halt_at)
    should stop short of it, as it stops short of any other movement at `until`."""
    env = Environment(HALT)
    log = MovementLog()
    env.observe(log)
    env.run(until=HALT)
    assert env.now() == HALT
    assert [m.kind for m in log.movements] == ["start_to_running"]
    assert not env.is_halted


def test_run_until_beyond_the_halt_runs_to_the_halt() -> None:
    env = Environment(HALT)
    log = MovementLog()
    env.observe(log)
    env.run(until=5 * HALT)
    assert env.is_halted
    assert [m.kind for m in log.movements] == ["start_to_running", "running_to_halted"]
    assert env.now() == HALT  # time never passes the halt


def test_run_until_in_steps_matches_one_run() -> None:
    def build() -> tuple[Environment, MovementLog]:
        env = Environment(HALT)
        log = MovementLog()
        env.observe(log)
        src = new_source()
        dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
        for i, t in enumerate(TIMES):
            env.schedule(f"m{i}", t, src, dest)
        return env, log

    one, one_log = build()
    one.run()
    steps, steps_log = build()
    for until in (0, 0, 50, 100, 300, 300, 998, 999):
        steps.run(until=until)
        assert steps.now() == until
    steps.run()
    assert [(m.kind, m.occurs_at) for m in steps_log.movements] == [(m.kind, m.occurs_at) for m in one_log.movements]


def test_scheduling_at_now_after_run_until_runs_after_movements_already_there() -> None:
    env = Environment(HALT)
    log = MovementLog()
    env.observe(log)
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    env.schedule("early", 300, src, dest)
    env.run(until=300)
    assert env.schedule("late", 300, src, dest) is True
    assert env.schedule("past", 299, src, dest) is False
    env.run()
    assert [m.kind for m in user_movements(log)] == ["early", "late"]


@pytest.mark.parametrize("until", [299, 0, -1])
def test_run_until_in_the_past_raises(until: int) -> None:
    env = Environment(HALT)
    env.run(until=300)
    with pytest.raises(ValueError):
        env.run(until=until)
    assert env.now() == 300


def test_run_after_the_halt_does_nothing() -> None:
    env = Environment(HALT)
    log = MovementLog()
    env.observe(log)
    env.run()
    env.run()
    assert len(log.movements) == 2
    assert env.now() == HALT


# -- accounting -----------------------------------------------------------------------------


def test_counts() -> None:
    env = Environment(HALT)
    src = new_source()
    sink: Sink[Entity] = Sink("Sink", "Entity")
    empty: FifoStock[Entity] = FifoStock("Empty", "Entity")
    for t in (10, 20, 30):  # 3 that will move
        env.schedule("ok", t, src, sink)
    for t in (15, 25):  # 2 that will find their stock empty
        env.schedule("empty", t, empty, sink)
    for t in (0, -5):  # 2 in the past
        env.schedule("past", t, src, sink)
    for t in (HALT, 2 * HALT):  # 2 after the halt
        env.schedule("late", t, src, sink)

    assert env.pending == 2 + 3 + 2
    assert env.movements_completed == 0
    assert env.movements_ignored == 4

    env.run(until=20)  # runs start@0, ok@10, empty@15
    assert env.pending == 7 - 3
    assert env.movements_completed == 2
    assert env.movements_ignored == 5

    env.run()
    assert env.pending == 0
    assert env.movements_completed == 2 + 3  # start, halt and the three that moved
    assert env.movements_ignored == 6
    assert env.ignored_counts == {EMPTY: 2, PAST: 2, AFTER_HALT: 2}
    assert sink.count() == 3


@pytest.mark.parametrize("cap", [0, 1, 3])
def test_keep_ignored_caps_the_list_but_not_the_counts_or_observers(cap: int) -> None:
    env = Environment(HALT, keep_ignored=cap)
    log = MovementLog()
    env.observe(log)
    src = new_source()
    sink: Sink[Entity] = Sink("Sink", "Entity")
    empty: FifoStock[Entity] = FifoStock("Empty", "Entity")
    for i in range(5):
        env.schedule(f"late{i}", HALT + i, src, sink)
    for i in range(5):
        env.schedule(f"empty{i}", 10 + i, empty, sink)
    env.run()
    assert len(env.ignored) == cap
    assert env.movements_ignored == 10
    assert len(log.ignored) == 10
    assert all(i in log.ignored for i in env.ignored)


# -- observers ------------------------------------------------------------------------------


def test_observers_are_opt_in() -> None:
    env = Environment(HALT)
    unattached = MovementLog()
    env.schedule("x", 10, new_source(), Sink("Sink", "Entity"))
    env.schedule("y", HALT, new_source(), Sink("Sink", "Entity"))
    env.run()
    assert unattached.movements == [] and unattached.ignored == []
    assert env.movements_completed == 3  # the run itself still counts


def test_every_observer_sees_every_movement_in_order() -> None:
    env = Environment(HALT)
    first, second = MovementLog(), MovementLog()
    env.observe(first)
    env.observe(second)
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    for t in (500, 5, 50, 5):
        env.schedule("m", t, src, dest)
    env.schedule("e", 60, FifoStock("Empty", "Entity"), dest)
    env.run()
    assert first.movements == second.movements
    assert first.ignored == second.ignored
    assert [m.occurs_at for m in first.movements] == [0, 5, 5, 50, 500, HALT]
    assert [i.movement.kind for i in first.ignored] == ["e"]


def test_observer_attached_between_runs_sees_only_later_movements() -> None:
    env = Environment(HALT)
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    for t in (10, 20, 30):
        env.schedule("m", t, src, dest)
    env.run(until=20)
    log = MovementLog()
    env.observe(log)
    env.run()
    assert [m.occurs_at for m in log.movements] == [20, 30, HALT]


def test_observer_attached_during_a_movement_sees_the_later_movements() -> None:
    """`observe` promises the observer 'sees every later movement'; that must hold when a
    model attaches it from inside a stock's add() (e.g. recording that starts on an event)."""
    env = Environment(HALT)
    log = MovementLog()
    src = new_source()
    dest: FifoStock[Entity] = FifoStock("Dest", "Entity")
    env.schedule("attach", 10, src, OnAdd("Attach", lambda _: env.observe(log)))
    env.schedule("moved", 20, src, dest)
    env.schedule("empty", 30, FifoStock("Empty", "Entity"), dest)
    env.run()
    assert [i.movement.kind for i in log.ignored] == ["empty"]
    assert [m.kind for m in log.movements] == ["moved", "running_to_halted"]


# -- the movement budget --------------------------------------------------------------------


def test_a_budget_stops_a_livelock_after_exactly_its_movements() -> None:
    """A timer that re-arms itself at the same instant never lets time move: without a budget the
    run never returns. With a budget of 50 it raises at the 51st movement (the start and 50 firings,
    each of which ran), at the instant it was stuck at."""
    env = Environment(HALT)
    firings: list[int] = []

    def again() -> None:
        firings.append(env.now())
        env.call_at(env.now(), again)

    env.call_at(7, again)
    budget = MovementBudget(50)
    env.observe(budget)
    with pytest.raises(MovementBudgetExceeded, match=r"more than 50 movements, the last a 'call' movement at 7ns"):
        env.run()
    assert firings == [7] * 50  # the start movement was the first of the 51
    assert budget.used == 51
    assert env.now() == 7 and not env.is_halted
    with pytest.raises(MovementBudgetExceeded, match="more than 50 movements"):  # it stays spent
        env.run()
    assert len(firings) == 51


def test_a_budget_counts_every_movement_run_or_ignored_and_a_run_within_it_is_unchanged() -> None:
    """The budget spends one per movement the loop runs and one per movement ignored: a run that
    needs exactly its budget finishes as it does with none; one fewer stops it at that movement."""

    def build(budget: MovementBudget | None) -> tuple[Environment, MovementLog]:
        env = Environment(HALT)
        log = MovementLog()
        env.observe(log)
        if budget is not None:
            env.observe(budget)
        src = new_source()
        sink: Sink[Entity] = Sink("Sink", "Entity")
        for t in (10, 20, 30):
            env.schedule("ok", t, src, sink)
        env.schedule("empty", 15, FifoStock("Empty", "Entity"), sink)
        env.schedule("past", -5, src, sink)
        env.schedule("late", HALT, src, sink)
        return env, log

    def shape(log: MovementLog) -> list[tuple[object, ...]]:
        ran = [(m.occurs_at, m.seq, m.kind) for m in log.movements]
        return ran + [(i.movement.occurs_at, i.movement.kind, i.reason) for i in log.ignored]

    free, unbudgeted = build(None)
    free.run()
    # start, three moved, halt; one empty at its time, one in the past, one after the halt
    needed = free.movements_completed + free.movements_ignored
    assert needed == 5 + 3

    exact = MovementBudget(needed)
    env, log = build(exact)
    env.run()
    assert exact.used == needed
    assert shape(log) == shape(unbudgeted)

    short = MovementBudget(needed - 1)
    env, log = build(short)
    with pytest.raises(MovementBudgetExceeded, match=f"more than {needed - 1} movements, the last a 'running_to"):
        env.run()
    assert log.movements[-1].kind == "running_to_halted"  # the last movement ran, then the budget said so


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, None])
def test_a_budget_is_a_positive_whole_number_of_movements(limit: object) -> None:
    with pytest.raises(ValueError, match="a movement budget must be a positive integer"):
        MovementBudget(limit)  # type: ignore[arg-type]
