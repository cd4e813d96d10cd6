"""`skenario solve` and `skenario theory` (once `validate`) as a user meets them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skenario.cli import cli

ROOT = Path(__file__).resolve().parents[2]
OS_SCHEDULER = ROOT / "examples" / "queueing" / "os-scheduler.yaml"
WEB_SERVER = ROOT / "examples" / "queueing" / "web-server.yaml"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_solve_prints_pdqs_published_figures_for_seed_001() -> None:
    code, out, _ = invoke("solve", str(OS_SCHEDULER), "--method", "approx")
    assert code == 0
    assert "Iterations: 13" in out  # PDQ's shadowcpu.out
    production = next(line for line in out.splitlines() if line.startswith("Production"))
    development = next(line for line in out.splitlines() if line.startswith("Development"))
    assert production.split()[-1] == "0.6190" and development.split()[-1] == "8.6611"
    assert "shadow server at CPU" in out and "Bard-Schweitzer" in out


def test_solve_json_is_complete() -> None:
    code, out, _ = invoke("solve", str(WEB_SERVER), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["method"] == "canonical" and data["exact"] is True
    # Preemptive-resume M/M/1 (queueing-theory.md key finding 3): 1.4286 and 4.7619.
    assert data["classes"]["Production"]["response"] == pytest.approx(1 / 0.7)
    assert data["classes"]["Development"]["response"] == pytest.approx(1 / (0.7 * 0.3))
    cpu = data["centres"]["CPU"]
    assert cpu["utilization"] == pytest.approx(0.7)
    # Little's law per class at the centre.
    for name, figures in cpu["classes"].items():
        rate = data["classes"][name]["arrivalRate"]
        assert figures["queueLength"] == pytest.approx(rate * figures["residence"])


def test_solve_with_the_shadow_server_shows_the_paradox() -> None:
    code, out, _ = invoke("solve", str(WEB_SERVER), "--priorities", "shadow", "--json")
    assert code == 0
    data = json.loads(out)
    # Seed 001: the shadow server leaves the low class at its FCFS response S / (1 - rho_a - rho_b).
    assert data["classes"]["Development"]["response"] == pytest.approx(1 / (1 - 0.7))
    assert data["exact"] is False


def test_solve_simulate_sets_the_simulation_beside_the_answer() -> None:
    code, out, _ = invoke(
        "solve", str(WEB_SERVER), "--simulate", "--replications", "4", "--length", "2000", "--json", "--seed", "3"
    )
    assert code == 0
    solution, comparisons = out.split("\n[\n", 1)
    rows = json.loads("[\n" + comparisons)
    assert {row["quantity"] for row in rows} == {"R(Production)", "R(Development)", "U(CPU)"}
    assert all(row["replications"] == 4 and row["halfWidth"] > 0 for row in rows)
    assert json.loads(solution)["model"] == "web-server"


@pytest.mark.parametrize(
    ("body", "field", "line"),
    [
        ("centres: [{name: CPU}]\nclasses:\n  - name: a\n    population: 2\n    demands: {CPU: 1, DK3: 1}\n",
         "classes.0.demands.DK3", 5),
        ("centres: [{name: CPU}]\nclasses:\n  - name: a\n    arrivalRate: 2\n    demands: {CPU: 0.6}\n",
         "classes.0.arrivalRate", 4),
        ("centres: [{name: CPU}]\nclasses:\n  - name: a\n    population: -3\n    demands: {CPU: 1}\n",
         "classes.0.population", 4),
        ("centres: [{name: CPU}]\nclasses:\n  - name: a\n    population: 2.5\n    demands: {CPU: 1}\n",
         "classes.0.population", 4),
        ("centres: [{name: CPU, servers: 0}]\nclasses:\n  - {name: a, population: 1, demands: {CPU: 1}}\n",
         "centres.0.servers", 1),
        ("method: exact\ncentres: [{name: CPU}]\nclasses:\n  - {name: a, arrivalRate: 0.1, demands: {CPU: 1}}\n",
         "method", 1),
        ("centres: [{name: CPU}]\nclasses:\n  - {name: a, arrivalRate: 0.1, population: 3, demands: {CPU: 1}}\n",
         "classes.0", 3),
    ],
)  # fmt: skip
def test_bad_model_files_are_reported_with_file_line_and_field(
    tmp_path: Path, body: str, field: str, line: int
) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(body)
    code, out, err = invoke("solve", str(path))
    assert code == 2, out
    assert f"{path}:{line}" in err and f"field '{field}'" in err
    assert "Traceback" not in err and out == ""


def test_validate_compares_simulation_and_theory() -> None:
    code, out, _ = invoke(
        "theory", "--model", "M/M/1", "--model", "closed", "--replications", "5", "--length", "0.2", "--json"
    )
    rows = json.loads(out)
    assert code in (0, 1)  # 1 only if an exact value fell outside its simultaneous interval
    assert {row["model"] for row in rows} == {"M/M/1", "closed"}
    methods = {(row["model"], row["method"], row["exact"]) for row in rows}
    assert ("closed", "exact MVA", True) in methods and ("closed", "Bard-Schweitzer", False) in methods
    for row in rows:
        assert row["inside"] == (abs(row["analytic"] - row["simulatedMean"]) <= row["halfWidth"])


def test_validate_refuses_an_unknown_model() -> None:
    code, _, err = invoke("validate", "--model", "M/M/7")
    assert code == 2 and "unknown model" in err


def test_solve_a_memory_constraint_and_simulate_the_system_it_stands_for() -> None:
    """PDQ's fesc figures from the model file (X 0.1750, R 25.70, said to be approximate), and --simulate
    runs the constrained system itself: its throughput is above the flow-equivalent server's."""
    model = ROOT / "examples" / "queueing" / "memory-constrained.yaml"
    code, out, _ = invoke("solve", str(model), "--simulate", "--replications", "3", "--length", "20000", "--json")
    assert code == 0
    solution, comparisons = _two_documents(out)
    assert round(solution["classes"]["work"]["throughput"], 4) == 0.1750
    assert round(solution["classes"]["work"]["response"], 2) == 25.70
    assert not solution["exact"]
    [throughput] = [c for c in comparisons if c["quantity"] == "X(work)"]
    assert throughput["simulatedMean"] > throughput["analytic"]


def _two_documents(out: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    decoder = json.JSONDecoder()
    first, end = decoder.raw_decode(out)
    second, _ = decoder.raw_decode(out[end:].lstrip())
    return first, second


def test_solve_a_finite_capacity_prints_its_blocking() -> None:
    code, out, _ = invoke("solve", str(ROOT / "examples" / "queueing" / "finite-capacity.yaml"))
    assert code == 0
    [row] = [line for line in out.splitlines() if line.startswith("front ") and len(line.split()) == 3]
    assert row.split() == ["front", "5", "0.0851"]  # M/M/2/5 at lambda 1.5: p_5 = 0.085114


def test_simulate_refuses_a_centre_with_rates(tmp_path: Path) -> None:
    model = tmp_path / "pool.yaml"
    model.write_text(
        "centres: [{name: pool, rates: [1, 1.5]}]\nclasses: [{name: a, arrivalRate: 1, demands: {pool: 1}}]\n"
    )
    code, out, err = invoke("solve", str(model), "--simulate")
    assert code == 2 and out == ""
    assert "centres.0.rates" in err and "Traceback" not in err
