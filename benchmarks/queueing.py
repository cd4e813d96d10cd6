"""What the analytic queueing solver costs: Bard-Schweitzer on 3 × 1,000 users, exact MVA, load-dependent.

The issue asks: "Solving a 3-class closed network with 1,000 users per class takes well under a
second." Exact MVA visits every population vector, prod(N_c + 1) of them: 1,003,003,001 for
3 × 1,000, which no exact method visits in a second (``solve`` refuses past 20 million vectors and
says so). So the headline is Bard-Schweitzer (``solve(network, "approx")``), and exact MVA is
measured where it is feasible. Four parts, all in one run:

1. Headline: the 3-class model below with 1,000 users per class, solved by Bard-Schweitzer with
   PDQ's stopping rule at PDQ's tolerance 0.001 and at 1e-10 (the converged fixed point): median
   wall time over rounds and iterations. Its response times are printed for every engine.
2. Exact MVA on the same model with 10, 20, 40 and 80 users per class: the cost grows with
   prod(N + 1), so the table gives ns per population vector; then the largest equal population
   per class whose exact solve fits in about a second (``--budget``), found by measuring.
3. One class and a 300-server centre (the stable load-dependent exact solver) at N = 400, 1,000
   and 5,000 users.
4. Peers on the headline model, as ratios to skenario within each round (median of the ratios):

   - ``pure_python``: Bard-Schweitzer as textbook nested loops over plain lists, written here
     (``bard_schweitzer_loops``): what one writes without numpy. Same start (N_c / K at every
     centre), same Jacobi update and same stopping rule as skenario (no queue moved by more than
     the tolerance, absolute), so it takes the same iterations and must give the same answer: the
     benchmark checks the response times and throughputs agree to 1e-9 (relative) and stops with
     an error if not.
   - ``line_pfqn_bs`` and ``line_solver_mva``: LINE's native Python solver (PyPI ``line-solver``,
     optional and not a dependency of skenario: ``pip install line-solver``; it pulls in scipy,
     networkx and an MCP server, and pins pandas < 3). ``line_pfqn_bs`` calls its Bard-Schweitzer
     routine ``line_solver.api.pfqn.mva.pfqn_bs(L, N, Z, tol, maxiter)`` on the same demand matrix;
     ``line_solver_mva`` is the user-level path: ``SolverMVA(model, "bs", tol=...)`` on a LINE
     ``Network`` (a think ``Delay`` and five PS ``Queue``s in series, each queue's mean service time
     the class's demand there, which is the same product-form model), then ``getAvgRespT()`` and
     ``getAvgTput()``. LINE stops on the largest *relative* change of a queue length, not PDQ's
     absolute one, so at the same nominal tolerance it does different iterations; the table gives
     µs per iteration beside the ratio, and the agreement of its answer with skenario's is reported
     (not enforced). ``SolverMVA`` caps Bard-Schweitzer at 1,000 iterations. If ``line-solver``
     cannot be imported or fails, the report says so and the rest runs.

The headline model (demands in seconds, D = visits × service time; queueing centres, FCFS, one
server each; delay only in the think times)::

    centre    browse (Z = 10 s)    search (Z = 20 s)    checkout (Z = 30 s)
    web       1 × 0.004 = 0.004    1 × 0.003 = 0.003    1 × 0.005 = 0.005
    app       2 × 0.005 = 0.010    2 × 0.004 = 0.008    3 × 0.002 = 0.006
    db        3 × 0.002 = 0.006    4 × 0.003 = 0.012    5 × 0.002 = 0.010
    disk1     1 × 0.003 = 0.003    2 × 0.004 = 0.008    2 × 0.003 = 0.006
    disk2     1 × 0.002 = 0.002    1 × 0.004 = 0.004    2 × 0.005 = 0.010

With 1,000 users per class, app and db both run at about 99.8% utilisation with queues of hundreds:
two saturated bottlenecks, the slow case for the fixed-point iteration. The load-dependent model:
a think time of 1 s, ``web`` (1 server, D = 0.0005 s), ``app`` (300 servers, D = 0.4 s) and ``db``
(1 server, D = 0.0012 s); app saturates at 750/s, so N = 400 is light, 1,000 near the knee and
5,000 saturated.

Protocol: everything runs in this process (the solves take milliseconds and do no I/O, so a fresh
interpreter would add only start-up and imports, which are excluded anyway). Every case is run once
untimed first (numpy's and LINE's first-call costs), then ``--rounds`` interleaved rounds, the order
of the cases rotated each round; each timed call is preceded by an untimed ``gc.collect()``. Wall
time is ``time.perf_counter()`` around the solve alone: the ``Network`` (and the LINE model, built
fresh for each call) exists before the clock starts. The report gives medians over rounds.
Absolute times drift 10-25% between runs on a busy machine; quote the ratios.

Usage (from the repository root, with the virtualenv active)::

    python benchmarks/queueing.py                   # 5 rounds, rich tables
    python benchmarks/queueing.py --json            # one JSON object on stdout, nothing else
    python benchmarks/queueing.py --rounds 9 --budget 0.5
    python benchmarks/queueing.py --quick --json    # 1 round, small exact cases (the tests' mode)
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from time import perf_counter
from typing import Any, NamedTuple

import numpy as np

from skenario.queueing import Centre, Demand, Network, QueueingModelError, WorkloadClass, solve

# -- the models ----------------------------------------------------------------------------------

CENTRES = ("web", "app", "db", "disk1", "disk2")
THINK_TIMES = {"browse": 10.0, "search": 20.0, "checkout": 30.0}
DEMANDS: dict[str, dict[str, tuple[float, float]]] = {
    # class -> centre -> (visits, service time in s)
    "browse": {"web": (1, 0.004), "app": (2, 0.005), "db": (3, 0.002), "disk1": (1, 0.003), "disk2": (1, 0.002)},
    "search": {"web": (1, 0.003), "app": (2, 0.004), "db": (4, 0.003), "disk1": (2, 0.004), "disk2": (1, 0.004)},
    "checkout": {"web": (1, 0.005), "app": (3, 0.002), "db": (5, 0.002), "disk1": (2, 0.003), "disk2": (2, 0.005)},
}
POPULATION = 1_000
TOLERANCES = (0.001, 1e-10)
"""PDQ's tolerance, and one tight enough to give the converged fixed point."""
AGREEMENT = 1e-9
"""The largest relative difference allowed between skenario and the pure-Python loops."""

