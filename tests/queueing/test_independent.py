"""The closed-network solvers against computations written here, independent of the solver.

Every expected value comes from a method the solver does not use:

- a continuous-time Markov chain of the network, built state by state and solved with numpy;
- the product form summed over every state (Gordon-Newell / BCMP normalising constant);
- Buzen's convolution and a birth-death chain, both in log space;
- the Bard-Schweitzer equations, checked at the fixed point rather than iterated.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.queueing import Centre, CentreKind, Demand, Network, Scheduling, WorkloadClass, solve
from skenario.queueing.loaddependent import single_class_load_dependent
from skenario.queueing.mva import exact_mva, schweitzer_mva

REL = 1e-9
SETTINGS = settings(max_examples=30, deadline=None)


# ------------------------------------------------------------------ independent machinery


def compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every tuple of `parts` non-negative integers summing to `total`."""
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in compositions(total - first, parts - 1):
            yield (first, *rest)


@dataclass(frozen=True)
class Station:
    """One station of the chain: `service[c]` is class c's mean service per visit (0: it skips it).

    kind "is" is an infinite server (the terminals, a delay centre): class c leaves at n_c / S_c.
    kind "queue" shares min(n, servers) servers among its n jobs in proportion (processor
    sharing): class c leaves at min(n, m) (n_c / n) / S_c. With one class that is the M/M/m
    FCFS rate min(n, m) / S.
    """

    kind: str
    service: tuple[float, ...]
    servers: int = 1


ChainState = tuple[tuple[int, ...], ...]  # per class, its jobs at every station


def closed_ctmc(
    stations: Sequence[Station], populations: Sequence[int]
) -> tuple[list[ChainState], np.ndarray, list[np.ndarray]]:
    """Stationary distribution of a closed network where class c cycles through its stations in order.

    A state is, per class, the number of its jobs at every station. Returns the states, pi, and
    for each class the rate at which it completes its first station in each state (its cycle
    throughput when weighted by pi).
    """
    classes = len(populations)
    routes = [[k for k, s in enumerate(stations) if s.service[c] > 0] for c in range(classes)]
    per_class = []
    for c, route in enumerate(routes):
        options = []
        for counts in compositions(populations[c], len(route)):
            full = [0] * len(stations)
            for k, n in zip(route, counts, strict=True):
                full[k] = n
            options.append(tuple(full))
        per_class.append(options)
    states: list[ChainState] = [()]
    for options in per_class:
        states = [(*s, o) for s in states for o in options]
    index = {s: i for i, s in enumerate(states)}
    q = np.zeros((len(states), len(states)))
    first_rate = [np.zeros(len(states)) for _ in range(classes)]
    for i, state in enumerate(states):
        for c, route in enumerate(routes):
            for pos, k in enumerate(route):
                n_c = state[c][k]
                if n_c == 0:
                    continue
                station = stations[k]
                if station.kind == "is":
                    rate = n_c / station.service[c]
                else:
                    n = sum(state[j][k] for j in range(classes))
                    rate = min(n, station.servers) * (n_c / n) / station.service[c]
                nxt = route[(pos + 1) % len(route)]
                moved = list(state[c])
                moved[k] -= 1
                moved[nxt] += 1
                target = index[(*state[:c], tuple(moved), *state[c + 1 :])]
                q[i, target] += rate
                q[i, i] -= rate
                if pos == 0:
                    first_rate[c][i] = rate
    # pi Q = 0 with sum(pi) = 1: transpose, and replace one balance equation by the normalisation.
    a = q.T.copy()
    a[-1, :] = 1.0
    b = np.zeros(len(states))
    b[-1] = 1.0
    pi = np.linalg.solve(a, b)
    return states, pi, first_rate


