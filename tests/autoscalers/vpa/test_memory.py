"""The VPA's memory pipeline, restated from the upstream recommender's tests (`model/container_test.go`)."""

from __future__ import annotations

import math

import pytest

from skenario.autoscalers.vpa.memory import (
    ContainerMemory,
    MemoryConfig,
    MemoryPeaks,
    memory_histogram_options,
    pod_min_memory,
    recommend_memory,
)
from skenario.autoscalers.vpa.recommender import AggregateContainerState, ContainerResourcePolicy
from skenario.core.time import DAY, HOUR, MINUTE
from skenario.scenario.loader import parse_scenario
from skenario.scenario.simulation import Simulation

MB = 1024 * 1024  # the tests' `mb`
T0 = 1_000 * DAY  # testTimestamp: any instant


class RecordingPeaks(MemoryPeaks):
    """The histogram mock of the upstream tests: every AddSample / SubtractSample, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, int, int]] = []

    def add(self, usage: int, at: int) -> None:
        self.calls.append(("add", usage, at))
        super().add(usage, at)

    def subtract(self, usage: int, at: int) -> None:
        self.calls.append(("subtract", usage, at))
        super().subtract(usage, at)


def container() -> tuple[ContainerMemory, RecordingPeaks]:
    peaks = RecordingPeaks()
    return ContainerMemory(peaks), peaks


def test_record_oom_increased_by_bump_up() -> None:
    # TestRecordOOMIncreasedByBumpUp: 1000mb requested, bump 20%: a 1200mb sample at the window's end.
    memory, peaks = container()
    assert memory.record_oom(T0, 1000 * MB)
    assert peaks.calls == [("add", 1200 * MB, T0 + DAY)]


def test_record_oom_increased_by_min() -> None:
    # TestRecordOOMIncreasedByMin: 1mb requested: the 100Mi minimum bump wins, 101mb.
    memory, peaks = container()
    assert memory.record_oom(T0, 1 * MB)
    assert peaks.calls == [("add", 101 * MB, T0 + DAY)]


def test_record_oom_dont_run_away() -> None:
    # TestRecordOOMDontRunAway: smaller OOMs after a bump change nothing; a larger one replaces the peak.
    memory, peaks = container()
    assert memory.record_oom(T0, 1000 * MB)
    assert memory.record_oom(T0, 999 * MB)
    assert memory.record_oom(T0, 999 * MB)
    assert peaks.calls == [("add", 1200 * MB, T0 + DAY)]
    assert memory.record_oom(T0, 2000 * MB)
    assert peaks.calls[1:] == [("subtract", 1200 * MB, T0 + DAY), ("add", 2400 * MB, T0 + DAY)]


def test_record_oom_discards_old_sample() -> None:
    # TestRecordOOMDiscardsOldSample: an OOM more than one interval before the window's end is dropped.
    memory, peaks = container()
    assert memory.add_sample(1000 * MB, T0)
    assert not memory.record_oom(T0 - 30 * HOUR, 1000 * MB)
    assert peaks.calls == [("add", 1000 * MB, T0 + DAY)]


def test_record_oom_in_new_window() -> None:
    # TestRecordOOMInNewWindow: an OOM two intervals on opens a new window two intervals on; `used`
    # is read before the window moves, so the old 2000mb peak still counts: 2400mb.
    memory, peaks = container()
    assert memory.add_sample(2000 * MB, T0)
    assert memory.record_oom(T0 + 2 * DAY, 1000 * MB)
    assert peaks.calls == [("add", 2000 * MB, T0 + DAY), ("add", 2400 * MB, T0 + 3 * DAY)]


def test_one_peak_per_interval_replaced_only_by_a_larger_one() -> None:
    memory, peaks = container()
    assert memory.add_sample(100 * MB, T0)
    assert memory.add_sample(50 * MB, T0 + HOUR)  # smaller: the peak stays
    assert memory.add_sample(300 * MB, T0 + 2 * HOUR)  # larger: replaces it
    assert not memory.add_sample(400 * MB, T0 + HOUR)  # out of order: dropped
    assert memory.add_sample(80 * MB, T0 + DAY + MINUTE)  # the next interval: a new peak
    assert peaks.calls == [
        ("add", 100 * MB, T0 + DAY),
        ("subtract", 100 * MB, T0 + DAY),
        ("add", 300 * MB, T0 + DAY),
        ("add", 80 * MB, T0 + 2 * DAY),
    ]


def test_memory_buckets_are_upstreams() -> None:
    # memoryHistogramOptions: first bucket 1e7 bytes, ratio 1.05, up to 1e12 bytes.
    options = memory_histogram_options()
    assert options.bucket_start(1) == pytest.approx(1e7)
    assert options.bucket_start(2) == pytest.approx(1e7 + 1e7 * 1.05)
    assert options.num_buckets == math.ceil(math.log(1e12 * 0.05 / 1e7 + 1) / math.log(1.05)) + 1


def test_the_pod_minimum_is_250_mib_split_over_containers() -> None:
    assert pod_min_memory(250.0) == 250 * MB
    assert pod_min_memory(250.0, 2) == 125 * MB


def test_the_target_is_the_peaks_90th_percentile_plus_the_margin_and_never_below_250mi() -> None:
    peaks = MemoryPeaks()
    state = AggregateContainerState()
    for i in range(10):
        peaks.add(400 * MB, T0 + i)
    # One bucket holds every peak: the percentile is that bucket's end.
    options = memory_histogram_options()
    end = options.bucket_start(options.find_bucket(400 * MB) + 1)
    rec = recommend_memory(peaks, state)
    assert rec.target == math.trunc(end) + math.trunc(math.trunc(end) * 0.15)
    small = MemoryPeaks()
    small.add(20 * MB, T0)
    assert recommend_memory(small, state).target == 250 * MB  # the pod minimum
    capped = recommend_memory(peaks, state, policy=ContainerResourcePolicy(max_allowed=300 * MB))
    assert capped.target == 300 * MB and capped.uncapped_target == rec.target


VPA_SCENARIO = """\
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: vpa-oom}
spec:
  duration: 30m
  seed: 3
  workload:
    replicas: 2
    resources: {requests: {cpu: 500m, memory: 256Mi}, limits: {memory: 384Mi}}
    memory: {baseline: 400Mi}
    request: {cpuTime: 20ms}
  traffic: {type: poisson, rate: 5/s}
  autoscalers:
    - type: vpa
      memoryAggregationInterval: 10m
      spec: {updatePolicy: {updateMode: Recreate}}
