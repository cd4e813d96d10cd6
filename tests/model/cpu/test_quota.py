"""CFS quota per period, checked on timelines worked out by hand from the kernel's rule.

The rule (CFS bandwidth control): in each period the pod may use `limit x period` of CPU time,
on as many cores as its threads want; once spent, it stalls until the period ends.
"""

from __future__ import annotations

import pytest

from skenario.core.environment import Environment
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cpu.quota import CfsQuota
from skenario.model.cpu.sharing import ProcessorSharingCPU
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

MS = MILLISECOND


def quota_pod(limit: int, node: int = 4000) -> tuple[Environment, ProcessorSharingCPU[str], CfsQuota, list]:
    env = Environment(halt_at=10 * SECOND)
    done: list[tuple[str, int]] = []
    cpu: ProcessorSharingCPU[str] = ProcessorSharingCPU(env, limit, lambda job: done.append((job, env.now())))
    quota = CfsQuota(env, cpu, limit, node)
    return env, cpu, quota, done


def test_four_threads_under_400m_run_10ms_then_stall_90ms() -> None:
    # Quota 40 ms of CPU per 100 ms; 4 requests on 4 idle cores spend it in 10 ms. Each gets 10 ms
    # of CPU per period: 100 ms each takes 10 periods, the last running 900-910 ms.
    env, cpu, quota, done = quota_pod(400)
    env.call_at(1, lambda: [cpu.admit(f"r{i}", 100 * MS) for i in range(4)])
    env.run()
    assert sorted(t for _, t in done) == [910 * MS] * 4
    assert (quota.periods, quota.throttled_periods) == (10, 9)  # the last one ends its work at the quota


def test_a_short_burst_runs_at_a_full_core_within_its_quota() -> None:
    # 30 ms of CPU under a 500m limit: the quota (50 ms) is never spent, so it takes 30 ms, not 60.
    env, cpu, quota, done = quota_pod(500)
    env.call_at(1, lambda: cpu.admit("r", 30 * MS))
    env.run()
    assert done == [("r", 1 + 30 * MS)]
    assert quota.throttled_periods == 0


def test_a_long_request_stalls_at_the_end_of_each_quota() -> None:
    # 120 ms of CPU under 500m: 50 ms (stall to 100 ms), 50 ms (stall to 200 ms), then the last 20 ms.
    env, cpu, quota, done = quota_pod(500)
    env.call_at(1, lambda: cpu.admit("r", 120 * MS))
    env.run()
    assert done == [("r", 220 * MS)]
    assert (quota.periods, quota.throttled_periods) == (3, 2)
    assert cpu.busy_core_ns() == pytest.approx(120 * MS)


def test_usage_never_exceeds_the_quota_in_any_period() -> None:
    env, cpu, _, done = quota_pod(300)
    samples: list[float] = []
    for k in range(1, 20):
        env.call_at(k * 100 * MS, lambda: samples.append(cpu.busy_core_ns()))
    env.call_at(1, lambda: [cpu.admit(f"r{i}", 150 * MS) for i in range(6)])
    env.call_at(450 * MS, lambda: cpu.admit("late", 40 * MS))
    env.run()
    per_period = [b - a for a, b in zip([0.0, *samples], samples, strict=False)]
    assert max(per_period) <= 30 * MS * (1 + 1e-9)
    assert len(done) == 7


def test_a_scenario_with_the_quota_does_the_same_work_as_with_the_smooth_cap() -> None:
    """Same arrivals, no timeouts, a stable pod: every request completes either way and the CPU
    does exactly their work, so completions and busy CPU agree; only when they run differs."""
    text = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: quota}
spec:
  duration: 2m
  seed: 4
  workload:
    replicas: 1
    resources: {requests: {cpu: 500m}, limits: {cpu: 500m}}
    request: {cpuTime: {distribution: exponential, mean: 20ms}, timeout: null}
    cfsQuotaPeriod: 100ms
  traffic: {type: poisson, rate: 10/s, stop: 110s}
"""
    runs = []
    for scenario in (text, text.replace("    cfsQuotaPeriod: 100ms\n", "")):
        simulation = Simulation(parse_scenario(scenario))
        simulation.run()
        runs.append((simulation.summary(), simulation.model.busy_core_ns()))
    (quota, quota_busy), (smooth, smooth_busy) = runs
    assert quota.requests_completed == smooth.requests_completed == quota.requests_arrived
    assert quota_busy == pytest.approx(smooth_busy, rel=1e-9)
