"""Processor-sharing CPU checked against queueing theory and exact hand-worked schedules."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.environment import Environment
from skenario.core.random import Constant, Distribution, Exponential, RandomStreams, sampler
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cpu.sharing import ProcessorSharingCPU


def test_two_jobs_share_one_core_and_the_survivor_speeds_up() -> None:
    # Worked by hand: A needs 100 ms from t=0, B needs 50 ms from t=20 ms, one core.
    # 0-20 ms: A alone gets 20 ms. 20 ms on: both at half speed; B needs 50 ms -> 100 ms of time,
    # A has 80 ms left -> would need 160 ms; B finishes first at 120 ms, when A has had 20+50 = 70 ms.
    # Then A alone: 30 ms more -> finishes at 150 ms. (Frozen shares would end A at 180 ms.)
    env = Environment(halt_at=SECOND)
    finished: dict[str, int] = {}
    cpu: ProcessorSharingCPU[str] = ProcessorSharingCPU(env, 1000, lambda job: finished.setdefault(job, env.now()))
    env.call_at(1, lambda: cpu.admit("A", 100 * MILLISECOND))
    env.call_at(20 * MILLISECOND + 1, lambda: cpu.admit("B", 50 * MILLISECOND))
    env.run()
    assert finished == {"B": 120 * MILLISECOND + 1, "A": 150 * MILLISECOND + 1}
    assert cpu.busy_core_ns() == 150 * MILLISECOND  # one core busy from 1 ns to 150 ms + 1 ns


def test_a_short_newcomer_finishes_before_the_pending_timer() -> None:
    # A needs 1 s from t=1ns; B needs 1 ms at 10 ms and must finish at 10 + 2 ms (half speed),
    # not when A's timer was set for.
    env = Environment(halt_at=10 * SECOND)
    finished: dict[str, int] = {}
    cpu: ProcessorSharingCPU[str] = ProcessorSharingCPU(env, 1000, lambda job: finished.setdefault(job, env.now()))
    env.call_at(1, lambda: cpu.admit("A", SECOND))
    env.call_at(10 * MILLISECOND, lambda: cpu.admit("B", MILLISECOND))
    env.run()
    assert finished["B"] == 12 * MILLISECOND
    assert finished["A"] == SECOND + 1 + MILLISECOND  # A lost exactly B's 1 ms of CPU


def test_one_job_never_uses_more_than_one_core() -> None:
    env = Environment(halt_at=SECOND)
    finished: list[int] = []
    cpu: ProcessorSharingCPU[str] = ProcessorSharingCPU(env, 4000, lambda job: finished.append(env.now()))
    env.call_at(1, lambda: cpu.admit("A", 100 * MILLISECOND))
    env.run()
    assert finished == [100 * MILLISECOND + 1]


def run_queue(dist: Distribution, lam: float, millicores: int, seed: int, duration: int) -> float:
    """Poisson arrivals into the CPU; returns the mean response time in seconds."""
    streams = RandomStreams(seed)
    env = Environment(halt_at=duration)
    gap = sampler(Exponential(SECOND / lam), streams.generator("arrivals"))
    work = sampler(dist, streams.generator("work"))
    arrived: dict[int, int] = {}
    responses: list[int] = []
    cpu: ProcessorSharingCPU[int] = ProcessorSharingCPU(
        env, millicores, lambda job: responses.append(env.now() - arrived.pop(job))
    )
    count = 0

    def arrive() -> None:
        nonlocal count
        arrived[count] = env.now()
        cpu.admit(count, work())
        count += 1
        env.call_later(gap(), arrive)

    env.call_at(gap(), arrive)
    env.run()
    return statistics.mean(responses) / SECOND


def replicate(dist: Distribution, lam: float, millicores: int, seeds: int = 8) -> tuple[float, float]:
    means = [run_queue(dist, lam, millicores, seed, 2000 * SECOND) for seed in range(seeds)]
    return statistics.mean(means), statistics.stdev(means) / math.sqrt(seeds)


def test_mm1_ps_mean_response_is_s_over_one_minus_rho() -> None:
    s, lam = 0.1, 6.0  # rho = 0.6; E[T] = S / (1 - rho) = 0.25 s
    mean, stderr = replicate(Exponential(s * SECOND), lam, 1000)
    assert abs(mean - s / (1 - s * lam)) < 4 * stderr + 0.01 * 0.25, (mean, stderr)


def test_ps_is_insensitive_to_the_work_distribution() -> None:
    # M/G/1-PS has the same mean response as M/M/1-PS: deterministic work, same S/(1 - rho).
    s, lam = 0.1, 6.0
    mean, stderr = replicate(Constant(s * SECOND), lam, 1000)
    assert abs(mean - s / (1 - s * lam)) < 4 * stderr + 0.01 * 0.25, (mean, stderr)


def test_two_cores_match_erlang_c() -> None:
    # With exponential work, n jobs on 2 cores (each at most 1) complete at rate min(n, 2)/S:
    # the M/M/2 birth-death chain, so the mean response is Erlang C's W.
    s, lam, c = 0.1, 14.0, 2  # offered load a = 1.4, rho = 0.7
    a = lam * s
    top = a**c / math.factorial(c) * c / (c - a)
    p_wait = top / (sum(a**k / math.factorial(k) for k in range(c)) + top)
    expected = p_wait / (c / s - lam) + s
    mean, stderr = replicate(Exponential(s * SECOND), lam, 2000)
    assert abs(mean - expected) < 4 * stderr + 0.01 * expected, (mean, stderr, expected)


@settings(max_examples=60, deadline=None)
@given(
    jobs=st.lists(st.tuples(st.integers(1, 10**9), st.integers(0, 10**9)), min_size=1, max_size=25),
    millicores=st.sampled_from([250, 1000, 1500, 4000]),
)
def test_no_job_finishes_before_its_work_and_the_core_integral_is_exact(
    jobs: list[tuple[int, int]], millicores: int
) -> None:
    """Each job finishes no earlier than admission + work, and busy core-time equals total work.

    A job gets at most one core, so it cannot beat its own work. Work is conserved: every CPU-ns
    a job received was a core-ns in use, so the busy integral equals the sum of the work.
    """
    env = Environment(halt_at=10**12)
    admitted: dict[int, tuple[int, int]] = {}
    finished: dict[int, int] = {}
    cpu: ProcessorSharingCPU[int] = ProcessorSharingCPU(env, millicores, lambda j: finished.setdefault(j, env.now()))
    for j, (at, work) in enumerate(jobs):

        def admit(j: int = j, work: int = work) -> None:
            admitted[j] = (env.now(), work)
            cpu.admit(j, work)

        env.call_at(at, admit)
    env.run()
    assert set(finished) == set(range(len(jobs)))
    for j, (at, work) in admitted.items():
        assert finished[j] >= at + work
    total_work = sum(work for _, work in jobs)
    # Each completion time is rounded up to a whole ns, so the integral may exceed the work by
    # less than one ns of every core per completion.
    assert total_work <= cpu.busy_core_ns() + 1e-6 * len(jobs)
    assert cpu.busy_core_ns() <= total_work + len(jobs) * max(1.0, millicores / 1000) + 1e-6


# -- withdraw: taking a job out before it finishes ---------------------------------------------


def make_cpu(millicores: int, halt: int = 10 * SECOND) -> tuple[Environment, ProcessorSharingCPU[str], dict[str, int]]:
    env = Environment(halt_at=halt)
    finished: dict[str, int] = {}
    cpu: ProcessorSharingCPU[str] = ProcessorSharingCPU(
        env, millicores, lambda job: finished.setdefault(job, env.now())
    )
    return env, cpu, finished


def assert_at(actual: int, expected: int) -> None:
    """Never early; at most 1 ns late (a wake-up delay is a float rounded up to whole ns)."""
    assert expected <= actual <= expected + 1, (actual, expected)


def test_withdrawing_one_of_three_speeds_up_the_other_two() -> None:
    # One core; A, B, C each need 300 ms from 1 ns: a third of the core each. At 150 ms + 1 ns
    # each has had 50 ms; C is withdrawn, A and B go to half speed with 250 ms left: 500 ms more.
    # (Without the withdrawal all three would end at 900 ms + 1 ns.)
    env, cpu, finished = make_cpu(1000)
    for job in "ABC":
        env.call_at(1, lambda job=job: cpu.admit(job, 300 * MILLISECOND))
    env.call_at(150 * MILLISECOND + 1, lambda: cpu.withdraw("C"))
    env.run()
    assert set(finished) == {"A", "B"}
    assert_at(finished["A"], 650 * MILLISECOND + 1)
    assert_at(finished["B"], 650 * MILLISECOND + 1)
    # Busy all along, 650 ms of core time; C's 50 ms is in it, the work A and B did not need is not.
    assert cpu.busy_core_ns() == pytest.approx(650 * MILLISECOND, abs=2)
    assert cpu.in_service == 0


def test_withdrawing_the_job_the_wake_up_was_for() -> None:
    # One core; A needs 100 ms and B 300 ms from 1 ns, so the wake-up is set for A at 200 ms + 1.
    # A is withdrawn at 50 ms + 1 ns (each has had 25 ms): B alone needs 275 ms more.
    env, cpu, finished = make_cpu(1000)
    env.call_at(1, lambda: cpu.admit("A", 100 * MILLISECOND))
    env.call_at(1, lambda: cpu.admit("B", 300 * MILLISECOND))
    env.call_at(50 * MILLISECOND + 1, lambda: cpu.withdraw("A"))
    env.run()
    assert finished == {"B": 325 * MILLISECOND + 1}
    assert cpu.busy_core_ns() == pytest.approx(325 * MILLISECOND)


def test_withdrawing_with_spare_cores_changes_nobody_s_speed() -> None:
    # Two cores, two jobs: each runs at full speed, before and after the other leaves.
    env, cpu, finished = make_cpu(2000)
    env.call_at(1, lambda: cpu.admit("A", 100 * MILLISECOND))
    env.call_at(1, lambda: cpu.admit("B", 300 * MILLISECOND))
    env.call_at(50 * MILLISECOND + 1, lambda: cpu.withdraw("A"))
    env.run()
    assert finished == {"B": 300 * MILLISECOND + 1}
    assert cpu.busy_core_ns() == pytest.approx(50 * MILLISECOND + 300 * MILLISECOND)


def test_withdrawing_one_of_three_on_two_cores() -> None:
    # Two cores, three jobs of 300 ms from 1 ns: 2/3 of a core each. At 150 ms + 1 ns each has had
    # 100 ms; C leaves, A and B get a core each and need 200 ms more.
    env, cpu, finished = make_cpu(2000)
    for job in "ABC":
        env.call_at(1, lambda job=job: cpu.admit(job, 300 * MILLISECOND))
    env.call_at(150 * MILLISECOND + 1, lambda: cpu.withdraw("C"))
    env.run()
    assert set(finished) == {"A", "B"}
    assert_at(finished["A"], 350 * MILLISECOND + 1)
    assert_at(finished["B"], 350 * MILLISECOND + 1)


def test_withdrawing_everyone_leaves_the_cpu_idle_and_reusable() -> None:
    env, cpu, finished = make_cpu(1000)
    env.call_at(1, lambda: cpu.admit("A", 100 * MILLISECOND))
    env.call_at(10 * MILLISECOND, lambda: cpu.withdraw("A"))
    env.call_at(500 * MILLISECOND, lambda: cpu.admit("B", 100 * MILLISECOND))
    env.run()
    assert finished == {"B": 600 * MILLISECOND}
    assert cpu.busy_core_ns() == pytest.approx(10 * MILLISECOND - 1 + 100 * MILLISECOND)
    assert cpu.in_service == 0


# -- two cores ---------------------------------------------------------------------------------


def test_two_cores_two_jobs_each_finishes_at_its_own_work() -> None:
    env, cpu, finished = make_cpu(2000)
    env.call_at(1, lambda: cpu.admit("A", 100 * MILLISECOND))
    env.call_at(1, lambda: cpu.admit("B", 250 * MILLISECOND))
    env.run()
    assert finished == {"A": 100 * MILLISECOND + 1, "B": 250 * MILLISECOND + 1}


def test_two_cores_three_jobs_share_at_two_thirds() -> None:
    assert ProcessorSharingCPU(Environment(halt_at=1), 2000, print).rate(3) == pytest.approx(2 / 3)
    # Equal jobs of 200 ms: at 2/3 speed they all end at 300 ms + 1 ns.
    env, cpu, finished = make_cpu(2000)
    for job in "ABC":
        env.call_at(1, lambda job=job: cpu.admit(job, 200 * MILLISECOND))
    env.run()
    for job in "ABC":
        assert_at(finished[job], 300 * MILLISECOND + 1)
    # Unequal jobs of 100, 200 and 300 ms: at 2/3 speed A ends at 150 ms (each has had 100 ms);
    # then B and C have a core each: B ends at 250 ms, C runs alone to 350 ms.
    env, cpu, finished = make_cpu(2000)
    for job, work in (("A", 100), ("B", 200), ("C", 300)):
        env.call_at(1, lambda job=job, work=work: cpu.admit(job, work * MILLISECOND))
    env.run()
    assert_at(finished["A"], 150 * MILLISECOND + 1)
    assert_at(finished["B"], 250 * MILLISECOND + 1)
    assert_at(finished["C"], 350 * MILLISECOND + 1)
    # Busy core time is the work done: 2 x 150 + 2 x 100 + 1 x 100 = 600 ms.
    assert cpu.busy_core_ns() == pytest.approx(600 * MILLISECOND, abs=3)


# -- reading the CPU does not move it ----------------------------------------------------------


def finish_times(jobs: list[tuple[int, int]], peeks: list[int], millicores: int) -> dict[int, int]:
    env = Environment(halt_at=10**12)
    finished: dict[int, int] = {}
    cpu: ProcessorSharingCPU[int] = ProcessorSharingCPU(env, millicores, lambda j: finished.setdefault(j, env.now()))
    for j, (at, work) in enumerate(jobs):
        env.call_at(at, lambda j=j, work=work: cpu.admit(j, work))
    for at in peeks:
        env.call_at(at, cpu.busy_core_ns)  # what a metrics tick or a recorder does
    env.run()
    return finished


def test_reading_busy_core_ns_does_not_change_when_jobs_finish() -> None:
    # Three overlapping jobs on one core; someone reads the busy integral once at 1010787 ns.
    jobs = [(813441, 646870), (882829, 691764), (719983, 734431)]
    assert finish_times(jobs, [1010787], 1000) == finish_times(jobs, [], 1000)


@settings(max_examples=100, deadline=None)
@given(
    jobs=st.lists(st.tuples(st.integers(1, 10**6), st.integers(1, 10**6)), min_size=1, max_size=8),
    peeks=st.lists(st.integers(1, 5 * 10**6), max_size=5),
    millicores=st.sampled_from([250, 1000, 1500, 2000]),
)
def test_observing_the_cpu_never_changes_the_schedule(
    jobs: list[tuple[int, int]], peeks: list[int], millicores: int
) -> None:
    assert finish_times(jobs, peeks, millicores) == finish_times(jobs, [], millicores)