EXACT_POPULATIONS = (10, 20, 40, 80)
QUICK_EXACT_POPULATIONS = (5, 10, 20)
BUDGET_S = 1.0
QUICK_BUDGET_S = 0.05
BUDGET_ATTEMPTS = 5

LD_THINK = 1.0
LD_CENTRES = (("web", 1, 0.0005), ("app", 300, 0.4), ("db", 1, 0.0012))
"""(name, servers, demand in s) of the load-dependent model."""
LD_POPULATIONS = (400, 1_000, 5_000)
QUICK_LD_POPULATIONS = (400, 1_000)

ROUNDS = 5
LINE_MAX_ITERATIONS = 100_000
ENGINES = ("skenario", "pure_python", "line_pfqn_bs", "line_solver_mva")
LINE_ENGINES = ("line_pfqn_bs", "line_solver_mva")


def headline_network(population: float = POPULATION) -> Network:
    """The 3-class model with `population` users in every class."""
    classes = [
        WorkloadClass(
            name,
            demands={centre: Demand(visits, service) for centre, (visits, service) in DEMANDS[name].items()},
            population=population,
            think_time=think,
        )
        for name, think in THINK_TIMES.items()
    ]
    return Network.of([Centre(name) for name in CENTRES], classes, name="three-tier shop")


def load_dependent_network(population: int) -> Network:
    """One closed class, a 300-server centre between two single servers."""
    centres = [Centre(name, servers=servers) for name, servers, _ in LD_CENTRES]
    users = WorkloadClass(
        "users",
        demands={name: Demand(1, demand) for name, _, demand in LD_CENTRES},
        population=population,
        think_time=LD_THINK,
    )
    return Network.of(centres, [users], name="300 servers")


class Arrays(NamedTuple):
    """The headline model as plain lists: D[k][c], queue[k], N[c], Z[c]."""

    demands: list[list[float]]
    is_queue: list[bool]
    populations: list[float]
    think: list[float]


