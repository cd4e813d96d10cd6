"""M/M/8 benchmark: skenario against a bare heapq loop (the floor), SimPy 4 and DESimpy.

The model and the protocol follow the team's reference note "DES performance anchors: Python DES
libraries on one M/M/8 model" (python-des-performance.md):

- an M/M/c queue with c = 8 servers, arrival rate λ = 7.2/s, service rate μ = 1/s per server
  (ρ = 0.9), FIFO;
- 200,000 customers by default: arrivals stop at N and the run continues until the system is empty;
- seed 12345.

Engines (each a plain function returning ``(Wq, W, completed)``: mean wait in queue and mean response
time in seconds, and the number of customers served):

- ``floor``: a hand-written heapq loop, no framework. Float seconds, service start handled in line,
  two heap pops per customer. Draws come from ``random.Random(seed).expovariate``: at an arrival the
  next interarrival time first, then this customer's service time if a server is free; at a
  departure the service time of the customer taken from the queue.
- ``simpy``: SimPy 4, a process per customer and a ``simpy.Resource(capacity=8)``, in the style of
  SimPy's own examples. It draws in the floor's order, so it takes the floor's sample path.
- ``desimpy``: DESimpy callbacks with the queue logic written by hand (DESimpy has no resources),
  run with ``run(stop, logging=False)`` (not ``run_until_max_time``, whose stop test is O(n) per
  event) and reading the public ``current_time`` attribute. Same draws, same sample path.
- ``skenario``: skenario's stocks and movements, with the model logic in the stocks' ``add`` /
  ``remove``: an ``Arrivals`` source, a ``Queue`` (FifoStock), ``Servers`` (KeyedStock) and a
  ``Done`` sink; three movements per customer (arrive, start_service, depart). Times are integer
  nanoseconds, ``int(draw * SECOND)``, from the floor's ``random.Random(seed).expovariate`` in the
  floor's order, so its Wq equals the floor's up to the nanosecond truncation (4e-8 relative at
  seed 12345; the tests allow 1e-6).
- ``skenario_numpy``: the same skenario model drawing from skenario's own batched numpy streams
  (``RandomStreams(seed).generator("arrivals")`` / ``("service")`` through ``sampler``), which is
  what a skenario user gets by default. It takes a different sample path, so its Wq differs from the
  floor's by sampling noise: one run of 200,000 customers has a standard deviation of about 6.8% in
  Wq (reference note, §3), so only a many-seed average is a test against Erlang C.

Protocol: every configuration runs in a fresh interpreter (``python benchmarks/mmc.py --one NAME``
prints one JSON line). Wall time is ``time.perf_counter()`` from just before the model is built to
after the statistics exist; interpreter start-up and imports are excluded. Rounds are interleaved
and the order of engines is rotated each round. The report gives medians over rounds; × floor and
× SimPy are computed within each round (engine wall ÷ floor wall of the same round) and the median
of those per-round ratios is reported, which cancels some of the drift between rounds. Events/s
uses the reference's convention of 3 events per customer (arrival, service start, departure)
whatever the engine's own scheduler does; Wq error is against the Erlang C value, 0.876916 s.

Usage (from the repository root, with the virtualenv active)::

    python benchmarks/mmc.py                      # 200,000 customers, 3 rounds, rich table
    python benchmarks/mmc.py --json --rounds 3    # one JSON object on stdout, nothing else
    python benchmarks/mmc.py --customers 20000 --rounds 5 --seed 7
    python benchmarks/mmc.py --one skenario       # one timed run in this process, one JSON line

SimPy and DESimpy are optional (``pip install -e .[bench]``); an engine that cannot be imported is
reported as skipped. The table ends with a line saying whether skenario meets the issue's targets:
median ≤ 2.5× the floor, at least 3× faster than SimPy (× SimPy ≤ 1/3) and faster than DESimpy.
Absolute seconds drift 10-25% between runs on a noisy machine; quote the ratios.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Generator, Sequence
from heapq import heappop, heappush
from pathlib import Path
from time import perf_counter
from typing import Any, Literal, NamedTuple

from skenario.core import SECOND, Entity, Environment, FifoStock, KeyedStock, Sink, Source
from skenario.core.random import Exponential, RandomStreams, sampler

MISSING: dict[str, str] = {}
"""Optional engines that could not be imported, with the reason."""

try:
    import simpy
except ImportError as error:  # optional extra: pip install -e .[bench]
    simpy = None  # type: ignore[assignment]
    MISSING["simpy"] = f"simpy is not importable ({error}); install it with `pip install -e .[bench]`"

try:
    import desimpy  # type: ignore[import-untyped]
except ImportError as error:  # optional extra: pip install -e .[bench]
    desimpy = None
    MISSING["desimpy"] = f"desimpy is not importable ({error}); install it with `pip install -e .[bench]`"

ARRIVAL_RATE = 7.2
"""λ, customers per second."""
SERVICE_RATE = 1.0
"""μ, customers per second per server."""
SERVERS = 8
CUSTOMERS = 200_000
SEED = 12345
EVENTS_PER_CUSTOMER = 3
"""The reference's convention for events/s: arrival, service start, departure."""
HORIZON = 1 << 62
"""Skenario's halt time in ns (about 146 years): far beyond the last departure, so the run ends
when the schedule is empty rather than at a halt."""