def product_form(
    demands: Sequence[float], servers: Sequence[float], think: float, population: int
) -> tuple[float, list[float]]:
    """X and Q_k of one closed class by summing the product form over every state.

    The stationary probability of (n_1..n_K, n_think) is proportional to prod_k F_k(n_k) times
    Z^n_think / n_think!, with F_k(j) = D_k^j / prod_{i<=j} min(i, m_k) (m_k = inf for a delay
    centre, giving D^j / j!). X = G(N - 1) / G(N).
    """

    def factor(d: float, m: float, j: int) -> float:
        return d**j / math.prod(min(i, m) for i in range(1, j + 1))

    def weights(n: int) -> list[tuple[tuple[int, ...], float]]:
        out = []
        for state in compositions(n, len(demands) + 1):
            w = factor(think, math.inf, state[-1])
            for k, (d, m) in enumerate(zip(demands, servers, strict=True)):
                w *= factor(d, m, state[k])
            out.append((state, w))
        return out

    top = weights(population)
    g = sum(w for _, w in top)
    g_less = sum(w for _, w in weights(population - 1))
    queue = [sum(s[k] * w for s, w in top) / g for k in range(len(demands))]
    return g_less / g, queue


def buzen_log_g(demands: Sequence[float], infinite: float, population: int) -> np.ndarray:
    """log G(n), n = 0..N, by Buzen's convolution in log space for single-server queues.

    `infinite` is the total demand at infinite servers (terminals plus delay centres): their
    factors Z^j / j! and D^j / j! convolve to (Z + D)^n / n!, the starting column.
    """
    n = np.arange(population + 1)
    if infinite > 0:
        g = n * math.log(infinite) - np.array([math.lgamma(i + 1) for i in n])
    else:
        g = np.full(population + 1, -np.inf)
        g[0] = 0.0
    for d in demands:
        for i in range(1, population + 1):  # G_k(n) = G_{k-1}(n) + D_k G_k(n - 1)
            g[i] = np.logaddexp(g[i], math.log(d) + g[i - 1])
    return np.asarray(g, dtype=float)


def closed_network(
    queues: Sequence[tuple[Sequence[float], int]],
    delay: Sequence[float] | None,
    classes: Sequence[tuple[int, float]],
) -> Network:
    """`queues`: per queueing centre the demand of each class and the servers; `delay`: demands
    at one delay centre (or none); `classes`: population and think time of each class."""
    centres = [Centre(f"Q{k}", CentreKind.QUEUE, Scheduling.PS, m) for k, (_, m) in enumerate(queues)]
    if delay is not None:
        centres.append(Centre("delay", CentreKind.DELAY))
    workloads = []
    for c, (population, think) in enumerate(classes):
        demands = {f"Q{k}": Demand(1.0, d[c]) for k, (d, _) in enumerate(queues) if d[c] > 0}
        if delay is not None and delay[c] > 0:
            demands["delay"] = Demand(1.0, delay[c])
        workloads.append(WorkloadClass(f"c{c}", demands, population=population, think_time=think))
    return Network.of(centres, workloads)


# ------------------------------------------------------------------ 1. exact MVA = CTMC

demand_values = st.floats(0.05, 2.0)


@st.composite
def ps_networks(draw: st.DrawFn) -> tuple[int, bool, list[tuple[int, float, list[float]]]]:
    classes = draw(st.integers(1, 2))
    queues = draw(st.integers(2, 3))
    with_delay = draw(st.booleans())
    drawn = []
    for _ in range(classes):
        population = draw(st.integers(1, 3))
        think = draw(st.floats(0.1, 5.0))
        # A zero demand: the class skips that centre.
        demands = [draw(st.just(0.0) | demand_values) for _ in range(queues + with_delay)]
        drawn.append((population, think, demands))
    return queues, with_delay, drawn


