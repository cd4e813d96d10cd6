"""Every bundled example runs as its comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skenario.scenario.loader import load_scenario, parse_scenario
from skenario.scenario.simulation import Simulation

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(name: str) -> Simulation:
    simulation = Simulation(load_scenario(EXAMPLES / name), base_dir=EXAMPLES)
    simulation.run()
    return simulation


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_example_runs_and_accounts_for_every_request(name: str) -> None:
    simulation = run(name)
    model = simulation.model
    assert model.requests_arrived > 0
    assert model.requests_arrived == (
        model.requests_complete.count() + model.requests_failed.count() + model.requests_in_flight
    )


def test_the_hpa_example_scales_out_for_the_step_and_back_in_after_it() -> None:
    frame = run("hpa-step.yaml").recorder.frame()
    before = frame.loc[frame.index <= 300, "replicas_desired"]
    during = frame.loc[(frame.index > 600) & (frame.index <= 1200), "replicas_desired"]
    after = frame.loc[frame.index > 2100, "replicas_desired"]
    # 60/s × 60 ms = 3.6 cores; at 60% of 500m that is 12 pods, against 2 for the 0.6 cores before.
    assert before.max() <= 3
    assert during.min() >= 10
    assert after.iloc[-1] < during.min()
    assert frame["replicas_desired"].between(2, 20).all()  # the manifest's minReplicas and maxReplicas


def test_the_plugin_runs_unchanged_on_the_real_time_clock() -> None:
    import math
    import sys

    sys.path.insert(0, str(EXAMPLES / "plugins"))
    from realtime_demo import main

    context = main(wall_seconds=0.3, speed=40.0)  # 12 s of clock time: syncs at 2, 4, ... 10 s
    assert len(context.log) >= 4
    first_at, before, after = context.log[0]
    assert before == 2
    load = 1 + 2 * (1 - math.exp(-first_at / 10))  # the demo's load curve, in cores
    assert after == math.ceil(load * 1000 / (0.6 * 500))  # cores over 60% of a 500m request


def test_the_behavior_example_never_scales_down_faster_than_its_policy() -> None:
    simulation = run("hpa-behavior-trace.yaml")
    [hpa] = simulation.autoscalers.values()
    decisions = hpa.decisions  # type: ignore[attr-defined]
    # scaleDown: at most 2 pods in any 60 s; scaleUp: at most +100% in any 15 s.
    for i, decision in enumerate(decisions):
        window = [d for d in decisions[: i + 1] if decision.at - d.at < 60 * 10**9]
        removed = sum(max(0, d.current - d.desired) for d in window)
        assert removed <= 2
        assert decision.desired <= 2 * decision.current
    assert max(d.desired for d in decisions) > 3  # it did scale up for the bursts


def test_priority_classes_example_serves_checkout_first() -> None:
    def means(scheduling: str) -> dict[str, float]:
        text = (EXAMPLES / "priority-classes.yaml").read_text()
        text = text.replace("cpuScheduling: PriorityPreemptive", f"cpuScheduling: {scheduling}")
        simulation = Simulation(parse_scenario(text), base_dir=EXAMPLES)
        simulation.run()
        return {name: c["latency_mean_ns"] for name, c in simulation.summary().classes.items()}

    priority, shared = means("PriorityPreemptive"), means("ProcessorSharing")
    # Checkout preempts the 10x longer report requests: it waits less than they do, and less than
    # when it shares the CPU with them; the reports pay for it.
    assert priority["checkout"] < priority["report"]
    assert priority["checkout"] < shared["checkout"]
    assert priority["report"] > shared["report"]


def test_seed_001_example_prints_pdqs_figures_and_the_simulation(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("seed001", EXAMPLES / "queueing" / "seed001.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(replications=3, duration=4_000)
    lines = capsys.readouterr().out.splitlines()

    def cells(label: str, nth: int = 0) -> list[str]:
        rows = [line for line in lines if line.strip().startswith(label)]
        return rows[nth][len(rows[nth]) - 32 :].split()

    assert cells("PDQ (Bard-Schweitzer)") == ["2.69", "8.19"]  # seed 001's "default" column
    assert cells("PDQ (Bard-Schweitzer, shadow CPU)") == ["0.62", "8.66"]  # and its "prioritized" one
    assert cells("shadow server") == ["1.43", "3.33"]  # the open paradox: Development as under FCFS
    assert cells("FCFS, no priority") == ["3.33", "3.33"]
    web = [line for line in lines if line.strip().startswith("simulation")][2]
    development = float(re.findall(r"(\d+\.\d+) ± ", web)[-1])
    assert development > 3.9  # the simulated low class waits well beyond the shadow's 3.33


def test_the_memory_example_crash_loops_at_512mi_and_not_at_1gi() -> None:
    tight = run("memory-limits.yaml")
    assert tight.model.oom_kills > 0
    assert tight.model.requests_failed.reasons["oom"] > 0
    frame = tight.recorder.frame()
    during = frame.loc[(frame.index > 300) & (frame.index <= 600)]
    assert during["replicas_restarting"].max() == 4  # every pod down at once during the burst
    assert frame["replicas_active"].iloc[-1] == 4  # and all back by the end
    text = (EXAMPLES / "memory-limits.yaml").read_text().replace("limits: {memory: 512Mi}", "limits: {memory: 1Gi}")
    roomy = Simulation(parse_scenario(text), base_dir=EXAMPLES)
    roomy.run()
    assert roomy.model.oom_kills == 0 and roomy.model.requests_failed.count() == 0
