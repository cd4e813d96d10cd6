"""A node's cores shared among its pods as CFS shares them: hand-computed cases and the invariants.

The hand cases follow CFS's rules as the kubelet configures them (shares = 1024 per core of
request, a limit caps a pod, idle CPU goes to whoever wants it); the invariants hold for every
weighted max-min fair allocation.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skenario.core.environment import Environment
from skenario.core.time import MILLISECOND, SECOND
from skenario.model.cpu.node import (
    MIN_SHARES,
    NodeCPU,
    QoSClass,
    WeightRule,
    cpu_weight,
    fair_shares,
    implicit_node_millicores,
    milli_cpu_to_shares,
    pod_capacity,
    qos_class,
)
from skenario.model.cpu.sharing import ProcessorSharingCPU

# --- the kubelet's conversions (pkg/kubelet/cm/helpers_linux.go MilliCPUToShares) ------------------


@pytest.mark.parametrize(
    ("millicores", "shares"),
    [(0, 2), (1, 2), (2, 2), (100, 102), (250, 256), (1000, 1024), (4000, 4096), (10**6, 262144)],
)
def test_requests_become_cpu_shares_as_the_kubelet_sets_them(millicores: int, shares: int) -> None:
    # floor(m * 1024 / 1000), at least MinShares = 2, at most MaxShares = 262144
    assert milli_cpu_to_shares(millicores) == shares


def test_a_pod_always_fits_its_implicit_node_and_a_limit_caps_it() -> None:
    assert implicit_node_millicores(100) == 4000
    assert implicit_node_millicores(6000) == 6000
    assert pod_capacity(None, 4000) == 4000  # no limit: the whole idle node
    assert pod_capacity(250, 4000) == 250  # the CFS quota
    assert pod_capacity(8000, 4000) == 4000  # a limit above the node buys nothing


# --- fair_shares: hand-computed -------------------------------------------------------------------


def test_requests_1_2_5_all_saturated_on_4_cores() -> None:
    # One level theta: 1024t + 2048t + 5120t = 4 cores -> t = 4/8192: 0.5, 1.0 and 2.5 cores.
    shares = fair_shares([4, 4, 4], [1024, 2048, 5120], 4)
    assert shares == pytest.approx([0.5, 1.0, 2.5])


def test_a_pod_wanting_less_than_its_share_leaves_the_rest_to_the_others() -> None:
    # C (weight 5) wants 1 core < its 2.5: it gets 1; A and B split the other 3 as 1:2.
    shares = fair_shares([4, 4, 1], [1024, 2048, 5120], 4)
    assert shares == pytest.approx([1.0, 2.0, 1.0])


def test_every_demand_fits_and_nothing_is_throttled() -> None:
    # 4 pods of request 100m, 0.25 core of work each on an idle 8-core node (the first case).
    assert fair_shares([0.25] * 4, [milli_cpu_to_shares(100)] * 4, 8) == [0.25] * 4


def test_an_overcommitted_node_serves_no_more_than_its_cores() -> None:
    # 4 pods of 250m request / 1000m limit on 1 core, each wanting its limit: equal weights, 0.25 each.
    assert fair_shares([1, 1, 1, 1], [256] * 4, 1) == pytest.approx([0.25] * 4)


def test_two_levels_of_water() -> None:
    # Demands 0.2, 3, 3 with equal weights on 2 cores: the first is satisfied, the rest split 1.8.
    assert fair_shares([0.2, 3, 3], [1, 1, 1], 2) == pytest.approx([0.2, 0.9, 0.9])


demands_weights = st.integers(1, 12).flatmap(
    lambda n: st.tuples(
        st.lists(st.floats(0, 16, allow_nan=False), min_size=n, max_size=n),
        st.lists(st.integers(MIN_SHARES, 8192), min_size=n, max_size=n),
        st.floats(0.1, 64, allow_nan=False),
    )
)


@given(demands_weights)
def test_fair_shares_invariants(case: tuple[list[float], list[int], float]) -> None:
    demands, weights, cores = case
    shares = fair_shares(demands, weights, cores)
    tolerance = 1e-9 * max(1.0, cores)
    # Never more than asked, never below zero, never more than the node's cores.
    assert all(-tolerance <= s <= d + tolerance for s, d in zip(shares, demands, strict=True))
    assert sum(shares) <= cores + tolerance
    # Work-conserving: idle CPU is left only when every demand is met.
    if sum(demands) > cores:
        assert sum(shares) == pytest.approx(cores)
    # Max-min fair by weight: a pod held below its demand has the highest share per weight.
    for share, demand, weight in zip(shares, demands, weights, strict=True):
        if share < demand - tolerance:
            assert all(s / w <= share / weight + 1e-9 for s, w in zip(shares, weights, strict=True))


# --- NodeCPU: pods' processor-sharing CPUs on one node ----------------------------------------------


def _pod(env: Environment, done: list[tuple[str, int]], name: str) -> ProcessorSharingCPU[str]:
    return ProcessorSharingCPU(env, 4000, lambda job: done.append((job, env.now())), name=name)


def on_one_node(
    millicores: int, pods: list[tuple[int, int | None]]
) -> tuple[Environment, list[tuple[str, int]], list[ProcessorSharingCPU[str]]]:
    """Pods of (request, limit) sharing one node of `millicores`; `done` collects (job, finish time)."""
    env = Environment(halt_at=10 * SECOND)
    done: list[tuple[str, int]] = []
    node = NodeCPU(millicores)
    cpus = [_pod(env, done, f"pod-{i}") for i in range(len(pods))]
    for cpu, (request, limit) in zip(cpus, pods, strict=True):
        node.attach(cpu, request=request, limit=limit)
        cpu.share(node)
    return env, done, cpus


def test_two_pods_on_one_core_hand_timeline() -> None:
    """Requests 1:3 on a 1-core node, one request each needing 300 ms of CPU.

    Both run from 0: A gets 0.25 core, B 0.75. B's 300 ms is done at 400 ms (A has had 100 ms).
    Then A alone gets the whole core: its last 200 ms take 200 ms, so it finishes at 600 ms.
    """
    env, done, (a, b) = on_one_node(1000, [(250, None), (750, None)])
    env.call_at(1, lambda: (a.admit("a", 300 * MILLISECOND), b.admit("b", 300 * MILLISECOND)))
    env.run()
    assert done == [("b", 1 + 400 * MILLISECOND), ("a", 1 + 600 * MILLISECOND)]
    # The node delivered exactly 1 core while both ran and while A ran alone: 600 ms of core time.
    assert a.busy_core_ns() + b.busy_core_ns() == pytest.approx(600 * MILLISECOND)


def test_a_limit_caps_a_pod_even_on_an_idle_node() -> None:
    """A pod limited to 500m on an idle 4-core node: a 100 ms request takes 200 ms."""
    env = Environment(halt_at=10 * SECOND)
    done: list[tuple[str, int]] = []
    node = NodeCPU(4000)
    pod = _pod(env, done, "p")
    node.attach(pod, request=100, limit=500)
    pod.share(node)
    env.call_at(1, lambda: pod.admit("r", 100 * MILLISECOND))
    env.run()
    assert done == [("r", 1 + 200 * MILLISECOND)]


def test_a_pod_without_a_limit_uses_idle_cores() -> None:
    """Request 100m, no limit, 4 requests of 1 s each on an idle 4-core node: all done at 1 s, not 40 s."""
    env = Environment(halt_at=100 * SECOND)
    done: list[tuple[str, int]] = []
    node = NodeCPU(4000)
    pod = _pod(env, done, "p")
    node.attach(pod, request=100, limit=None)
    pod.share(node)
    env.call_at(1, lambda: [pod.admit(f"r{i}", SECOND) for i in range(4)])
    env.run()
    assert [t for _, t in done] == [1 + SECOND] * 4


def test_a_pod_speeds_up_when_its_neighbour_goes_idle_mid_request() -> None:
    """Equal requests on 1 core; A needs 100 ms, B 500 ms, both from 0.

    Each gets 0.5 core until A finishes at 200 ms (B has had 100 ms); B's last 400 ms then run
    at a full core: B finishes at 600 ms. A late wake-up would finish B later; an early one is harmless.
    """
    env, done, (a, b) = on_one_node(1000, [(500, None), (500, None)])
    env.call_at(1, lambda: (b.admit("b", 500 * MILLISECOND), a.admit("a", 100 * MILLISECOND)))
    env.run()
    assert done == [("a", 1 + 200 * MILLISECOND), ("b", 1 + 600 * MILLISECOND)]


def test_withdrawing_a_request_gives_its_share_back() -> None:
    """Equal pods on 1 core, 1 s of work each; A's request is withdrawn at 200 ms (a timeout).

    Until then each had 0.5 core, so B has 900 ms left at a full core: it finishes at 1.1 s.
    """
    env, done, (a, b) = on_one_node(1000, [(500, None), (500, None)])
    env.call_at(1, lambda: (a.admit("a", SECOND), b.admit("b", SECOND)))
    env.call_at(1 + 200 * MILLISECOND, lambda: a.withdraw("a"))
    env.run()
    assert done == [("b", 1 + 1100 * MILLISECOND)]


pods_and_jobs = st.integers(1, 5).flatmap(
    lambda pods: st.tuples(
        st.lists(st.tuples(st.integers(0, 2000), st.none() | st.integers(100, 3000)), min_size=pods, max_size=pods),
        st.lists(
            st.tuples(st.integers(0, pods - 1), st.integers(1, 2000), st.integers(1, 500)), min_size=1, max_size=25
        ),
        st.integers(500, 4000),
    )
)


@given(pods_and_jobs)
def test_a_node_over_time_never_delivers_more_than_its_cores_and_leaves_no_wanted_core_idle(
    case: tuple[list[tuple[int, int | None]], list[tuple[int, int, int]], int],
) -> None:
    """Random pods (request, limit) and jobs (pod, start ms, CPU ms) on a node of random size.

    At every instant something happens the pods' capacities must be a fair share: none above its
    limit, their sum (of what is in use) not above the node, and no core idle while a pod below its
    limit has more requests than cores. At the end every job has had exactly its work.
    """
    specs, jobs, node_millicores = case
    env = Environment(halt_at=10**15)
    done: list[tuple[str, int]] = []
    node = NodeCPU(node_millicores)
    cpus = []
    for index, (request, limit) in enumerate(specs):
        cpu = _pod(env, done, f"pod-{index}")
        node.attach(cpu, request=request, limit=limit)
        cpu.share(node)
        cpus.append((cpu, limit))
    problems: list[str] = []

    def check() -> None:
        in_use = [min(float(cpu.in_service), cpu.cores) for cpu, _ in cpus]
        if sum(in_use) > node.cores * (1 + 1e-9):
            problems.append(f"{env.now()}: {sum(in_use)} cores in use on {node.cores}")
        for (cpu, limit), use in zip(cpus, in_use, strict=True):
            if limit is not None and use > limit / 1000 * (1 + 1e-9):
                problems.append(f"{env.now()}: {cpu.name} above its limit")
        hungry = any(
            cpu.in_service > cpu.cores + 1e-9 and (limit is None or cpu.cores < limit / 1000 - 1e-9)
            for cpu, limit in cpus
        )
        if hungry and sum(in_use) < node.cores * (1 - 1e-9):
            problems.append(f"{env.now()}: a pod wants more while {node.cores - sum(in_use)} cores idle")

    for number, (pod, start, work) in enumerate(jobs):
        cpu = cpus[pod][0]
        env.call_at(1 + start * MILLISECOND, lambda cpu=cpu, n=number, w=work: cpu.admit(f"job-{n}", w * MILLISECOND))
        env.call_at(1 + start * MILLISECOND, check)
        env.call_at(2 + start * MILLISECOND, check)
    for tick in range(1, 200):  # and on a grid, between the events
        env.call_at(tick * 37 * MILLISECOND, check)
    env.run(until=10**13)
    assert problems == []
    assert len(done) == len(jobs)
    total_work = sum(work for _, _, work in jobs) * MILLISECOND
    assert sum(cpu.busy_core_ns() for cpu, _ in cpus) == pytest.approx(total_work, rel=1e-6)


# --- cgroup v2 weights and QoS classes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("millicores", "linear", "curve"),
    # The reference's worked values (runc's ConvertCPUSharesToCgroupV2Value, old and new rules).
    [
        (0, 1, 1),
        (100, 4, 17),
        (250, None, 35),
        (500, None, 59),
        (1000, None, 100),
        (2000, None, 174),
        (4000, None, 303),
    ],
)
def test_cgroup_v2_weights_as_runc_converts_shares(millicores: int, linear: int | None, curve: int) -> None:
    if linear is not None:
        assert cpu_weight(millicores, WeightRule.CGROUP_V2_LINEAR) == linear
    assert cpu_weight(millicores, WeightRule.CGROUP_V2) == curve
    assert cpu_weight(millicores) == milli_cpu_to_shares(millicores)


def test_the_v2_curve_meets_the_ends_of_the_range() -> None:
    assert cpu_weight(10**6, WeightRule.CGROUP_V2) == 10000  # 262144 shares and above
    assert cpu_weight(10**6, WeightRule.CGROUP_V2_LINEAR) == 10000


def test_under_the_v2_curve_twice_the_request_is_not_twice_the_cpu() -> None:
    # 1000m and 2000m, both saturated on 1 core: weights 100 and 174, so 100/274 and 174/274 of it.
    shares = fair_shares([1, 1], [cpu_weight(1000, WeightRule.CGROUP_V2), cpu_weight(2000, WeightRule.CGROUP_V2)], 1)
    assert shares == pytest.approx([100 / 274, 174 / 274])


@pytest.mark.parametrize(
    ("cpu_request", "cpu_limit", "memory_request", "memory_limit", "expected"),
    [
        (None, None, None, None, QoSClass.BEST_EFFORT),
        (500, 500, 2**30, 2**30, QoSClass.GUARANTEED),
        (None, 500, None, 2**30, QoSClass.GUARANTEED),  # requests default to limits
        (500, None, None, None, QoSClass.BURSTABLE),
        (250, 500, 2**30, 2**30, QoSClass.BURSTABLE),
        (500, 500, 2**30, None, QoSClass.BURSTABLE),  # no memory limit
    ],
)
def test_qos_class_follows_requests_and_limits(
    cpu_request: int | None,
    cpu_limit: int | None,
    memory_request: int | None,
    memory_limit: int | None,
    expected: QoSClass,
) -> None:
    assert qos_class(cpu_request, cpu_limit, memory_request, memory_limit) is expected


MI = 2**20

# TestComputePodQOS (pkg/apis/core/v1/helper/qos/qos_test.go), its one-container cases, as data:
# (name, requests (cpu millicores, memory bytes), limits, expected). None is a quantity left out; an
# explicit "0" is 0, which ComputePodQOS skips as it skips absent ones.
UPSTREAM_QOS_CASES = [
    ("guaranteed", (100, 100 * MI), (100, 100 * MI), QoSClass.GUARANTEED),
    ("best-effort", (None, None), (None, None), QoSClass.BEST_EFFORT),
    ("burstable-cpu-guaranteed-memory", (None, 100 * MI), (None, 100 * MI), QoSClass.BURSTABLE),
    ("burstable-no-limits", (100, 100 * MI), (None, None), QoSClass.BURSTABLE),
    ("burstable-1", (10, 100 * MI), (100, 200 * MI), QoSClass.BURSTABLE),
    ("burstable-2", (0, 0), (100, 200 * MI), QoSClass.BURSTABLE),
    ("best-effort-hugepages", (0, 0), (0, 0), QoSClass.BEST_EFFORT),  # hugepages do not count
]


@pytest.mark.parametrize(
    ("name", "requests", "limits", "expected"), UPSTREAM_QOS_CASES, ids=[c[0] for c in UPSTREAM_QOS_CASES]
)
def test_qos_class_restates_upstreams_compute_pod_qos_cases(
    name: str, requests: tuple[int | None, int | None], limits: tuple[int | None, int | None], expected: QoSClass
) -> None:
    (cpu_request, memory_request), (cpu_limit, memory_limit) = requests, limits
    assert qos_class(cpu_request, cpu_limit, memory_request, memory_limit) is expected