TARGET_X_FLOOR = 2.5
TARGET_X_SIMPY = 1 / 3

Draws = Literal["random", "numpy"]
Result = tuple[float, float, int]
"""(mean wait in queue Wq in s, mean response time W in s, customers completed)."""


# -- the exact values ----------------------------------------------------------------------------


def erlang_c_wait_probability(lam: float, mu: float, c: int) -> float:
    """P(wait) for M/M/c, from the closed form of Erlang's C formula."""
    a = lam / mu
    rho = a / c
    if not 0 < rho < 1:
        raise ValueError(f"the queue is unstable: ρ = {rho:g}")
    top = a**c / math.factorial(c) / (1 - rho)
    bottom = sum(a**k / math.factorial(k) for k in range(c)) + top
    return top / bottom


def erlang_c_wq(lam: float, mu: float, c: int) -> float:
    """Mean wait in queue of M/M/c in seconds, closed form: Wq = C(c, λ/μ) / (cμ − λ)."""
    return erlang_c_wait_probability(lam, mu, c) / (c * mu - lam)


# -- 1. the floor: a bare heapq loop -------------------------------------------------------------

_ARRIVAL = 0
_DEPARTURE = 1


def run_floor(customers: int = CUSTOMERS, seed: int = SEED) -> Result:
    """The hand-written floor: float seconds, service start in line, 2 heap pops per customer."""
    _check_customers(customers)
    expo = random.Random(seed).expovariate
    lam = ARRIVAL_RATE
    mu = SERVICE_RATE
    servers = SERVERS
    arrival = _ARRIVAL
    departure = _DEPARTURE
    heap: list[tuple[float, int, float]] = []
    waiting: deque[float] = deque()  # arrival times of the customers in the queue
    busy = 0
    arrived = 0
    completed = 0
    wait_sum = 0.0
    response_sum = 0.0
    heappush(heap, (expo(lam), arrival, 0.0))
    while heap:
        now, kind, arrived_at = heappop(heap)
        if kind == arrival:
            arrived += 1
            if arrived < customers:
                heappush(heap, (now + expo(lam), arrival, 0.0))
            if busy < servers:
                busy += 1
                heappush(heap, (now + expo(mu), departure, now))
            else:
                waiting.append(now)
        else:
            completed += 1
            response_sum += now - arrived_at
            if waiting:
                started = waiting.popleft()
                wait_sum += now - started
                heappush(heap, (now + expo(mu), departure, started))
            else:
                busy -= 1
    return wait_sum / completed, response_sum / completed, completed


