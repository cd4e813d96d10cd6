"""Request classes and priority CPU scheduling in the cluster model, against queueing formulas.

One replica of 1000m with Poisson traffic and exponential CPU times is an M/M/1 queue whose
discipline is the scenario's cpuScheduling; each class's mean latency must match the formula for
that discipline (reference: queueing-theory.md section 2).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.core.time import SECOND
from skenario.queueing.priority import Load, nonpreemptive_mg1, preemptive_resume_mg1
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

SCENARIO = """
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {{name: classes}}
spec:
  duration: {duration}
  seed: {seed}
  workload:
    replicas: {replicas}
    resources: {{requests: {{cpu: 1000m}}, limits: {{cpu: 1000m}}}}
    cpuScheduling: {scheduling}
    request: {{cpuTime: {{distribution: exponential, mean: 100ms}}, timeout: null}}
    requestClasses:
      - {{name: gold, share: 3, priority: 5}}
      - {{name: bronze, share: 4}}
  traffic: {{type: poisson, rate: {rate}/s}}
"""

# Per class: arrival rate 3/s and 4/s, mean CPU time 0.1 s: rho = 0.3 and 0.4.
GOLD = Load(3.0, 0.1, 2 * 0.1**2, priority=5)
BRONZE = Load(4.0, 0.1, 2 * 0.1**2, priority=0)


def _run(scheduling: str, *, duration: str = "4h", seed: int = 3, replicas: int = 1, rate: int = 7) -> dict:
    text = SCENARIO.format(scheduling=scheduling, duration=duration, seed=seed, replicas=replicas, rate=rate)
    simulation = Simulation(parse_scenario(text))
    simulation.run()
    return simulation.summary().classes


def _mean_seconds(figures: dict) -> float:
    return figures["latency_mean_ns"] / SECOND


# About 100,000 requests over 4 h; the low class's mean at rho = 0.7 has a relative standard error
# near 2% (autocorrelation included), so 7% is over three of them; the disciplines differ far more.
TOLERANCE = 0.07


def test_preemptive_priority_matches_preemptive_resume_formulas() -> None:
    gold, bronze = preemptive_resume_mg1([GOLD, BRONZE])  # 0.1429 s and 0.4762 s
    classes = _run("PriorityPreemptive")
    assert _mean_seconds(classes["gold"]) == pytest.approx(gold, rel=TOLERANCE)
    assert _mean_seconds(classes["bronze"]) == pytest.approx(bronze, rel=TOLERANCE)


def test_non_preemptive_priority_matches_cobham() -> None:
    gold, bronze = nonpreemptive_mg1([GOLD, BRONZE])  # 0.2 s and 0.4333 s
    classes = _run("PriorityNonPreemptive")
    assert _mean_seconds(classes["gold"]) == pytest.approx(gold, rel=TOLERANCE)
    assert _mean_seconds(classes["bronze"]) == pytest.approx(bronze, rel=TOLERANCE)


def test_processor_sharing_ignores_priority() -> None:
    both = 0.1 / (1 - 0.7)  # M/M/1-PS: S / (1 - rho) for every class
    classes = _run("ProcessorSharing")
    assert _mean_seconds(classes["gold"]) == pytest.approx(both, rel=TOLERANCE)
    assert _mean_seconds(classes["bronze"]) == pytest.approx(both, rel=TOLERANCE)


def test_shares_split_the_arrivals() -> None:
    classes = _run("ProcessorSharing", duration="1h")
    arrived = classes["gold"]["arrived"] + classes["bronze"]["arrived"]
    # Binomial(arrived, 3/7): the share is within 4 standard deviations.
    p = 3 / 7
    assert abs(classes["gold"]["arrived"] / arrived - p) < 4 * (p * (1 - p) / arrived) ** 0.5


@settings(max_examples=15, deadline=None)
@given(
    scheduling=st.sampled_from(["ProcessorSharing", "PriorityPreemptive", "PriorityNonPreemptive"]),
    seed=st.integers(0, 2**32),
    replicas=st.integers(1, 3),
    rate=st.integers(1, 40),
)
def test_every_request_of_every_class_is_accounted_for(scheduling: str, seed: int, replicas: int, rate: int) -> None:
    for figures in _run(scheduling, duration="2m", seed=seed, replicas=replicas, rate=rate).values():
        assert figures["arrived"] == figures["completed"] + figures["failed"] + figures["in_flight"]
        assert figures["in_flight"] >= 0


def test_the_same_seed_gives_the_same_digest_with_classes() -> None:
    text = SCENARIO.format(scheduling="PriorityPreemptive", duration="10m", seed=11, replicas=2, rate=9)
    digests = set()
    for _ in range(2):
        simulation = Simulation(parse_scenario(text))
        simulation.run()
        digests.add(simulation.summary().digest)
    assert len(digests) == 1
