"""Tests for benchmarks/mmc.py, the M/M/8 benchmark.

The strong check is the sample path: every engine that draws from `random.Random(seed)` in the
floor's order must reproduce the floor's Wq (skenario up to its nanosecond truncation). Against
Erlang C only a many-seed average means anything, because one run is noisy. No wall-clock
assertions: timings belong to the benchmark, not to the tests.
"""

from __future__ import annotations

import importlib
import json
import math
import statistics
import subprocess
import sys
from typing import Any

import pytest

from skenario.core import SECOND, IgnoredReason
from tests.benchmarks import BENCHMARKS

mmc: Any = importlib.import_module("mmc")

CUSTOMERS = 4_000
SEEDS = (12345, 1, 2)

Result = tuple[float, float, int]


@pytest.fixture(scope="module")
def floor_results() -> dict[int, Result]:
    return {seed: mmc.run_floor(CUSTOMERS, seed) for seed in SEEDS}


# -- (a), (b): the floor's sample path ----------------------------------------------------------


def test_floor_serves_everyone_with_sane_means(floor_results: dict[int, Result]) -> None:
    for wq, w, completed in floor_results.values():
        assert completed == CUSTOMERS
        assert 0 < wq < w


@pytest.mark.parametrize("seed", SEEDS)
def test_skenario_takes_the_floors_sample_path(seed: int, floor_results: dict[int, Result]) -> None:
    floor_wq, floor_w, floor_completed = floor_results[seed]
    wq, w, completed = mmc.run_skenario(CUSTOMERS, seed, draws="random")
    assert completed == floor_completed == CUSTOMERS
    # Only the truncation of each draw to whole ns separates the two.
    assert wq == pytest.approx(floor_wq, rel=1e-6)
    assert w == pytest.approx(floor_w, rel=1e-6)


@pytest.mark.parametrize("engine", ["simpy", "desimpy"])
@pytest.mark.parametrize("seed", SEEDS)
def test_simpy_and_desimpy_take_the_floors_sample_path(
    engine: str, seed: int, floor_results: dict[int, Result]
) -> None:
    pytest.importorskip(engine)
    floor_wq, floor_w, floor_completed = floor_results[seed]
    wq, w, completed = mmc.RUNNERS[engine](CUSTOMERS, seed)
    assert completed == floor_completed == CUSTOMERS
    # Same float arithmetic in the same order: equal to the last bits.
    assert wq == pytest.approx(floor_wq, rel=1e-12)
    assert w == pytest.approx(floor_w, rel=1e-12)


def test_skenario_model_frees_every_server_even_on_same_nanosecond_ties() -> None:
    # Interarrival 1 s and service 1 s: each departure falls on the same ns as the next arrival,
    # and the arrival was scheduled first, so it runs first and reserves a server; the departure
    # then sees that customer in line and starts it too. The second start finds the line empty
    # and must give its server back, or capacity would leak one server per customer.
    model = mmc.build_skenario(50, lambda: SECOND, lambda: SECOND)
    model.env.run()
    assert model.done.count() == 50
    assert model.servers.idle == mmc.SERVERS
    assert model.servers.count() == 0
    assert model.queue.count() == 0
    assert model.servers.wait_sum == 0
    assert model.servers.response_sum == 50 * SECOND
    assert model.env.ignored_counts[IgnoredReason.FROM_STOCK_EMPTY] > 0  # the tie did happen


# -- (c): Erlang C ----------------------------------------------------------------------------------


def erlang_c_by_erlang_b_recursion(lam: float, mu: float, c: int) -> tuple[float, float]:
    """(P(wait), Wq) from the Erlang-B recursion B(k) = a·B(k−1) / (k + a·B(k−1)), independently
    of the benchmark's closed form."""
    a = lam / mu
    blocking = 1.0
    for k in range(1, c + 1):
        blocking = a * blocking / (k + a * blocking)
    rho = a / c
    wait_probability = blocking / (1 - rho * (1 - blocking))
    return wait_probability, wait_probability / (c * mu - lam)


def test_erlang_c_matches_the_reference_values() -> None:
    wait_probability, wq = erlang_c_by_erlang_b_recursion(7.2, 1.0, 8)
    assert wait_probability == pytest.approx(0.701533, abs=5e-7)
    assert wq == pytest.approx(0.876916, abs=5e-7)
    assert mmc.erlang_c_wait_probability(7.2, 1.0, 8) == pytest.approx(wait_probability, rel=1e-12)
    assert mmc.erlang_c_wq(7.2, 1.0, 8) == pytest.approx(wq, rel=1e-12)
    assert mmc.erlang_c_wq(mmc.ARRIVAL_RATE, mmc.SERVICE_RATE, mmc.SERVERS) == pytest.approx(0.876916, abs=5e-7)


def test_erlang_c_rejects_an_unstable_queue() -> None:
    with pytest.raises(ValueError, match="unstable"):
        mmc.erlang_c_wq(8.0, 1.0, 8)


