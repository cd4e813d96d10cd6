"""The KPA on the simulated cluster, and Knative's settings read as Knative reads them."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from skenario.autoscalers.base import PodCounters
from skenario.autoscalers.kpa.config import KPAConfig
from skenario.autoscalers.kpa.controller import KnativePodAutoscaler, population_mean_sample_size, scrape_sample
from skenario.autoscalers.kpa.windows import MetricCollection
from skenario.cli import cli
from skenario.core.time import MILLISECOND, MINUTE, SECOND
from skenario.errors import ScenarioError
from skenario.scenario.format.manifests.kpa import kpa_config
from skenario.scenario.loader import load_scenario, parse_scenario
from skenario.scenario.simulation import Simulation

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
KEY = "autoscaling.knative.dev/"


def test_a_kpa_setting_out_of_range_is_named_where_it_is_written_with_its_value_as_written(tmp_path: Path) -> None:
    path = tmp_path / "kpa.yaml"
    path.write_text(
        "apiVersion: skenario.dev/v1alpha1\nkind: Scenario\nmetadata: {name: k}\nspec:\n  duration: 1m\n"
        "  workload: {replicas: 1, request: {cpuTime: 10ms}}\n  traffic: {type: constant, rate: 1/s}\n"
        "  autoscalers:\n    - type: kpa\n      config: {stable-window: 2s}\n"
    )
    result = CliRunner().invoke(cli, ["run", str(path), "--no-store", "--no-progress"])
    assert result.exit_code == 2
    assert f"{path}:10, field 'spec.autoscalers.0.config.stable-window'" in result.output
    assert "'2s'" in result.output and "2000000000" not in result.output


def test_annotations_override_the_configmap_and_durations_read_as_go_durations() -> None:
    config = kpa_config(
        {f"{KEY}target": "10", f"{KEY}window": "2m", f"{KEY}min-scale": "1", "unrelated/annotation": "x"},
        {"stable-window": "30s", "scale-to-zero-grace-period": "45s", "max-scale-down-rate": 4},
        container_concurrency=20,
        field="spec.autoscalers.0",
    )
    assert config == KPAConfig(
        target=10.0,
        stable_window=2 * MINUTE,
        min_scale=1,
        scale_to_zero_grace_period=45 * SECOND,
        max_scale_down_rate=4.0,
        container_concurrency=20,
    )


@pytest.mark.parametrize(
    ("annotations", "config", "field", "needle"),
    [
        ({f"{KEY}targett": "10"}, {}, "spec.autoscalers.0.annotations.autoscaling.knative.dev/targett", "unknown"),
        ({}, {"stable-window": "forever"}, "spec.autoscalers.0.config.stable-window", "forever"),
        ({f"{KEY}class": "hpa.autoscaling.knative.dev"}, {}, "spec.autoscalers.0.annotations", "type: hpa"),
        (
            {f"{KEY}min-scale": "5", f"{KEY}max-scale": "2"},
            {},
            f"spec.autoscalers.0.annotations.{KEY}max-scale",
            "min-scale",
        ),
        ({}, {"stable-window": "2s"}, "spec.autoscalers.0.config.stable-window", "[6s, 1h]"),
        ({}, {"max-scale-down-rate": "1"}, "spec.autoscalers.0.config.max-scale-down-rate", "greater than 1"),
        # annotation_validation.go: the annotation's threshold is in [110, 1000].
        (
            {f"{KEY}panic-threshold-percentage": "109"},
            {},
            f"spec.autoscalers.0.annotations.{KEY}panic-threshold-percentage",
            "[110, 1000]",
        ),
        (
            {f"{KEY}panic-threshold-percentage": "1001"},
            {},
            f"spec.autoscalers.0.annotations.{KEY}panic-threshold-percentage",
            "[110, 1000]",
        ),
    ],
)
def test_bad_settings_name_the_key(
    annotations: dict[str, str], config: dict[str, str], field: str, needle: str
) -> None:
    with pytest.raises(ScenarioError) as info:
        kpa_config(annotations, config, field="spec.autoscalers.0")
    assert info.value.field == field
    assert needle in str(info.value)


def test_the_panic_threshold_range_binds_the_annotation_only() -> None:
    """Knative range-checks the annotation, not the config-autoscaler key (config.go's validate)."""
    assert kpa_config({}, {"panic-threshold-percentage": 105}, field="f").panic_threshold_percentage == 105
    annotation = {f"{KEY}panic-threshold-percentage": "110"}
    assert kpa_config(annotation, {}, field="f").panic_threshold_percentage == 110


def test_the_example_scales_from_zero_for_each_burst_and_back_to_zero() -> None:
    simulation = Simulation(load_scenario(EXAMPLES / "kpa-scale-from-zero.yaml"), base_dir=EXAMPLES)
    summary = simulation.run()
    frame = simulation.recorder.frame()
    quiet = frame.loc[frame.index < 120, "replicas_active"]
    first_burst = frame.loc[(frame.index > 150) & (frame.index <= 300), "replicas_active"]
    between = frame.loc[(frame.index > 480) & (frame.index < 600), "replicas_active"]
    second_burst = frame.loc[(frame.index > 630) & (frame.index <= 720), "replicas_active"]
    assert quiet.max() == 0  # nothing before the first request
    assert first_burst.min() >= 1
    assert between.max() == 0  # scaled to zero after the burst and the grace period
    assert second_burst.min() >= 1
    assert second_burst.max() <= 50  # the manifest's max-scale
    assert frame["replicas_active"].iloc[-1] == 0
    # Requests that came while no pod was ready waited in the activator instead of failing at once.
    assert "buffer_full" not in summary.failures and "no_active_replica" not in summary.failures
    assert summary.requests_completed > 0.99 * summary.requests_arrived


def test_kpa_runs_from_inline_annotations() -> None:
    scenario = parse_scenario(
        """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: kpa}
spec:
  duration: 5m
  workload:
    replicas: 1
    request: {cpuTime: 10ms, ioTime: 190ms}
  traffic: {type: constant, rate: 100/s}
  autoscalers:
    - type: kpa
      annotations: {autoscaling.knative.dev/target: "5", autoscaling.knative.dev/max-scale: "8"}
"""
    )
    simulation = Simulation(scenario)
    simulation.run()
    # 100/s × 200 ms = 20 requests in flight; at 70% of a target of 5 that is ceil(20 / 3.5) = 6 pods.
    assert simulation.model.desired == 6


# -- the data path: one containerConcurrency, the activator in the path, the poke, the scraper ----------------

BURST = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: burst}
spec:
  duration: 4m
  seed: 3
  workload:
    replicas: 0
    resources: {requests: {cpu: 1000m}}
    request: {cpuTime: 200ms, timeout: 120s}
    launch: {scheduling: 500ms, imagePull: 0s, containerStart: 3s, readiness: 1s}
  traffic: {type: poisson, rate: 50/s, start: 30s, stop: 3m}
  autoscalers:
    - type: kpa
      containerConcurrency: 1