def arrays(network: Network) -> Arrays:
    return Arrays(
        [[cls.demand(centre.name) for cls in network.classes] for centre in network.centres],
        [not centre.is_delay for centre in network.centres],
        [float(cls.population or 0.0) for cls in network.classes],
        [cls.think_time for cls in network.classes],
    )


# -- the pure-Python peer: the textbook loops ----------------------------------------------------


def bard_schweitzer_loops(
    demands: list[list[float]],
    is_queue: list[bool],
    populations: list[float],
    think: list[float],
    tolerance: float,
    max_iterations: int = 100_000,
) -> tuple[list[float], list[list[float]], int]:
    """Bard-Schweitzer approximate MVA in plain Python: returns X[c], R[k][c] and the iterations.

    Start with Q_kc = N_c / K; each iteration, for every class c and centre k, the queue an
    arriving class-c job sees is sum_{j != c} Q_kj + Q_kc (N_c - 1) / N_c; R_kc = D_kc (1 + that)
    at a queue, D_kc at a delay centre; X_c = N_c / (Z_c + sum_k R_kc); then Q_kc = X_c R_kc for all
    at once (Jacobi). Stop when no Q_kc moved by more than `tolerance` (PDQ's rule).
    """
    centres = len(demands)
    classes = len(populations)
    queue = [[populations[c] / centres for c in range(classes)] for _ in range(centres)]
    for iteration in range(1, max_iterations + 1):
        residence = [[0.0] * classes for _ in range(centres)]
        throughput = [0.0] * classes
        for c in range(classes):
            n = populations[c]
            if n <= 0:
                continue
            cycle = think[c]
            for k in range(centres):
                if is_queue[k]:
                    seen = 0.0
                    for j in range(classes):
                        if j == c:
                            seen += queue[k][j] * (n - 1) / n
                        else:
                            seen += queue[k][j]
                    residence[k][c] = demands[k][c] * (1.0 + seen)
                else:
                    residence[k][c] = demands[k][c]
                cycle += residence[k][c]
            throughput[c] = n / cycle
        moved = 0.0
        for k in range(centres):
            for c in range(classes):
                new = throughput[c] * residence[k][c]
                change = abs(new - queue[k][c])
                if change > moved:
                    moved = change
                queue[k][c] = new
        if moved <= tolerance:
            return throughput, residence, iteration
    raise ValueError(f"Bard-Schweitzer did not converge to {tolerance} in {max_iterations} iterations")


# -- LINE (optional) -----------------------------------------------------------------------------

_LINE: dict[str, Any] = {}


def line_solver() -> tuple[Any, str | None]:
    """(the line_solver module or None, why not); imported once, its prints sent to stderr."""
    if "module" not in _LINE:
        try:
            with contextlib.redirect_stdout(sys.stderr):
                import line_solver as module  # type: ignore[import-not-found,import-untyped,unused-ignore]
            _LINE["module"], _LINE["reason"] = module, None
        except Exception as error:  # ImportError, or anything its import does wrong
            _LINE["module"] = None
            _LINE["reason"] = (
                f"line-solver is not importable ({type(error).__name__}: {error}); "
                "it is optional: `pip install line-solver`"
            )
    return _LINE["module"], _LINE["reason"]


def line_solver_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("line-solver")
    except Exception:  # not installed
        return None


def build_line_model(network: Network) -> Any:
    """The headline model as a LINE Network: a think Delay, then the queues in series (PS)."""
    module, reason = line_solver()
    if module is None:
        raise RuntimeError(reason)
    with contextlib.redirect_stdout(sys.stderr):
        model = module.Network(network.name)
        think = module.Delay(model, "think")
        queues = [module.Queue(model, centre.name, module.SchedStrategy.PS) for centre in network.centres]
        for cls in network.classes:
            job = module.ClosedClass(model, cls.name, int(cls.population or 0), think)
            think.set_service(job, module.Exp(1.0 / cls.think_time))
            for centre, queue in zip(network.centres, queues, strict=True):
                queue.set_service(job, module.Exp(1.0 / cls.demand(centre.name)))
        model.link(module.Network.serial_routing(think, *queues))
    return model