# -- (d): skenario's numpy streams against Erlang C -----------------------------------------------

NUMPY_SEEDS = range(1, 21)
NUMPY_CUSTOMERS = 20_000
SD_AT_200K = 0.068
"""Per-run SD of Wq, relative, at 200,000 customers: measured over 40 seeds in the reference."""


def test_skenario_numpy_streams_average_to_erlang_c() -> None:
    # A time average's variance falls as 1/N once N is far beyond the relaxation time (a few hundred
    # customers at ρ = 0.9), so one run of 20,000 customers has an SD of about
    # 6.8% · √(200,000 / 20,000) ≈ 21.5% (300 floor runs of 20,000 gave 19.3%). The mean of 20 such
    # runs has a standard error of 21.5% / √20 ≈ 4.8%. Allow 3 standard errors (14.4%), plus 1% for
    # the start from an empty system, which biases a 20,000-customer run low by about that much.
    per_run_sd = SD_AT_200K * math.sqrt(200_000 / NUMPY_CUSTOMERS)
    standard_error = per_run_sd / math.sqrt(len(NUMPY_SEEDS))
    tolerance = 3 * standard_error + 0.01
    exact = mmc.erlang_c_wq(mmc.ARRIVAL_RATE, mmc.SERVICE_RATE, mmc.SERVERS)
    results = [mmc.run_skenario(NUMPY_CUSTOMERS, seed, draws="numpy") for seed in NUMPY_SEEDS]
    assert all(completed == NUMPY_CUSTOMERS for _, _, completed in results)
    mean_wq = statistics.mean(wq for wq, _, _ in results)
    assert mean_wq == pytest.approx(exact, rel=tolerance)
    # W − Wq is the mean service time of the run, exactly: 400,000 draws of mean 1 s have a
    # standard error of 1/√400,000 ≈ 0.16%; allow 4 of them.
    mean_service = statistics.mean(w - wq for wq, w, _ in results)
    assert mean_service == pytest.approx(1 / mmc.SERVICE_RATE, rel=4 / math.sqrt(len(NUMPY_SEEDS) * NUMPY_CUSTOMERS))


def test_skenario_numpy_is_reproducible_and_takes_its_own_path(floor_results: dict[int, Result]) -> None:
    first = mmc.run_skenario(CUSTOMERS, 12345, draws="numpy")
    assert mmc.run_skenario_numpy(CUSTOMERS, 12345) == first
    assert first[0] != pytest.approx(floor_results[12345][0], rel=1e-6)


def test_unknown_draws_are_rejected() -> None:
    with pytest.raises(ValueError, match="draws"):
        mmc.run_skenario(10, 1, draws="sobol")


# -- the protocol -------------------------------------------------------------------------------------


def test_rounds_rotate_the_order() -> None:
    engines = ["floor", "skenario", "simpy"]
    assert [mmc.rotated(engines, r) for r in range(4)] == [
        ["floor", "skenario", "simpy"],
        ["skenario", "simpy", "floor"],
        ["simpy", "floor", "skenario"],
        ["floor", "skenario", "simpy"],
    ]


def test_ratios_are_medians_of_per_round_ratios() -> None:
    def run(wall: float) -> dict[str, Any]:
        return {"wall_s": wall, "wq": 0.9, "w": 1.9, "completed": 10}

    runs = {
        "floor": [run(1.0), run(2.0), run(1.0)],
        "skenario": [run(2.0), run(3.0), run(2.6)],
        "simpy": [run(8.0), run(10.0), run(7.0)],
        "desimpy": [run(3.0), run(5.0), run(3.0)],
    }
    summary = mmc.summarise(runs, customers=10, seed=1, rounds=3)
    skenario = summary["results"]["skenario"]
    assert skenario["median_s"] == 2.6
    assert skenario["x_floor"] == pytest.approx(2.0)  # median of 2.0, 1.5, 2.6, not 2.6 / 1.0
    assert skenario["x_simpy"] == pytest.approx(0.3)  # median of 0.25, 0.3, 0.371
    assert skenario["events_per_s"] == pytest.approx(30 / 2.6)
    assert summary["results"]["skenario_numpy"]["median_s"] is None
    assert summary["targets"] == {
        "met": True,
        "x_floor_le_2.5": True,
        "x_simpy_le_1/3": True,
        "faster_than_desimpy": True,
    }


def test_one_run_prints_one_json_line() -> None:
    command = [sys.executable, str(BENCHMARKS / "mmc.py"), "--one", "skenario", "--customers", "500", "--seed", "3"]
    finished = subprocess.run(command, capture_output=True, text=True, check=True)
    lines = finished.stdout.splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    assert record["engine"] == "skenario"
    assert record["completed"] == 500
    assert record["wq"] == pytest.approx(mmc.run_skenario(500, 3)[0], rel=1e-12)
    assert record["wall_s"] > 0