"""


def test_a_burst_from_zero_with_one_slot_per_pod_ends_near_the_need_with_p99_near_the_cold_start() -> None:
    """The issue's case: 50/s of 200 ms is 10 requests in flight, so ceil(10 / 0.7) = 15 pods at
    70% of one slot each. The backlog of the cold start (about 4.5 s: scheduling, start, readiness
    and the first scrape) goes out slot by slot as pods become ready, so once the panic is over
    the revision settles near 15 pods, and only the requests of the cold start wait long: p99 is
    the cold start, not tens of seconds."""
    simulation = Simulation(parse_scenario(BURST))
    summary = simulation.run()
    frame = simulation.recorder.frame()
    settled = frame.loc[(frame.index > 150) & (frame.index <= 180), "replicas_active"]
    assert settled.min() >= 14 and settled.max() <= 17
    assert summary.requests_failed == 0
    assert summary.latency_p99_ns is not None and summary.latency_p99_ns < 7 * SECOND


def test_one_container_concurrency_sets_queue_proxy_the_activator_and_the_kpa() -> None:
    simulation = Simulation(parse_scenario(BURST))
    workload = simulation.spec.workload
    assert (workload.concurrency, workload.queue_capacity) == (1, 10)  # queue-proxy: CC slots, 10 × CC queued
    assert simulation.model.activator is not None and simulation.model.activator.container_concurrency == 1
    kpa = simulation.autoscalers["kpa"]
    assert isinstance(kpa, KnativePodAutoscaler) and kpa.config.container_concurrency == 1


def test_a_workload_concurrency_that_contradicts_container_concurrency_is_refused() -> None:
    text = BURST.replace("    replicas: 0\n", "    replicas: 0\n    concurrency: 4\n")
    with pytest.raises(ScenarioError) as raised:
        Simulation(parse_scenario(text))
    assert raised.value.field == "spec.autoscalers.0.containerConcurrency"
    assert "spec.workload.concurrency" in str(raised.value)


def test_a_request_at_zero_pokes_the_autoscaler_at_once() -> None:
    """The activator reports the first request at once and, at scale 0, the decider runs then
    (`MultiScaler.Poke`), not at the next 2 s tick."""
    text = BURST.replace(
        "{type: poisson, rate: 50/s, start: 30s, stop: 3m}", "{type: constant, rate: 1/s, start: 31500ms}"
    )
    simulation = Simulation(parse_scenario(text))
    simulation.run(until="33s")
    kpa = simulation.autoscalers["kpa"]
    assert isinstance(kpa, KnativePodAutoscaler)
    first = next(d for d in kpa.decisions if d.desired > 0)
    # Traffic starting at 31.5 s at 1/s sends its first request at 32.5 s: decided then, not at 34 s.
    assert first.at == 32500 * MILLISECOND


@pytest.mark.parametrize(("burst_capacity", "in_path"), [(0, False), (-1, True)])
def test_target_burst_capacity_decides_whether_the_activator_stays_in_the_path(
    burst_capacity: int, in_path: bool
) -> None:
    """TBC 0: the excess burst capacity is 0, so with pods wanted the SKS serves directly; TBC -1:
    it is -1 and the activator is always in the path (pkg/reconciler/autoscaling/kpa)."""
    text = BURST.replace(
        "containerConcurrency: 1\n",
        f"containerConcurrency: 1\n      config: {{target-burst-capacity: {burst_capacity}}}\n",
    )
    simulation = Simulation(parse_scenario(text))
    simulation.run(until="2m")
    assert simulation.model.activator is not None and simulation.model.activator.in_path is in_path


@pytest.mark.parametrize(
    ("pods", "sample"), [(1, 1), (2, 2), (3, 3), (4, 4), (5, 4), (10, 7), (20, 9), (50, 12), (100, 14), (1000, 16)]
)
def test_the_scraper_samples_as_many_pods_as_upstream(pods: int, sample: int) -> None:
    """`populationMeanSampleSize`: N up to 3, else ceil(N·X / (N + X − 1)) with X = 1.96² · 100 / 5²."""
    assert population_mean_sample_size(pods) == sample


def test_the_scraper_prefers_pods_older_than_the_stable_window() -> None:
    random = np.random.default_rng(1)
    now = 10 * MINUTE
    old = {i: PodCounters(0, 0, started_at=0) for i in range(2)}
    young = {i: PodCounters(0, 0, started_at=now - SECOND) for i in range(2, 10)}
    chosen = scrape_sample({**old, **young}, now, MINUTE, random)
    assert len(chosen) == 7 and len(set(chosen)) == 7
    assert {0, 1} <= set(chosen)  # too few old pods: all of them, topped up with young ones
    all_old = {i: PodCounters(0, 0, started_at=0) for i in range(10)}
    assert len(set(scrape_sample(all_old, now, MINUTE, random))) == 7


# 50 requests/s of exactly 200 ms (I/O, no CPU to share) keep 50 x 0.2 = 10 in flight (Little's law).
# The target annotation 2 at the default 70% gives a target of 1.4 per pod: ceil(10 / 1.4) = 8 pods.
STEADY = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: steady}
spec:
  duration: 5m
  seed: 1
  workload:
    replicas: 1
    resources: {requests: {cpu: 1000m}}
    request: {cpuTime: 0s, ioTime: 200ms, timeout: 30s}
    launch: {scheduling: 500ms, imagePull: 0s, containerStart: 1s, readiness: 500ms}
  traffic: {type: constant, rate: 50/s}
  autoscalers:
    - type: kpa
      annotations: {autoscaling.knative.dev/target: "2"}
"""
STEADY_IN_FLIGHT = 50 * 0.2
STEADY_TARGET = 2 * 0.7
STEADY_PODS = math.ceil(STEADY_IN_FLIGHT / STEADY_TARGET)  # 8