@SETTINGS
@given(ps_networks())
def test_exact_mva_equals_the_markov_chain_of_a_multiclass_ps_network(
    drawn: tuple[int, bool, list[tuple[int, float, list[float]]]],
) -> None:
    queues, with_delay, classes = drawn
    populations = [p for p, _, _ in classes]
    # Stations in cycle order: the terminals, the PS queues, then the delay centre.
    stations = [Station("is", tuple(z for _, z, _ in classes))]
    stations += [Station("queue", tuple(d[k] for _, _, d in classes)) for k in range(queues)]
    if with_delay:
        stations.append(Station("is", tuple(d[queues] for _, _, d in classes)))
    states, pi, first_rate = closed_ctmc(stations, populations)

    network = closed_network(
        [([d[k] for _, _, d in classes], 1) for k in range(queues)],
        [d[queues] for _, _, d in classes] if with_delay else None,
        [(p, z) for p, z, _ in classes],
    )
    solution = solve(network, "exact")
    assert solution.exact
    names = [c.name for c in network.centres]
    for c, (population, _, _) in enumerate(classes):
        x = float(pi @ first_rate[c])
        number = [float(sum(p * s[c][k] for p, s in zip(pi, states, strict=True))) for k in range(len(stations))]
        metrics = solution.classes[f"c{c}"]
        assert metrics.throughput == pytest.approx(x, rel=REL)
        assert metrics.response == pytest.approx((population - number[0]) / x, rel=REL)
        for k, name in enumerate(names, start=1):
            centre = solution.centres[name][f"c{c}"]
            assert centre.queue_length == pytest.approx(number[k], rel=REL)
            assert centre.residence == pytest.approx(number[k] / x, rel=REL)
    # A single-server PS queue is busy exactly when it holds a job.
    for k in range(queues):
        busy = sum(p for p, s in zip(pi, states, strict=True) if any(s[c][k + 1] for c in range(len(classes))))
        assert solution.utilization(f"Q{k}") == pytest.approx(busy, rel=REL)


# ------------------------------------------------------------------ 2. one class: product form, load dependence

# population, demands at the queues, their servers, the demand at a delay centre (or none), think time
SingleClass = tuple[int, list[float], list[int], float | None, float]


@st.composite
def single_class_models(draw: st.DrawFn, max_population: int = 8, max_servers: int = 4) -> SingleClass:
    population = draw(st.integers(1, max_population))
    queues = draw(st.integers(1, 3))
    demands = [draw(demand_values) for _ in range(queues)]
    servers = [draw(st.integers(1, max_servers)) for _ in range(queues)]
    delay = draw(st.none() | demand_values)
    think = draw(st.just(0.0) | st.floats(0.1, 5.0))
    return population, demands, servers, delay, think


def _single_class_network(
    population: int, demands: list[float], servers: list[int], delay: float | None, think: float
) -> Network:
    return closed_network(
        [([d], m) for d, m in zip(demands, servers, strict=True)],
        None if delay is None else [delay],
        [(population, think)],
    )


@SETTINGS
@given(single_class_models())
def test_single_class_solution_equals_the_summed_product_form(model: SingleClass) -> None:
    # With every server count 1 `solve` runs exact MVA; with any > 1, the load-dependent solver.
    population, demands, servers, delay, think = model
    network = _single_class_network(population, demands, servers, delay, think)
    solution = solve(network, "exact")
    all_demands = demands + ([] if delay is None else [delay])
    all_servers = [float(m) for m in servers] + ([] if delay is None else [math.inf])
    x, queue = product_form(all_demands, all_servers, think, population)
    assert solution.classes["c0"].throughput == pytest.approx(x, rel=REL)
    for name, q in zip([c.name for c in network.centres], queue, strict=True):
        assert solution.queue_length(name) == pytest.approx(q, rel=REL)
    assert solution.classes["c0"].number == pytest.approx(sum(queue), rel=REL)
    # Per-server utilisation of an m-server queue: X D / m.
    for k, (d, m) in enumerate(zip(demands, servers, strict=True)):
        assert solution.utilization(f"Q{k}") == pytest.approx(x * d / m, rel=REL)