# -- 2. SimPy: a process per customer and a Resource ---------------------------------------------


def run_simpy(customers: int = CUSTOMERS, seed: int = SEED) -> Result:
    """SimPy 4 in the style of its examples: a source process, a process per customer, a Resource."""
    if simpy is None:
        raise RuntimeError(MISSING["simpy"])
    _check_customers(customers)
    expo = random.Random(seed).expovariate
    env = simpy.Environment()
    counter = simpy.Resource(env, capacity=SERVERS)
    wait_sum = 0.0
    response_sum = 0.0
    completed = 0

    def customer() -> Generator[simpy.Event, Any, None]:
        nonlocal wait_sum, response_sum, completed
        arrive = env.now
        with counter.request() as request:
            yield request
            wait_sum += env.now - arrive
            yield env.timeout(expo(SERVICE_RATE))
        response_sum += env.now - arrive
        completed += 1

    def source() -> Generator[simpy.Event, Any, None]:
        for _ in range(customers):
            yield env.timeout(expo(ARRIVAL_RATE))
            env.process(customer())

    env.process(source())
    env.run()
    return wait_sum / completed, response_sum / completed, completed


# -- 3. DESimpy: callbacks, queue logic by hand --------------------------------------------------


def run_desimpy(customers: int = CUSTOMERS, seed: int = SEED) -> Result:
    """DESimpy callbacks: arrival and departure events, service start in line (no resources)."""
    if desimpy is None:
        raise RuntimeError(MISSING["desimpy"])
    _check_customers(customers)
    expo = random.Random(seed).expovariate
    scheduler = desimpy.EventScheduler()
    timeout = scheduler.timeout
    waiting: deque[float] = deque()
    busy = 0
    arrived = 0
    completed = 0
    wait_sum = 0.0
    response_sum = 0.0

    def start(arrived_at: float, now: float) -> None:
        nonlocal wait_sum
        wait_sum += now - arrived_at
        timeout(expo(SERVICE_RATE), lambda: depart(arrived_at))

    def arrive() -> None:
        nonlocal busy, arrived
        now = scheduler.current_time
        arrived += 1
        if arrived < customers:
            timeout(expo(ARRIVAL_RATE), arrive)
        if busy < SERVERS:
            busy += 1
            start(now, now)
        else:
            waiting.append(now)

    def depart(arrived_at: float) -> None:
        nonlocal busy, completed, response_sum
        now = scheduler.current_time
        completed += 1
        response_sum += now - arrived_at
        if waiting:
            start(waiting.popleft(), now)
        else:
            busy -= 1

    def never(_: object) -> bool:
        return False  # run until the schedule is empty

    timeout(expo(ARRIVAL_RATE), arrive)
    scheduler.run(never, logging=False)
    return wait_sum / completed, response_sum / completed, completed


# -- 4 and 5. skenario: stocks and movements -----------------------------------------------------


class Customer(Entity):
    """A customer: only its arrival time; the stocks hold the logic."""

    __slots__ = ("arrived_at",)
    kind = "Customer"

    def __init__(self, id: int, arrived_at: int) -> None:
        self.id = id
        self.arrived_at = arrived_at


class Arrivals(Source[Customer]):
    """Makes a customer each time an arrive movement asks, and schedules the next arrival."""

    __slots__ = ("env", "interarrival", "limit", "queue")

    def __init__(self, env: Environment, queue: Queue, limit: int, interarrival: Callable[[], int]) -> None:
        super().__init__("Arrivals", "Customer")
        self.env = env
        self.queue = queue
        self.limit = limit
        self.interarrival = interarrival

    def start(self) -> None:
        """Schedule the first arrival."""
        if not self.env.schedule("arrive", self.interarrival(), self, self.queue):
            raise RuntimeError(f"the first arrival was not scheduled: {self.env.ignored[-1]}")

    def remove(self, entity: Customer | None = None) -> Customer | None:
        env = self.env
        now = env.now()
        number = self.emitted + 1
        self.emitted = number
        if number < self.limit:
            env.schedule("arrive", now + self.interarrival(), self, self.queue)
        return Customer(number, now)