def test_a_steady_load_is_recorded_with_the_inputs_that_decided_it() -> None:
    """After the first minutes every decision reads about 10 in flight in both windows, asks for
    ceil(10 / 1.4) = 8 pods by the stable window, and keeps the activator in the path: its excess
    burst capacity floor(8 x 2 - 211 - 10) is negative (211 is the default target-burst-capacity)."""
    simulation = Simulation(parse_scenario(STEADY))
    simulation.run()
    kpa = simulation.autoscalers["kpa"]
    assert isinstance(kpa, KnativePodAutoscaler)
    settings = kpa.decisions[0].settings
    assert settings is not None and settings["target"] == pytest.approx(STEADY_TARGET) and settings["total"] == 2
    assert all(d.settings is None for d in kpa.decisions[1:])  # the settings do not change while it runs
    settled = [d for d in kpa.decisions if d.at >= 3 * MINUTE]
    assert settled
    for d in settled:
        assert d.observed_stable == pytest.approx(STEADY_IN_FLIGHT, abs=0.5)
        assert d.observed_panic == pytest.approx(STEADY_IN_FLIGHT, abs=1.0)
        assert d.stable_pods == math.ceil(d.observed_stable / STEADY_TARGET) == STEADY_PODS
        assert (d.ready, d.proposed, d.desired, d.rule, d.scaler, d.panic) == (8, 8, 8, "stable-window", "", False)
        assert d.ebc == math.floor(8 * 2 - 211 - d.observed_panic) < 0
        assert d.sks == "Proxy"