@SETTINGS
@given(single_class_models(max_population=5, max_servers=3))
def test_load_dependent_solver_equals_the_markov_chain_of_multiserver_queues(model: SingleClass) -> None:
    population, demands, servers, delay, think = model
    network = _single_class_network(population, demands, servers, delay, think)
    stations = [Station("is", (think,))] if think > 0 else []
    offset = len(stations)
    stations += [Station("queue", (d,), m) for d, m in zip(demands, servers, strict=True)]
    if delay is not None:
        stations.append(Station("is", (delay,)))
    states, pi, first_rate = closed_ctmc(stations, [population])
    solution = solve(network, "exact")
    assert solution.classes["c0"].throughput == pytest.approx(float(pi @ first_rate[0]), rel=REL)
    for k, centre in enumerate(network.centres):
        number = float(sum(p * s[0][k + offset] for p, s in zip(pi, states, strict=True)))
        assert solution.queue_length(centre.name) == pytest.approx(number, rel=REL)


@SETTINGS
@given(
    population=st.integers(1, 60),
    demands=st.lists(demand_values, min_size=1, max_size=4),
    delays=st.lists(st.booleans(), min_size=4, max_size=4),
    think=st.just(0.0) | st.floats(0.1, 5.0),
)
def test_load_dependent_solver_with_single_servers_equals_exact_mva(
    population: int, demands: list[float], delays: list[bool], think: float
) -> None:
    d = np.array(demands)
    delay = np.array(delays[: len(demands)])
    alphas = [None if is_delay else np.ones(population) for is_delay in delay]
    x1, r1 = single_class_load_dependent(d, alphas, population, think)
    x, r = exact_mva(d[:, None], delay, np.array([population]), np.array([think]))
    assert x1 == pytest.approx(float(x[0]), rel=REL)
    np.testing.assert_allclose(r1, r[:, 0], rtol=REL)


# ------------------------------------------------------------------ 3. large populations

TOMCAT_SERVERS = 300
TOMCAT_REQUESTS = 400
TOMCAT_THROUGHPUT = 675.6757  # PDQ 7 README (DrQz/pdq-qnm-pkg), AWS Tomcat example, Report() output
TOMCAT_SERVICE = TOMCAT_SERVERS / TOMCAT_THROUGHPUT


def naive_marginal_recursion(servers: int, population: int, service: float) -> float:
    """PDQ's MServerFESC / fesc.pl recursion for one multi-server centre and no think time.

    p(j|n) = X(n) / x(j) p(j-1|n-1), p(0|n) = 1 - sum_j p(j|n), x(j) = min(j, m) / S.
    """
    p = [1.0]
    x = 0.0
    for n in range(1, population + 1):
        residence = sum(j / min(j, servers) * service * p[j - 1] for j in range(1, n + 1))
        x = n / residence
        new = [0.0] + [x / (min(j, servers) / service) * p[j - 1] for j in range(1, n + 1)]
        new[0] = 1.0 - sum(new[1:])
        p = new
    return x


def test_pdq7_tomcat_multiserver_example_is_solved_stably() -> None:
    # 400 requests circulate with no think time through 300 servers: all 400 are always at the
    # centre, 300 in service, so X = min(N, m) / S = 675.6757 exactly as PDQ 7's README prints.
    # The marginal-probability recursion PDQ uses gets p(0|n) by subtracting from 1; the
    # round-off of that subtraction is multiplied by X / x(1) = m = 300 at the next step, so in
    # float64 it blows up once n passes ~330 (the reference notes X = 114 with PDQ; the version
    # above even goes negative). The solver must not follow it.
    naive = naive_marginal_recursion(TOMCAT_SERVERS, TOMCAT_REQUESTS, TOMCAT_SERVICE)
    assert not math.isclose(naive, TOMCAT_THROUGHPUT, rel_tol=0.1)  # the trap is real on this case

    network = Network.of(
        [Centre("tomcat", servers=TOMCAT_SERVERS)],
        [WorkloadClass("requests", {"tomcat": Demand(1.0, TOMCAT_SERVICE)}, population=TOMCAT_REQUESTS)],
    )
    solution = solve(network)
    metrics = solution.classes["requests"]
    assert round(metrics.throughput, 4) == TOMCAT_THROUGHPUT
    assert metrics.number == pytest.approx(TOMCAT_REQUESTS, rel=1e-9)
    assert metrics.response == pytest.approx(TOMCAT_REQUESTS / TOMCAT_THROUGHPUT, rel=1e-9)
    assert solution.utilization("tomcat") == pytest.approx(1.0, rel=1e-9)
    assert solution.exact