"""


def test_a_vpa_lifts_a_crash_looping_pods_memory_past_its_working_set() -> None:
    """A 400Mi baseline under a 384Mi limit: every container dies as it starts. Each OOM records
    max(256Mi + 100Mi, 256Mi × 1.2) = 356Mi; with the margin the target passes the baseline, the
    limit keeps its 1.5 ratio, the updater evicts the quick-OOM pods, and their replacements run."""
    simulation = Simulation(parse_scenario(VPA_SCENARIO))
    simulation.run()
    model = simulation.model
    assert model.oom_kills > 0
    assert model.memory_request is not None and model.memory_limit is not None
    assert model.memory_request > 356 * MB
    assert model.memory_limit == pytest.approx(1.5 * model.memory_request, rel=0.01)
    assert model.memory_limit > 400 * MB
    assert model.replicas_active.count() == 2  # the new pods fit their working set
    assert all(r.memory_limit is not None and r.memory_limit > 400 * MB for r in model.replicas_active)


def test_without_memory_modelled_a_vpa_recommends_cpu_only() -> None:
    text = VPA_SCENARIO.replace("    memory: {baseline: 400Mi}\n", "")
    simulation = Simulation(parse_scenario(text))
    simulation.run()
    vpa = simulation.autoscalers["vpa"]
    assert vpa.decisions and all(d.memory_target is None for d in vpa.decisions)  # type: ignore[attr-defined]
    assert simulation.model.memory_request == 256 * MB


def test_a_memory_config_of_one_hour_spaces_the_peaks() -> None:
    assert MemoryConfig(aggregation_interval=HOUR).aggregation_interval == HOUR


def test_under_requests_only_the_target_stops_at_the_limit_and_the_crash_loop_goes_on() -> None:
    """capRecommendationToContainerLimit: the request may rise to the 384Mi limit but not past it,
    and the limit does not move, so the 400Mi container keeps dying (a human must raise the limit)."""
    policy = (
        "      spec:\n"
        "        updatePolicy: {updateMode: Recreate}\n"
        '        resourcePolicy: {containerPolicies: [{containerName: "*", controlledValues: RequestsOnly}]}\n'
    )
    text = VPA_SCENARIO.replace("      spec: {updatePolicy: {updateMode: Recreate}}\n", policy)
    simulation = Simulation(parse_scenario(text))
    simulation.run()
    model = simulation.model
    assert model.memory_limit == 384 * MB
    assert model.memory_request is not None and 256 * MB < model.memory_request <= 384 * MB
    assert model.replicas_active.count() == 0 and model.oom_kills > 10