class Queue(FifoStock[Customer]):
    """The waiting line. An arriving customer gets a server at once if one is idle."""

    __slots__ = ("env", "servers", "waiting")

    def __init__(self, env: Environment, servers: Servers) -> None:
        super().__init__("Queue", "Customer")
        self.env = env
        self.servers = servers
        self.waiting = self._items  # the customers in line, for the servers to look at
        servers.queue = self

    def add(self, entity: Customer) -> None:
        self.waiting.append(entity)
        servers = self.servers
        if servers.idle:
            servers.idle -= 1  # reserved for the start_service movement
            env = self.env
            env.schedule("start_service", env.now(), self, servers)

    def remove(self, entity: Customer | None = None) -> Customer | None:
        waiting = self.waiting
        if entity is None and waiting:
            return waiting.popleft()
        if entity is None:
            # Only on an exact-nanosecond tie: a departure ran between an arrival and that arrival's
            # start_service and started it too. The second start finds the line empty; give back
            # the server it reserved, or it would stay reserved for the rest of the run.
            self.servers.idle += 1
            return None
        return super().remove(entity)


class Servers(KeyedStock[Customer]):
    """The customers in service. Records the waits and schedules departures; a departure starts
    the next customer in line or frees the server."""

    __slots__ = ("done", "env", "idle", "queue", "response_sum", "service", "wait_sum")

    queue: Queue

    def __init__(self, env: Environment, done: Sink[Customer], service: Callable[[], int], servers: int) -> None:
        super().__init__("Servers", "Customer")
        self.env = env
        self.done = done
        self.service = service
        self.idle = servers
        self.wait_sum = 0
        self.response_sum = 0

    def add(self, entity: Customer) -> None:
        self._items[entity] = None
        env = self.env
        now = env.now()
        wait = now - entity.arrived_at
        service = self.service()
        self.wait_sum += wait
        self.response_sum += wait + service
        env.schedule("depart", now + service, self, self.done, entity)

    def remove(self, entity: Customer | None = None) -> Customer | None:
        try:
            del self._items[entity]  # type: ignore[arg-type]  # a departure always names its customer
        except KeyError:
            return None
        queue = self.queue
        if queue.waiting:
            env = self.env
            env.schedule("start_service", env.now(), queue, self)  # the server stays taken
        else:
            self.idle += 1
        return entity


class SkenarioModel(NamedTuple):
    env: Environment
    arrivals: Arrivals
    queue: Queue
    servers: Servers
    done: Sink[Customer]


def build_skenario(
    customers: int, interarrival: Callable[[], int], service: Callable[[], int], servers: int = SERVERS
) -> SkenarioModel:
    """The M/M/c model as stocks, with the first arrival scheduled. Draws are in integer ns."""
    _check_customers(customers)
    env = Environment(halt_at=HORIZON)
    done: Sink[Customer] = Sink("Done", "Customer")
    serving = Servers(env, done, service, servers)
    queue = Queue(env, serving)
    arrivals = Arrivals(env, queue, customers, interarrival)
    arrivals.start()
    return SkenarioModel(env, arrivals, queue, serving, done)