@pytest.mark.parametrize("think", [0.05, 0.2, 1.0])
def test_large_multiserver_centre_with_think_time_equals_the_birth_death_chain(think: float) -> None:
    # j = requests at the centre: arrivals (N - j) / Z from the terminals, departures min(j, m) / S;
    # p_j is the product of the rate ratios, summed in log space.
    n, m, s = TOMCAT_REQUESTS, TOMCAT_SERVERS, TOMCAT_SERVICE
    j = np.arange(1, n + 1)
    log_p = np.concatenate(([0.0], np.cumsum(np.log((n - j + 1) / think) - np.log(np.minimum(j, m) / s))))
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    jobs = np.arange(n + 1)
    x = float((p * np.minimum(jobs, m) / s).sum())
    queue = float((p * jobs).sum())

    network = Network.of(
        [Centre("tomcat", servers=m)],
        [WorkloadClass("requests", {"tomcat": Demand(1.0, s)}, population=n, think_time=think)],
    )
    solution = solve(network)
    assert solution.classes["requests"].throughput == pytest.approx(x, rel=REL)
    assert solution.queue_length("tomcat") == pytest.approx(queue, rel=REL)
    assert math.isfinite(solution.classes["requests"].response)


def test_five_thousand_users_approach_the_bottleneck_bound() -> None:
    demands = [0.010, 0.020, 0.005]
    delay, think, population = 0.1, 10.0, 5000
    network = closed_network([([d], 1) for d in demands], [delay], [(population, think)])
    solution = solve(network, "exact")
    x = solution.classes["c0"].throughput
    bound = min(1 / max(demands), population / (sum(demands) + delay + think))
    assert x < bound
    # N* = (D + Z) / D_max is about 507; at ten times that, X is at the bound to round-off.
    assert x == pytest.approx(1 / max(demands), rel=1e-9)
    log_g = buzen_log_g(demands, think + delay, population)
    assert x == pytest.approx(math.exp(log_g[-2] - log_g[-1]), rel=REL)
    queues = [solution.queue_length(f"Q{k}") for k in range(3)] + [solution.queue_length("delay")]
    assert all(math.isfinite(q) and q >= 0 for q in queues)
    assert sum(queues) + x * think == pytest.approx(population, rel=1e-9)


def test_exact_multiclass_mva_at_populations_60_60_keeps_littles_law() -> None:
    queues = [([0.02, 0.05], 1), ([0.04, 0.01], 1), ([0.03, 0.03], 1)]
    classes = [(60, 1.0), (60, 2.5)]
    solution = solve(closed_network(queues, [0.2, 0.1], classes), "exact")
    for c, (population, think) in enumerate(classes):
        name = f"c{c}"
        x = solution.classes[name].throughput
        at_centres = sum(solution.centres[k][name].queue_length for k in solution.centres)
        assert math.isfinite(x) and x > 0
        assert at_centres + x * think == pytest.approx(population, rel=1e-9)
        assert solution.classes[name].number == pytest.approx(at_centres, rel=1e-9)


def test_two_identical_classes_of_60_are_one_class_of_120() -> None:
    # Jobs of two classes with the same demands and think time are exchangeable: the network
    # behaves as one class of 120, and each class gets its share of the throughput.
    demands, delay, think = [0.02, 0.04, 0.03], 0.2, 1.0
    solution = solve(
        closed_network([([d, d], 1) for d in demands], [delay, delay], [(60, think), (60, think)]), "exact"
    )
    log_g = buzen_log_g(demands, think + delay, 120)
    x = math.exp(log_g[-2] - log_g[-1])
    for name in ("c0", "c1"):
        assert solution.classes[name].throughput == pytest.approx(x / 2, rel=REL)


