"""Priority CPU checked against hand-worked schedules and the priority-queueing formulas.

The schedules are worked out by hand in the comments; the statistics are compared with formulas
computed here from the reference (Cobham; preemptive-resume M/G/1; Erlang C with priorities),
not with anything the simulator produced.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from functools import cache, partial
from heapq import heappop, heappush

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.clock import Timer
from skenario.core.environment import Environment
from skenario.core.movement import IgnoredReason
from skenario.core.random import Constant, Distribution, Exponential, RandomStreams, sampler
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cpu.priority import PriorityCPU

MS = MILLISECOND

# A job as the tests describe it: (name, admitted at, work in ns, priority).
Job = tuple[str, int, int, int]


def schedule(
    jobs: list[Job],
    millicores: int = 1000,
    *,
    preemptive: bool,
    withdraw: tuple[tuple[str, int], ...] = (),
    halt: int = 10 * SECOND,
) -> tuple[dict[str, int], PriorityCPU[str], Environment]:
    """Run `jobs` (and withdrawals at given times) on a fresh CPU; return the finish times."""
    env = Environment(halt_at=halt)
    finished: dict[str, int] = {}
    cpu: PriorityCPU[str] = PriorityCPU(
        env, millicores, lambda job: finished.setdefault(job, env.now()), preemptive=preemptive
    )
    for name, at, work, priority in jobs:
        env.call_at(at, partial(cpu.admit, name, work, priority))
    for name, at in withdraw:
        env.call_at(at, partial(cpu.withdraw, name))
    env.run()
    return finished, cpu, env


# -- hand-worked schedules on one core ---------------------------------------------------------


def test_non_preemptive_a_high_arrival_waits_for_the_job_in_service_then_goes_first() -> None:
    # L1 (100 ms) from 1 ns; L2 (100 ms) at 10 ms; H (priority 1, 50 ms) at 20 ms.
    # L1 keeps the core to 100 ms + 1; H goes next although L2 came first: 150 ms + 1; L2: 250 ms + 1.
    jobs = [("L1", 1, 100 * MS, 0), ("L2", 10 * MS, 100 * MS, 0), ("H", 20 * MS, 50 * MS, 1)]
    finished, cpu, _ = schedule(jobs, preemptive=False)
    assert finished == {"L1": 100 * MS + 1, "H": 150 * MS + 1, "L2": 250 * MS + 1}
    assert cpu.busy_core_ns() == 250 * MS  # one core busy from 1 ns to 250 ms + 1 ns
    assert cpu.in_service == 0


def test_preemptive_a_high_arrival_interrupts_and_the_low_job_resumes_its_remaining_work() -> None:
    # L (100 ms) from 1 ns; H (priority 1, 30 ms) at 40 ms + 1: L has had 40 ms, 60 ms left.
    # H runs to 70 ms + 1; L resumes and needs 60 ms more: 130 ms + 1.
    finished, cpu, _ = schedule([("L", 1, 100 * MS, 0), ("H", 40 * MS + 1, 30 * MS, 1)], preemptive=True)
    assert finished == {"H": 70 * MS + 1, "L": 130 * MS + 1}
    assert cpu.busy_core_ns() == 130 * MS


def test_preemption_nests_across_three_priorities() -> None:
    # L (p0, 100 ms) from 1 ns; M (p1, 50 ms) at 10 ms + 1; H (p2, 20 ms) at 20 ms + 1.
    # L gets 10 ms (90 left); M gets 10 ms (40 left); H runs 20 -> 40 ms; M 40 -> 80 ms; L 80 -> 170 ms.
    jobs = [("L", 1, 100 * MS, 0), ("M", 10 * MS + 1, 50 * MS, 1), ("H", 20 * MS + 1, 20 * MS, 2)]
    finished, cpu, _ = schedule(jobs, preemptive=True)
    assert finished == {"H": 40 * MS + 1, "M": 80 * MS + 1, "L": 170 * MS + 1}
    assert cpu.busy_core_ns() == 170 * MS


def test_a_preempted_job_resumes_ahead_of_later_arrivals_of_its_priority() -> None:
    # L1 (100 ms) from 1 ns; H (p1, 50 ms) at 20 ms + 1 preempts it with 80 ms left; L2 (10 ms) at
    # 30 ms + 1 waits. When H ends at 70 ms + 1, L1 (admitted first) resumes: 150 ms + 1; L2: 160 ms + 1.
    jobs = [("L1", 1, 100 * MS, 0), ("H", 20 * MS + 1, 50 * MS, 1), ("L2", 30 * MS + 1, 10 * MS, 0)]
    finished, _, _ = schedule(jobs, preemptive=True)
    assert finished == {"H": 70 * MS + 1, "L1": 150 * MS + 1, "L2": 160 * MS + 1}


@pytest.mark.parametrize("preemptive", [False, True])
def test_one_priority_is_first_come_first_served(preemptive: bool) -> None:
    # A (300 ms) from 1 ns, B (100 ms) at 10 ms, C (50 ms) at 20 ms, all priority 0: one after another
    # in arrival order, whatever their lengths: 300, 400, 450 ms (+1). An equal priority never preempts.
    jobs = [("A", 1, 300 * MS, 0), ("B", 10 * MS, 100 * MS, 0), ("C", 20 * MS, 50 * MS, 0)]
    finished, cpu, _ = schedule(jobs, preemptive=preemptive)
    assert finished == {"A": 300 * MS + 1, "B": 400 * MS + 1, "C": 450 * MS + 1}
    assert cpu.busy_core_ns() == 450 * MS


def admit_noting_in_service(
    env: Environment, cpu: PriorityCPU[str], seen: list[int], at: int, name: str, work: int, priority: int
) -> None:
    """Admit at `at`, noting how many jobs the CPU held just before."""

    def admit() -> None:
        seen.append(cpu.in_service)
        cpu.admit(name, work, priority)

    env.call_at(at, admit)


def test_a_job_finishing_at_the_instant_a_higher_one_arrives_is_not_preempted() -> None:
    # L (100 ms) from 1 ns is due at 100 ms + 1; H (p1, 10 ms) is admitted at that very instant, before
    # L's wake-up runs (H's movement was scheduled first). L has no work left, so it finishes then and
    # H follows at once: 110 ms + 1. (Preempted, L would end after H, at 110 ms + 1.)
    env = Environment(halt_at=SECOND)
    finished: dict[str, int] = {}
    cpu: PriorityCPU[str] = PriorityCPU(env, 1000, lambda j: finished.setdefault(j, env.now()), preemptive=True)
    seen: list[int] = []
    admit_noting_in_service(env, cpu, seen, 1, "L", 100 * MS, 0)
    admit_noting_in_service(env, cpu, seen, 100 * MS + 1, "H", 10 * MS, 1)
    env.run()
    assert seen == [0, 1]  # L was still on the CPU when H came
    assert finished == {"L": 100 * MS + 1, "H": 110 * MS + 1}


def test_preemptions_put_off_at_a_finishing_instant_happen_when_it_finishes() -> None:
    # Two cores: A (100 ms) and B (300 ms), p0, from 1 ns. At 100 ms + 1, before A's wake-up, H1 and H2
    # (p1, 50 ms each) arrive: neither displaces anyone while A is finishing. When A's wake-up runs,
    # H1 takes A's core and H2 displaces B (200 ms left): both end at 150 ms + 1, B at 350 ms + 1.
    # (Had H2 waited for a free core, it would end at 200 ms + 1 and B at 300 ms + 1.)
    env = Environment(halt_at=SECOND)
    finished: dict[str, int] = {}
    cpu: PriorityCPU[str] = PriorityCPU(env, 2000, lambda j: finished.setdefault(j, env.now()), preemptive=True)
    seen: list[int] = []
    admit_noting_in_service(env, cpu, seen, 1, "A", 100 * MS, 0)
    admit_noting_in_service(env, cpu, seen, 1, "B", 300 * MS, 0)
    admit_noting_in_service(env, cpu, seen, 100 * MS + 1, "H1", 50 * MS, 1)
    admit_noting_in_service(env, cpu, seen, 100 * MS + 1, "H2", 50 * MS, 1)
    env.run()
    assert seen == [0, 1, 2, 3]  # A was still on the CPU when H1 and H2 came
    assert finished == {"A": 100 * MS + 1, "H1": 150 * MS + 1, "H2": 150 * MS + 1, "B": 350 * MS + 1}
    assert cpu.busy_core_ns() == 500 * MS  # the work: 100 + 300 + 50 + 50 ms


# -- several cores, and fractions of one -------------------------------------------------------


def test_two_cores_preemptive_displaces_the_lowest_priority_job() -> None:
    # Two cores: A (p0, 100 ms) and B (p1, 200 ms) from 1 ns; C (p2, 50 ms) at 10 ms + 1 takes A's core
    # (the lowest priority, though B came later); A has 90 ms left. C ends at 60 ms + 1, A resumes
    # and ends at 150 ms + 1; B never stopped: 200 ms + 1.
    jobs = [("A", 1, 100 * MS, 0), ("B", 1, 200 * MS, 1), ("C", 10 * MS + 1, 50 * MS, 2)]
    finished, cpu, _ = schedule(jobs, 2000, preemptive=True)
    assert finished == {"C": 60 * MS + 1, "A": 150 * MS + 1, "B": 200 * MS + 1}
    assert cpu.busy_core_ns() == 350 * MS  # the work: 100 + 200 + 50 ms


def test_two_cores_preemptive_displaces_the_latest_admitted_among_equals() -> None:
    # A (100 ms) and B (200 ms), both p0, from 1 ns; C (p1, 50 ms) at 10 ms + 1 displaces B (admitted
    # after A) with 190 ms left. C ends at 60 ms + 1 and B resumes: 250 ms + 1; A: 100 ms + 1.
    jobs = [("A", 1, 100 * MS, 0), ("B", 1, 200 * MS, 0), ("C", 10 * MS + 1, 50 * MS, 1)]
    finished, _, _ = schedule(jobs, 2000, preemptive=True)
    assert finished == {"C": 60 * MS + 1, "A": 100 * MS + 1, "B": 250 * MS + 1}


def test_two_cores_non_preemptive_the_high_job_takes_the_first_free_core() -> None:
    # Same jobs, non-preemptive: C waits for A's core at 100 ms + 1 and ends at 150 ms + 1.
    jobs = [("A", 1, 100 * MS, 0), ("B", 1, 200 * MS, 0), ("C", 10 * MS + 1, 50 * MS, 1)]
    finished, _, _ = schedule(jobs, 2000, preemptive=False)
    assert finished == {"A": 100 * MS + 1, "C": 150 * MS + 1, "B": 200 * MS + 1}


def test_half_a_core_serves_one_job_at_half_speed() -> None:
    # 500m: one slot at half speed. L (100 ms) from 1 ns has had 25 ms at 50 ms + 1 (75 ms left);
    # H (p1, 20 ms) needs 40 ms of time: 90 ms + 1; L then needs 150 ms of time: 240 ms + 1.
    finished, cpu, _ = schedule([("L", 1, 100 * MS, 0), ("H", 50 * MS + 1, 20 * MS, 1)], 500, preemptive=True)
    assert finished == {"H": 90 * MS + 1, "L": 240 * MS + 1}
    assert cpu.slots == 1
    assert cpu.busy_core_ns() == 120 * MS  # half a core for 240 ms: exactly the 120 ms of work


def test_one_and_a_half_cores_two_slots_share_them() -> None:
    # 1500m: two slots, each at 0.75 when both are taken. A (150 ms), B (300 ms), C (75 ms), all p0
    # from 1 ns: C waits. A ends at 200 ms + 1 (150 / 0.75) when B has had 150 ms; C takes the slot:
    # C needs 100 ms of time (300 ms + 1), B has 75 ms left then, alone at full speed: 375 ms + 1.
    jobs = [("A", 1, 150 * MS, 0), ("B", 1, 300 * MS, 0), ("C", 1, 75 * MS, 0)]
    finished, cpu, _ = schedule(jobs, 1500, preemptive=False)
    assert finished == {"A": 200 * MS + 1, "C": 300 * MS + 1, "B": 375 * MS + 1}
    assert cpu.slots == 2
    assert cpu.busy_core_ns() == 525 * MS  # 1.5 cores for 300 ms, then one for 75 ms: the work


def test_rate_is_per_served_job() -> None:
    env = Environment(halt_at=1)
    assert PriorityCPU(env, 1000, print, preemptive=False).rate(3) == 1.0  # one served at full speed
    assert PriorityCPU(env, 2000, print, preemptive=False).rate(3) == 1.0
    assert PriorityCPU(env, 1500, print, preemptive=False).rate(1) == 1.0
    assert PriorityCPU(env, 1500, print, preemptive=False).rate(3) == 0.75
    assert PriorityCPU(env, 500, print, preemptive=False).rate(2) == 0.5
    assert PriorityCPU(env, 500, print, preemptive=False).rate(0) == 0.0
    assert PriorityCPU(env, 2500, print, preemptive=True).slots == 3


# -- withdraw ----------------------------------------------------------------------------------


def test_withdrawing_a_waiting_job() -> None:
    # A (100 ms) served from 1 ns; B (100 ms) waits and is withdrawn at 50 ms; C (10 ms) at 60 ms goes
    # right after A: 110 ms + 1. B never finishes; the core was busy only for A and C.
    jobs = [("A", 1, 100 * MS, 0), ("B", 1, 100 * MS, 0), ("C", 60 * MS, 10 * MS, 0)]
    finished, cpu, _ = schedule(jobs, preemptive=False, withdraw=(("B", 50 * MS),))
    assert finished == {"A": 100 * MS + 1, "C": 110 * MS + 1}
    assert cpu.busy_core_ns() == 110 * MS
    assert cpu.in_service == 0


def test_withdrawing_the_served_job_hands_its_slot_to_the_best_waiter() -> None:
    # A (100 ms) served from 1 ns; B (p0, 50 ms) at 5 ms and C (p1, 50 ms) at 10 ms wait. A is withdrawn
    # at 30 ms + 1: C (higher) starts then and ends at 80 ms + 1, B at 130 ms + 1.
    jobs = [("A", 1, 100 * MS, 0), ("B", 5 * MS, 50 * MS, 0), ("C", 10 * MS, 50 * MS, 1)]
    finished, cpu, _ = schedule(jobs, preemptive=False, withdraw=(("A", 30 * MS + 1),))
    assert finished == {"C": 80 * MS + 1, "B": 130 * MS + 1}
    assert cpu.busy_core_ns() == 130 * MS  # 30 ms of A, then 50 + 50


def test_withdrawing_a_preempted_job() -> None:
    # L (100 ms) from 1 ns is preempted by H (p1, 50 ms) at 20 ms + 1 and withdrawn at 40 ms + 1 while
    # it waits: H still ends at 70 ms + 1, and then the CPU is idle.
    jobs = [("L", 1, 100 * MS, 0), ("H", 20 * MS + 1, 50 * MS, 1)]
    finished, cpu, _ = schedule(jobs, preemptive=True, withdraw=(("L", 40 * MS + 1),))
    assert finished == {"H": 70 * MS + 1}
    assert cpu.busy_core_ns() == 70 * MS
    assert cpu.in_service == 0


def test_withdrawing_the_job_on_half_a_core_then_reusing_it() -> None:
    # 500m: A (100 ms) from 1 ns is withdrawn at 40 ms + 1 (it had 20 ms); B (10 ms) at 500 ms runs at
    # half speed to 520 ms. Busy: half a core for 40 ms, then for 20 ms.
    jobs = [("A", 1, 100 * MS, 0), ("B", 500 * MS, 10 * MS, 0)]
    finished, cpu, _ = schedule(jobs, 500, preemptive=True, withdraw=(("A", 40 * MS + 1),))
    assert finished == {"B": 520 * MS}
    assert cpu.busy_core_ns() == 30 * MS


def test_many_withdrawn_waiters_leave_the_line_in_order() -> None:
    # One core: A (100 ms) from 1 ns, then 200 waiters of 1 ms each (priority j % 2) at 2 ns. All but
    # those with j % 8 in (0, 1) are withdrawn at 50 ms: 150 of 200, enough for the CPU to rebuild its
    # line once and keep some stale entries after. The 50 left run after A, 1 ms each: the 25 of
    # priority 1 (j % 8 == 1) first, then the 25 of priority 0 (j % 8 == 0), each in admission order.
    env = Environment(halt_at=SECOND)
    order: list[tuple[int, int]] = []
    cpu: PriorityCPU[int] = PriorityCPU(env, 1000, lambda j: order.append((j, env.now())), preemptive=False)
    env.call_at(1, partial(cpu.admit, -1, 100 * MS))
    for j in range(200):
        env.call_at(2, partial(cpu.admit, j, MS, j % 2))
    for j in range(200):
        if j % 8 > 1:
            env.call_at(50 * MS, partial(cpu.withdraw, j))
    env.run()
    kept = [j for j in range(200) if j % 8 == 1] + [j for j in range(200) if j % 8 == 0]
    expected = [(-1, 100 * MS + 1)] + [(j, 100 * MS + 1 + (i + 1) * MS) for i, j in enumerate(kept)]
    assert order == expected
    assert cpu.in_service == 0


def test_in_service_counts_waiting_preempted_and_served_jobs() -> None:
    env = Environment(halt_at=SECOND)
    cpu: PriorityCPU[str] = PriorityCPU(env, 1000, print, preemptive=True)
    seen: list[tuple[int, int]] = []
    env.call_at(1, lambda: cpu.admit("L", 100 * MS))
    env.call_at(2, lambda: cpu.admit("M", 100 * MS))
    env.call_at(3, lambda: cpu.admit("H", 100 * MS, 5))  # L preempted, M waiting, H served
    env.call_at(4, lambda: seen.append((cpu.in_service, cpu.serving)))
    env.call_at(5, lambda: cpu.withdraw("L"))
    env.call_at(6, lambda: seen.append((cpu.in_service, cpu.serving)))
    env.run(until=10)
    assert seen == [(3, 1), (2, 1)]


def test_misuse_is_refused() -> None:
    env = Environment(halt_at=SECOND)
    cpu: PriorityCPU[str] = PriorityCPU(env, 1000, print, preemptive=False)
    cpu.admit("A", MS)
    with pytest.raises(ValueError, match="already"):
        cpu.admit("A", MS)
    with pytest.raises(KeyError):
        cpu.withdraw("B")
    cpu.withdraw("A")
    with pytest.raises(KeyError):
        cpu.withdraw("A")
    with pytest.raises(ValueError, match="millicores"):
        PriorityCPU(env, 0, print, preemptive=False)


def test_a_done_call_may_withdraw_a_job_finishing_at_the_same_instant() -> None:
    # Two cores, A and B (10 ms each) from 1 ns finish together; A's done call withdraws B, whose done
    # call must then not come.
    env = Environment(halt_at=SECOND)
    finished: list[str] = []

    def done(job: str) -> None:
        finished.append(job)
        if job == "A":
            cpu.withdraw("B")

    cpu: PriorityCPU[str] = PriorityCPU(env, 2000, done, preemptive=False)
    env.call_at(1, lambda: cpu.admit("A", 10 * MS))
    env.call_at(1, lambda: cpu.admit("B", 10 * MS))
    env.run()
    assert finished == ["A"]
    assert cpu.in_service == 0


# -- wake-ups ----------------------------------------------------------------------------------


def test_no_wake_up_is_scheduled_at_or_after_the_halt() -> None:
    # The run halts at 50 ms; A needs 100 ms, so its finish would be ignored as after the halt.
    finished, cpu, env = schedule([("A", 1, 100 * MS, 0), ("H", 10 * MS, 5 * MS, 1)], preemptive=True, halt=50 * MS)
    assert finished == {"H": 15 * MS}
    assert env.ignored_counts[IgnoredReason.SCHEDULED_AFTER_HALT] == 0
    assert cpu.busy_core_ns() == 50 * MS - 1  # read at the halt: busy since 1 ns
    assert cpu.in_service == 1


def test_a_job_admitted_before_the_run_starts() -> None:
    env = Environment(halt_at=SECOND)
    finished: dict[str, int] = {}
    cpu: PriorityCPU[str] = PriorityCPU(env, 1000, lambda j: finished.setdefault(j, env.now()), preemptive=True)
    cpu.admit("A", 10 * MS)
    cpu.admit("Z", 0, 1)  # no work, at time 0: it cannot finish at 0 (the start's instant), so at 1 ns
    env.run()
    assert finished == {"Z": 1, "A": 10 * MS + 1}
    assert env.movements_ignored == 0


class ManualClock:
    """A Clock that is not an Environment: the CPU then wakes up with timers."""

    def __init__(self) -> None:
        self.time = 0
        self._timers: list[tuple[int, int, Timer]] = []
        self._ids = 0

    def now(self) -> int:
        return self.time

    def call_at(self, at: int, fn: Callable[[], object]) -> Timer:
        timer = Timer(self._ids, fn)
        heappush(self._timers, (max(at, self.time), self._ids, timer))
        self._ids += 1
        return timer

    def call_later(self, delay: int, fn: Callable[[], object]) -> Timer:
        return self.call_at(self.time + delay, fn)

    def run(self) -> None:
        while self._timers:
            at, _, timer = heappop(self._timers)
            self.time = at
            timer.fire()


def test_on_any_other_clock_it_uses_timers_and_keeps_the_same_schedule() -> None:
    jobs = [("L1", 1, 100 * MS, 0), ("H", 20 * MS + 1, 50 * MS, 1), ("L2", 30 * MS + 1, 10 * MS, 0)]
    clock = ManualClock()
    finished: dict[str, int] = {}
    cpu: PriorityCPU[str] = PriorityCPU(clock, 1000, lambda j: finished.setdefault(j, clock.now()), preemptive=True)
    for name, at, work, priority in jobs:
        clock.call_at(at, partial(cpu.admit, name, work, priority))
    clock.run()
    assert finished == {"H": 70 * MS + 1, "L1": 150 * MS + 1, "L2": 160 * MS + 1}
    assert cpu.busy_core_ns() == 160 * MS


# -- properties --------------------------------------------------------------------------------

job_lists = st.lists(
    st.tuples(st.integers(1, 10**6), st.integers(0, 10**6), st.integers(0, 3)), min_size=1, max_size=20
)


def run_jobs(
    jobs: list[tuple[int, int, int]], millicores: int, preemptive: bool, peeks: Sequence[int] = ()
) -> tuple[dict[int, int], float]:
    env = Environment(halt_at=10**12)
    finished: dict[int, int] = {}
    cpu: PriorityCPU[int] = PriorityCPU(
        env, millicores, lambda j: finished.setdefault(j, env.now()), preemptive=preemptive
    )
    for j, (at, work, priority) in enumerate(jobs):
        env.call_at(at, partial(cpu.admit, j, work, priority))
    for at in peeks:
        env.call_at(at, cpu.busy_core_ns)  # what a metrics tick or a recorder does
    env.run()
    assert cpu.in_service == 0
    return finished, cpu.busy_core_ns()


@settings(max_examples=80, deadline=None)
@given(
    jobs=job_lists,
    millicores=st.sampled_from([500, 1000, 1500, 2000]),
    preemptive=st.booleans(),
    peeks=st.lists(st.integers(1, 5 * 10**6), max_size=4),
)
def test_work_is_conserved_no_job_is_early_and_reading_changes_nothing(
    jobs: list[tuple[int, int, int]], millicores: int, preemptive: bool, peeks: list[int]
) -> None:
    """Every job finishes, none before admission + work (at most one core each), and busy core-time
    is the total work (every CPU-ns a job received was a core-ns in use). Reading the busy integral
    mid-run does not move any finish time."""
    finished, busy = run_jobs(jobs, millicores, preemptive)
    assert set(finished) == set(range(len(jobs)))
    for j, (at, work, _) in enumerate(jobs):
        assert finished[j] >= at + work
    total = sum(work for _, work, _ in jobs)
    # Each finish is rounded up to a whole ns, so the integral may exceed the work by at most one ns
    # of every core per completion.
    assert total - 1e-6 * len(jobs) <= busy <= total + len(jobs) * max(1.0, millicores / 1000)
    assert run_jobs(jobs, millicores, preemptive, peeks)[0] == finished


@settings(max_examples=80, deadline=None)
@given(jobs=job_lists)
def test_non_preemptive_priorities_conserve_the_work_weighted_wait_exactly(jobs: list[tuple[int, int, int]]) -> None:
    """Kleinrock's conservation law on one sample path: on one core the unfinished work V(t) is the
    same for every work-conserving order, and without preemption the work waiting in line is V(t)
    minus the residual of the job in service, whose integral is work²/2 per job whatever the order.
    So Σ work × wait (the integral of the work in line) is the same as under FCFS, to the ns.
    """
    fcfs = [(at, work, 0) for at, work, _ in jobs]

    def weighted_wait(jobs: list[tuple[int, int, int]]) -> int:
        finished, _ = run_jobs(jobs, 1000, preemptive=False)
        return sum(work * (finished[j] - at - work) for j, (at, work, _) in enumerate(jobs))

    assert weighted_wait(jobs) == weighted_wait(fcfs)


@settings(max_examples=80, deadline=None)
@given(jobs=job_lists)
def test_non_preemptive_one_core_starts_the_best_waiting_job(jobs: list[tuple[int, int, int]]) -> None:
    """On one core without preemption job j runs from finish − work to finish. Whenever j starts, no
    job k that was already waiting (admitted before j started, started after) outranks it: higher
    priority, or equal priority and admitted earlier (movements at one instant run in the order
    they were scheduled, so admission order is the index order among equal times)."""
    finished, _ = run_jobs(jobs, 1000, preemptive=False)
    start = {j: finished[j] - work for j, (_, work, _) in enumerate(jobs)}
    admitted = {j: (at, j) for j, (at, _, _) in enumerate(jobs)}  # call_at order breaks ties
    for j, (_, _, pj) in enumerate(jobs):
        for k, (ak, _, pk) in enumerate(jobs):
            if ak < start[j] < start[k]:
                assert pk < pj or (pk == pj and admitted[k] > admitted[j]), (j, k)


# -- statistics --------------------------------------------------------------------------------
#
# Each case is 8 seeded replications, Poisson arrivals per class until `duration`, then the CPU
# drains, so every measured job finishes (no censoring). Jobs arriving in the first 5% are not
# measured (start-up transient). The tolerance is 4 standard errors of the replication means (the
# replications are independent: a ~99.5% band for a correct model, Student t with 7 degrees of
# freedom), plus 1% of the expected value for the remaining start-up bias. The seeds are fixed, so
# the verdict is the same on every run. Runs are cached: some tests share them.

Class = tuple[float, Distribution, int]  # arrival rate per second, work in ns, priority

REPLICATIONS = 8


@cache
def run_classes(
    classes: tuple[Class, ...], millicores: int, preemptive: bool, seed: int, duration: int
) -> tuple[float, ...]:
    """Mean response time in seconds of each class."""
    streams = RandomStreams(seed)
    env = Environment(halt_at=4 * duration)
    warmup = duration // 20
    responses: list[list[int]] = [[] for _ in classes]
    arrived: dict[int, tuple[int, int]] = {}
    cpu: PriorityCPU[int] = PriorityCPU(env, millicores, lambda job: record(job), preemptive=preemptive)

    def record(job: int) -> None:
        if job in arrived:
            k, at = arrived.pop(job)
            responses[k].append(env.now() - at)

    count = 0

    def arrivals(k: int, lam: float, dist: Distribution, priority: int) -> Callable[[], None]:
        gap = sampler(Exponential(SECOND / lam), streams.generator(f"arrivals-{k}"))
        work = sampler(dist, streams.generator(f"work-{k}"))

        def arrive() -> None:
            nonlocal count
            now = env.now()
            if now >= warmup:
                arrived[count] = (k, now)
            cpu.admit(count, work(), priority)
            count += 1
            at = now + gap()
            if at < duration:
                env.call_at(at, arrive)

        env.call_at(gap(), arrive)
        return arrive

    for k, (lam, dist, priority) in enumerate(classes):
        arrivals(k, lam, dist, priority)
    env.run()
    assert not arrived and cpu.in_service == 0  # drained: every measured job finished
    return tuple(statistics.mean(r) / SECOND for r in responses)


def replicate(classes: tuple[Class, ...], millicores: int, preemptive: bool, duration: int) -> list[tuple[float, ...]]:
    return [run_classes(classes, millicores, preemptive, seed, duration) for seed in range(REPLICATIONS)]


def check(values: list[float], expected: float) -> None:
    mean = statistics.mean(values)
    stderr = statistics.stdev(values) / math.sqrt(len(values))
    assert abs(mean - expected) < 4 * stderr + 0.01 * expected, (mean, stderr, expected)


# Two classes on one core, S = 1 s exponential: class 1 (high, priority 1) λ = 0.3/s, class 2 λ = 0.4/s.
S = 1.0
LAM = (0.3, 0.4)
TWO_CLASSES: tuple[Class, ...] = ((LAM[0], Exponential(S * SECOND), 1), (LAM[1], Exponential(S * SECOND), 0))
MM1_DURATION = 40_000 * SECOND  # ~28 000 jobs per replication


def test_mm1_preemptive_resume_two_classes() -> None:
    # T_k = S/(1 − σ_{k−1}) + [Σ_{i≤k} λ_i E[S²]/2] / ((1 − σ_{k−1})(1 − σ_k)), with E[S²] = 2S².
    es2 = 2 * S**2
    s1, s2 = LAM[0] * S, (LAM[0] + LAM[1]) * S
    t1 = S + LAM[0] * es2 / 2 / (1 - s1)
    t2 = S / (1 - s1) + (LAM[0] + LAM[1]) * es2 / 2 / ((1 - s1) * (1 - s2))
    assert (round(t1, 4), round(t2, 4)) == (1.4286, 4.7619)
    runs = replicate(TWO_CLASSES, 1000, True, MM1_DURATION)
    check([r[0] for r in runs], t1)
    check([r[1] for r in runs], t2)


def cobham_two_classes() -> tuple[float, float, float]:
    """W0 and the waits W_1, W_2 of non-preemptive priority M/M/1 (Cobham)."""
    w0 = (LAM[0] + LAM[1]) * 2 * S**2 / 2  # Σ λ_i E[S_i²] / 2
    s1, s2 = LAM[0] * S, (LAM[0] + LAM[1]) * S
    return w0, w0 / (1 - s1), w0 / ((1 - s1) * (1 - s2))


def test_mm1_non_preemptive_two_classes_match_cobham() -> None:
    _, w1, w2 = cobham_two_classes()
    assert (round(w1, 4), round(w2, 4)) == (1.0, 3.3333)
    runs = replicate(TWO_CLASSES, 1000, False, MM1_DURATION)
    check([r[0] for r in runs], S + w1)
    check([r[1] for r in runs], S + w2)


def test_non_preemptive_priority_conserves_the_fcfs_total_wait() -> None:
    # Kleinrock's conservation law: Σ ρ_k W_k = ρ W0 / (1 − ρ), the FCFS total (the M/G/1 P-K wait
    # times ρ). Each replication's Σ ρ_k W_k is compared, with the measured waits (T_k − S).
    w0, _, _ = cobham_two_classes()
    rho = (LAM[0] + LAM[1]) * S
    fcfs = rho * w0 / (1 - rho)
    assert round(fcfs, 4) == 1.6333
    runs = replicate(TWO_CLASSES, 1000, False, MM1_DURATION)
    check([LAM[0] * S * (t1 - S) + LAM[1] * S * (t2 - S) for t1, t2 in runs], fcfs)


def test_single_class_fcfs_md1_matches_pollaczek_khinchine() -> None:
    # M/D/1, S = 1 s fixed, λ = 0.7/s: W = λ E[S²] / (2(1 − ρ)) = 0.7 / 0.6; T = S + W.
    lam, s = 0.7, 1.0
    expected = s + lam * s**2 / (2 * (1 - lam * s))
    runs = replicate(((lam, Constant(s * SECOND), 0),), 1000, False, 20_000 * SECOND)
    check([r[0] for r in runs], expected)


def erlang_c(c: int, a: float) -> float:
    """Erlang C by the Erlang B recursion, as in the reference (PDQ's ErlangR)."""
    b = 1.0
    for m in range(1, c + 1):
        b = b * a / (m + a * b)
    rho = a / c
    return b / (1 - rho + rho * b)


def mmc_response(c: int, lam: float, s: float) -> float:
    """Mean response of an M/M/c FCFS queue."""
    a = lam * s
    return s + erlang_c(c, a) * s / (c * (1 - a / c))


# M/M/2 with two classes of equal μ: S = 1 s, λ = (0.6, 0.8)/s (high first), ρ = 0.7.
LAM2 = (0.6, 0.8)
MM2_CLASSES: tuple[Class, ...] = ((LAM2[0], Exponential(SECOND), 1), (LAM2[1], Exponential(SECOND), 0))
MM2_DURATION = 20_000 * SECOND


def test_mm2_non_preemptive_priority_matches_cobham_for_c_servers() -> None:
    # W_k = C(c, a) / (c μ (1 − σ_{k−1})(1 − σ_k)), σ_k = Σ_{i≤k} λ_i / (c μ), a = Σ λ_i / μ.
    c, mu = 2, 1.0
    cc = erlang_c(c, sum(LAM2) / mu)
    s1, s2 = LAM2[0] / (c * mu), sum(LAM2) / (c * mu)
    w1 = cc / (c * mu * (1 - s1))
    w2 = cc / (c * mu * (1 - s1) * (1 - s2))
    runs = replicate(MM2_CLASSES, 2000, False, MM2_DURATION)
    check([r[0] for r in runs], 1 / mu + w1)
    check([r[1] for r in runs], 1 / mu + w2)


def test_mm2_preemptive_resume_matches_the_mmc_differences() -> None:
    # Classes 1..k never see lower ones: they form an M/M/c FCFS queue with rate Λ_k, so
    # N_k = L(Λ_k) − L(Λ_{k−1}) with L(Λ) = Λ T_{M/M/c}(Λ), and T_k = N_k / λ_k.
    c, s = 2, 1.0
    big1, big2 = LAM2[0], sum(LAM2)
    t1 = mmc_response(c, big1, s)
    t2 = (big2 * mmc_response(c, big2, s) - big1 * t1) / LAM2[1]
    runs = replicate(MM2_CLASSES, 2000, True, MM2_DURATION)
    check([r[0] for r in runs], t1)
    check([r[1] for r in runs], t2)