# -- the cases -----------------------------------------------------------------------------------

Outcome = dict[str, Any]
"""What a case returns: throughput[c], response[c] (think time excluded), iterations, and extras."""


class Case(NamedTuple):
    key: str
    run: Callable[[Any], Outcome]
    prepare: Callable[[], Any] | None = None
    """Untimed, before every timed call (a fresh LINE model)."""


def _from_solution(network: Network, method: str, tolerance: float = 0.001) -> Outcome:
    solution = solve(network, method, tolerance=tolerance)
    return {
        "throughput": [solution.throughput(cls.name) for cls in network.classes],
        "response": [solution.response(cls.name) for cls in network.classes],
        "iterations": solution.iterations,
    }


def headline_cases(network: Network, line: bool) -> list[Case]:
    plain = arrays(network)
    matrix = np.array(plain.demands)
    populations = np.array(plain.populations)
    think = np.array(plain.think)
    module = line_solver()[0] if line else None
    cases: list[Case] = []
    for tolerance in TOLERANCES:
        tag = f"{tolerance:g}"

        def run_skenario(_: Any, tolerance: float = tolerance) -> Outcome:
            return _from_solution(network, "approx", tolerance)

        def run_loops(_: Any, tolerance: float = tolerance) -> Outcome:
            x, r, iterations = bard_schweitzer_loops(*plain, tolerance)
            response = [sum(r[k][c] for k in range(len(r))) for c in range(len(x))]
            return {"throughput": x, "response": response, "iterations": iterations}

        cases += [Case(f"headline/skenario/{tag}", run_skenario), Case(f"headline/pure_python/{tag}", run_loops)]
        if module is None:
            continue

        def run_pfqn_bs(_: Any, tolerance: float = tolerance) -> Outcome:
            from line_solver.api.pfqn.mva import pfqn_bs  # type: ignore[import-not-found,import-untyped,unused-ignore]

            x, _q, _u, r, iterations = pfqn_bs(matrix, populations, think, tolerance, LINE_MAX_ITERATIONS)
            return {
                "throughput": [float(v) for v in np.ravel(x)],
                "response": [float(v) for v in np.asarray(r).sum(axis=0)],
                "iterations": int(iterations),
            }

        def run_solver_mva(model: Any, tolerance: float = tolerance) -> Outcome:
            solver = module.SolverMVA(model, "bs", tol=tolerance, verbose=False)
            r = np.asarray(solver.getAvgRespT())
            x = np.asarray(solver.getAvgTput())
            iterations = getattr(solver, "_lastiter", None)
            return {
                "throughput": [float(v) for v in x[0]],  # station 0 is the think Delay
                "response": [float(v) for v in r[1:].sum(axis=0)],
                "iterations": None if iterations is None else int(iterations),
            }

        cases += [
            Case(f"headline/line_pfqn_bs/{tag}", run_pfqn_bs),
            Case(f"headline/line_solver_mva/{tag}", run_solver_mva, lambda: build_line_model(network)),
        ]
    return cases


def exact_case(population: int) -> Case:
    network = headline_network(population)
    return Case(f"exact/{population}", lambda _: _from_solution(network, "exact"))


def load_dependent_case(population: int) -> Case:
    network = load_dependent_network(population)

    def run(_: Any) -> Outcome:
        solution = solve(network, "exact")
        return {
            "throughput": [solution.throughput("users")],
            "response": [solution.response("users")],
            "iterations": None,
            "app_residence": solution.residence("app", "users"),
            "app_utilization": solution.utilization("app"),
            "exact": solution.exact,
        }

    return Case(f"load_dependent/{population}", run)


# -- the protocol --------------------------------------------------------------------------------


def time_once(case: Case) -> tuple[float, Outcome]:
    """One timed call: the preparation and a gc.collect() first, untimed; stray prints to stderr."""
    with contextlib.redirect_stdout(sys.stderr):
        state = case.prepare() if case.prepare is not None else None
        gc.collect()
        started = perf_counter()
        outcome = case.run(state)
        wall = perf_counter() - started
    return wall, outcome