# ------------------------------------------------------------------ 4. Bard-Schweitzer


ApproxModel = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # D[k, c], delay[k], N[c], Z[c]


@st.composite
def approx_models(draw: st.DrawFn) -> ApproxModel:
    classes = draw(st.integers(1, 3))
    centres = draw(st.integers(1, 4))
    demands = np.array([[draw(st.just(0.0) | demand_values) for _ in range(classes)] for _ in range(centres)])
    for c in range(classes):
        if not demands[:, c].any():
            demands[0, c] = draw(demand_values)
    delay = np.array([draw(st.booleans()) for _ in range(centres)])
    populations = np.array([draw(st.integers(1, 30) | st.floats(0.5, 30.0)) for _ in range(classes)], dtype=float)
    think = np.array([draw(st.just(0.0) | st.floats(0.1, 5.0)) for _ in range(classes)])
    return demands, delay, populations, think


@SETTINGS
@given(approx_models())
def test_bard_schweitzer_converges_to_its_fixed_point(model: ApproxModel) -> None:
    demands, delay, populations, think = model
    x, r, _ = schweitzer_mva(demands, delay, populations, think, tolerance=1e-12)
    q = r * x
    # Schweitzer's estimate of the queue an arriving class-c job sees at centre k.
    seen = q.sum(axis=1, keepdims=True) - q / populations
    expected_r = np.where(delay[:, None], demands, demands * (1 + seen))
    np.testing.assert_allclose(r, expected_r, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(x, populations / (think + expected_r.sum(axis=0)), rtol=1e-8)


def test_bard_schweitzer_through_solve_reaches_the_same_fixed_point() -> None:
    queues = [([0.3, 1.0], 1), ([0.08, 0.05], 1), ([0.10, 0.06], 1)]
    network = closed_network(queues, None, [(20, 20.0), (15, 15.0)])
    solution = solve(network, "approx", tolerance=1e-12)
    assert not solution.exact
    names = [f"c{c}" for c in range(2)]
    q = np.array([[solution.centres[f"Q{k}"][n].queue_length for n in names] for k in range(3)])
    d = np.array([d for d, _ in queues])
    n = np.array([20.0, 15.0])
    expected_r = d * (1 + q.sum(axis=1, keepdims=True) - q / n)
    r = np.array([[solution.centres[f"Q{k}"][c].residence for c in names] for k in range(3)])
    np.testing.assert_allclose(r, expected_r, rtol=1e-8)
    x = np.array([solution.classes[c].throughput for c in names])
    np.testing.assert_allclose(x, n / (np.array([20.0, 15.0]) + expected_r.sum(axis=0)), rtol=1e-8)


@SETTINGS
@given(
    demands=st.lists(demand_values, min_size=1, max_size=4),
    delays=st.lists(st.booleans(), min_size=4, max_size=4),
    think=st.just(0.0) | st.floats(0.1, 5.0),
)
def test_bard_schweitzer_with_one_job_is_exact(demands: list[float], delays: list[bool], think: float) -> None:
    # One job never queues behind another: R_k = D_k, X = 1 / (Z + sum D).
    d = np.array(demands)[:, None]
    delay = np.array(delays[: len(demands)])
    x, r, _ = schweitzer_mva(d, delay, np.array([1.0]), np.array([think]), tolerance=1e-12)
    x_exact, r_exact = exact_mva(d, delay, np.array([1]), np.array([think]))
    np.testing.assert_allclose(r[:, 0], d[:, 0], rtol=1e-15)
    np.testing.assert_allclose(r, r_exact, rtol=1e-15)
    np.testing.assert_allclose(x, x_exact, rtol=1e-15)
    assert float(x[0]) == pytest.approx(1 / (think + sum(demands)), rel=1e-14)