def skenario_draws(seed: int, draws: Draws) -> tuple[Callable[[], int], Callable[[], int]]:
    """(interarrival, service) samplers in integer ns.

    "random" takes the floor's stream, `random.Random(seed).expovariate`, truncated to whole ns;
    "numpy" takes skenario's named numpy streams, as a skenario user gets by default.
    """
    if draws == "random":
        expo = random.Random(seed).expovariate

        def interarrival() -> int:
            return int(expo(ARRIVAL_RATE) * SECOND)

        def service() -> int:
            return int(expo(SERVICE_RATE) * SECOND)

        return interarrival, service
    if draws == "numpy":
        streams = RandomStreams(seed)
        return (
            sampler(Exponential(SECOND / ARRIVAL_RATE), streams.generator("arrivals")),
            sampler(Exponential(SECOND / SERVICE_RATE), streams.generator("service")),
        )
    raise ValueError(f"draws must be 'random' or 'numpy', got {draws!r}")


def run_skenario(customers: int = CUSTOMERS, seed: int = SEED, draws: Draws = "random") -> Result:
    """The skenario model, run until the schedule is empty."""
    interarrival, service = skenario_draws(seed, draws)
    model = build_skenario(customers, interarrival, service)
    model.env.run()
    completed = model.done.count()
    servers = model.servers
    return servers.wait_sum / completed / SECOND, servers.response_sum / completed / SECOND, completed


def run_skenario_numpy(customers: int = CUSTOMERS, seed: int = SEED) -> Result:
    """The skenario model on skenario's batched numpy streams."""
    return run_skenario(customers, seed, draws="numpy")


def _check_customers(customers: int) -> None:
    if customers < 1:
        raise ValueError(f"customers must be at least 1, got {customers}")


RUNNERS: dict[str, Callable[[int, int], Result]] = {
    "floor": run_floor,
    "skenario": run_skenario,
    "skenario_numpy": run_skenario_numpy,
    "desimpy": run_desimpy,
    "simpy": run_simpy,
}
"""Every engine, in the order of the report."""


def available_engines() -> list[str]:
    return [name for name in RUNNERS if name not in MISSING]


# -- the protocol --------------------------------------------------------------------------------