def rotated(cases: Sequence[Case], round_index: int) -> list[Case]:
    shift = round_index % len(cases) if cases else 0
    return [*cases[shift:], *cases[:shift]]


def measure(
    cases: Sequence[Case], rounds: int, progress: Callable[[str], None] | None = None
) -> tuple[dict[str, list[float]], dict[str, Outcome], dict[str, str]]:
    """A warm-up call of every case, then interleaved rounds. Returns walls, outcomes, failures."""
    walls: dict[str, list[float]] = {}
    outcomes: dict[str, Outcome] = {}
    failed: dict[str, str] = {}
    for case in cases:
        try:
            _, outcomes[case.key] = time_once(case)
            walls[case.key] = []
        except Exception as error:  # a peer that cannot run is reported, not fatal
            if not case.key.split("/")[1].startswith("line_"):
                raise
            failed[case.key] = f"{type(error).__name__}: {error}"
    running = [case for case in cases if case.key in walls]
    for round_index in range(rounds):
        for case in rotated(running, round_index):
            wall, _ = time_once(case)
            walls[case.key].append(wall)
            if progress is not None:
                progress(f"round {round_index + 1}/{rounds}: {case.key:<34} {wall * 1e3:10.3f} ms")
    return walls, outcomes, failed


def search_budget(
    grid: dict[int, float], budget: float, rounds: int, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """The largest equal population per class whose exact solve takes at most `budget` s (median).

    Start from the population the grid's largest case predicts (its ns per vector × (n + 1)^3),
    measure it over `rounds`, and move by the cube root of budget ÷ time until the step brackets
    the budget or BUDGET_ATTEMPTS measurements are spent.
    """
    largest = max(grid)
    per_vector = grid[largest] / (largest + 1) ** 3
    n = max(1, math.floor((budget / per_vector) ** (1 / 3)) - 1)
    tried: dict[int, float] = {}
    for _ in range(BUDGET_ATTEMPTS):
        case = exact_case(n)
        time_once(case)  # warm-up
        runs = []
        for _ in range(rounds):
            runs.append(time_once(case)[0])
        tried[n] = statistics.median(runs)
        if progress is not None:
            progress(f"budget {budget:g} s: exact at {n} per class {tried[n]:.3f} s")
        under = [m for m, t in tried.items() if t <= budget]
        over = [m for m, t in tried.items() if t > budget]
        if under and over and min(over) == max(under) + 1:
            break
        guess = math.floor((n + 1) * (budget / tried[n]) ** (1 / 3)) - 1
        if tried[n] <= budget:
            step = max(n + 1, guess)
            if over:
                step = min(step, min(over) - 1)
        else:
            step = max(1, min(n - 1, guess))
            if under:
                step = max(step, max(under) + 1)
        if step in tried or step < 1:
            break
        n = step
    fits = [m for m, t in tried.items() if t <= budget]
    best = max(fits) if fits else None
    return {
        "budget_s": budget,
        "predicted_from": largest,
        "tried": [{"population": m, "vectors": (m + 1) ** 3, "median_s": t} for m, t in sorted(tried.items())],
        "largest_within_budget": None
        if best is None
        else {"population": best, "vectors": (best + 1) ** 3, "median_s": tried[best]},
    }


# -- the summary ---------------------------------------------------------------------------------


def _median_ratio(runs: Sequence[float], baseline: Sequence[float]) -> float:
    """The median over rounds of (wall ÷ baseline wall in the same round)."""
    return float(statistics.median(run / base for run, base in zip(runs, baseline, strict=True)))


def _rel_diff(a: Sequence[float], b: Sequence[float]) -> float:
    return max(abs(x - y) / max(abs(y), 1e-300) for x, y in zip(a, b, strict=True))


def check_agreement(outcomes: dict[str, Outcome]) -> dict[str, float]:
    """The pure-Python loops must reproduce skenario's answer to 1e-9 at every tolerance."""
    diffs: dict[str, float] = {}
    for tolerance in TOLERANCES:
        tag = f"{tolerance:g}"
        mine = outcomes[f"headline/skenario/{tag}"]
        loops = outcomes[f"headline/pure_python/{tag}"]
        diff = max(_rel_diff(loops["response"], mine["response"]), _rel_diff(loops["throughput"], mine["throughput"]))
        if not diff <= AGREEMENT or loops["iterations"] != mine["iterations"]:
            raise AssertionError(
                f"the pure-Python loops disagree with skenario at tolerance {tag}: relative difference {diff:.2e} "
                f"(allowed {AGREEMENT:g}), iterations {loops['iterations']} vs {mine['iterations']}"
            )
        diffs[tag] = diff
    return diffs


def summarise(
    walls: dict[str, list[float]],
    outcomes: dict[str, Outcome],
    failed: dict[str, str],
    budget: dict[str, Any],
    settings: dict[str, Any],
) -> dict[str, Any]:
    network = headline_network()
    classes = [cls.name for cls in network.classes]
    agreement = check_agreement(outcomes)
    module, reason = line_solver() if settings["line"] else (None, "not run (--no-line)")
    results: dict[str, dict[str, Any]] = {}
    for engine in ENGINES:
        results[engine] = {}
        for tolerance in TOLERANCES:
            tag = f"{tolerance:g}"
            key = f"headline/{engine}/{tag}"
            if key not in walls:
                why = failed.get(key) or reason or "not run"
                results[engine][tag] = {"median_s": None, "skipped": why}
                continue
            runs = walls[key]
            outcome = outcomes[key]
            median = statistics.median(runs)
            iterations = outcome["iterations"]
            baseline = walls[f"headline/skenario/{tag}"]
            results[engine][tag] = {
                "median_s": median,
                "runs_s": runs,
                "iterations": iterations,
                "us_per_iteration": median / iterations * 1e6 if iterations else None,
                "x_skenario": _median_ratio(runs, baseline),
                "response": dict(zip(classes, outcome["response"], strict=True)),
                "throughput": dict(zip(classes, outcome["throughput"], strict=True)),
                "rel_diff_vs_skenario": _rel_diff(
                    outcome["response"], outcomes[f"headline/skenario/{tag}"]["response"]
                ),
            }
    converged = f"{TOLERANCES[-1]:g}"
    line_ok = all(results[e][converged]["median_s"] is not None for e in LINE_ENGINES)
    refusal = None
    try:
        solve(network, "exact")
    except QueueingModelError as error:
        refusal = str(error)
    exact_rows = []
    for population in settings["exact_populations"]:
        runs = walls[f"exact/{population}"]
        vectors = (population + 1) ** len(classes)
        exact_rows.append(
            {
                "population": population,
                "vectors": vectors,
                "median_s": statistics.median(runs),
                "runs_s": runs,
                "ns_per_vector": statistics.median(runs) / vectors * 1e9,
                "throughput": dict(zip(classes, outcomes[f"exact/{population}"]["throughput"], strict=True)),
            }
        )
    headline_vectors = (POPULATION + 1) ** len(classes)
    ld_rows = []
    for population in settings["ld_populations"]:
        runs = walls[f"load_dependent/{population}"]
        outcome = outcomes[f"load_dependent/{population}"]
        ld_rows.append(
            {
                "population": population,
                "median_s": statistics.median(runs),
                "runs_s": runs,
                "throughput": outcome["throughput"][0],
                "response": outcome["response"][0],
                "app_residence": outcome["app_residence"],
                "app_utilization": outcome["app_utilization"],
                "exact": outcome["exact"],
            }
        )
    pdq = results["skenario"][f"{TOLERANCES[0]:g}"]["median_s"]
    tight = results["skenario"][converged]["median_s"]
    return {
        "quick": settings["quick"],
        "rounds": settings["rounds"],
        "headline": {
            "model": network.name,
            "population": POPULATION,
            "classes": classes,
            "centres": list(CENTRES),
            "think_times": dict(THINK_TIMES),
            "demands": {cls.name: {k: cls.demand(k) for k in CENTRES} for cls in network.classes},
            "tolerances": [f"{t:g}" for t in TOLERANCES],
            "results": results,
            "pure_python_agreement": {"max_rel_diff": agreement, "allowed": AGREEMENT},
            "exact_vectors": headline_vectors,
            "exact_refusal": refusal,
        },
        "exact": {
            "classes": len(classes),
            "rows": exact_rows,
            "headline_estimate_s": headline_vectors * exact_rows[-1]["ns_per_vector"] / 1e9,
            **budget,
        },
        "load_dependent": {
            "think_time": LD_THINK,
            "centres": [{"name": n, "servers": m, "demand": d} for n, m, d in LD_CENTRES],
            "rows": ld_rows,
        },
        "line_solver": {
            "available": module is not None,
            "version": line_solver_version() if module is not None else None,
            "ran": line_ok,
            "reason": None if line_ok else (reason or "; ".join(f"{k}: {v}" for k, v in failed.items())),
        },
        "requirement": {
            "text": "a 3-class closed network with 1,000 users per class solves well under a second",
            "approx_pdq_s": pdq,
            "approx_converged_s": tight,
            "under_1s": pdq < 1.0 and tight < 1.0,
        },
    }


# -- the report ----------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1e3:.3f}"


def print_tables(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    head = summary["headline"]
    rounds = summary["rounds"]
    table = Table(
        title=(
            f"Bard-Schweitzer, {len(head['classes'])} classes × {head['population']:,} users, "
            f"{len(head['centres'])} queues + think times, {rounds} interleaved round(s) (medians)"
        )
    )
    for column in ("engine", "tolerance", "median ms", "runs ms", "iterations", "µs/iteration", "× skenario"):
        table.add_column(column, justify="left" if column == "engine" else "right")
    table.add_column("|ΔR|/R vs skenario", justify="right")
    for tag in head["tolerances"]:
        for engine, by_tolerance in head["results"].items():
            result = by_tolerance[tag]
            if result["median_s"] is None:
                table.add_row(engine, tag, "skipped", "", "", "", "", "")
                continue
            per_iteration = result["us_per_iteration"]
            table.add_row(
                engine,
                tag,
                _ms(result["median_s"]),
                ", ".join(_ms(run) for run in result["runs_s"]),
                "—" if result["iterations"] is None else f"{result['iterations']:,}",
                "—" if per_iteration is None else f"{per_iteration:.2f}",
                f"{result['x_skenario']:.2f}",
                f"{result['rel_diff_vs_skenario']:.1e}",
            )
    console.print(table)
    console.print(
        "Stopping rules: skenario and pure_python stop when no queue moves by more than the tolerance (PDQ's "
        "absolute rule); LINE stops on the largest relative change, so its iterations differ at the same number."
    )
    converged = head["tolerances"][-1]
    mine, loops = head["results"]["skenario"][converged], head["results"]["pure_python"][converged]
    if loops["x_skenario"] < 1:
        console.print(
            f"The plain loops beat numpy here: with {len(head['centres'])} × {len(head['classes'])} demands each "
            f"numpy call is mostly call overhead ({mine['us_per_iteration']:.1f} µs per iteration against "
            f"{loops['us_per_iteration']:.1f} µs at {converged})."
        )

    responses = Table(title="Headline response times R (s, think time excluded) and throughputs X (/s)")
    responses.add_column("engine / tolerance")
    for name in head["classes"]:
        responses.add_column(f"R {name}", justify="right")
    for name in head["classes"]:
        responses.add_column(f"X {name}", justify="right")
    for tag in head["tolerances"]:
        for engine, by_tolerance in head["results"].items():
            result = by_tolerance[tag]
            if result["median_s"] is None:
                continue
            responses.add_row(
                f"{engine} / {tag}",
                *(f"{result['response'][c]:.9f}" for c in head["classes"]),
                *(f"{result['throughput'][c]:.6f}" for c in head["classes"]),
            )
    console.print(responses)
    agreement = head["pure_python_agreement"]
    console.print(
        "pure_python agrees with skenario: max relative difference "
        + ", ".join(f"{diff:.1e} at {tag}" for tag, diff in agreement["max_rel_diff"].items())
        + f" (checked ≤ {agreement['allowed']:g})."
    )

    exact = summary["exact"]
    table = Table(title=f"Exact MVA, {exact['classes']} classes, the same model with n users per class")
    for column in ("n per class", "vectors (n+1)^3", "median s", "runs s", "ns/vector"):
        table.add_column(column, justify="right")
    for row in exact["rows"]:
        table.add_row(
            f"{row['population']:,}",
            f"{row['vectors']:,}",
            f"{row['median_s']:.4f}",
            ", ".join(f"{run:.4f}" for run in row["runs_s"]),
            f"{row['ns_per_vector']:.0f}",
        )
    console.print(table)
    best = exact["largest_within_budget"]
    tried = ", ".join(f"{t['population']} → {t['median_s']:.3f} s" for t in exact["tried"])
    if best is None:
        console.print(f"No population tried fits in {exact['budget_s']:g} s ({tried}).")
    else:
        console.print(
            f"Largest tried that fits in {exact['budget_s']:g} s: {best['population']} per class "
            f"({best['vectors']:,} vectors, {best['median_s']:.3f} s). Tried: {tried}."
        )
    console.print(
        f"3 × {head['population']:,} exactly: {head['exact_vectors']:,} vectors, about "
        f"{exact['headline_estimate_s']:,.0f} s at the last row's cost per vector; solve() says: "
        f"{escape(str(head['exact_refusal']))}"
    )

    ld = summary["load_dependent"]
    centres = ", ".join(f"{c['name']} ({c['servers']} × D {c['demand']:g} s)" for c in ld["centres"])
    table = Table(title=f"Exact load-dependent MVA, one class, Z = {ld['think_time']:g} s, {centres}")
    for column in ("N", "median s", "runs s", "X /s", "R s", "app residence s", "app utilisation"):
        table.add_column(column, justify="right")
    for row in ld["rows"]:
        table.add_row(
            f"{row['population']:,}",
            f"{row['median_s']:.4f}",
            ", ".join(f"{run:.4f}" for run in row["runs_s"]),
            f"{row['throughput']:.4f}",
            f"{row['response']:.6f}",
            f"{row['app_residence']:.6f}",
            f"{row['app_utilization']:.4f}",
        )
    console.print(table)

    line = summary["line_solver"]
    if line["ran"]:
        console.print(f"line-solver {line['version']} ran (native Python backend).")
    else:
        console.print(f"[yellow]line-solver did not run:[/yellow] {escape(str(line['reason']))}")
    need = summary["requirement"]
    verdict = "[bold green]MET[/bold green]" if need["under_1s"] else "[bold red]NOT MET[/bold red]"
    console.print(
        f"Issue: {need['text']}: {verdict} — {_ms(need['approx_pdq_s'])} ms at tolerance 0.001, "
        f"{_ms(need['approx_converged_s'])} ms converged (1e-10), Bard-Schweitzer."
    )


# -- the command line ----------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"interleaved rounds (default {ROUNDS})")
    parser.add_argument("--budget", type=float, default=None, help="seconds for the largest exact solve (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")
    parser.add_argument("--quick", action="store_true", help="1 round, small exact and load-dependent cases (tests)")
    parser.add_argument("--no-line", action="store_true", help="leave line-solver out even if it is installed")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.budget is not None and not args.budget > 0:
        parser.error("--budget must be > 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    say = None if args.json else progress
    rounds = 1 if args.quick else args.rounds
    settings = {
        "quick": args.quick,
        "rounds": rounds,
        "line": not args.no_line,
        "exact_populations": QUICK_EXACT_POPULATIONS if args.quick else EXACT_POPULATIONS,
        "ld_populations": QUICK_LD_POPULATIONS if args.quick else LD_POPULATIONS,
    }
    budget = args.budget if args.budget is not None else (QUICK_BUDGET_S if args.quick else BUDGET_S)
    line = False
    if settings["line"]:
        module, reason = line_solver()
        line = module is not None
        if reason is not None and say is not None:
            say(f"skipping: {reason}")
    cases = headline_cases(headline_network(), line)
    cases += [exact_case(n) for n in settings["exact_populations"]]
    cases += [load_dependent_case(n) for n in settings["ld_populations"]]
    walls, outcomes, failed = measure(cases, rounds, say)
    largest = max(settings["exact_populations"])
    grid = {largest: statistics.median(walls[f"exact/{largest}"])}
    found = search_budget(grid, budget, rounds, say)
    summary = summarise(walls, outcomes, failed, found, settings)
    if args.json:
        print(json.dumps(summary))
    else:
        print_tables(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
