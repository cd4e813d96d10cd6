"""Open-network formulas (Erlang, priorities, the shadow server) against independent computations.

Expected values come from the closed forms written out here (factorial Erlang formulas,
Pollaczek-Khinchine, Kleinrock's conservation law), from truncated Markov chains built state by
state, or from textbook values restated with their source; never from the solver itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from skenario.queueing import (
    Centre,
    CentreKind,
    Demand,
    Network,
    QueueingModelError,
    Scheduling,
    WorkloadClass,
    erlang_b,
    erlang_c,
    mmc_response,
    solve,
)

SETTINGS = settings(max_examples=40, deadline=None)

# ------------------------------------------------------------------ 1. Erlang B and C


def erlang_b_factorials(c: int, a: float) -> float:
    """B(c, a) = (a^c / c!) / sum_{k=0}^{c} a^k / k! (Kleinrock Vol. 1)."""
    return (a**c / math.factorial(c)) / sum(a**k / math.factorial(k) for k in range(c + 1))


def erlang_c_factorials(c: int, a: float) -> float:
    """C(c, a) = [a^c / c! / (1 - rho)] / [sum_{k<c} a^k / k! + a^c / c! / (1 - rho)], rho = a / c."""
    top = a**c / math.factorial(c) / (1 - a / c)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


@SETTINGS
@given(c=st.integers(1, 10), a=st.floats(0.0, 30.0))
def test_erlang_b_equals_the_factorial_formula(c: int, a: float) -> None:
    assert erlang_b(c, a) == pytest.approx(erlang_b_factorials(c, a), rel=1e-10, abs=1e-300)


@SETTINGS
@given(c=st.integers(1, 10), load=st.floats(0.001, 0.99), service=st.floats(0.01, 10.0))
def test_erlang_c_and_mmc_response_equal_the_factorial_formulas(c: int, load: float, service: float) -> None:
    a = load * c
    expected_c = erlang_c_factorials(c, a)
    assert erlang_c(c, a) == pytest.approx(expected_c, rel=1e-10)
    # M/M/c: R = S + C S / (c (1 - rho)).
    rate = a / service
    assert mmc_response(c, rate, service) == pytest.approx(service + expected_c * service / (c - a), rel=1e-10)


def test_erlang_c_of_four_servers_at_three_erlangs_is_27_over_53() -> None:
    # sum_{k<4} 3^k / k! = 1 + 3 + 9/2 + 27/6 = 13; 3^4 / 4! / (1 - 3/4) = 81/24 * 4 = 27/2;
    # C = (27/2) / (13 + 27/2) = 27/53.
    assert erlang_c(4, 3.0) == pytest.approx(27 / 53, rel=1e-14)


def test_erlang_b_of_a_thousand_servers_stays_finite() -> None:
    # a^c / c! overflows float64 here (950^1000); the same formula in log space does not.
    c, a = 1000, 950.0
    log_terms = np.array([k * math.log(a) - math.lgamma(k + 1) for k in range(c + 1)])
    expected = math.exp(log_terms[-1] - np.logaddexp.reduce(log_terms))
    b = erlang_b(c, a)
    assert math.isfinite(b) and 0 < b < 1
    assert b == pytest.approx(expected, rel=1e-9)
    assert 0 < erlang_c(c, a) < 1


# ------------------------------------------------------------------ 2. M/M/c priorities against a Markov chain

State = tuple[int, ...]
Load = tuple[float, float, float, int]  # lambda, mean service, scv, priority


def solve_level_chain(
    levels: Sequence[Sequence[State]],
    moves: Callable[[State], list[tuple[State, float]]],
    level_of: Callable[[State], int],
) -> dict[State, float]:
    """Stationary distribution of a finite chain whose moves change the level by at most one.

    Linear level reduction: with blocks L_l (within level l), U_l (l -> l+1), D_l (l -> l-1),
    pi_{l+1} = pi_l R_{l+1}, R_{l+1} = U_l (-(L_{l+1} + R_{l+2} D_{l+2}))^{-1}, and pi_0 solves
    pi_0 (L_0 + R_1 D_1) = 0; then normalise. Exact (no iteration) and cheap for long chains.
    """
    index = [{s: i for i, s in enumerate(level)} for level in levels]
    top = len(levels) - 1
    local = [np.zeros((len(lv), len(lv))) for lv in levels]
    up = [np.zeros((len(levels[i]), len(levels[i + 1]))) for i in range(top)]
    down = [np.zeros((len(levels[0]), 0))] + [np.zeros((len(levels[i]), len(levels[i - 1]))) for i in range(1, top + 1)]
    for lv, states in enumerate(levels):
        for i, state in enumerate(states):
            for target, rate in moves(state):
                to = level_of(target)
                block = local[lv] if to == lv else up[lv] if to == lv + 1 else down[lv]
                assert abs(to - lv) <= 1
                block[i, index[to][target]] += rate
                local[lv][i, i] -= rate
    r: list[np.ndarray] = [np.zeros((0, 0))] * (top + 2)
    m: np.ndarray = local[top]
    for lv in range(top, 0, -1):
        r[lv] = np.linalg.solve(-m.T, up[lv - 1].T).T  # U (-M)^{-1}
        m = local[lv - 1] + r[lv] @ down[lv]
    a = m.T.copy()
    a[-1, :] = 1.0
    b = np.zeros(len(a))
    b[-1] = 1.0
    pi = [np.linalg.solve(a, b)]
    for lv in range(1, top + 1):
        pi.append(pi[-1] @ r[lv])
    total = sum(p.sum() for p in pi)
    return {s: float(p[i]) / total for lv, p in enumerate(pi) for i, s in enumerate(levels[lv])}


def priority_chain(
    servers: int, high: float, low: float, service: float, preemptive: bool, cap: int
) -> tuple[float, float]:
    """Mean numbers of high and low jobs in an M/M/c queue with two priority classes.

    Preemptive-resume: the state (n_high, n_low) is enough; highs hold min(n_high, c) servers,
    lows the rest. Non-preemptive: a low job in service keeps its server, so the state is
    (n_high, n_low, lows in service); a freed server takes a waiting high first, then a low.
    Both counts are truncated at `cap` (arrivals beyond it are lost).
    """
    mu = 1.0 / service
    c = servers

    def moves(state: State) -> list[tuple[State, float]]:
        out: list[tuple[State, float]] = []
        if preemptive:
            nh, nl = state
            sh = min(nh, c)
            sl = min(nl, c - sh)
            if nh < cap:
                out.append(((nh + 1, nl), high))
            if nl < cap:
                out.append(((nh, nl + 1), low))
            if sh:
                out.append(((nh - 1, nl), sh * mu))
            if sl:
                out.append(((nh, nl - 1), sl * mu))
            return out
        nh, nl, sl = state
        sh = min(nh, c - sl)
        free = sh + sl < c
        if nh < cap:
            out.append(((nh + 1, nl, sl), high))
        if nl < cap:
            out.append(((nh, nl + 1, sl + 1 if free else sl), low))
        if sh:  # the freed server takes a waiting high (s_l unchanged), else a waiting low
            waiting_high, waiting_low = nh - sh, nl - sl
            out.append(((nh - 1, nl, sl + 1 if not waiting_high and waiting_low else sl), sh * mu))
        if sl:
            waiting_high, waiting_low = nh - sh, nl - sl
            keeps = not waiting_high and waiting_low  # a waiting low takes the low's server
            out.append(((nh, nl - 1, sl if keeps else sl - 1), sl * mu))
        return out

    def feasible(nh: int, nl: int, sl: int) -> bool:
        sh = min(nh, c - sl)
        return sl <= min(nl, c) and (sh + sl == c or (nh == sh and nl == sl))

    levels: list[list[State]]
    if preemptive:
        levels = [[(nh, nl) for nh in range(cap + 1)] for nl in range(cap + 1)]
    else:
        levels = [
            [(nh, nl, sl) for nh in range(cap + 1) for sl in range(c + 1) if feasible(nh, nl, sl)]
            for nl in range(cap + 1)
        ]
    pi = solve_level_chain(levels, moves, lambda s: s[1])
    return sum(p * s[0] for s, p in pi.items()), sum(p * s[1] for s, p in pi.items())


def priority_centre(scheduling: Scheduling, servers: int, classes: Sequence[tuple[str, float, Demand, int]]) -> Network:
    return Network.of(
        [Centre("cpu", CentreKind.QUEUE, scheduling, servers)],
        [WorkloadClass(name, {"cpu": d}, arrival_rate=rate, priority=p) for name, rate, d, p in classes],
    )


@pytest.mark.parametrize("preemptive", [True, False], ids=["preemptive", "non-preemptive"])
@pytest.mark.parametrize(
    ("servers", "high", "low", "service"),
    [(1, 0.3, 0.4, 1.0), (2, 0.5, 0.7, 1.0), (3, 1.0, 0.8, 1.1)],
)
def test_mmc_priority_formulas_equal_the_markov_chain(
    servers: int, high: float, low: float, service: float, preemptive: bool
) -> None:
    rho = (high + low) * service / servers
    # The total in system is M/M/c whatever the order of service, so P(count > cap) ~ rho^cap.
    cap = math.ceil(math.log(1e-9) / math.log(rho)) + servers
    n_high, n_low = priority_chain(servers, high, low, service, preemptive, cap)
    scheduling = Scheduling.PRIORITY_PREEMPTIVE if preemptive else Scheduling.PRIORITY_NON_PREEMPTIVE
    network = priority_centre(
        scheduling, servers, [("high", high, Demand(1.0, service), 1), ("low", low, Demand(1.0, service), 0)]
    )
    solution = solve(network)
    assert solution.exact  # equal exponential service: the M/M/c formulas are exact
    assert solution.classes["high"].response == pytest.approx(n_high / high, rel=1e-6)
    assert solution.classes["low"].response == pytest.approx(n_low / low, rel=1e-6)
    assert solution.queue_length("cpu") == pytest.approx(n_high + n_low, rel=1e-6)


def test_mm1_priority_textbook_values() -> None:
    # lambda = (0.3, 0.4), S = 1 (shared reference queueing-theory.md, key finding 3: 4.762 and 4.333):
    # preemptive-resume low T = 1/(1 - .3) + (.3 + .4)/((1 - .3)(1 - .7)) = 1.4286 + 3.3333 = 4.762;
    # non-preemptive (Cobham) low T = 1 + W0/((1 - .3)(1 - .7)), W0 = (.3*2 + .4*2)/2 = .7 -> 4.333.
    classes = [("high", 0.3, Demand(1.0, 1.0), 1), ("low", 0.4, Demand(1.0, 1.0), 0)]
    preemptive = solve(priority_centre(Scheduling.PRIORITY_PREEMPTIVE, 1, classes))
    cobham = solve(priority_centre(Scheduling.PRIORITY_NON_PREEMPTIVE, 1, classes))
    assert preemptive.classes["low"].response == pytest.approx(1 / 0.7 + 0.7 / 0.21, rel=1e-12)
    assert round(preemptive.classes["low"].response, 3) == 4.762
    assert cobham.classes["low"].response == pytest.approx(1 + 0.7 / 0.21, rel=1e-12)
    assert round(cobham.classes["low"].response, 3) == 4.333


# ------------------------------------------------------------------ 3-4. M/G/1 priority invariants


@st.composite
def mg1_loads(draw: st.DrawFn, distinct: bool) -> list[Load]:
    """2-4 classes as (lambda, S, scv, priority) with total utilisation below 1."""
    n = draw(st.integers(2, 4))
    total = draw(st.floats(0.05, 0.95))
    weights = [draw(st.floats(0.05, 1.0)) for _ in range(n)]
    services = [draw(st.floats(0.05, 5.0)) for _ in range(n)]
    scvs = [draw(st.floats(0.0, 4.0)) for _ in range(n)]
    ties = [draw(st.integers(0, 2)) for _ in range(n)]
    priorities = draw(st.permutations(list(range(n)))) if distinct else ties
    shares = [total * w / sum(weights) for w in weights]
    return [(r / s, s, v, p) for r, s, v, p in zip(shares, services, scvs, priorities, strict=True)]


def mg1_network(scheduling: Scheduling, loads: Sequence[Load]) -> Network:
    return priority_centre(
        scheduling, 1, [(f"k{i}", lam, Demand(1.0, s, scv), p) for i, (lam, s, scv, p) in enumerate(loads)]
    )


@SETTINGS
@given(mg1_loads(distinct=False))
def test_non_preemptive_priority_keeps_kleinrocks_conservation_law(loads: list[Load]) -> None:
    # Kleinrock Vol. 2: for any work-conserving non-preemptive order, sum_k rho_k W_k is the FCFS
    # value rho W0 / (1 - rho), W0 = sum lambda_i E[S_i^2] / 2, E[S^2] = S^2 (1 + scv).
    rho = sum(lam * s for lam, s, _, _ in loads)
    w0 = sum(lam * s * s * (1 + scv) for lam, s, scv, _ in loads) / 2
    solution = solve(mg1_network(Scheduling.PRIORITY_NON_PREEMPTIVE, loads))
    waits = [solution.classes[f"k{i}"].response - s for i, (_, s, _, _) in enumerate(loads)]
    weighted = sum(lam * s * w for (lam, s, _, _), w in zip(loads, waits, strict=True))
    assert weighted == pytest.approx(rho * w0 / (1 - rho), rel=1e-9)
    # Cobham: W_k = W0 / ((1 - sigma_above)(1 - sigma_through)), levels sharing a priority in FCFS.
    for i, (_, _, _, p) in enumerate(loads):
        above = sum(lam * s for lam, s, _, q in loads if q > p)
        through = sum(lam * s for lam, s, _, q in loads if q >= p)
        assert waits[i] == pytest.approx(w0 / ((1 - above) * (1 - through)), rel=1e-9)
    # And FCFS itself (Pollaczek-Khinchine) gives every class W0 / (1 - rho).
    fcfs = solve(mg1_network(Scheduling.FCFS, loads))
    for i, (_, s, _, _) in enumerate(loads):
        assert fcfs.classes[f"k{i}"].response == pytest.approx(s + w0 / (1 - rho), rel=1e-9)


@SETTINGS
@given(mg1_loads(distinct=True))
def test_top_class_under_preemptive_resume_is_a_standalone_mg1(loads: list[Load]) -> None:
    # The top class never waits for another: T = S + lambda E[S^2] / (2 (1 - rho)) over it alone.
    top = max(range(len(loads)), key=lambda i: loads[i][3])
    lam, s, scv, _ = loads[top]
    rho = lam * s
    expected = s + lam * s * s * (1 + scv) / (2 * (1 - rho))
    solution = solve(mg1_network(Scheduling.PRIORITY_PREEMPTIVE, loads))
    assert solution.classes[f"k{top}"].response == pytest.approx(expected, rel=1e-9)
    # Likewise each class is unaffected by every class below it.
    ranked = sorted(range(len(loads)), key=lambda i: -loads[i][3])
    for cut in range(1, len(loads)):
        kept = [loads[i] for i in ranked[:cut]]
        alone = solve(mg1_network(Scheduling.PRIORITY_PREEMPTIVE, kept))
        for j, i in enumerate(ranked[:cut]):
            assert solution.classes[f"k{i}"].response == pytest.approx(alone.classes[f"k{j}"].response, rel=1e-9)


# ------------------------------------------------------------------ 5. the shadow server in an open network


@SETTINGS
@given(
    rho_a=st.floats(0.01, 0.9),
    rho_b=st.floats(0.01, 0.9),
    s_a=st.floats(0.05, 5.0),
    s_b=st.floats(0.05, 5.0),
)
def test_shadow_server_in_an_open_network_gives_the_low_class_its_fcfs_response(
    rho_a: float, rho_b: float, s_a: float, s_b: float
) -> None:
    # Seed 001 / reference key finding 3: D_b* = S_b / (1 - rho_a), so R_b* = D_b* / (1 - lambda_b D_b*)
    # = S_b / (1 - rho_a - rho_b): the low class's response under PS, or FCFS with equal service.
    assume(rho_a + rho_b < 0.98)
    lam_a, lam_b = rho_a / s_a, rho_b / s_b
    classes = [("a", lam_a, Demand(1.0, s_a), 1), ("b", lam_b, Demand(1.0, s_b), 0)]
    shadow = solve(priority_centre(Scheduling.PRIORITY_PREEMPTIVE, 1, classes), priorities="shadow")
    ps = solve(priority_centre(Scheduling.PS, 1, classes))
    expected = s_b / (1 - rho_a - rho_b)
    assert shadow.classes["b"].response == pytest.approx(expected, rel=1e-12)
    assert shadow.classes["b"].response == pytest.approx(ps.classes["b"].response, rel=1e-12)
    assert shadow.classes["a"].response == pytest.approx(s_a / (1 - rho_a), rel=1e-12)
    assert not shadow.exact
    same_service = [("a", rho_a / s_b, Demand(1.0, s_b), 1), ("b", lam_b, Demand(1.0, s_b), 0)]
    fcfs = solve(priority_centre(Scheduling.FCFS, 1, same_service))
    shadow_same = solve(priority_centre(Scheduling.PRIORITY_PREEMPTIVE, 1, same_service), priorities="shadow")
    assert shadow_same.classes["b"].response == pytest.approx(fcfs.classes["b"].response, rel=1e-12)


# ------------------------------------------------------------------ 6. errors name the field


def _field_of(build: Callable[[], object]) -> str | None:
    with pytest.raises(QueueingModelError) as caught:
        build()
    return caught.value.field


def test_a_demand_at_an_unknown_centre_names_it() -> None:
    def build() -> Network:
        demands = {"CPU": Demand(1.0, 0.1), "DK3": Demand(1.0, 0.1)}
        return Network.of([Centre("CPU"), Centre("DK1")], [WorkloadClass("a", demands, arrival_rate=1.0)])

    assert _field_of(build) == "classes.0.demands.DK3"


def test_an_open_class_saturating_a_centre_names_its_arrival_rate() -> None:
    # 0.2 + 0.9 = 1.1 > 1 at the CPU; class b brings most of it.
    network = Network.of(
        [Centre("CPU")],
        [
            WorkloadClass("a", {"CPU": Demand(1.0, 1.0)}, arrival_rate=0.2),
            WorkloadClass("b", {"CPU": Demand(1.0, 0.9)}, arrival_rate=1.0),
        ],
    )
    assert _field_of(lambda: solve(network)) == "classes.1.arrivalRate"


def test_a_negative_population_is_refused() -> None:
    def build() -> Network:
        return Network.of([Centre("CPU")], [WorkloadClass("a", {"CPU": Demand(1.0, 0.1)}, population=-1)])

    assert _field_of(build) == "classes.0.population"


def _closed(*populations: float) -> Network:
    return Network.of(
        [Centre("CPU"), Centre("disk")],
        [
            WorkloadClass(f"c{i}", {"CPU": Demand(1.0, 0.1), "disk": Demand(1.0, 0.2)}, population=n, think_time=1.0)
            for i, n in enumerate(populations)
        ],
    )


def test_a_fractional_population_needs_approx() -> None:
    network = _closed(3, 2.5)
    assert _field_of(lambda: solve(network, "exact")) == "classes.1.population"
    approx = solve(network, "approx")  # Bard-Schweitzer takes a fractional population
    assert math.isfinite(approx.classes["c1"].throughput)


def test_canonical_refuses_a_closed_model() -> None:
    assert _field_of(lambda: solve(_closed(3), "canonical")) == "method"


def test_exact_refuses_too_many_population_vectors() -> None:
    # 1001^3 population vectors: refused before any is built.
    assert _field_of(lambda: solve(_closed(1000, 1000, 1000), "exact")) == "method"
