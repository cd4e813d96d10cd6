"""The KEDA examples run as their comments say, by the rules of KEDA's operator read off their own polls."""

from __future__ import annotations

from pathlib import Path

from skenario.core.time import MINUTE, SECOND
from skenario.scenario.loader import load_scenario
from skenario.scenario.simulation import Simulation

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "keda"


def run(name: str) -> Simulation:
    simulation = Simulation(load_scenario(EXAMPLES / name), base_dir=EXAMPLES)
    simulation.run()
    return simulation


def test_kafka_consumers_wake_on_the_activation_threshold_and_sleep_after_the_cooldown() -> None:
    simulation = run("kafka-consumers.yaml")
    keda = simulation.autoscalers["orders-consumer"]
    polls = keda.decisions  # type: ignore[attr-defined]
    assert [p.at - polls[0].at for p in polls[:3]] == [0, 30 * SECOND, 60 * SECOND]  # pollingInterval 30
    last_active = None
    for poll in polls:
        [lag] = poll.triggers.values()
        active = poll.active
        assert active == (lag > 10)  # kafka: the whole lag past activationLagThreshold 10
        if poll.desired is not None and poll.current == 0:
            assert active and poll.desired == 1  # from zero: only when active, to max(minReplicaCount, 1)
        if poll.desired == 0:
            assert not active and last_active is not None and last_active + 300 * SECOND < poll.at  # the cooldown
        if active:
            last_active = poll.at
    wake_ups = [p.at for p in polls if p.desired == 1 and p.current == 0]
    assert len(wake_ups) >= 3  # the trickle before and after the burst, and the burst
    hpa = keda.hpa  # type: ignore[attr-defined]
    assert max(d.desired for d in hpa.decisions) == 12  # during the burst, up to the partitions
    assert all(d.desired <= 12 for d in hpa.decisions)
    model = simulation.model
    assert (
        model.requests_arrived
        == model.requests_complete.count() + model.requests_failed.count() + model.requests_in_flight
    )


def test_the_cron_window_holds_its_replicas_and_the_rate_scales_the_rest() -> None:
    simulation = run("prometheus-rps.yaml")
    keda = simulation.autoscalers["web"]  # its inline manifest's name
    frame = simulation.recorder.frame()
    window = frame.loc[(frame.index > 32 * MINUTE / SECOND) & (frame.index < 90 * MINUTE / SECOND), "replicas_desired"]
    assert window.min() >= 8  # 08:00 to 09:00 in Paris: the cron trigger's desiredReplicas
    cron = [p for p in keda.decisions if any("cron" in name for name in p.triggers)]  # type: ignore[attr-defined]
    inside = [p.at for p in cron if p.triggers[next(n for n in p.triggers if "cron" in n)] == 8.0]
    assert min(inside) >= 30 * MINUTE and max(inside) < 90 * MINUTE + 30 * SECOND
    # Outside the window, one replica per 40 requests/s (the Prometheus trigger's threshold), within 1 and 20.
    assert frame["replicas_desired"].between(1, 20).all()