def test_no_data_is_recorded_as_minus_one_with_no_inputs() -> None:
    """Before any request the stable window is empty: `Scale` is invalid (no data), the proposal is
    -1 (`scaleUnknown`) and nothing it would have read is recorded."""
    simulation = Simulation(parse_scenario(BURST))
    simulation.run(until="20s")
    kpa = simulation.autoscalers["kpa"]
    assert isinstance(kpa, KnativePodAutoscaler) and kpa.decisions
    for d in kpa.decisions:
        assert (d.proposed, d.observed_stable, d.stable_pods, d.ebc, d.rule) == (-1, None, None, None, None)
        assert d.scaler == "activating"  # a new PA activates: no scale to zero before it succeeds or times out


# A long steady run with one slot per pod: 100/s of 200 ms from a cold start, so pods come and go
# (a young pod beside old ones) while the load stays put.
STEADY_CC1 = BURST.replace("duration: 4m", "duration: 10m").replace(
    "rate: 50/s, start: 30s, stop: 3m", "rate: 100/s, start: 30s"
)


def test_with_one_slot_per_pod_the_scraped_figures_are_unbiased_and_the_count_settles_where_the_formula_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each scrape's stat (what `collection.record` gets) over the steady part, 170 s to 590 s, against
    what arrived: its mean requests per second is the arrival rate, and its mean concurrency Little's
    L = λ·W (W the mean latency of the requests done then), each within 3 standard errors of the
    per-scrape values (a second's Poisson count is independent of the next). Knative counts the
    proxied requests at the activator, whole, and the activator spreads them by address, not age, so
    no pod sample skews them. The KPA then settles at ceil(L / 0.7), not one above."""
    recorded: list[tuple[int, float, float]] = []
    record = MetricCollection.record

    def spy(self: MetricCollection, now: int, concurrency: float, rps: float) -> None:
        recorded.append((now, concurrency, rps))
        record(self, now, concurrency, rps)

    monkeypatch.setattr(MetricCollection, "record", spy)
    simulation = Simulation(parse_scenario(STEADY_CC1))
    model = simulation.model
    marks: list[tuple[int, int, int, int]] = []

    def mark() -> None:
        done = model.requests_complete
        marks.append((simulation.env.now(), model.requests_arrived, done.count(), done.latency.total))

    start, stop = 170 * SECOND, 590 * SECOND
    simulation.env.call_at(start, mark)
    simulation.env.call_at(stop, mark)
    simulation.run()
    (t0, arrived0, done0, latency0), (t1, arrived1, done1, latency1) = marks
    rate = (arrived1 - arrived0) * SECOND / (t1 - t0)
    little = rate * (latency1 - latency0) / (done1 - done0) / SECOND
    steady = [(concurrency, rps) for at, concurrency, rps in recorded if t0 < at <= t1]
    n = len(steady)
    for observed, truth in ((np.array([c for c, _ in steady]), little), (np.array([r for _, r in steady]), rate)):
        assert abs(observed.mean() - truth) <= 3 * observed.std(ddof=1) / math.sqrt(n)
    kpa = simulation.autoscalers["kpa"]
    assert isinstance(kpa, KnativePodAutoscaler)
    settled = sorted(d.desired for d in kpa.decisions if t0 < d.at <= t1)
    assert settled[len(settled) // 2] == math.ceil(little / 0.7)
