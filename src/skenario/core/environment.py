"""The Environment: the schedule of movements, the current time, the halt time and the loop.

Mirrors the Go Skenario `Environment` (seeds 000/002) with one change: ties are ordered by
`(occurs_at, insertion sequence)` instead of shifting collisions by 1 ns, so same-time
movements run in the order they were scheduled and a movement may be scheduled for `now`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any, Protocol

from mypy_extensions import mypyc_attr

from skenario.core.clock import Timer
from skenario.core.entity import Entity
from skenario.core.movement import IgnoredMovement, IgnoredReason, Movement
from skenario.core.stocks import KeyedStock, Sink, SinkStock, Source, SourceStock
from skenario.core.time import format_duration

# A scheduled movement is one plain tuple laid out like `Movement` (core/movement.py), so the hot
# path allocates nothing else; these name its positions. The loops bind the ones they read to
# locals, which is as fast as indexing by a literal: benchmarks/mmc.py, 95 interleaved rounds,
# 1.005x the literal-index time (an A/A control gives 1.002x). Unpacking the tuple into names
# instead cost 1.6% there, and a module-level index is slower too (LOAD_GLOBAL per read).
_AT, _SEQ, _KIND, _FROM, _TO, _WHAT, _NOTE = range(len(Movement._fields))

_EMPTY = IgnoredReason.FROM_STOCK_EMPTY
_PAST = IgnoredReason.SCHEDULED_IN_PAST
_AFTER_HALT = IgnoredReason.SCHEDULED_AFTER_HALT


class MovementObserver(Protocol):
    """Watches the loop. Recording hooks in here rather than living inside the loop."""

    def on_movement(self, movement: Movement, entity: Any) -> None: ...

    def on_ignored(self, ignored: IgnoredMovement) -> None: ...


class ScenarioEntity(Entity):
    """The token the start and halt movements carry."""

    __slots__ = ()
    kind = "Scenario"


class _Pause(Exception):
    """Raised by a pause sentinel to leave the loop between two movements."""


class _Switch(Exception):
    """Raised by a switch sentinel: an observer arrived mid-run, change to the observed loop."""


class _TimerStock:
    """Timers move from here to here; arriving is firing. Keeps `call_at` inside the model."""

    __slots__ = ()
    name = "Timers"
    kind_stocked = "Timer"

    def remove(self, entity: Timer | None = None) -> Timer | None:
        return entity

    def add(self, entity: Timer) -> None:
        entity.fire()

    def count(self) -> int:
        return 0


class _SentinelStock:
    """Where sentinels go; they never arrive, they raise to leave the loop instead."""

    __slots__ = ("_signal", "name")
    kind_stocked = "Scenario"

    def __init__(self, name: str, signal: type[Exception]) -> None:
        self.name = name
        self._signal = signal

    def remove(self, entity: Entity | None = None) -> Entity | None:
        return entity

    def add(self, entity: Entity) -> None:
        raise self._signal

    def count(self) -> int:
        return 0


# Sequence numbers order movements of one instant: pause and switch sentinels first (counting
# down from _SENTINELS), then calls made with `call_first_at` (counting up from _FIRSTS), then
# every other movement in scheduling order (counting up from 0).
_SENTINELS = -(2**62)
_FIRSTS = -(2**61)


class _RunningStock(KeyedStock[ScenarioEntity]):
    """Holds the scenario entity between start and halt; tells the Environment it is live."""

    __slots__ = ("_env",)

    def __init__(self, env: Environment) -> None:
        super().__init__("Running", "Scenario")
        self._env = env

    def add(self, entity: ScenarioEntity) -> None:
        super().add(entity)
        self._env._live = True

    def remove(self, entity: ScenarioEntity | None = None) -> ScenarioEntity | None:
        self._env._live = False
        return super().remove(entity)


@mypyc_attr(allow_interpreted_subclasses=True)
class MovementLog:
    """Opt-in observer that keeps every movement (and every ignored one) in order."""

    def __init__(self) -> None:
        self.movements: list[Movement] = []
        self.ignored: list[IgnoredMovement] = []

    def on_movement(self, movement: Movement, entity: Any) -> None:
        self.movements.append(movement)

    def on_ignored(self, ignored: IgnoredMovement) -> None:
        self.ignored.append(ignored)


@mypyc_attr(native_class=False)
class MovementBudgetExceeded(RuntimeError):
    """A run went past its `MovementBudget`: a runaway or a livelock, stopped where it was."""


@mypyc_attr(allow_interpreted_subclasses=True)
class MovementBudget:
    """Opt-in observer that stops a run with `MovementBudgetExceeded` once it has gone through more
    than `limit` movements (each one run, and each one ignored).

    A hang in a model (a timer that re-arms itself at the same instant forever, a loop that never
    lets time reach the halt) then fails at the same movement on any machine, however slow or
    busy, where a wall-clock limit would depend on the machine. `env.observe(MovementBudget(n))`
    turns it on; an Environment without it runs its unobserved loop, which counts nothing. The
    budget stays spent: a later `run` raises again at its first movement.
    """

    __slots__ = ("limit", "used")

    def __init__(self, limit: object) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"a movement budget must be a positive integer, got {limit!r}")
        self.limit = limit
        self.used = 0

    def on_movement(self, movement: Movement, entity: Any) -> None:
        self._spend(movement)

    def on_ignored(self, ignored: IgnoredMovement) -> None:
        self._spend(ignored.movement)

    def _spend(self, movement: Movement) -> None:
        self.used += 1
        if self.used > self.limit:
            raise MovementBudgetExceeded(
                f"more than {self.limit:,} movements, the last a '{movement.kind}' movement "
                f"at {format_duration(movement.occurs_at)} of simulated time"
            )


class Environment:
    """Simulated time, the movement schedule and the run loop. Implements `Clock`.

    Only the start movement occurs at 0 and only the halt movement at `halt_at`; any other
    movement must fall in `(0, halt_at)` and not before now, else it is ignored with a reason.
    """

    __slots__ = (
        "_heap",
        "_live",
        "_ready",
        "_now",
        "_halt_at",
        "_seq",
        "_urgent",
        "_firsts",
        "_pending_pauses",
        "_observers",
        "_keep_ignored",
        "_timers",
        "_pause_stock",
        "_running",
        "_settled",
        "_settling",
        "_switch_stock",
        "_timer_ids",
        "ignored",
        "ignored_counts",
        "scenario",
        "before_start",
        "running",
        "halted",
    )

    def __init__(self, halt_at: object, *, keep_ignored: int = 10_000) -> None:
        if not isinstance(halt_at, int) or halt_at <= 0:
            raise ValueError(f"halt_at must be a positive integer of nanoseconds, got {halt_at!r}")
        self._heap: list[tuple[Any, ...]] = []
        # Movements for the current instant skip the heap: they queue here in scheduling order.
        self._ready: deque[tuple[Any, ...]] = deque()
        self._live = False
        self._now = 0
        self._halt_at = halt_at
        self._urgent = _SENTINELS
        self._firsts = _FIRSTS
        self._pending_pauses = 0
        self._observers: list[MovementObserver] = []
        self._keep_ignored = keep_ignored
        self._timers = _TimerStock()
        self._pause_stock = _SentinelStock("Pause", _Pause)
        self._switch_stock = _SentinelStock("Switch", _Switch)
        self._running = False
        self._settled: list[tuple[int, int, Callable[[], object]]] = []
        self._settling = False
        self._timer_ids = 0
        self.ignored: list[IgnoredMovement] = []
        self.ignored_counts: dict[IgnoredReason, int] = dict.fromkeys(IgnoredReason, 0)
        self.scenario = ScenarioEntity(0)
        self.before_start: Source[ScenarioEntity] = Source("BeforeStart", "Scenario")
        self.running: KeyedStock[ScenarioEntity] = _RunningStock(self)
        self.halted: Sink[ScenarioEntity] = Sink("Halted", "Scenario")
        heap = self._heap
        heap.append((0, 0, "start_to_running", self.before_start, self.running, self.scenario, None))
        heap.append((halt_at, 1, "running_to_halted", self.running, self.halted, self.scenario, None))
        self._seq = 2

    # -- the Clock interface -------------------------------------------------------------------

    def now(self) -> int:
        return self._now

    def call_at(self, at: int, fn: Callable[[], object]) -> Timer:
        """Call `fn` at simulated time `at`, as a `call` movement.

        As on every Clock, a time already past means as soon as possible: now, or 1 ns before
        the run starts (0 belongs to the start movement). At or after the halt it is ignored.
        """
        timer = Timer(self._timer_ids, fn)
        self._timer_ids += 1
        self.schedule("call", max(at, self._now, 1), self._timers, self._timers, timer)
        return timer

    def call_later(self, delay: int, fn: Callable[[], object]) -> Timer:
        return self.call_at(self._now + delay, fn)

    def call_first_at(self, at: int, fn: Callable[[], object]) -> Timer:
        """Call `fn` at `at` ahead of every other movement of that instant (calls made this way keep
        their own order): a scenario's events at an instant apply before the model moves in it, so
        when an event was added, mid-run or in the file, does not change what it does.

        A time in the past is refused (ValueError), and so is the current instant while movements
        run (some of that instant's have); between runs, nothing of the current instant has run yet.
        """
        at = max(at, 1)
        if at < self._now or (at == self._now and self._running):
            raise ValueError(f"cannot call first at {at} ns: the run is at {self._now} ns")
        if at >= self._halt_at:
            raise ValueError(f"cannot call first at {at} ns: the run halts at {self._halt_at} ns")
        timer = Timer(self._timer_ids, fn)
        self._timer_ids += 1
        self._seq += 1  # counted like any movement
        self._firsts += 1
        heappush(self._heap, (at, self._firsts, "call", self._timers, self._timers, timer, None))
        return timer

    def call_when_settled(self, fn: Callable[[], object], order: int = 0) -> None:
        """Call `fn` once every other movement of the current instant has run, including those
        scheduled for this instant meanwhile (KEP-140's "after the step's operations" rule).

        Callbacks waiting together run by `order`, then first come first served; one that schedules
        more for the instant lets that run before the next callback.
        """
        heappush(self._settled, (order, self._seq, fn))
        self._seq += 1  # counted like a movement, to keep the order of equal callbacks
        if not self._settling:
            self._settling = True
            self.call_at(self._now, self._settle)

    def _settle(self) -> None:
        heap = self._heap
        settled = self._settled
        while settled:
            if self._ready or (heap and heap[0][_AT] == self._now):
                self.call_at(self._now, self._settle)  # wait behind what is still due now
                return
            _, _, fn = heappop(settled)
            fn()
        self._settling = False

    # -- scheduling ----------------------------------------------------------------------------

    @property
    def halt_at(self) -> int:
        return self._halt_at

    @property
    def is_halted(self) -> bool:
        return self.halted.count() > 0

    def schedule(
        self,
        kind: str,
        occurs_at: int,
        from_stock: SourceStock[Any],
        to_stock: SinkStock[Any],
        what: Any = None,  # an entity, or a token its stock knows (an arrival's stream, a wake-up's number)
        note: str | None = None,
    ) -> bool:
        """Add a movement to the schedule. Returns False (and records why) if it is ignored."""
        now = self._now
        if occurs_at > now:
            if occurs_at < self._halt_at:
                seq = self._seq
                self._seq = seq + 1
                heappush(self._heap, (occurs_at, seq, kind, from_stock, to_stock, what, note))
                return True
        elif occurs_at == now and now and self._live:
            seq = self._seq
            self._seq = seq + 1
            self._ready.append((occurs_at, seq, kind, from_stock, to_stock, what, note))
            return True
        reason = _AFTER_HALT if occurs_at >= self._halt_at else _PAST
        self._ignore(Movement(occurs_at, -1, kind, from_stock, to_stock, what, note), reason)
        return False

    def observe(self, observer: MovementObserver) -> None:
        """Attach an observer; it sees every later movement and ignored movement."""
        self._observers.append(observer)
        if self._running and len(self._observers) == 1:
            # The fast loop is running: leave it right after this movement for the observed one.
            self._push_sentinel(self._now, self._switch_stock, "switch")

    def pause_soon(self) -> None:
        """Make the running loop return after the movement it is in (safe from a signal handler:
        between two bytecodes the schedule is whole). A later `run` resumes."""
        self._push_sentinel(self._now, self._pause_stock, "pause")

    def _push_sentinel(self, at: int, stock: _SentinelStock, kind: str) -> None:
        # The most negative sequences put a sentinel ahead of everything else at its time.
        self._urgent -= 1
        self._pending_pauses += 1
        heappush(self._heap, (at, self._urgent, kind, stock, stock, self.scenario, None))

    # -- running -------------------------------------------------------------------------------

    def run(self, until: int | None = None) -> None:
        """Run movements in order until the halt, or until every movement before `until` ran.

        After `run(until=t)` returns, `now() == min(t, halt_at)` and the halt movement has not
        run unless `t > halt_at`; another call resumes the run.
        """
        if until is not None:
            if until < self._now:
                raise ValueError(f"cannot run until {until}: the time is already {self._now}")
            if until <= self._halt_at:
                self._push_sentinel(until, self._pause_stock, "pause")
        self._running = True
        try:
            while True:
                try:
                    if self._observers:
                        self._loop_observed()
                    else:
                        self._loop()
                    return
                except _Switch:
                    self._pending_pauses -= 1
                except _Pause:
                    self._pending_pauses -= 1
                    return
        finally:
            self._running = False
            if self._pending_pauses:
                self._drop_sentinels()

    # Both loops take the next movement in (occurs_at, seq) order from two places: the heap, and
    # `ready` for movements scheduled at the current instant. Heap entries due now were scheduled
    # before the clock reached now, so they go first; time only advances once `ready` is empty.

    def _loop(self) -> None:
        heap = self._heap
        ready = self._ready
        pop = heappop
        popleft = ready.popleft
        AT, FROM, TO, WHAT = _AT, _FROM, _TO, _WHAT
        while True:
            if ready:
                entry = pop(heap) if heap and heap[0][AT] == self._now else popleft()
            elif heap:
                entry = pop(heap)
                self._now = entry[AT]
            else:
                return
            entity = entry[FROM].remove(entry[WHAT])
            if entity is None:
                self._ignore(Movement._make(entry), _EMPTY)
            else:
                entry[TO].add(entity)

    def _loop_observed(self) -> None:
        heap = self._heap
        ready = self._ready
        pop = heappop
        popleft = ready.popleft
        make = Movement._make
        observers = self._observers
        AT, FROM, TO, WHAT = _AT, _FROM, _TO, _WHAT
        while True:
            if ready:
                entry = pop(heap) if heap and heap[0][AT] == self._now else popleft()
            elif heap:
                entry = pop(heap)
                self._now = entry[AT]
            else:
                return
            entity = entry[FROM].remove(entry[WHAT])
            if entity is None:
                self._ignore(make(entry), _EMPTY)
            else:
                entry[TO].add(entity)
                movement = make(entry)
                for observer in observers:
                    observer.on_movement(movement, entity)

    def _drop_sentinels(self) -> None:
        """Remove sentinels left over when a run ended before reaching them."""
        self._heap = [entry for entry in self._heap if entry[_SEQ] > _SENTINELS]
        heapify(self._heap)
        self._pending_pauses = 0

    def _ignore(self, movement: Movement, reason: IgnoredReason) -> None:
        self.ignored_counts[reason] += 1
        ignored = IgnoredMovement(movement, reason)
        if len(self.ignored) < self._keep_ignored:
            self.ignored.append(ignored)
        for observer in self._observers:
            observer.on_ignored(ignored)

    # -- accounting ----------------------------------------------------------------------------

    @property
    def pending(self) -> int:
        """Movements scheduled and not yet run."""
        return len(self._heap) + len(self._ready) - self._pending_pauses

    @property
    def movements_completed(self) -> int:
        """Movements that ran and moved an entity (start and halt included)."""
        return self._seq - self.pending - self.ignored_counts[_EMPTY]

    @property
    def movements_ignored(self) -> int:
        return sum(self.ignored_counts.values())