def time_one(name: str, customers: int, seed: int) -> dict[str, Any]:
    """One timed run in this process; the imports already happened when this module loaded."""
    run = RUNNERS[name]
    started = perf_counter()
    wq, w, completed = run(customers, seed)
    wall = perf_counter() - started
    record: dict[str, Any] = {
        "engine": name,
        "customers": customers,
        "seed": seed,
        "wall_s": wall,
        "wq": wq,
        "w": w,
        "completed": completed,
    }
    try:
        import resource

        record["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    except ImportError:  # not on Windows
        pass
    return record


def run_in_subprocess(name: str, customers: int, seed: int) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--one", name]
    command += ["--customers", str(customers), "--seed", str(seed)]
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        raise RuntimeError(f"{name} failed (exit {finished.returncode}):\n{finished.stderr}")
    record: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return record


def rotated(engines: Sequence[str], round_index: int) -> list[str]:
    shift = round_index % len(engines)
    return [*engines[shift:], *engines[:shift]]


def measure(
    engines: Sequence[str], customers: int, seed: int, rounds: int, progress: Callable[[str], None] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Interleaved rounds of fresh-process runs, the order rotated each round."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in engines}
    for round_index in range(rounds):
        for name in rotated(engines, round_index):
            record = run_in_subprocess(name, customers, seed)
            runs[name].append(record)
            if progress is not None:
                progress(f"round {round_index + 1}/{rounds}: {name:<15} {record['wall_s']:.3f} s")
    return runs


def median_ratio(runs: Sequence[dict[str, Any]], baseline: Sequence[dict[str, Any]]) -> float:
    """The median over rounds of (wall ÷ baseline wall in the same round)."""
    return float(statistics.median(run["wall_s"] / base["wall_s"] for run, base in zip(runs, baseline, strict=True)))


def summarise(runs: dict[str, list[dict[str, Any]]], customers: int, seed: int, rounds: int) -> dict[str, Any]:
    exact_wq = erlang_c_wq(ARRIVAL_RATE, SERVICE_RATE, SERVERS)
    results: dict[str, dict[str, Any]] = {}
    floor_wq = runs["floor"][0]["wq"] if "floor" in runs else None
    for name in RUNNERS:
        if name not in runs:
            results[name] = {"median_s": None, "wq": None, "skipped": MISSING.get(name, "not run")}
            continue
        mine = runs[name]
        median_s = statistics.median(run["wall_s"] for run in mine)
        wq = mine[0]["wq"]
        result: dict[str, Any] = {
            "median_s": median_s,
            "wq": wq,
            "w": mine[0]["w"],
            "completed": mine[0]["completed"],
            "runs_s": [run["wall_s"] for run in mine],
            "us_per_customer": median_s / customers * 1e6,
            "events_per_s": EVENTS_PER_CUSTOMER * customers / median_s,
            "wq_error_pct": (wq / exact_wq - 1) * 100,
            "x_floor": median_ratio(mine, runs["floor"]) if "floor" in runs else None,
            "x_simpy": median_ratio(mine, runs["simpy"]) if "simpy" in runs else None,
            "x_desimpy": median_ratio(mine, runs["desimpy"]) if "desimpy" in runs else None,
            "wq_rel_diff_vs_floor": abs(wq / floor_wq - 1) if floor_wq else None,
            "peak_rss_mb": max((run.get("peak_rss_mb", 0.0) for run in mine), default=None),
        }
        if len({run["wq"] for run in mine}) != 1:
            result["warning"] = "Wq differed between rounds of the same seed"
        results[name] = result
    return {
        "customers": customers,
        "results": results,
        "erlang_c_wq": exact_wq,
        "erlang_c_w": exact_wq + 1 / SERVICE_RATE,
        "seed": seed,
        "rounds": rounds,
        "targets": targets(results.get("skenario")),
    }


def targets(result: dict[str, Any] | None) -> dict[str, Any]:
    """The issue's targets for skenario: ≤ 2.5× floor, ≥ 3× faster than SimPy, faster than DESimpy."""
    if result is None or result.get("median_s") is None:
        return {"met": None, "reason": "skenario was not run"}
    x_floor, x_simpy, x_desimpy = result["x_floor"], result["x_simpy"], result["x_desimpy"]
    checks = {
        "x_floor_le_2.5": None if x_floor is None else x_floor <= TARGET_X_FLOOR,
        "x_simpy_le_1/3": None if x_simpy is None else x_simpy <= TARGET_X_SIMPY,
        "faster_than_desimpy": None if x_desimpy is None else x_desimpy < 1,
    }
    values = list(checks.values())
    met = None if None in values else all(values)
    return {"met": met, **checks}


# -- the report ----------------------------------------------------------------------------------


def _format_ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def print_table(summary: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console = Console(width=150)  # piped or redirected: keep the table on one line per row
    customers = summary["customers"]
    exact_wq = summary["erlang_c_wq"]
    table = Table(
        title=(
            f"M/M/{SERVERS}, λ = {ARRIVAL_RATE}/s, μ = {SERVICE_RATE}/s, N = {customers:,}, "
            f"seed {summary['seed']}, {summary['rounds']} interleaved rounds (medians)"
        )
    )
    for column in ("engine", "median wall s", "runs s", "µs/customer", "events/s (3/cust)", "× floor", "× SimPy"):
        table.add_column(column, justify="left" if column == "engine" else "right")
    table.add_column("Wq s", justify="right")
    table.add_column("Wq vs Erlang C", justify="right")
    for name, result in summary["results"].items():
        if result["median_s"] is None:
            table.add_row(name, "skipped", "", "", "", "", "", "", "")
            continue
        table.add_row(
            name,
            f"{result['median_s']:.3f}",
            ", ".join(f"{run:.3f}" for run in result["runs_s"]),
            f"{result['us_per_customer']:.2f}",
            f"{result['events_per_s']:,.0f}",
            _format_ratio(result["x_floor"]),
            _format_ratio(result["x_simpy"]),
            f"{result['wq']:.7f}",
            f"{result['wq_error_pct']:+.2f}%",
        )
    console.print(table)
    console.print(f"Erlang C: Wq = {exact_wq:.6f} s, W = {summary['erlang_c_w']:.6f} s.")
    for name, result in summary["results"].items():
        if result["median_s"] is None:
            console.print(f"[yellow]{name} skipped:[/yellow] {escape(result['skipped'])}")
    _print_paths(console, summary)
    _print_targets(console, summary)


def _print_paths(console: Any, summary: dict[str, Any]) -> None:
    results = summary["results"]
    if results["floor"]["median_s"] is None:
        return
    parts = []
    for name in ("skenario", "simpy", "desimpy"):
        result = results[name]
        if result["median_s"] is None:
            continue
        diff = result["wq_rel_diff_vs_floor"]
        same = result["completed"] == results["floor"]["completed"] and diff <= 1e-6
        parts.append(f"{name} {'matches' if same else 'DIFFERS'} (|ΔWq|/Wq = {diff:.1e})")
    console.print("Floor's sample path: " + "; ".join(parts) + ".")
    numpy = results["skenario_numpy"]
    if numpy["median_s"] is not None:
        console.print(
            f"skenario_numpy takes its own numpy streams: Wq = {numpy['wq']:.5f} s "
            f"({numpy['wq_error_pct']:+.2f}% vs Erlang C; one run's SD is about 6.8% at 200,000 customers)."
        )


def _print_targets(console: Any, summary: dict[str, Any]) -> None:
    result = summary["results"]["skenario"]
    goal = summary["targets"]
    if result["median_s"] is None:
        console.print("Targets: skenario was not run.")
        return

    def mark(ok: bool | None) -> str:
        return "[yellow]not measured[/yellow]" if ok is None else ("[green]yes[/green]" if ok else "[red]NO[/red]")

    x_desimpy = result["x_desimpy"]
    faster = "—" if x_desimpy is None else f"{1 / x_desimpy:.2f}× faster than DESimpy"
    verdict = {
        True: "[bold green]MET[/bold green]",
        False: "[bold red]NOT MET[/bold red]",
        None: "[yellow]UNKNOWN[/yellow]",
    }
    console.print(
        f"Issue targets for skenario: {verdict[goal['met']]} — "
        f"median ≤ 2.5× floor: {_format_ratio(result['x_floor'])}× {mark(goal['x_floor_le_2.5'])}; "
        f"≥ 3× faster than SimPy (× SimPy ≤ 0.33): {_format_ratio(result['x_simpy'])} {mark(goal['x_simpy_le_1/3'])}; "
        f"faster than DESimpy: {faster} {mark(goal['faster_than_desimpy'])}."
    )


# -- the command line ----------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--customers", type=int, default=CUSTOMERS, help="customers per run (default 200,000)")
    parser.add_argument("--seed", type=int, default=SEED, help="random seed (default 12345)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds, 3 or more (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else")
    parser.add_argument("--one", choices=list(RUNNERS), help="time one engine in this process, print one JSON line")
    args = parser.parse_args(argv)
    if args.customers < 1:
        parser.error("--customers must be at least 1")
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.one is not None:
        if args.one in MISSING:
            print(MISSING[args.one], file=sys.stderr)
            return 2
        print(json.dumps(time_one(args.one, args.customers, args.seed)))
        return 0

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if args.rounds < 3:
        progress(f"warning: {args.rounds} round(s); the protocol asks for at least 3")
    for reason in MISSING.values():
        progress(f"skipping: {reason}")
    runs = measure(available_engines(), args.customers, args.seed, args.rounds, None if args.json else progress)
    summary = summarise(runs, args.customers, args.seed, args.rounds)
    if args.json:
        print(json.dumps(summary))
    else:
        print_table(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
